"""What a process's points keep from one to the next (``PointMemory``)."""

from __future__ import annotations

import warnings

from ..analysis.run import SharedWork
from ..errors import InputError, PateWarning
from ..inputs.readers import file_sha256
from ..inputs.votes import load_student, load_votes

# Kept across points (5 seeds of 25,000 x 150 noise: 150 MB; one sigma's curves: 60 MB).
SHARED_NOISE_BYTES = 256 << 20
SHARED_CURVE_BYTES = 128 << 20


class PointMemory:
    """What one process's points keep: each source's vote set (and student), opened once and
    checked against the planned sha256, and the shared noise blocks and curves
    (``SharedWork``, up to ``SHARED_NOISE_BYTES``/``SHARED_CURVE_BYTES``)."""

    def __init__(self) -> None:
        self.sources: dict = {}
        self.shared = SharedWork(SHARED_NOISE_BYTES, SHARED_CURVE_BYTES)

    def opened(self, source):  # a points.VoteSource
        """The vote set (and student) of ``source``, opened the first time it is asked."""
        if source not in self.sources:
            self.sources[source] = _open_source(source)
        return self.sources[source]


def _open_source(source):
    with warnings.catch_warnings():  # its notes were given when the sweep opened it
        warnings.simplefilter("ignore", PateWarning)
        vote_set = load_votes(source.path, labels=source.labels, index_col=source.index_col,
                              classes=source.classes, columns=source.columns,
                              queries=source.label_queries)
    _check_same(source.file, vote_set.sha256, source.sha256)
    for path, digest in ((source.labels, source.labels_sha256),
                         (source.student, source.student_sha256)):
        if path is not None:
            _check_same(path, file_sha256(path), digest)
    student = None
    if source.student is not None:
        student = load_student(source.student, queries=vote_set.queries,
                               classes=vote_set.classes)
    return vote_set, student


def _check_same(name: str, found: str, expected: str) -> None:
    if found != expected:
        raise InputError(f"{name}: the file this worker reads has sha256 {found[:12]}..., "
                         f"not {expected[:12]}... (workers must see the same file)")
