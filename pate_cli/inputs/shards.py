"""Votes in shards: a directory of ``.npy`` files, or a glob of them, read as one matrix.

``pate-analyze shards/`` or ``'votes_*.npy'`` reads the pieces in string order of their names
(number them with leading zeros), memory-mapped piece by piece, never concatenated; each is a
2-D ``.npy`` with the same number of classes. The sha256 is that of the pieces' bytes in that
order (``cat shards/*.npy | sha256sum``). A cluster's worker maps a ``.npy`` file or shards
itself by absolute path (:class:`NpyRows`): workers must see that path.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .readers import hash_into
from .rows import FormedRows, drop_mapped_rows, rows_in

GLOB_CHARACTERS = "*?["


def is_shard_set(path) -> bool:
    """Whether ``path`` names shards (a directory, or a pattern with a glob character)."""
    if path is None or not isinstance(path, (str, os.PathLike)) or str(path) == "-":
        return False
    text = os.fspath(path)
    return os.path.isdir(text) or (any(c in text for c in GLOB_CHARACTERS)
                                   and not os.path.exists(text))


def shard_paths(path) -> list[str]:
    """The ``.npy`` pieces ``path`` names, in name order (a one-line error if none)."""
    text = os.fspath(path)
    pattern = os.path.join(text, "*.npy") if os.path.isdir(text) else text
    named = glob.glob(pattern)
    broken = sorted(name for name in named if os.path.islink(name) and not os.path.exists(name))
    if broken:  # e.g. git-annex or DVC content not fetched: never a silently shorter file
        raise InputError(f"{text}: shard {broken[0]} is a symbolic link to a file that does "
                         "not exist (fetch its content, or remove the link)")
    found = sorted(name for name in named if os.path.isfile(name))
    if not found and os.path.isdir(text):
        raise InputError(f"{text}: is a directory with no .npy shards in it (give a vote "
                         "file, or a directory of .npy pieces of one vote matrix)")
    if not found:
        raise InputError(f"{text}: no .npy shards found for this pattern")
    other = [name for name in found if not name.lower().endswith(".npy")]
    if other:
        raise InputError(f"{text}: {other[0]} is not a .npy file (shards are .npy pieces of "
                         "one vote matrix)")
    return found


def input_files(named) -> list[tuple[str, str]]:
    """``(how to show it, file)`` pairs of the files ``named`` (``(option, path)`` pairs, option
    ``""`` for an argument) holds, each shard apart, so outputs do not overwrite them. Stdin,
    None and unlistable shards give none (reading them says why)."""
    files = []
    for option, path in named:
        if path is None or str(path) == "-":
            continue
        shown = f"{option} {path}".lstrip()
        if is_shard_set(path):
            try:
                files += [(shown, shard) for shard in shard_paths(path)]
            except InputError:
                pass
        else:
            files.append((shown, os.fspath(path)))
    return files


class ShardedVotes(FormedRows):
    """``(queries, classes)`` votes held in memory-mapped ``.npy`` pieces, one after another,
    indexed as one memory map (:class:`~.rows.FormedRows`)."""

    def __init__(self, paths: list[str], pieces: list[np.ndarray]):
        self.paths = list(paths)
        self.pieces = pieces
        sizes = [piece.shape[0] for piece in pieces]
        self.starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.shape = (int(self.starts[-1]), int(pieces[0].shape[1]))
        self.dtype = np.result_type(*(piece.dtype for piece in pieces))

    def _rows(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo .. hi-1``, joined from the pieces that hold them."""
        first = int(np.searchsorted(self.starts, lo, side="right")) - 1
        parts = []
        while lo < hi:
            piece, start = self.pieces[first], int(self.starts[first])
            stop = min(hi, int(self.starts[first + 1]))
            parts.append(np.asarray(piece[lo - start : stop - start], dtype=self.dtype))
            lo, first = stop, first + 1
        if not parts:
            return np.empty((0, self.shape[1]), dtype=self.dtype)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        which = np.searchsorted(self.starts, rows, side="right") - 1
        for number in np.unique(which):
            chosen = which == number
            out[chosen] = self.pieces[number][rows[chosen] - self.starts[number]]
        return out

    def drop_rows(self, lo: int, hi: int) -> None:
        """Release the pages of rows ``lo .. hi-1`` once read (``inputs.rows``)."""
        first = int(np.searchsorted(self.starts, lo, side="right")) - 1
        while lo < hi and first < len(self.pieces):
            start, stop = int(self.starts[first]), int(self.starts[first + 1])
            drop_mapped_rows(self.pieces[first], lo - start, min(hi, stop) - start)
            lo, first = min(hi, stop), first + 1


