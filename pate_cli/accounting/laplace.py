"""LNMax (Laplace noisy max): the bound on q and its RDP (Papernot et al. 2017, Theorem 3,
in the RDP form of the 2018 paper's analysis; math:independent and math:lnmax).

Derivation: docs/explanation/data-dependent.md#lnmax and
docs/explanation/data-independent.md#the-answer-step-of-lnmax.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import expm1_minus, log1mexp, log_add
from ..orders import validate_orders
from ..vote_rows import VoteRows, vote_rows
from .validators import as_log_q, check_positive


def log_q_lnmax(votes: ArrayLike | VoteRows, *, scale: float) -> np.ndarray:
    """Upper bound on log Pr[LNMax does not output the plurality class] (math:lnmax).

    ``g_j = (n_j - n_i*) / lam`` and ``log q = logsumexp_{j != i*} log(2 - g_j) + log(1/4)
    + g_j``, capped at ``log(1 - 1/K)``.

    Args:
      votes: ``(queries, K)`` counts (K >= 2), or a :class:`VoteRows` chunk, whose ``Z``
        zero-vote classes add the one term ``log Z + log(2 + n_i*/lam) + log(1/4) -
        n_i*/lam`` (math:sparse).
      scale: the Laplace noise's scale ``lam`` (> 0).

    Returns:
      ``log q``, shape ``(queries,)``.

    Raises:
      ValueError: ``scale`` not a finite positive number, or ``votes`` not 2-D with K >= 2.
    """
    form = vote_rows(votes)
    check_positive(scale, "laplace scale")
    votes = form.counts
    queries = votes.shape[0]
    top = form.top()
    rows = np.arange(queries)
    gaps = (votes - votes[rows, top][:, None]) / scale
    terms = np.log(2.0 + np.abs(gaps)) + math.log(0.25) + gaps
    terms[rows, top] = -np.inf
    if form.zeros:  # the zero block: Z classes at g = -n_i* / lam (math:sparse)
        block = -votes[rows, top] / scale
        block = math.log(form.zeros) + np.log(2.0 + np.abs(block)) + math.log(0.25) + block
        terms = np.concatenate((terms, block[:, None]), axis=1)
    lead = terms.max(axis=1)
    log_q = lead + np.log(np.exp(terms - lead[:, None]).sum(axis=1))
    return np.minimum(log_q, form.cap)


def rdp_lnmax(log_q: ArrayLike, *, scale: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of one LNMax answer with pure ``eps0 = 2 / lam`` (math:lnmax).

    Args:
      log_q: ``log q`` per query (:func:`log_q_lnmax`), any shape, each ``<= 0``.
      scale: the Laplace noise's scale ``lam`` (> 0).
      orders: the Rényi orders, each > 1.

    Returns:
      RDP of shape ``log_q.shape + (orders,)``.

    Raises:
      ValueError: ``log q > 0`` (or NaN), ``scale <= 0`` or any order <= 1.
    """
    check_positive(scale, "laplace scale")
    return rdp_pure_from_q(log_q, eps0=2.0 / scale, orders=orders)


def rdp_pure_from_q(log_q: ArrayLike, *, eps0: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of any ``eps0``-DP answer missing ``i*`` with probability at most
    ``q`` (math:lnmax; Papernot et al. 2017, Theorem 3): LNMax's ``eps0 = 2 / lam``, the
    exponential mechanism's ``2 eta`` (math:exponential). Shape ``log_q.shape + (orders,)``."""
    orders = validate_orders(orders)
    check_positive(eps0, "eps0")
    log_q = as_log_q(log_q)
    steps = orders - 1.0
    q = np.exp(log_q)[..., None]
    lq = log_q[..., None]
    # past eps0 = 700 exp overflows: there log(1 / (exp(eps0) + 1)) is -eps0 in floats, and
    # the test is on log q (q itself may underflow to 0)
    small = (q <= 1.0 / (math.exp(eps0) + 1.0) if eps0 < _EXP_LIMIT else lq <= -eps0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log1q = np.log1p(-q)
        shifted = np.where(small, eps0 + lq, -1.0)
        log_t = log_add(log1q + (log1q - log1mexp(shifted)) * steps, lq + eps0 * steps)
    log_t = np.where(small, log_t, np.inf)
    rdp = np.minimum(np.minimum(0.5 * eps0 * eps0 * orders, log_t / steps), eps0)
    return np.maximum(rdp, 0.0, out=rdp)  # RDP is non-negative: no rounding below 0


def rdp_lnmax_data_independent(*, scale: float, orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of LNMax: ``min(2 rdp_laplace, eps0, alpha eps0^2 / 2)``,
    ``eps0 = 2 / lam`` (math:independent: the two noisy counts one teacher moves)."""
    orders = validate_orders(orders)
    check_positive(scale, "laplace scale")
    eps0 = 2.0 / scale
    generic = np.minimum(0.5 * eps0 * eps0 * orders, eps0)
    rdp = np.minimum(2.0 * rdp_laplace(scale=scale, orders=orders), generic)
    return np.maximum(rdp, 0.0, out=rdp)  # RDP is non-negative: no rounding below 0


def rdp_laplace(*, scale: float, orders: ArrayLike) -> np.ndarray:
    """Exact RDP of the sensitivity-1 Laplace mechanism of scale ``b`` (Mironov 2017,
    Proposition 6), without cancellation (docs/explanation/numerics.md#kernel-rounding)."""
    orders = validate_orders(orders)
    check_positive(scale, "laplace scale")
    steps = orders - 1.0
    doubled = 2.0 * orders - 1.0
    up, down = steps / scale, orders / scale
    near = up <= _EXP_LIMIT
    with np.errstate(over="ignore", invalid="ignore"):
        excess = (orders * expm1_minus(np.where(near, up, 0.0))
                  + steps * expm1_minus(-down)) / doubled
        close = np.log1p(excess) / steps
    far = np.logaddexp(np.log(orders / doubled) + up, np.log(steps / doubled) - down) / steps
    return np.where(near, close, far)


# (alpha - 1) / b above this: exp overflows (log of the largest float is 709.78).
_EXP_LIMIT = 700.0
