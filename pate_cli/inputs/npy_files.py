"""NPY and NPZ bytes -> arrays, checked before allocating (limits: ``inputs.readers``); the
header parsed as a literal (never executed or unpickled).
"""

from __future__ import annotations

import ast
import io
import math
import os
import zipfile
import zlib

import numpy as np

from ..errors import InputError
from .checks import check_dtype, pickled_error

DEFAULT_MAX_ELEMENTS = 2_000_000_000
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"
_MAX_NPY_HEADER = 10_000  # numpy's own limit on an NPY header (max_header_size)
# What reading a member may raise besides InputError (zipfile: NotImplementedError for an
# unknown compression, RuntimeError for encryption).
ARCHIVE_ERRORS = (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile, zlib.error,
                  NotImplementedError, RuntimeError)


def max_elements() -> int:
    """The most values an array read into memory may hold: ``PATE_MAX_ELEMENTS``, else 2e9."""
    text = os.environ.get("PATE_MAX_ELEMENTS", "").strip()
    if not text:
        return DEFAULT_MAX_ELEMENTS
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"PATE_MAX_ELEMENTS must be a positive integer, got {text!r}")
    return value


def check_elements(name, count: int, what: str = "values") -> None:
    """One line when ``count`` values would exceed ``max_elements()`` in memory."""
    limit = max_elements()
    if count > limit:
        raise InputError(f"{name}: {count:,} {what} exceed the limit of {limit:,} for data "
                         "read into memory (set PATE_MAX_ELEMENTS to raise it)")


def npy_header(name, handle, available: int, *, in_memory: bool, member: str | None = None,
               numeric: bool = True):
    """Read and check the NPY header at ``handle``'s position: ``(shape, fortran, dtype)``.

    The shape must be non-negative and fit in ``available`` bytes (header to data's end), and
    with ``in_memory`` (or Fortran order) hold at most ``max_elements()`` values. ``member``
    names an ``.npz`` member; ``numeric=False`` also takes strings (never objects).
    """
    dtype_name = name
    if member is not None:
        name = f"{name} (array '{member}')"
    magic = handle.read(8)
    if not magic.startswith(NPY_MAGIC) or len(magic) < 8:
        raise InputError(f"{name}: not a .npy file (it does not start with the NPY magic "
                         "bytes \\x93NUMPY)")
    major = magic[6]
    if major not in (1, 2, 3):
        raise InputError(f"{name}: unsupported .npy format version {major}.{magic[7]}")
    size_bytes = 2 if major == 1 else 4
    length = int.from_bytes(handle.read(size_bytes), "little")
    if length > _MAX_NPY_HEADER:
        raise InputError(f"{name}: the .npy header is {length:,} bytes long (at most "
                         f"{_MAX_NPY_HEADER:,} are read)")
    raw = handle.read(length)
    if len(raw) < length:
        raise InputError(f"{name}: the .npy header is truncated")
    try:
        header = ast.literal_eval(raw.decode("utf-8" if major == 3 else "latin1"))
        shape, fortran = header["shape"], header["fortran_order"]
        dtype = np.lib.format.descr_to_dtype(header["descr"])
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError,
            UnicodeDecodeError):
        raise InputError(f"{name}: the .npy header is not valid") from None
    if not (isinstance(shape, tuple) and isinstance(fortran, bool)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)):
        raise InputError(f"{name}: the .npy header is not valid (shape {shape!r})")
    if any(n < 0 for n in shape):
        raise InputError(f"{name}: the .npy header declares a negative dimension "
                         f"(shape {shape})")
    if numeric:
        check_dtype(dtype_name, dtype)
    elif dtype.hasobject:
        raise pickled_error(dtype_name)
    count = math.prod(shape)
    needed = count * dtype.itemsize
    present = available - size_bytes - 8 - length
    if needed > present:
        raise InputError(f"{name}: the .npy header declares shape {shape} ({needed:,} bytes "
                         f"of data) but only {max(present, 0):,} bytes follow (truncated or "
                         "corrupt)")
    if in_memory or (fortran and len(shape) > 1):
        check_elements(name, count)
    return shape, fortran, dtype


def read_npy(name, source):
    in_memory = isinstance(source, bytes)
    try:
        if in_memory:
            npy_header(name, io.BytesIO(source), len(source), in_memory=True)
            array = np.load(io.BytesIO(source), allow_pickle=False)
        else:
            with open(source, "rb") as handle:
                npy_header(name, handle, os.path.getsize(source), in_memory=False)
            array = np.load(source, mmap_mode="r", allow_pickle=False)
    except InputError:
        raise
    except (ValueError, OSError, EOFError) as error:
        raise load_error(name, error, ".npy") from None
    check_dtype(name, array.dtype)
    return array


def check_npz_members(name, source, *, numeric: bool = True, key: str | None = None) -> None:
    """Check the header of every ``.npy`` member against its uncompressed size
    (``numeric=False``: strings too); with ``key`` (the array wanted), a SciPy sparse matrix's
    archive is said to be one first."""
    with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as zf:
        members = {info.filename for info in zf.infolist()}
        if key is not None and {"format.npy", "shape.npy", "data.npy"} <= members:
            raise InputError(f"{name}: a sparse matrix (scipy.sparse.save_npz) is read from "
                             "a .npz file by its path, not from standard input"
                             if isinstance(source, bytes) else
                             f"{name}: a sparse matrix (scipy.sparse.save_npz), not an "
                             f"array '{key}' (sparse matrices are read as VOTES only)")
        for info in zf.infolist():
            if info.filename.endswith(".npy"):
                with zf.open(info) as handle:
                    npy_header(name, handle, info.file_size, in_memory=True,
                               member=info.filename[:-4], numeric=numeric)


def npz_holds(path, key: str) -> bool:
    """Whether ``path`` is a ``.npz`` archive with an array ``key`` (False for anything else:
    the reader says what is wrong)."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).lower().endswith(".npz"):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return f"{key}.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def read_npz(name, source, key):
    try:
        check_npz_members(name, source, key=key)
        if isinstance(source, bytes):
            source = io.BytesIO(source)
        with np.load(source, allow_pickle=False) as archive:
            keys = list(archive.keys())
            if key not in keys:
                if len(keys) == 1 and "labels" not in (key, keys[0]):  # a lone array
                    key = keys[0]
                else:
                    raise InputError(f"{name}: has no array named '{key}' "
                                     f"(it holds: {', '.join(keys) or 'nothing'})")
            array = archive[key]
            labels = archive["labels"] if "labels" in keys and key != "labels" else None
    except InputError:
        raise
    except ARCHIVE_ERRORS as error:
        raise load_error(name, error, ".npz") from None
    check_dtype(name, array.dtype)
    if labels is not None:
        check_dtype(name, labels.dtype)
    return array, labels


def load_error(name, error, kind) -> InputError:
    """numpy's refusal of an object array, or any other load failure, in one line."""
    text = str(error).lower()
    if isinstance(error, ValueError) and ("pickle" in text or "object" in text):
        return pickled_error(name)
    if isinstance(error, (NotImplementedError, RuntimeError)):  # zipfile's, on a member
        why = ("encrypted" if "encrypt" in text or "password" in text
               else "compressed with a method Python's zipfile cannot read")
        return InputError(f"{name}: not a readable {kind} file (a member is {why}; save "
                          "it with numpy.savez, numpy.savez_compressed or "
                          "scipy.sparse.save_npz)")
    return InputError(f"{name}: not a valid {kind} file ({' '.join(str(error).split())})")
