"""The noisy argmax of vote rows, every noisy-max replay's labels (math:mechanisms,
math:sparse): ``argmax_j (weight n_j + scale noise_j)`` over a :class:`VoteRows` chunk.

Each cell gets its own draw. A sparse row's ``Z`` zero-vote classes are one block valued
``scale F^-1(U^(1/Z))`` (the maximum of Z draws); if it wins, the label is a zero-vote class
chosen uniformly (they are exchangeable). A sparse row takes ``width + 2`` draws (the file's
stored width: never chunk-dependent), the last two for the block; a dense replay of the same
votes draws differently, though both exactly replay the same mechanism."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..vote_rows import VoteRows, vote_rows
from .noise import NoiseSource
from .protocol import LABEL_NOT_DRAWN


@dataclass(frozen=True)
class ArgmaxNoise:
    """A replay's noisy argmax: ``argmax_j (weight n_j + scale noise_j)``, standard ``kind``
    noise (``normal``, ``laplace`` or ``gumbel``) from the noise source's ``stream``."""

    stream: int
    kind: str
    scale: float = 1.0
    weight: float = 1.0


def noisy_labels(votes, how: ArgmaxNoise, *, noise: NoiseSource, start: int,
                 answered: np.ndarray, draw: bool = True) -> np.ndarray:
    """:func:`noisy_argmax` of rows at positions ``start ..`` with ``how``'s noise where
    ``answered``, -1 elsewhere; ``LABEL_NOT_DRAWN`` for every answered query if not ``draw``."""
    if not draw:
        return np.where(answered, LABEL_NOT_DRAWN, -1).astype(np.int64)
    rows = vote_rows(votes)
    draws = noise.draw(stream=how.stream, kind=how.kind, start=start, count=len(rows),
                       width=rows.width + rows.block_draws)
    labels = noisy_argmax(rows, draws, kind=how.kind, scale=how.scale, weight=how.weight)
    return np.where(answered, labels, -1).astype(np.int64)


def noisy_argmax(rows: VoteRows, draws: np.ndarray, *, kind: str, scale: float = 1.0,
                 weight: float = 1.0) -> np.ndarray:
    """Class ids of ``argmax_j (weight n_j + scale noise_j)`` over every class, from ``(rows,
    width + rows.block_draws)`` standard ``kind`` draws (module docstring); the zero block's
    utility is 0 for every kind, the exponential mechanism's (``weight`` eta) included."""
    width = rows.width
    utility = rows.counts if weight == 1.0 else weight * rows.counts
    noisy = utility + (draws[:, :width] if scale == 1.0 else scale * draws[:, :width])
    padding = rows.padding
    if padding is not None:
        noisy = np.where(padding, -np.inf, noisy)
    best = np.argmax(noisy, axis=1)
    if not rows.block_draws:
        return best
    index = np.arange(len(rows))
    zeros = rows.zero_classes
    block = scale * _block_maximum(_log_cdf(draws[:, width], kind), zeros, kind)
    block_wins = (zeros > 0) & (block > noisy[index, best])
    uniform = np.exp(_log_cdf(draws[:, width + 1], kind))
    rank = np.minimum(np.floor(uniform * zeros), np.maximum(zeros - 1, 0)).astype(np.int64)
    return np.where(block_wins, rows.missing_class(rank), rows.class_of(best))


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
