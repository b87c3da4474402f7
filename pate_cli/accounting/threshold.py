"""The selection (threshold) step of Confident- and Interactive-GNMax (Papernot et al. 2018,
Algorithm 1 and Proposition 8; math:independent and math:threshold).

Derivation: docs/explanation/data-dependent.md#threshold; the lattice the counts are charged
on: docs/explanation/mechanisms.md.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import log1mexp
from ..orders import validate_orders
from .gnmax import rdp_gnmax
from .validators import check_std

# The threshold step's counts are charged on a power-of-two lattice (exact in binary) of step
# at most min(1, sigma1 / LATTICE_PER_SIGMA) (whole counts lie on it), at least SMALLEST_STEP.
LATTICE_PER_SIGMA = 64
SMALLEST_STEP = 2.0 ** -10


def count_step(sigma_threshold: float) -> float:
    """The lattice step of :func:`log_pr_answered`: 1 for ``sigma1 >= 64``, 1/16 at 5."""
    exponent = math.floor(math.log2(sigma_threshold / LATTICE_PER_SIGMA))
    return min(1.0, max(SMALLEST_STEP, 2.0 ** max(exponent, -1074)))


def log_pr_answered(max_votes: ArrayLike, *, threshold: float,
                    sigma_threshold: float) -> np.ndarray:
    """``log Pr[max v + N(0, sigma1^2) >= T]`` (math:threshold) at the count rounded toward
    ``T`` on the lattice of :func:`count_step`: up below it, down above it, ``T`` itself
    where no lattice point lies between. Toward ``T``, ``q`` is at least the mechanism's, so
    the cost never falls below the bound (the paper's half-to-even rounding can move a
    fractional count away from ``T``: up to 6% under per query); about 64 distinct values per
    sigma1 remain (the grouped sums rely on it); whole counts are unchanged.

    Args:
      max_votes: ``max_j v_j`` per query (``v = n``, or ``n - M p`` for Interactive).
      threshold: the threshold ``T``.
      sigma_threshold: the threshold noise's standard deviation ``sigma1``, in
        ``validators.GAUSSIAN_STD``.

    Returns:
      ``log Pr[answered]``, of ``max_votes``'s shape.

    Raises:
      ValueError: ``sigma_threshold`` outside ``GAUSSIAN_STD``.
    """
    from scipy.special import log_ndtr
    check_std(sigma_threshold, "sigma_threshold")
    max_votes = np.asarray(max_votes, dtype=np.float64)
    # a gap beyond the floats is +-inf: log_ndtr's limits (-inf, 0) are exact there; a count
    # an ulp off a lattice point (as n - M p can be) takes the next point toward T
    step = count_step(sigma_threshold)
    with np.errstate(over="ignore"):
        steps = max_votes / step
        toward = np.where(max_votes < threshold, np.minimum(np.ceil(steps) * step, threshold),
                          np.maximum(np.floor(steps) * step, threshold))
        z = (toward - threshold) / sigma_threshold
    return log_ndtr(z)


def raised_counts(max_votes: ArrayLike, *, threshold: float,
                  sigma_threshold: float) -> np.ndarray:
    """Whether each count is above ``T`` and off the :func:`count_step` lattice (rounded down,
    so its expected answer charge takes :func:`raised_charge`; math:costs); arguments as
    :func:`log_pr_answered`."""
    max_votes = np.asarray(max_votes, dtype=np.float64)
    step = count_step(sigma_threshold)
    with np.errstate(over="ignore", invalid="ignore"):
        return (max_votes > threshold) & (np.floor(max_votes / step) * step != max_votes)


def raised_charge(log_pr: ArrayLike, *, sigma_threshold: float) -> np.ndarray:
    """``Pr[c + step + N(0, sigma1^2) >= T]``, the expected charge of a raised query whose
    statistic ``log_pr`` (each ``>= log 0.5``) is at lattice count ``c`` (math:costs), never
    below the mechanism's ``pr_answered`` (docs/explanation/numerics.md#kernel-rounding)."""
    from scipy.special import ndtr, ndtri_exp
    z = ndtri_exp(np.asarray(log_pr, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        up = z + count_step(sigma_threshold) / sigma_threshold + 1e-12 * (1.0 + np.abs(z))
    return ndtr(np.where(np.isnan(up), np.inf, up))


def rdp_threshold(log_pr_answered: ArrayLike, *, sigma_threshold: float,
                  orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of the selection step (math:threshold): ``log q_sel = min(log pr,
    log(1 - pr))`` in the GNMax bound at noise ``sqrt(2) sigma1`` (sensitivity 1, not sqrt 2).

    Args:
      log_pr_answered: ``log pr`` per query (:func:`log_pr_answered`), any shape.
      sigma_threshold: the threshold noise's standard deviation ``sigma1``, in
        ``validators.GAUSSIAN_STD``.
      orders: the Rényi orders, each > 1.

    Returns:
      RDP of shape ``log_pr_answered.shape + (orders,)``, as :func:`rdp_gnmax`'s.

    Raises:
      ValueError: ``log pr > 0`` (or NaN), ``sigma_threshold`` outside ``GAUSSIAN_STD``
        or any order <= 1.
    """
    log_pr = np.asarray(log_pr_answered, dtype=np.float64)
    log_q_sel = np.minimum(log_pr, log1mexp(log_pr))
    return rdp_gnmax(log_q_sel, sigma=math.sqrt(2.0) * sigma_threshold, orders=orders)


def rdp_threshold_data_independent(*, sigma_threshold: float,
                                   orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of the selection step, ``alpha / (2 sigma1^2)`` (math:independent):
    as the reference analysis writes it, not GNMax's at ``sqrt(2) sigma1`` (last bit differs)."""
    orders = validate_orders(orders)
    check_std(sigma_threshold, "sigma_threshold")
    return orders / (2.0 * sigma_threshold**2)
