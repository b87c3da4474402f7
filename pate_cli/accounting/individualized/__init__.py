"""Individualized PATE (Boenisch et al.): each group's parameters, curves and composition.

math:individualized, with math:independent, math:gnmax and math:threshold for the kernels;
paper section 4.1 (upsampling, Algorithm 1), 4.2 (weighting, Algorithm 2), 4.3 (individual
sensitivities, Theorem 1, Corollary 1), Appendix B (vanishing, Algorithm 3, Proposition 4) and
Appendix C (how the parameters are set). The seeded histograms the variants aggregate are in
``pate_cli.mechanisms.participation``. Pure math: no files, no noise, no threads.
"""

from .costs import CostChunk, group_costs, vanishing_costs
from .curves import CurveFactors, CurveSetting, rdp_individual
from .groups import GroupSums
from .parameters import (
    VARIANTS,
    WEIGHT_RULES,
    GroupParameters,
    derive_parameters,
    group_weights,
    upsampling_factors,
    vanishing_frequencies,
)
from .spans import GroupRun, GroupSetting, add_span, span_costs
from .stops import GroupStops, GroupTotals, IndependentCounts

__all__ = [
    "VARIANTS", "WEIGHT_RULES", "CostChunk", "CurveFactors", "CurveSetting",
    "GroupParameters", "GroupRun", "GroupSetting", "GroupStops", "GroupSums",
    "GroupTotals", "IndependentCounts", "add_span", "derive_parameters",
    "group_costs", "group_weights",
    "rdp_individual", "span_costs", "upsampling_factors", "vanishing_costs",
    "vanishing_frequencies",
]
