"""The data-dependent bound and its sensitivity at one point (math:smooth): ``dep``, ``log
q0``, ``log q1 = log B_L(q0)``, the plateau ``LS(q1)``, ``rdp_ss`` and its local sensitivity
(Algorithm 3); the threshold step's table ``r[v]``; smooth sensitivity, the beta grid, the
release's RDP (:func:`rdp_gnss`) and conditions C5, C6 (:func:`check_conditions`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ...numerics import log1mexp
from ..conversion import ROUNDING_MARGIN
from ..gnmax import theorem6_terms
from ..threshold import rdp_threshold
from ..validators import as_teachers, check_order, check_std

# Step caps of the iterative solvers (they raise rather than return an unchecked value).
_BRENT_MAXITER = 200
_BRACKET_STEPS = 200


# --- Scalar functions of (sigma, order, K): math:smooth, "Where the data-dependent bound
# stops helping" and "How far one teacher moves q".


def dep_gnmax(log_q: ArrayLike, *, sigma: float, order: float) -> np.ndarray:
    """Section 3's data-dependent bound *without* its validity checks (math:smooth).

    ``dep(log q) = logaddexp(log(1-q) + log A, log q + log B) / (alpha - 1)`` (``log A``,
    ``log B`` of math:gnmax); 0 at ``log q = -inf``; meaningful for ``log q <= ub``
    (:func:`log_q0_gnmax`), else maybe NaN.
    """
    log_q = np.asarray(log_q, dtype=np.float64)
    out = np.zeros(log_q.shape)
    finite = np.isfinite(log_q)
    x = log_q[finite]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu1, mu2, e1, e2 = theorem6_terms(x, sigma)
        log1q = log1mexp(x)
        inner = (x + e2) * (1.0 - 1.0 / mu2)
        outside = ~(inner <= 0.0)  # the formula has no real value there
        log_a = (order - 1.0) * (log1q - log1mexp(np.where(outside, -1.0, inner)))
        log_a[outside] = np.nan
        log_b = (order - 1.0) * (e1 - x / (mu1 - 1.0))
        out[finite] = np.logaddexp(log1q + log_a, x + log_b) / (order - 1.0)
    return out


def log_q0_gnmax(*, sigma: float, order: float) -> float:
    """``log q0``: where ``dep`` meets ``alpha / sigma^2`` (math:smooth): ``ub`` if ``dep(ub) <
    alpha/sigma^2``, else Brent's root on ``[lb, ub]``, ``lb = 2 ub`` times 1.5 until ``dep(lb)
    <= alpha/sigma^2``; both loops capped (``RuntimeError``, never an unchecked value)."""
    from scipy.optimize import brentq
    check_std(sigma, "sigma")
    check_order(order)
    independent = order / (sigma * sigma)

    def excess(x: float) -> float:
        return float(dep_gnmax(np.array([x]), sigma=sigma, order=order)[0]) - independent

    ub = min(-((1.0 + 1.0 / sigma) ** 2), -(((order - 0.99) / sigma) ** 2), -1.0 / sigma**2)
    at_ub = excess(ub)
    if np.isnan(at_ub):
        raise RuntimeError(f"dep is undefined at ub={ub!r} (sigma={sigma}, order={order})")
    if at_ub < 0:
        return ub
    lb = 2.0 * ub
    for _ in range(_BRACKET_STEPS):
        value = excess(lb)
        if np.isnan(value):
            raise RuntimeError(f"dep is undefined at lb={lb!r} (sigma={sigma}, order={order})")
        if value <= 0:
            break
        lb *= 1.5
    else:
        raise RuntimeError(f"could not bracket log q0 (sigma={sigma}, order={order})")
    if value == 0:
        return lb
    # xtol at the float's precision: scipy's default 2e-12 puts LS(q1) ~4e-12 relative low
    root, info = brentq(excess, lb, ub, xtol=1e-300, maxiter=_BRENT_MAXITER,
                        full_output=True, disp=False)
    if not info.converged:
        raise RuntimeError(f"Brent's method did not converge for log q0 "
                           f"(sigma={sigma}, order={order}): {info.flag}")
    return float(root)


def check_smooth_domain(*, sigma: float, order: float) -> None:
    """Raise ``ValueError`` (one line) unless GNSS is computable at ``(sigma, order)``:
    ``log q0 <= ub`` (math:smooth) must stay above ``LOWEST_LOG_Q`` = -700, i.e. ``alpha <=
    0.99 + sqrt(700) sigma`` and ``sigma >= 1 / (sqrt(700) - 1)`` (about 0.0393); outside,
    later formulas meet 0 * inf and the release refuses rather than print NaN."""
    check_std(sigma, "sigma")
    check_order(order)
    reach = math.sqrt(-LOWEST_LOG_Q)
    if (1.0 + 1.0 / sigma) ** 2 > -LOWEST_LOG_Q:
        raise ValueError(f"smooth sensitivity needs sigma >= {1.0 / (reach - 1.0):.4g}, got "
                         f"{sigma:g} (q0 would underflow)")
    largest = 0.99 + reach * sigma
    if order > largest:
        raise ValueError(f"smooth sensitivity at sigma {sigma:g} needs an order of at most "
                         f"{math.floor(largest * 100) / 100:g}, got {order:g} (q0 would "
                         "underflow; --order or an --orders grid below it chooses another)")


def _log_erfc_shifted(log_q: ArrayLike, *, shift: float, classes: int) -> np.ndarray:
    """``log((K-1)/2 erfc(shift + erfcinv(2q/(K-1))))`` via ``log_ndtr`` (``erfc(x) = 2
    Phi(-sqrt(2) x)``), accurate where erfc underflows."""
    from scipy.special import erfcinv
    log_q = np.asarray(log_q, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        return _log_erfc_at(erfcinv(2.0 * np.exp(log_q) / (classes - 1)), shift, classes)


def _log_erfc_at(inverse: np.ndarray, shift: float, classes: int) -> np.ndarray:
    from scipy.special import log_ndtr
    return math.log(classes - 1) + log_ndtr(-math.sqrt(2.0) * (shift + inverse))


def log_b_lower(log_q: ArrayLike, *, sigma: float, classes: int) -> np.ndarray:
    """``log B_L(q)``, ``B_L(q) = (K-1)/2 erfc(1/sigma + erfcinv(2q/(K-1)))`` (math:smooth)."""
    return _log_erfc_shifted(log_q, shift=1.0 / sigma, classes=classes)


def log_b_upper(log_q: ArrayLike, *, sigma: float, classes: int) -> np.ndarray:
    """``log B_U(q)``, ``B_U(q) = min(1, (K-1)/2 erfc(-1/sigma + erfcinv(2q/(K-1))))``."""
    return np.minimum(0.0, _log_erfc_shifted(log_q, shift=-1.0 / sigma, classes=classes))


def rdp_gnss(beta: ArrayLike, *, sigma_ss: ArrayLike, order: float) -> np.ndarray:
    """RDP of the GNSS release (Theorem 23; math:smooth), ``1 < alpha < 1/(2 beta)``.

    ``alpha exp(2 beta) / sigma_ss^2 + (-0.5 log(1 - 2 alpha beta) + beta alpha) / (alpha-1)``,
    vectorised over ``beta`` and ``sigma_ss``."""
    beta = np.asarray(beta, dtype=np.float64)
    sigma_ss = np.asarray(sigma_ss, dtype=np.float64)
    if np.any(beta <= 0) or np.any(2.0 * order * beta >= 1.0) or order <= 1:
        raise ValueError("rdp_gnss needs beta > 0 and 1 < order < 1/(2 beta)")
    return (order * np.exp(2.0 * beta) / sigma_ss**2
            + (-0.5 * np.log1p(-2.0 * order * beta) + beta * order) / (order - 1.0))


@dataclass(frozen=True)
class GNMaxSmoothConstants:
    """One (sigma, order, K)'s ``log_q0``, ``log_q1 = log B_L(q0)``, ``independent =
    alpha/sigma^2`` and ``plateau = LS(q1)`` (math:smooth), by :meth:`compute`."""

    sigma: float
    order: float
    classes: int
    log_q0: float
    log_q1: float
    independent: float
    plateau: float

    @classmethod
    def compute(cls, *, sigma: float, order: float, classes: int) -> GNMaxSmoothConstants:
        check_std(sigma, "sigma")
        if int(classes) != classes or classes < 2:
            raise ValueError(f"classes must be an integer >= 2, got {classes!r}")
        classes = int(classes)
        log_q0 = log_q0_gnmax(sigma=sigma, order=order)
        log_q1 = float(log_b_lower(np.array([log_q0]), sigma=sigma, classes=classes)[0])
        partial = cls(sigma=float(sigma), order=float(order), classes=classes, log_q0=log_q0,
                      log_q1=log_q1, independent=order / sigma**2, plateau=math.nan)
        plateau = float(local_sensitivity_at(np.array([log_q1]), constants=partial)[0])
        return cls(sigma=float(sigma), order=float(order), classes=classes, log_q0=log_q0,
                   log_q1=log_q1, independent=order / sigma**2, plateau=plateau)


def rdp_ss(log_q: ArrayLike, *, constants: GNMaxSmoothConstants) -> np.ndarray:
    """``rdp_ss(log q) = alpha/sigma^2 if log q >= log q0 else dep(log q)`` (math:smooth)."""
    log_q = np.asarray(log_q, dtype=np.float64)
    out = np.full(log_q.shape, constants.independent)
    below = log_q < constants.log_q0
    out[below] = dep_gnmax(log_q[below], sigma=constants.sigma, order=constants.order)
    return out


def local_sensitivity_at(log_q: ArrayLike, *, constants: GNMaxSmoothConstants) -> np.ndarray:
    """Local sensitivity of ``rdp_ss`` at ``q`` (Algorithm 3; math:smooth), elementwise: ``q``
    in ``[q1, q0]`` reads ``q1``; ``LS = max(rdp_ss(B_U(q)) - b, b - rdp_ss(B_L(q)))``, ``b =
    rdp_ss(q)``."""
    from scipy.special import erfcinv
    c = constants
    log_q = np.asarray(log_q, dtype=np.float64)
    at_q1 = (log_q >= c.log_q1) & (log_q <= c.log_q0)
    log_q = np.where(at_q1, c.log_q1, log_q)
    base = rdp_ss(log_q, constants=c)
    # B_U(q1) = q0 exactly; computed, it may land just below q0, where dep can be far smaller
    with np.errstate(divide="ignore", over="ignore"):
        inverse = erfcinv(2.0 * np.exp(log_q) / (c.classes - 1))  # shared by B_U and B_L
        log_upper = np.minimum(0.0, _log_erfc_at(inverse, -1.0 / c.sigma, c.classes))
        log_lower = _log_erfc_at(inverse, 1.0 / c.sigma, c.classes)
    log_upper[log_q == c.log_q1] = c.log_q0
    upper = rdp_ss(log_upper, constants=c)
    lower = rdp_ss(log_lower, constants=c)
    return np.maximum(upper - base, base - lower)


# --- Threshold step: the table r[v] and its local sensitivity at distance d.


@dataclass(frozen=True)
class ThresholdSmoothConstants:
    """``r[v] = rdp_sel(log_ndtr((v - T)/sigma1))`` and ``ls(v)``, ``v = 0..M`` (math:smooth,
    "Threshold step at distance d"). ``ls_padded[M + v] = ls(v)`` with ``M`` zeros each side:
    out-of-range counts read 0, which leaves a maximum of ``ls >= 0`` unchanged."""

    threshold: float
    sigma_threshold: float
    order: float
    teachers: int
    r: np.ndarray = field(repr=False)
    ls_padded: np.ndarray = field(repr=False)

    @classmethod
    def compute(cls, *, threshold: float, sigma_threshold: float, order: float,
                teachers: int, cap: float | None = None) -> ThresholdSmoothConstants:
        """The table at one order; ``cap`` (math:screening's exact data-independent cost,
        where below math:independent's) caps ``r`` as the run charges it."""
        from scipy.special import log_ndtr
        teachers = as_teachers(teachers)
        check_std(sigma_threshold, "sigma_threshold")
        v = np.arange(teachers + 1, dtype=np.float64)
        r = rdp_threshold(log_ndtr((v - threshold) / sigma_threshold),
                          sigma_threshold=sigma_threshold, orders=[order])[:, 0]
        if cap is not None:
            r = np.minimum(r, cap)
        diff = np.abs(np.diff(r))
        ls = np.zeros(teachers + 1)
        ls[:-1] = diff
        ls[1:] = np.maximum(ls[1:], diff)
        padded = np.zeros(3 * teachers + 1)
        padded[teachers : 2 * teachers + 1] = ls
        r.setflags(write=False)
        padded.setflags(write=False)
        return cls(float(threshold), float(sigma_threshold), float(order), teachers, r, padded)

    def curves(self, rounded_max: np.ndarray) -> np.ndarray:
        """Each query's term of the summed local sensitivity at ``d = 0..M-1``: ``LS_sel[d] =
        max ls(v)`` over ``v`` in ``[m - d, m + d]`` within ``0..M`` (the whole window, never
        0 past an end: one query's ``m`` may move less than another's).

        Args:
          rounded_max: each query's ``m``, whole counts in ``0..M``.

        Returns:
          ``(queries, M)``, non-decreasing along each row.
        """
        m = rounded_max.astype(np.intp)[:, None]
        d = np.arange(self.teachers)[None, :]
        out = np.maximum(self.ls_padded[m + self.teachers + d],
                         self.ls_padded[m + self.teachers - d])
        return np.maximum.accumulate(out, axis=1, out=out)


# --- Smooth sensitivity, the beta search, conditions C5 and C6.


def smooth_sensitivity(local_sensitivity: ArrayLike, beta: ArrayLike) -> np.ndarray:
    """``SS_beta = max_d exp(-beta d) LS[d]`` (math:smooth), vectorised over ``beta``; raised by
    ``ROUNDING_MARGIN`` relative (an upper bound: the release's noise is never below the
    exact one by rounding, or by the root finding of :func:`log_q0_gnmax`)."""
    ls = np.asarray(local_sensitivity, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    d = np.arange(ls.size)
    return np.max(np.exp(-beta[..., None] * d) * ls, axis=-1) * (1.0 + ROUNDING_MARGIN)


def beta_grid(order: float) -> np.ndarray:
    """``arange(0.3/alpha, 0.495/alpha, 0.01/alpha)`` (math:smooth)."""
    return np.arange(0.3 / order, 0.495 / order, 0.01 / order)


def _nondecreasing(fn: Callable[[np.ndarray], np.ndarray], lo: float, hi: float,
                   points: int = 20001) -> bool:
    """Whether ``fn`` (vectorised, of log q) is non-decreasing on [lo, hi]: a dense grid, then a
    bounded minimiser of the slope at the steepest descent; decreases within rounding pass."""
    from scipy.optimize import minimize_scalar
    x = np.linspace(lo, hi, points)
    y = fn(x)
    if not np.all(np.isfinite(y)):
        return False
    scale = np.max(np.abs(y))
    tolerance = 1e-10 * scale + 1e-300
    dy = np.diff(y)
    if np.any(dy < -tolerance):
        return False
    worst = int(np.argmin(dy))
    a, b = x[max(worst - 1, 0)], x[min(worst + 2, points - 1)]
    h = (hi - lo) / points * 1e-2

    def slope(t: float) -> float:
        t0, t1 = max(lo, t - h), min(hi, t + h)
        values = fn(np.array([t0, t1]))
        return float(values[1] - values[0])

    best = minimize_scalar(slope, bounds=(a, b), method="bounded",
                           options={"maxiter": 200, "xatol": h})
    return bool(best.fun >= -tolerance)


# log q below which B_U / B_L underflow (q is then not a normal double).
LOWEST_LOG_Q = -700.0


def check_conditions(*, sigma: float, classes: int, order: float) -> tuple[bool, bool]:
    """Conditions C5 and C6 of the GNSS analysis (math:smooth), numerically: ``(c5, c6)``.

    C5: ``dep`` non-decreasing in q on ``(0, q0)``; C6: ``dep(B_U(q)) - dep(q)`` on ``(0,
    B_L(q0))``; checked on ``log q`` from ``min(-700, 10 log q0)`` (below, both vanish) up to
    ``log q0`` resp. ``log q1``."""
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    lo = min(LOWEST_LOG_Q, 10.0 * c.log_q0)

    def dep(x: np.ndarray) -> np.ndarray:
        return dep_gnmax(x, sigma=sigma, order=order)

    def gain(x: np.ndarray) -> np.ndarray:
        return dep(log_b_upper(x, sigma=sigma, classes=c.classes)) - dep(x)

    c5 = _nondecreasing(dep, lo, c.log_q0)
    c6 = _nondecreasing(gain, lo, c.log_q1)
    return c5, c6
