"""Bulk goldens from .bin files: streamed in chunks, sharded over devices, atomic outputs.

Expected bits come from the public single-register API looped in Python (and the scalar
reference model for a few registers), never from the bulk path itself.
"""

import os
import pathlib
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import ascjax
import ascjax.reference as ref
from ascjax._src.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(11)


def _bits(x):
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _random(fmt_name, shape):
    """Every bit pattern is fair game: NaNs, infs, -0 and subnormals included."""
    fmt = ascjax.FORMATS[fmt_name]
    return RNG.integers(0, 1 << 16, shape, dtype=np.uint64).astype(fmt.bits_dtype).view(
        fmt.storage_dtype)


def _loop(fn, *per_register):
    return np.stack([np.asarray(fn(*args)) for args in zip(*per_register, strict=True)])


@pytest.mark.parametrize("dtype", ["half", "float", "int16_t"])
def test_reduce_sum_datablock_file_equals_register_loop(tmp_path, dtype):
    fmt = ascjax.FORMATS[dtype]
    x = _random(dtype, (37, fmt.lanes))
    mask = (RNG.random((37, fmt.lanes)) < 0.8).astype(np.uint8)
    x.tofile(tmp_path / "src.bin")
    mask.tofile(tmp_path / "mask.bin")
    summary = ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype=dtype,
                             mask=str(tmp_path / "mask.bin"), out=str(tmp_path / "dst.bin"),
                             chunk=8)  # 5 chunks, the last one padded
    assert (summary.rows, summary.outputs) == (37, (str(tmp_path / "dst.bin"),))
    dst_name = {"int16_t": "int32_t"}.get(dtype, dtype)
    got = ascjax.read_bin(tmp_path / "dst.bin", dst_name, registers=True)
    want = _loop(lambda s, m: ascjax.reduce_sum_datablock(s, m.astype(bool)), x, mask)
    assert np.array_equal(_bits(got), _bits(want))
    for i in range(3):  # the plain scalar model agrees too
        assert np.array_equal(_bits(got[i]), _bits(ref.reduce_sum_datablock(x[i],
                                                                             mask[i] == 1)))


@pytest.mark.parametrize("reading", ["clamp", "empty"])
def test_pattern_mask_follows_the_config_options(tmp_path, reading):
    """--pattern builds its mask under the run's Config (it once ignored --vl-overflow)."""
    x = _random("float", (3, 64))
    x.tofile(tmp_path / "src.bin")
    ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="float",
                   pattern="PAT_VL128", vl_overflow=reading, out=str(tmp_path / "dst.bin"))
    got = ascjax.read_bin(tmp_path / "dst.bin", "float", registers=True)
    config = ascjax.Config(vl_overflow=reading)
    mask = ascjax.create_mask("PAT_VL128", "float", config=config)
    want = _loop(lambda s: ascjax.reduce_sum_datablock(s, mask, config=config), x)
    assert np.array_equal(_bits(got), _bits(want))
    assert np.array_equal(_bits(got[0]), _bits(ref.reduce_sum_datablock(x[0], mask)))


def test_mask_file_forms_and_patterns_agree(tmp_path):
    x = _random("half", (20, 128))
    x.tofile(tmp_path / "src.bin")
    hw = np.asarray(ascjax.create_mask("PAT_M3", "half"))  # hardware form, 256 bools
    np.packbits(np.tile(hw, (20, 1)), axis=1, bitorder="little").tofile(tmp_path / "bits.bin")
    np.packbits(hw, bitorder="little").tofile(tmp_path / "bits1.bin")
    np.tile(hw[::2], (20, 1)).astype(np.uint8).tofile(tmp_path / "elems.bin")
    hw[::2].astype(np.uint8).tofile(tmp_path / "elems1.bin")
    want = np.asarray(ascjax.reduce_sum_datablock(x, hw))
    runs = [{"mask": "bits.bin", "mask_bits": True}, {"mask": "bits1.bin", "mask_bits": True},
            {"mask": "elems.bin"}, {"mask": "elems1.bin"}, {"pattern": "PAT_M3"}]
    for i, opts in enumerate(runs):
        if "mask" in opts:
            opts["mask"] = str(tmp_path / opts["mask"])
        out = tmp_path / f"dst{i}.bin"
        ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="half",
                       out=str(out), **opts)
        assert np.array_equal(_bits(ascjax.read_bin(out, "half", registers=True)), _bits(want))


