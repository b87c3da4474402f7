"""Data-independent epsilon of Gaussian and pure-DP steps from their privacy loss
distributions (math:independent, math:sampling): exact closed forms (Balle and Wang 2018;
Kairouz, Oh and Viswanath 2015), else dp_accounting's pessimistic PLD accountant.

Derivation: docs/explanation/data-independent.md#pld-figures.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from functools import lru_cache

from .risk import TRUSTED_DELTA, gaussian_mu

# The epsilons a pure-DP composition's exact profile is read at (its attack risk).
PROFILE_POINTS = 2001
# dp_accounting's default grid step, and a cap on the points of one distribution.
DEFAULT_INTERVAL = 1e-4
MAX_POINTS = 300_000
# The smallest Poisson rate given to dp_accounting (its sampled Gaussian divides by the rate:
# 1 / rate overflows for subnormal rates); smaller rates are accounted at it (an upper bound).
SMALLEST_RATE = sys.float_info.min


def discretization_interval(steps: Sequence[tuple[float, float, int]],
                            rate: float | None = None) -> float:
    """The PLD grid step for ``steps``: dp_accounting's default 1e-4, coarser where one
    distribution would need over ``MAX_POINTS`` points (docs/explanation/numerics.md#pld-grid)."""
    widths = []
    for sensitivity, std, count in steps:
        if count <= 0:
            continue
        s = std / sensitivity
        width = 20.0 * math.sqrt(count) / s + count / (s * s)
        if rate is not None and rate < 1.0:
            spread = min(1.0 / s, rate * math.sqrt(math.expm1(min(1.0 / (s * s), 700.0))))
            single = -math.log1p(-rate) + math.log1p(rate * math.exp(min(10.0 / s, 700.0)))
            width = min(width, 20.0 * math.sqrt(count) * spread
                        + 2.0 * count * spread * spread + single)
        widths.append(width)
    return max([DEFAULT_INTERVAL] + [width / MAX_POINTS for width in widths])


def pld_available() -> bool:
    """Whether dp_accounting (the ``accounting`` extra) can be imported: without it,
    :func:`gaussian_pld` returns None (a sampled run keeps its unsampled figure)."""
    try:
        import dp_accounting  # noqa: F401
        from dp_accounting.pld import pld_privacy_accountant  # noqa: F401
    except ImportError:
        return False
    return True


def gaussian_pld(steps: Sequence[tuple[float, float, int]], rate: float | None = None):
    """The PLD of Gaussian steps as dp_accounting's PLD accountant composes them (pessimistic).

    Args:
      steps: ``(sensitivity, std, count)`` per kind of step.
      rate: each step Poisson-sampled (math:sampling, add-or-remove neighbours); a rate
        below ``SMALLEST_RATE`` is accounted at it (an upper bound).

    Returns:
      The PLD, or None without dp_accounting or steps, or where its grid overflows.
    """
    if not pld_available():
        return None
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    if rate is not None:
        rate = max(rate, SMALLEST_RATE)
    counted = [(std / sensitivity, int(count)) for sensitivity, std, count in steps
               if count > 0]
    if not counted:
        return None
    interval = discretization_interval(steps, rate)
    composed = pld_module.identity(value_discretization_interval=interval)
    try:
        for ratio, count in counted:  # the accountant's order and operations (same bits)
            if rate is None:  # count unsampled steps are one of std ratio / sqrt(count)
                step = pld_module.from_gaussian_mechanism(
                    standard_deviation=ratio / math.sqrt(count),
                    value_discretization_interval=interval)
            else:
                step = pld_module.from_gaussian_mechanism(
                    standard_deviation=ratio, value_discretization_interval=interval,
                    sampling_prob=rate).self_compose(count)
            composed = composed.compose(step)
    except (OverflowError, ValueError, MemoryError):  # its grid or an expm1 overflows
        return None
    return composed


def gaussian_exact_epsilon(steps: Sequence[tuple[float, float, int]], delta: float) -> float:
    """The epsilon at ``delta`` of composed Gaussian steps ``(sensitivity, std, count)``, from
    their exact profile (Balle and Wang 2018, Theorem 8), rounded up by its error bound.

    Returns:
      The epsilon; 0.0 with no step or a profile below ``delta`` at 0, inf where the profile
      is not resolved.
    """
    from scipy.special import log_ndtr

    mu = gaussian_mu(steps) * (1.0 + 4.0 * sys.float_info.epsilon)
    if mu == 0.0:
        return 0.0

    def terms(eps: float) -> tuple[float, float]:
        """``log Phi(a)`` and ``eps + log Phi(b)``: ``delta = e^first - e^second``."""
        return (float(log_ndtr(-eps / mu + mu / 2.0)),
                eps + float(log_ndtr(-eps / mu - mu / 2.0)))

    def log_delta(eps: float) -> float:
        first, second = terms(eps)
        return first + math.log1p(-math.exp(second - first)) if second < first else -math.inf

    target = math.log(delta)
    if log_delta(0.0) <= target:
        return 0.0
    low, high = 0.0, 1.0
    while log_delta(high) > target:
        low, high = high, 2.0 * high
    for _ in range(200):
        middle = 0.5 * (low + high)
        if log_delta(middle) > target:
            low = middle
        else:
            high = middle
    # log delta's error (64 ulps of each term, amplified by 1 / (1 - r), r = e^(second -
    # first)) moves eps by at most 64 ulps x (|first| + |second| + eps) x (1 + 1/r)
    first, second = terms(high)
    ratio = math.exp(second - first)
    if not 0.0 < ratio < 1.0:  # the profile not resolved there: no figure (RDP's stands)
        return math.inf
    error = 64.0 * sys.float_info.epsilon * (abs(first) + abs(second) + high)
    return high + error * (1.0 + 1.0 / ratio)


@lru_cache(maxsize=256)  # a sweep's replays of one point ask for the same figure
def pure_composed_epsilon(epsilon: float, queries: int, delta: float) -> float:
    """The exact epsilon at ``delta`` of ``queries`` composed ``epsilon``-DP steps (Kairouz,
    Oh and Viswanath 2015), rounded up; at most ``k epsilon``, 0 where ``delta`` reaches the
    total variation. ``epsilon > 0``, ``queries >= 1``, ``delta`` in (0, 1)."""
    import numpy as np

    k = int(queries)
    mass, loss = _binomial_loss(epsilon, k)
    target = delta / (1.0 + 1e-9)

    def profile(e: float) -> float:
        above = loss > e
        return float(np.sum(mass[above] * -np.expm1(e - loss[above])))

    low, high = 0.0, math.nextafter(k * epsilon, math.inf)  # above k epsilon, rounding aside
    if profile(low) <= target:
        return 0.0
    for _ in range(200):  # to the last bit of the bracket
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        if profile(middle) <= target:
            high = middle
        else:
            low = middle
    return min(high + 16.0 * (abs(high) + 1.0) * sys.float_info.epsilon,
               math.nextafter(k * epsilon, math.inf))


def _binomial_loss(epsilon: float, k: int):
    """``k`` composed randomized responses' privacy loss: the masses ``Bin(k, p)(j)``,
    ``p = e^eps / (1 + e^eps)``, and the losses ``eps (2 j - k)``, ``j = 0 .. k``."""
    import numpy as np
    from scipy.special import expit
    from scipy.stats import binom

    plus = np.arange(k + 1)
    return np.exp(binom.logpmf(plus, k, expit(epsilon))), epsilon * (2.0 * plus - k)


@lru_cache(maxsize=16)
def pure_composed_profile(epsilon: float, queries: int) -> tuple:
    """The exact privacy profile of ``queries`` composed ``epsilon``-DP steps at
    ``PROFILE_POINTS`` epsilons up to the composed epsilon at delta 1e-16, each delta raised
    over its rounding (math:risk). Returns ``(epsilons, deltas)`` (read-only)."""
    import numpy as np

    k = int(queries)
    mass, loss = _binomial_loss(epsilon, k)
    kept = mass >= 1e-40
    dropped = float(mass[~kept].sum())
    mass, loss = mass[kept], loss[kept]
    epsilons = np.linspace(0.0, pure_composed_epsilon(epsilon, k, 1e-16), PROFILE_POINTS)
    left = epsilons - 16.0 * (np.abs(epsilons) + 1.0) * sys.float_info.epsilon
    deltas = np.empty_like(epsilons)
    step = max(1, (1 << 20) // loss.size)  # (epsilons x losses) work arrays of 8 MB
    for lo in range(0, epsilons.size, step):
        gap = left[lo:lo + step, None] - loss[None, :]
        terms = np.where(gap < 0.0, mass[None, :] * -np.expm1(np.minimum(gap, 0.0)), 0.0)
        deltas[lo:lo + step] = terms.sum(axis=1) + dropped
    deltas = np.minimum(1.0, deltas * (1.0 + 1e-9))
    for shared in (epsilons, deltas):  # cached: read only
        shared.setflags(write=False)
    return epsilons, deltas


def laplace_pld(scale: float, steps: int):
    """dp_accounting's privacy loss distribution of ``steps`` composed Laplace mechanisms
    (sensitivity 1, scale ``scale``; pessimistic), on a grid sized for the composed loss;
    None without dp_accounting or where its grid overflows."""
    if not pld_available():
        return None
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    # the grid: the composed loss (each step's in [-1/lambda, 1/lambda]) about 10 std either
    # side, in at most MAX_POINTS points
    width = min(20.0 * math.sqrt(steps), 2.0 * steps) / float(scale)
    interval = max(DEFAULT_INTERVAL, width / MAX_POINTS)
    try:
        return pld_module.from_laplace_mechanism(
            float(scale), sensitivity=1.0,
            value_discretization_interval=interval).self_compose(int(steps))
    except (OverflowError, ValueError, MemoryError):
        return None


@lru_cache(maxsize=256)
def laplace_pld_epsilon(scale: float, steps: int, delta: float) -> float | None:
    """The epsilon at ``delta`` of ``steps`` composed Laplace mechanisms (sensitivity 1, scale
    ``lambda``; LNMax: two per answer) by :func:`laplace_pld`, raised by 1e-6 relative; None
    without dp_accounting, below ``risk.TRUSTED_DELTA`` or where its grid overflows."""
    composed = None if delta < TRUSTED_DELTA else laplace_pld(scale, steps)
    if composed is None:
        return None
    try:
        epsilon = float(composed.get_epsilon_for_delta(delta))
    except (OverflowError, ValueError):
        return None
    return epsilon * (1.0 + 1e-6) if math.isfinite(epsilon) else None
