"""Opening user files: paths, standard input, .npy/.npz/.csv/.tsv bytes -> arrays.

Every problem is a one-line ``InputError`` naming the file. ``.npy`` files are never unpickled;
C-order ones are memory-mapped. Text is UTF-8 (a leading BOM dropped; bad bytes refused, never
replaced). Compressed files and archives under the wrong extension are named as such. Every 2-D
array comes back C-contiguous, so a row's sum (order-dependent) is the same for a C or Fortran
``.npy``, a ``.csv`` or a ``.tsv`` of the same votes.

Limits, checked before allocating: an NPY header's shape is non-negative and fits the bytes
present; an array read into memory (stdin, ``.npz`` members, Fortran order) holds at most
``max_elements()`` values (``PATE_MAX_ELEMENTS``, default 2 * 10^9, 16 GB); a stream is refused
past that many float64 values' bytes.

Size: one concept, a user file's bytes to an array (its sources, checks, text/binary readers).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import os
import re
import stat
import sys
import weakref
import zlib

import numpy as np

from ..errors import InputError
from .npy_files import NPY_MAGIC, ZIP_MAGIC, max_elements, read_npy, read_npz

VOTE_EXTENSIONS = (".npy", ".npz", ".csv", ".tsv")



def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes start ``head``, or None."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and head[4:10] == b"1AY&SY":
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return None


def check_magic(name, head: bytes, extension: str) -> None:
    """One line for compressed data, or binary data under the wrong extension."""
    if head and not head.strip(b"\0"):
        raise InputError(f"{name}: holds NUL bytes only, not .npy, .npz, CSV or TSV data")
    compression = compression_of(head)
    if compression:
        raise InputError(f"{name}: is {compression}-compressed; decompress it first "
                         f"(the readers take plain .npy, .npz, .csv or .tsv)")
    if extension == ".npy" and head.startswith(ZIP_MAGIC):
        raise InputError(f"{name}: is a zip archive (an .npz?), not an .npy file; "
                         "rename it to .npz")
    if extension == ".npz" and head.startswith(NPY_MAGIC):
        raise InputError(f"{name}: is an .npy file, not an .npz archive; rename it to .npy")
    if extension in (".csv", ".tsv") and head.startswith((NPY_MAGIC, ZIP_MAGIC)):
        kind, right = (".npy", ".npy") if head.startswith(NPY_MAGIC) else ("zip", ".npz")
        raise InputError(f"{name}: is binary {kind} data, not {extension[1:].upper()} text; "
                         f"rename it to {right}")


def unreadable(name, error: OSError) -> InputError:
    """A file that exists but cannot be read, in one line."""
    reason = error.strerror or type(error).__name__
    if isinstance(error, PermissionError):
        reason = "permission denied"
    return InputError(f"{name}: cannot be read ({reason})")


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


def open_input(path, *, background: bool = False):
    """Return ``(display name, source, sha256)``; source is a path, or bytes for stdin.

    ``background``: a file's sha256 is computed on a thread (hashlib releases the GIL) while
    the caller validates; the third value is then a function waiting for it (``digest_of``)."""
    if str(path) == "-":
        data = read_stdin()
        if not data:
            raise InputError("<stdin>: no input (the standard input is empty)")
        check_magic("<stdin>", data[:16], "")
        return "<stdin>", data, hashlib.sha256(data).hexdigest()
    name = check_file(path)
    extension = os.path.splitext(name)[1].lower()
    if not is_regular(name):  # a FIFO, <(command), /dev/stdin: read once, into memory
        if extension and extension not in VOTE_EXTENSIONS:
            raise InputError(f"{name}: unknown extension '{extension}' "
                             "(expected .npy, .npz, .csv, .tsv, or - for standard input)")
        data = read_stream(name)
        if not data:
            raise InputError(f"{name}: no input (the pipe gave no bytes)")
        check_magic(name, data[:16], extension)  # text: the separator is detected
        return name, data, hashlib.sha256(data).hexdigest()
    if extension not in VOTE_EXTENSIONS:
        if os.path.getsize(name):  # compressed data is named as such (votes.csv.gz)
            check_magic(name, file_head(name), extension)
        shown = f"'{extension}'" if extension else "none"
        raise InputError(f"{name}: unknown extension {shown} "
                         "(expected .npy, .npz, .csv, .tsv, or - for standard input)")
    if os.path.getsize(name) == 0:
        raise InputError(f"{name}: the file is empty")
    if background:
        head = file_head(name)
        check_magic(name, head, extension)
        return name, name, _hashing(name)
    digest, head = file_sha256(name, head=True)
    check_magic(name, head, extension)
    return name, name, digest


_STDIN_READ: weakref.WeakSet = weakref.WeakSet()  # the standard inputs read (once each)


def read_stdin() -> bytes:
    """All of standard input's bytes (``InputError`` when closed, ``cmd <&-``, or unreadable)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("<stdin>: no input (the standard input is closed)")
    if stream in _STDIN_READ:
        raise InputError("<stdin>: already read for another input ('-' can stand for one "
                         "input only)")
    _STDIN_READ.add(stream)
    try:
        return read_all(stream, "<stdin>")
    except (OSError, ValueError) as error:  # ValueError: read of a closed file
        if isinstance(error, InputError):
            raise
        reason = getattr(error, "strerror", None) or "closed"
        raise InputError(f"<stdin>: cannot be read ({reason})") from None


