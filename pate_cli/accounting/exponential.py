"""The exponential-mechanism (Gumbel-max) aggregator: its exact q and its RDP.

math:exponential. The answer is ``argmax_j (eta n_j + G_j)`` with standard Gumbel noise
``G_j``, i.e. class ``j`` with probability ``exp(eta n_j) / sum_k exp(eta n_k)``; one
teacher moves one vote, every utility moves by at most 1, so each answer is ``eps0``-DP
and ``eps0``-bounded-range with ``eps0 = 2 eta``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..orders import validate_orders
from ..vote_rows import VoteRows, vote_rows
from .laplace import rdp_pure_from_q
from .validators import check_positive


def log_q_exponential(votes: ArrayLike | VoteRows, *, eta: float) -> np.ndarray:
    """Exact ``log Pr[the exponential mechanism does not output i*]`` (math:exponential).

    With ``d_j = eta (n_j - n_i*)`` (``i*`` the lowest-index plurality, every ``d_j <=
    0``): ``log q = logsumexp_{j != i*} d_j - logsumexp_j d_j``, the second written as
    ``logaddexp(0, first)`` since ``d_i* = 0``. Shape ``(queries, K) -> (queries,)``.

    A :class:`VoteRows` chunk's ``Z`` zero-vote classes (math:sparse) add the term
    ``log Z - eta n_i*`` to both sums. math:gnmax's cap ``log(1 - 1/K)`` never binds on the
    exact q (``p_i* >= 1/K``); it is applied against last-bit rounding.
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
    """``min(eps0, alpha eps0^2 / 8)`` with ``eps0 = 2 eta`` (math:exponential): an
    ``eps0``-bounded-range mechanism is ``eps0^2 / 8``-zCDP (Cesar and Rogers 2021), and
    pure ``eps0``-DP caps every order at ``eps0``."""
    orders = validate_orders(orders)
    check_positive(eta, "eta")
    eps0 = 2.0 * eta
    return np.minimum(eps0, orders * (eps0 * eps0 / 8.0))


def rdp_exponential(log_q: ArrayLike, *, eta: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of one answer (math:exponential): math:lnmax's curve with ``eps0 =
    2 eta`` and the exact ``log q``, capped by the data-independent curve; ``log_q.shape +
    (orders,)``."""
    check_positive(eta, "eta")
    orders = validate_orders(orders)
    dependent = rdp_pure_from_q(log_q, eps0=2.0 * eta, orders=orders)
    return np.minimum(dependent, rdp_exponential_data_independent(eta=eta, orders=orders))

