"""Amplification by subsampling: RDP of a step run on a random subset of the privacy units.

math:sampling, vectorised over the orders: Mironov, Talwar and Zhang 2019 and Zhu and Wang
2019 (Poisson), Wang, Balle and Kasiviswanathan 2019 (WBK; without replacement).
Derivation: docs/explanation/sampling.md#the-bounds-order-by-order

Size: one concept, amplification by subsampling; the five bounds share the binomial sums,
the chord between integer orders and the caps, so they stay together.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache, partial

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import log1mexp
from ..orders import validate_orders
from .laplace import rdp_laplace, rdp_lnmax_data_independent
from .validators import check_positive

# Integer orders up to which the binomial sums are formed (an (orders, terms) array).
MAX_INTEGER_ORDER = 2048
# Fractional-order series: terms added per block, the most terms, and the stop (both
# series' last terms below exp(-_SERIES_STOP) of the total and decreasing).
_SERIES_BLOCK = 64
_SERIES_TERMS = 1024
_SERIES_STOP = 40.0
# WBK's Theorem 27 up to this integer order (its central moments to one above), as
# dp_accounting does; Theorem 9's terms beyond.
THEOREM_27_ORDER = 256

Curve = Callable[[np.ndarray], np.ndarray]


def check_rate(rate: float) -> None:
    """``ValueError`` unless ``0 < rate <= 1`` (math:sampling)."""
    if not (isinstance(rate, (int, float, np.floating)) and 0.0 < rate <= 1.0):
        raise ValueError(f"the sampling rate must lie in (0, 1], got {rate!r}")


def log_binomial(n: ArrayLike, k: ArrayLike) -> np.ndarray:
    """``log |C(n, k)|`` for real ``n``, integer ``k >= 0`` (``gammaln``: ``log |Gamma|``);
    ``-inf`` where ``C(n, k) = 0`` (integer ``n < k``)."""
    from scipy.special import gammaln
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        rest = n - k + 1.0
        pole = (rest <= 0) & (rest == np.rint(rest))
        value = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(np.where(pole, 1.0, rest))
    return np.where(pole, -np.inf, value)


def rdp_poisson_gaussian(*, rate: float, noise_multiplier: float,
                         orders: ArrayLike) -> np.ndarray:
    """RDP of the Poisson-sampled Gaussian (Mironov, Talwar and Zhang 2019; math:sampling).

    Args:
      rate: ``q``, in (0, 1].
      noise_multiplier: ``z``, the noise's std over the L2 sensitivity.

    Returns:
      The RDP per order, at most ``alpha / (2 z^2)`` (its value at ``q = 1``).
    """
    check_rate(rate)
    check_positive(noise_multiplier, "noise multiplier")
    orders = validate_orders(orders)
    z = float(noise_multiplier)
    if rate == 1.0:
        return orders / (2.0 * z * z)
    out = np.empty(orders.size)
    whole = orders == np.floor(orders)
    large = orders > MAX_INTEGER_ORDER
    out[large] = orders[large] / (2.0 * z * z)
    integer = whole & ~large
    if integer.any():
        out[integer] = _rounded_up(_integer_sum(rate, z, orders[integer]) / (orders[integer] - 1.0))
    fractional = ~whole & ~large
    if fractional.any():
        alphas = orders[fractional]
        series, settled = _fractional_series(rate, z, alphas)
        if not settled.all():  # the smaller of the tail bound and the integer values' chord
            low, high = np.floor(alphas), np.ceil(alphas)
            at_low = np.where(low >= 2.0, _integer_sum(rate, z, np.maximum(low, 2.0)), 0.0)
            t = alphas - low
            chord = (1.0 - t) * at_low + t * _integer_sum(rate, z, high)
            series = np.where(settled, series, np.minimum(series, chord))
        out[fractional] = series / (alphas - 1.0)
    # never above the step's own curve (a chord near rate 1 could be; math:sampling)
    return np.clip(out, 0.0, orders / (2.0 * z * z))


def _integer_sum(q: float, z: float, alphas: np.ndarray) -> np.ndarray:
    """``log A_alpha`` at integer orders: MTZ's finite binomial sum (:func:`_binomial_moment`)."""
    i = np.arange(2, int(alphas.max()) + 1, dtype=np.float64)
    return _binomial_moment(q, alphas, i, (i * i - i) / (2.0 * z * z))