def test_pair_reduce_sum_tensors_with_initial_dst(tmp_path):
    src = _random("half", (3, 512))
    dst = _random("half", (3, 320))
    src.tofile(tmp_path / "src.bin")
    dst.tofile(tmp_path / "dst.bin")
    ascjax.run_bin("pair_reduce_sum", src=str(tmp_path / "src.bin"), dtype="half", tensors=3,
                   dst=str(tmp_path / "dst.bin"), repeat_time=3, mask="0xFFFF0000FFFF,0x1",
                   dst_rep_stride=2, src_blk_stride=1, src_rep_stride=10,
                   out=str(tmp_path / "out.bin"))
    got = ascjax.read_bin(tmp_path / "out.bin", "half").reshape(3, -1)
    mask = [0xFFFF0000FFFF, 0x1]
    want = _loop(lambda d, s: ascjax.pair_reduce_sum(d, s, 3, mask, 2, 1, 10), dst, src)
    assert np.array_equal(_bits(got), _bits(want))
    assert np.array_equal(_bits(got[0]), _bits(ref.pair_reduce_sum(dst[0], src[0], 3, mask,
                                                                   2, 1, 10)))


def test_gather_widening_and_index_type_from_the_registry(tmp_path):
    data = RNG.integers(-128, 128, 1000, dtype=np.int16).astype(np.int8)
    index = RNG.integers(0, 1000, (9, 128)).astype(np.uint16)
    mask = (RNG.random((9, 128)) < 0.5).astype(np.uint8)
    for name, arr in (("src", data), ("index", index), ("mask", mask)):
        arr.tofile(tmp_path / f"{name}.bin")
    ascjax.run_bin("asc_gather", src=str(tmp_path / "src.bin"), dtype="int8_t",
                   dst_dtype="int16_t", index=str(tmp_path / "index.bin"),
                   mask=str(tmp_path / "mask.bin"), out=str(tmp_path / "out.bin"))
    got = ascjax.read_bin(tmp_path / "out.bin", "int16_t", registers=True)
    want = _loop(lambda i, m: ascjax.asc_gather(data, i, m.astype(bool), dst_dtype="int16_t"),
                 index, mask)
    assert np.array_equal(got, want)
    with pytest.raises(TypeError, match=r"give --index-dtype, one of "
                                        r"\['uint16_t', 'uint32_t'\]"):
        ascjax.run_bin("asc_gather", src=str(tmp_path / "src.bin"), dtype="half",
                       index=str(tmp_path / "index.bin"), out=str(tmp_path / "x.bin"))


def test_a_fault_in_a_later_chunk_says_which_row_of_the_file(tmp_path):
    """A kernel developer's file of registers: the fault names the lane and the file's row of the
    register (21 here; it named the row within its chunk, 5, and the chunk's first row, 16)."""
    data = np.arange(100, dtype=np.float32)
    index = np.zeros((24, 64), np.uint32)
    index[21, 6] = 150
    for name, arr in (("src", data), ("index", index), ("mask", np.ones((24, 64), np.uint8))):
        arr.tofile(tmp_path / f"{name}.bin")
    with pytest.raises(IndexError, match=re.escape(
            "active index lane 6 of register 21 reads element 150 but src has 100 elements "
            "(the hardware raises an address exception)")):
        ascjax.run_bin("asc_gather", src=str(tmp_path / "src.bin"), dtype="float",
                       index=str(tmp_path / "index.bin"), mask=str(tmp_path / "mask.bin"),
                       out=str(tmp_path / "out.bin"), chunk=8)
    assert not (tmp_path / "out.bin").exists()
    # A LocalTensor runner's rows are tensors: the message says so.
    src = np.arange(64, dtype=np.float32)
    offsets = np.zeros((20, 16), np.uint32)
    offsets[13, 4] = 3
    np.tile(src, 20).tofile(tmp_path / "t_src.bin")
    offsets.tofile(tmp_path / "t_off.bin")
    with pytest.raises(IndexError, match=re.escape(
            "active lane 4 of tensor 13 has srcOffset 3 bytes, which is not a multiple of "
            "sizeof(float) = 4 (A33)")):
        ascjax.run_bin("gather", src=str(tmp_path / "t_src.bin"), dtype="float",
                       src_offset=str(tmp_path / "t_off.bin"), tensors=20, count=16,
                       out=str(tmp_path / "t_out.bin"), chunk=4)


def _squeeze_loop(x, mask, addr, finalize=True):
    ub, state = ascjax.make_ub(), ascjax.squeeze_and_storeunalign_init()
    dsts = []
    for reg, m in zip(x, mask, strict=True):
        ub, dst, state = ascjax.squeeze_and_storeunalign(ub, addr, state, reg, m.astype(bool))
        dsts.append(np.asarray(dst))
    if finalize:
        ub, state = ascjax.squeeze_and_storeunalign_finalize(ub, addr, state)
    ar = int(ascjax.get_squeeze_status(state))
    return np.stack(dsts), np.asarray(ub)[addr:addr + ar], ar


