"""LNMax (Laplace noisy max): the bound on q and its RDP.

Papernot et al. 2017, "Semi-supervised Knowledge Transfer...", Theorem 3, in the RDP form
of the 2018 paper's analysis. MATH.md sections 2 and 5.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import log1mexp, log_add
from ..orders import validate_orders
from .validators import as_log_q, as_votes, check_positive


def log_q_lnmax(votes: ArrayLike, *, scale: float) -> np.ndarray:
    """Upper bound on log Pr[LNMax does not output the plurality class] (MATH.md s.5).

    ``g_j = (n_j - n_i*) / lam`` and ``log q = logsumexp_{j != i*} log(2 - g_j) + log(1/4)
    + g_j``, capped at ``log(1 - 1/K)``. Shape ``(queries, K) -> (queries,)``.
    """
    votes = as_votes(votes)
    check_positive(scale, "laplace scale")
    queries, classes = votes.shape
    top = np.argmax(votes, axis=1)
    rows = np.arange(queries)
    gaps = (votes - votes[rows, top][:, None]) / scale
    terms = np.log(2.0 + np.abs(gaps)) + math.log(0.25) + gaps
    terms[rows, top] = -np.inf
    lead = terms.max(axis=1)
    log_q = lead + np.log(np.exp(terms - lead[:, None]).sum(axis=1))
    return np.minimum(log_q, math.log(1.0 - 1.0 / classes))


def rdp_lnmax(log_q: ArrayLike, *, scale: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of one LNMax answer with pure ``eps0 = 2 / lam`` (MATH.md s.5).

    Returns shape ``log_q.shape + (orders,)``.
    """
    orders = validate_orders(orders)
    check_positive(scale, "laplace scale")
    log_q = as_log_q(log_q)
    eps0 = 2.0 / scale
    steps = orders - 1.0
    q = np.exp(log_q)[..., None]
    lq = log_q[..., None]
    small = q <= 1.0 / (math.exp(eps0) + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log1q = np.log1p(-q)
        shifted = np.where(small, eps0 + lq, -1.0)
        log_t = log_add(log1q + (log1q - log1mexp(shifted)) * steps, lq + eps0 * steps)
    log_t = np.where(small, log_t, np.inf)
    rdp = np.minimum(np.minimum(0.5 * eps0 * eps0 * orders, log_t / steps), eps0)
    return np.maximum(rdp, 0.0, out=rdp)  # RDP is non-negative: no rounding below 0


def rdp_lnmax_data_independent(*, scale: float, orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of LNMax: the exact RDP of the noisy counts it maximises.

    One teacher moves one vote: two counts change by 1 each, every count carrying
    independent ``Laplace(0, lam)`` noise, so the noisy vector (LNMax's output is its
    argmax, a post-processing) has RDP ``2 * rdp_laplace(lam, alpha)``
    (:func:`rdp_laplace`: Mironov 2017, Prop. 6, sensitivity 1, composed over the two
    counts). MATH.md s.2's generic ``min(eps0, alpha eps0^2 / 2)``, ``eps0 = 2 / lam``, is
    also valid; the smaller of the two is returned (the exact one except in the last
    bits), up to 2.4 times below the generic bound.
    """
    orders = validate_orders(orders)
    check_positive(scale, "laplace scale")
    eps0 = 2.0 / scale
    generic = np.minimum(0.5 * eps0 * eps0 * orders, eps0)
    rdp = np.minimum(2.0 * rdp_laplace(scale=scale, orders=orders), generic)
    return np.maximum(rdp, 0.0, out=rdp)  # RDP is non-negative: no rounding below 0


def rdp_laplace(*, scale: float, orders: ArrayLike) -> np.ndarray:
    """Exact RDP of the sensitivity-1 Laplace mechanism with scale ``b`` (Mironov 2017,
    "Rényi differential privacy", Proposition 6), for orders ``alpha > 1``:

        1/(alpha-1) log( alpha/(2 alpha-1) exp((alpha-1)/b)
                         + (alpha-1)/(2 alpha-1) exp(-alpha/b) )

    evaluated with ``logaddexp``.
    """
    orders = validate_orders(orders)
    check_positive(scale, "laplace scale")
    steps = orders - 1.0
    doubled = 2.0 * orders - 1.0
    first = np.log(orders / doubled) + steps / scale
    second = np.log(steps / doubled) - orders / scale
    return np.logaddexp(first, second) / steps
