"""A block's weighted sum of RDP curves from the curve at ``DEGREE + 1`` Chebyshev points
(math:conversion and math:costs): the interpolant's series times the block's weighted
moments, kept per order only where converged to the last bits.

Derivation: docs/explanation/numerics.md#votes-that-never-repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

# Degree of the interpolant: its 17 points cost 17 curves per block of up to 4,096.
DEGREE = 16
# Blocks with fewer rows are summed row by row (cheap, and the bits of earlier versions).
MIN_ROWS = 1024
# Largest estimated error of a kept column, relative to its sum.
TOLERANCE = 1e-13

_POINTS = np.cos(np.pi * np.arange(DEGREE + 1) / DEGREE)  # 1 .. -1


def _coefficient_matrix() -> np.ndarray:
    """``M[j, i]``: the weight of the curve at point ``i`` in coefficient ``c_j``."""
    index = np.arange(DEGREE + 1)
    matrix = np.cos(np.pi * np.outer(index, index) / DEGREE) * (2.0 / DEGREE)
    matrix[:, [0, DEGREE]] *= 0.5
    matrix[[0, DEGREE], :] *= 0.5
    return matrix


_COEFFICIENTS = _coefficient_matrix()


class Interpolants(NamedTuple):
    """Chebyshev series of a group's blocks fit for quadrature: ``fit`` their positions,
    ``coefficients`` ``(fit, DEGREE + 1, orders)``, ``finite`` ``(fit, orders)`` (orders
    with all values finite), keys mapped to ``u`` in ``[-1, 1]`` end to end from ``starts``."""

    fit: list[int]
    coefficients: np.ndarray
    finite: np.ndarray
    u: np.ndarray
    starts: np.ndarray


def interpolants(rdp: Callable[[np.ndarray, np.ndarray], np.ndarray], orders: np.ndarray,
                 blocks: list[np.ndarray]) -> Interpolants:
    """Interpolants of ``rdp`` over the fit ``blocks`` of sorted distinct keys (at least
    ``MIN_ROWS``, finite, wide enough for distinct points), from one ``rdp`` call on all fit
    blocks' points (entries' bits are independent: a block's sums do not depend on its group)."""
    fit, points, mapped = [], [], []
    for position, keys in enumerate(blocks):
        if keys.size < MIN_ROWS or not (np.isfinite(keys[0]) and np.isfinite(keys[-1])):
            continue
        low, high = float(keys[0]), float(keys[-1])
        middle, half = 0.5 * (low + high), 0.5 * (high - low)
        chosen = middle + half * _POINTS[::-1]  # ascending, as curve functions take keys
        chosen[0], chosen[-1] = low, high  # the block's ends themselves (never past them)
        if not (half > 0.0 and np.all(np.diff(chosen) > 0.0)):
            continue
        fit.append(position)
        points.append(chosen)
        mapped.append(np.clip((keys - middle) / half, -1.0, 1.0))
    width = np.size(orders)
    if not fit:
        return Interpolants(fit, np.empty((0, DEGREE + 1, width)), np.empty((0, width), bool),
                            np.empty(0), np.empty(0, np.intp))
    values = np.asarray(rdp(np.concatenate(points), orders), dtype=np.float64)
    values = values.reshape(len(fit), DEGREE + 1, width)[:, ::-1]  # point i at row i
    finite = np.all(np.isfinite(values), axis=1)
    values = np.where(finite[:, None, :], values, 0.0)
    # M @ values without BLAS, the points' terms added one after another in point order
    coefficients = _COEFFICIENTS[None, :, 0, None] * values[:, None, 0, :]
    for point in range(1, DEGREE + 1):
        coefficients += _COEFFICIENTS[None, :, point, None] * values[:, None, point, :]
    starts = np.cumsum([0] + [block.size for block in mapped[:-1]])
    return Interpolants(fit, coefficients, finite, np.concatenate(mapped), starts)


def interpolated_sums(fitted: Interpolants, weights: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``sum_k weights[k] * p(u_k)`` per fit block and order (``weights``: the fit blocks'
    non-negative weights end to end, as ``fitted.u``), ``(fit, orders)``, and the mask of
    the entries kept (converged, finite, a positive sum); the others are 0."""
    coefficients = fitted.coefficients
    moments = _moments(fitted.u, weights, fitted.starts)  # (fit, DEGREE + 1)
    # sum_j m_j c_j, the terms added one after another in j (a reduction over axis 1)
    total = (moments[:, :, None] * coefficients).sum(axis=1)
    scale = np.add.reduceat(np.abs(weights), fitted.starts)
    tail = 2.0 * np.abs(coefficients[:, -3:]).sum(axis=1) * scale[:, None]
    kept = fitted.finite & (total > 0.0) & (tail <= TOLERANCE * total)
    total[~kept] = 0.0
    return total, kept


def _moments(u: np.ndarray, weights: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``m_j = sum_k weights[k] T_j(u_k)``, j = 0..DEGREE, over each block (from ``starts``):
    ``(blocks, DEGREE + 1)`` (``T_j`` by its recurrence)."""
    chebyshev = np.empty((DEGREE + 1, u.size))
    chebyshev[0] = 1.0
    chebyshev[1] = u
    twice = 2.0 * u
    for degree in range(2, DEGREE + 1):
        np.multiply(twice, chebyshev[degree - 1], out=chebyshev[degree])
        chebyshev[degree] -= chebyshev[degree - 2]
    chebyshev *= weights
    return np.add.reduceat(chebyshev, starts, axis=1).T
