"""Raw ``.bin`` files in the Ascend samples' layout (``np.tofile`` / ``np.fromfile``).

A file is the elements' bit patterns, little-endian, one after another, with no header: what
``gen_data.py`` writes and what an NPU output dump holds. 4-bit types are stored two per byte
(element 2k in the low nibble), so their files hold bytes. The element count comes from the
file size, which must be a whole number of elements (and of 256-byte registers when registers
are asked for). Writes go to a temporary file in the target's directory, renamed at the end,
so an error never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
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


def file_size(path: str | os.PathLike) -> int:
    """Size of ``path`` in bytes, or ``FileNotFoundError`` with the path in the message."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        raise FileNotFoundError(f"{os.fspath(path)}: no such file") from None


def count_units(path: str | os.PathLike, fmt: Format, *, registers: bool = False,
                arg: str = "file") -> int:
    """Stored units (elements; bytes for 4-bit types) in ``path``, checked against its size.

    With ``registers=True`` the size must also be a whole number of 256-byte registers.
    """
    size = file_size(path)
    unit = fmt.storage_dtype.itemsize
    what = f"{arg} {os.fspath(path)}"
    if size % unit:
        raise BinFileError(f"{what}: {size} bytes is not a whole number of {fmt.name} elements "
                           f"({unit} bytes each)")
    if registers and size % VL_BYTES:
        raise BinFileError(f"{what}: {size} bytes is not a whole number of vector_{fmt.name} "
                           f"registers ({VL_BYTES} bytes, {fmt.lanes} lanes each)")
    return size // unit


def read_bin(path: str | os.PathLike, dtype: Any, *, registers: bool = False,
             mmap: bool = False, arg: str = "file") -> np.ndarray:
    """Read a samples-layout .bin file as an array of ``dtype``'s storage type.

    ``dtype`` is an Ascend type name or alias (``"half"``, ``"bfloat16_t"``, ``"hifloat8"``, ...);
    the result has that format's storage dtype (uint8 bytes for hifloat8 and the 4-bit types).
    Shape: ``(n,)``, or ``(n / lanes, lanes)`` with ``registers=True`` (256 bytes a register).
    ``mmap=True`` maps the file instead of reading it (for files larger than memory; on a
    little-endian host the map is returned as is). Raises ``FileNotFoundError`` for a missing
    file and ``BinFileError`` (a ``ValueError``) when the size is not a whole number of
    elements or registers.

    >>> import numpy as np, tempfile, os, ascjax
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> np.arange(4, dtype=np.float16).tofile(path)
    >>> ascjax.read_bin(path, "half").tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    fmt = resolve(dtype, where="read_bin")
    count = count_units(path, fmt, registers=registers, arg=arg)
    if mmap:
        bits = (np.memmap(path, dtype=_little(fmt), mode="r", shape=(count,)) if count
                else np.zeros(0, _little(fmt)))
    else:
        bits = np.fromfile(path, dtype=_little(fmt))
    data = _native(bits, fmt)
    return data.reshape(-1, VL_BYTES // fmt.storage_dtype.itemsize) if registers else data


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


def write_bin(path: str | os.PathLike, array: Any, dtype: Any = None) -> str:
    """Write ``array`` to ``path`` in the samples' layout, atomically; returns the path.

    ``array`` must be held in the storage dtype of ``dtype`` (default: the format its NumPy
    dtype names; give ``dtype="hifloat8_t"`` etc. for byte-stored formats). Any shape is
    written flat in C order.
    """
    array, fmt = _stored(array, dtype, "write_bin")
    with atomic_outputs([path]) as (handle,):
        to_little(array, fmt).tofile(handle)
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


@contextlib.contextmanager
def atomic_outputs(paths: list[str | os.PathLike]) -> Iterator[list[Any]]:
    """Open binary handles that become ``paths`` only if the block finishes without error.

    Each handle is a temporary file in its target's directory (so the final rename is atomic
    on one file system); on an exception every temporary file is removed and no target is
    touched.
    """
    handles, done = [], False
    try:
        for path in paths:
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                raise FileNotFoundError(f"{os.fspath(path)}: directory {directory} does not exist")
            # Closed or removed in this function, never left to a with-block: SIM115 is moot.
            handles.append(tempfile.NamedTemporaryFile(  # noqa: SIM115
                dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp", delete=False))
        yield handles
        for handle, path in zip(handles, paths, strict=True):
            handle.close()
            os.chmod(handle.name, _new_file_mode(path))  # temporary files are 0600
        for handle, path in zip(handles, paths, strict=True):
            os.replace(handle.name, path)
        done = True
    finally:
        if not done:
            for handle in handles:
                handle.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(handle.name)


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
