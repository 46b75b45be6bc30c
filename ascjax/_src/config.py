"""Emulation knobs: every choice the vendor documents leave open, in one validated value.

Every instruction takes ``config=`` and nothing else for these readings: no per-call keyword
repeats a field, and nothing lives in module globals. Each field that settles an open question
names its assumption in the conformance table (``ascjax.ASSUMPTIONS``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools

import numpy as np

from .formats import UB_BYTES

# Products named on the vendor pages, with the short keys ``Config(product=...)`` accepts.
PRODUCTS = {
    "950": "Ascend 950PR/Ascend 950DT",
    "A3": "Atlas A3 training/inference series",
    "A2": "Atlas A2 training/inference series",
    "200I/500 A2": "Atlas 200I/500 A2 inference products",
    "inference AI Core": "Atlas inference series AI Core",
    "training": "Atlas training series",
}
# The chip tags the vendor pages mark their product notes with (``<!-- npu="910b" -->``), read
# as the product they tag; matched without regard to case (``"910B"``). ``310p`` also tags the
# inference series' Vector Core, which is not emulated: it reads as the AI Core.
PRODUCT_ALIASES = {"910b": "A2", "310b": "200I/500 A2", "310p": "inference AI Core",
                   "910": "training"}


def product_key(name: object) -> object:
    """The ``PRODUCTS`` key ``name`` means, in any case ("a2", "Inference AI Core"): a key, or
    the product a chip tag names; anything else unchanged, for the caller's check to list the
    valid names."""
    if not isinstance(name, str):
        return name
    return _KEYS_BY_CASE.get(name.lower()) or PRODUCT_ALIASES.get(name.lower(), name)


_KEYS_BY_CASE = {key.lower(): key for key in PRODUCTS}

_CHOICES = {
    "masked_pair": (None, "keep", "zero"),
    "int_overflow": ("wrap", "saturate"),
    "float_overflow": ("ieee", "saturate"),
    "out_of_range": ("raise", "checkify", "ignore"),
    "masked_lanes": ("zero", "skip"),
    "mask_layout": ("canonical", "replicated"),
    "vl_overflow": ("clamp", "empty"),
    "store_masked": ("keep", "zero"),
    "empty_block": (None, "fill", "keep"),
    "e8m0": ("cast", "format"),
    "first_n_mask_mode": ("counter", "normal"),
    "vector_merge": ("sequential", "tree"),
    "max_min_nan": ("propagate", "ignore"),
    "signed_zero": ("ordered", "equal"),
    "sum_spr": ("sequential", "tree"),
    "spr_index": ("repeat", "offset"),
    "zero_vector_mask": ("set", "ignored"),
    "extreme_nan": ("canonical", "first"),
    "masked_extreme": ("skip", "fill"),
    "reduce_empty": ("nop", "raise"),
    "reduce_max_index": ("offset", "repeat"),
    "squeeze_status": ("bytes", "elements"),
    "squeeze_ub_mask": ("elements", "bits"),
    "squeeze_ub_tail": ("zero", "keep"),
    "gather_empty": ("nop", "raise"),
    "gather_offsets": ("repeat", "dst"),
    "datablock_mask": ("block", "element"),
    "scatter_duplicates": ("last", "first"),
    "empty_move": ("nop", "raise"),
    "scatter_offset": ("repeat", "src"),
    "gather_mask_tail": ("keep", "zero_block"),
    "gather_mask_counter": ("blocks", "raise"),
    "gather_mask_empty": ("nop", "raise"),
    "asc_reduce_repeat": ("field", "prototype"),
    "unsqueeze_count": ("before", "through"),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    """How the emulator settles what the documents leave open.

    Attributes:
      product: which Ascend product to emulate (keys of ``PRODUCTS``); default ``"950"``. The
        pages' chip tags (``PRODUCT_ALIASES``: ``"910b"`` = ``"A2"``, ...) name the same ones.
      masked_pair: PairReduceSum / ReducePairElem output for a pair whose two elements are both
        masked off. ``None`` follows the instruction's page per product: PairReduceSum's (the
        seed) writes 0 on Atlas 200I/500 A2 only, ReducePairElem's on the 950 and Atlas 200I/500
        A2; elsewhere dst is unchanged. ``"keep"`` / ``"zero"`` force one reading (the 950
        implementation code writes 0; SPEC 11.5).
      int_overflow: ``"wrap"`` (default truncation mode) or ``"saturate"`` (CTRL[53]).
      float_overflow: ``"ieee"`` (inf/NaN results, **assumed** default on every product, SPEC
        11.3, A3) or ``"saturate"`` (half: +-inf -> +-65504, NaN -> 0; what the A2/A3 C API
        pages of asc_repeat_reduce_sum / asc_datablock_reduce_sum describe).
      masked_lanes: how a masked-off lane enters a floating sum. ``"zero"``: as +0, so a block
        of -0 values with one masked lane sums to +0 (**assumed**, SPEC 11.7). ``"skip"``: it
        takes no part (it enters as -0, the exact identity of IEEE addition); a block with no
        active lane still gives +0, as the seed says.
      out_of_range: what a value-dependent UB fault (an active gather lane past the end of
        src, a squeeze store past the end of the UB) does. Concrete values always raise
        ``IndexError`` at once, except under ``"ignore"``. Under ``jit``, where values are not
        visible to Python: ``"raise"`` (default) raises from a host callback when the
        computation runs (``jax.errors.JaxRuntimeError`` carrying the message);
        ``"checkify"`` emits a ``jax.experimental.checkify`` check (wrap the caller in
        ``checkify.checkify``); ``"ignore"`` checks nothing: the gather lane reads 0 and UB
        bytes past the end are dropped.
      mask_layout: which bits of a b16/b32 mask ``create_mask`` / ``update_mask`` set for an
        active element: ``"canonical"`` (only the group's lowest bit, **assumed**, A1) or
        ``"replicated"`` (every bit of the group).
      vl_overflow: ``PAT_VLn`` with n above the lane count: ``"clamp"`` to all lanes
        (**assumed**, A2) or ``"empty"`` (no lane).
      store_masked: masked-off bytes of ``asc_storealign``: ``"keep"`` the UB contents
        (**assumed**, A4) or ``"zero"``.
      empty_block: a ReduceDataBlock / BlockReduceSum/Max/Min DataBlock with no active element.
        ``None`` follows the ReduceDataBlock page per product: Atlas A2 / A3 keep dst; the 950
        and Atlas 200I/500 A2 write the fill (+0 for SUM, -inf / +inf for MAX / MIN, on
        200I/500 A2 -65504 / 65504 for half); inference AI Core and training, where the page
        is silent, write the 950's fill (**assumed**, A11). ``"fill"`` / ``"keep"`` force one
        reading.
      e8m0: what fp8_e8m0_t code 0x00 means to ``encode`` / ``decode``: ``"cast"`` (+0, the
        hardware cast, **assumed**, A6) or ``"format"`` (the format's 2^-127).
      first_n_mask_mode: the mask mode ReduceSum's first-n (count) form runs in on the 950,
        which picks its order across repeats: ``"counter"`` (**assumed**, A17: 256 to 1024
        bytes of data use method 3, the vector merge; others method 2) or ``"normal"`` (always
        method 2).
      vector_merge: how ReduceSum's method 3 merges the repeats' registers lane by lane before
        the tree inside the one register: ``"sequential"`` (**assumed**, A18: in repeat order,
        ``((r0 + r1) + r2) + ...``) or ``"tree"`` (an adjacent-pair tree of register adds over
        the repeats, padded with +0 registers to a power of two).
      max_min_nan: a MAX/MIN reduction (ReduceDataBlock, ReduceRepeat and their SPR) whose
        active elements hold a NaN: ``"propagate"`` (**assumed**, A21: a NaN results, at the
        first NaN's index, as the register pages say) or ``"ignore"`` (NaNs take no part unless
        every active element is one). The NaN's bits: ``extreme_nan``.
      signed_zero: MAX/MIN order of -0 and +0: ``"ordered"`` (**assumed**, A22: -0 < +0, so
        max(-0, +0) is +0 wherever it is) or ``"equal"`` (equal: the first one wins).
      sum_spr: the sum ReduceRepeat<SUM> leaves in the SPR GetReduceRepeatSumSpr reads: the
        repeat results added ``"sequential"``ly in repeat order (**assumed**, A23) or by an
        adjacent-pair ``"tree"`` padded with +0.
      spr_index: the index the max/min SPR holds: ``"repeat"`` (**assumed**, A24: repeat r's
        lane i is ``r * lanes + i``, which the page's contiguous case makes the element
        offset) or ``"offset"`` (the src element offset the lane was read from).
      zero_vector_mask: SetVectorMask with a mask of 0 on Atlas A2/A3, which the page calls a
        NOP: ``"set"`` (**assumed**, A29: the registers hold 0 and the vector instructions that
        read them do nothing) or ``"ignored"`` (the setter itself does nothing; the registers
        keep their previous value).
      extreme_nan: the value a max / min (registers: ``asc_reduce_max``, ``Reg::Reduce<MAX>``,
        the DataBlock forms; LocalTensors: ReduceDataBlock, ReduceRepeat, ReduceMax... and the
        SPRs) writes when its result is a NaN: ``"canonical"``
        (**assumed**, A19: the type's quiet NaN, 0x7E00 / 0x7FC00000, as the Reg pages'
        "该数据类型的nan" reads) or ``"first"`` (the bits of the first active NaN, payload
        and sign kept). The index is the first NaN's either way.
      masked_extreme: where a register max / min's index points when the extreme equals the
        value masked lanes are "treated as" (the type's lowest for max, highest for min):
        ``"skip"`` (**assumed**, A20: masked lanes take no part, so the index is the first
        *active* lane holding it) or ``"fill"`` (masked lanes hold that value and win the tie
        when they come first). Values are the same either way.
      reduce_empty: a LocalTensor reduction with repeatTime 0 (ReduceSum / ReduceMax /
        ReduceMin's level-0 form, ReduceRepeat, ReduceDataBlock, ReducePairElem, PairReduceSum,
        BlockReduce*, WholeReduce*, RepeatReduceSum; Normal mode) on a product whose page does
        not call it a NOP (all but Atlas A2/A3): ``"nop"`` (dst unchanged, **assumed**, A26) or
        ``"raise"`` (a ValueError). count 0 is a NOP on Atlas
        A2/A3 and rejected elsewhere either way (``vector_mask.ZERO_MASK_NOP``).
      reduce_max_index: the index ReduceMax / ReduceMin's level-0 form reports for element e of
        repeat r: ``"offset"``, its element offset in src, ``r*srcRepStride*epb + e``
        (**assumed**, A25; what the vendor's A2 and 950 implementations compute) or
        ``"repeat"``, ``r*lanes + e``. The two differ only when srcRepStride is not 8.
      squeeze_status: what ``asc_squeeze_with_status`` / ``asc_squeeze_v2`` leave in AR (the
        "有效数据大小" ``asc_get_squeeze_status`` reads): ``"bytes"``, this call's selected
        elements times sizeof(T) (**assumed**, A42: set, not added; the seed's AR counts bytes)
        or ``"elements"``, their number.
      squeeze_ub_mask: how ``asc_squeeze``'s UB form reads its compare mask src1:
        ``"elements"`` (**assumed**, A43: src1 element e of a repeat, read through src1's
        strides like src0, selects src0's element e when it is nonzero; the page sizes src1
        like src0) or ``"bits"`` (src1 is a bit mask as ``asc_reduce``'s: lane e of repeat r
        is bit ``e % bits(T)`` of src1 element ``r*src1_repeat_stride*epb + e // bits(T)``).
      squeeze_ub_tail: the dst elements of a repeat of ``asc_squeeze``'s UB form after its n
        packed ones: ``"zero"`` (**assumed**, A44: written 0, as the register form's
        "剩余位置元素置为0") or ``"keep"`` (not written).
      gather_empty: Gather / asc_gather (UB) with count 0 or repeatTime 0 on a product whose
        page does not call it a NOP (all but Atlas A2/A3): ``"nop"`` (dst unchanged,
        **assumed**, A31) or ``"raise"`` (a ValueError).
      gather_offsets: which srcOffset element lane e of repeat r of Gather's mask/repeat form
        (and asc_gather's repeat form) reads: ``"repeat"`` (**assumed**, A30: ``r*lanes + e``,
        the offsets consumed one register's lanes per repeat) or ``"dst"`` (the element at the
        lane's dst position, ``r*dstRepStride*epb + e``). They differ when dstRepStride != 8.
      datablock_mask: how the register form of ``asc_gather_datablock`` reads its mask:
        ``"block"`` (**assumed**, A34: DataBlock k is gathered iff mask bit 4k, b32 element k,
        is set, as the Reg::GatherB page says of the same instruction; other blocks are 0) or
        ``"element"`` (element e of T is gathered iff its own mask bit is set, others 0).
      scatter_duplicates: Scatter with two active elements at one dst offset (the page: "not
        predictable"): ``"last"`` (**assumed**, A35: the later element in processing order
        wins) or ``"first"``.
      empty_move: Gatherb with repeatTime 0, Scatter with count or repeatTime 0, where the
        page does not call it a NOP (all but Gatherb on Atlas A2/A3): ``"nop"`` (dst
        unchanged, **assumed**, A36) or ``"raise"`` (a ValueError).
      scatter_offset: which dstOffset element Scatter's mask form reads for lane e of repeat
        r: ``"repeat"`` (**assumed**, A37: ``r*lanes + e``, the offsets consumed in order) or
        ``"src"`` (``r*srcRepStride*epb + e``, the offset beside the src element).
      gather_mask_tail: the dst elements past the count GatherMask / asc_reduce keep (the page
        shows them as undefined): ``"keep"`` their bits (**assumed**, A39) or ``"zero_block"``
        (the rest of the 32-byte DataBlock holding the last kept element is written 0, as an
        aligned store of the final block would).
      gather_mask_counter: GatherMask in Counter mode with ``mask`` above one repeat's elements
        (the 950, Atlas A2/A3, 200I/500 A2: ``mask`` elements per repeat): ``"blocks"``, the
        repeat goes on through src0's block stride, element e at ``(r*src0RepeatStride +
        (e // epb)*src0BlockStride)*epb + e % epb`` and its bit e of the pattern string
        (**assumed**, A40) or ``"raise"`` (a ValueError); asc_reduce's first-n form with
        ``count`` above one repeat's elements likewise runs on or raises.
      gather_mask_empty: GatherMask / asc_reduce with repeatTimes 0: ``"nop"`` (dst unchanged,
        count 0, **assumed**, A41) or ``"raise"`` (a ValueError).
      asc_reduce_repeat: the ``repeat`` asc_reduce's repeat form accepts: ``"field"``, [0, 255],
        the 8-bit repeat field of 高维切分 that GatherMask's repeatTimes fills (**assumed**,
        A51), or ``"prototype"``, [0, 65535], the ``uint16_t`` of its prototype.
      unsqueeze_count: what ``asc_unsqueeze`` writes to lane i: ``"before"``, the mask's 1s
        among lanes 0..i-1, the top lane's bit counted nowhere (**assumed**, A48: the page's
        first sentence and its "mask最高位被忽略"), or ``"through"``, ``dst[i] = dst[i-1] +
        mask[i]`` as its next sentence reads literally (lanes 1..i: lane 0's bit ignored).
      ub_bytes: usable Unified Buffer size in bytes, at most 256 KiB.
    """

    product: str = "950"
    masked_pair: str | None = None
    int_overflow: str = "wrap"
    float_overflow: str = "ieee"
    masked_lanes: str = "zero"
    out_of_range: str = "raise"
    mask_layout: str = "canonical"
    vl_overflow: str = "clamp"
    store_masked: str = "keep"
    empty_block: str | None = None
    e8m0: str = "cast"
    first_n_mask_mode: str = "counter"
    vector_merge: str = "sequential"
    max_min_nan: str = "propagate"
    signed_zero: str = "ordered"
    sum_spr: str = "sequential"
    spr_index: str = "repeat"
    zero_vector_mask: str = "set"
    extreme_nan: str = "canonical"
    masked_extreme: str = "skip"
    reduce_empty: str = "nop"
    reduce_max_index: str = "offset"
    squeeze_status: str = "bytes"
    squeeze_ub_mask: str = "elements"
    squeeze_ub_tail: str = "zero"
    gather_empty: str = "nop"
    gather_offsets: str = "repeat"
    datablock_mask: str = "block"
    scatter_duplicates: str = "last"
    empty_move: str = "nop"
    scatter_offset: str = "repeat"
    gather_mask_tail: str = "keep"
    gather_mask_counter: str = "blocks"
    gather_mask_empty: str = "nop"
    asc_reduce_repeat: str = "field"
    unsqueeze_count: str = "before"
    ub_bytes: int = UB_BYTES

    def __post_init__(self):
        if self.product not in PRODUCTS:
            key = product_key(self.product)
            if key not in PRODUCTS:
                aliases = ", ".join(f"{k!r} = {v!r}" for k, v in PRODUCT_ALIASES.items())
                kirin = (" (the pages' Kirin rows are not emulated)"
                         if str(self.product).lower().startswith("kirin") else "")
                raise ValueError(f"Config: unknown product {self.product!r}{kirin}; valid: "
                                 f"{list(PRODUCTS)}, or the pages' chip tags {aliases}")
            object.__setattr__(self, "product", key)  # one spelling: equal Configs, one cache
        for field, choices in _CHOICES.items():
            value = getattr(self, field)
            if value not in choices:
                raise ValueError(f"Config: {field}={value!r} is not one of {choices}")
        size = self.ub_bytes
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"Config: ub_bytes must be an int (bytes), got {size!r}")
        if not (32 <= size <= UB_BYTES and size % 32 == 0):
            raise ValueError(f"Config: ub_bytes={size!r} must be a multiple of 32 in "
                             f"[32, {UB_BYTES}]")
        object.__setattr__(self, "ub_bytes", int(size))  # np.int64(262144) equals 262144

    @property
    def zero_masked_pairs(self) -> bool:
        """PairReduceSum's page (the seed): only Atlas 200I/500 A2 writes 0."""
        return self.zero_masked_pairs_on(("200I/500 A2",))

    def zero_masked_pairs_on(self, products: tuple[str, ...]) -> bool:
        """Whether a pair whose two elements are masked is written 0: ``masked_pair`` when set,
        else whether the product is one the instruction's page says writes 0."""
        if self.masked_pair is not None:
            return self.masked_pair == "zero"
        return self.product in products

    def empty_block_fill(self) -> bool:
        """Whether an empty DataBlock is written (with the fill) rather than kept."""
        if self.empty_block is not None:
            return self.empty_block == "fill"
        return self.product not in ("A2", "A3")

    def replace(self, **changes) -> Config:
        return dataclasses.replace(self, **changes)


def _known_fields_only(init):
    """``Config(prodcut=...)`` names the nearest field and lists the valid ones (the generated
    ``__init__`` says only "unexpected keyword argument")."""

    @functools.wraps(init)
    def checked(self, *args, **fields):
        valid = [f.name for f in dataclasses.fields(Config)]
        unknown = [name for name in fields if name not in valid]
        if unknown:
            near = {n: difflib.get_close_matches(n, valid, n=1, cutoff=0.6) for n in unknown}
            said = ", ".join(f"{n!r}" + (f" (did you mean {m[0]!r}?)" if m else "")
                             for n, m in near.items())
            raise TypeError(f"Config: unknown field(s) {said}; valid: {valid}")
        init(self, *args, **fields)
    return checked


Config.__init__ = _known_fields_only(Config.__init__)
DEFAULT = Config()


def resolve_config(config: Config | None, where: str = "") -> Config:
    """``config``, or the default for None; anything else is an error naming ``where`` (the
    instruction) and the Config that was likely meant."""
    if config is None:
        return DEFAULT
    if not isinstance(config, Config):
        if isinstance(config, dict):
            meant = f"ascjax.Config(**{config!r})"
        elif isinstance(config, str) and product_key(config) in PRODUCTS:
            meant = f"ascjax.Config(product={product_key(config)!r})"
        else:
            meant = "ascjax.Config(...)"
        prefix = f"{where}: " if where else ""
        raise TypeError(f"{prefix}config must be an ascjax.Config, got {type(config).__name__} "
                        f"{config!r}; write config={meant}")
    return config
