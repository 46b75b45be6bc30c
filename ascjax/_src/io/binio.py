"""Raw ``.bin`` files in the Ascend samples' layout (``np.tofile`` / ``np.fromfile``).

A file is the elements' bit patterns, little-endian, one after another, with no header: what
``gen_data.py`` writes and what an NPU output dump holds. 4-bit types are stored two per byte
(element 2k in the low nibble), so their files hold bytes. The element count comes from the
file size, which must be a whole number of elements (and of 256-byte registers when registers
are asked for).

Inputs: a regular file is read in pieces as they are needed (``BinArray``; no memory map, so a
file truncated, replaced or removed while it is read raises ``BinFileError`` instead of killing
the process with SIGBUS). A pipe (``<(cat a.bin)``, ``/dev/stdin`` from a pipe, a FIFO) is read
to its end into memory and size-checked like a file. Devices (``/dev/zero``, ``/dev/null``, a
terminal) are refused: their size is unknown, and /dev/zero never ends.

Outputs: a regular file (or a new one) is written to a temporary file in the target's
directory, named ``.NAME.HOST.PID.XXXXXXXX.tmp``, and renamed over the target at the end, so an
error, SIGINT or SIGTERM never leaves a half-written file behind (the temporary file is
removed; SIGTERM then exits with status 143), and a later write of NAME removes the temporary
files of processes of this host that are gone (SIGKILL). The old target is removed just before
the rename (a rename over an existing file makes ext4 write the new data out at once): a crash
between the two leaves no target and the whole result in the temporary file, never a
half-written target. A symlink is followed (its target is
written, the link stays). Anything else that exists (a device such as /dev/null, a FIFO) is
written in place, never replaced.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..formats import VL_BYTES, Format, resolve


class BinFileError(ValueError):
    """A .bin file that cannot hold what it is read as (size, count, shape)."""


def _little(fmt: Format) -> np.dtype:
    """Little-endian unsigned dtype of one stored unit (a byte for the nibble types)."""
    return np.dtype(f"<u{fmt.storage_dtype.itemsize}")


def _native(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """Little-endian stored units as an array of ``fmt``'s storage dtype (no copy on LE hosts)."""
    unit = np.dtype(f"=u{fmt.storage_dtype.itemsize}")
    return bits.astype(unit, copy=False).view(fmt.storage_dtype)


_PIPES: dict[tuple[int, int], bytearray] = {}  # pipes read to their end, until read_bin takes them


