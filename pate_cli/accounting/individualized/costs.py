"""Individualized PATE: the chunks of costs each member pays (math:individualized); members
are the groups for upsampling and weighting, the teachers for vanishing. ``map`` as in
``curves``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .curves import CurveFactors, CurveSetting, Mapper


@dataclass(frozen=True)
class CostChunk:
    """The costs of a run of consecutive queries, per member: ``curves`` ``(variants, queries,
    orders)`` or unevaluated :class:`CurveFactors`; ``index`` ``(members, queries)``, the curve
    member m pays at query q (-1: none); ``baseline``, the uniform run's ``(queries, orders)``
    cost (sensitivity 1) or the number of its curve; ``answered`` (``baseline_answered``),
    whether the replay (the uniform run's) released a label. The builders charge the uniform
    run on the same statistics and decisions; for another, ``dataclasses.replace`` the two with
    its ``rdp_individual(..., sensitivities=[1])[0]`` and answers."""

    curves: np.ndarray | CurveFactors
    index: np.ndarray
    baseline: np.ndarray | int
    answered: np.ndarray
    baseline_answered: np.ndarray

    def __post_init__(self) -> None:
        curves = (self.curves if isinstance(self.curves, CurveFactors)
                  else np.asarray(self.curves, dtype=np.float64))
        index, baseline = np.asarray(self.index, dtype=np.intp), self.baseline
        if len(curves.shape) != 3 or index.ndim != 2 or index.shape[1] != curves.shape[1]:
            raise ValueError("curves must be (variants, queries, orders) and index "
                             "(members, queries)")
        variants, queries, orders = curves.shape
        if np.any(index < -1) or np.any(index >= variants):
            raise ValueError("index entries must be -1 or a curve number")
        if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
            if not 0 <= baseline < variants:
                raise ValueError(f"baseline curve {baseline} is not one of the {variants}")
            baseline = int(baseline)
        elif (baseline := np.asarray(baseline, dtype=np.float64)).shape != (queries, orders):
            raise ValueError(f"baseline must have shape ({queries}, {orders})")
        answered, baseline_answered = (np.asarray(self.answered, dtype=bool),
                                       np.asarray(self.baseline_answered, dtype=bool))
        if answered.shape != (queries,) or baseline_answered.shape != (queries,):
            raise ValueError(f"answered must have shape ({queries},)")
        for name, value in (("curves", curves), ("index", index), ("baseline", baseline),
                            ("answered", answered), ("baseline_answered", baseline_answered)):
            object.__setattr__(self, name, value)

    @property
    def queries(self) -> int:
        return int(self.curves.shape[1])

    def evaluated(self, *, map: Mapper = map) -> tuple[np.ndarray, np.ndarray]:
        """``(curves, baseline)`` as arrays (``map`` as in :meth:`CurveFactors.evaluate`)."""
        curves = self.curves
        if isinstance(curves, CurveFactors):
            curves = curves.evaluate(map=map)
        baseline = self.baseline
        if isinstance(baseline, int):
            baseline = curves[baseline]
        return curves, baseline


def group_costs(log_q: np.ndarray, setting: CurveSetting, *, sensitivities: np.ndarray,
                answered: np.ndarray, charge: np.ndarray | None = None,
                log_pr_answered: np.ndarray | None = None, evaluate: bool = True,
                map: Mapper = map) -> CostChunk:
    """Costs of upsampling (``D_g = u_g``) or weighting (``D_g = w_g``) for one chunk: members
    are the groups (paper section 4.3.3), sensitivity 0 pays nothing; others as in
    :func:`rdp_individual`.

    Args:
      answered: the replay's decisions (all True for GNMax).
      charge: by default ``answered`` (``pr_answered``: expected accounting).
      evaluate: False keeps :class:`CurveFactors` (baseline: the last curve) for ``GroupSums``.

    Returns:
      The :class:`CostChunk`, member g paying curve g at every query (none at ``D_g = 0``).
    """
    sensitivities = np.atleast_1d(np.asarray(sensitivities, dtype=np.float64))
    factors, answered = _factors(log_q, setting, sensitivities, answered, charge,
                                 log_pr_answered)
    groups = sensitivities.size
    index = np.broadcast_to(np.where(sensitivities[:, None] > 0, np.arange(groups)[:, None],
                                     -1), (groups, factors.shape[1]))
    if not evaluate:
        return CostChunk(factors, index, groups, answered, answered)
    curves = factors.evaluate(map=map)
    return CostChunk(curves[:-1], index, curves[-1], answered, answered)


def vanishing_costs(log_q: np.ndarray, setting: CurveSetting, *, participation: np.ndarray,
                    answered: np.ndarray, charge: np.ndarray | None = None,
                    log_pr_answered: np.ndarray | None = None,
                    map: Mapper = map) -> CostChunk:
    """Costs of vanishing for one chunk: members are the teachers (math:individualized).

    Args:
      participation: bool ``(queries, teachers)``; a teacher pays for query q only if it took
        part, at ``D = k / |S_q|``, one curve per distinct value. Others as in
        :func:`group_costs`.

    Raises:
      ValueError: ``participation`` not 2-D, or a query no teacher takes part in.
    """
    participation = np.asarray(participation, dtype=bool)
    if participation.ndim != 2:
        raise ValueError("participation must have shape (queries, teachers)")
    taking = participation.sum(axis=1)
    if np.any(taking == 0):
        raise ValueError("every query needs at least one participating teacher")
    values, which = np.unique(participation.shape[1] / taking, return_inverse=True)
    factors, answered = _factors(log_q, setting, values, answered, charge, log_pr_answered)
    curves = factors.evaluate(map=map)
    index = np.where(participation.T, which.reshape(-1)[None, :], -1)
    return CostChunk(curves[:-1], index, curves[-1], answered, answered)


def _factors(log_q: np.ndarray, setting: CurveSetting, sensitivities: np.ndarray,
             answered: np.ndarray, charge: np.ndarray | None,
             log_pr_answered: np.ndarray | None) -> tuple[CurveFactors, np.ndarray]:
    """The members' curves at ``sensitivities`` then the uniform run's (``D = 1``), charged
    ``charge`` (by default the 0/1 ``answered``), and ``answered`` as bools."""
    answered = np.asarray(answered, dtype=bool)
    return setting.factors(log_q, sensitivities=np.append(sensitivities, 1.0),
                           charge=answered.astype(np.float64) if charge is None else charge,
                           log_pr_answered=log_pr_answered), answered
