"""Opening user files: paths, standard input, .npy/.npz/.csv/.tsv bytes -> arrays.

Every problem is an ``InputError`` whose message is one line naming the file. ``.npy``
files are never unpickled; C-order ones are memory-mapped. Text is UTF-8 (a leading
byte-order mark is dropped); other bytes are refused, never replaced.

Every 2-D array comes back C-contiguous, whatever the file's layout: the analysis reduces
each query's row, and a row's sum depends on the memory order it is read in, so the same
votes as a C or Fortran ``.npy``, a ``.csv`` or a ``.tsv`` give the same bytes out. A
Fortran-order ``.npy`` is therefore read into memory in C order instead of being mapped.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import sys
import zipfile

import numpy as np
import pandas as pd

from ..errors import InputError
from .checks import check_dtype, pickled_error

VOTE_EXTENSIONS = (".npy", ".npz", ".csv", ".tsv")


def check_file(path, *, expected: str | None = None) -> str:
    """The path as a string, after a one-line error for a missing path or a directory
    (``expected`` names the input wanted there)."""
    name = os.fspath(path)
    hint = f" (expected {expected})" if expected else ""
    if not os.path.exists(name):
        raise InputError(f"{name}: no such file{hint}")
    if os.path.isdir(name):
        raise InputError(f"{name}: is a directory, not a file{hint}")
    return name


def open_input(path):
    """Return ``(display name, source, sha256)``; source is a path, or bytes for stdin."""
    if str(path) == "-":
        data = sys.stdin.buffer.read()
        if not data:
            raise InputError("<stdin>: no input (the standard input is empty)")
        return "<stdin>", data, hashlib.sha256(data).hexdigest()
    name = check_file(path)
    extension = os.path.splitext(name)[1].lower()
    if extension not in VOTE_EXTENSIONS:
        shown = f"'{extension}'" if extension else "none"
        raise InputError(f"{name}: unknown extension {shown} "
                         "(expected .npy, .npz, .csv, .tsv, or - for standard input)")
    if os.path.getsize(name) == 0:
        raise InputError(f"{name}: the file is empty")
    return name, name, file_sha256(name)


def file_sha256(path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_matrix(name, source, *, key, allow_1d=False):
    """Read a numeric array (and, from ``.npz``, the optional ``labels``), C-contiguous."""
    array, labels = _read_matrix(name, source, key)
    return c_order(array), labels


def _read_matrix(name, source, key):
    if isinstance(source, bytes):
        if source.startswith(b"\x93NUMPY"):
            return _read_npy(name, io.BytesIO(source)), None
        if source.startswith(b"PK"):
            return _read_npz(name, io.BytesIO(source), key)
        return read_text(name, decode_text(name, source), None), None
    extension = os.path.splitext(source)[1].lower()
    if extension == ".npy":
        return _read_npy(name, source), None
    if extension == ".npz":
        return _read_npz(name, source, key)
    return read_text(name, read_text_file(name), "\t" if extension == ".tsv" else ","), None


def c_order(array: np.ndarray) -> np.ndarray:
    """``array`` itself when it is C-contiguous (a C-order memory map stays mapped), else
    a C-contiguous copy in memory (a Fortran-order ``.npy``, pandas' column-major
    ``to_numpy()``): row reductions then run in the same order for every file layout."""
    if array.ndim < 2 or array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array)


def read_text_file(name) -> str:
    """The text of a file, decoded by ``decode_text``."""
    with open(name, "rb") as handle:
        return decode_text(name, handle.read())


def decode_text(name, data: bytes) -> str:
    """UTF-8 text without a leading byte-order mark; a one-line ``InputError`` naming the
    file (and the first bad byte) for anything else, never replacement characters."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise InputError(f"{name}: is UTF-16 text, not UTF-8 (save it as UTF-8)") \
                from None
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{name}: is not UTF-8 text (byte 0x{data[error.start]:02x} on "
                         f"line {line}); save it as UTF-8") from None