def _status(path: str | os.PathLike, arg: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{arg} {os.fspath(path)}: no such file") from None


def _pipe_bytes(path: str | os.PathLike, st: os.stat_result) -> bytearray:
    """All the bytes of a pipe, read once (a pipe cannot be read twice) and kept for read_bin."""
    key = (st.st_dev, st.st_ino)
    if key not in _PIPES:
        data = bytearray()
        with open(path, "rb") as pipe:
            while block := pipe.read(1 << 24):
                data += block
        _PIPES[key] = data
    return _PIPES[key]


def file_size(path: str | os.PathLike, arg: str = "file") -> int:
    """Size of ``path`` in bytes: a regular file's, or all a pipe holds (read to its end).

    ``FileNotFoundError`` with the path in the message for a missing file; ``BinFileError`` for
    a directory or a device (unknown size: /dev/zero never ends)."""
    st = _status(path, arg)
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        return len(_pipe_bytes(path, st))
    kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device"
    raise BinFileError(f"{arg} {os.fspath(path)}: {kind}, not a file or a pipe; its size is "
                       f"unknown (give a regular file, or a pipe such as <(cat FILE))")


def count_units(path: str | os.PathLike, fmt: Format, *, registers: bool = False,
                arg: str = "file") -> int:
    """Stored units (elements; bytes for 4-bit types) in ``path``, checked against its size.

    With ``registers=True`` the size must also be a whole number of 256-byte registers.
    """
    size = file_size(path, arg)
    unit = fmt.storage_dtype.itemsize
    what = f"{arg} {os.fspath(path)}"
    if size % unit:
        raise BinFileError(f"{what}: {size} bytes is not a whole number of {fmt.name} elements "
                           f"({unit} bytes each)")
    if registers and size % VL_BYTES:
        raise BinFileError(f"{what}: {size} bytes is not a whole number of vector_{fmt.name} "
                           f"registers ({VL_BYTES} bytes, {fmt.lanes} lanes each)")
    return size // unit


class BinArray:
    """Rows of a regular .bin file, read when they are asked for (``np.asarray`` or a slice).

    Behaves as a read-only C-order array for what the bulk path does with one: ``shape``,
    ``dtype``, ``len``, ``reshape``, slices of the leading axis (lazy), an int index or
    ``np.asarray`` (read). Each read checks that the file is still the one opened and still
    holds the bytes: a truncated, replaced or removed file raises ``BinFileError``.
    """

    def __init__(self, path: str | os.PathLike, fmt: Format, shape: tuple[int, ...], *,
                 offset: int = 0, arg: str = "file", ident: tuple[int, int] | None = None):
        self.path, self.fmt, self.shape, self.offset, self.arg = path, fmt, shape, offset, arg
        self.ident = ident if ident is not None else _identity(path)
        self.dtype = fmt.storage_dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def reshape(self, *shape: Any) -> BinArray:
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // known if d == -1 else d for d in shape) if known else shape
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape {self.size} elements of {self.arg} into {shape}")
        return BinArray(self.path, self.fmt, shape, offset=self.offset, arg=self.arg,
                        ident=self.ident)

    def __getitem__(self, key: Any) -> Any:
        row = math.prod(self.shape[1:]) * self.dtype.itemsize
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise IndexError("BinArray: only slices with step 1")
            stop = max(stop, start)
            return BinArray(self.path, self.fmt, (stop - start, *self.shape[1:]),
                            offset=self.offset + start * row, arg=self.arg, ident=self.ident)
        index = int(key)
        index += len(self) if index < 0 else 0
        if not 0 <= index < len(self):
            raise IndexError(f"index {key} is out of range for {len(self)} rows")
        return np.asarray(self[index:index + 1])[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        bits = aligned_empty(self.size, _little(self.fmt))
        view, done = memoryview(bits).cast("B"), 0
        where = f"{self.arg} {os.fspath(self.path)}"
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (closed below, after the checks)
        except FileNotFoundError:
            raise BinFileError(f"{where}: the file was removed while it was being read") from None
        with handle:
            if (os.fstat(handle.fileno()).st_dev, os.fstat(handle.fileno()).st_ino) != self.ident:
                raise BinFileError(f"{where}: the file was replaced while it was being read")
            handle.seek(self.offset)
            while done < len(view) and (got := handle.readinto(view[done:])):
                done += got
        if done < len(view):
            raise BinFileError(f"{where}: the file was truncated while it was being read (bytes "
                               f"{self.offset + done} to {self.offset + len(view)} are gone)")
        data = _native(bits, self.fmt).reshape(self.shape)
        return data if dtype is None else data.astype(dtype)

    def tobytes(self) -> bytes:
        return np.asarray(self).tobytes()


ALIGN = 64  # bytes: XLA's CPU client takes a buffer aligned so without copying it


def aligned_empty(size: int, dtype: Any) -> np.ndarray:
    """``np.empty(size, dtype)`` starting on an ``ALIGN``-byte boundary (NumPy's large arrays
    start 16 bytes past one), so ``jax.device_put`` on the CPU uses it in place."""
    dtype = np.dtype(dtype)
    raw = np.empty(size * dtype.itemsize + ALIGN, np.uint8)
    skip = -raw.ctypes.data % ALIGN
    return raw[skip:skip + size * dtype.itemsize].view(dtype)


IN_PLACE_MIN_BYTES = 1 << 20  # below this a copy costs less than compiling another shape


def rows_in_place(x: np.ndarray):
    """The rows of a C-contiguous host array ``x`` (rows, n) as JAX arrays, most of them
    without a copy (a copy of 64 MiB takes 21 ms, 2-3x the sums over it on the project's
    machine): ``(to_device(x),)`` (a copy) where x is small or not on the CPU; ``(x,)`` in
    place where x starts on an ``ALIGN``-byte boundary; else ``(body, head, rest)``:
    ``body`` (m, n), m = rows - 1 or rows - 2 (even), starts at x's first ``ALIGN``-byte
    aligned element, ``shift`` elements into row 0, so XLA's CPU client takes it in place;
    ``head`` is row 0's first ``shift`` elements and ``rest`` the rows after the first m
    (copies). ``orders.ShiftedColumns`` reads the columns back from these. Whatever is in
    place is x's memory: block on the results before handing x back to its owner.
    """
    import jax  # see to_device

    rows, n = x.shape
    if (x.itemsize == 0 or x.ctypes.data % x.itemsize or not x.flags.c_contiguous
            or x.nbytes < IN_PLACE_MIN_BYTES or jax.default_backend() != "cpu"):
        return (to_device(x),)
    shift = (-x.ctypes.data % ALIGN) // x.itemsize
    if shift == 0:
        return (jax.device_put(x),)
    if rows < 3 or shift >= n:
        return (to_device(x),)
    # body: an even number of rows (XLA's CPU loops over an odd count run ~1.7x slower)
    m = (rows - 1) // 2 * 2
    body = x.reshape(-1)[shift:shift + m * n].reshape(m, n)
    return jax.device_put(body), jax.device_put(x[0, :shift].copy()), \
        jax.device_put(x[m:].copy())


def to_device(x: np.ndarray):
    """``x`` as a JAX array, the way that costs least on the default backend.

    XLA's CPU client copies an array that is not ``ALIGN``-byte aligned itself, about 5x
    slower than NumPy does (37 ms against 7 ms for 64 MiB on the project's machine), and
    ``device_put`` takes an aligned one in place: so an unaligned ``x`` is copied into an
    aligned buffer of our own first, handed over in place. An aligned ``x``, or another
    backend, goes to ``jnp.asarray``, which copies (JAX 0.10), so callers may dispatch
    asynchronously either way: the caller's ``x`` is never read after this returns.
    """
    import jax  # binio itself stays free of JAX (host-side tools import it)
    import jax.numpy as jnp

    if (not isinstance(x, np.ndarray) or x.ctypes.data % ALIGN == 0
            or x.nbytes < IN_PLACE_MIN_BYTES or jax.default_backend() != "cpu"):
        return jnp.asarray(x)
    copy = aligned_empty(x.size, x.dtype).reshape(x.shape)
    np.copyto(copy, x)
    return jax.device_put(copy)


def _identity(path: str | os.PathLike) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def read_bin(path: str | os.PathLike, dtype: Any, *, registers: bool = False,
             mmap: bool = False, arg: str = "file") -> Any:
    """Read a samples-layout .bin file as an array of ``dtype``'s storage type.

    ``dtype`` is an Ascend type name or alias (``"half"``, ``"bfloat16_t"``, ``"hifloat8"``, ...);
    the result has that format's storage dtype (uint8 bytes for hifloat8 and the 4-bit types).
    Shape: ``(n,)``, or ``(n / lanes, lanes)`` with ``registers=True`` (256 bytes a register).
    ``mmap=True`` returns a ``BinArray`` instead, which reads rows when they are used (for files
    larger than memory; a file truncated meanwhile raises ``BinFileError``, never SIGBUS). A
    pipe is read to its end (and ``mmap`` has no effect). Raises ``FileNotFoundError`` for a
    missing file and ``BinFileError`` (a ``ValueError``) when the size is not a whole number
    of elements or registers, or for a device.

    >>> import numpy as np, tempfile, os, ascjax
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> np.arange(4, dtype=np.float16).tofile(path)
    >>> ascjax.read_bin(path, "half").tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    fmt = resolve(dtype, where="read_bin")
    count = count_units(path, fmt, registers=registers, arg=arg)
    shape = (-1, VL_BYTES // fmt.storage_dtype.itemsize) if registers else (count,)
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):  # a pipe, read by count_units
        bits = np.frombuffer(_PIPES.pop((st.st_dev, st.st_ino)), _little(fmt))
        return _native(bits, fmt).reshape(shape)
    lazy = BinArray(path, fmt, (count,), arg=arg, ident=(st.st_dev, st.st_ino))
    return lazy.reshape(shape) if mmap else np.asarray(lazy).reshape(shape)


def _stored(array: Any, dtype: Any, where: str) -> tuple[np.ndarray, Format]:
    array = np.asarray(array)
    fmt = resolve(array.dtype if dtype is None else dtype, where=where)
    if array.dtype != fmt.storage_dtype:
        raise TypeError(f"{where}: array has dtype {array.dtype}, but {fmt.name} is stored as "
                        f"{fmt.storage_dtype}")
    return array, fmt


def to_little(array: np.ndarray, fmt: Format) -> np.ndarray:
    """The bytes of ``array`` (storage dtype of ``fmt``) in file order, as little-endian units."""
    unit = np.dtype(f"=u{fmt.storage_dtype.itemsize}")
    return np.ascontiguousarray(array).view(unit).astype(_little(fmt), copy=False)


def write_to(handle: Any, array: np.ndarray, fmt: Format) -> None:
    """Write ``array`` (storage dtype of ``fmt``) to an open binary ``handle`` in file order
    (``handle.write``, not ``tofile``: devices and FIFOs have no file position)."""
    handle.write(memoryview(np.ascontiguousarray(to_little(array, fmt))).cast("B"))


def write_bin(path: str | os.PathLike, array: Any, dtype: Any = None) -> str:
    """Write ``array`` to ``path`` in the samples' layout, atomically; returns the path.

    ``array`` must be held in the storage dtype of ``dtype`` (default: the format its NumPy
    dtype names; give ``dtype="hifloat8_t"`` etc. for byte-stored formats). Any shape is
    written flat in C order.
    """
    array, fmt = _stored(array, dtype, "write_bin")
    with atomic_outputs([path]) as (handle,), output_errors(path):
        write_to(handle, array, fmt)
    return os.fspath(path)


def _new_file_mode(path: str | os.PathLike) -> int:
    """The mode ``open(path, "wb")`` would leave: an existing file's, else 0o666 less the umask."""
    with contextlib.suppress(OSError):
        return os.stat(path).st_mode & 0o7777
    try:  # Linux reports the umask without changing it (os.umask would, for every thread)
        with open("/proc/self/status") as status:
            mask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration):
        mask = os.umask(0)
        os.umask(mask)
    return 0o666 & ~mask


_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _temp_prefix(target: str) -> str:
    return f".{os.path.basename(target)}.{_HOST}.{os.getpid()}."


def remove_stale_temporaries(target: str | os.PathLike) -> list[str]:
    """Remove the temporary files of ``target`` left by processes of this host that are gone
    (a run killed by SIGKILL); returns their paths. Other hosts' files (a shared file system)
    and live processes' are left alone."""
    target = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(target))
    pattern = re.compile(rf"\.{re.escape(os.path.basename(target))}\.{re.escape(_HOST)}"
                         rf"\.(\d+)\.[A-Za-z0-9_]+\.tmp")
    removed = []
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            found = pattern.fullmatch(name)
            if not found or int(found.group(1)) == os.getpid():
                continue
            try:
                os.kill(int(found.group(1)), 0)
                continue  # alive
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue  # alive (another user's), or no pid at all
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, name))
                removed.append(os.path.join(directory, name))
    return removed


