"""What every aggregator shares: the domains of its noise parameters, their checks, and the
protocol's facts with their defaults (``Facts``); math:mechanisms."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import ClassVar

import numpy as np

from ..numerics import real_number


def positive(value, name: str) -> float:
    value = finite(value, name)
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value:g}")
    return value


# Noise parameter domains, checked when a mechanism is built (a one-line refusal, not an
# overflow deep in the accounting):
# * Gaussian std in [1e-9, 1e12]: alpha / sigma^2 with alpha <= 1e6 (``orders.MAX_ORDER``)
#   stays below 1e24, finite summed over 10^9 queries (the kernels, which also see a group's
#   sigma / D_g, take any std whose square is a double: ``validators.GAUSSIAN_STD``).
# * Laplace scale in [1e-2, 1e12]: LNMax's bound takes exp(2 / lambda), which overflows below
#   0.0028; at 0.01 each answer already costs 200.
# * SVT scale in [1e-6, 1e12]: costs polynomial in 2 / lambda; --target-epsilon searches
#   [1e-6, 1e9].
# * eta in [1e-12, 300] (math:exponential): eps0 = 2 eta and math:lnmax's exp(eps0) is a float
#   up to 709.78; below 1e-12 a vote moves eta n less than the Gumbel noise's rounding.
# * SVT threshold w above 1: else delta2 (math:svt) >= 1/2 and exp(-(w - 1) / (4 lambda))
#   could overflow. T need only be finite (it enters through log_ndtr).
# The upper bound 1e12 keeps one vote visible beside the noise (float64 resolves 1e12 to about
# 1e-4; from about 1e15 the votes vanish in rounding).
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
    """``value`` as a float: a real number (a 0-d array's too), not a bool or a text."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if not real_number(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value:g}")
    return value


class Facts:
    """``protocol.Mechanism``'s facts by default: no student, no selection step, no answer
    noise, not sequential. Each aggregator states what differs."""

    uses_student: ClassVar[bool] = False
    selects: ClassVar[bool] = False
    answer_noise: ClassVar[str | None] = None
    sequential: ClassVar[bool] = False

    @property
    def params(self) -> dict:
        """The parameters a summary and sweep row name: every field but ``name``, ``teachers``,
        ``integer_votes``."""
        return {f.name: getattr(self, f.name) for f in fields(self)  # type: ignore[arg-type]
                if f.name not in ("name", "teachers", "integer_votes")}

    def selection_counts(self, votes: np.ndarray, student: np.ndarray | None = None):
        """``max_j n_j`` per query: what a selection step compares with T."""
        return votes.max(axis=1)