@pytest.mark.parametrize("finalize", [True, False])
def test_squeeze_groups_ub_region_and_ar(tmp_path, finalize):
    x = _random("half", (8, 128))
    mask = (RNG.random((8, 128)) < 0.3).astype(np.uint8)
    x.tofile(tmp_path / "src.bin")
    mask.tofile(tmp_path / "mask.bin")
    paths = {k: str(tmp_path / f"{k}.bin") for k in ("out", "ub", "ar")}
    ascjax.run_bin("squeeze_and_storeunalign", src=str(tmp_path / "src.bin"), dtype="half",
                   mask=str(tmp_path / "mask.bin"), group=4, dst_addr=70,
                   no_finalize=not finalize, out=paths["out"], ub_out=paths["ub"],
                   ar_out=paths["ar"], chunk=4)
    dst = ascjax.read_bin(paths["out"], "half", registers=True)
    ub = ascjax.read_bin(paths["ub"], "uint8_t")
    ars = ascjax.read_bin(paths["ar"], "uint32_t")
    want_ub = []
    for g in range(2):
        d, region, ar = _squeeze_loop(x[4 * g:4 * g + 4], mask[4 * g:4 * g + 4], 70, finalize)
        assert np.array_equal(_bits(dst[4 * g:4 * g + 4]), _bits(d))
        assert ars[g] == ar
        want_ub.append(region)
    assert np.array_equal(ub, np.concatenate(want_ub))
    if finalize:  # the regions hold exactly the selected elements, in order
        assert np.array_equal(ub.view(np.uint16), _bits(x)[mask == 1])


def test_squeeze_past_the_ub_end_fails_and_writes_nothing(tmp_path):
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    with pytest.raises(IndexError, match="reaches UB byte 1056, past the end of the 1024-byte"):
        ascjax.run_bin("squeeze_and_storeunalign", src=str(tmp_path / "src.bin"),
                       dtype="float", dst_addr=32, ub_bytes=1024, group=4,
                       out=str(tmp_path / "o.bin"),
                       ub_out=str(tmp_path / "u.bin"))
    assert sorted(os.listdir(tmp_path)) == ["src.bin"]


def test_map_registers_and_progress(capsys):
    x = _random("float", (300, 64))
    mask = ascjax.create_mask("PAT_H", "float")
    got = ascjax.map_registers(lambda s, m: ascjax.reduce_sum_datablock(s, m), x,
                               shared=[mask], chunk=64, progress=True)
    assert np.array_equal(_bits(got), _bits(ascjax.reduce_sum_datablock(x, mask)))
    assert "100.0% 300/300 registers" in capsys.readouterr().err


