"""What a calibration meets (cli:pate-calibrate): an epsilon at the run's delta, or an
attack risk (math:risk; the run's ``risk``): a TPR bound at one FPR, or the advantage."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis.added_figures import published_epsilon
from ..analysis.result import AnalysisResult
from ..errors import OptionError
from ..numerics import real_number


@dataclass(frozen=True)
class CalibrationTarget:
    """One calibration target (each falls as the noise grows).

    Attributes:
      quantity: ``epsilon``, ``tpr`` (the TPR bound at false-positive rate ``at_fpr``) or
        ``advantage`` (the bound on TPR - FPR).
      value: the largest figure accepted.
      at_fpr: the false-positive rate of a ``tpr`` target, else None.
    """

    quantity: str
    value: float
    at_fpr: float | None = None

    @classmethod
    def of(cls, *, epsilon: float | None = None, tpr: float | None = None,
           at_fpr: float | None = None, advantage: float | None = None) -> CalibrationTarget:
        """The one target given (``--target-epsilon``, ``--target-tpr`` with ``--at-fpr``, or
        ``--target-advantage``).

        Raises:
          OptionError: none or several targets, or a value out of range: epsilon positive,
            advantage in (0, 1), TPR in (FPR, 1] (random guessing reaches TPR = FPR whatever
            the noise).
        """
        given = [name for name, value in (("--target-epsilon", epsilon),
                                          ("--target-tpr", tpr),
                                          ("--target-advantage", advantage))
                 if value is not None]
        if len(given) != 1:
            raise OptionError("give one target: --target-epsilon, --target-tpr (with "
                              "--at-fpr) or --target-advantage"
                              + (f", not {' and '.join(given)}" if given else ""))
        if (tpr is None) != (at_fpr is None):
            raise OptionError("--target-tpr and --at-fpr go together")
        for name, value in (("--target-epsilon", epsilon), ("--target-tpr", tpr),
                            ("--target-advantage", advantage), ("--at-fpr", at_fpr)):
            if value is not None and not real_number(value):
                raise OptionError(f"{name} must be a number, got {value!r}")
        if epsilon is not None:
            if not (math.isfinite(epsilon) and epsilon > 0):
                raise OptionError(f"--target-epsilon must be positive, got {epsilon!r}")
            return cls("epsilon", float(epsilon))
        if advantage is not None:
            if not 0 < advantage < 1:
                raise OptionError(f"--target-advantage must lie in (0, 1), got {advantage!r}")
            return cls("advantage", float(advantage))
        assert tpr is not None and at_fpr is not None
        if not 0 < at_fpr < 1:
            raise OptionError(f"--at-fpr must lie in (0, 1), got {at_fpr!r}")
        if not at_fpr < tpr <= 1:
            raise OptionError(f"--target-tpr must lie in (--at-fpr, 1] = ({at_fpr:g}, 1] "
                              "(guessing at random reaches TPR = FPR at any noise), got "
                              f"{tpr!r}")
        return cls("tpr", float(tpr), float(at_fpr))

    def figure(self, result: AnalysisResult) -> float:
        """``result``'s epsilon, TPR bound at ``at_fpr``, or advantage bound (``OptionError``
        for a risk target of a run without a risk)."""
        if self.quantity == "epsilon":
            return published_epsilon(result)
        risk = result.risk
        if risk is None:
            raise OptionError("this run has no attack risk to calibrate on "
                              "(individualized groups)")
        if self.quantity == "advantage":
            return float(risk.advantage)
        return float(risk.tpr_at([self.at_fpr])[0])

    def name(self) -> str:
        """The figure's name: ``epsilon``, ``TPR at FPR 0.01``, ``advantage``."""
        return f"TPR at FPR {self.at_fpr:g}" if self.quantity == "tpr" else self.quantity

    def text(self) -> str:
        """The target as read: ``epsilon 2``, ``TPR 0.05 at FPR 0.01``, ``advantage 0.1``."""
        if self.quantity == "tpr":
            return f"TPR {self.value:g} at FPR {self.at_fpr:g}"
        return f"{self.quantity} {self.value:g}"

    def as_dict(self) -> dict:
        """The JSON ``target`` object: ``quantity``, ``value``, ``at_fpr`` (or None)."""
        return {"quantity": self.quantity, "value": self.value, "at_fpr": self.at_fpr}

