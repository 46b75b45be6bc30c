"""The compaction pages' samples (c-reg asc_squeeze, asc_squeeze_with_status, asc_squeeze_v2,
asc_unsqueeze, asc_get_mask_spr; c-memory asc_squeeze), line for line.

The pages show no output and leave the data to the caller: each sample runs on data chosen
here and is checked against the reference models (``ascjax.reference``) and, where the result
follows from the page by hand, against that. ``asc_update_addr_reg_b8(n)``'s address register
is the loop's element offset ``i * n``. ``asc_add_scalar`` (asc_get_mask_spr's sample) is not an
emulated instruction: its one line is a stand-in, the int16_t add of the scalar (wrapping) on
the lanes of the mask and 0 elsewhere (zeroing, SPEC 2).
"""

import numpy as np

import ascjax as asc
from ascjax import reference as ref

A2 = asc.Config(product="A2")  # the C API on UB: Atlas A2/A3


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and got.tobytes() == want.tobytes()


def squeeze_vf(ub, dst_addr, src_addr, count, one_repeat_size, repeat_time):
    """c-reg asc_squeeze's ``squeeze_vf`` (int8_t); also returns the dst registers."""
    dsts = []
    for i in range(repeat_time):
        addr_reg = i * one_repeat_size                       # asc_update_addr_reg_b8
        mask, count = asc.update_mask(count, "int8_t")       # asc_update_mask_b8(count)
        src = asc.loadalign(ub, src_addr + addr_reg, "int8_t")
        dst = asc.squeeze(src, mask)
        ub = asc.storealign(ub, dst_addr + addr_reg, dst, mask)
        dsts.append(dst)
    return ub, dsts


def unsqueeze_vf(ub, dst_addr, count, one_repeat_size, repeat_time):
    """c-reg asc_unsqueeze's ``unsqueeze_vf`` (int8_t)."""
    dst = np.zeros(256, np.int8)                             # vector_int8_t dst;
    for i in range(repeat_time):
        mask, count = asc.update_mask(count, "int8_t")
        dst = asc.unsqueeze(dst, mask)
        ub = asc.storealign(ub, dst_addr + i * one_repeat_size, dst, mask)
    return ub


def _add_scalar(src, scalar, mask):
    """Stand-in for ``asc_add_scalar(dst, src, scalar, mask)`` on int16_t: wrapping add on the
    mask's lanes, 0 on the others."""
    active = np.asarray(mask)[::2]
    return np.where(active, (np.asarray(src).astype(np.int32) + scalar).astype(np.int16), 0
                    ).astype(np.int16)


def add_vf(ub, dst_addr, src_addr, count, one_repeat_size, repeat_time, state=None):
    """asc_get_mask_spr's ``add_vf`` (int16_t); ``state`` is the mask SPR (None: power-on)."""
    add_mask = asc.get_mask_spr("b16", state=state)          # asc_get_mask_spr_b16()
    for i in range(repeat_time):
        mask, count = asc.update_mask(count, "int16_t")
        src = asc.loadalign(ub, src_addr + 2 * i * one_repeat_size, "int16_t")
        dst = _add_scalar(src, 0, add_mask)
        ub = asc.storealign(ub, dst_addr + 2 * i * one_repeat_size, dst, mask)
    return ub


