"""The cost of choosing parameters: repeat and select (Papernot and Steinke 2022).

math:tuning: a random search runs K candidates on the same votes (Poisson, or a truncated
negative binomial of shape ``eta``: ``--tuning`` ``poisson:MU``, ``geometric:MU`` (eta 1),
``logarithmic:MU`` (eta 0), ``negbin:MU,ETA``) and releases the best; :func:`tuned_rdp`
bounds it per order. Derivation: docs/explanation/tuning.md#computing-the-bound
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..orders import validate_orders
from .conversion import rdp_to_epsilon

DISTRIBUTIONS = ("poisson", "geometric", "logarithmic", "negbin")
GAMMA_TOLERANCE = 1e-9
# The largest mean ``--tuning`` takes (each candidate is a whole analysis).
MAX_TUNING_MEAN = 1e9
# The smallest negbin shape: below it ``1 - gamma^eta`` loses its digits.
SMALLEST_SHAPE = 1e-9


@dataclass(frozen=True)
class TuningDistribution:
    """The law of K candidates: ``name``, ``mean`` and ``shape`` ``eta`` (``inf`` Poisson)."""

    name: str
    mean: float
    shape: float

    def __post_init__(self):
        if self.name not in DISTRIBUTIONS:
            raise ValueError(f"unknown distribution {self.name!r} (choose from "
                             f"{', '.join(DISTRIBUTIONS)})")
        if not (math.isfinite(self.mean) and self.mean >= 1.0):
            raise ValueError(f"the mean number of candidates must be a number >= 1, "
                             f"got {self.mean:g}")
        poisson = self.name == "poisson"
        if (self.shape == math.inf) != poisson or not (poisson or self.shape >= 0):
            raise ValueError(f"the shape eta must be a finite number >= 0 (poisson:MU is "
                             f"the limit eta -> inf), got {self.shape:g}")
        if 0.0 < self.shape < SMALLEST_SHAPE:  # 1 - gamma^eta rounds away (5e-324: 1/0)
            raise ValueError(f"the shape eta {self.shape:g} is below {SMALLEST_SHAPE:g}: "
                             "use logarithmic:MU, its limit eta -> 0")

    @property
    def text(self) -> str:
        """The ``--tuning`` text that gives this distribution."""
        if self.name == "negbin":
            return f"negbin:{self.mean:g},{self.shape:g}"
        return f"{self.name}:{self.mean:g}"

    @property
    def shape_value(self) -> float | None:
        """The shape as JSON reports it (None for Poisson, whose shape is infinite)."""
        return None if self.shape == math.inf else float(self.shape)

    def gamma(self) -> float:
        """``gamma`` from the mean (math:tuning): ``1/mu`` if geometric, else bisected down."""
        if self.shape == math.inf:
            raise ValueError("a Poisson law has no gamma")
        return truncated_negbin_gamma(self.mean, self.shape)


def parse_tuning(text: str) -> TuningDistribution:
    """Parse a ``--tuning`` text; ``ValueError`` (one line) if malformed."""
    name, colon, rest = str(text).strip().partition(":")
    name = name.strip().lower()
    if not colon or not rest.strip():
        raise ValueError(f"--tuning {text!r}: write poisson:MU, geometric:MU, "
                         "logarithmic:MU or negbin:MU,ETA")
    if name not in DISTRIBUTIONS:
        raise ValueError(f"--tuning {text!r}: unknown distribution {name!r} (choose from "
                         f"{', '.join(DISTRIBUTIONS)})")
    parts = [part.strip() for part in rest.split(",")]
    wanted = 2 if name == "negbin" else 1
    if len(parts) != wanted:
        form = "negbin:MU,ETA" if name == "negbin" else f"{name}:MU"
        raise ValueError(f"--tuning {text!r}: {name} takes {wanted} number"
                         f"{'s' if wanted > 1 else ''} ({form})")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise ValueError(f"--tuning {text!r}: {rest!r} is not a number"
                         f"{' pair' if wanted > 1 else ''}") from None
    shape = {"poisson": math.inf, "geometric": 1.0, "logarithmic": 0.0}.get(
        name, values[-1])
    try:
        return TuningDistribution(name=name, mean=values[0], shape=shape)
    except ValueError as error:
        raise ValueError(f"--tuning {text!r}: {error}") from None


def tuning_distribution(tuning) -> TuningDistribution:
    """A distribution from ``--tuning`` text (or one already built), its mean at most
    ``MAX_TUNING_MEAN``; ``OptionError`` otherwise."""
    try:
        distribution = (tuning if isinstance(tuning, TuningDistribution)
                        else parse_tuning(tuning))
    except ValueError as error:
        raise OptionError(str(error)) from None
    if distribution.mean > MAX_TUNING_MEAN:
        raise OptionError(f"--tuning {distribution.name}:{distribution.mean:g}: a "
                          f"random search of more than {MAX_TUNING_MEAN:.0e} candidates on "
                          "average is outside the supported range (each candidate is a "
                          "whole run)")
    return distribution


def truncated_negbin_mean(gamma: float, shape: float) -> float:
    """Mean of the truncated negative binomial, ``eta (1 - gamma) / (gamma (1 - gamma^eta))``
    (``eta = 0``: its limit), 1 at ``gamma = 1`` (math:tuning)."""
    if gamma >= 1.0:
        return 1.0
    log_gamma = math.log(gamma)
    if shape == 0:
        return (1.0 - gamma) / (gamma * -log_gamma)
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * log_gamma))


def truncated_negbin_gamma(mean: float, shape: float,
                           tolerance: float = GAMMA_TOLERANCE) -> float:
    """``gamma`` in (0, 1] whose truncated negative binomial has this mean: ``1/mean`` if
    geometric, else bisected to a relative ``tolerance``, the lower end (math:tuning)."""
    if shape == 1:
        return 1.0 / mean
    low, high = 0.0, min(1.0, 2.0 * (shape + 1.0) / mean)
    while high > low * (1.0 + tolerance):
        middle = (low + high) / 2.0
        if truncated_negbin_mean(middle, shape) < mean:
            high = middle
        else:
            low = middle
    return low


def poisson_deltahat(orders: np.ndarray, rdp: np.ndarray) -> np.ndarray:
    """Per order ``alpha``, the smallest delta of ``(log(1 + 1/(alpha - 1)), delta)``-DP over the
    grid (math:tuning), from an ``(orders, orders)`` array (298 orders by default)."""
    epshat = np.log1p(1.0 / (orders - 1.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        positive = rdp > 0
        kl = np.where(positive, 0.5 * np.log1p(-np.exp(-np.where(positive, rdp, 1.0))),
                      -np.inf)
        stable = orders > 1.01
        bound = ((orders - 1.0) * (rdp[None, :] - epshat[:, None]
                                   + np.log1p(-1.0 / orders)) - np.log(orders))
        log_delta = np.where(stable[None, :], np.minimum(kl[None, :], bound), kl[None, :])
        return np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)


def tuned_rdp(rdp, *, orders, distribution: TuningDistribution) -> np.ndarray:
    """The RDP of repeat-and-select at every order (math:tuning; Papernot and Steinke 2022,
    Theorems 2 and 6).

    Args:
      rdp: the candidates' bound, one value per order (``inf`` allowed).
      orders: the grid, in any order, repeats allowed.

    Raises:
      ValueError: ``rdp`` not one value per order, or NaN.
    """
    orders = validate_orders(orders)
    rdp = np.asarray(rdp, dtype=np.float64)
    if rdp.shape != orders.shape:
        raise ValueError(f"the RDP curve has {rdp.size} values, the grid {orders.size} orders")
    if np.any(np.isnan(rdp)):
        raise ValueError("the RDP curve has NaN values")
    mu = distribution.mean
    log_mu_term = math.log(mu) / (orders - 1.0)
    if distribution.shape == math.inf:
        return rdp + mu * poisson_deltahat(orders, rdp) + log_mu_term
    gamma = distribution.gamma()
    c = (1.0 + distribution.shape) * float(np.min((1.0 - 1.0 / orders) * rdp
                                                  - math.log(gamma) / orders))
    return _monotone(orders, rdp + log_mu_term + c)


def _monotone(orders: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``min over orders a >= alpha of values(a)`` at each order (grid in any order)."""
    unique, inverse = np.unique(orders, return_inverse=True)
    lowest = np.full(unique.size, np.inf)
    np.minimum.at(lowest, inverse, values)
    suffix = np.minimum.accumulate(lowest[::-1])[::-1]
    return suffix[inverse]


def candidate_bound(curves) -> np.ndarray:
    """The curve that bounds every candidate: the largest RDP at each order."""
    return np.max(np.asarray(curves, dtype=np.float64).reshape(-1, np.shape(curves)[-1]),
                  axis=0)


def tuned_epsilon(rdp, *, orders, delta: float, conversion: str,
                  distribution: TuningDistribution) -> tuple[float, float]:
    """``(epsilon, order)`` of the search whose candidates ``rdp`` bounds (math:tuning,
    converted with math:conversion)."""
    curve = tuned_rdp(rdp, orders=orders, distribution=distribution)
    epsilon, order = rdp_to_epsilon(curve, orders=orders, delta=delta, conversion=conversion)
    return float(epsilon), float(order)