class Terminated(SystemExit):
    """SIGTERM arrived while outputs were being written (exit status 143, as a shell shows)."""


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` (so the ``finally`` blocks remove the
    temporary files), where SIGTERM still has its default action and this is the main thread."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminated(signum, frame):
        raise Terminated(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class OutputError(OSError):
    """An output that could not be opened, written or put in place: ``path`` as given, the
    ``option`` that named it (where known) and ``reason``, the system's error."""

    def __init__(self, path: str | os.PathLike, reason: str, option: str = ""):
        self.path, self.reason, self.option = os.fspath(path), reason, option
        super().__init__(f"{option} {self.path}".lstrip() + f": cannot be written: {reason}")


@contextlib.contextmanager
def output_errors(path: str | os.PathLike) -> Iterator[None]:
    """The block's OSError as an ``OutputError`` naming ``path`` (a write's own error names no
    file: "[Errno 27] File too large")."""
    try:
        yield
    except OutputError:
        raise
    except OSError as error:
        raise OutputError(path, str(error)) from error


def _open_output(path: str | os.PathLike) -> tuple[Any, str | None, str]:
    """(handle, temporary name or None, target) for one output: see the module doc."""
    target = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{os.fspath(path)}: is a directory")
        if not stat.S_ISREG(mode):  # a device or a FIFO: written in place, never replaced
            with output_errors(path):
                return open(target, "wb"), None, target
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{os.fspath(path)}: directory {directory} does not exist")
    remove_stale_temporaries(target)
    with output_errors(path):
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed or removed by the caller)
            dir=directory, prefix=_temp_prefix(target), suffix=".tmp", delete=False)
    return handle, handle.name, target


@contextlib.contextmanager
def atomic_outputs(paths: list[str | os.PathLike]) -> Iterator[list[Any]]:
    """Open binary handles that become ``paths`` only if the block finishes without error.

    Each handle of a regular (or new) file is a temporary file in its target's directory (so
    the final rename is atomic on one file system); on an exception, SIGINT or SIGTERM every
    temporary file is removed and no such target is touched. A symlink's target is written; a
    device or FIFO is written in place (see the module doc).
    """
    opened, done = [], False
    try:
        with _terminate_cleanly():
            for path in paths:
                opened.append(_open_output(path))
            yield [handle for handle, _, _ in opened]
            for path, (handle, temp, target) in zip(paths, opened, strict=True):
                with output_errors(path):  # close writes what the buffer holds
                    handle.close()
                    if temp is not None:
                        os.chmod(temp, _new_file_mode(target))  # temporary files are 0600
            for path, (_, temp, target) in zip(paths, opened, strict=True):
                if temp is not None:
                    # Removing the old file first spares ext4's flush of the new data that a
                    # rename over an existing file triggers (auto_da_alloc: ~0.1 s per 256 MiB)
                    with output_errors(path):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(target)
                        os.replace(temp, target)
            done = True
    finally:
        if not done:
            for handle, temp, _ in opened:
                with contextlib.suppress(OSError):
                    handle.close()
                if temp is not None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(temp)


def check_output_paths(outputs: list[str | os.PathLike],
                       inputs: list[str | os.PathLike]) -> None:
    """No output may replace an input file (links included) or another output of the run."""
    real = [os.path.realpath(path) for path in outputs]
    for given, path in zip(outputs, real, strict=True):
        if real.count(path) > 1:
            raise ValueError(f"{os.fspath(given)}: named for two outputs of one run")
        for source in inputs:
            if os.path.isfile(source) and os.path.exists(path) and os.path.samefile(path, source):
                raise ValueError(f"{os.fspath(given)}: this output file is also an input "
                                 f"({os.fspath(source)}); write it elsewhere")
