"""SVT-PATE's guarantee: zCDP composition of the AboveThreshold rounds, the delta split and
the choice of the threshold (math:svt; Bassily, Thakkar, Thakurta 2018; Liu et al.,
Algorithm 2).

The guarantee depends on the scale ``lam``, the cut-off ``c`` (the most unstable queries
the mechanism may meet) and the number of queries ``n``, never on the votes.

Epsilon is converted over a continuous order alpha > 1, not the grid (:func:`svt_epsilon`):
the minimum of ``min(c eps0, alpha rho) + offset(alpha)`` is the smaller of the pure-DP
cap's, its limit ``c eps0`` (valid at delta 0; order ``inf``), and the zCDP line's: for
``classic``, the closed form ``rho + 2 sqrt(rho log(1/delta))`` at
``alpha = 1 + sqrt(log(1/delta) / rho)``; for ``improved`` its derivative vanishes where
``rho (alpha - 1)^2 + log(alpha) = log(1/delta)`` (one root: the left side increases from
0, and it is bracketed by ``alpha - 1`` in ``(0, sqrt(log(1/delta)/rho)]``), found by
bisection on that certified bracket. So epsilon never exceeds ``c eps0``.
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
    bound: str = "rdp"


# Bisection steps for the improved conversion's optimal order: halvings of (0,
# sqrt(log(1/delta)/rho)] to a fixed point of adjacent floats (within about 1100); a safeguard.
_BISECTION_STEPS = 2000


def svt_epsilon(*, scale: float, rounds: ArrayLike, delta: float,
                conversion: str = "classic") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(epsilon, order, pure)`` of ``rounds`` AboveThreshold rounds at ``delta``, over a
    continuous order (math:conversion and math:svt), for each ``rounds``.

    ``epsilon = min(k eps0, min over alpha > 1 of alpha rho + offset(alpha))``, ``eps0 =
    2/lam``, ``rho = k eps0^2 / 2``. ``pure``: ``k eps0`` is strictly smaller (``order``
    ``inf``); else ``order`` is the line's minimising alpha. ``improved`` clips at 0.
    """
    check_delta(delta)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"SVT scale must be positive, got {scale!r}")
    if conversion not in ("classic", "improved"):
        raise ValueError(f"conversion must be classic or improved, got {conversion!r}")
    rounds = np.asarray(rounds, dtype=np.float64)
    eps0 = 2.0 / scale
    pure = rounds * eps0
    rho = rounds * eps0 * eps0 / 2.0
    log_inv_delta = -math.log(delta)
    if conversion == "classic":
        # d/dalpha [alpha rho + L/(alpha-1)] = rho - L/(alpha-1)^2 = 0.
        excess = np.sqrt(log_inv_delta / rho)  # alpha - 1
        line = rho + 2.0 * np.sqrt(rho * log_inv_delta)
    else:
        excess = _improved_excess(rho, log_inv_delta)
        alpha = 1.0 + excess
        line = (alpha * rho + np.log(excess) - np.log1p(excess)
                + (log_inv_delta - np.log1p(excess)) / excess)
        line = np.maximum(line, 0.0)
    use_pure = pure < line
    epsilon = np.where(use_pure, pure, line)
    order = np.where(use_pure, np.inf, 1.0 + excess)
    return epsilon, order, use_pure


def _improved_excess(rho: np.ndarray, log_inv_delta: float) -> np.ndarray:
    """``t = alpha - 1`` solving ``rho t^2 + log(1 + t) = L`` (the improved conversion's
    optimal order for the line ``alpha rho``), by bisection on ``(0, sqrt(L/rho)]``.

    The improved objective ``alpha rho + log((alpha-1)/alpha) - (log delta + log
    alpha)/(alpha-1)`` has derivative ``rho - (L - log alpha)/(alpha-1)^2``; its sign is
    that of ``h(t) = rho t^2 + log(1+t) - L``, increasing in t with ``h(0) = -L < 0`` and
    ``h(sqrt(L/rho)) = log(1 + sqrt(L/rho)) > 0``: a certified bracket of the one minimum.
    """
    low = np.zeros_like(rho)
    high = np.sqrt(log_inv_delta / rho)
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        below = rho * middle * middle + np.log1p(middle) < log_inv_delta
        new_low, new_high = np.where(below, middle, low), np.where(below, high, middle)
        if np.array_equal(new_low, low) and np.array_equal(new_high, high):
            break  # every bracket at a fixed point: each entry's result is its own
        low, high = new_low, new_high
    return 0.5 * (low + high)