def test_map_registers_holds_one_copy_of_its_output():
    """It kept every chunk's result and then joined them: two copies of the output at the peak
    (2.4 GB for a 1 GiB output, a review). The peak resident memory of a fresh process, past
    its input and a first call, grows by one 64 MiB output, not two."""
    script = """
import resource, numpy as np, jax, ascjax
x = np.ones((1 << 18, 64), np.float32)
mask = ascjax.create_mask("PAT_ALL", "float")
fn = jax.jit(lambda s, m: ascjax.reduce_sum_datablock(s, m))
ascjax.map_registers(fn, x[:8192], shared=[mask], chunk=8192)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
got = ascjax.map_registers(fn, x, shared=[mask], chunk=8192)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grew * 1024 / got.nbytes, bool(np.all(got[:, :8] == 8)))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"}).stdout.split()
    assert out[1] == "True" and float(out[0]) < 1.5, out


def test_cli_run_and_bad_files(tmp_path, capsys):
    x = _random("half", (4, 128))
    x.tofile(tmp_path / "src.bin")
    out = str(tmp_path / "dst.bin")
    assert main(["run", "reduce_sum_datablock", "--src", str(tmp_path / "src.bin"),
                 "--dtype", "half", "--pattern", "PAT_VL8", "--out", out]) == 0
    want = ascjax.reduce_sum_datablock(x, ascjax.create_mask("PAT_VL8", "half"))
    assert np.array_equal(_bits(ascjax.read_bin(out, "half", registers=True)), _bits(want))
    os.unlink(out)
    (tmp_path / "odd.bin").write_bytes(b"\0" * 300)  # 150 halfs: not whole registers
    (tmp_path / "mask.bin").write_bytes(b"\1" * 129)  # neither 1 nor 4 masks
    (tmp_path / "two.bin").write_bytes(b"\2" * 128)  # not 0/1
    src = ["--src", str(tmp_path / "src.bin")]
    cases = [
        (["--src", str(tmp_path / "odd.bin")], "not a whole number of vector_half registers"),
        (["--src", str(tmp_path / "missing.bin")],
         f"--src {tmp_path / 'missing.bin'}: no such file"),
        (src + ["--mask", str(tmp_path / "nope.bin")], f"--mask {tmp_path / 'nope.bin'}: no such"),
        (src + ["--mask", str(tmp_path / "mask.bin")], "129 bytes is neither one mask"),
        (src + ["--mask", str(tmp_path / "two.bin")], "values must be 0 or 1"),
        (src + ["--pattern", "PAT_XX"], ("--pattern 'PAT_XX' is not a mask pattern; valid: "
                                         "PAT_ALL, PAT_VL1,")),
        (src + ["--pattern", ""], "--pattern '' is not a mask pattern"),  # not PAT_ALL
    ]
    for args, message in cases:
        code = main(["run", "reduce_sum_datablock", "--dtype", "half", "--out", out, *args])
        assert code == 2 and message in capsys.readouterr().err, message
    with pytest.raises(SystemExit) as exit_info:  # argparse: unknown dtype
        main(["run", "reduce_sum_datablock", "--dtype", "bfloat16_t", "--out", out, *src])
    assert exit_info.value.code == 2
    assert main(["run", "pair_reduce_sum", "--src", str(tmp_path / "src.bin"), "--dtype", "half",
                 "--repeat-time", "300", "--mask", "128", "--out", out]) == 2
    assert "repeat_time=300 is outside the valid range [0, 255]" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["mask.bin", "odd.bin", "src.bin", "two.bin"]


_FOUR_DEVICES = """
import sys, jax
from ascjax._src.cli import main
assert len(jax.devices()) == 4, jax.devices()
d = sys.argv[1]
codes = [
    main(["run", "asc_gather", "--src", d + "/g_src.bin", "--dtype", "float", "--index",
          d + "/g_idx.bin", "--mask", d + "/g_mask.bin", "--out", d + "/g4.bin", "--chunk", "8"]),
    main(["run", "squeeze_and_storeunalign", "--src", d + "/s_src.bin", "--dtype", "float",
          "--pattern", "PAT_M3", "--group", "2", "--out", d + "/s4.bin", "--ub-out",
          d + "/u4.bin"]),
]
sys.exit(max(codes))
"""


def test_bits_identical_on_one_and_four_devices(tmp_path):
    """1 device in this process; 4 host devices in subprocesses (XLA_FLAGS must precede jax)."""
    d = str(tmp_path)
    x = _random("half", (203, 128))
    x.tofile(tmp_path / "src.bin")
    data = _random("float", (500,))
    data.tofile(tmp_path / "g_src.bin")
    RNG.integers(0, 500, (61, 64)).astype(np.uint32).tofile(tmp_path / "g_idx.bin")
    (RNG.random((61, 64)) < 0.7).astype(np.uint8).tofile(tmp_path / "g_mask.bin")
    _random("float", (10, 64)).tofile(tmp_path / "s_src.bin")
    one = [main(["run", "reduce_sum_datablock", "--src", d + "/src.bin", "--dtype", "half",
                 "--out", d + "/r1.bin", "--chunk", "16"]),
           main(["run", "asc_gather", "--src", d + "/g_src.bin", "--dtype", "float", "--index",
                 d + "/g_idx.bin", "--mask", d + "/g_mask.bin", "--out", d + "/g1.bin"]),
           main(["run", "squeeze_and_storeunalign", "--src", d + "/s_src.bin", "--dtype",
                 "float", "--pattern", "PAT_M3", "--group", "2", "--out", d + "/s1.bin",
                 "--ub-out", d + "/u1.bin"])]
    assert one == [0, 0, 0]
    # Four host devices: the flag makes CPU devices, so the subprocesses run on the CPU backend
    # even where a GPU is visible (found on an H200, where they saw one GPU device).
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    console = subprocess.run(
        [sys.executable, "-m", "ascjax", "run", "reduce_sum_datablock", "--src", d + "/src.bin",
         "--dtype", "half", "--out", d + "/r4.bin", "--chunk", "16"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert console.returncode == 0, console.stderr
    assert "on 4 device(s)" in console.stderr
    script = subprocess.run([sys.executable, "-c", _FOUR_DEVICES, d], env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert script.returncode == 0, script.stderr
    for a, b in (("r1", "r4"), ("g1", "g4"), ("s1", "s4"), ("u1", "u4")):
        assert (tmp_path / f"{a}.bin").read_bytes() == (tmp_path / f"{b}.bin").read_bytes(), a


def test_distributed_example_runs_with_one_process():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "distributed_run.py"), "--coordinator",
         f"localhost:{port}", "--num-processes", "1", "--process-id", "0", "--registers", "300"],
        capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "bit-exact against one reduce_sum_datablock call: True" in run.stdout


@pytest.mark.parametrize("option, bad, message", [
    ("--devices", "0", "argument --devices: 0 is outside the valid range [1, inf)"),
    ("--devices", "-3", "argument --devices: -3 is outside the valid range [1, inf)"),
    ("--devices", "two", ("argument --devices: 'two' is not an integer; valid: an integer in "
                          "[1, inf)")),
    ("--chunk", "0", "argument --chunk: 0 is outside the valid range [1, 1073741824]"),
    ("--chunk", "1073741825",
     "argument --chunk: 1073741825 is outside the valid range [1, 1073741824]"),
    ("--chunk", "1.5", ("argument --chunk: '1.5' is not an integer; valid: an integer in "
                        "[1, 1073741824]")),
])
def test_cli_run_chunk_and_devices_name_the_value_and_range(tmp_path, capsys, option, bad,
                                                            message):
    """They said "0 is not a positive integer" and "invalid positive_int value: 'two'"; now
    as the study's options: the value and the range (chunk: run_bin's [1, 2^30])."""
    src = tmp_path / "src.bin"
    np.ones((8, 64), np.float32).tofile(src)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "squeeze_and_storeunalign", "--src", str(src), "--dtype", "float",
              "--out", str(tmp_path / "o.bin"), option, bad])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["src.bin"]


def test_cli_run_guards_against_user_mistakes(tmp_path, capsys):
    x = np.ones((8, 64), np.float32)
    src = tmp_path / "src.bin"
    x.tofile(src)
    before = src.read_bytes()
    out = str(tmp_path / "o.bin")
    squeeze = ["run", "squeeze_and_storeunalign", "--src", str(src), "--dtype", "float"]
    cases = [  # (arguments, exit code, message)
        # the UB end is checked whether or not the UB is written out
        (squeeze + ["--ub-bytes", "1024", "--dst-addr", "32", "--group", "8", "--out", out], 2,
         ("reaches UB byte 2080, past the end of the 1024-byte UB (dst_addr + AR); use a "
         "smaller --group")),
        # one register past the end: the address is the problem, not the group
        (squeeze + ["--ub-bytes", "1024", "--dst-addr", "992", "--group", "1", "--out", out], 2,
         ("reaches UB byte 1248, past the end of the 1024-byte UB (dst_addr + AR); use a lower "
         "--dst-addr: 32 bytes lie between it and the UB end, fewer than one register stores")),
        (squeeze + ["--dst-addr", "3", "--out", out], 2,
         "dst_addr=3 must be aligned to sizeof(float) = 4 (a UB byte address in [0, 262144))"),
        (squeeze + ["--out", str(src)], 2, "this output file is also an input"),
        (squeeze + ["--out", out, "--ub-out", out], 2, "named for two outputs of one run"),
        (squeeze + ["--out", out, "--devices", "99"], 2, "--devices 99: this process sees"),
        (["run", "asc_gather", "--src", str(src), "--dtype", "float", "--index", str(src),
          "--dst-dtype", "half", "--out", out], 2, "dst=half from src=float is not in its table"),
    ]
    for args, code, message in cases:
        assert main(args) == code and message in capsys.readouterr().err, message
    (tmp_path / "empty.bin").write_bytes(b"")
    assert main(["run", "asc_gather", "--src", str(tmp_path / "empty.bin"), "--dtype", "float",
                 "--index", str(src), "--index-dtype", "uint32_t", "--out", out]) == 2
    assert "the file is empty" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["empty.bin", "src.bin"]
    assert src.read_bytes() == before
    # 0x addresses as in kernels, dtype aliases as elsewhere, files as open() would make them
    assert main(squeeze + ["--dst-addr", "0x20", "--out", out]) == 0
    assert main(["run", "reduce_sum_datablock", "--src", str(src), "--dtype", "float32",
                 "--out", str(tmp_path / "r.bin")]) == 0
    mask = os.umask(0o022)
    os.umask(mask)
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~mask
    os.chmod(out, 0o640)  # a file written again keeps its mode, as with open()
    assert main(squeeze + ["--out", out]) == 0 and os.stat(out).st_mode & 0o777 == 0o640
    # the same guards in Python: paths as Path objects, a hard link, options as strings
    os.link(src, tmp_path / "link.bin")
    for target in (src, tmp_path / "link.bin"):
        with pytest.raises(ValueError, match="this output file is also an input"):
            ascjax.run_bin("reduce_sum_datablock", src=src, dtype="float", out=target)
    assert src.read_bytes() == before
    ascjax.run_bin("squeeze_and_storeunalign", src=str(src), dtype="float32", dst_addr="0x20",
                   out=str(tmp_path / "py.bin"))
    assert (tmp_path / "py.bin").read_bytes() == pathlib.Path(out).read_bytes()


# --- issue 14: no false PASS, outputs that are not files, options, squeeze's default group ---

def _bash(command, cwd):
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def test_process_substitution_inputs_are_read_not_taken_as_empty(tmp_path):
    np.arange(256, dtype=np.float32).tofile(tmp_path / "a.bin")
    np.arange(256, dtype=np.float32)[::-1].copy().tofile(tmp_path / "b.bin")
    py = f"{sys.executable} -m ascjax"
    done = _bash(f"{py} compare <(cat a.bin) <(cat b.bin) --dtype float --json", tmp_path)
    assert done.returncode == 1, done.stderr  # they differ: FAIL, not 0 elements and PASS
    assert '"elements": 256' in done.stdout
    done = _bash(f"{py} compare <(cat a.bin) <(head -c 1000 a.bin) --dtype float", tmp_path)
    assert done.returncode == 2 and "actual has 256 float elements but golden has 250" in \
        done.stderr
    done = _bash(f"{py} run reduce_sum_datablock --src <(cat a.bin) --dtype float --out o.bin",
                 tmp_path)
    assert done.returncode == 0, done.stderr
    want = ascjax.reduce_sum_datablock(np.arange(256, dtype=np.float32).reshape(4, 64),
                                       ascjax.create_mask("PAT_ALL", "float"))
    assert np.array_equal(_bits(ascjax.read_bin(tmp_path / "o.bin", "float", registers=True)),
                          _bits(want))


def test_devices_and_empty_inputs_are_errors_unless_asked_for(tmp_path, capsys):
    out = str(tmp_path / "o.bin")
    run = ["run", "reduce_sum_datablock", "--dtype", "float", "--out", out]
    assert main(run + ["--src", "/dev/zero"]) == 2
    assert "--src /dev/zero: a device, not a file or a pipe" in capsys.readouterr().err
    (tmp_path / "empty.bin").write_bytes(b"")
    empty = str(tmp_path / "empty.bin")
    assert main(run + ["--src", empty]) == 2
    assert "the input holds 0 registers" in capsys.readouterr().err
    assert not os.path.exists(out)
    assert main(run + ["--src", empty, "--allow-empty"]) == 0
    assert os.path.getsize(out) == 0
    assert main(["compare", empty, empty, "--dtype", "half"]) == 2
    assert "both inputs hold 0 elements; nothing was compared" in capsys.readouterr().err
    assert main(["compare", empty, empty, "--dtype", "half", "--allow-empty"]) == 0


def test_out_device_is_written_in_place_and_a_symlink_is_followed(tmp_path):
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    run = ["run", "reduce_sum_datablock", "--src", str(tmp_path / "src.bin"), "--dtype", "float"]
    assert main(run + ["--out", "/dev/null"]) == 0  # no temporary file in /dev, nothing renamed
    (tmp_path / "real.bin").write_bytes(b"")
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    assert main(run + ["--out", str(tmp_path / "link.bin")]) == 0
    assert (tmp_path / "link.bin").is_symlink()
    assert (tmp_path / "real.bin").stat().st_size == 4 * 256


def test_input_truncated_during_a_run_ends_it_with_exit_2(tmp_path, capsys, monkeypatch):
    from ascjax._src.io import runners

    src = tmp_path / "src.bin"
    np.ones((64, 64), np.float32).tofile(src)
    real = runners.execute

    def truncating(plan, **kwargs):  # the file shrinks after it was sized, as a rewrite does
        os.truncate(src, 10 * 256)
        return real(plan, **kwargs)

    monkeypatch.setattr(runners, "execute", truncating)
    out = tmp_path / "o.bin"
    assert main(["run", "reduce_sum_datablock", "--src", str(src), "--dtype", "float",
                 "--out", str(out), "--chunk", "16"]) == 2
    assert "src.bin: the file was truncated while it was being read" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["src.bin"]


def test_compare_into_head_ends_quietly(tmp_path):
    g = np.ones(1 << 14, np.float16)
    g.tofile(tmp_path / "g.bin")
    (g * np.float16(1.5)).tofile(tmp_path / "a.bin")
    done = _bash(f"{sys.executable} -m ascjax compare a.bin g.bin --dtype half --first 5000 "
                 f"| head -2; exit ${{PIPESTATUS[0]}}", tmp_path)
    assert done.stderr == "" and done.stdout.startswith("compare half: 16384 elements")
    assert done.returncode == 1  # the verdict, not a traceback


def test_numeric_options_are_checked_with_their_names(tmp_path, capsys):
    src = tmp_path / "src.bin"
    np.ones((8, 64), np.float32).tofile(src)
    out = str(tmp_path / "o.bin")
    squeeze = ["run", "squeeze_and_storeunalign", "--src", str(src), "--dtype", "float",
               "--out", out]
    pair = ["run", "pair_reduce_sum", "--src", str(src), "--dtype", "float", "--repeat-time",
            "1", "--mask", "64", "--out", out]
    for args, message in [(squeeze + ["--group", "0"], "--group 0 must be an integer >= 1"),
                          (squeeze + ["--group", "-1"], "--group -1 must be an integer >= 1"),
                          (pair + ["--dst-len", "-5"], "--dst-len -5 must be an integer >= 1"),
                          (pair + ["--tensors", "0"], "--tensors 0 must be an integer >= 1")]:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.splitlines()) == 1, err
    for args, message in [(squeeze + ["--chunk", "0"],
                           "argument --chunk: 0 is outside the valid range [1, 1073741824]"),
                          (squeeze + ["--group", "x"], "argument --group: invalid int value")]:
        with pytest.raises(SystemExit) as done:
            main(args)
        err = capsys.readouterr().err
        assert done.value.code == 2 and message in err and len(err.splitlines()) == 2, err
    with pytest.raises(ValueError, match="--group 0 must be an integer >= 1"):
        ascjax.run_bin("squeeze_and_storeunalign", src=src, dtype="float", group=0, out=out)


def test_squeeze_default_group_works_on_files_larger_than_the_ub(tmp_path):
    """40 registers of 256 bytes do not fit a 4 KiB UB in one sequence; the default group is
    the largest divisor of 40 whose store fits (16 registers of room: 10)."""
    x = _random("float", (40, 64))
    x.tofile(tmp_path / "src.bin")
    mask = (RNG.random((40, 64)) < 0.8).astype(np.uint8)
    mask.tofile(tmp_path / "mask.bin")
    common = {"src": str(tmp_path / "src.bin"), "dtype": "float",
              "mask": str(tmp_path / "mask.bin"), "ub_bytes": 4096}
    ascjax.run_bin("squeeze_and_storeunalign", out=str(tmp_path / "d.bin"),
                   ub_out=str(tmp_path / "u.bin"), ar_out=str(tmp_path / "ar.bin"), **common)
    assert len(np.fromfile(tmp_path / "ar.bin", np.uint32)) == 4  # 4 groups of 10
    ascjax.run_bin("squeeze_and_storeunalign", out=str(tmp_path / "d10.bin"), group=10,
                   ub_out=str(tmp_path / "u10.bin"), **common)
    assert (tmp_path / "u.bin").read_bytes() == (tmp_path / "u10.bin").read_bytes()
    assert (tmp_path / "d.bin").read_bytes() == (tmp_path / "d10.bin").read_bytes()
    assert np.array_equal(np.fromfile(tmp_path / "u.bin", np.uint32), _bits(x)[mask == 1])


def test_progress_rate_is_real_for_slow_and_fast_jobs():
    """Issue 15: the study's bar always said 0/s (cells take seconds each)."""
    import io

    from ascjax._src.io.progress import Progress, rate_text

    assert rate_text(0.25) == "4.0 s each" and rate_text(2.5) == "2.5/s"
    assert rate_text(123456.0) == "123,456/s" and rate_text(0.0) == "starting"
    stream = io.StringIO()
    bar = Progress(2, "study", enabled=True, unit="cells", stream=stream)
    bar.start -= 3.0                      # as if the first cell took 3 s
    bar.update(note="half n=16")
    assert "1/2 cells" in stream.getvalue() and " s each" in stream.getvalue()
    assert "0/s" not in stream.getvalue()


