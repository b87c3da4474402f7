"""Individualized PATE (Boenisch et al.): each group's parameters, curves and composition.

math:individualized, with math:independent, math:gnmax and math:threshold for the kernels and 6-7
for composition, conversion and charging. In the paper: section 4.1 (upsampling, Algorithm 1), 4.2
(weighting, Algorithm 2), 4.3 (individual sensitivities, Theorem 1, Corollary 1), Appendix B
(vanishing, Algorithm 3, Proposition 4) and Appendix C (how the parameters are set).

- ``parameters``: upsampling factors, group weights, vanishing frequencies, each group's
  parameters in a run (:func:`derive_parameters`); checks of budgets and groups;
- ``curves``: per-query RDP at each sensitivity (:class:`CurveSetting`, :class:`CurveFactors`);
- ``costs``: the chunks of costs each member pays (:class:`CostChunk`,
  :func:`group_costs`, :func:`vanishing_costs`);
- ``groups``: per-group running sums on the composition kernel and the worst-off member
  (:class:`GroupSums`);
- ``spans``: a span of queries' costs per group and a run's group accounting fed span by
  span (:func:`span_costs`, :class:`GroupRun`).

The histograms the variants aggregate (weighted counts, the vanishing participation
schedule) draw from the seed and live in ``pate_cli.mechanisms.participation``. Pure
math: nothing here reads files, draws noise or starts threads.
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
from .stops import GroupStops, GroupTotals, IndependentSpent

__all__ = [
    "VARIANTS", "WEIGHT_RULES", "CostChunk", "CurveFactors", "CurveSetting",
    "GroupParameters", "GroupRun", "GroupSetting", "GroupStops", "GroupSums",
    "GroupTotals", "IndependentSpent", "add_span", "derive_parameters",
    "group_costs", "group_weights",
    "rdp_individual", "span_costs", "upsampling_factors", "vanishing_costs",
    "vanishing_frequencies",
]
