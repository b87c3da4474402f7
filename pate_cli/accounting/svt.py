"""SVT-PATE's guarantee: zCDP composition of the AboveThreshold rounds, the delta split and
the threshold (math:svt; Bassily, Thakkar, Thakurta 2018; Liu et al., Algorithm 2), over a
continuous order, never above the pure-DP ``c eps0``.
Derivation: docs/explanation/svt.md#solving-for-the-order-the-threshold-and-the-scale
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import divide_up
from ..orders import validate_orders
from .conversion import ROUNDING_MARGIN, rdp_to_epsilon
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
    """``(epsilon, order, pure)`` of ``rounds`` AboveThreshold rounds at ``delta`` (math:svt).

    ``min(k eps0, min over alpha > 1 of alpha rho + offset(alpha))``, ``eps0 = 2/lam``,
    ``rho = k eps0^2 / 2``, over a continuous order (math:conversion); ``improved`` clips at 0.

    Returns:
      Arrays like ``rounds``: ``order`` the line's best alpha, or inf where ``pure`` (``k
      eps0`` strictly smaller).
    """
    check_delta(delta)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"SVT scale must be positive, got {scale!r}")
    if conversion not in ("classic", "improved"):
        raise ValueError(f"conversion must be classic or improved, got {conversion!r}")
    rounds = np.asarray(rounds, dtype=np.float64)
    eps0 = 2.0 / scale
    pure = divide_up(2.0 * rounds, scale)  # k eps0, never below it by rounding
    rho = rounds * eps0 * eps0 / 2.0
    log_inv_delta = -math.log(delta)
    if conversion == "classic":
        # d/dalpha [alpha rho + L/(alpha-1)] = rho - L/(alpha-1)^2 = 0.
        excess = np.sqrt(log_inv_delta / rho)  # alpha - 1
        line = rho + 2.0 * np.sqrt(rho * log_inv_delta)
    else:
        excess = _improved_excess(rho, log_inv_delta)
        alpha = 1.0 + excess
        # log((alpha - 1) / alpha) as -log1p(1/t): log(t) - log1p(t) cancels at large t
        line = (alpha * rho - np.log1p(1.0 / excess)
                + (log_inv_delta - np.log1p(excess)) / excess)
        line = np.maximum(line, 0.0)
    # raised by ROUNDING_MARGIN as every converted epsilon, never below the exact minimum
    line = line * (1.0 + ROUNDING_MARGIN)
    use_pure = pure < line
    epsilon = np.where(use_pure, pure, line)
    order = np.where(use_pure, np.inf, 1.0 + excess)
    return epsilon, order, use_pure


def _improved_excess(rho: np.ndarray, log_inv_delta: float) -> np.ndarray:
    """``t = alpha - 1`` solving ``rho t^2 + log(1 + t) = L``, the improved conversion's best
    order, by bisection on the certified bracket ``(0, sqrt(L/rho)]`` (math:svt)."""
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
    ``met`` before, at most ``cutoff`` rounds): :func:`svt_epsilon`, or with ``carry`` (an
    external RDP curve) on the grid ``orders`` (math:conversion); once per round count."""
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
    """``min(c eps0, alpha rho)``, ``eps0 = 2/lam``, ``rho = c eps0^2 / 2`` (math:svt; Bun and
    Steinke 2016)."""
    orders = validate_orders(orders)
    _check_scale_cutoff(scale, cutoff)
    return rdp_svt_rounds(scale=scale, rounds=np.float64(cutoff), orders=orders)


def rdp_svt_rounds(*, scale: float, rounds: ArrayLike, orders: ArrayLike) -> np.ndarray:
    """The RDP of ``rounds`` AboveThreshold rounds (leading axes) at each order (last axis),
    ``min(k eps0, alpha k eps0^2 / 2)``: the one place the per-round cost is written (math:svt)."""
    eps0 = 2.0 / scale
    rounds = np.asarray(rounds, dtype=np.float64)[..., None]
    rho = rounds * eps0 * eps0 / 2.0
    return np.minimum(rounds * eps0, np.asarray(orders, dtype=np.float64) * rho)


def svt_delta2(*, scale: float, cutoff: int, threshold: float, queries: int) -> float:
    """Failure probability ``delta2`` of releasing a majority label at distance 0 (math:svt):
    ``n/2 exp(-(w-1)/(4 lam)) + (c+1)/2 exp(-(w-1)/(2 lam))``, raised by ``ROUNDING_MARGIN``
    over its floats' rounding (a part of the guarantee's delta)."""
    _check_scale_cutoff(scale, cutoff)
    x = math.exp(-(threshold - 1.0) / (4.0 * scale))
    return (0.5 * queries * x + 0.5 * (cutoff + 1) * x * x) * (1.0 + ROUNDING_MARGIN)


def svt_threshold_for(*, scale: float, cutoff: int, queries: int, delta2: float) -> float:
    """The smallest threshold ``w`` with ``delta2(w) <= delta2``, in closed form (math:svt):
    ``w = 1 - 4 lam log x``, ``x = 4 delta2 / (n + sqrt(n^2 + 8 (c+1) delta2))``."""
    _check_scale_cutoff(scale, cutoff)
    x = 4.0 * delta2 / (queries + math.sqrt(queries * queries + 8.0 * (cutoff + 1) * delta2))
    if not x > 0.0:  # delta2 (half the run's delta) underflows with the queries' factor
        raise ValueError(f"delta is too small for SVT-PATE: half of it, shared by {queries} "
                         "queries, is below the smallest float")
    return 1.0 - 4.0 * scale * math.log(x)


def svt_guarantee(*, scale: float, cutoff: int, queries: int, delta: float,
                  orders: ArrayLike | None = None, conversion: str = "classic",
                  threshold: float | None = None) -> SVTGuarantee:
    """The (epsilon, delta) guarantee of SVT-PATE (math:svt); ``orders`` is accepted, not used.

    Args:
      threshold: ``w``: given, ``delta2`` follows and ``delta1 = delta - delta2``; else
        ``delta1 = delta2 = delta/2`` and ``w`` the smallest with ``delta2 <= delta/2``.

    Returns:
      An :class:`SVTGuarantee`, epsilon by :func:`svt_epsilon` at ``delta1`` (``bound``
      ``"rdp"`` or ``"pure"``).

    Raises:
      ValueError: a threshold that leaves ``delta1 <= 0``, or bad arguments.
    """
    check_delta(delta)
    _check_scale_cutoff(scale, cutoff)
    if threshold is None:
        threshold = svt_threshold_for(scale=scale, cutoff=cutoff, queries=queries,
                                      delta2=delta / 2.0)
        # w's delta2 may round above delta/2: delta1 takes what that w leaves
        delta2 = max(delta / 2.0, svt_delta2(scale=scale, cutoff=cutoff, threshold=threshold,
                                             queries=queries))
        delta1 = math.nextafter(delta - delta2, 0.0)  # what is left, rounded down
    else:
        delta2 = svt_delta2(scale=scale, cutoff=cutoff, threshold=threshold, queries=queries)
        delta1 = math.nextafter(delta - delta2, 0.0)
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
    """The Laplace scale whose guarantee is at most ``epsilon``, as close as the solver gets: a
    closed form or Brent's method, raised until :func:`svt_guarantee` is within (math:svt).

    Raises:
      ValueError: no scale in ``[1e-6, 1e9]`` gives ``epsilon``.
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
    """:func:`svt_scale_for_epsilon`'s solution before its check, within rounding of the target."""
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