def test_output_errors_name_the_output_not_a_temporary_file(tmp_path, capsys):
    """Issue 15: an --out that is a directory said "[Errno 21] Is a directory:
    '.outdir._w0cdjxn.tmp' -> 'outdir'"."""
    np.ones(128 * 2, np.float16).tofile(tmp_path / "src.bin")
    (tmp_path / "outdir").mkdir()
    for out in (tmp_path / "outdir", tmp_path / "missing" / "x.bin"):
        assert main(["run", "reduce_sum_datablock", "--src", str(tmp_path / "src.bin"),
                     "--dtype", "half", "--pattern", "PAT_ALL", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert str(out) in err and ".tmp" not in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outdir", "src.bin"]


def test_a_second_run_reuses_the_executable_and_a_different_program_does_not(tmp_path,
                                                                            monkeypatch):
    """Each run builds its function afresh; the engine keys executables on the lowered program,
    so a repeat compiles nothing, and a run whose program differs (another Config reading,
    another mask) gets its own executable and its own bits."""
    from ascjax._src.io import engine

    # an empty cache: one filled to its bound by earlier tests evicts as it adds (its length
    # stays 64), and the count below would not see the new executable
    monkeypatch.setattr(engine, "_COMPILED", {})
    x = _random("int32_t", (300, 64))
    x.tofile(tmp_path / "src.bin")
    out = tmp_path / "out.bin"
    config = {"wrap": ascjax.Config(), "saturate": ascjax.Config(int_overflow="saturate")}
    mask = ascjax.create_mask("PAT_ALL", "int32_t")
    def run(reading):  # a second call site: source locations must not split the cache
        ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="int32_t",
                       pattern="PAT_ALL", int_overflow=reading, out=str(out))

    for reading, cfg in config.items():
        before = len(engine._COMPILED)
        for call in (0, 1):
            if call:
                run(reading)
            else:
                ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"),
                               dtype="int32_t", pattern="PAT_ALL", int_overflow=reading,
                               out=str(out))
            want = _loop(lambda s, c=cfg: ascjax.reduce_sum_datablock(s, mask, config=c), x)
            assert np.array_equal(_bits(np.fromfile(out, np.int32).reshape(300, 64)),
                                  _bits(want))
        assert len(engine._COMPILED) == before + 1


