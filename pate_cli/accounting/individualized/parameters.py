"""Individualized PATE: each privacy group's parameters, and the checks of budgets and groups.

math:individualized (paper Algorithms 1-3, Appendix C): upsampling factors ``u_g``, vote
weights ``w_g`` and participation frequencies ``s_g`` from the budgets ``eps_g``, unless the
groups file gives them (:func:`derive_parameters`). Pure arithmetic on small arrays.
Derivation: docs/explanation/individualized.md#how-the-parameters-and-costs-are-computed
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

VARIANTS = ("upsampling", "weighting", "vanishing")
# The largest upsampling factor (a teacher's votes counted that many times).
MAX_UPSAMPLING = 10**6
WEIGHT_RULES = ("budget", "group-size")


def upsampling_factors(budgets: np.ndarray, *, precision: int = 2) -> np.ndarray:
    """Duplication factor ``u_g = D_g`` per group (int64), the smallest integers in the budget
    ratios (math:individualized; paper section 4.1, Algorithm 1, Appendix C).

    Args:
      precision: each ratio to a denominator of at most ``10**precision``.

    Raises:
      ValueError: bad budgets or precision, or a factor above ``MAX_UPSAMPLING``.
    """
    budgets = checked_budgets(budgets)
    if not isinstance(precision, (int, np.integer)) or precision < 0:
        raise ValueError(f"precision must be a non-negative integer, got {precision!r}")
    smallest = float(budgets.min())
    largest = float(budgets.max()) / smallest
    if not largest <= MAX_UPSAMPLING:
        raise ValueError(f"--individualized upsampling: the budgets' largest ratio "
                         f"({largest:g}) needs an upsampling factor above "
                         f"{MAX_UPSAMPLING:,}; use weighting or vanishing")
    ratios = [Fraction(float(b) / smallest).limit_denominator(10 ** int(precision))
              for b in budgets]
    multiple = math.lcm(*(r.denominator for r in ratios))
    factors = [int(r * multiple) for r in ratios]
    if max(factors) > MAX_UPSAMPLING:
        raise ValueError(f"--individualized upsampling: the budgets' ratios need factors up to "
                         f"{max(factors):,} (at --precision {precision}), above "
                         f"{MAX_UPSAMPLING:,}; use weighting or vanishing")
    return np.array(factors, dtype=np.int64)


def group_weights(budgets: np.ndarray, teacher_groups: np.ndarray, *,
                  rule: str = "budget") -> np.ndarray:
    """Vote weight ``w_g = D_g`` per group (float64), weighting (math:individualized).

    Args:
      teacher_groups: each teacher's group index, ``(teachers,)``.
      rule: ``budget`` (Appendix C, "Details of Weighting"): ``w_g = eps_g / mean_i eps(i)``,
        the teachers' mean, so the teachers' weights sum to ``k``; ``group-size``: Algorithm
        2 as printed.
    """
    budgets = checked_budgets(budgets)
    groups = checked_teacher_groups(teacher_groups, budgets.size)
    sizes = np.bincount(groups, minlength=budgets.size).astype(np.float64)
    teachers = groups.size
    ratios = budgets / budgets.min()
    if rule == "budget":
        return ratios / (float(sizes @ ratios) / teachers)
    if rule == "group-size":
        return teachers * (ratios * sizes) / float(sizes @ ratios)
    raise ValueError(f"rule must be one of {', '.join(WEIGHT_RULES)}, got {rule!r}")


def vanishing_frequencies(budgets: np.ndarray, *, power: float = 2.0) -> np.ndarray:
    """Participation frequency ``s_g = (eps_g / eps_max) ** power`` per group
    (math:individualized, Appendix C)."""
    budgets = checked_budgets(budgets)
    if not (math.isfinite(power) and power >= 0):
        raise ValueError(f"power must be a non-negative number, got {power!r}")
    return (budgets / budgets.max()) ** float(power)


@dataclass(frozen=True)
class GroupParameters:
    """What each privacy group gets under one variant (math:individualized): ``sensitivity``
    ``D_g`` (NaN for vanishing: ``k / |S_q|`` varies by query), ``participation`` ``s_g`` (1
    otherwise), ``rule`` the variant's option and value (``precision``, ``weights``, ``power``)."""

    variant: str
    names: tuple
    budgets: np.ndarray
    sensitivity: np.ndarray
    participation: np.ndarray
    share: np.ndarray | None = None
    rule: tuple = ()

    def as_rows(self) -> list[dict]:
        rows = []
        for g, name in enumerate(self.names):
            row = {"group": name, "budget": float(self.budgets[g])}
            if self.variant == "upsampling":
                row["upsampling"] = int(self.sensitivity[g])
            elif self.variant == "weighting":
                row["weight"] = float(self.sensitivity[g])
            else:
                row["participation"] = float(self.participation[g])
            if self.share is not None and np.isfinite(self.share[g]):
                row["share"] = float(self.share[g])
            rows.append(row)
        return rows


