"""Raw .bin I/O: the samples' layout (np.tofile: little-endian, no header), checked sizes,
atomic writes."""

import os
import signal
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest

import ascjax
from ascjax._src.io import binio
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


# --- inputs that are not regular files, inputs that change, outputs that are not files -------

def test_pipe_is_read_to_its_end_and_size_checked(tmp_path):
    data = np.arange(300, dtype=np.float32)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data.tobytes()))
    writer.start()
    got = ascjax.read_bin(fifo, "float", mmap=True)  # a pipe is read whole, mmap or not
    writer.join()
    assert got.tobytes() == data.tobytes()
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"\0" * 300))
    writer.start()
    with pytest.raises(BinFileError, match="300 bytes is not a whole number of vector_half"):
        ascjax.read_bin(fifo, "half", registers=True)
    writer.join()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_devices_are_refused(device):
    with pytest.raises(BinFileError, match=f"--src {device}: a device, not a file or a pipe"):
        ascjax.read_bin(device, "half", arg="--src")


def test_truncated_replaced_or_removed_input_is_an_error_not_sigbus(tmp_path):
    path = tmp_path / "x.bin"
    np.ones((8, 64), np.float32).tofile(path)
    lazy = ascjax.read_bin(path, "float", registers=True, mmap=True)
    assert np.asarray(lazy[2:4]).shape == (2, 64) and lazy[7].tolist() == [1.0] * 64
    os.truncate(path, 5 * 256)
    assert np.asarray(lazy[:5]).sum() == 5 * 64  # what is still there reads
    with pytest.raises(BinFileError, match=r"x.bin: the file was truncated while it was being "
                                           r"read \(bytes 1280 to 2048 are gone\)"):
        np.asarray(lazy)
    np.ones((8, 64), np.float32).tofile(tmp_path / "new.bin")
    os.replace(tmp_path / "new.bin", path)  # a new file in its place, as a rewrite does
    with pytest.raises(BinFileError, match="the file was replaced while it was being read"):
        np.asarray(lazy[:1])
    os.unlink(path)
    with pytest.raises(BinFileError, match="the file was removed while it was being read"):
        np.asarray(lazy[:1])


def test_symlink_output_is_followed_and_devices_fifos_written_in_place(tmp_path):
    target = tmp_path / "real.bin"
    target.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    ascjax.write_bin(link, np.arange(4, dtype=np.float32))
    assert link.is_symlink() and target.read_bytes() == np.arange(4, dtype=np.float32).tobytes()
    ascjax.write_bin("/dev/null", np.arange(4, dtype=np.float32))  # no temporary file in /dev
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    ascjax.write_bin(fifo, np.arange(3, dtype=np.float16))
    reader.join()
    assert got == [np.arange(3, dtype=np.float16).tobytes()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "link.bin", "real.bin"]


# A shell starts a command with Python's KeyboardInterrupt handler in place; a test worker may
# ignore SIGINT, and an ignored SIGINT is inherited (then Python installs no handler): restore it.
_WRITER = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from ascjax._src.io.binio import atomic_outputs
with atomic_outputs([sys.argv[1]]) as (handle,):
    handle.write(b"partial")
    handle.flush()
    print("ready", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_temporary_files_carry_the_pid_and_go_on_sigterm_and_sigint(tmp_path, sig):
    out = tmp_path / "out.bin"
    with subprocess.Popen([sys.executable, "-c", _WRITER, str(out)], stdout=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stdout.readline() == "ready\n"
        [temp] = os.listdir(tmp_path)
        assert temp.startswith(f".out.bin.{binio._HOST}.{proc.pid}.") and temp.endswith(".tmp")
        proc.send_signal(sig)
        code = proc.wait(timeout=30)
    assert code == (143 if sig == signal.SIGTERM else -signal.SIGINT)
    assert os.listdir(tmp_path) == []


def test_stale_temporary_files_of_dead_processes_are_removed(tmp_path):
    with subprocess.Popen([sys.executable, "-c", "pass"]) as dead:
        dead.wait()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        try:
            names = [f".out.bin.{binio._HOST}.{dead.pid}.abcd_123.tmp",  # SIGKILLed: removed
                     f".out.bin.{binio._HOST}.{alive.pid}.abcd_123.tmp",  # running: kept
                     f".out.bin.otherhost.{dead.pid}.abcd_123.tmp",  # another host's: kept
                     f".other.bin.{binio._HOST}.{dead.pid}.abcd_123.tmp"]  # other output: kept
            for name in names:
                (tmp_path / name).write_bytes(b"x" * 100)
            ascjax.write_bin(tmp_path / "out.bin", np.zeros(2, np.float32))
            assert sorted(os.listdir(tmp_path)) == sorted(["out.bin", *names[1:]])
        finally:
            alive.kill()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_write_names_the_output():
    """A write's own error names no file ("[Errno 28] No space left on device")."""
    with pytest.raises(OSError, match=r"^/dev/full: cannot be written: \[Errno 28\] No space"):
        ascjax.write_bin("/dev/full", np.zeros(1 << 16, np.float32))
