"""Sparse vote files: token votes over a vocabulary (cli:formats, math:sparse), read into one
``SparseVotes`` (CSR) from a ``scipy.sparse.save_npz`` matrix (CSR, CSC or COO, compressed or
not; its shape gives the vocabulary; optionally an integer ``output`` array, one per query) or
a long table (with ``--classes K``). Nothing is unpickled. Each problem is one line naming the
file, query and class: a duplicate entry, a class outside the vocabulary, unsorted or missing
queries, a negative or non-finite count, rows with different totals (unless ``--teachers``), a
bad output id.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ..errors import InputError
from ..vote_rows import SparseVotes
from .checks import show_number
from .long_table import ColumnMap, header_cells, is_long_table, not_a_long_table, read_long_table
from .npy_files import ARCHIVE_ERRORS, load_error
from .output_ids import checked_ids
from .rows import drop_mapped_rows

# Entries checked at once (a memory-mapped archive is paged in and let go a part at a time).
_CHECK_ENTRIES = 1 << 22
_SCIPY_MEMBERS = {"format.npy", "shape.npy"}  # scipy.sparse.save_npz's signature


def sparse_kind(path, columns: ColumnMap | None = None) -> str | None:
    """``"npz"`` for a ``save_npz`` archive, ``"table"`` for a long table (``.parquet``, or a
    ``.csv``/``.tsv`` whose header names ``columns``' three), else None."""
    if str(path) == "-" or not os.path.isfile(path):
        return None
    extension = os.path.splitext(str(path))[1].lower()
    if extension == ".npz":
        try:
            with zipfile.ZipFile(path) as archive:
                members = set(archive.namelist())
        except (zipfile.BadZipFile, OSError):
            return None
        return "npz" if _SCIPY_MEMBERS <= members else None
    if extension == ".parquet":
        return "table"
    if extension in (".csv", ".tsv"):
        return "table" if is_long_table(header_cells(path), columns or ColumnMap()) else None
    return None


def read_sparse(name: str, kind: str, *, classes: int | None,
                columns: ColumnMap | None = None) -> tuple[SparseVotes, np.ndarray | None]:
    """``(votes, outputs or None)`` of a sparse file (a long table's columns by ``columns``)."""
    if kind != "npz":
        if classes is None:
            raise InputError(f"{name}: a long table (query,class,count) needs --classes K, "
                             "the vocabulary size")
        indptr, cols, data, output = read_long_table(name, classes, columns or ColumnMap())
        return _from_csr(name, indptr, cols, data, output, classes)
    if columns is not None and columns.given:
        raise not_a_long_table(name, classes=None, columns=columns)
    indptr, rows, cols, data, shape, output = _read_scipy(name)
    if classes is not None and classes != shape[1]:
        raise InputError(f"{name}: has {shape[1]} classes (its shape), but --classes is "
                         f"{classes}")
    if indptr is not None:
        return _from_csr(name, indptr, cols, data, output, shape[1])
    return _compressed(name, rows, cols, data, output, *shape)


def sparse_from_matrix(matrix, name: str = "the sparse votes") -> SparseVotes:
    """The ``SparseVotes`` of an API SciPy sparse matrix, copied as canonical CSR and checked
    as a ``save_npz`` file's entries are."""
    csr = matrix.tocsr(copy=True)
    csr.sum_duplicates()
    csr.sort_indices()
    if len(csr.shape) != 2 or csr.shape[0] < 1:
        raise InputError(f"{name}: expected a 2-D sparse matrix with a query, got shape "
                         f"{csr.shape}")
    if csr.data.dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {csr.data.dtype} counts; expected numbers")
    return _from_csr(name, csr.indptr, csr.indices, csr.data, None, int(csr.shape[1]))[0]


def _read_scipy(name: str):
    """COO triplets, shape and ``output`` of a ``save_npz`` archive, without pickles."""
    try:
        with np.load(name, allow_pickle=False) as loaded:
            archive = _Members(name, loaded)
            kind = str(loaded["format"].item().decode("ascii")
                       if loaded["format"].dtype.kind == "S" else loaded["format"].item())
            stored_shape = loaded["shape"]
            shape = tuple(int(v) for v in stored_shape)
            data = archive["data"]
            output = loaded["output"] if "output" in loaded.files else None
            indptr = None
            if kind == "coo":
                rows, cols = archive["row"], archive["col"]
            elif kind == "csr":
                indptr, rows, cols = loaded["indptr"], None, archive["indices"]
            elif kind == "csc":
                pointers, indices = loaded["indptr"], archive["indices"]
                rows = indices
                cols = np.repeat(np.arange(pointers.size - 1), np.diff(pointers))
            else:
                raise InputError(f"{name}: sparse format {kind!r} is not read (save it as "
                                 "CSR or COO)")
    except InputError:
        raise
    except ARCHIVE_ERRORS as error:
        raise load_error(name, error, "sparse matrix") from None
    if len(shape) != 2:
        raise InputError(f"{name}: expected a 2-D sparse matrix, got shape {shape}")
    if shape[1] > 2**53:  # as --classes (inputs.votes.LARGEST_VOCABULARY)
        raise InputError(f"{name}: its shape declares {shape[1]:,} classes, more than 2^53 "
                         "(the largest vocabulary read)")
    for what, ids in (("shape entries", stored_shape), ("row pointers", indptr), ("row ids", rows),
                      ("class ids", cols)):  # a fractional id would be truncated
        if ids is not None and np.asarray(ids).dtype.kind not in "iu":
            raise InputError(f"{name}: its {what} are {np.asarray(ids).dtype}; expected "
                             "integers (as scipy.sparse.save_npz writes them)")
    if data.dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {data.dtype} counts; expected numbers")
    if shape[0] < 1:
        raise InputError(f"{name}: has no queries (0 rows)")
    if output is not None:
        output = _checked_output(name, np.asarray(output), shape[0])
    if indptr is not None:
        indptr = np.asarray(indptr, dtype=np.int64)
        if indptr.size != shape[0] + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) \
                or indptr[-1] != data.size or cols.size != data.size:
            raise InputError(f"{name}: its CSR arrays do not fit its shape {shape}")
        if _canonical(indptr, cols):  # rows sorted and free of duplicates: kept as they are
            return indptr, None, cols, data, shape, output
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    order = np.lexsort((cols, rows))
    return (None, np.asarray(rows, np.int64)[order], np.asarray(cols, np.int64)[order],
            np.asarray(data)[order], shape, output)


