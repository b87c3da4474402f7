"""The exponential-mechanism (Gumbel-max) aggregator: its exact q and its RDP.

math:exponential: ``argmax_j (eta n_j + G_j)``, ``G_j`` standard Gumbel, is ``eps0``-DP and
``eps0``-bounded-range with ``eps0 = 2 eta`` (one teacher moves every utility by at most 1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..orders import validate_orders
from ..vote_rows import VoteRows, vote_rows
from .laplace import rdp_pure_from_q
from .validators import check_positive


def log_q_exponential(votes: ArrayLike | VoteRows, *, eta: float) -> np.ndarray:
    """Exact ``log q``, q the chance of not answering the plurality ``i*`` (math:exponential).

    Args:
      votes: ``(queries, K)`` counts, or a :class:`VoteRows` chunk (zero block: math:sparse).
      eta: the inverse temperature, > 0.

    Returns:
      ``(queries,)``, capped by math:gnmax's ``log(1 - 1/K)`` against last-bit rounding.
    """
    form = vote_rows(votes)
    check_positive(eta, "eta")
    votes = form.counts
    queries, classes = votes.shape
    zero = np.full(queries, float(form.zeros))
    rows = np.arange(queries)
    top = form.top()
    plurality = votes[rows, top]
    with np.errstate(over="ignore"):
        terms = eta * (votes - plurality[:, None])
    terms[rows, top] = -np.inf
    with np.errstate(divide="ignore"):
        block = np.log(zero) - eta * plurality  # -inf without a zero block
    lead = np.maximum(terms.max(axis=1), block)
    lead = np.where(np.isfinite(lead), lead, 0.0)  # every term -inf (eta * gap overflows)
    with np.errstate(divide="ignore"):
        others = lead + np.log(np.exp(terms - lead[:, None]).sum(axis=1)
                               + np.exp(block - lead))
    log_q = others - np.logaddexp(0.0, others)
    return np.minimum(log_q, np.log1p(-1.0 / (classes + zero)))


def rdp_exponential_data_independent(*, eta: float, orders: ArrayLike) -> np.ndarray:
    """``min(eps0, alpha eps0^2 / 8)``, ``eps0 = 2 eta``: bounded range gives ``eps0^2 / 8``-zCDP
    (Cesar and Rogers 2021), pure DP caps it (math:exponential)."""
    orders = validate_orders(orders)
    check_positive(eta, "eta")
    eps0 = 2.0 * eta
    return np.minimum(eps0, orders * (eps0 * eps0 / 8.0))


def rdp_exponential(log_q: ArrayLike, *, eta: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of one answer (math:exponential): math:lnmax's curve with ``eps0 = 2
    eta`` and the exact ``log q``, capped by the data-independent one; shape ``log_q.shape +
    (orders,)``."""
    check_positive(eta, "eta")
    orders = validate_orders(orders)
    dependent = rdp_pure_from_q(log_q, eps0=2.0 * eta, orders=orders)
    return np.minimum(dependent, rdp_exponential_data_independent(eta=eta, orders=orders))