def _binomial_moment(q: float, alphas: np.ndarray, steps: np.ndarray,
                     exponents: np.ndarray) -> np.ndarray:
    """``log E_Q[((1 - q) + q P/Q)^alpha]`` at integer orders from ``exponents[i] = log
    E_Q[(P/Q)^i]`` at ``steps`` ``i = 2, 3, ...``: ``log(1 + sum_i C(alpha, i) q^i (1 -
    q)^(alpha - i) (e^exponents[i] - 1))`` (math:sampling), every term positive, raised by
    its rounding (:func:`_log1p_sum`)."""
    i, a = steps[None, :], alphas[:, None]
    exponent = exponents[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = exponent + log1mexp(-exponent)  # log expm1, stably
        return _log1p_sum(i <= a, log_binomial(a, i), i * math.log(q),
                          (a - i) * math.log1p(-q), gain)


def _fractional_series(q: float, z: float, alphas: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(bound, settled)``: MTZ's two signed series for ``log A_alpha`` at fractional orders,
    plus the bound on an unsettled rest (``inf`` where ``n - 1 <= alpha``: the caller takes
    the chord); docs/explanation/sampling.md#fractional-orders."""
    from scipy.special import gammaln, gammasgn, log_ndtr, logsumexp
    eps = np.finfo(np.float64).eps
    odds = 1.0 / q - 1.0  # inf at a subnormal rate: its log from log(1 - q) - log(q)
    z0 = z * z * (math.log(odds) if odds < math.inf else math.log1p(-q) - math.log(q)) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    a = alphas[:, None]
    positive = np.full(alphas.size, -np.inf)
    negative = np.full(alphas.size, -np.inf)
    error = np.full(alphas.size, -np.inf)  # log sum over terms of |term| x its magnitude
    settled = np.zeros(alphas.size, dtype=bool)
    last = np.full(alphas.size, -np.inf)  # log of the last terms' magnitudes summed
    end = np.zeros(alphas.size)  # n: the first term left out
    for start in range(0, _SERIES_TERMS, _SERIES_BLOCK):
        i = np.arange(start, start + _SERIES_BLOCK, dtype=np.float64)[None, :]
        j = a - i
        coefficient = log_binomial(a, i)
        low, high = log_ndtr((z0 - i) / z), log_ndtr((j - z0) / z)
        first = (coefficient + i * log_q + j * log_1mq + (i * i - i) / (2.0 * z * z) + low)
        second = (coefficient + j * log_q + i * log_1mq + (j * j - j) / (2.0 * z * z) + high)
        both = np.logaddexp(first, second)
        # the sum of the magnitudes each term's logarithm is formed from: its rounding
        # (a few ulps of each) is at most a small multiple of eps times this, relative
        with np.errstate(invalid="ignore"):
            common = (np.abs(gammaln(a + 1.0)) + gammaln(i + 1.0)
                      + np.abs(np.nan_to_num(gammaln(j + 1.0), posinf=0.0)) + 1.0)
            spreads = np.logaddexp(
                first + np.log(common + i * abs(log_q) + np.abs(j) * abs(log_1mq)
                               + (i * i + i) / (2.0 * z * z) - low),
                second + np.log(common + np.abs(j) * abs(log_q) + i * abs(log_1mq)
                                + (j * j + np.abs(j)) / (2.0 * z * z) - high))
        sign = gammasgn(j + 1.0)
        adds = logsumexp(np.where(sign > 0, both, -np.inf), axis=1)
        subtracts = logsumexp(np.where(sign < 0, both, -np.inf), axis=1)
        spread = logsumexp(np.where(sign != 0, spreads, -np.inf), axis=1)
        positive = np.where(settled, positive, np.logaddexp(positive, adds))
        negative = np.where(settled, negative, np.logaddexp(negative, subtracts))
        error = np.where(settled, error, np.logaddexp(error, spread))
        last = np.where(settled, last, np.logaddexp(first[:, -1], second[:, -1]))
        end = np.where(settled, end, start + _SERIES_BLOCK)
        falling = (first[:, -1] < first[:, -2]) & (second[:, -1] < second[:, -2])
        small = both[:, -1] < positive - _SERIES_STOP
        settled |= falling & small
        if settled.all():
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        total = positive + log1mexp(np.minimum(negative - positive, 0.0))
        # P - N cancels where A is close to 1: raised by the terms' rounding (8 eps
        # times each term's magnitude) and the sums' (8 eps of P + N), never below A
        allowance = np.logaddexp(math.log(8.0 * eps) + error,
                                 math.log(8.0 * eps) + np.logaddexp(positive, negative))
        bound = np.logaddexp(np.where(np.isnan(total), -np.inf, total), allowance)
        rest = last + np.log((end - 1.0 - alphas) / end)  # the terms left out
        bound = np.where(settled, bound, np.where(end - 1.0 > alphas,
                                                  np.logaddexp(bound, rest), np.inf))
    return np.where(np.isnan(bound), np.inf, bound), settled  # NaN: a subnormal rate


def rdp_poisson_general(curve: Curve, *, rate: float, orders: ArrayLike) -> np.ndarray:
    """Zhu and Wang 2019, Theorem 6: a step of integer-order RDP ``curve`` Poisson-sampled at
    ``rate`` (math:sampling).

    Returns:
      The RDP at ``orders``, capped by ``curve`` (``curve`` itself at rate 1).
    """
    check_rate(rate)
    orders = validate_orders(orders)
    own = curve(orders)
    if rate == 1.0:
        return own

    def log_moment(alphas: np.ndarray, steps: np.ndarray, base: np.ndarray) -> np.ndarray:
        # (1 - g)^(a-1) (1 + g (a - 1)) + C(a,2) g^2 (1-g)^(a-2) e^e(2) + 3 sum_{l >= 3} ...
        # is the binomial sum with E[(P/Q)^2] = e^e(2) and E[(P/Q)^l] = 3 e^((l-1) e(l)):
        # 1 plus positive terms, no cancellation where the sum is close to 1
        steps = steps.reshape(-1)
        exponents = (steps - 1.0) * base.reshape(-1) + np.where(steps > 2.0, math.log(3.0), 0.0)
        return _binomial_moment(rate, alphas, steps, exponents)

    return np.minimum(_rounded_up(_interpolated(log_moment, curve, orders)), own)


def rdp_poisson_laplace(*, rate: float, scale: float, sensitivity: float,
                        orders: ArrayLike) -> np.ndarray:
    """The Poisson-sampled Laplace mechanism: Zhu and Wang 2019, Theorem 8, exact (math:sampling).

    Args:
      scale: the Laplace scale ``b``.
      sensitivity: the L1 sensitivity (LNMax's counts: 2 under ``move``).

    Returns:
      The RDP per order (the chord at fractional orders), capped by the unsampled curve.
    """
    check_rate(rate)
    check_positive(scale, "laplace scale")
    check_positive(sensitivity, "sensitivity")
    orders = validate_orders(orders)
    curve = partial(_laplace_curve, scale / sensitivity)
    if rate == 1.0:
        return curve(orders)

    def log_moment(alphas: np.ndarray, steps: np.ndarray, base: np.ndarray) -> np.ndarray:
        steps = steps.reshape(-1)
        return _binomial_moment(rate, alphas, steps, (steps - 1.0) * base.reshape(-1))

    return np.minimum(_rounded_up(_interpolated(log_moment, curve, orders)), curve(orders))


def _laplace_curve(scale: float, orders: ArrayLike) -> np.ndarray:
    return rdp_laplace(scale=scale, orders=orders)


def rdp_without_replacement_gaussian(*, rate: float, noise_multiplier: float,
                                     orders: ArrayLike) -> np.ndarray:
    """WBK 2019, Theorem 27 (Theorem 9's terms above ``THEOREM_27_ORDER``): the Gaussian of noise
    multiplier ``z`` on ``m`` of ``N`` units drawn without replacement, ``rate = m / N``.

    Returns:
      The RDP per order (math:sampling), never above the Gaussian's ``alpha / (2 z^2)``.
    """
    check_rate(rate)
    check_positive(noise_multiplier, "noise multiplier")
    orders = validate_orders(orders)
    z = float(noise_multiplier)
    own = partial(_gaussian_curve, z)
    if rate == 1.0:
        return own(orders)
    log_moments = _gaussian_even_moments(z, THEOREM_27_ORDER + 1)

    def log_moment(alphas: np.ndarray, steps: np.ndarray, base: np.ndarray) -> np.ndarray:
        j, a = steps, alphas[:, None]
        cumulant = (j - 1.0) * base  # (j - 1) e(j)
        general = math.log(2.0) + cumulant
        low = np.minimum(2.0 * np.floor(j / 2.0), THEOREM_27_ORDER).astype(np.intp)
        high = np.minimum(2.0 * np.ceil(j / 2.0), THEOREM_27_ORDER).astype(np.intp)
        central = math.log(4.0) + 0.5 * (log_moments[low] + log_moments[high])
        term = np.where(j <= THEOREM_27_ORDER, np.minimum(central, general), general)
        with np.errstate(invalid="ignore"):
            return _log1p_sum(j <= a, log_binomial(a, j), j * math.log(rate), term)

    return np.minimum(_rounded_up(_interpolated(log_moment, own, orders)), own(orders))


@lru_cache(maxsize=32)
def _gaussian_even_moments(z: float, top: int) -> np.ndarray:
    """``log M_l`` (index ``l``, even ``l <= top``; odd entries unused) of ``N(1, z^2)`` against
    ``N(0, z^2)``, rounding error added: never under-stated (math:sampling). The smaller of the
    alternating sum (exact for small noise) and :func:`_series_even_moments` (for large noise,
    where the sum cancels); read-only (cached per ``z``)."""
    moments = np.minimum(_alternating_even_moments(z, top), _series_even_moments(z, top))
    moments.flags.writeable = False
    return moments


def _alternating_even_moments(z: float, top: int) -> np.ndarray:
    """``log M_l`` as the alternating forward difference, its rounding error bound added."""
    even = np.arange(0, top + 1, 2)
    out = np.full(top + 1, np.inf)
    out[0] = 0.0
    i = np.arange(top + 1, dtype=np.float64)
    exponent = i * (i - 1.0) / (2.0 * z * z)
    with np.errstate(divide="ignore"):
        log_step = exponent + log1mexp(-exponent)  # log expm1; -inf at i = 0, 1
    eps = np.finfo(np.float64).eps
    for l in even[1:]:  # a few hundred orders, each an array over i (no query loop)
        binomials = np.array([math.comb(int(l), k) for k in range(l + 1)], dtype=np.float64)
        magnitude = np.log(binomials) + log_step[:l + 1]
        negative = (l - np.arange(l + 1)) % 2 == 1
        scale = float(np.max(magnitude))
        weights = np.exp(magnitude - scale)
        # each weight within 4 u (|log| + |scale| + 4) relative (log, exp, the products),
        # the two pairwise sums and their difference within (l + 2) u of their total
        error = float(np.sum(weights * 4.0 * eps * (np.abs(np.where(
            np.isfinite(magnitude), magnitude, 0.0)) + abs(scale) + 4.0)))
        error += (l + 2) * eps * float(np.sum(weights))
        difference = float(np.sum(weights[~negative]) - np.sum(weights[negative]))
        out[l] = scale + math.log(max(difference, 0.0) + error)
    return out


# Most terms :func:`_series_even_moments` forms (each an array op over the indices).
_MOMENT_TERMS = 4096


def _series_even_moments(z: float, top: int) -> np.ndarray:
    """``log M_l`` as a series of non-negative terms (upper bounds; ``inf`` where it does not
    settle within ``_MOMENT_TERMS`` terms). With ``a = 1 / (2 z^2)``,
    ``E_Q[(P/Q)^k] = exp(a k(k-1)) = sum_m a^m (k(k-1))^m / m!``, and ``(k(k-1))^m`` is a sum
    of falling factorials ``k^(j)`` with non-negative coefficients ``c_m[j]``
    (``k^(2) k^(j) = k^(j+2) + 2j k^(j+1) + j(j-1) k^(j)``), whose l-th forward difference
    at 0 is ``l! [j = l]``: ``M_l = l! sum_m a^m c_m[l] / m!``, without the alternating sum's
    cancellation. Summed in logarithms as ``u_m[l] = a^(m - l/2) c_m[l] / m!``,
    ``u_(m+1)[j] = (u_m[j-2] + 2(j-1) sqrt(a) u_m[j-1] + a j(j-1) u_m[j]) / (m+1)``; the tail
    past the last term is bounded by ``c_m[l] l! <= 2^l (l(l-1))^m``, and the rounding of the
    logarithms (each step within 8 ulps of its operands' magnitudes) is added."""
    out = np.full(top + 1, np.inf)
    a = 1.0 / (2.0 * z * z)
    log_a = math.log(a)
    # the indices whose tail bound falls below half its last term within the terms formed
    count = min(top, int(math.sqrt(_MOMENT_TERMS / (4.0 * a))))
    if count < 2:
        return out
    from scipy.special import gammaln
    j = np.arange(count + 1, dtype=np.float64)
    growth = a * j * (j - 1.0)  # b_l: the tail's ratio
    with np.errstate(divide="ignore"):
        one = np.log(2.0 * np.maximum(j - 1.0, 0.0)) + 0.5 * log_a
        two = np.log(j * (j - 1.0)) + log_a
        head = j * math.log(2.0) - gammaln(j + 1.0) - 0.5 * j * log_a
        log_growth = np.log(growth)
    term = np.full(count + 1, -np.inf)
    term[0] = 0.0  # u_0: k^(0) = 1
    total = np.full(count + 1, -np.inf)
    largest = 0.0
    tail = total
    for m in range(_MOMENT_TERMS):
        term = np.logaddexp(np.logaddexp(np.concatenate(([-np.inf, -np.inf], term[:-2])),
                                          one + np.concatenate(([-np.inf], term[:-1]))),
                            two + term) - math.log(m + 1.0)
        total = np.logaddexp(total, term)
        largest = max(largest, float(np.max(np.abs(np.where(np.isfinite(total), total, 0.0)))),
                      float(np.max(np.abs(np.where(np.isfinite(term), term, 0.0)))))
        after = m + 2.0  # the first term not formed
        if after >= 2.0 * float(growth[-1]) + 2.0:  # the tail: at most twice its first term
            tail = head + after * log_growth - gammaln(after + 1.0) + math.log(2.0)
            if np.all(tail[2:] <= total[2:] - 40.0):
                break
    else:
        return out
    rounding = (m + 1) * 8.0 * np.finfo(np.float64).eps * (
        largest + abs(log_a) + math.log(4.0 * count * count) + math.log(m + 2.0) + 4.0)
    found = gammaln(j + 1.0) + 0.5 * j * log_a + np.logaddexp(total, tail) + rounding
    out[2:count + 1] = found[2:] + 1e-12 * np.abs(found[2:])
    return out


def rdp_without_replacement(curve: Curve, *, rate: float, orders: ArrayLike,
                            pure_epsilon: float = math.inf) -> np.ndarray:
    """WBK 2019, Theorem 9: a step of integer-order RDP ``curve`` on ``m`` of ``N`` units drawn
    without replacement, ``rate = m / N`` (math:sampling).

    Args:
      pure_epsilon: the step's order-infinity epsilon (``inf``: none).

    Returns:
      The RDP per order, capped by ``curve`` (``curve`` itself at rate 1).
    """
    check_rate(rate)
    orders = validate_orders(orders)
    own = curve(orders)
    if rate == 1.0:
        return own
    # log min(2, (e^e_inf - 1)^j) for j = 2..: 2 for a step with no pure-DP bound
    log_spread = math.log(math.expm1(pure_epsilon)) if pure_epsilon < 30.0 else math.inf

    def log_moment(alphas: np.ndarray, steps: np.ndarray, base: np.ndarray) -> np.ndarray:
        a = alphas[:, None]
        factor = np.minimum(math.log(2.0), steps * log_spread)
        e2 = float(base[0, 0])
        second = min(math.log(4.0) + math.log(math.expm1(e2)),
                     e2 + min(math.log(2.0), 2.0 * log_spread)) if e2 > 0 else -math.inf
        term = np.where(steps == 2.0, second, (steps - 1.0) * base + factor)
        with np.errstate(invalid="ignore"):
            return _log1p_sum(steps <= a, log_binomial(a, steps), steps * math.log(rate), term)

    return np.minimum(_rounded_up(_interpolated(log_moment, curve, orders)), own)


def _log1p_sum(live: np.ndarray, *parts: np.ndarray) -> np.ndarray:
    """``log(1 + sum_l exp(t_l))`` per row over the ``live`` terms ``t = sum(parts)`` (each part
    broadcast to ``(orders, terms)``), raised by the rounding of the terms: each logarithm
    within ``8 eps`` of the sum of its parts' magnitudes plus the count of terms (their sum),
    never below the exact sum (math:sampling)."""
    from scipy.special import logsumexp
    terms = sum(parts)
    size = sum(np.abs(np.where(np.isfinite(part), part, 0.0)) for part in parts)
    size = size + 1.0 + live.shape[1]
    excess = logsumexp(np.where(live, terms, -np.inf), axis=1)
    error = logsumexp(np.where(live, terms + np.log(size), -np.inf), axis=1)
    excess = np.logaddexp(excess, math.log(8.0 * np.finfo(np.float64).eps) + error)
    large = excess > 0.0
    return np.where(large, excess + np.log1p(np.exp(-np.where(large, excess, 0.0))),
                    np.log1p(np.exp(np.minimum(excess, 0.0))))


def _rounded_up(rdp: np.ndarray) -> np.ndarray:
    """A computed bound raised by 8 ulps, never below the exact bound (math:sampling)."""
    return rdp + np.abs(rdp) * (8.0 * np.finfo(np.float64).eps)


def _interpolated(log_moment, curve: Curve, orders: np.ndarray) -> np.ndarray:
    """A bound ``log_moment(alphas, l, e(l))`` on ``(alpha - 1) rdp(alpha)`` at integer orders,
    carried to every order (the chord; ``curve`` above ``MAX_INTEGER_ORDER``)."""
    usable = orders <= MAX_INTEGER_ORDER
    out = curve(orders).astype(np.float64, copy=True)
    if not usable.any():
        return out
    chosen = orders[usable]
    low, high = np.floor(chosen), np.ceil(chosen)
    needed = np.unique(np.concatenate((low, high)))
    needed = needed[needed >= 2.0]
    top = int(needed.max()) if needed.size else 2
    steps = np.arange(2.0, top + 1.0)
    base = curve(steps)[None, :]
    moments = log_moment(needed, steps[None, :], base) if needed.size else needed
    moments = np.maximum(moments, 0.0)  # the cumulant is non-negative

    def at(points: np.ndarray) -> np.ndarray:
        found = np.searchsorted(needed, points)
        return np.where(points >= 2.0, moments[np.minimum(found, max(needed.size - 1, 0))]
                        if needed.size else 0.0, 0.0)

    t = chosen - low
    cumulant = (1.0 - t) * at(low) + t * at(high)
    out[usable] = cumulant / (chosen - 1.0)
    return out


# A declared sampling's curves (math:sampling), at module level so a step holding them pickles.

def sampled_gaussian_curve(scheme: str, rate: float, noise_multiplier: float,
                           orders: ArrayLike) -> np.ndarray:
    """A sampled Gaussian step (math:sampling): :func:`rdp_poisson_gaussian` under ``poisson``,
    else :func:`rdp_without_replacement_gaussian`."""
    if scheme == "poisson":
        return rdp_poisson_gaussian(rate=rate, noise_multiplier=noise_multiplier,
                                    orders=orders)
    return rdp_without_replacement_gaussian(rate=rate, noise_multiplier=noise_multiplier,
                                            orders=orders)


def _gaussian_curve(z: float, orders: ArrayLike) -> np.ndarray:
    return np.asarray(orders, dtype=np.float64) / (2.0 * z * z)


def sampled_laplace_curve(scheme: str, rate: float, scale: float, sensitivity: float,
                          orders: ArrayLike) -> np.ndarray:
    """LNMax's Laplace argmax on sampled units (math:sampling): Poisson, the smaller of Zhu and
    Wang's Theorems 8 and 6; without replacement, WBK Theorem 9 with pure epsilon
    ``sensitivity / scale``. ``sensitivity``: 2 (a unit moves a vote or is replaced) or 1 (it
    adds one). Never above :func:`laplace_argmax_curve`."""
    curve = partial(laplace_argmax_curve, scale, sensitivity)
    if scheme == "poisson":
        return np.minimum(
            rdp_poisson_laplace(rate=rate, scale=scale, sensitivity=sensitivity, orders=orders),
            rdp_poisson_general(curve, rate=rate, orders=orders))
    return rdp_without_replacement(curve, rate=rate, orders=orders,
                                   pure_epsilon=sensitivity / scale)


def laplace_argmax_curve(scale: float, sensitivity: float, orders: ArrayLike) -> np.ndarray:
    """The Laplace argmax's own curve: its counts' exact RDP capped by pure DP's ``min(eps0,
    alpha eps0^2 / 2)``, ``eps0 = sensitivity / scale`` (math:sampling)."""
    if sensitivity == 2.0:
        return rdp_lnmax_data_independent(scale=scale, orders=orders)
    eps0 = sensitivity / scale
    orders = np.asarray(orders, dtype=np.float64)
    return np.minimum(rdp_laplace(scale=scale / sensitivity, orders=orders),
                      np.minimum(0.5 * eps0 * eps0 * orders, eps0))