def main() -> bool:
    rng = np.random.default_rng(13)
    checks = {}

    # c-reg asc_squeeze: two repeats of 256 int8_t, count 300 (the second repeat partial).
    src = rng.integers(-128, 128, 512).astype(np.int8)
    ub = asc.copy_gm2ub_align(asc.make_ub(4096), 0, src, 512)
    ub, dsts = squeeze_vf(ub, 1024, 0, 300, 256, 2)
    out = np.asarray(asc.ub_view(ub, 1024, "int8_t"))[:300]
    # By hand: a prefix mask selects lanes 0..n-1 in order, so dst is src there.
    want_dst = [ref.squeeze(src[i * 256:(i + 1) * 256], np.arange(256) < n)
                for i, n in enumerate((256, 44))]
    checks["asc_squeeze (registers)"] = (_same(out, src[:300]) and all(
        _same(d, w) for d, w in zip(dsts, want_dst, strict=True)))
    print("asc_squeeze  dst[0:8] of repeat 1:", np.asarray(dsts[1])[:8].tolist())

    # asc_squeeze_with_status / asc_squeeze_v2: PAT_ALL on one int8_t register.
    mask = asc.create_mask(asc.PAT_ALL, "int8_t")
    src = rng.integers(-128, 128, 256).astype(np.int8)
    for name in ("asc_squeeze_with_status", "asc_squeeze_v2"):
        dst, ar = asc.instruction(name)(src, mask)
        want, want_ar = ref.squeeze_with_status(src, mask)
        checks[name] = _same(dst, want) and int(ar) == int(want_ar) == 256  # 256 bytes by hand
        print(f"{name}: AR = {int(ar)} bytes")

    # c-reg asc_unsqueeze: count 300 over two repeats of 256 int8_t lanes.
    ub = unsqueeze_vf(asc.make_ub(4096), 0, 300, 256, 2)
    out = np.asarray(asc.ub_view(ub, 0, "int8_t"))[:300]
    # By hand (the page's figure): all 256 lanes on gives 0, 1, ..., 255 (int8_t bits), and the
    # second repeat's 44 lanes give 0, 1, ..., 43.
    by_hand = np.concatenate([np.arange(256), np.arange(44)]).astype(np.uint8).view(np.int8)
    want = ref.unsqueeze(np.zeros(256, np.int8), np.arange(256) < 44)[:44]
    checks["asc_unsqueeze"] = _same(out, by_hand) and _same(out[256:], want)
    print("asc_unsqueeze dst[250:260]:", out[250:260].tolist())

    # asc_get_mask_spr: add_vf on 200 int16_t with the power-on SPR, then with a SPR set by
    # SetVectorMask to the low 8 lanes.
    src = rng.integers(-2**15, 2**15, 256).astype(np.int16)
    ub = asc.copy_gm2ub_align(asc.make_ub(4096), 0, src, 512)
    out = np.asarray(asc.ub_view(add_vf(ub, 1024, 0, 200, 128, 2), 1024, "int16_t"))[:200]
    state = asc.set_vector_mask(0, 0xFF, dtype="int16_t")
    spr = asc.get_mask_spr("b16", state=state)
    out8 = np.asarray(asc.ub_view(add_vf(ub, 1024, 0, 200, 128, 2, state), 1024, "int16_t"))
    masked = np.where(np.arange(128) < 8, src[:128], 0)  # by hand: lanes 8.. are zeroed
    checks["asc_get_mask_spr"] = (_same(out, src[:200]) and _same(out8[:128], masked)
                                  and _same(spr, ref.get_mask_spr("b16", state=state)))
    print("asc_get_mask_spr_b16 with mask 0xFF: lanes on =", int(np.asarray(spr).sum()) // 2)

    # c-memory asc_squeeze: 128 uint16_t, one repeat, strides 1 / 8; src1 selects every 4th.
    src0 = np.arange(128, dtype=np.uint16) * 3
    src1 = (np.arange(128) % 4 == 0).astype(np.uint16)
    dst = np.full(128, 0xFFFF, np.uint16)
    dst = asc.squeeze(dst, src0, src1, 1, 1, 1, 1, 8, 8, 8, config=A2)
    by_hand = np.zeros(128, np.uint16)
    by_hand[:32] = np.arange(0, 128, 4) * 3
    checks["asc_squeeze (UB)"] = (_same(dst, by_hand) and _same(
        dst, ref.squeeze(np.full(128, 0xFFFF, np.uint16), src0, src1, 1, 1, 1, 1, 8, 8, 8,
                         config=A2)))
    print("asc_squeeze (UB) dst[0:6]:", np.asarray(dst)[:6].tolist())

    passed = all(checks.values())
    print("[Success] asc_squeeze family samples reproduced." if passed else
          f"[Failed] {[k for k, v in checks.items() if not v]}")
    return passed