def open_shards(path, read_piece, *, hashed: bool = True) -> tuple[str, ShardedVotes, str]:
    """``(display name, votes, sha256)`` of the shards ``path`` names; ``read_piece(name)``
    maps and checks one. Without ``hashed`` the sha256 is empty (a worker's, the client hashed)."""
    text = os.fspath(path)
    paths = shard_paths(text)
    digest = hashlib.sha256()
    pieces = []
    for name in paths:
        if hashed:
            hash_into(digest, name)
        piece = read_piece(name)
        if piece.ndim != 2:
            raise InputError(f"{name}: a shard must be a 2-D (queries x classes) matrix, "
                             f"got shape {piece.shape}")
        if pieces and piece.shape[1] != pieces[0].shape[1]:
            raise InputError(f"{name}: has {piece.shape[1]} classes but {paths[0]} has "
                             f"{pieces[0].shape[1]} (the shards of one vote matrix share "
                             "their columns)")
        pieces.append(piece)
    return text, ShardedVotes(paths, pieces), digest.hexdigest() if hashed else ""


@dataclass(frozen=True)
class NpyRows:
    """Rows of a ``.npy`` file (or of shards) a worker reads itself, by path, memory-mapped."""

    path: str
    shape: tuple[int, ...]

    def opened(self) -> np.ndarray:
        """The file (or shards), memory-mapped (a task opens it once for its chunks)."""
        return _opened(self.path, self.shape)

    def block(self, rows, lo: int = 0, hi: int | None = None, *, votes=None) -> np.ndarray:
        """Rows ``lo .. hi-1`` of the task's ``rows`` (a slice or index array) as
        :func:`rows_of` gives them; ``votes``: the file as ``opened()`` gave it."""
        return rows_in(self.opened() if votes is None else votes, rows, lo, hi)


def _opened(path: str, shape: tuple[int, ...]):
    """``path`` (a ``.npy`` file or shards) memory-mapped; a one-line error if this worker
    cannot see it as the client did."""
    hint = ("(workers read .npy inputs by path: put the files where they see them under "
            "the same names)")
    try:
        votes = (open_shards(path, _mapped_piece, hashed=False)[1] if is_shard_set(path)
                 else np.load(path, mmap_mode="r", allow_pickle=False))
    except InputError as error:
        raise InputError(f"a worker cannot read {path}: {error} {hint}") from None
    except OSError as error:
        raise InputError(f"a worker cannot read {path}: {error.strerror or error} {hint}") \
            from None
    if tuple(votes.shape) != tuple(shape):
        raise InputError(f"a worker's {path} has shape {tuple(votes.shape)}, not "
                         f"{tuple(shape)}: the workers see another file under this name")
    return votes


def task_source(votes, path: str | None):
    """``NpyRows`` when ``votes`` maps the ``.npy`` file or shards ``path``, else None (each
    task carries its votes)."""
    if path is None:
        return None
    if isinstance(votes, ShardedVotes) or (isinstance(votes, np.memmap)
                                           and str(path).lower().endswith(".npy")):
        return NpyRows(os.path.abspath(str(path)), tuple(votes.shape))
    return None


def _mapped_piece(name: str) -> np.ndarray:
    return np.load(name, mmap_mode="r", allow_pickle=False)
