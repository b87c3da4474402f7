"""Synthetic votes shared by test files in different layer folders."""

from __future__ import annotations

import numpy as np

# Sparse and dense forms of the same votes agree within this (math:tolerance).
TOLERANCE = 1e-12


def as_sparse(dense: np.ndarray):
    """``dense`` rows as a ``SparseVotes`` (CSR, one padded width: the widest row)."""
    import scipy.sparse as sp

    from pate_cli.vote_rows import SparseVotes

    matrix = sp.csr_matrix(dense)
    matrix.sort_indices()
    width = int(max(1, np.diff(matrix.indptr).max()))
    return SparseVotes(matrix.indptr, matrix.indices, matrix.data, dense.shape[1], width)


def synthetic_votes(queries=600, classes=5, teachers=50, seed=3):
    """Votes with a spread of agreement, and true labels (the intended class)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(classes, size=queries)
    agreement = rng.uniform(0.2, 0.95, size=queries)
    probabilities = np.full((queries, classes), 0.0) + ((1 - agreement) / classes)[:, None]
    probabilities[np.arange(queries), truth] += agreement
    votes = np.stack([rng.multinomial(teachers, p) for p in probabilities])
    return votes.astype(np.int64), truth


# Per-query columns a run's chunk size must not change (same bits).
CHUNKED_COLUMNS = ("answered", "label", "log_q", "log_pr_answered", "epsilon_query",
                   "epsilon_cumulative", "order_cumulative", "rdp_selection", "rdp_answer",
                   "rdp_total")


def assert_chunk_size_changes_nothing(votes, mechanism, **setting):
    """``analyze_votes`` at chunk sizes 1, 7 and 100,000: every column and the budget equal."""
    from pate_cli.analysis import analyze_votes
    runs = [analyze_votes(votes, mechanism, chunk_size=size, **setting)
            for size in (1, 7, 100_000)]
    for name in CHUNKED_COLUMNS:
        for run in runs[1:]:
            np.testing.assert_array_equal(getattr(runs[0], name), getattr(run, name))
    assert runs[0].budget == runs[1].budget == runs[2].budget