def svt_epsilon_so_far(*, scale: float, cutoff: int, unstable: np.ndarray, met: int,
                       delta: float, conversion: str, carry: np.ndarray | None,
                       orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(epsilon, order)`` had the mechanism stopped after each query (``unstable`` flags,
    ``met`` unstable before; at most ``cutoff`` rounds) by :func:`svt_epsilon`, or with
    ``carry`` (an external RDP curve) on the grid ``orders`` (math:conversion); once per
    distinct round count."""
    rounds, index = np.unique(np.minimum(cutoff, met + np.cumsum(unstable) + 1),
                              return_inverse=True)
    if carry is None:
        epsilon, order, _ = svt_epsilon(scale=scale, rounds=rounds, delta=delta,
                                        conversion=conversion)
    else:
        epsilon, order = rdp_to_epsilon(
            carry + rdp_svt_rounds(scale=scale, rounds=rounds, orders=orders),
            orders=orders, delta=delta, conversion=conversion)
    index = index.reshape(-1)
    return np.asarray(epsilon)[index], np.asarray(order)[index]


def rdp_svt(*, scale: float, cutoff: int, orders: ArrayLike) -> np.ndarray:
    """``min(c eps0, alpha rho)`` with ``eps0 = 2/lam`` and ``rho = c eps0^2 / 2`` (math:svt).

    Each unstable query ends one AboveThreshold round, ``eps0``-DP; pure DP gives zCDP
    ``eps0^2 / 2`` per round (Bun and Steinke 2016), and zCDP composes additively.
    """
    orders = validate_orders(orders)
    _check_scale_cutoff(scale, cutoff)
    return rdp_svt_rounds(scale=scale, rounds=np.float64(cutoff), orders=orders)


def rdp_svt_rounds(*, scale: float, rounds: ArrayLike, orders: ArrayLike) -> np.ndarray:
    """The RDP of ``rounds`` AboveThreshold rounds, ``min(k eps0, alpha k eps0^2 / 2)``
    (math:svt), for every ``rounds`` entry (leading axes) and order (last axis).

    The one place the per-round cost is written.
    """
    eps0 = 2.0 / scale
    rounds = np.asarray(rounds, dtype=np.float64)[..., None]
    rho = rounds * eps0 * eps0 / 2.0
    return np.minimum(rounds * eps0, np.asarray(orders, dtype=np.float64) * rho)


def svt_delta2(*, scale: float, cutoff: int, threshold: float, queries: int) -> float:
    """Failure probability of releasing a majority label at distance 0 (math:svt).

    ``n/2 exp(-(w-1)/(4 lam)) + (c+1)/2 exp(-(w-1)/(2 lam))``: a query noise above
    ``(w-1)/2`` or a threshold noise below ``-(w-1)/2``, union over n queries and c+1
    thresholds.
    """
    _check_scale_cutoff(scale, cutoff)
    x = math.exp(-(threshold - 1.0) / (4.0 * scale))
    return 0.5 * queries * x + 0.5 * (cutoff + 1) * x * x


def svt_threshold_for(*, scale: float, cutoff: int, queries: int, delta2: float) -> float:
    """The smallest threshold ``w`` with ``delta2(w) <= delta2`` (math:svt).

    With ``x = exp(-(w-1)/(4 lam))`` the condition is ``(c+1) x^2 + n x <= 2 delta2``, a
    quadratic solved in closed form (written to avoid cancellation):
    ``x = 4 delta2 / (n + sqrt(n^2 + 8 (c+1) delta2))``, ``w = 1 - 4 lam log x``.
    """
    _check_scale_cutoff(scale, cutoff)
    x = 4.0 * delta2 / (queries + math.sqrt(queries * queries + 8.0 * (cutoff + 1) * delta2))
    return 1.0 - 4.0 * scale * math.log(x)


def svt_guarantee(*, scale: float, cutoff: int, queries: int, delta: float,
                  orders: ArrayLike | None = None, conversion: str = "classic",
                  threshold: float | None = None) -> SVTGuarantee:
    """The (epsilon, delta) guarantee of SVT-PATE (math:svt).

    Without ``threshold``: ``delta1 = delta2 = delta/2`` and ``w`` is the smallest value
    with ``delta2 <= delta/2``. With it: ``delta2`` follows and ``delta1 = delta - delta2``
    (``ValueError`` if not positive). Epsilon: :func:`svt_epsilon` at ``delta1``, never above
    ``c eps0``; ``bound``: ``"rdp"`` or ``"pure"``. ``orders`` is accepted and not used.
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
    epsilon, order, pure = svt_epsilon(scale=scale, rounds=cutoff, delta=delta1,
                                       conversion=conversion)
    return SVTGuarantee(epsilon=float(epsilon), order=float(order), scale=float(scale),
                        cutoff=int(cutoff), threshold=float(threshold), delta1=float(delta1),
                        delta2=float(delta2), bound="pure" if pure else "rdp")


def svt_scale_for_epsilon(*, epsilon: float, cutoff: int, queries: int, delta: float,
                          orders: ArrayLike | None = None, conversion: str = "classic",
                          threshold: float | None = None) -> float:
    """The Laplace scale whose guarantee is at most ``epsilon`` and as close to it as the
    solver gets (epsilon falls as the scale grows; math:svt).

    In closed form for the ``classic`` conversion with the threshold chosen from delta
    (then ``delta1 = delta/2`` does not depend on the scale): epsilon is the smaller of
    ``2c/lam`` and ``rho + 2 sqrt(rho L)`` with ``rho = 2c/lam^2``, both falling in lam,
    so the scale is the smaller of ``2c/epsilon`` and ``sqrt(2c/rho)`` with
    ``sqrt(rho) = sqrt(L + epsilon) - sqrt(L)``. For ``improved``, ``2c/epsilon`` when the
    pure bound binds there. Otherwise Brent's method on ``log lam`` within ``[1e-6, 1e9]``,
    at most 200 steps. A result a rounding above the target is raised (an ulp, then
    doubling steps) until :func:`svt_guarantee`'s epsilon is at most ``epsilon``. Other
    arguments as :func:`svt_guarantee`; ``ValueError`` when no scale in ``[1e-6, 1e9]``
    gives ``epsilon``.
    """
    scale = _scale_near(epsilon=epsilon, cutoff=cutoff, queries=queries, delta=delta,
                        conversion=conversion, threshold=threshold)
    step = math.ulp(scale)
    for _ in range(_MAX_SOLVER_STEPS):
        try:
            found = svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta,
                                  orders=orders, conversion=conversion,
                                  threshold=threshold).epsilon
        except ValueError:
            found = math.inf  # a fixed threshold leaves no delta at this scale
        if found <= epsilon:
            return scale
        scale, step = scale + step, 2.0 * step
    raise ValueError(f"no SVT scale in [1e-6, 1e9] gives epsilon {epsilon:g} "
                     f"with cut-off {cutoff} and delta {delta:g}")