def is_regular(name: str) -> bool:
    """Whether ``name`` is a regular file (not a FIFO, a device or a socket)."""
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except OSError as error:
        raise unreadable(name, error) from None


def read_stream(name: str) -> bytes:
    """Every byte of a FIFO or another non-regular file (readable once, not mappable)."""
    try:
        with open(name, "rb") as handle:
            return read_all(handle, name)
    except OSError as error:
        raise unreadable(name, error) from None


def read_all(handle, name: str) -> bytes:
    """Every byte of a stream, 64 MB at a time: head checked first (``check_magic`` refuses
    ``/dev/zero``); refused past ``max_elements()`` float64 values' bytes (bounded memory)."""
    limit, parts, size = 8 * max_elements() + (1 << 20), [], 0
    while part := handle.read(1 << 26):
        if not parts:
            check_magic(name, part[:16], os.path.splitext(name)[1].lower())
        parts.append(part)
        size += len(part)
        if size > limit:
            raise InputError(f"{name}: more than {limit:,} bytes, more than an array of "
                             "PATE_MAX_ELEMENTS values holds")
    return b"".join(parts)


def file_head(name: str) -> bytes:
    """A file's first 16 bytes (its format's magic)."""
    try:
        with open(name, "rb") as handle:
            return handle.read(16)
    except OSError as error:
        raise unreadable(name, error) from None


def _hashing(name: str):
    """A function returning ``file_sha256(name)``, computed on a daemon thread from now (a run
    stopping on bad input does not wait for it)."""
    import threading

    outcome: list = []

    def run() -> None:
        try:
            outcome.append((file_sha256(name), None))
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            outcome.append((None, error))

    thread = threading.Thread(target=run, name="pate-sha256", daemon=True)
    thread.start()

    def wait() -> str:
        thread.join()
        digest, error = outcome[0]
        if error is not None:
            raise error
        return digest

    return wait


def digest_of(digest) -> str:
    """The sha256 ``open_input`` gave: a string, or the function that waits for it."""
    return digest() if callable(digest) else digest


def file_sha256(path, *, head: bool = False):
    """The sha256 of a file's bytes (with ``head``: and its first 16 bytes)."""
    digest = hashlib.sha256()
    first = hash_into(digest, path)
    return (digest.hexdigest(), first) if head else digest.hexdigest()


