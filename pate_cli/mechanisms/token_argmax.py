"""The noisy argmax of sparse votes without forming the vocabulary (math:sparse and
math:mechanisms).

Each stored class gets its own noise draw; the row's ``Z`` zero-vote classes are one block
whose noisy value is ``scale`` times the maximum of Z independent draws, sampled in one
draw by inverting its CDF ``F(x)^Z``: ``x = F^-1(U^(1/Z))``. If the block wins, the label is
a zero-vote class chosen uniformly (all of them are exchangeable), the r-th class missing
from the row's stored ones.

The draws come from the counter-based ``NoiseSource`` keyed by query index, ``width + 2``
per row (``width`` the file's stored width: the same for every chunk, so a row's draws never
depend on its chunk): the first ``stored`` for the stored classes, the last two (turned into
uniforms by their own CDF) for the block's maximum and the uniform choice. A dense replay of
the same votes draws one value per class of the vocabulary, so its decisions differ from
the sparse replay's, though both are exact replays of the same mechanism.
"""

from __future__ import annotations

import math

import numpy as np

from ..sparse_rows import SparseRows


def _log_cdf(draws: np.ndarray, kind: str) -> np.ndarray:
    """``log F(x)`` of standard draws (normal, Gumbel, or Laplace with scale 1)."""
    from scipy.special import log_ndtr
    if kind == "normal":
        return log_ndtr(draws)
    if kind == "gumbel":  # F(x) = exp(-e^-x)
        return -np.exp(-draws)
    # Laplace: F(x) = e^x / 2 below 0, 1 - e^-x / 2 above
    return np.where(draws < 0, draws - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(draws))))


def _block_maximum(log_u: np.ndarray, zeros: np.ndarray, kind: str) -> np.ndarray:
    """``F^-1(U^(1/Z))``: the maximum of Z standard draws from ``log U`` (Z >= 1)."""
    from scipy.special import ndtri_exp
    log_p = log_u / np.maximum(zeros, 1.0)
    if kind == "normal":
        return ndtri_exp(log_p)
    if kind == "gumbel":  # -log(-log F): a Gumbel shifted by log Z
        with np.errstate(divide="ignore"):
            return -np.log(-log_p)
    below = log_p < -math.log(2.0)
    with np.errstate(divide="ignore"):
        upper = -math.log(2.0) - np.log(-np.expm1(log_p))
    return np.where(below, math.log(2.0) + log_p, upper)


def missing_class(rows: SparseRows, rank: np.ndarray) -> np.ndarray:
    """The ``rank``-th (0-based) class id absent from each row's stored classes: with the
    stored ids ascending ``s_0 < s_1 < ...``, it is ``rank + #{i: s_i - i <= rank}``."""
    shift = rows.classes - np.arange(rows.classes.shape[1])[None, :]
    before = (shift <= rank[:, None]) & ~rows.padding
    return rank + before.sum(axis=1)


def sparse_noisy_argmax(rows: SparseRows, draws: np.ndarray, scale: float,
                        kind: str) -> np.ndarray:
    """Class ids of ``argmax_j n_j + scale * noise_j`` over the whole vocabulary, from
    ``(rows, width + 2)`` standard ``draws`` (module docstring)."""
    return _argmax_with_block(rows, rows.counts, draws, scale, kind)


def sparse_gumbel_argmax(rows: SparseRows, draws: np.ndarray, eta: float) -> np.ndarray:
    """Class ids of ``argmax_j (eta n_j + G_j)`` over the whole vocabulary (math:exponential)
    from ``(rows, width + 2)`` standard Gumbel ``draws``: the maximum of the Z zero-vote
    classes' Gumbels is a Gumbel shifted by ``log Z`` (one draw)."""
    return _argmax_with_block(rows, eta * rows.counts, draws, 1.0, "gumbel")


def _argmax_with_block(rows: SparseRows, utility: np.ndarray, draws: np.ndarray,
                       scale: float, kind: str) -> np.ndarray:
    """``argmax_j utility_j + scale * noise_j`` with the zero-vote classes (utility 0) as
    one block: its maximum noise from ``draws[:, width]``, and a uniform zero-vote class
    from ``draws[:, width + 1]`` (turned into a uniform by its CDF) when it wins."""
    width = rows.counts.shape[1]
    noisy = np.where(rows.padding, -np.inf, utility + scale * draws[:, :width])
    best = np.argmax(noisy, axis=1)
    index = np.arange(rows.counts.shape[0])
    zeros = rows.zero_classes
    block = scale * _block_maximum(_log_cdf(draws[:, width], kind), zeros, kind)
    block_wins = (zeros > 0) & (block > noisy[index, best])
    uniform = np.exp(_log_cdf(draws[:, width + 1], kind))
    rank = np.minimum(np.floor(uniform * zeros), np.maximum(zeros - 1, 0)).astype(np.int64)
    return np.where(block_wins, missing_class(rows, rank), rows.classes[index, best])
