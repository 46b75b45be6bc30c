"""``ascjax run`` runners derived from the registry: the register and LocalTensor families.

Expected bits come from calling the public Python function directly, one tensor or register at
a time, never from the bulk path itself.
"""

import dataclasses
import re
from pathlib import Path
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import pytest

import ascjax
from ascjax._src.cli import main
from ascjax._src.config import _CHOICES
from ascjax._src.io import runners
from ascjax._src.io.families import STATE, Register, Tensor
from ascjax._src.registry import INSTRUCTIONS

RNG = np.random.default_rng(12)


def _bits(x):
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _random(fmt_name, shape):
    """Every bit pattern is fair game: NaNs, infs, -0 and subnormals included; a few exact
    ties and zeros on top."""
    fmt = ascjax.FORMATS[fmt_name]
    x = RNG.integers(0, 1 << 32, shape, dtype=np.uint64).astype(fmt.bits_dtype)
    x.reshape(-1)[::7] = x.reshape(-1)[1]  # repeated values
    x.reshape(-1)[::11] = 0
    return x.view(fmt.storage_dtype)


def _loop(fn, *per_tensor):
    return np.stack([np.asarray(fn(*args)) for args in zip(*per_tensor, strict=True)])


def _files(tmp_path, **arrays):
    paths = {}
    for name, a in arrays.items():
        paths[name] = str(tmp_path / f"{name}.bin")
        a.tofile(paths[name])
    return paths


# --- each LocalTensor runner against its Python function ---------------------------------------