def _scale_near(*, epsilon: float, cutoff: int, queries: int, delta: float, conversion: str,
                threshold: float | None) -> float:
    """:func:`svt_scale_for_epsilon`'s solution before its check: a closed form or Brent's
    root, within rounding of the target on either side."""
    from scipy.optimize import brentq

    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"target epsilon must be positive, got {epsilon!r}")
    if conversion == "classic" and threshold is None:
        check_delta(delta)
        check_positive_integer(cutoff, "SVT cut-off")
        log_inv_delta = -math.log(delta / 2.0)
        root_rho = epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))
        scale = min(2.0 * cutoff / epsilon, math.sqrt(2.0 * cutoff) / root_rho)
        if not 1e-6 <= scale <= 1e9:
            raise ValueError(f"no SVT scale in [1e-6, 1e9] gives epsilon {epsilon:g} "
                             f"with cut-off {cutoff} and delta {delta:g}")
        return scale
    if threshold is None:
        # Where the pure bound binds at its own solution 2c/epsilon, that is the scale.
        pure_scale = 2.0 * cutoff / epsilon
        if 1e-6 <= pure_scale <= 1e9 and bool(svt_epsilon(
                scale=pure_scale, rounds=cutoff, delta=delta / 2.0, conversion=conversion)[2]):
            return pure_scale

    def gap(log_scale: float) -> float:
        try:
            found = svt_guarantee(scale=math.exp(log_scale), cutoff=cutoff, queries=queries,
                                  delta=delta, conversion=conversion,
                                  threshold=threshold).epsilon
        except ValueError:
            found = math.inf  # a fixed threshold too low for this scale: not private
        return found - epsilon

    low, high = math.log(1e-6), math.log(1e9)
    if threshold is not None and not gap(high) < 0:
        # a fixed threshold leaves delta only below some scale (delta2 grows with it)
        def spare(log_scale: float) -> float:
            return delta * (1 - 1e-9) - svt_delta2(scale=math.exp(log_scale), cutoff=cutoff,
                                                   threshold=threshold, queries=queries)

        if spare(low) > 0 > spare(high):
            high = brentq(spare, low, high, xtol=1e-12, maxiter=_MAX_SOLVER_STEPS)
            while not spare(high) > 0:
                high -= 1e-9
    if not (gap(low) > 0 > gap(high)):
        raise ValueError(f"no SVT scale in [1e-6, 1e9] gives epsilon {epsilon:g} "
                         f"with cut-off {cutoff} and delta {delta:g}")
    log_scale = brentq(gap, low, high, xtol=1e-12, rtol=1e-12, maxiter=_MAX_SOLVER_STEPS)
    return math.exp(log_scale)


def _check_scale_cutoff(scale: float, cutoff: int) -> None:
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"SVT scale must be positive, got {scale!r}")
    check_positive_integer(cutoff, "SVT cut-off")