def recorded_sha256(path) -> str | None:
    """:func:`file_sha256`, cached by path, size and modification time; None for a pipe or
    device (its bytes are gone)."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise unreadable(os.fspath(path), error) from None
    if not stat.S_ISREG(info.st_mode):
        return None
    return _sha256_of_state(os.fspath(path), (info.st_size, info.st_mtime_ns))


def votes_state(votes) -> tuple | None:
    """What a later pass over ``votes`` checks to see they are unchanged: a memory map's file
    size and modification time (a rewritten file would be read, or fault if shorter), an
    in-memory array's CRC-32; None for rows formed when read (text, sparse, predictions),
    which later writes do not reach."""
    if isinstance(votes, np.memmap) and isinstance(votes.filename, str):
        info = os.stat(votes.filename)
        return ("file", info.st_size, info.st_mtime_ns)
    if type(votes) is np.ndarray and votes.flags.c_contiguous:
        return ("array", zlib.crc32(memoryview(votes).cast("B")))
    return None


@functools.lru_cache(maxsize=32)
def _sha256_of_state(path: str, state: tuple[int, int]) -> str:
    """``file_sha256(path)``, cached by the file's ``state`` (size, modification time)."""
    return file_sha256(path)


def hash_into(digest, path) -> bytes:
    """Add a file's bytes to ``digest`` (a ``hashlib`` object); return its first 16 bytes."""
    first = b""
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                first = first or block[:16]
                digest.update(block)
    except OSError as error:
        raise unreadable(os.fspath(path), error) from None
    return first


def given_matrix(value, *, name: str, key: str, index_col: int | None = None,
                 expected: str = "numbers"):
    """A matrix given as a path or, to the Python API, as an array.

    Args:
      value: a path (or ``-``), an array, a list of rows or a DataFrame.
      name, expected: how messages name an array given directly, and its values.
      key, index_col: the ``.npz`` member, a CSV/TSV column to drop.

    Returns:
      ``(name, array, labels, sha256)``; an array's labels and sha256 are None.

    Raises:
      InputError: a file that cannot be read, or an array that is not numbers.
    """
    if not isinstance(value, (np.ndarray, list, tuple)) and not hasattr(value, "to_numpy"):
        shown, source, digest = open_input(value)
        array, labels = read_matrix(shown, source, key=key, index_col=index_col)
        return shown, array, labels, digest
    try:
        array = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    except (ValueError, TypeError):  # ragged lists
        raise InputError(f"{name}: not a table of {expected} (rows of different lengths?)") \
            from None
    if array.dtype.kind not in "biuf":  # as a file's (checks.check_dtype)
        raise InputError(f"{name}: holds {array.dtype} values; expected {expected}")
    return name, array, None, None


def read_matrix(name, source, *, key, index_col: int | None = None, indexed: bool = False):
    """A C-contiguous numeric array and an ``.npz``'s optional ``labels``; ``index_col`` drops
    that CSV/TSV column; ``indexed``: the caller drops pandas' index column (its header passes)."""
    array, labels = _read_matrix(name, source, key, index_col, indexed)
    return c_order(array), labels


def _read_matrix(name, source, key, index_col=None, indexed=False):
    kept = 0 if indexed and index_col is None else index_col  # read_text's index column
    if isinstance(source, bytes):
        if source.startswith(NPY_MAGIC):
            return _binary(name, read_npy(name, source), index_col), None
        if source.startswith(b"PK"):
            array, labels = read_npz(name, source, key)
            return _binary(name, array, index_col), labels
        return drop_column(name, read_text(name, decode_text(name, source), None,
                                           index_col=kept), index_col), None
    extension = os.path.splitext(source)[1].lower()
    if extension == ".npy":
        return _binary(name, read_npy(name, source), index_col), None
    if extension == ".npz":
        array, labels = read_npz(name, source, key)
        return _binary(name, array, index_col), labels
    text = read_text(name, read_text_file(name), "\t" if extension == ".tsv" else ",",
                     index_col=kept)
    return drop_column(name, text, index_col), None