def test_rows_are_read_into_aligned_buffers(tmp_path):
    """64-byte aligned rows go to XLA's CPU client without a copy."""
    from ascjax._src.io import binio

    np.arange(1000, dtype=np.float32).tofile(tmp_path / "x.bin")
    rows = ascjax.read_bin(tmp_path / "x.bin", "float", mmap=True)
    for piece in (rows, rows[3:997], rows[1:2]):
        data = np.asarray(piece)
        assert data.ctypes.data % binio.ALIGN == 0
        assert np.array_equal(data, np.arange(1000, dtype=np.float32)[
            piece.offset // 4: piece.offset // 4 + len(piece)])


def test_a_write_error_from_the_writer_thread_is_reported(tmp_path, capsys):
    """Chunks are written by a thread while the next one computes: its errors still end the run
    (``/dev/full``: ENOSPC on every write)."""
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    with pytest.raises(OSError, match="No space left"):
        ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="float",
                       pattern="PAT_ALL", out="/dev/full")


def test_an_existing_output_is_replaced_whole(tmp_path):
    """The old file is removed just before the rename: the new bytes, no temporary left."""
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    out = tmp_path / "out.bin"
    out.write_bytes(b"x" * 10_000)
    ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="float",
                   pattern="PAT_ALL", out=str(out))
    got = np.fromfile(out, np.float32).reshape(4, 64)
    assert got[:, :8].tolist() == [[8.0] * 8] * 4 and not got[:, 8:].any()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "src.bin"]