class _Members:
    """An archive's arrays: an uncompressed member memory-mapped in place, a compressed one
    read."""

    def __init__(self, name: str, loaded):
        self.name, self.loaded = name, loaded
        with zipfile.ZipFile(name) as archive:
            self.entries = {info.filename: info for info in archive.infolist()}

    def __getitem__(self, key: str) -> np.ndarray:
        info = self.entries.get(key + ".npy")
        if info is None or info.compress_type != zipfile.ZIP_STORED:
            return self.loaded[key]
        with open(self.name, "rb") as handle:
            handle.seek(info.header_offset)
            local = handle.read(30)
            handle.seek(info.header_offset + 30 + int.from_bytes(local[26:28], "little")
                        + int.from_bytes(local[28:30], "little"))
            version = np.lib.format.read_magic(handle)
            shape, fortran, dtype = (np.lib.format.read_array_header_1_0(handle)
                                     if version == (1, 0)
                                     else np.lib.format.read_array_header_2_0(handle))
            offset = handle.tell()
        if dtype.hasobject:
            raise ValueError("pickled object array")
        if not shape or 0 in shape:
            return np.zeros(shape, dtype=dtype)
        return np.memmap(self.name, dtype=dtype, mode="r", offset=offset, shape=shape,
                         order="F" if fortran else "C")


def _canonical(indptr: np.ndarray, cols: np.ndarray) -> bool:
    """Whether each row's class ids strictly ascend (sorted, no duplicates), chunk by chunk."""
    starts = np.zeros(cols.size, dtype=bool)
    starts[indptr[:-1][indptr[:-1] < cols.size]] = True  # a row's first entry
    for lo in range(0, cols.size, _CHECK_ENTRIES):
        hi = min(cols.size, lo + _CHECK_ENTRIES + 1)
        part = np.asarray(cols[lo:hi], dtype=np.int64)
        if not np.all((np.diff(part) > 0) | starts[lo + 1 : hi]):
            return False
        drop_mapped_rows(cols, lo, hi)
    return True


def _release_entries(votes: SparseVotes, lo: int, hi: int) -> None:
    """Let the file pages of rows ``lo .. hi-1`` go once read (``inputs.rows``)."""
    first, last = int(votes.indptr[lo]), int(votes.indptr[hi])
    drop_mapped_rows(votes.indices, first, last)
    drop_mapped_rows(votes.data, first, last)


