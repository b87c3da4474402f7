"""SVT-PATE's guarantee: zCDP composition of the AboveThreshold rounds, the delta split and
the choice of the threshold (MATH.md section 8; Bassily, Thakkar, Thakurta 2018; Liu et al.,
Algorithm 2).

The guarantee depends on the scale ``lam``, the cut-off ``c`` (the most unstable queries
the mechanism may meet) and the number of queries ``n``, never on the votes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..orders import validate_orders
from .conversion import rdp_to_epsilon
from .validators import check_delta, check_positive_integer

_MAX_SOLVER_STEPS = 200


@dataclass(frozen=True)
class SVTGuarantee:
    """(epsilon, delta1 + delta2) for SVT-PATE at one scale, cut-off and query count."""

    epsilon: float
    order: float
    scale: float
    cutoff: int
    threshold: float
    delta1: float
    delta2: float


def rdp_svt(*, scale: float, cutoff: int, orders: ArrayLike) -> np.ndarray:
    """``min(c eps0, alpha rho)`` with ``eps0 = 2/lam`` and ``rho = c eps0^2 / 2`` (s.8).

    Each unstable query ends one AboveThreshold round, ``eps0``-DP; pure DP gives zCDP
    ``eps0^2 / 2`` per round (Bun and Steinke 2016), and zCDP composes additively.
    """
    orders = validate_orders(orders)
    _check_scale_cutoff(scale, cutoff)
    return rdp_svt_rounds(scale=scale, rounds=np.float64(cutoff), orders=orders)


def rdp_svt_rounds(*, scale: float, rounds: ArrayLike, orders: ArrayLike) -> np.ndarray:
    """The RDP of ``rounds`` AboveThreshold rounds, ``min(k eps0, alpha k eps0^2 / 2)``
    (MATH.md s.8), for every ``rounds`` entry (leading axes) and order (last axis).

    The one place the per-round cost is written: the guarantee at the cut-off
    (``rdp_svt``), the guarantee had the run stopped after each query, and one unstable
    query's share all use it.
    """
    eps0 = 2.0 / scale
    rounds = np.asarray(rounds, dtype=np.float64)[..., None]
    rho = rounds * eps0 * eps0 / 2.0
    return np.minimum(rounds * eps0, np.asarray(orders, dtype=np.float64) * rho)


def svt_delta2(*, scale: float, cutoff: int, threshold: float, queries: int) -> float:
    """Failure probability of releasing a majority label at distance 0 (MATH.md s.8).

    ``n/2 exp(-(w-1)/(4 lam)) + (c+1)/2 exp(-(w-1)/(2 lam))``: a query noise above
    ``(w-1)/2`` or a threshold noise below ``-(w-1)/2``, union over n queries and c+1
    thresholds.
    """
    _check_scale_cutoff(scale, cutoff)
    x = math.exp(-(threshold - 1.0) / (4.0 * scale))
    return 0.5 * queries * x + 0.5 * (cutoff + 1) * x * x


def svt_threshold_for(*, scale: float, cutoff: int, queries: int, delta2: float) -> float:
    """The smallest threshold ``w`` with ``delta2(w) <= delta2`` (MATH.md s.8).

    With ``x = exp(-(w-1)/(4 lam))`` the condition is ``(c+1) x^2 + n x <= 2 delta2``, a
    quadratic solved in closed form (written to avoid cancellation):
    ``x = 4 delta2 / (n + sqrt(n^2 + 8 (c+1) delta2))``, ``w = 1 - 4 lam log x``.
    """
    _check_scale_cutoff(scale, cutoff)
    x = 4.0 * delta2 / (queries + math.sqrt(queries * queries + 8.0 * (cutoff + 1) * delta2))
    return 1.0 - 4.0 * scale * math.log(x)


def svt_guarantee(*, scale: float, cutoff: int, queries: int, delta: float, orders: ArrayLike,
                  conversion: str = "classic", threshold: float | None = None) -> SVTGuarantee:
    """The (epsilon, delta) guarantee of SVT-PATE (MATH.md s.8).

    Without ``threshold``: ``delta1 = delta2 = delta/2`` and ``w`` is the smallest value
    with ``delta2 <= delta/2``. With it: ``delta2`` follows and ``delta1 = delta - delta2``
    (``ValueError`` if that is not positive). Epsilon converts ``rdp_svt`` at ``delta1``.
    """
    check_delta(delta)
    _check_scale_cutoff(scale, cutoff)
    if threshold is None:
        delta2 = delta / 2.0
        threshold = svt_threshold_for(scale=scale, cutoff=cutoff, queries=queries,
                                      delta2=delta2)
        delta1 = delta - delta2
    else:
        delta2 = svt_delta2(scale=scale, cutoff=cutoff, threshold=threshold, queries=queries)
        delta1 = delta - delta2
        if not delta1 > 0:
            raise ValueError(f"--svt-threshold {threshold:g} leaves no delta: its failure "
                             f"probability delta2 = {delta2:.3g} is not below delta = "
                             f"{delta:g}; raise the threshold or delta")
    orders = validate_orders(orders)
    epsilon, order = rdp_to_epsilon(rdp_svt(scale=scale, cutoff=cutoff, orders=orders),
                                    orders=orders, delta=delta1, conversion=conversion)
    return SVTGuarantee(epsilon=float(epsilon), order=float(order), scale=float(scale),
                        cutoff=int(cutoff), threshold=float(threshold), delta1=float(delta1),
                        delta2=float(delta2))


def svt_scale_for_epsilon(*, epsilon: float, cutoff: int, queries: int, delta: float,
                          orders: ArrayLike, conversion: str = "classic",
                          threshold: float | None = None) -> float:
    """The Laplace scale whose guarantee is ``epsilon`` (epsilon falls as the scale grows).

    Brent's method on ``log lam`` within ``[1e-6, 1e9]``, at most 200 steps; raises
    ``ValueError`` when no scale in that range gives ``epsilon``.
    """
    from scipy.optimize import brentq
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"target epsilon must be positive, got {epsilon!r}")

    def gap(log_scale: float) -> float:
        try:
            found = svt_guarantee(scale=math.exp(log_scale), cutoff=cutoff, queries=queries,
                                  delta=delta, orders=orders, conversion=conversion,
                                  threshold=threshold).epsilon
        except ValueError:
            found = math.inf  # a fixed threshold too low for this scale: not private
        return found - epsilon

    low, high = math.log(1e-6), math.log(1e9)
    if not (gap(low) > 0 > gap(high)):
        raise ValueError(f"no SVT scale in [1e-6, 1e9] gives epsilon {epsilon:g} "
                         f"with cut-off {cutoff} and delta {delta:g}")
    log_scale = brentq(gap, low, high, xtol=1e-12, rtol=1e-12, maxiter=_MAX_SOLVER_STEPS)
    return math.exp(log_scale)


def _check_scale_cutoff(scale: float, cutoff: int) -> None:
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"SVT scale must be positive, got {scale!r}")
    check_positive_integer(cutoff, "SVT cut-off")