def _binary(name, array, index_col):
    if index_col is not None:
        raise InputError(f"{name}: --index-col applies to CSV/TSV inputs, not .npy/.npz")
    return array


def drop_column(name, array: np.ndarray, index_col: int | None) -> np.ndarray:
    """``array`` without column ``index_col`` (``--index-col``); ``array`` when None."""
    if index_col is None:
        return array
    if array.ndim != 2 or not 0 <= index_col < array.shape[1]:
        columns = array.shape[1] if array.ndim == 2 else 1
        raise InputError(f"{name}: --index-col {index_col} is outside its {columns} "
                         f"column(s) (columns count from 0)")
    return np.delete(array, index_col, axis=1)


def looks_like_index(array: np.ndarray) -> bool:
    """Whether ``array``'s first column is exactly 0..N-1 (a pandas-written index)."""
    if array.ndim != 2 or array.shape[1] < 2 or array.shape[0] < 2:
        return False
    return bool(np.array_equal(np.asarray(array[:, 0], dtype=np.float64),
                               np.arange(array.shape[0], dtype=np.float64)))


INDEX_HINT = "looks like a pandas index column: use --index-col 0 or write with index=False"


def c_order(array: np.ndarray) -> np.ndarray:
    """``array`` if C-contiguous (a memory map stays mapped), else a C-order copy, so row
    reductions run in the same order for every layout."""
    if array.ndim < 2 or array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array)


def read_text_file(name) -> str:
    """The text of a file, decoded by ``decode_text``."""
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise unreadable(name, error) from None
    return decode_text(name, data)


def decode_text(name, data: bytes) -> str:
    """UTF-8 text without a leading BOM; else an ``InputError`` naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        compression = compression_of(data[:16])
        if compression:
            raise InputError(f"{name}: is {compression}-compressed, not text; decompress it "
                             "first") from None
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise InputError(f"{name}: is UTF-16 text, not UTF-8 (save it as UTF-8)") \
                from None
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{name}: is not UTF-8 text (byte 0x{data[error.start]:02x} on "
                         f"line {line}); save it as UTF-8") from None


def read_text(name, text, separator, *, index_col: int | None = None):
    """Parse CSV/TSV text: an optional header row (no unquoted cell a number: ``"30","20"`` is
    votes, ``"a","b"`` a header), then numbers only. Pandas' headers are refused with a hint:
    ``,0,1,...`` (its index column, unless ``index_col`` drops a column) and ``0,1,...,K-1``
    (K >= 3, unnamed columns). Lines end at ``\n``, ``\r\n`` or ``\r`` as in pandas (not at a
    form feed)."""
    import pandas as pd
    lines = LINE_ENDS.split(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError(f"{name}: the file is empty")
    lead = next(number for number, line in enumerate(lines) if line.strip())  # blank lines
    if separator is None:
        separator = text_separator(lines[lead])
    header_cells = first_cells(lines[lead], separator)
    has_header = is_header(header_cells)
    _check_pandas_header(name, header_cells, index_col)
    if has_header and len(lines) == lead + 1:
        raise InputError(f"{name}: has a header but no rows")
    options = dict(sep=separator, header=None, skiprows=lead + 1 if has_header else 0,
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
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, **options)
    except pd.errors.ParserError as error:  # an unclosed quote...
        raise InputError(f"{name}: not a valid CSV ({str(error).strip()})") from None
    cells = frame.to_numpy(dtype=object)
    values = pd.DataFrame(cells).apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    for row, col in zip(*np.nonzero(np.isnan(values)), strict=True):
        cell = str(cells[row, col]).strip(" \t")  # (a form feed or such shown, \x0c)
        if cell.lower() in ("nan", "+nan", "-nan"):
            continue  # a number, but not finite: reported by the vote checks
        shown = "empty" if cell.strip() == "" else f"{cell!r} is not a number"
        raise InputError(f"{name}: line {numbered[row][0]}, column {col + 1}: {shown}")
    return values


# Where a text table's lines end, as pandas' parser ends them.
LINE_ENDS = re.compile(r"\r\n|\r|\n")


def _check_pandas_header(name, cells: list[str], index_col: int | None) -> None:
    """Refuse the first lines pandas' ``to_csv`` writes above unnamed columns, and a long
    table's (here only through a stream: files go to ``inputs.long_table``)."""
    if {"query", "class", "count"} <= {cell.lower() for cell in cells}:
        raise InputError(f"{name}: a long table (query,class,count) is read from a .csv, .tsv "
                         "or .parquet file (with --classes K), not through standard input or "
                         "a pipe")
    if _pandas_header(cells) and index_col is None:
        raise InputError(f"{name}: its first line ,0,...,{len(cells) - 2} is the header pandas "
                         "writes above an index column: --index-col 0 drops it (the API's "
                         "index_col=0), or write with index=False")
    if len(cells) >= 3 and cells == [str(number) for number in range(len(cells))]:
        raise InputError(f"{name}: its first line 0,1,...,{len(cells) - 1} looks like pandas' "
                         "column names (write with header=False, or name the columns; if it is "
                         "a row of numbers, put a header line of names above it)")


