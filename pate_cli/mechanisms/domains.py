"""What every aggregator shares: the domains of its noise parameters, their checks, and the
protocol's facts with their defaults (``Facts``); math:mechanisms."""

from __future__ import annotations

import math
from typing import ClassVar


def positive(value, name: str) -> float:
    value = finite(value, name)
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value:g}")
    return value


# Domains of the noise parameters, checked when a mechanism is built (a wider value is a
# user mistake, refused in one line, rather than an overflow deep in the accounting):
#
# * Gaussian std (sigma, sigma1) in [1e-9, 1e12]: the largest RDP term, alpha / sigma^2
#   with alpha <= 1e6 (``orders.MAX_ORDER``), stays below 1e24, so a sum over 10^9
#   queries is still finite; sigma^2 neither overflows nor underflows.
# * Laplace scale lambda in [1e-2, 1e12]: LNMax's bound takes exp(eps0) with eps0 = 2 /
#   lambda, which overflows for lambda < 2 / 709.78 = 0.0028; at lambda = 0.01 each answer
#   already costs eps0 = 200, past any meaningful privacy.
# * SVT scale in [1e-6, 1e12]: its costs are polynomial in 2 / lambda (no exp), and the
#   solver for --target-epsilon searches [1e-6, 1e9].
# * the exponential mechanism's eta in [1e-12, 300] (math:exponential): each answer costs
#   eps0 = 2 eta, and math:lnmax's bound takes exp(eps0), a float up to eps0 = 709.78; at eta =
#   300 one answer already costs 600. Below 1e-12 a vote moves eta n by less than the
#   rounding of the Gumbel noise (the 1e12 bound of the scales below, inverted).
# * the SVT threshold w above 1: at w <= 1 the failure probability delta2 (math:svt) is
#   at least 1/2, so no delta < 1 is left, and exp(-(w - 1) / (4 lambda)) could overflow.
#   The selection threshold T only needs to be finite (it enters through log_ndtr).
#
# The upper bound 1e12 keeps a single vote visible next to the noise: float64 resolves
# 1e12 to about 1e-4, so adding one vote still moves the noisy count; from about 1e15 on
# the votes would vanish in rounding and the output would be noise alone.
GAUSSIAN_SCALE = (1e-9, 1e12)
LAPLACE_SCALE = (1e-2, 1e12)
SVT_SCALE = (1e-6, 1e12)
ETA = (1e-12, 300.0)


def noise_scale(value, name: str, domain: tuple[float, float]) -> float:
    """A noise scale: positive (``positive``) and within ``domain`` (see above)."""
    value = positive(value, name)
    low, high = domain
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value:g}")
    return value


def finite(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value:g}")
    return value


class Facts:
    """What ``protocol.Mechanism`` says about an aggregator, by default: no student, no
    selection step, no answer noise, not sequential. Each aggregator states what differs."""

    uses_student: ClassVar[bool] = False
    selects: ClassVar[bool] = False
    answer_noise: ClassVar[str | None] = None
    sequential: ClassVar[bool] = False
