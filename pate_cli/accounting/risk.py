"""Attack risk: upper bounds on a membership attacker's TPR at each FPR and on its advantage,
from f-DP (Dong, Roth and Su 2022) by mu-GDP, a PLD's or an RDP curve's profile (math:risk).

Derivation: docs/explanation/risk.md#routes; one-way curves: docs/explanation/risk.md#which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .conversion import epsilons_at_deltas

# The false-positive rates a summary reports the TPR bound at.
REPORTED_FPRS = (0.001, 0.01, 0.1)
# A trade-off curve's FPRs: 1e-6 to 1 log-spaced (10 a decade), and 0 to 1 by 0.025 (linear axes).
CURVE_FPRS = np.unique(np.concatenate([np.logspace(-6.0, 0.0, 61), np.linspace(0.0, 1.0, 41)]))
# The deltas an RDP curve is converted at: 1e-16 to 10^-0.05, 20 a decade.
RDP_DELTAS = np.logspace(-16.0, 0.0, 321)[:-1]
# The epsilons a PLD's profile is read at: 0 to where delta falls to TRUSTED_DELTA.
PLD_EPSILONS = 2001
# A sampled PLD's profile is trusted down to this delta only (below, dp_accounting's FFT
# rounding exceeds the pessimistic grid's margin: docs/explanation/risk.md#routes).
TRUSTED_DELTA = 1e-8
# Relative rounding margins: a profile's formulas (expm1 and exp: a few ulps, no
# cancellation) and the Gaussian's (ndtr of ndtri, whose error grows with the argument).
PROFILE_MARGIN = 16 * np.finfo(float).eps
GAUSSIAN_MARGIN = 1e-12
# A PLD's deltas are sums over its discretised losses, which lose up to ~1e-13 relative to
# rounding (measured against the Gaussian's closed form): each is raised by this first.
PLD_MARGIN = 1e-10


@dataclass(frozen=True)
class AttackRisk:
    """Upper bounds on a membership attacker's success (math:risk).

    Attributes:
      source: ``pld`` (a privacy loss distribution), ``rdp`` (an RDP curve's conversions)
        or ``pure`` (one (epsilon, delta) pair).
      advantage: the bound on TPR - FPR at the best FPR.
      mu: the mechanism's mu-GDP (Gaussian steps), else None.
      data_dependent: from a data-dependent curve: for these votes only, unsanitised (not
        for publication).
      bounds: the TPR bounds' ``("gaussian", mu)``, ``("profile", epsilons, deltas)`` and
        ``("one-way", epsilons, deltas)`` entries (the smallest holds).
    """

    source: str
    advantage: float
    mu: float | None = None
    data_dependent: bool = False
    bounds: tuple = field(default=(), repr=False, compare=False)

    def tpr_at(self, fpr) -> np.ndarray:
        """The TPR bound at each FPR of ``fpr``: the smallest of the bounds' (each raised)."""
        each = [gaussian_tpr(bound[1], fpr) if bound[0] == "gaussian"
                else profile_tpr(bound[1], bound[2], fpr, one_way=bound[0] == "one-way")
                for bound in self.bounds]
        return np.minimum.reduce(each) if each else np.ones(np.shape(fpr))

    @property
    def at_reported(self) -> tuple[float, ...]:
        """The TPR bounds at ``REPORTED_FPRS``."""
        return tuple(float(t) for t in self.tpr_at(REPORTED_FPRS))

    @property
    def fpr(self) -> np.ndarray:
        """The trade-off curve's false-positive rates, ``CURVE_FPRS``."""
        return CURVE_FPRS

    @property
    def tpr(self) -> np.ndarray:
        """The trade-off curve: the TPR bounds at ``CURVE_FPRS`` (type II error 1 - tpr)."""
        return self.tpr_at(CURVE_FPRS)

    def capped(self, cap: AttackRisk) -> AttackRisk:
        """The pointwise smaller of two valid bounds of one mechanism; ``source``, ``mu`` and
        ``data_dependent`` this one's."""
        return AttackRisk(source=self.source, advantage=min(self.advantage, cap.advantage),
                          mu=self.mu,
                          data_dependent=self.data_dependent,
                          bounds=self.bounds + cap.bounds)


def _raised(values, margin: float) -> np.ndarray:
    """``values`` raised by ``margin`` relative (and a few ulps), capped at 1."""
    values = np.asarray(values, dtype=np.float64)
    raised = np.where(values > 0.0, np.nextafter(values * (1.0 + margin), np.inf), values)
    return np.minimum(1.0, raised)


def gaussian_tpr(mu: float, fpr) -> np.ndarray:
    """``Phi(mu - Phi^-1(1 - alpha))``, mu-GDP's TPR bound at FPRs ``fpr`` (math:risk), raised
    over its rounding; exactly ``fpr`` at ``mu = 0`` (a raised ``ndtr(ndtri(alpha))`` is not)."""
    from scipy.special import ndtr, ndtri

    fpr = np.asarray(fpr, dtype=np.float64)
    if mu == 0.0:
        return fpr.copy()
    return _raised(ndtr(mu + ndtri(fpr)), GAUSSIAN_MARGIN)


def gaussian_risk(mu: float) -> AttackRisk:
    """The attack risk of mu-GDP: exact for a composition of Gaussian steps (math:risk).

    Args:
      mu: ``sqrt(sum (sensitivity / std)^2)`` over the steps.

    Returns:
      Source ``pld`` with ``mu`` (raised by 4 ulps over :func:`gaussian_mu`'s rounding: the
      mu-GDP statement a reader may take it for is a bound); advantage
      ``2 Phi(mu / 2) - 1 = erf(mu / (2 sqrt 2))``.

    Raises:
      ValueError: for a negative or NaN ``mu``.
    """
    from scipy.special import erf

    if not mu >= 0.0:
        raise ValueError(f"mu must be >= 0, got {mu!r}")
    advantage = float(_raised(erf(mu / (2.0 * np.sqrt(2.0))), GAUSSIAN_MARGIN))
    stated = float(mu * (1.0 + 4.0 * np.finfo(float).eps))
    return AttackRisk(source="pld", advantage=advantage, mu=stated,
                      bounds=(("gaussian", stated),))


def gaussian_mu(steps) -> float:
    """``mu = sqrt(sum count (sensitivity / std)^2)`` of ``(sensitivity, std, count)`` steps."""
    return float(np.sqrt(sum(count * (sensitivity / std) ** 2
                             for sensitivity, std, count in steps if count > 0)))


def profile_tpr(epsilons, deltas, fpr, *, one_way: bool = False) -> np.ndarray:
    """The TPR bound at ``fpr`` of a privacy profile's pairs, raised over its rounding (math:risk):
    ``min over pairs of min(1, delta + e^eps alpha, 1 - e^-eps (1 - delta - alpha))``.

    Args:
      one_way: pairs bounding ``M(D)`` against ``M(D')`` only: the larger of the two forms'
        minima over the pairs.
    """
    eps = np.asarray(epsilons, dtype=np.float64)[:, None]
    delta = np.asarray(deltas, dtype=np.float64)[:, None]
    alpha = np.asarray(fpr, dtype=np.float64)[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        first = delta + np.exp(eps) * alpha
        second = -np.expm1(-eps) + np.exp(-eps) * (delta + alpha)
    # at alpha 0 a finite epsilon's bound is delta, even where e^eps overflows (inf * 0)
    first = np.where((alpha == 0.0) & np.isfinite(eps), delta, first)

    def smallest(bounds: np.ndarray) -> np.ndarray:
        # an infinite epsilon's first bound is nan at alpha 0: no bound
        return np.minimum(1.0, np.nanmin(np.where(np.isnan(bounds), 1.0, bounds), axis=0))

    tpr = (np.maximum(smallest(first), smallest(second)) if one_way
           else smallest(np.fmin(first, second)))
    return _raised(tpr, PROFILE_MARGIN)


def profile_advantage(epsilons, deltas, *, one_way: bool = False) -> float:
    """The advantage bound of a privacy profile's pairs: the smallest
    ``(e^eps - 1 + 2 delta) / (e^eps + 1)`` (each pair's best TPR - FPR, math:risk); with
    ``one_way`` the smallest ``1 - e^-eps (1 - delta)`` (either naming's best)."""
    eps = np.asarray(epsilons, dtype=np.float64)
    delta = np.asarray(deltas, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        each = (-np.expm1(-eps) + delta * np.exp(-eps) if one_way
                else (np.expm1(eps) + 2.0 * delta) / (np.exp(eps) + 1.0))
    each = np.where(np.isnan(each), 1.0, each)  # an infinite epsilon: no bound
    return float(_raised(each.min(), PROFILE_MARGIN))


def profile_risk(epsilons, deltas, source: str, *, one_way: bool = False) -> AttackRisk:
    """The attack risk of the pairs ``(epsilons[i], deltas[i])`` (math:risk); ``one_way``:
    pairs holding in one direction (a data-dependent curve's)."""
    eps = np.maximum(np.asarray(epsilons, dtype=np.float64), 0.0)
    deltas = np.asarray(deltas, dtype=np.float64)
    return AttackRisk(source=source,
                      advantage=profile_advantage(eps, deltas, one_way=one_way),
                      bounds=(("one-way" if one_way else "profile", eps, deltas),))


def rdp_risk(rdp, *, orders, conversion: str = "classic",
             one_way: bool = False) -> AttackRisk:
    """Source ``rdp``: an RDP curve's ``classic`` or ``improved`` conversion (math:conversion)
    at ``RDP_DELTAS``; ``one_way``: a data-dependent curve; a curve of zeros: no risk, exactly."""
    if not np.any(np.asarray(rdp, dtype=np.float64)):
        return AttackRisk(source="rdp", advantage=0.0, bounds=(("gaussian", 0.0),))
    epsilons = epsilons_at_deltas(rdp, orders=orders, deltas=RDP_DELTAS, conversion=conversion)
    return profile_risk(epsilons, RDP_DELTAS, "rdp", one_way=one_way)


def pld_risk(pld) -> AttackRisk | None:
    """Source ``pld``: a dp_accounting PLD's (pessimistic) profile at ``PLD_EPSILONS``
    epsilons from 0 to where delta falls to ``TRUSTED_DELTA`` or, if larger, twice its mass
    at infinity (truncated tails, which no epsilon removes). None where dp_accounting cannot
    find that epsilon (its ratio of tiny masses overflows): the RDP curve's risk stands."""
    floor = float(pld.get_delta_for_epsilon(1e6))  # the mass at infinity
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(pld.get_epsilon_for_delta(max(TRUSTED_DELTA, 2.0 * floor)))
    if not math.isfinite(largest):
        return None
    epsilons = np.linspace(0.0, max(largest, 1e-12), PLD_EPSILONS)
    # deltas not finite or below TRUSTED_DELTA: left out, which only loosens the minimum
    with np.errstate(over="ignore", invalid="ignore"):
        deltas = np.asarray(pld.get_delta_for_epsilon(epsilons), dtype=np.float64)
    kept = np.isfinite(deltas) & (deltas >= TRUSTED_DELTA)
    if not kept.any():
        return profile_risk(np.zeros(1), np.ones(1), "pld")
    return profile_risk(epsilons[kept], _raised(deltas[kept], PLD_MARGIN), "pld")