def _checked_output(name, output: np.ndarray, queries: int) -> np.ndarray:
    if output.ndim == 2 and output.shape[1] == 1:
        output = output[:, 0]
    if output.ndim != 1:
        raise InputError(f"{name}: array 'output' has shape {output.shape}: expected one output "
                         "id per query (a single column)")
    if output.shape[0] != queries:
        raise InputError(f"{name}: array 'output' has {output.shape[0]} entries but there are "
                         f"{queries} queries")
    return checked_ids(name, output)


def _compressed(name, rows, cols, data, output, queries: int,
                vocabulary: int) -> tuple[SparseVotes, np.ndarray | None]:
    """Checked CSR arrays from (query, class) triplets sorted by query, then class."""
    bad = np.flatnonzero((rows < 0) | (rows >= queries))
    if bad.size:
        raise InputError(f"{name}: entry {bad[0]} has query {rows[bad[0]]}, outside "
                         f"0..{queries - 1}")
    same = np.flatnonzero((np.diff(rows) == 0) & (np.diff(cols) == 0))
    if same.size:
        raise InputError(f"{name}: query {rows[same[0]]}, class {cols[same[0]]} appears twice "
                         "(duplicate entry)")
    stored = np.bincount(rows, minlength=queries)
    empty = np.flatnonzero(stored == 0)
    if empty.size:
        raise InputError(f"{name}: query {empty[0]} has no entries (every query needs its "
                         "non-zero counts)")
    indptr = np.concatenate(([0], np.cumsum(stored)))
    return _from_csr(name, indptr, cols, data, output, vocabulary)


def _from_csr(name, indptr, cols, data, output,
              vocabulary: int) -> tuple[SparseVotes, np.ndarray | None]:
    """``SparseVotes`` from canonical CSR arrays, checked entry by entry (messages name the
    entry's query and class)."""
    if vocabulary < 2:
        raise InputError(f"{name}: needs at least 2 classes, got {vocabulary}")

    def query_of(entry: int) -> int:
        return int(np.searchsorted(indptr, entry, side="right")) - 1

    for lo in range(0, cols.size, _CHECK_ENTRIES):  # a chunk of entries at a time
        part, values = cols[lo : lo + _CHECK_ENTRIES], data[lo : lo + _CHECK_ENTRIES]
        bad = np.flatnonzero((part < 0) | (part >= vocabulary))
        if bad.size:
            raise InputError(f"{name}: query {query_of(lo + bad[0])}, class {part[bad[0]]} is "
                             f"outside the vocabulary 0..{vocabulary - 1}")
        bad = np.flatnonzero(~np.isfinite(values) if values.dtype.kind == "f"
                             else np.zeros(0, dtype=bool))
        if bad.size:
            raise InputError(f"{name}: query {query_of(lo + bad[0])}, class {part[bad[0]]} is "
                             f"not finite ({show_number(values[bad[0]])})")
        bad = np.flatnonzero(values < 0)
        if bad.size:
            raise InputError(f"{name}: query {query_of(lo + bad[0])}, class {part[bad[0]]} is "
                             f"negative ({show_number(values[bad[0]])}); votes are counts")
        drop_mapped_rows(part, 0, part.size)
        drop_mapped_rows(values, 0, values.size)
    stored = np.diff(indptr)
    empty = np.flatnonzero(stored == 0)
    if empty.size:
        raise InputError(f"{name}: query {empty[0]} has no entries (every query needs its "
                         "non-zero counts)")
    index_type = np.int32 if vocabulary < 2**31 else np.int64
    if cols.dtype != index_type:
        cols = np.asarray(cols, dtype=index_type)
    votes = SparseVotes(indptr, cols, data, int(vocabulary), int(stored.max()),
                        release=_release_entries)
    return votes, output


def row_totals(votes: SparseVotes) -> np.ndarray:
    """The sum of each row's counts (float64), a block of rows at a time."""
    queries = votes.shape[0]
    totals = np.empty(queries)
    rows = max(1, _CHECK_ENTRIES // max(1, votes.width))
    for lo in range(0, queries, rows):
        hi = min(queries, lo + rows)
        first, last = int(votes.indptr[lo]), int(votes.indptr[hi])
        values = np.asarray(votes.data[first:last], dtype=np.float64)
        totals[lo:hi] = np.add.reduceat(values, np.asarray(votes.indptr[lo:hi]) - first)
        votes.drop_rows(lo, hi)
    return totals