def derive_parameters(groups: Any, *, variant: str,
                      teacher_groups: np.ndarray | None = None, precision: int = 2,
                      weights: str = "budget", power: float = 2.0) -> GroupParameters:
    """Each group's upsampling factor, weight or participation frequency: as ``groups`` gives
    them, else by the rules above (math:individualized: ``upsampling_factors``,
    ``group_weights``, ``vanishing_frequencies``).

    Args:
      groups: an ``inputs.PrivacyGroups`` (names, budgets, any given parameters).
      variant: ``upsampling``, ``weighting`` or ``vanishing``.
      teacher_groups: each teacher's group index; weighting and vanishing need it.
      precision: upsampling: ratios' denominators up to ``10**precision`` (default 2).
      weights: weighting's rule, ``budget`` (the default) or ``group-size``.
      power: vanishing's ``s_g = (eps_g / eps_max) ** power`` (default 2).

    Returns:
      The :class:`GroupParameters` of ``variant``.

    Raises:
      ValueError: an unknown variant, no ``teacher_groups`` where needed, bad budgets or
        parameters, or given weights (rule ``budget``) not summing to the number of teachers.
    """
    if variant not in VARIANTS:
        raise ValueError(f"--individualized must be one of {', '.join(VARIANTS)}, "
                         f"got {variant!r}")
    budgets = np.asarray(groups.budgets, dtype=np.float64)
    rule: tuple = ("precision", precision)  # the variant's option and value
    participation = np.ones(budgets.size)
    if variant == "upsampling":
        given = groups.upsampling
        over = (np.zeros(0, dtype=np.intp) if given is None
                else np.flatnonzero(np.nan_to_num(given) > MAX_UPSAMPLING))
        if over.size:
            raise ValueError(f"group {groups.names[over[0]]!r}: upsampling {given[over[0]]:g} "
                             f"is above {MAX_UPSAMPLING:,}")
        derived = (np.ones(budgets.size) if given is not None and np.all(np.isfinite(given))
                   else upsampling_factors(budgets, precision=precision).astype(np.float64))
        sensitivity = _given_or(given, derived)
    elif teacher_groups is None:
        raise ValueError(f"--individualized {variant} needs --predictions and --teacher-groups "
                         + ("(weights apply to teachers' votes)" if variant == "weighting"
                            else "(teachers take part by group)"))
    elif variant == "weighting":
        sensitivity = _given_or(groups.weight, group_weights(budgets, teacher_groups,
                                                             rule=weights))
        rule = ("weights", weights)
        if groups.weight is not None and weights == "budget":
            total = float(sensitivity[teacher_groups].sum())
            teachers = teacher_groups.size
            if abs(total - teachers) > 1e-6 * teachers:
                raise ValueError(f"the weights sum to {total:.6g} over the {teachers} "
                                 f"teachers, not {teachers} (Appendix C: weights are "
                                 "budget / mean teacher budget)")
    else:
        sensitivity, rule = np.full(budgets.size, np.nan), ("power", power)
        participation = _given_or(groups.participation,
                                  vanishing_frequencies(budgets, power=power))
    return GroupParameters(variant, groups.names, budgets, sensitivity, participation,
                           groups.share, rule)


def _given_or(given: np.ndarray | None, derived: np.ndarray) -> np.ndarray:
    derived = np.asarray(derived, dtype=np.float64)
    if given is None:
        return derived
    return np.where(np.isfinite(given := np.asarray(given, dtype=np.float64)), given, derived)


# --- validation ------------------------------------------------------------------------------


def checked_budgets(budgets: np.ndarray) -> np.ndarray:
    """``budgets`` as a non-empty 1-D float array of positive numbers, or ``ValueError``."""
    budgets = np.atleast_1d(np.asarray(budgets, dtype=np.float64))
    if budgets.ndim != 1 or budgets.size == 0:
        raise ValueError("budgets must be a non-empty list of numbers (one per group)")
    if not np.all(np.isfinite(budgets) & (budgets > 0)):
        raise ValueError("every privacy budget must be a positive number")
    return budgets


def checked_teacher_groups(teacher_groups: np.ndarray, groups: int) -> np.ndarray:
    """One group index in ``0 .. groups-1`` per teacher, as ``intp``, or ``ValueError``."""
    teacher_groups = np.asarray(teacher_groups)
    if teacher_groups.ndim != 1 or teacher_groups.size == 0:
        raise ValueError("teacher_groups must give one group index per teacher")
    if teacher_groups.dtype.kind not in "iu" or np.any(teacher_groups < 0) or np.any(
            teacher_groups >= groups):
        raise ValueError(f"teacher group indices must be integers in 0..{groups - 1}")
    return teacher_groups.astype(np.intp)


def checked_member_groups(member_groups: np.ndarray | None, members: int,
                          groups: int) -> np.ndarray:
    """The group of each of ``members`` members; by default member g is group g."""
    if member_groups is None:
        if members != groups:
            raise ValueError(f"{members} members for {groups} groups: give member_groups")
        return np.arange(groups)
    member_groups = checked_teacher_groups(member_groups, groups)
    if member_groups.size != members:
        raise ValueError(f"member_groups has {member_groups.size} entries, the costs "
                         f"describe {members} members")
    return member_groups
