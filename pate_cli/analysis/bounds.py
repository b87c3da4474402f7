"""Tighter valid figures the API adds to a run (MATH.md sections 2, 3 and 13).

``with_pld_figure``: under ``--accounting data-independent``, the smaller of the RDP
figure and the privacy-loss-distribution accountant's for the Gaussian steps, when the
optional dp_accounting is installed (``data_independent_method`` says which).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..accounting.pld import gaussian_pld_epsilon
from .result import AnalysisResult


def with_pld_figure(result: AnalysisResult, mechanism, delta: float) -> AnalysisResult:
    """``--accounting data-independent`` with dp_accounting: the smaller of the RDP figure
    and the PLD accountant's (``accounting.pld``) for Gaussian aggregators; records which
    (``data_independent_method``: ``rdp`` or ``pld``) and keeps the RDP figure it
    replaces (``epsilon_rdp``: the per-query table's last ``epsilon_cumulative``). A
    budget's ``remaining`` is then ``limit - epsilon`` of the PLD figure; the halt itself
    was found on the RDP sums (MATH.md s.7), a valid, cautious rule."""
    if mechanism.name not in ("gnmax", "confident", "interactive"):
        return result
    steps = [(math.sqrt(2.0), mechanism.sigma, int(round(result.answered_total)))]
    if mechanism.name != "gnmax":
        steps.append((1.0, mechanism.sigma_threshold, result.queries))
    figure = gaussian_pld_epsilon(steps, delta)
    if figure is None or not figure < result.epsilon:
        return result
    budget = result.budget
    if budget is not None:  # what is left of the budget, after the reported figure
        budget = replace(budget, remaining=max(0.0, budget.limit - figure))
    return replace(result, epsilon=figure, epsilon_data_independent=figure,
                   data_independent_method="pld", epsilon_rdp=result.epsilon, budget=budget)