def _no_work(*args, **kwargs):
    raise AssertionError("computed before the outputs were checked")


def test_outputs_that_cannot_name_a_file_are_refused_before_any_work(tmp_path, capsys,
                                                                     monkeypatch):
    """A review: ``--out ""`` exited 0 and wrote nothing (an empty optional ``--*-out`` was
    dropped the same way); hand-built runners failed after the whole run, naming a temporary
    file; ``--out x.bin/`` said "Not a directory"."""
    from ascjax._src.io import runners

    monkeypatch.setattr(runners, "execute", _no_work)
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    np.zeros((4, 64), np.uint32).tofile(tmp_path / "idx.bin")
    (tmp_path / "dir").mkdir()
    src = ["--src", str(tmp_path / "src.bin"), "--dtype", "float"]
    good = str(tmp_path / "o.bin")
    cases = [
        (["reduce_sum_datablock", *src, "--out", ""], "--out '' is empty"),
        (["asc_gather", *src, "--index", str(tmp_path / "idx.bin"), "--out", ""],
         "--out '' is empty"),
        (["squeeze_and_storeunalign", *src, "--out", good, "--ub-out", ""], "--ub-out '' is"),
        (["reduce_sum_datablock", *src, "--out", "x.bin/"],
         "--out 'x.bin/' ends in a path separator"),
        (["reduce_sum_datablock", *src, "--out", str(tmp_path / "dir")],
         f"--out '{tmp_path / 'dir'}' is a directory"),
        (["reduce_sum_datablock", *src, "--out", str(tmp_path / "no" / "o.bin")],
         f"is in {tmp_path / 'no'}, which does not exist"),
    ]
    for args, said in cases:
        assert main(["run", *args]) == 2, args
        err = capsys.readouterr().err
        assert said in err and err.endswith("; give the path of the file to write\n"), err
    with pytest.raises(ValueError, match="--out '' is empty"):
        ascjax.run_bin("reduce_sum_datablock", src=str(tmp_path / "src.bin"), dtype="float",
                       out="")
    assert sorted(os.listdir(tmp_path)) == ["dir", "idx.bin", "src.bin"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_write_names_the_option_and_the_path(tmp_path, capsys):
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    src = ["--src", str(tmp_path / "src.bin"), "--dtype", "float"]
    assert main(["run", "reduce_sum_datablock", *src, "--out", "/dev/full"]) == 2
    assert capsys.readouterr().err == ("ascjax run: --out /dev/full: cannot be written: "
                                       "[Errno 28] No space left on device\n")
    assert main(["run", "squeeze_and_storeunalign", *src, "--out", str(tmp_path / "o.bin"),
                 "--ar-out", "/dev/full"]) == 2
    assert "--ar-out /dev/full: cannot be written" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["src.bin"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_run_whose_stderr_cannot_be_written_exits_2(tmp_path):
    """The summary (or an error) lost to a full stderr: exit code 2, no traceback's exit 1."""
    np.ones((4, 64), np.float32).tofile(tmp_path / "src.bin")
    for src in ("src.bin", "missing.bin"):  # a run that succeeds, one that fails
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "ascjax", "run", "reduce_sum_datablock",
                                   "--src", str(tmp_path / src), "--dtype", "float", "--out",
                                   str(tmp_path / "o.bin")], stderr=full, check=False,
                                  timeout=120)
        assert done.returncode == 2, src