CASES = [  # (runner, dtype, src length, dst length, run options, the Python call)
    ("block_reduce_sum", "half", 640, 40,
     {"repeat_time": 3, "mask": "0xFFFF0000FFFF,0x1", "dst_rep_stride": 2, "src_blk_stride": 1,
      "src_rep_stride": 10},
     lambda d, s: ascjax.block_reduce_sum(d, s, 3, [0xFFFF0000FFFF, 0x1], 2, 1, 10)),
    ("block_reduce_sum", "float", 256, 32,
     {"repeat_time": 4, "mask": 20, "src_rep_stride": 0, "empty_block": "keep"},
     lambda d, s: ascjax.block_reduce_sum(d, s, 4, 20, 1, 1, 0,
                                          config=ascjax.Config(empty_block="keep"))),
    ("whole_reduce_sum", "half", 512, 12,
     {"mask": 100, "repeat_time": 4, "dst_rep_stride": 3, "src_blk_stride": 2,
      "src_rep_stride": 4},
     lambda d, s: ascjax.whole_reduce_sum(d, s, 100, 4, 3, 2, 4)),
    ("repeat_reduce_sum", "float", 320, 8,
     {"repeat_time": 5, "mask": 64, "dst_blk_stride": 7, "dst_rep_stride": 1,
      "masked_lanes": "skip"},
     lambda d, s: ascjax.repeat_reduce_sum(d, s, 5, 64, 7, 1, 1, 8,
                                           config=ascjax.Config(masked_lanes="skip"))),
    ("reduce_sum", "half", 640, 4, {"count": 600},
     lambda d, s: ascjax.reduce_sum(d, s, None, 600)[0]),
    ("reduce_sum", "float", 300, 4, {"count": 200, "method": "tree", "product": "A2"},
     lambda d, s: ascjax.reduce_sum(d, s, None, 200, method="tree",
                                    config=ascjax.Config(product="A2"))[0]),
    ("reduce_sum", "half", 512, 2, {"mask": "0x0,0xFF00", "repeat_time": 3, "method": "3"},
     lambda d, s: ascjax.reduce_sum(d, s, None, [0x0, 0xFF00], 3, 8, method=3)[0]),
    ("reduce_sum", "float", 512, 3, {"mask": 33, "repeat_time": 5, "src_rep_stride": 6,
                                     "vector_merge": "tree"},
     lambda d, s: ascjax.reduce_sum(d, s, None, 33, 5, 6,
                                    config=ascjax.Config(vector_merge="tree"))[0]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_tensor_runner_equals_the_python_call(tmp_path, case):
    name, dtype, n_src, n_dst, options, call = case
    src, dst = _random(dtype, (3, n_src)), _random(dtype, (3, n_dst))
    paths = _files(tmp_path, src=src, dst=dst)
    summary = ascjax.run_bin(name, src=paths["src"], dst=paths["dst"], dtype=dtype, tensors=3,
                             out=str(tmp_path / "out.bin"), **options)
    assert (summary.rows, summary.unit) == (3, "tensors")
    got = ascjax.read_bin(tmp_path / "out.bin", dtype).reshape(3, -1)
    assert np.array_equal(_bits(got), _bits(_loop(call, dst, src)))


def test_reduce_sum_max_min_runs_write_the_sprs_they_set(tmp_path):
    """ReduceSum / ReduceMax / ReduceMin return (dst, spr): a run writes dst to --out and, when
    asked, the SPRs (one entry per tensor) to --spr-sum-out / --spr-value-out /
    --spr-index-out, each the Python call's bits."""
    src = _random("float", (3, 200))
    paths = _files(tmp_path, src=src)
    out, spr = str(tmp_path / "out.bin"), {k: str(tmp_path / f"{k}.bin") for k in
                                            ("sum", "value", "index")}
    ascjax.run_bin("ReduceSum", src=paths["src"], dtype="float", tensors=3, count=200,
                   dst_len=4, out=out, spr_sum_out=spr["sum"])
    calls = [ascjax.reduce_sum(np.zeros(4, np.float32), s, None, 200) for s in src]
    assert np.array_equal(_bits(ascjax.read_bin(out, "float").reshape(3, -1)),
                          _bits(np.stack([np.asarray(d) for d, _ in calls])))
    assert np.array_equal(_bits(ascjax.read_bin(spr["sum"], "float")),
                          _bits(np.stack([np.asarray(p.sum) for _, p in calls])))
    for name, f in (("ReduceMax", ascjax.reduce_max), ("ReduceMin", ascjax.reduce_min)):
        ascjax.run_bin(name, src=paths["src"], dtype="float", tensors=3, count=200, dst_len=2,
                       cal_index=True, out=out, spr_value_out=spr["value"],
                       spr_index_out=spr["index"])
        calls = [f(np.zeros(2, np.float32), s, None, 200, True) for s in src]
        assert np.array_equal(_bits(ascjax.read_bin(out, "float").reshape(3, -1)),
                              _bits(np.stack([np.asarray(d) for d, _ in calls]))), name
        assert np.array_equal(_bits(ascjax.read_bin(spr["value"], "float")),
                              _bits(np.stack([np.asarray(p.value) for _, p in calls]))), name
        assert ascjax.read_bin(spr["index"], "uint32_t").tolist() == [
            int(p.index) for _, p in calls], name
    # each offers the registers it sets, not the ones it passes through unchanged
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['spr_value_out'\]"):
        ascjax.run_bin("ReduceSum", src=paths["src"], dtype="float", tensors=3, count=200,
                       out=out, spr_value_out=spr["value"])
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['spr_sum_out'\]"):
        ascjax.run_bin("ReduceMax", src=paths["src"], dtype="float", tensors=3, count=200,
                       out=out, spr_sum_out=spr["sum"])


def test_cli_runs_block_reduce_sum_and_reduce_sum_from_text(tmp_path):
    src = _random("half", (2, 256))
    paths = _files(tmp_path, src=src)
    out = str(tmp_path / "out.bin")
    assert main(["run", "block_reduce_sum", "--src", paths["src"], "--dtype", "float16",
                 "--tensors", "2", "--dst-len", "16", "--repeat-time", "0x2", "--mask",
                 "0xF0F0F0F0F0F0F0F0,0x0", "--empty-block", "keep", "--out", out]) == 0
    want = _loop(lambda s: ascjax.block_reduce_sum(
        np.zeros(16, np.float16), s, 2, [0xF0F0F0F0F0F0F0F0, 0], 1, 1, 8,
        config=ascjax.Config(empty_block="keep")), src)
    assert np.array_equal(_bits(ascjax.read_bin(out, "half").reshape(2, -1)), _bits(want))
    assert main(["run", "reduce_sum", "--src", paths["src"], "--dtype", "half", "--tensors",
                 "2", "--count", "256", "--method", "sequential", "--out", out]) == 0
    want = _loop(lambda s: ascjax.reduce_sum(np.zeros(256, np.float16), s, None, 256,
                                             method="sequential")[0], src)
    assert np.array_equal(_bits(ascjax.read_bin(out, "half").reshape(2, -1)), _bits(want))


def test_run_takes_any_vendor_name_and_the_keywords_it_fixes(tmp_path, capsys):
    # A new user types the page's name: `ascjax run asc_reduce_sum_datablock` once failed with
    # "invalid choice"; a variant name binds its template keyword as the option would.
    src = _random("half", (2, 128))
    paths = _files(tmp_path, src=src)
    base = ["--src", paths["src"], "--dtype", "half"]
    for vendor, name, extra in (("asc_reduce_sum_datablock", "reduce_sum_datablock", []),
                                ("AscendC::WholeReduceMax", "reduce_repeat",
                                 ["--reduce-type", "max"])):
        tensor = [] if name == "reduce_sum_datablock" else [
            "--tensors", "2", "--mask", "128", "--repeat-time", "1"]
        by_vendor, by_python = str(tmp_path / "v.bin"), str(tmp_path / "p.bin")
        assert main(["run", vendor, *base, *tensor, "--out", by_vendor]) == 0
        assert main(["run", name, *base, *tensor, *extra, "--out", by_python]) == 0
        assert Path(by_vendor).read_bytes() == Path(by_python).read_bytes()
    capsys.readouterr()
    for argv, message in (
            (["run", "asc_reduce_sum_datablok"], "nearest: asc_reduce_sum_datablock"),
            (["run", "create_mask"], "has no runner"),
            (["run", "asc_get_squeeze_status"], "has no runner"),  # a companion call
            (["run", "WholeReduceMax", "--reduce-type", "sum"], "fixes --reduce-type max")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_vendor_names_help_says_which_options_it_gives(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "WholeReduceMax", "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert out.startswith("WholeReduceMax: `ascjax run reduce_repeat` with --reduce-type max "
                          "(given for you; leave it out)")
    assert "usage: ascjax run reduce_repeat" in out


def test_run_bin_takes_the_vendor_names_the_cli_takes(tmp_path):
    """``ascjax.run_bin("WholeReduceMax", ...)`` is ``reduce_repeat`` with reduce_type="max",
    as ``ascjax run WholeReduceMax`` is (it raised "unknown instruction" in Python)."""
    src = np.random.default_rng(3).standard_normal((4, 128)).astype(np.float16)
    paths = _files(tmp_path, src=src)
    common = {"src": paths["src"], "dtype": "half", "tensors": 2, "mask": 128, "repeat_time": 1}
    ascjax.run_bin("WholeReduceMax", **common, out=str(tmp_path / "v.bin"))
    ascjax.run_bin("reduce_repeat", **common, reduce_type="max", out=str(tmp_path / "p.bin"))
    assert (tmp_path / "v.bin").read_bytes() == (tmp_path / "p.bin").read_bytes()
    with pytest.raises(ValueError, match=r"fixes reduce_type='max'.*got reduce_type='sum'"):
        ascjax.run_bin("WholeReduceMax", **common, reduce_type="sum", out=str(tmp_path / "x.bin"))
    with pytest.raises(ValueError, match="nearest: asc_reduce_sum_datablock"):
        ascjax.run_bin("asc_reduce_sum_datablok", src=paths["src"], dtype="half")
    with pytest.raises(ValueError, match=r"create_mask \(create_mask\) has no runner"):
        ascjax.run_bin("create_mask")


def test_reduce_sum_datablock_and_pair_reduce_sum_keep_their_options():
    """Moved onto the families, unchanged: the same options in the same order (and the mask
    state options where the instruction takes them)."""
    assert [o.name for o in runners.RUNNERS["reduce_sum_datablock"].options] == [
        "src", "dtype", "mask", "mask_bits", "pattern", "out"]
    pair = [o for o in runners.RUNNERS["pair_reduce_sum"].options if o.name not in STATE]
    assert [o.name for o in pair] == ["src", "dtype", "tensors", "dst", "dst_len", "repeat_time",
                                      "mask", "dst_rep_stride", "src_blk_stride",
                                      "src_rep_stride", "out"]
    assert [(o.default, o.required) for o in pair[5:10]] == [
        (None, True), (None, True), (1, False), (1, False), (8, False)]
    assert [o.help for o in pair[7:10]] == ["dstRepStride (128-byte units)",
                                            "srcBlkStride (32-byte blocks)",
                                            "srcRepStride (32-byte blocks)"]


def test_every_family_runner_takes_its_types_from_the_registry():
    for name in runners.FAMILIES:
        assert name in INSTRUCTIONS
        dtype = next(o for o in runners.RUNNERS[name].options if o.name == "dtype")
        assert dtype.choices == tuple(dict.fromkeys(r[0] for r in INSTRUCTIONS[name].types))


# --- one line makes a runner: template keywords and extra outputs ------------------------------

class Stats(NamedTuple):
    active: object
    first: object


def _toy_register(src, mask, *, dtype=None, config=None, reduce_type="sum"):
    """toy: reduce_sum_datablock, negated for "neg"; also (active lanes, lane 0's bits)."""
    dst = ascjax.reduce_sum_datablock(src, mask, dtype=dtype, config=config)
    if reduce_type == "neg":
        dst = -dst
    m = jnp.broadcast_to(jnp.asarray(mask), src.shape)
    return dst, Stats(m.sum(axis=-1).astype(jnp.int32), src[..., 0] == src[..., 1])


def _toy_tensor(dst, src, repeat_time, mask, dst_rep_stride, *, order="value", config=None):
    """toy: block_reduce_sum with src strides 1 and 8; also src's first element per tensor."""
    out = ascjax.block_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, 1, 8,
                                  config=config)
    return (out, src[..., :2]) if order == "value" else (out[..., ::-1], src[..., :2])


@pytest.fixture
def toys(monkeypatch):
    base = INSTRUCTIONS["reduce_sum_datablock"]
    monkeypatch.setitem(INSTRUCTIONS, "toy_register", dataclasses.replace(
        base, name="toy_register", function=_toy_register))
    monkeypatch.setitem(INSTRUCTIONS, "toy_tensor", dataclasses.replace(
        INSTRUCTIONS["block_reduce_sum"], name="toy_tensor", function=_toy_tensor))
    lines = {"toy_register": Register(templates={"reduce_type": ("sum", "neg")},
                                      outputs=("active", "first")),
             "toy_tensor": Tensor(templates={"order": ("value", "reversed")},
                                  units={"dst_rep_stride": "8 elements"}, outputs=("head",))}
    for name, line in lines.items():
        monkeypatch.setitem(runners.RUNNERS, name, line.runner(name))


def test_register_family_template_and_extra_outputs(tmp_path, toys, capsys):
    x = _random("int16_t", (5, 128))
    mask = (RNG.random((5, 128)) < 0.6).astype(np.uint8)
    paths = _files(tmp_path, src=x, mask=mask)
    out = {k: str(tmp_path / f"{k}.bin") for k in ("out", "active", "first")}
    assert main(["run", "toy_register", "--src", paths["src"], "--dtype", "int16_t", "--mask",
                 paths["mask"], "--reduce-type", "neg", "--int-overflow", "saturate",
                 "--out", out["out"], "--active-out", out["active"], "--first-out",
                 out["first"]]) == 0
    config = ascjax.Config(int_overflow="saturate")
    got = ascjax.read_bin(out["out"], "int32_t", registers=True)  # the registry's dst type
    dsts = [_toy_register(jnp.asarray(s), m == 1, config=config, reduce_type="neg")
            for s, m in zip(x, mask, strict=True)]
    assert np.array_equal(got, np.stack([np.asarray(d[0]) for d in dsts]))
    assert np.array_equal(ascjax.read_bin(out["active"], "int32_t"),
                          [int(d[1].active) for d in dsts])
    assert np.array_equal(ascjax.read_bin(out["first"], "uint8_t"),
                          [int(d[1].first) for d in dsts])
    help_text = _help(capsys, "toy_register")
    assert "--reduce-type {sum,neg}" in help_text and "--active-out" in help_text
    assert "one of sum, neg (default sum)" in help_text


def test_tensor_family_template_units_and_extra_output(tmp_path, toys, capsys):
    src, dst = _random("float", (2, 128)), _random("float", (2, 24))
    paths = _files(tmp_path, src=src, dst=dst)
    out, head = str(tmp_path / "out.bin"), str(tmp_path / "head.bin")
    ascjax.run_bin("toy_tensor", src=paths["src"], dst=paths["dst"], dtype="float", tensors=2,
                   repeat_time=2, mask=64, dst_rep_stride=2, order="reversed", out=out,
                   head_out=head)
    want = [_toy_tensor(d, s, 2, 64, 2, order="reversed") for d, s in zip(dst, src, strict=True)]
    got = ascjax.read_bin(out, "float").reshape(2, -1)
    assert np.array_equal(_bits(got), _bits(np.stack([np.asarray(w[0]) for w in want])))
    assert np.array_equal(_bits(ascjax.read_bin(head, "float").reshape(2, 2)), _bits(src[:, :2]))
    ascjax.run_bin("toy_tensor", src=paths["src"], dtype="float", tensors=2, repeat_time=2,
                   mask=64, dst_rep_stride=2, out=out)  # no --head-out: only dst written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst.bin", "head.bin", "out.bin",
                                                           "src.bin"]
    with pytest.raises(ValueError, match=r"toy_tensor: order='forward' is not one of "
                                         r"\['value', 'reversed'\]"):
        ascjax.run_bin("toy_tensor", src=paths["src"], dtype="float", repeat_time=2, mask=64,
                       dst_rep_stride=2, order="forward", out=out)
    assert "dstRepStride (8 elements)" in _help(capsys, "toy_tensor")


def _toy_widen(dst, src, count, *, config=None):
    """toy: dst[:count] = src[:count] converted to dst's type (LocalTensor<T> dst, <U> src)."""
    del config
    return jnp.asarray(dst).at[..., :count].set(jnp.asarray(src)[..., :count].astype(dst.dtype))


def test_tensor_family_dst_type_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setitem(INSTRUCTIONS, "toy_widen", dataclasses.replace(
        INSTRUCTIONS["block_reduce_sum"], name="toy_widen", function=_toy_widen,
        columns=("T", "U"), types=(("float", "half"), ("int32_t", "int16_t"),
                                   ("half", "int16_t"))))
    monkeypatch.setitem(runners.RUNNERS, "toy_widen",
                        Tensor(src_column=1, dst_column=0).runner("toy_widen"))
    options = {o.name: o for o in runners.RUNNERS["toy_widen"].options}
    assert options["dtype"].choices == ("half", "int16_t")
    assert options["dst_dtype"].choices == ("float", "int32_t", "half")
    src, dst = _random("half", (2, 300)), _random("float", (2, 100))
    paths = _files(tmp_path, src=src, dst=dst)
    out = str(tmp_path / "out.bin")
    ascjax.run_bin("toy_widen", src=paths["src"], dst=paths["dst"], dtype="half", tensors=2,
                   count=50, out=out)  # float: the one dst type the rows give half
    want = _loop(lambda d, s: _toy_widen(d, s, 50), dst, src)
    assert np.array_equal(_bits(ascjax.read_bin(out, "float").reshape(2, -1)), _bits(want))
    ints = RNG.integers(-1000, 1000, (1, 64)).astype(np.int16)
    paths = _files(tmp_path, src=ints)
    with pytest.raises(TypeError, match=r"toy_widen: give --dst-dtype, one of \['int32_t', "
                                        r"'half'\], for src int16_t"):
        ascjax.run_bin("toy_widen", src=paths["src"], dtype="int16_t", count=3, out=out)
    ascjax.run_bin("toy_widen", src=paths["src"], dtype="int16_t", dst_dtype="int32_t",
                   dst_len=4, count=3, out=out)
    assert ascjax.read_bin(out, "int32_t").tolist() == [*ints[0, :3].tolist(), 0]


def test_a_line_that_miscounts_the_outputs_is_named(tmp_path, monkeypatch, toys):
    monkeypatch.setitem(runners.RUNNERS, "toy_tensor", Tensor().runner("toy_tensor"))
    paths = _files(tmp_path, src=_random("float", (1, 64)))
    with pytest.raises(TypeError, match=r"returns 2 part\(s\), the runner table names dst "
                                        r"and \[\]"):
        ascjax.run_bin("toy_tensor", src=paths["src"], dtype="float", repeat_time=1, mask=64,
                       dst_rep_stride=1, out=str(tmp_path / "o.bin"))
    with pytest.raises(TypeError, match="give forms= exactly when the signature has"):
        Tensor(forms=(("count",),)).runner("block_reduce_sum")


# --- errors ----------------------------------------------------------------------------------

def _help(capsys, name):
    with pytest.raises(SystemExit) as done:
        main(["run", name, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_bad_options_name_the_option_and_the_range(tmp_path, capsys):
    paths = _files(tmp_path, src=_random("half", (1, 256)))
    out = str(tmp_path / "o.bin")
    base = ["--src", paths["src"], "--dtype", "half", "--out", out]
    cases = [  # (instruction, arguments, the one line on stderr)
        ("block_reduce_sum", ["--repeat-time", "-1", "--mask", "128"],
         "ascjax run: block_reduce_sum: repeat_time=-1 is outside the valid range [0, 255]"),
        ("whole_reduce_sum", ["--repeat-time", "1", "--mask", "129"],
         ("ascjax run: whole_reduce_sum: mask (continuous mode, half: 128 lanes a repeat)=129 "
          "is outside the valid range [1, 128]")),
        ("pair_reduce_sum", ["--repeat-time", "1", "--mask", "12,zz"],
         ("ascjax run: pair_reduce_sum: --mask '12,zz' must be an int (continuous mode) or "
         "comma-separated uint64 words (bit mode)")),
        ("repeat_reduce_sum", ["--repeat-time", "1", "--mask", "0x1,0x0"],
         "ascjax run: repeat_reduce_sum: mask must be an int (continuous mode only), got [1, 0]"),
        ("block_reduce_sum", ["--repeat-time", "1", "--mask", "128", "--src-rep-stride",
                              "65536"],
         ("ascjax run: block_reduce_sum: src_rep_stride=65536 is outside the valid range "
         "[0, 65535]")),
        ("reduce_sum", ["--count", "257"],
         "ascjax run: reduce_sum: count=257 is outside the valid range [1, 256]"),
        ("reduce_sum", [],
         ("ascjax run: reduce_sum: give the options of one call form: --count or --mask "
         "--repeat-time --src-rep-stride (given: none)")),
        ("reduce_sum", ["--count", "4", "--mask", "8"],
         ("ascjax run: reduce_sum: give the options of one call form: --count or --mask "
         "--repeat-time --src-rep-stride (given: ['--count', '--mask'])")),
        ("reduce_sum", ["--mask", "8"],  # the level-0 form needs --repeat-time
         "(given: ['--mask'])"),
        ("block_reduce_sum", ["--repeat-time", "1", "--mask", "128", "--product", "training",
                              "--dst-rep-stride", "0"],
         "dst_rep_stride=0 is outside the valid range [1, 65535]"),
        # the Gatherb / Scatter / GatherMask / asc_reduce runners once took 0 here (review)
        ("gatherb", ["--tensors", "0", "--offset", paths["src"], "--repeat-time", "1"],
         "ascjax run: gatherb: --tensors 0 must be an integer >= 1"),
        ("scatter", ["--dst-len", "0", "--dst-offset", paths["src"], "--count", "1"],
         "ascjax run: scatter: --dst-len 0 must be an integer >= 1"),
        ("gather_mask", ["--tensors", "0", "--src1-pattern", "1", "--repeat-times", "1"],
         "ascjax run: gather_mask: --tensors 0 must be an integer >= 1"),
    ]
    for name, args, message in cases:
        assert main(["run", name, *base, *args]) == 2, message
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (message, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.bin"]  # nothing written


@pytest.mark.parametrize("argv, prog, said", [
    # a prefix once ran as the option it begins (argparse's allow_abbrev): --repeat 2 as
    # --repeat-time 2; a typo got no hint, and a missing required option hid it
    (["run", "block_reduce_sum", "--repeat", "1"], "ascjax run block_reduce_sum",
     "--repeat (did you mean --repeat-time?)"),
    (["run", "WholeReduceMax", "--repet-time=1", "--xyz"], "ascjax run reduce_repeat",
     "--repet-time=1 --xyz (did you mean --repeat-time?)"),
    (["run", "block_reduce_sum", "--repeat-time", "1", "--mak", "128", "--src-rep", "8"],
     "ascjax run block_reduce_sum",
     "--mak --src-rep (did you mean --mask for --mak, --src-rep-stride for --src-rep?)"),
    (["study", "--sizs", "16"], "ascjax study", "--sizs (did you mean --sizes?)"),
    (["compare", "a.bin", "b.bin", "--dtyp", "half"], "ascjax compare",
     "--dtyp (did you mean --dtype?)"),
    (["--verison"], "ascjax", "--verison (did you mean --version?)"),
])
def test_a_misspelt_or_shortened_option_is_refused_with_the_nearest(tmp_path, capsys, argv,
                                                                     prog, said):
    paths = _files(tmp_path, src=_random("half", (1, 256)))
    if argv[0] == "run":
        argv = argv + ["--src", paths["src"], "--dtype", "half", "--out", str(tmp_path / "o.bin")]
        argv += [] if "--mak" in argv else ["--mask", "128"]
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err.splitlines()
    assert done.value.code == 2
    assert err == [f"{prog}: error: unrecognized arguments: {said}", f"(see {prog} --help)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.bin"]  # nothing ran


@pytest.mark.parametrize("argv, prog, said", [
    # a wrong or missing command word was reported as the options its parser lacks
    # ("unrecognized arguments: --out"), or a file name as the wrong instruction
    (["probe", "write", "--out", "x"], "ascjax probe",
     "argument ACTION: invalid choice: 'write' (choose from 'plan', 'emulate', 'decide')"),
    (["probe", "--out", "x"], "ascjax probe",
     "the ACTION (plan, emulate, decide) comes first: ascjax probe ACTION --out ..."),
    (["run", "--src", "a.bin", "--dtype", "half"], "ascjax run",
     "the INSTRUCTION comes first: ascjax run INSTRUCTION --src ..."),
    (["studdy", "--sizes", "16"], "ascjax", ("argument COMMAND: invalid choice: 'studdy' "
     "(choose from 'examples', 'conformance', 'run', 'compare', 'study', 'probe')")),
])
def test_a_wrong_or_missing_command_word_is_the_error_named(tmp_path, monkeypatch, capsys, argv,
                                                          prog, said):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines() == [f"{prog}: error: {said}",
                                                    f"(see {prog} --help)"]
    assert not list(tmp_path.iterdir())


def test_run_bin_takes_numpy_types_as_the_rest_of_the_api_does(tmp_path):
    """``dtype=np.float16`` was refused ("is not one of ['int16_t', ...]") while every
    instruction takes it; a NumPy type with no Ascend row is still refused, named."""
    src = np.random.default_rng(5).standard_normal((3, 128)).astype(np.float16)
    paths = _files(tmp_path, src=src)
    for name, dtype in (("named", "half"), ("numpy", np.float16), ("dtype", np.dtype("float16"))):
        ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype=dtype,
                       out=str(tmp_path / f"{name}.bin"))
    assert (tmp_path / "named.bin").read_bytes() == (tmp_path / "numpy.bin").read_bytes()
    assert (tmp_path / "named.bin").read_bytes() == (tmp_path / "dtype.bin").read_bytes()
    with pytest.raises(ValueError, match=r"reduce_sum_datablock: dtype=<class 'numpy.float64'> is "
                                         r"not one of \['int16_t'"):
        ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype=np.float64,
                       out=str(tmp_path / "x.bin"))


def test_bad_option_text_is_named_on_the_command_line_and_in_python(tmp_path, capsys):
    paths = _files(tmp_path, src=_random("half", (1, 256)))
    out = str(tmp_path / "o.bin")
    for args, message in (
            (["--repeat-time", "two"], "argument --repeat-time: invalid integer value: 'two'"),
            (["--repeat-time", "1", "--dst-rep-stride", "1.5"],
             "argument --dst-rep-stride: invalid integer value: '1.5'"),
            (["--repeat-time", "1", "--empty-block", "drop"],
             "argument --empty-block: invalid choice: 'drop'"),
            # the alias typed, with the name it stands for (it echoed only 'int8_t')
            (["--repeat-time", "1", "--dtype", "int8"],
             "argument --dtype: invalid choice: 'int8' (int8_t) (choose from half, float)"),
            (["--repeat-time", "1", "--first-n-mask-mode", "normal"],  # not read by it
             "unrecognized arguments: --first-n-mask-mode\n")):
        with pytest.raises(SystemExit) as done:
            main(["run", "block_reduce_sum", "--src", paths["src"], "--dtype", "half",
                  "--mask", "128", "--out", out, *args])
        assert done.value.code == 2 and message in capsys.readouterr().err, message
    with pytest.raises(ValueError, match=r"block_reduce_sum: repeat_time='two' is not a valid "
                                         r"integer \(--repeat-time\)"):
        ascjax.run_bin("block_reduce_sum", src=paths["src"], dtype="half", repeat_time="two",
                       mask=128, out=out)
    with pytest.raises(ValueError, match=r"reduce_sum: method=7 is not one of \[1, 2, 3, "
                                         r"'sequential', 'tree', 'vector_merge'\]"):
        ascjax.run_bin("reduce_sum", src=paths["src"], dtype="half", count=4, method=7,
                       out=out)
    with pytest.raises(TypeError, match=r"run reduce_sum: unknown option\(s\) \['empty_block'\]"):
        ascjax.run_bin("reduce_sum", src=paths["src"], dtype="half", count=4,
                       empty_block="keep", out=out)
    with pytest.raises(TypeError, match=r"run block_reduce_sum: missing option\(s\) "
                                        r"\['repeat_time'\]"):
        ascjax.run_bin("block_reduce_sum", src=paths["src"], dtype="half", mask=128, out=out)
    with pytest.raises(ValueError, match="this output file is also an input"):
        ascjax.run_bin("block_reduce_sum", src=paths["src"], dtype="half", repeat_time=1,
                       mask=128, out=paths["src"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.bin"]


# --- what --help lists ---------------------------------------------------------------------------

def test_help_lists_vendor_arguments_and_only_the_config_fields_read(capsys):
    block = _help(capsys, "block_reduce_sum")
    assert "BlockReduceSum<T>(dst, src, repeatTime, mask, dstRepStride" in block
    for text in ("--repeat-time REPEAT_TIME repeatTime", "--mask MASK mask: an int (continuous",
                 "dstRepStride (units of 8 elements)", "srcBlkStride (32-byte blocks)",
                 "--dtype {half,float}", "--empty-block {fill,keep}", "--masked-lanes",
                 "--float-overflow", "--product"):
        assert text in block, text
    for text in ("--first-n-mask-mode", "--vector-merge", "--masked-pair", "--ub-bytes",
                 "--mask-layout", "--int-overflow", "--e8m0", "--store-masked"):
        assert text not in block, text
    whole = _help(capsys, "whole_reduce_sum")
    assert whole.index("--mask MASK") < whole.index("--repeat-time REPEAT_TIME")  # vendor order
    assert "dstRepStride (elements)" in whole
    reduce_sum = _help(capsys, "reduce_sum")
    for text in ("--count COUNT count (the first count elements of src); call form --count",
                 "call form --mask --repeat-time --src-rep-stride, default 8",
                 "--method {1,2,3,sequential,tree,vector_merge}", "--first-n-mask-mode",
                 "--vector-merge"):
        assert text in reduce_sum, text
    assert "--empty-block" not in reduce_sum and "--masked-pair" not in reduce_sum
    assert "--masked-pair {keep,zero}" in _help(capsys, "pair_reduce_sum")
    assert "dstBlkStride (no effect: the page says any value)" in _help(capsys,
                                                                        "repeat_reduce_sum")
    datablock = _help(capsys, "reduce_sum_datablock")
    assert "--int-overflow" in datablock and "--vl-overflow" in datablock
    gather = _help(capsys, "asc_gather")
    assert "--masked-lanes" not in gather and "--int-overflow" not in gather
    assert "--ub-bytes" in _help(capsys, "squeeze_and_storeunalign")


# Static arguments per LocalTensor runner for the check below (adversarial data: NaN, inf, -0,
# subnormals, masked lanes, empty blocks, a 0 stride, product-dependent defaults).
_CALLS = {
    "pair_reduce_sum": lambda d, s, c: ascjax.pair_reduce_sum(d, s, 2, [0x1FF, 0x0], 1, 1, 8,
                                                              config=c),
    "block_reduce_sum": lambda d, s, c: ascjax.block_reduce_sum(d, s, 2, 20, 0, 1, 8, config=c),
    "whole_reduce_sum": lambda d, s, c: ascjax.whole_reduce_sum(d, s, 70, 2, 1, 1, 8, config=c),
    "repeat_reduce_sum": lambda d, s, c: ascjax.repeat_reduce_sum(d, s, 2, 70, 1, 1, 1, 8,
                                                                  config=c),
    "reduce_sum": lambda d, s, c: ascjax.reduce_sum(d, s, None, 250, config=c)[0],
}


@pytest.mark.parametrize("name", list(_CALLS))
def test_config_fields_left_out_of_a_runner_do_not_change_its_bits(name):
    """The fields a runner does not list are ones its instruction does not read: every other
    reading of each gives the same bits on adversarial data (the -0 + masked lane case of
    masked_lanes, NaN and overflow, empty DataBlocks)."""
    listed = {o.name for o in runners.RUNNERS[name].config_options}
    src = _random("half", (4, 256))
    src[0, :] = np.float16(-0.0)
    src[1, :] = np.float16(60000)  # every sum overflows
    dst = _random("half", (4, 128))
    want = np.asarray(_CALLS[name](dst, src, ascjax.Config()))
    left_out = [f for f in _CHOICES if f not in listed and f != "out_of_range"]
    assert left_out, name
    # Every field left out at once, its k-th reading in config k (a field with fewer readings
    # keeps its last): each reading is met with one compilation per k, not one per reading.
    for k in range(1, max(len(_CHOICES[f]) for f in left_out)):
        readings = {f: _CHOICES[f][min(k, len(_CHOICES[f]) - 1)] for f in left_out}
        got = np.asarray(_CALLS[name](dst, src, ascjax.Config(**readings)))
        assert np.array_equal(_bits(got), _bits(want)), readings
    for field in {"masked_lanes", "float_overflow"} & listed:  # and a listed one can matter
        other = _CHOICES[field][1]
        assert not np.array_equal(
            _bits(_CALLS[name](dst, src, ascjax.Config(**{field: other}))), _bits(want)), field


# --- the mask state every LocalTensor call reads (is_set_mask, mask_state) -----------------------

def _state_module():
    return pytest.importorskip("ascjax._src.isa.vector_mask")  # the mask modes (branch maskmode)


def test_state_keywords_become_options_of_every_tensor_runner(capsys):
    _state_module()
    for name in ("pair_reduce_sum", "block_reduce_sum", "whole_reduce_sum",
                 "repeat_reduce_sum", "reduce_sum"):
        text = _help(capsys, name)
        assert "--is-set-mask {False,True} isSetMask: false makes --mask a placeholder" in text
        assert "--mask-state MASK_STATE the mask mode and registers" in text


@pytest.mark.parametrize("case", [
    ("block_reduce_sum", {"repeat_time": 2, "mask": 0, "is_set_mask": "false",
                          "mask_state": "normal:0x0,0xFFFF0000FFFF"},
     lambda d, s, m: ascjax.block_reduce_sum(d, s, 2, 0, 1, 1, 8, is_set_mask=False,
                                             mask_state=m("normal", 0, 0xFFFF0000FFFF))),
    ("whole_reduce_sum", {"repeat_time": 1, "mask": 0, "is_set_mask": "false",
                          "mask_state": "counter:300"},
     lambda d, s, m: ascjax.whole_reduce_sum(d, s, 0, 1, 1, 1, 8, is_set_mask=False,
                                             mask_state=m("counter", low=300))),
    ("pair_reduce_sum", {"repeat_time": 3, "mask": 200, "mask_state": "counter:0"},
     lambda d, s, m: ascjax.pair_reduce_sum(d, s, 3, 200, 1, 1, 8,
                                            mask_state=m("counter", low=0))),
], ids=["normal-words", "counter-state", "counter-mask-argument"])
def test_mask_state_options_equal_the_python_call(tmp_path, case):
    state = _state_module().MaskState
    name, options, call = case
    src, dst = _random("half", (2, 512)), _random("half", (2, 256))
    paths = _files(tmp_path, src=src, dst=dst)
    out = str(tmp_path / "out.bin")
    ascjax.run_bin(name, src=paths["src"], dst=paths["dst"], dtype="half", tensors=2, out=out,
                   **options)
    want = _loop(lambda d, s: call(d, s, state), dst, src)
    assert np.array_equal(_bits(ascjax.read_bin(out, "half").reshape(2, -1)), _bits(want))


def test_bad_mask_state_text_is_named(tmp_path, capsys):
    _state_module()
    paths = _files(tmp_path, src=_random("half", (1, 256)))
    run = ["run", "block_reduce_sum", "--src", paths["src"], "--dtype", "half", "--mask", "0",
           "--repeat-time", "1", "--out", str(tmp_path / "o.bin")]
    cases = [("counter", "--mask-state 'counter' is not normal, normal:HIGH,LOW or counter:N"),
             ("normal:1", "--mask-state 'normal:1' is not normal"),
             ("counter:x", "--mask-state 'counter:x': invalid literal"),
             ("counter:-1", "--mask-state 'counter:-1': MaskState: low=-1 is outside the valid")]
    for text, message in cases:
        with pytest.raises(SystemExit) as done:
            main([*run, "--mask-state", text])
        assert done.value.code == 2 and message in capsys.readouterr().err, message
    with pytest.raises(ValueError, match=r"block_reduce_sum: --mask-state 'counter' is not"):
        ascjax.run_bin("block_reduce_sum", src=paths["src"], dtype="half", mask=0,
                       repeat_time=1, mask_state="counter", out=str(tmp_path / "o.bin"))
    with pytest.raises(ValueError, match=r"block_reduce_sum: is_set_mask='no' is not a valid "
                                         r"boolean \(--is-set-mask\): 'no' is not true or false"):
        ascjax.run_bin("block_reduce_sum", src=paths["src"], dtype="half", mask=0,
                       repeat_time=1, is_set_mask="no", out=str(tmp_path / "o.bin"))


def test_error_text_reaches_the_user_as_one_line(capsys):
    from ascjax._src.cli import _fail

    assert _fail("run", ValueError("run: first line\nsecond line")) == 2
    assert capsys.readouterr().err == "ascjax run: first line second line\n"


def _toy_tmp(dst, src, shared_tmp_buffer, count, *, cal_index=False, config=None):
    """toy: the first element of src to dst[0], with the work space's size in dst[1] when
    ``cal_index``; a work space shorter than 16 elements is refused (as pages require one)."""
    del config
    if shared_tmp_buffer is not None and np.shape(shared_tmp_buffer)[-1] < 16:
        raise ValueError("toy_tmp: shared_tmp_buffer needs 16 elements")
    size = -1 if shared_tmp_buffer is None else np.shape(shared_tmp_buffer)[-1]
    out = jnp.asarray(dst).at[..., 0].set(jnp.asarray(src)[..., count - 1])
    return out.at[..., 1].set(size) if cal_index else out


def test_work_space_length_and_a_bool_template(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(INSTRUCTIONS, "toy_tmp", dataclasses.replace(
        INSTRUCTIONS["reduce_sum"], name="toy_tmp", function=_toy_tmp))
    monkeypatch.setitem(runners.RUNNERS, "toy_tmp", Tensor(
        templates={"cal_index": (False, True)}).runner("toy_tmp"))
    src = _random("float", (2, 64))
    paths = _files(tmp_path, src=src)
    out = str(tmp_path / "o.bin")
    for length, cal_index, size in ((None, "true", -1), (32, "true", 32), (32, "false", None)):
        ascjax.run_bin("toy_tmp", src=paths["src"], dtype="float", tensors=2, dst_len=2,
                       count=5, shared_tmp_buffer_len=length, cal_index=cal_index, out=out)
        got = ascjax.read_bin(out, "float").reshape(2, 2)
        assert np.array_equal(_bits(got[:, 0]), _bits(src[:, 4]))
        assert got[:, 1].tolist() == [size if size is not None else 0.0] * 2
    assert main(["run", "toy_tmp", "--src", paths["src"], "--dtype", "float", "--count", "5",
                 "--shared-tmp-buffer-len", "8", "--out", out]) == 2
    assert "ascjax run: toy_tmp: shared_tmp_buffer needs 16 elements" in capsys.readouterr().err
    assert main(["run", "toy_tmp", "--src", paths["src"], "--dtype", "float", "--count", "5",
                 "--shared-tmp-buffer-len", "-1", "--out", out]) == 2
    assert ("ascjax run: toy_tmp: shared_tmp_buffer_len=-1 is outside the valid range "
            "[0, 1073741824]") in capsys.readouterr().err
    text = _help(capsys, "toy_tmp")
    assert "--cal-index {False,True} calIndex (also find the index: true/false): one of " \
           "False, True (default False)" in text
    assert "--shared-tmp-buffer-len SHARED_TMP_BUFFER_LEN sharedTmpBuffer: elements" in text


# --- the compaction family on registers (asc_squeeze, _with_status, asc_unsqueeze) ----------

def test_squeeze_family_runners_equal_the_python_calls(tmp_path, capsys):
    x = _random("half", (5, 128))
    mask = (RNG.random((5, 128)) < 0.4).astype(np.uint8)
    paths = _files(tmp_path, src=x, mask=mask)
    out = {k: str(tmp_path / f"{k}.bin") for k in ("sq", "st", "ar", "un")}
    assert main(["run", "squeeze", "--src", paths["src"], "--dtype", "half", "--mask",
                 paths["mask"], "--out", out["sq"]]) == 0
    want = np.stack([np.asarray(ascjax.squeeze(s, m == 1)) for s, m in zip(x, mask, strict=True)])
    assert np.array_equal(_bits(ascjax.read_bin(out["sq"], "half", registers=True)), _bits(want))
    assert main(["run", "squeeze_with_status", "--src", paths["src"], "--dtype", "half",
                 "--mask", paths["mask"], "--squeeze-status", "elements", "--out", out["st"],
                 "--ar-out", out["ar"]]) == 0
    assert np.array_equal(_bits(ascjax.read_bin(out["st"], "half", registers=True)), _bits(want))
    assert ascjax.read_bin(out["ar"], "int32_t").tolist() == mask.sum(axis=1).tolist()
    u = np.zeros((2, 64), np.uint32)
    _files(tmp_path, u=u)
    assert main(["run", "unsqueeze", "--src", str(tmp_path / "u.bin"), "--dtype", "uint32_t",
                 "--pattern", "PAT_M4", "--out", out["un"]]) == 0
    m4 = ascjax.create_mask("PAT_M4", "uint32_t")
    assert np.array_equal(ascjax.read_bin(out["un"], "uint32_t", registers=True),
                          np.stack([np.asarray(ascjax.unsqueeze(r, m4)) for r in u]))
    help_text = _help(capsys, "squeeze_with_status")
    assert "--ar-out" in help_text and "--squeeze-status" in help_text
# --- the gathers ------------------------------------------------------------------------------

def test_gather_runner_matches_the_function(tmp_path):
    """``ascjax run gather``: two LocalTensors per file, both call forms, srcBaseAddr."""
    rng = np.random.default_rng(3)
    src = rng.standard_normal((2, 200)).astype(np.float16)
    offsets = (rng.integers(0, 190, (2, 256)) * 2).astype(np.uint32)
    dst = rng.standard_normal((2, 300)).astype(np.float16)
    paths = _files(tmp_path, src=src, off=offsets, dst=dst)
    out = str(tmp_path / "o.bin")
    common = {"src": paths["src"], "dtype": "half", "src_offset": paths["off"], "tensors": 2,
              "dst": paths["dst"], "src_base_addr": 20, "out": out}
    for form, args in (({"count": 250}, (250,)),
                       ({"mask": "0xF0F0,0x1", "repeat_time": 2, "dst_rep_stride": 9},
                        ([0xF0F0, 0x1], 2, 9))):
        ascjax.run_bin("gather", **common, **form)
        got = np.fromfile(out, np.float16).reshape(2, 300)
        for k in range(2):
            want = np.asarray(ascjax.gather(dst[k], src[k], offsets[k], 20, *args))
            np.testing.assert_array_equal(got[k].view(np.uint16), want.view(np.uint16))
    with pytest.raises(TypeError, match="gather: give --count, or --mask --repeat-time"):
        ascjax.run_bin("gather", **common)


def test_a_run_that_fails_says_how_the_data_was_read(tmp_path, capsys):
    """half files run with --dtype float: the offsets fault (half the elements, misaligned),
    and the error says how many elements of which type each data file held."""
    rng = np.random.default_rng(3)
    paths = _files(tmp_path, src=rng.standard_normal((2, 200)).astype(np.float16),
                   off=(rng.integers(0, 190, (2, 256)) * 2 + 2).astype(np.uint32),
                   dst=np.zeros((2, 300), np.float16))
    args = ["run", "gather", "--src", paths["src"], "--src-offset", paths["off"], "--tensors",
            "2", "--dst", paths["dst"], "--src-base-addr", "0", "--count", "150", "--out",
            str(tmp_path / "o.bin")]
    assert main(args + ["--dtype", "half"]) == 0
    capsys.readouterr()
    assert main(args + ["--dtype", "float"]) == 2
    err = capsys.readouterr().err
    assert "srcOffset" in err, err
    assert ("(the data was read as --dtype float, 32 bits an element: --src 200 elements "
            "(2 tensors of 100), --dst 300 elements (2 tensors of 150); if the files hold "
            "another type, give its --dtype)") in err, err
    with pytest.raises(IndexError) as raised:  # Python callers get it as the error's note
        ascjax.run_bin("gather", **{k.removeprefix("--").replace("-", "_"): v for k, v in
                                    zip(args[2::2], args[3::2], strict=True)}, dtype="float")
    assert any("--src 200 elements" in note for note in raised.value.__notes__)


def test_reg_gather_runner_matches_the_function(tmp_path):
    rng = np.random.default_rng(4)
    data = rng.standard_normal(500).astype(np.float32)
    index = rng.integers(0, 500, (3, 64)).astype(np.uint32)
    paths = _files(tmp_path, src=data, index=index)
    out = str(tmp_path / "o.bin")
    ascjax.run_bin("reg_gather", src=paths["src"], dtype="float", index=paths["index"], out=out)
    got = np.fromfile(out, np.float32).reshape(3, 64)
    want = np.stack([np.asarray(ascjax.reg_gather(data, i, np.ones(64, bool))) for i in index])
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
# --- DataBlock gathers and Scatter: their own plans ---------------------------------------------

def test_gatherb_and_scatter_runners_equal_the_python_calls(tmp_path):
    src = _random("half", (3, 128))
    dst = _random("half", (3, 288))
    offset = (RNG.integers(0, 8, (3, 16)) * 32).astype(np.uint32)
    paths = _files(tmp_path, src=src, dst=dst, offset=offset)
    ascjax.run_bin("gatherb", src=paths["src"], dtype="half", dst=paths["dst"], tensors=3,
                   offset=paths["offset"], repeat_time=2, dst_blk_stride=1, dst_rep_stride=10,
                   out=str(tmp_path / "g.bin"))
    want = _loop(lambda d, s, o: ascjax.gatherb(d, s, o, 2, (1, 10)), dst, src, offset)
    got = ascjax.read_bin(str(tmp_path / "g.bin"), "half").reshape(3, -1)
    assert np.array_equal(_bits(got), _bits(want))

    dst_offset = np.stack([RNG.permutation(288)[:128] * 2 for _ in range(3)]).astype(np.uint32)
    paths = _files(tmp_path, dst_offset=dst_offset)
    for form, call in (({"count": 100}, lambda d, s, o: ascjax.scatter(d, s, o, 0, 100)),
                       ({"mask": "0x0F0F,0x1", "repeat_time": 1, "src_rep_stride": 8},
                        lambda d, s, o: ascjax.scatter(d, s, o, 0, [0x0F0F, 0x1], 1, 8))):
        out = str(tmp_path / "s.bin")
        main(["run", "scatter", "--src", str(tmp_path / "src.bin"), "--dtype", "half",
              "--dst", str(tmp_path / "dst.bin"), "--tensors", "3", "--dst-offset",
              paths["dst_offset"], "--out", out,
              *[x for k, v in form.items() for x in ("--" + k.replace("_", "-"), str(v))]])
        want = _loop(call, dst, src, dst_offset)
        assert np.array_equal(_bits(ascjax.read_bin(out, "half").reshape(3, -1)), _bits(want))


@pytest.mark.parametrize("name", ["reg_gather_b", "gather_datablock"])
def test_register_block_gather_runners_equal_the_python_calls(tmp_path, name):
    data = _random("bfloat16_t", (512,))
    index = np.zeros((4, 64), np.uint32)
    index[:, :8] = RNG.integers(0, 32, (4, 8)) * 32
    mask = (RNG.random((4, 128)) < 0.5).astype(np.uint8)
    paths = _files(tmp_path, src=data, index=index, mask=mask)
    out = str(tmp_path / "out.bin")
    ascjax.run_bin(name, src=paths["src"], dtype="bfloat16_t", index=paths["index"],
                   mask=paths["mask"], out=out)
    f = getattr(ascjax, name)
    want = _loop(lambda i, m: f(data, i, m.astype(bool)), index, mask)
    assert np.array_equal(_bits(ascjax.read_bin(out, "bfloat16_t").reshape(4, -1)), _bits(want))
def test_gather_mask_and_asc_reduce_runners_equal_the_python_call(tmp_path):
    """Both gather-mask forms and asc_reduce's two forms over small .bin files, with the count
    file, against the Python function one tensor at a time."""
    src = _random("half", (3, 256))
    dst = _random("half", (3, 256))
    src1 = RNG.integers(0, 1 << 16, (3, 16), dtype=np.uint64).astype(np.uint16)
    paths = {k: str(tmp_path / f"{k}.bin") for k in ("src", "dst", "src1", "out", "cnt")}
    src.tofile(paths["src"]), dst.tofile(paths["dst"]), src1.tofile(paths["src1"])
    for pattern in ({"src1_pattern": 5}, {"src1": paths["src1"]}):
        ascjax.run_bin("gather_mask", src=paths["src"], dst=paths["dst"], dtype="half",
                       tensors=3, repeat_times=2, reduce_mode=True, mask=100, out=paths["out"],
                       cnt_out=paths["cnt"], **pattern)
        p = 5 if "src1_pattern" in pattern else None
        want = [ascjax.gather_mask(d, s, p if p else u, True, 100, (1, 2, 8, 0))
                for d, s, u in zip(dst, src, src1, strict=True)]
        got = ascjax.read_bin(paths["out"], "half").reshape(3, -1)
        np.testing.assert_array_equal(_bits(got), _bits(np.stack([w[0] for w in want])))
        np.testing.assert_array_equal(ascjax.read_bin(paths["cnt"], "uint32_t"),
                                      [int(w[1]) for w in want])
    a2 = ascjax.Config(product="A2")
    u16 = src.view(np.uint16)
    for form, args in (({"count": 200}, (200,)),
                       ({"repeat": 2, "src0_block_stride": 1, "pattern_mode": 0,
                         "src0_repeat_stride": 8, "src1_repeat_stride": 0}, (2, 1, 0, 8, 0))):
        ascjax.run_bin("asc_reduce", src=paths["src"], dst=paths["dst"], src1=paths["src1"],
                       dtype="uint16_t", tensors=3, product="A2", out=paths["out"], **form)
        want = _loop(lambda d, s, u, args=args: ascjax.asc_reduce(d, s, u, *args, config=a2),
                     dst.view(np.uint16), u16, src1)
        np.testing.assert_array_equal(ascjax.read_bin(paths["out"], "uint16_t").reshape(3, -1),
                                      want)
    with pytest.raises(TypeError, match="exactly one of --src1-pattern"):
        ascjax.run_bin("gather_mask", src=paths["src"], dtype="half", repeat_times=1,
                       out=paths["out"])
    with pytest.raises(TypeError, match="missing: \\['--src1-repeat-stride'\\]"):
        ascjax.run_bin("asc_reduce", src=paths["src"], src1=paths["src1"], dtype="uint16_t",
                       product="A2", repeat=1, src0_block_stride=1, pattern_mode=1,
                       src0_repeat_stride=8, out=paths["out"])


def test_a_runner_of_two_forms_labels_the_config_fields_each_reads():
    """Issue 15: ``ascjax run squeeze`` listed the UB form's Config fields as the register
    form's; now that it runs both forms (issue 13) each field one form reads says which, and
    rows of one type that differ by form carry their own assumptions."""
    for name, register, ub in (("squeeze", "mask_layout", "squeeze_ub_tail"),
                               ("gather_datablock", "datablock_mask", None),
                               ("asc_pair_reduce_sum", "mask_layout", "masked_pair")):
        config = {o.name: o.help for o in runners.RUNNERS[name].config_options}
        assert "int_overflow" not in config and "read by" not in config["product"]
        assert config[register].endswith("read by the register (950) form"), name
        if ub:
            assert config[ub].endswith("read by the UB (A2, A3) form"), name
    assert "int_overflow" in {o.name for o in
                              runners.RUNNERS["reduce_sum_datablock"].config_options}
    squeeze = ascjax.INSTRUCTIONS["squeeze"]
    assert squeeze.assumptions(("uint16_t", "register (950)")) == ()
    assert squeeze.assumptions(("uint16_t", "UB (A2, A3)")) == ("A43", "A44", "A45")
    block = ascjax.INSTRUCTIONS["gather_datablock"]
    assert block.assumptions(("uint16_t", "register (950)")) == ("A34",)
    assert block.assumptions(("uint16_t", "UB (A2, A3)")) == ("A38",)
    pair = ascjax.INSTRUCTIONS["asc_pair_reduce_sum"]
    assert pair.assumptions(("half", "register (950)")) == ("A3", "A7", "A8")
    assert pair.assumptions(("float", "UB (A2, A3)")) == ("A3", "A7", "A8", "A5", "A9", "A28")


# --- issue 13: the UB forms of asc_squeeze and asc_gather_datablock ----------------------------

_A2 = ascjax.Config(product="A2")


def _squeeze_ub_case(tmp_path):
    """Two rows of uint32 tensors: random bits, a src1 of many zeros, dst with bits to keep;
    three repeats through block strides 2 and 0 and repeat strides 16 and 1."""
    src = _random("uint32_t", (2, 384))
    src1 = np.where(RNG.random((2, 64)) < 0.5, 0, _random("uint32_t", (2, 64))).astype(
        np.uint32)
    dst = _random("uint32_t", (2, 200))
    options = {"repeat": 3, "dst_block_stride": 1, "src0_block_stride": 2,
               "src1_block_stride": 0, "dst_repeat_stride": 8, "src0_repeat_stride": 16,
               "src1_repeat_stride": 1}
    args = tuple(options.values())  # the prototype's order
    return _files(tmp_path, src=src, src1=src1, dst=dst), options, args, (dst, src, src1)


def _argv(options):
    return [x for k, v in options.items() for x in ("--" + k.replace("_", "-"), str(v))]


def test_squeeze_ub_form_runs_by_its_options(tmp_path, capsys):
    """run_bin and the CLI (the vendor name asc_squeeze) give the bits of ascjax.squeeze's UB
    form, one call per row of --tensors 2; Config readings of the UB form change them as they
    change the function's."""
    paths, options, args, rows = _squeeze_ub_case(tmp_path)
    out = str(tmp_path / "out.bin")
    for readings in ({}, {"squeeze_ub_tail": "keep"}, {"squeeze_ub_mask": "bits"}):
        config = ascjax.Config(product="A2", **readings)
        want = _loop(lambda d, s, m, c=config: ascjax.squeeze(d, s, m, *args, config=c), *rows)
        ascjax.run_bin("squeeze", src=paths["src"], src1=paths["src1"], dst=paths["dst"],
                       dtype="uint32_t", tensors=2, product="A2", out=out, **options,
                       **readings)
        assert np.array_equal(_bits(np.fromfile(out, np.uint32).reshape(2, -1)), _bits(want))
        assert main(["run", "asc_squeeze", "--src", paths["src"], "--src1", paths["src1"],
                     "--dst", paths["dst"], "--dtype", "uint32_t", "--tensors", "2",
                     "--product", "A2", "--out", out, *_argv(options | readings)]) == 0
        assert np.array_equal(_bits(np.fromfile(out, np.uint32).reshape(2, -1)), _bits(want))
        if readings:  # the reading matters on this data
            default = _loop(lambda d, s, m: ascjax.squeeze(d, s, m, *args, config=_A2), *rows)
            assert not np.array_equal(_bits(want), _bits(default)), readings
    # The strides' defaults are the page example's (1 and 8); zeros of src's length as dst.
    ascjax.run_bin("squeeze", src=paths["src"], src1=paths["src1"], dtype="uint32_t",
                   tensors=2, product="A3", repeat=1, out=out)
    want = _loop(lambda s, m: ascjax.squeeze(np.zeros(384, np.uint32), s, m, 1, 1, 1, 1, 8, 8,
                                             8, config=ascjax.Config(product="A3")), *rows[1:])
    assert np.array_equal(_bits(np.fromfile(out, np.uint32).reshape(2, -1)), _bits(want))


def test_gather_datablock_ub_form_runs_by_its_options(tmp_path):
    """asc_gather_datablock's UB form (dst, src, src_offset, dst_repeat_stride,
    dst_block_stride, repeat) through run_bin and the CLI, against the function per row."""
    src = _random("uint16_t", (2, 256))
    dst = _random("uint16_t", (2, 300))
    offset = (RNG.integers(0, 16, (2, 16)) * 32).astype(np.uint32)  # blocks inside src
    paths = _files(tmp_path, src=src, dst=dst, offset=offset)
    out = str(tmp_path / "out.bin")
    for blk in (1, 0):  # 0 is taken as 1 (A38)
        options = {"src_offset": paths["offset"], "dst_repeat_stride": 9,
                   "dst_block_stride": blk, "repeat": 2}
        want = _loop(lambda d, s, o, b=blk: ascjax.gather_datablock(d, s, o, 9, b, 2,
                                                                    config=_A2),
                     dst, src, offset)
        ascjax.run_bin("gather_datablock", src=paths["src"], dst=paths["dst"],
                       dtype="uint16_t", tensors=2, product="A2", out=out, **options)
        assert np.array_equal(_bits(np.fromfile(out, np.uint16).reshape(2, -1)), _bits(want))
        assert main(["run", "asc_gather_datablock_sync", "--src", paths["src"], "--dst",
                     paths["dst"], "--dtype", "uint16_t", "--tensors", "2", "--product", "A2",
                     "--out", out, *_argv(options)]) == 0
        assert np.array_equal(_bits(np.fromfile(out, np.uint16).reshape(2, -1)), _bits(want))
    # The register form, by its own options, as before (the vendor name, a pattern mask).
    index = np.zeros((3, 64), np.uint32)
    index[:, :8] = RNG.integers(0, 16, (3, 8)) * 32
    paths = _files(tmp_path, index=index, data=src[0])
    assert main(["run", "asc_gather_datablock", "--src", paths["data"], "--dtype", "uint16_t",
                 "--index", paths["index"], "--pattern", "PAT_H", "--out", out]) == 0
    mask = ascjax.create_mask("PAT_H", "uint16_t")
    want = _loop(lambda i: ascjax.gather_datablock(src[0], i, mask), index)
    assert np.array_equal(_bits(np.fromfile(out, np.uint16).reshape(3, -1)), _bits(want))


def test_mixing_two_forms_options_is_an_error_naming_both(tmp_path, capsys):
    paths, *_ = _squeeze_ub_case(tmp_path)
    mask = _files(tmp_path, mask=np.ones(64, np.uint8))["mask"]
    out = str(tmp_path / "out.bin")
    for argv, given in (
            (["asc_squeeze", "--mask", mask, "--src1", paths["src1"], "--repeat", "1"],
             "(given: ['--mask', '--repeat', '--src1'])"),
            (["squeeze", "--pattern", "PAT_ALL", "--src1", paths["src1"], "--repeat", "1",
              "--tensors", "2"], "(given: ['--pattern', '--repeat', '--src1', '--tensors'])"),
            (["gather_datablock", "--index", paths["src"], "--src-offset", paths["src"],
              "--repeat", "1"], "(given: ['--index', '--repeat', '--src-offset'])"),
            (["asc_gather_datablock"], "(given: none)")):  # neither form's own options
        assert main(["run", *argv, "--src", paths["src"], "--dtype", "uint32_t", "--product",
                     "A2", "--out", out]) == 2
        err = capsys.readouterr().err
        assert "give the options of one call form: register (950): " in err, err
        assert " or UB (A2, A3): " in err and given in err, err
        ub = "--src1 --repeat" if "squeeze" in argv[0] else "--src-offset"
        register = "[--mask] [--mask-bits] [--pattern]"
        assert ub in err and register in err, err
    assert not (tmp_path / "out.bin").exists()
    with pytest.raises(TypeError, match="register \\(950\\): --index .* or UB"):
        ascjax.run_bin("gather_datablock", src=paths["src"], dtype="uint32_t",
                       index=paths["src"], repeat=1, out=out)
    # The chosen form's own type choices: half is a register type, not a UB one.
    with pytest.raises(ValueError, match="dtype='half' is not one of \\['uint16_t', "
                                         "'uint32_t'\\] \\(the UB \\(A2, A3\\) form\\)"):
        ascjax.run_bin("squeeze", src=paths["src"], src1=paths["src1"], dtype="half",
                       repeat=1, product="A2", out=out)


def _sections(capsys, name):
    text = _help(capsys, name)
    return text[text.index(" options: "):]  # past the usage line


def test_help_of_a_name_of_two_forms_groups_each_forms_options(capsys):
    text = _sections(capsys, "squeeze")
    register, ub = text.index("call form register (950):"), text.index("call form UB (A2, A3):")
    config = text.index("emulation options")
    assert text.index("--src SRC register (950) form: src registers") < register < ub < config
    assert register < text.index("--mask MASK mask file") < ub
    for flag in ("--src1 SRC1", "--repeat REPEAT", "--dst-block-stride", "--src0-block-stride",
                 "--src1-block-stride", ("--dst-repeat-stride DST_REPEAT_STRIDE "
                                         "dst_repeat_stride (32-byte blocks) (default 8)"),
                 "--src0-repeat-stride",
                 "--src1-repeat-stride", "--tensors TENSORS"):
        assert ub < text.index(flag) < config, flag
    assert "--squeeze-ub-tail {zero,keep} Config.squeeze_ub_tail (default zero); read by the " \
           "UB (A2, A3) form" in text
    text = _sections(capsys, "gather_datablock")
    register, ub = text.index("call form register (950):"), text.index("call form UB (A2, A3):")
    assert register < text.index("--index INDEX") < ub < text.index("--src-offset SRC_OFFSET")
    for flag in ("--dst-repeat-stride", "--dst-block-stride", "--repeat REPEAT"):
        assert ub < text.index(flag), flag


# --- issue 12: asc_pair_reduce_sum's UB form (its two C overloads) -----------------------------

def _pair_ub_forms(lanes):
    """(options, the call's positional arguments after dst and src, its MaskState or None):
    the first-n form with a partial last repeat, the high-dimensional form with block stride 0
    and overlapping repeats, and the same under Normal-mode words that mask whole pairs."""
    state = "normal:0x0,0xF0F0F0F0F0F00FF0"
    return [({"count": 2 * lanes - 6}, (2 * lanes - 6,), None),
             ({"repeat": 3, "dst_repeat_stride": 2, "src_block_stride": 0,
               "src_repeat_stride": 3}, (3, 2, 0, 3), None),
             ({"repeat": 2, "dst_repeat_stride": 1, "src_block_stride": 2,
               "src_repeat_stride": 9, "mask_state": state}, (2, 1, 2, 9),
              ascjax.MaskState("normal", 0, 0xF0F0F0F0F0F00FF0))]


@pytest.mark.parametrize("dtype", ["half", "float"])
def test_pair_reduce_sum_ub_form_runs_by_its_options(tmp_path, dtype):
    """run_bin and the CLI give the bytes of ascjax.asc_pair_reduce_sum's UB form called per
    row (--tensors 2, --product A2) in both C forms; masked_pair="zero" changes them as it
    changes the function's (pairs past count, pairs the mask state turns off)."""
    lanes = ascjax.FORMATS[dtype].lanes
    src, dst = _random(dtype, (2, 6 * lanes)), _random(dtype, (2, 3 * lanes))
    paths = _files(tmp_path, src=src, dst=dst)
    out = str(tmp_path / "out.bin")
    for options, args, state in _pair_ub_forms(lanes):
        wants = {}
        for readings in ({}, {"masked_pair": "zero"}):
            config = ascjax.Config(product="A2", **readings)
            want = _loop(lambda d, s, c=config, a=args, m=state: ascjax.asc_pair_reduce_sum(
                d, s, *a, mask_state=m, config=c), dst, src)
            wants[bool(readings)] = want
            ascjax.run_bin("asc_pair_reduce_sum", src=paths["src"], dst=paths["dst"],
                           dtype=dtype, tensors=2, product="A2", out=out, **options, **readings)
            assert Path(out).read_bytes() == want.tobytes(), (options, readings)
            Path(out).unlink()
            assert main(["run", "asc_pair_reduce_sum", "--src", paths["src"], "--dst",
                         paths["dst"], "--dtype", dtype, "--tensors", "2", "--product", "A2",
                         "--out", out, *_argv(options | readings)]) == 0
            assert Path(out).read_bytes() == want.tobytes(), (options, readings)
        # Pairs past count and pairs the state turns off are written; all lanes: none masked.
        masked = "count" in options or state is not None
        assert np.array_equal(_bits(wants[False]), _bits(wants[True])) != masked, options
    # Defaults: the strides 1, 1, 8, dst zeros of src's length (A3, one tensor per file).
    ascjax.run_bin("asc_pair_reduce_sum", src=paths["src"], dtype=dtype, repeat=2,
                   product="A3", out=out)
    want = _loop(lambda s: ascjax.asc_pair_reduce_sum(
        np.zeros(12 * lanes, src.dtype), s, 2, 1, 1, 8, config=ascjax.Config(product="A3")),
        src.reshape(1, -1))
    assert Path(out).read_bytes() == want.tobytes()


def test_pair_reduce_sum_register_form_is_unchanged(tmp_path):
    """The register form still runs by --src/--mask/--pattern alone (no product: the 950),
    equal to the function called per register; --mask-state is the UB form's."""
    src = _random("float", (5, 64))
    mask = (RNG.random((5, 64)) < 0.5).astype(np.uint8)
    paths = _files(tmp_path, src=src, mask=mask)
    out = str(tmp_path / "out.bin")
    assert main(["run", "asc_pair_reduce_sum", "--src", paths["src"], "--dtype", "float",
                 "--out", out]) == 0
    full = ascjax.create_mask("PAT_ALL", "float")
    want = _loop(lambda s: ascjax.asc_pair_reduce_sum(s, full), src)
    assert Path(out).read_bytes() == want.tobytes()
    ascjax.run_bin("asc_pair_reduce_sum", src=paths["src"], dtype="float", mask=paths["mask"],
                   masked_lanes="skip", out=out)
    skip = ascjax.Config(masked_lanes="skip")
    want = _loop(lambda s, m: ascjax.asc_pair_reduce_sum(s, m == 1, config=skip), src, mask)
    assert Path(out).read_bytes() == want.tobytes()
    ub = runners.RUNNERS["asc_pair_reduce_sum"]
    groups = {o.name: o.group for o in ub.options}
    assert groups["mask"] == "call form register (950)"
    assert groups["mask_state"] == groups["count"] == "call form UB (A2, A3)"
    assert {o.name for o in ub.options if not o.group} == {"src", "dtype", "out"}


def test_pair_reduce_sum_mixing_forms_is_exit_2_naming_both(tmp_path, capsys):
    paths = _files(tmp_path, src=_random("half", (1, 256)))
    out = str(tmp_path / "out.bin")
    for extra, given in ((["--pattern", "PAT_H", "--count", "64"],
                          "(given: ['--count', '--pattern'])"),
                         (["--mask", paths["src"], "--mask-state", "counter:9", "--repeat",
                           "1"], "(given: ['--mask', '--mask-state', '--repeat'])"),
                         (["--tensors", "2"], "(given: ['--tensors'])"),  # UB, but no form
                         (["--dst-repeat-stride", "2"], "(given: ['--dst-repeat-stride'])")):
        assert main(["run", "asc_pair_reduce_sum", "--src", paths["src"], "--dtype", "half",
                     "--product", "A2", "--out", out, *extra]) == 2
        err = capsys.readouterr().err
        assert "asc_pair_reduce_sum: give the options of one call form: register (950): " \
               "[--mask] [--mask-bits] [--pattern] or UB (A2, A3): [--tensors] [--dst] " \
               "[--dst-len] [--count] [--repeat] [--dst-repeat-stride] " \
               "[--src-block-stride] [--src-repeat-stride] [--mask-state] " \
               "(with --count or --repeat) " + given in err, err
    assert not Path(out).exists()
    with pytest.raises(TypeError, match=r"register \(950\): .* or UB \(A2, A3\): .*"
                                        r"\(given: \['--count', '--mask'\]\)"):
        ascjax.run_bin("asc_pair_reduce_sum", src=paths["src"], dtype="half",
                       mask=paths["src"], count=64, product="A2", out=out)
    # Both C forms at once: the UB form's own message names its two overloads.
    with pytest.raises(TypeError, match=r"asc_pair_reduce_sum: give the options of one call "
                                        r"form: --count or --repeat --dst-repeat-stride"):
        ascjax.run_bin("asc_pair_reduce_sum", src=paths["src"], dtype="half", count=64,
                       repeat=1, product="A2", out=out)
    # The UB form runs on A3 by default; off Atlas A2 / A3 it is refused, naming its products.
    assert main(["run", "asc_pair_reduce_sum", "--src", paths["src"], "--dtype", "half",
                 "--count", "64", "--product", "950", "--out", out]) == 2
    assert "asc_pair_reduce_sum: product='950' is not one of ['A3', 'A2'] (the UB (A2, A3) " \
           "form)" in capsys.readouterr().err


def test_pair_reduce_sum_help_lists_each_forms_options(capsys):
    text = _sections(capsys, "asc_pair_reduce_sum")
    register, ub = text.index("call form register (950):"), text.index("call form UB (A2, A3):")
    config = text.index("emulation options")
    assert register < text.index("--pattern PATTERN") < ub
    for flag in ("--count COUNT", "--repeat REPEAT", ("--dst-repeat-stride DST_REPEAT_STRIDE "
                 "dst_repeat_stride (one repeat's reduced length: lanes / 2 elements)"),
                 "--src-block-stride", "--src-repeat-stride", "--mask-state MASK_STATE",
                 "--tensors TENSORS", "--dst DST"):
        assert ub < text.index(flag) < config, flag
    assert "Config.masked_pair (default as the --product's page says); read by the UB (A2, " \
           "A3) form" in text


def test_the_run_summary_says_one_tensor_not_one_tensors():
    from ascjax._src.io.runners import RunSummary

    one = str(RunSummary("squeeze", 1, "tensors", ("a.bin",), 1, 1, 0.5))
    three = str(RunSummary("squeeze", 3, "tensors", ("a.bin",), 1, 1, 0.5))
    assert one.startswith("squeeze: 1 tensor -> a.bin") and "(2 tensors/s)" in one
    assert three.startswith("squeeze: 3 tensors -> a.bin")
    assert "\n" not in three  # row lengths unknown: no compare hint


def test_a_tensor_run_says_the_shape_compare_locates_its_rows_by(tmp_path):
    """A new user's compare of a ReduceSum output gave register/block/lane locations: the
    summary now names the --shape that gives (tensor, element), from the file written."""
    paths = _files(tmp_path, src=_random("half", (6, 128)))
    out = str(tmp_path / "dst.bin")
    summary = ascjax.run_bin("ReduceSum", src=paths["src"], dtype="half", tensors=6, count=128,
                             dst_len=16, out=out)
    assert summary.row_elements == (16,)
    assert str(summary).splitlines()[1] == (f"  (compare {out} with --dtype half --shape 6,16: "
                                            f"mismatches by (tensor, element))")
    golden = ascjax.read_bin(out, "half")
    assert golden.size == 6 * 16
    npu = golden.copy()
    npu[4 * 16 + 3] = 1.5 if golden[4 * 16 + 3] != 1.5 else 2.5
    report = ascjax.compare(npu, out, dtype="half", shape=(6, 16))
    assert report.first_mismatches[0].position == (4, 3)
    registers = ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype="half",
                               out=str(tmp_path / "r.bin"))
    # files of registers: compare's default layout, in the output's type
    assert str(registers).splitlines()[1] == f"  (compare {tmp_path / 'r.bin'} with --dtype half)"


def test_the_summary_names_each_outputs_type_for_compare(tmp_path):
    """A review: int16 sums are int32 (the page's widening row), but the summary named no type,
    so `compare --dtype int16_t` (the run's --dtype) misplaced a mismatch (lane 11 for 5) and
    sized it 1 for 65536. Each output's compare hint now says its --dtype."""
    src = np.arange(-512, 512, dtype=np.int16).reshape(8, 128)
    paths = _files(tmp_path, src=src)
    out = str(tmp_path / "sums.bin")
    summary = ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype="int16_t", out=out)
    assert summary.output_types == ("int32_t",)
    assert f"(compare {out} with --dtype int32_t)" in str(summary)
    golden = ascjax.read_bin(out, "int32_t").reshape(8, -1)
    npu = golden.copy()
    npu[6, 5] += 65536
    report = ascjax.compare(npu.reshape(-1), out, dtype="int32_t")  # a file of registers
    assert (report.first_mismatches[0].register, report.first_mismatches[0].lane) == (6, 5)
    assert report.first_mismatches[0].abs_diff == 65536


# --- what the summary says of data movement, a forgotten --tensors; Counter mode; help -------

def test_a_data_movement_run_says_compare_bit_exact_and_a_reduction_does_not(tmp_path):
    """A new user's corrupted 4096x256 gather golden (a NaN, a sign flip, +0.5, one ulp)
    passed compare's default isclose verdict: for instructions that only move bits the
    summary's compare hint now says --bit-exact, and why."""
    moving = {"asc_gather", "reg_gather", "gather", "reg_gather_b", "gather_datablock",
              "gatherb", "scatter", "gather_mask", "asc_reduce", "squeeze",
              "squeeze_with_status", "unsqueeze", "squeeze_and_storeunalign"}
    assert {name for name in runners.RUNNERS if runners.moves_bits(name)} == moving
    paths = _files(tmp_path, src=_random("half", (4, 256)), u=np.zeros((2, 64), np.uint32))
    out, cnt = str(tmp_path / "dst.bin"), str(tmp_path / "cnt.bin")
    summary = ascjax.run_bin("gather_mask", src=paths["src"], dtype="half", tensors=4,
                             src1_pattern=2, repeat_times=2, out=out, cnt_out=cnt)
    assert str(summary).splitlines()[1:] == [
        (f"  (compare {out} with --dtype half --shape 4,256 --bit-exact, {cnt} with --dtype "
         f"uint32_t --bit-exact: mismatches by (tensor, element); data movement, any "
         f"difference is a bug)"),
        # the page shows dst past rsvdCnt as undefined: a dump holds stale data there
        (f"  note: dst past each tensor's count is undefined on the NPU: compare a dump with "
         f"--valid-counts {cnt}")]
    # files of registers had no hint; data movement's says --bit-exact
    summary = ascjax.run_bin("unsqueeze", src=paths["u"], dtype="uint32_t", pattern="PAT_M4",
                             out=out)
    assert str(summary).splitlines()[1:] == [
        (f"  (compare {out} with --dtype uint32_t --bit-exact: data movement, any difference "
         f"is a bug)")]
    # a sum keeps its hint (test_a_tensor_run_says_the_shape_compare_locates_its_rows_by)
    summary = ascjax.run_bin("ReduceSum", src=paths["src"], dtype="half", tensors=4,
                             count=256, dst_len=16, out=out)
    assert "--bit-exact" not in str(summary) and "(tensor, element))" in str(summary)
    summary = ascjax.run_bin("WholeReduceSum", src=paths["src"], dtype="half", tensors=4,
                             mask=128, repeat_time=2, dst_rep_stride=1, src_blk_stride=1,
                             src_rep_stride=8, out=out)
    assert "--bit-exact" not in str(summary)
    # a max / min selects: a new user's wrong argmax (a few ulp of a subnormal index) passed
    # isclose, so its hint says --bit-exact too, by name or by reduce_type
    for name, options in (("ReduceMax", {"count": 256, "dst_len": 16, "cal_index": True}),
                          ("WholeReduceMax", {"mask": 128, "repeat_time": 2, "dst_rep_stride": 1,
                                              "src_blk_stride": 1, "src_rep_stride": 8}),
                          ("reduce_repeat", {"reduce_type": "min", "mask": 128, "repeat_time": 2,
                                             "dst_rep_stride": 1, "src_blk_stride": 1,
                                             "src_rep_stride": 8})):
        summary = ascjax.run_bin(name, src=paths["src"], dtype="half", tensors=4, out=out,
                                 **options)
        assert str(summary).splitlines()[1].endswith(
            "a max / min selects an input and its index, any difference is a bug)"), name


def test_a_one_tensor_run_that_reads_under_a_percent_of_src_notes_tensors(tmp_path, capsys):
    """A new user forgot --tensors: a file of 128 tensors ran as one tensor, of which
    GatherMask read 2 repeats x 128 half elements (256 bytes a repeat) = 256. Not an error (a
    LocalTensor may be longer than a call reads), but the summary says so, in one line."""
    src = _files(tmp_path, src=_random("half", (128, 256)))["src"]
    out = str(tmp_path / "dst.bin")
    base = ["run", "gather_mask", "--src", src, "--dtype", "half", "--src1-pattern", "2",
            "--repeat-times", "2", "--out", out]
    assert main(base) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert notes == [(f"  note: --src {src} holds 32768 half elements, run as 1 tensor, but "
                      f"one call reads at most 256 of them; if the file holds N tensors, give "
                      f"--tensors N (e.g. --tensors 128 for tensors of 256 elements)")]
    # Counter mode: 100 elements in each of 2 repeats; 32768 is no multiple of 200
    assert main(base + ["--reduce-mode", "--mask", "100"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert len(notes) == 1 and notes[0].endswith(
        "one call reads at most 200 of them; if the file holds N tensors, give --tensors N")
    assert main(base + ["--tensors", "128"]) == 0  # the tensors given: nothing to say
    assert "note:" not in capsys.readouterr().err
    # one tensor on purpose: --tensors 1 said explicitly is not forgotten (it was noted: the
    # option's default and the value given could not be told apart)
    assert main(base + ["--tensors", "1"]) == 0
    assert "note:" not in capsys.readouterr().err
    assert ascjax.run_bin("gather_mask", src=src, dtype="half", src1_pattern=2, repeat_times=2,
                          tensors=1, out=out).notes == ()
    small = _files(tmp_path, small=_random("half", (1, 2560)))["small"]  # the call reads 10%
    summary = ascjax.run_bin("gather_mask", src=small, dtype="half", src1_pattern=2,
                             repeat_times=2, out=out)
    assert summary.notes == () and "note:" not in str(summary)


def test_counter_mode_without_a_mask_says_counter_mode_needs_mask(tmp_path, capsys):
    """``--reduce-mode`` without ``--mask`` said "mask (Counter mode)=0 is outside the valid
    range [1, 4294967295]": the 0 was the option's default, not the user's."""
    paths = _files(tmp_path, src=_random("half", (2, 256)))
    out = str(tmp_path / "dst.bin")
    base = ["run", "gather_mask", "--src", paths["src"], "--dtype", "half", "--tensors", "2",
            "--src1-pattern", "2", "--repeat-times", "2", "--out", out]
    message = ("gather_mask: Counter mode (--reduce-mode, reduceMode true) needs --mask: the "
               "elements each repeat processes (on inference AI Core: the elements of the "
               "whole call), an integer in [1, 4294967295]")
    assert main(base + ["--reduce-mode"]) == 2
    assert capsys.readouterr().err == f"ascjax run: {message}\n"
    assert not (tmp_path / "dst.bin").exists()
    with pytest.raises(TypeError, match=re.escape(message)):
        ascjax.run_bin("gather_mask", src=paths["src"], dtype="half", tensors=2,
                       src1_pattern=2, repeat_times=2, reduce_mode=True, out=out)
    assert main(base + ["--reduce-mode", "--mask", "0"]) == 2  # a 0 given: the range
    assert "mask (Counter mode)=0 is outside the valid range [1, 4294967295]" in \
        capsys.readouterr().err
    assert main(base) == 0  # Normal mode: no mask needed (the page's 0)


def _description(capsys, monkeypatch, name):
    """The lines of ``ascjax run NAME --help`` between the usage and the options."""
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(["run", name, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    return text.split("\n\n")[1].splitlines()


def test_run_help_keeps_each_bullet_item_on_a_line_of_its_own(capsys, monkeypatch):
    """``ascjax run squeeze --help`` ran the docstring's two call forms ("* Registers ...",
    "* UB ...") into one paragraph."""
    lines = _description(capsys, monkeypatch, "squeeze")
    assert lines[0].startswith("``asc_squeeze``: the C name's two overloads")
    items = [i for i, line in enumerate(lines) if line.startswith("* ")]
    assert [lines[i][:26] for i in items] == ["* Registers (Ascend 950), ",
                                              "* UB (Atlas A2/A3), ``sque"]
    assert all(line.startswith("  ") for i, line in enumerate(lines) if i > 0 and i not in items)
    assert all(len(line) <= 98 for line in lines)
    # ReduceSum: its list's head ("Two call forms:") stays now that the list follows it
    lines = _description(capsys, monkeypatch, "reduce_sum")
    assert lines[0] == ("``ReduceSum<T>``: the sum of a tensor, written to ``dst[..., 0]``. Two "
                        "call forms:")
    assert [line[:20] for line in lines if line.startswith("* ")] == [
        "* first n elements: ", "* level 0: ``reduce_"]
    # a docstring without a list is one paragraph, as before
    lines = _description(capsys, monkeypatch, "block_reduce_sum")
    assert lines[0].startswith("``BlockReduceSum<T>(dst, src, repeatTime, mask")
    assert not any(line.startswith(("*", " ")) for line in lines)


def test_product_option_takes_the_pages_chip_tags(tmp_path, capsys):
    """--product 910B runs as Atlas A2 (the pages tag A2's notes npu="910b"): the ReduceSum
    docstring's data sums to 2688 on A2 (method 1) and 2692 on the 950."""
    x = np.ones(640, np.float16)
    x[0], x[128::128] = 2047, 2
    src = _files(tmp_path, src=x)["src"]
    sums = {}
    for product in ("910B", "A2", "950"):
        out = str(tmp_path / f"{product}.bin")
        assert main(["run", "ReduceSum", "--src", src, "--dtype", "half", "--count", "640",
                     "--dst-len", "16", "--product", product, "--out", out]) == 0
        sums[product] = float(np.fromfile(out, np.float16)[0])
    assert sums == {"910B": 2688.0, "A2": 2688.0, "950": 2692.0}
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "ReduceSum", "--src", src, "--dtype", "half", "--count", "640",
              "--product", "310", "--out", str(tmp_path / "x.bin")])
    assert "invalid choice: '310'" in capsys.readouterr().err


def test_product_choices_are_the_products_the_runners_rows_run_on(tmp_path, capsys):
    """``--product`` offered every product, so a register runner listed six it refuses; now it
    offers those of the runner's type rows (registry ``products``), by default the 950 where it
    is one, and a runner of two call forms takes its form's default and checks its own."""
    for name, runner in runners.RUNNERS.items():
        option = next((o for o in runner.config_options if o.name == "product"), None)
        rows = INSTRUCTIONS[runner.name].types
        listed = {p for row in rows for p in INSTRUCTIONS[runner.name].products(row)}
        # asc_gather's runner runs the seed's UB -> register form alone
        listed = {"950"} if runner.name == "asc_gather" else listed
        assert option is not None and set(option.choices) == listed, (name, option, listed)
        if option.default is not None:
            assert option.default == ("950" if "950" in listed else option.choices[0]), name
    assert next(o for o in runners.RUNNERS["reduce_sum_datablock"].config_options
                if o.name == "product").choices == ("950",)
    _random("half", (2, 128)).tofile(tmp_path / "src.bin")
    with pytest.raises(SystemExit):
        main(["run", "reduce_sum_datablock", "--src", str(tmp_path / "src.bin"), "--dtype",
              "half", "--product", "A2", "--out", str(tmp_path / "out.bin")])
    assert "invalid choice: 'A2' (choose from '950')" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"repeat_reduce_sum: product='A3' is not one of "
                                         r"\['950', 'A2', 'inference AI Core', 'training'\]"):
        ascjax.run_bin("repeat_reduce_sum", src=str(tmp_path / "src.bin"), dtype="half",
                       repeat_time=1, mask=8, product="A3", out=str(tmp_path / "out.bin"))
    # gather_datablock's UB form without --product: its form's default (A3), as the function
    src, dst = _random("uint16_t", (2, 256)), _random("uint16_t", (2, 300))
    offset = (RNG.integers(0, 16, (2, 16)) * 32).astype(np.uint32)
    paths = _files(tmp_path, src=src, dst=dst, offset=offset)
    out = str(tmp_path / "out.bin")
    options = {"src_offset": paths["offset"], "dst_repeat_stride": 9, "dst_block_stride": 1,
               "repeat": 2}
    ascjax.run_bin("gather_datablock", src=paths["src"], dst=paths["dst"], dtype="uint16_t",
                   tensors=2, out=out, **options)
    a3 = ascjax.Config(product="A3")
    want = _loop(lambda d, s, o: ascjax.gather_datablock(d, s, o, 9, 1, 2, config=a3),
                 dst, src, offset)
    assert np.array_equal(_bits(np.fromfile(out, np.uint16).reshape(2, -1)), _bits(want))
    with pytest.raises(ValueError, match=r"product='950' is not one of \['A3', 'A2'\] "
                                         r"\(the UB \(A2, A3\) form\)"):
        ascjax.run_bin("gather_datablock", src=paths["src"], dst=paths["dst"],
                       dtype="uint16_t", tensors=2, product="950", out=out, **options)


def test_options_another_given_option_would_leave_unread_are_refused(tmp_path, capsys):
    """A review: --mask with --pattern ran with the mask file (the pattern ignored),
    --pattern with --mask-bits ran, and --dst with --dst-len wrote dst's length: nothing given
    may be ignored silently."""
    paths = _files(tmp_path, src=_random("half", (2, 128)), mask=np.ones(128, np.uint8),
                   dst=_random("half", (2, 64)))
    out = str(tmp_path / "o.bin")
    cases = [
        ("reduce_sum_datablock", {"mask": paths["mask"], "pattern": "PAT_VL4"},
         "give --mask or --pattern, not both (--pattern builds the mask when no --mask"),
        ("reduce_sum_datablock", {"pattern": "PAT_VL4", "mask_bits": True},
         "--mask-bits without --mask (--mask-bits says how the --mask file is laid out)"),
        ("PairReduceSum", {"tensors": 2, "repeat_time": 1, "mask": 128, "dst": paths["dst"],
                           "dst_len": 16},
         "give --dst or --dst-len, not both (--dst-len sizes the zero dst"),
    ]
    for name, options, message in cases:
        with pytest.raises(TypeError, match=re.escape(message)):
            ascjax.run_bin(name, src=paths["src"], dtype="half", out=out, **options)
    assert main(["run", "reduce_sum_datablock", "--src", paths["src"], "--dtype", "half",
                 "--mask", paths["mask"], "--pattern", "PAT_VL4", "--out", out]) == 2
    assert "give --mask or --pattern, not both" in capsys.readouterr().err
    assert not Path(out).exists()
    # each alone still runs; no --pattern is PAT_ALL
    ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype="half", out=out)
    everything = ascjax.read_bin(out, "half").copy()
    ascjax.run_bin("reduce_sum_datablock", src=paths["src"], dtype="half", pattern="PAT_ALL",
                   out=out)
    assert np.array_equal(_bits(ascjax.read_bin(out, "half")), _bits(everything))


def test_help_states_every_default_and_the_mask_bit_mapping(capsys):
    """A review: the stride defaults (1, 1, 8) and --tensors' 1 were not in --help, nor how
    --mask-bits maps a 2- or 4-byte element to its bit."""
    text = " ".join(_help(capsys, "whole_reduce_sum").split())
    for said in ("dstRepStride (elements) (default 1)", ("srcRepStride (32-byte blocks) "
                 "(default 8)"), "LocalTensors (default 1)"):
        assert said in text, said
    text = " ".join(_help(capsys, "reduce_sum_datablock").split())
    assert "element i of a 2-byte type is bit 2i, of a 4-byte type bit 4i" in text


def test_a_sync_name_runs_its_pages_ub_form_alone(tmp_path, capsys):
    """`ascjax run asc_gather_sync` ran the 950 register gather and asc_gather_datablock_sync
    its register form: a _sync name's page gives one prototype, on UB. A runner of register
    forms alone refuses it, naming the runner of UB gathers; one of both kinds needs the UB
    form's --dst (the UB form through the _sync name runs, as checked above)."""
    index = np.zeros((3, 64), np.uint32)
    index[:, :8] = np.arange(8) * 32
    paths = _files(tmp_path, index=index, data=np.arange(256, dtype=np.uint16))
    out = str(tmp_path / "out.bin")
    for name, extra, says in (
            ("asc_gather_datablock_sync", ["--pattern", "PAT_H"],
             ("give the UB form's options (--dst or --dst-len), not the register form's "
              "(--index, --pattern)")),
            ("asc_gather_sync", [], "`ascjax run gather` runs UB gathers")):
        with pytest.raises(SystemExit) as done:
            main(["run", name, "--src", paths["data"], "--dtype", "uint16_t", "--index",
                  paths["index"], "--out", out, *extra])
        assert done.value.code == 2
        err = capsys.readouterr().err
        assert f"{name}: its page gives one prototype, {name}(dst, src, src_offset" in err
        assert says in err
        with pytest.raises(TypeError, match=re.escape(says)):
            ascjax.run_bin(name, src=paths["data"], dtype="uint16_t", index=paths["index"],
                           out=out, **({"pattern": "PAT_H"} if extra else {}))
    assert not Path(out).exists()
    # a first-n prototype refuses the repeat form's options; its own form runs (--dst-len: the
    # UB form of asc_pair_reduce_sum, which also has a register form)
    half = _files(tmp_path, src=np.ones(512, np.float16))["src"]
    with pytest.raises(TypeError, match=r"asc_repeat_reduce_sum_sync\(dst, src, count\) on UB, "
                                        r"the first-n form: --repeat belong"):
        ascjax.run_bin("asc_repeat_reduce_sum_sync", src=half, dtype="half", repeat=2,
                       dst_len=2, out=out, product="A2")
    for name, length in (("asc_repeat_reduce_sum_sync", 4), ("asc_pair_reduce_sum_sync", 256)):
        assert main(["run", name, "--src", half, "--dtype", "half", "--count", "512",
                     "--dst-len", str(length), "--product", "A2", "--out", out]) == 0
        want = ascjax.instruction(name)(np.zeros(length, np.float16), np.ones(512, np.float16),
                                        512, config=ascjax.Config(product="A2"))
        assert np.array_equal(np.fromfile(out, np.float16), np.asarray(want)), name