def text_separator(line: str) -> str:
    """A CSV/TSV text's separator, from its first line: a tab where it has tabs and no comma."""
    return "\t" if "\t" in line and "," not in line else ","


def is_header(cells: list[str]) -> bool:
    """Whether a first row's cells are a header: none a number, or pandas' own."""
    return all(not is_number(cell) for cell in cells) or _pandas_header(cells)


def _pandas_header(cells: list[str]) -> bool:
    """``,0,1,...,K-1``: the header pandas writes for an index and unnamed columns."""
    return (len(cells) > 1 and cells[0] == ""
            and cells[1:] == [str(number) for number in range(len(cells) - 1)])


def first_cells(line: str, separator: str) -> list[str]:
    """The cells of one CSV line, unquoted and stripped."""
    try:
        cells = next(csv.reader([line], delimiter=separator, skipinitialspace=True))
    except (csv.Error, StopIteration):
        cells = line.split(separator)
    return [cell.strip() for cell in cells] or [""]


def is_number(cell: str) -> bool:
    try:
        text_number(cell)
    except ValueError:
        return False
    return True


def text_number(cell: str) -> float:
    """A table cell's number: ``float``'s syntax without digit-group underscores (pandas
    refuses ``1_0``, ``float`` reads 10); ``ValueError`` otherwise."""
    if "_" in cell:
        raise ValueError(f"{cell!r} is not a number")
    return float(cell)


def small_csv(name: str, text: str):
    """A small CSV table (groups, teacher groups, rounds) as a DataFrame of strings, empty
    cells ``""``; ``InputError`` for a row wider than the header (pandas would silently take
    its first cell as the row's index and shift the rest) or text that is no CSV."""
    import pandas as pd
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    header = next(reader, [])
    names = [cell.strip().lower() for cell in header]
    twice = next((cell for number, cell in enumerate(names) if cell in names[:number]), None)
    if twice is not None:
        raise InputError(f"{name}: the column {twice!r} is named twice in the header")
    for row in reader:
        if len(row) > len(header):
            raise InputError(f"{name}: line {reader.line_num} has {len(row)} fields but the "
                             f"header has {len(header)} ({','.join(header)})")
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False,
                           skipinitialspace=True)
    except pd.errors.ParserError as error:
        raise InputError(f"{name}: not a valid CSV ({str(error).strip()})") from None


def open_text(path) -> tuple[str, str]:
    """``(name, text)`` of a small text file, with the usual one-line errors."""
    name = check_file(path)
    text = read_text_file(name)
    if not text.strip():
        raise InputError(f"{name}: the file is empty")
    return name, text
