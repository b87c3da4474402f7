"""Sensitivities and data-independent RDP of multi-label votes (Dziedzic et al. 2023,
"Private Multi-Winner Voting"): math:independent with each variant's sensitivity
(docs/explanation/data-independent.md#multilabel)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import OptionError
from ..orders import validate_orders
from .validators import check_positive, check_positive_integer, check_std

VARIANTS = ("binary", "tau", "powerset")


def parse_variant(text: str) -> tuple[str, float | None]:
    """``--multilabel`` text -> ``(variant, tau)``; ``OptionError`` for a bad one."""
    name, _, value = str(text).strip().lower().partition(":")
    if name in ("binary", "powerset") and not value:
        return name, None
    if name == "tau":
        try:
            tau = float(value)
        except ValueError:
            tau = float("nan")
        if np.isfinite(tau) and tau > 0:
            return name, tau
        raise OptionError(f"--multilabel tau:TAU needs a positive number TAU, got {text!r}")
    raise OptionError(f"--multilabel must be binary, tau:TAU or powerset, got {text!r}")


def tau_sensitivity_squared(tau: float, labels: int) -> float:
    """``Delta_s^2 = max over a + b <= L of min(a, tau^2) + min(b, tau^2)``, the largest squared
    L2 distance of two teachers' 0/1 vectors clipped to norm ``tau`` (math:multilabel)."""
    check_positive(tau, "tau")
    check_positive_integer(labels, "labels")
    sizes = np.arange(labels + 1, dtype=np.float64)
    square = tau * tau
    return float(np.max(np.minimum(sizes, square) + np.minimum(labels - sizes, square)))


def sensitivity_squared(variant: str, *, labels: int, tau: float | None = None) -> float:
    """The squared L2 sensitivity of one query's released vector (math:multilabel):
    ``2 L`` (binary: L two-count histograms), ``2 Delta_s^2`` (tau), 2 (powerset)."""
    check_positive_integer(labels, "labels")
    if variant == "binary":
        return 2.0 * labels
    if variant == "tau":
        if tau is None:
            raise ValueError("the tau variant needs tau")
        return 2.0 * tau_sensitivity_squared(tau, labels)
    if variant == "powerset":
        return 2.0
    raise ValueError(f"unknown multi-label variant {variant!r} (choose from "
                     f"{', '.join(VARIANTS)})")


def rdp_multilabel_data_independent(variant: str, *, sigma: float, orders: ArrayLike,
                                    labels: int, tau: float | None = None) -> np.ndarray:
    """A query's data-independent Gaussian RDP, ``alpha Delta^2 / (2 sigma^2)`` (
    math:independent) with ``Delta^2 = sensitivity_squared(...)``."""
    orders = validate_orders(orders)
    check_std(sigma, "sigma")
    return orders * (sensitivity_squared(variant, labels=labels, tau=tau)
                     / (2.0 * sigma * sigma))

