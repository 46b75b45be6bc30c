"""Raw .bin I/O: the samples' layout (np.tofile: little-endian, no header), checked sizes,
atomic writes."""

import os

import numpy as np
import pytest

import ascjax
from ascjax._src.io.binio import BinFileError, atomic_outputs


@pytest.mark.parametrize("name", list(ascjax.FORMATS))
def test_round_trip_every_format_is_tofile_layout(tmp_path, name):
    fmt = ascjax.FORMATS[name]
    raw = np.random.default_rng(0).integers(0, 256, 512, dtype=np.uint8)  # every bit pattern kind
    data = raw.view(fmt.storage_dtype)
    path = tmp_path / "x.bin"
    ascjax.write_bin(path, data, name)
    expected = tmp_path / "np.bin"
    data.tofile(expected)  # what gen_data.py does (little-endian host)
    assert path.read_bytes() == expected.read_bytes() == raw.tobytes()
    back = ascjax.read_bin(path, name)
    assert back.dtype == fmt.storage_dtype and back.tobytes() == raw.tobytes()
    regs = ascjax.read_bin(path, name, registers=True, mmap=True)
    assert regs.shape == (2, fmt.lanes) and regs.tobytes() == raw.tobytes()


def test_aliases_and_names_read_the_same(tmp_path):
    path = tmp_path / "h.bin"
    np.arange(6, dtype=np.float16).tofile(path)
    assert ascjax.read_bin(path, "float16").tolist() == ascjax.read_bin(path, "half").tolist()


def test_size_not_whole_elements(tmp_path):
    path = tmp_path / "odd.bin"
    path.write_bytes(b"\0" * 7)
    with pytest.raises(BinFileError, match=r"7 bytes is not a whole number of float elements "
                                           r"\(4 bytes each\)"):
        ascjax.read_bin(path, "float")


def test_size_not_whole_registers(tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(b"\0" * 258)
    assert ascjax.read_bin(path, "half").shape == (129,)
    with pytest.raises(BinFileError, match=r"258 bytes is not a whole number of vector_half "
                                           r"registers \(256 bytes, 128 lanes each\)"):
        ascjax.read_bin(path, "half", registers=True)


def test_missing_file_and_unknown_dtype(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.bin: no such file"):
        ascjax.read_bin(tmp_path / "nope.bin", "half")
    (tmp_path / "x.bin").write_bytes(b"\0" * 4)
    with pytest.raises(TypeError, match="unknown dtype 'float17'"):
        ascjax.read_bin(tmp_path / "x.bin", "float17")


def test_write_checks_storage_dtype(tmp_path):
    with pytest.raises(TypeError, match="hifloat8_t is stored as uint8"):
        ascjax.write_bin(tmp_path / "x.bin", np.zeros(4, np.float16), "hifloat8_t")
    ascjax.write_bin(tmp_path / "x.bin", np.arange(4, dtype=np.uint8), "hifloat8_t")
    assert (tmp_path / "x.bin").read_bytes() == bytes([0, 1, 2, 3])


def test_atomic_outputs_leave_nothing_half_written(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_outputs([target, tmp_path / "new.bin"]) as handles:
        handles[0].write(b"partial")
        raise RuntimeError("fail mid-way")
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["out.bin"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ascjax.write_bin(tmp_path / "no_dir" / "x.bin", np.zeros(2, np.float32))