def _read_npy(name, source):
    try:
        if isinstance(source, str):
            array = np.load(source, mmap_mode="r", allow_pickle=False)
        else:
            array = np.load(source, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise _load_error(name, error, ".npy") from None
    check_dtype(name, array.dtype)
    return array


def _read_npz(name, source, key):
    try:
        with np.load(source, allow_pickle=False) as archive:
            keys = list(archive.keys())
            if key not in keys:
                if len(keys) == 1 and key != "labels":
                    key = keys[0]
                else:
                    raise InputError(f"{name}: has no array named '{key}' "
                                     f"(it holds: {', '.join(keys) or 'nothing'})")
            array = archive[key]
            labels = archive["labels"] if "labels" in keys and key != "labels" else None
    except InputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise _load_error(name, error, ".npz") from None
    check_dtype(name, array.dtype)
    if labels is not None:
        check_dtype(name, labels.dtype)
    return array, labels


def _load_error(name, error, kind) -> InputError:
    """numpy's refusal of an object array, or any other load failure, in one line."""
    text = str(error).lower()
    if isinstance(error, ValueError) and ("pickle" in text or "object" in text):
        return pickled_error(name)
    return InputError(f"{name}: not a valid {kind} file ({error})")


def read_text(name, text, separator):
    """Parse CSV/TSV text: an optional header row of names, then numbers only.

    The first row is a header only when none of its cells is a number once CSV quotes are
    removed: ``"30","20"`` is a row of votes, ``"a","b"`` a header.
    """
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError(f"{name}: the file is empty")
    if separator is None:
        separator = "\t" if "\t" in lines[0] and "," not in lines[0] else ","
    header_cells = first_cells(lines[0], separator)
    has_header = all(not is_number(cell) for cell in header_cells)
    if has_header and len(lines) == 1:
        raise InputError(f"{name}: has a header but no rows")
    options = dict(sep=separator, header=None, skiprows=1 if has_header else 0,
                   skipinitialspace=True, keep_default_na=False, engine="c",
                   skip_blank_lines=True)
    try:
        values = pd.read_csv(io.StringIO(text), dtype=np.float64, **options).to_numpy()
        if not np.isnan(values).any():
            return values
    except ValueError:
        pass  # some cell is not a number: parse as text below to say which one
    # The slow path, taken only to explain a problem: which line, which column.
    numbered = [(number, line) for number, line in enumerate(lines, start=1)
                if line.strip()][1 if has_header else 0:]
    widths = [line.count(separator) + 1 for _, line in numbered]
    expected = len(header_cells) if has_header else widths[0]
    for (number, _), width in zip(numbered, widths, strict=True):
        if width != expected:
            raise InputError(f"{name}: rows have different numbers of columns (line {number} "
                             f"has {width}, expected {expected})")
    frame = pd.read_csv(io.StringIO(text), dtype=str, **options)
    cells = frame.to_numpy(dtype=object)
    values = pd.DataFrame(cells).apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    for row, col in zip(*np.nonzero(np.isnan(values)), strict=True):
        cell = str(cells[row, col]).strip()
        if cell.lower() in ("nan", "+nan", "-nan"):
            continue  # a number, but not finite: reported by the vote checks
        shown = "empty" if cell == "" else f"{cell!r} is not a number"
        raise InputError(f"{name}: line {numbered[row][0]}, column {col + 1}: {shown}")
    return values


def first_cells(line: str, separator: str) -> list[str]:
    """The cells of one CSV line, unquoted and stripped."""
    try:
        cells = next(csv.reader([line], delimiter=separator, skipinitialspace=True))
    except (csv.Error, StopIteration):
        cells = line.split(separator)
    return [cell.strip() for cell in cells] or [""]


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def open_text(path) -> tuple[str, str]:
    """``(name, text)`` of a small text file, with the usual one-line errors."""
    name = check_file(path)
    text = read_text_file(name)
    if not text.strip():
        raise InputError(f"{name}: the file is empty")
    return name, text
