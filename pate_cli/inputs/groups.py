"""Privacy groups (Individualized PATE): ``--groups`` and ``--teacher-groups`` files."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .checks import show_number
from .readers import open_text, small_csv, text_number

GROUP_COLUMNS = ("group", "budget", "upsampling", "weight", "participation", "share")


@dataclass(frozen=True)
class PrivacyGroups:
    """Privacy groups from ``--groups``: names, budgets and optional given parameters.

    ``upsampling``/``weight``/``participation``/``share`` are arrays with NaN where the
    file leaves a value to the rules of math:individualized (or None without the column).
    """

    names: tuple
    budgets: np.ndarray
    upsampling: np.ndarray | None = None
    weight: np.ndarray | None = None
    participation: np.ndarray | None = None
    share: np.ndarray | None = None


def load_groups(path) -> PrivacyGroups:
    """Read ``group,budget[,upsampling][,weight][,participation][,share]`` (CSV, header).

    Args:
      path: the ``--groups`` file or, from the Python API, a table of those columns (a
        DataFrame, a mapping of columns or a list of rows as mappings), checked as the
        file is.

    Returns:
      The :class:`PrivacyGroups`: names, budgets and the optional columns (NaN for an empty
      cell, None without the column).

    Raises:
      InputError: a missing, empty or malformed file, an unknown or missing column, an
        unnamed or repeated group, or a value out of range (budget > 0, upsampling a whole
        number >= 1, weight > 0, participation and share in (0, 1], shares summing to at
        most 1.01, the slack of shares rounded to two digits).
    """
    import pandas as pd
    if isinstance(path, (str, os.PathLike)):
        if os.path.splitext(os.fspath(path))[1].lower() in (".parquet", ".xlsx", ".npz"):
            raise InputError(f"{os.fspath(path)}: a groups file is CSV text with a header "
                             "(group,budget[,upsampling,weight,participation,share]); save "
                             "it as .csv (the Python API also takes a DataFrame)")
        name, raw = open_text(path)
    else:  # a table given to the API: read back as the file would be
        try:
            name, raw = "the groups table", pd.DataFrame(path).to_csv(index=False)
        except (ValueError, TypeError) as error:  # a scalar, a mapping of scalars...
            raise InputError(f"the groups table: {type(path).__name__} is not a table of "
                             "group,budget[,...] columns (give a path, a DataFrame, a "
                             "mapping of columns or a list of rows)") from error
        if not raw.strip():
            raise InputError(f"{name}: lists no groups")
    frame = small_csv(name, raw)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    unknown = [c for c in frame.columns if c not in GROUP_COLUMNS]
    if unknown:
        raise InputError(f"{name}: unknown column {unknown[0]!r} (expected "
                         f"{', '.join(GROUP_COLUMNS)})")
    for needed in ("group", "budget"):
        if needed not in frame.columns:
            raise InputError(f"{name}: needs a '{needed}' column")
    if frame.empty:
        raise InputError(f"{name}: lists no groups")
    names = tuple(str(g).strip() for g in frame["group"])
    if any(not g for g in names):
        raise InputError(f"{name}: line {names.index('') + 2}: a group without a name")
    if len(set(names)) != len(names):
        repeated = next(g for g in names if names.count(g) > 1)
        raise InputError(f"{name}: group {repeated!r} is listed twice")
    columns = {}
    for column in GROUP_COLUMNS[1:]:
        if column not in frame.columns:
            columns[column] = None
            continue
        values = np.full(len(names), np.nan)
        for row, cell in enumerate(frame[column]):
            cell = str(cell).strip()
            if cell == "":
                if column == "budget":
                    raise InputError(f"{name}: group {names[row]!r} has no budget")
                continue
            try:
                values[row] = text_number(cell)
            except ValueError:
                raise InputError(f"{name}: group {names[row]!r}: {column} {cell!r} is not a "
                                 "number") from None
            if not np.isfinite(values[row]):  # an empty cell, not nan, leaves it to the rules
                raise InputError(f"{name}: group {names[row]!r}: {column} {cell!r} is not a "
                                 "finite number")
        columns[column] = values
    budgets = columns.pop("budget")
    bad = np.flatnonzero(~np.isfinite(budgets) | (budgets <= 0))
    if bad.size:
        raise InputError(f"{name}: group {names[bad[0]]!r}: budget {show_number(budgets[bad[0]])} "
                         "must be positive")
    checks = {"upsampling": (lambda v: v >= 1 and float(v).is_integer(),
                             "a whole number >= 1"),
              "weight": (lambda v: v > 0, "positive"),
              "participation": (lambda v: 0 < v <= 1, "in (0, 1]"),
              "share": (lambda v: 0 < v <= 1, "in (0, 1]")}
    for column, (valid, wanted) in checks.items():
        values = columns[column]
        if values is None:
            continue
        for row, value in enumerate(values):
            if np.isfinite(value) and not valid(value):
                raise InputError(f"{name}: group {names[row]!r}: {column} "
                                 f"{show_number(value)} must be {wanted}")
    shares = columns["share"]
    if shares is not None and np.nansum(shares) > 1.01:  # 0.01: shares rounded for display
        raise InputError(f"{name}: the groups' shares sum to {show_number(np.nansum(shares))}, "
                         "above 1 (each is a group's fraction of the data)")
    return PrivacyGroups(names=names, budgets=budgets, **columns)


def load_teacher_groups(path, *, groups: PrivacyGroups, teachers: int) -> np.ndarray:
    """Read ``teacher,group`` (CSV, header): the group index of every teacher 0..M-1.

    Args:
      path: the ``--teacher-groups`` file, a DataFrame of its columns, or each teacher's
        group name in teacher order.
      groups, teachers: the privacy groups, and M.

    Raises:
      InputError: a malformed file, a teacher out of range, listed twice or missing, an
        unknown group, or a group no teacher belongs to.
    """
    if hasattr(path, "to_csv"):  # a DataFrame of the file's columns, read back as the file
        name, raw = "the teacher groups table", path.to_csv(index=False)
    elif not isinstance(path, (str, os.PathLike)):
        return _used(groups, "the teacher groups", _given_groups(path, groups, teachers))
    else:
        name, raw = open_text(path)
    frame = small_csv(name, raw)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if list(frame.columns[:2]) != ["teacher", "group"]:
        raise InputError(f"{name}: expected the columns teacher,group")
    index = {group: number for number, group in enumerate(groups.names)}
    assigned = np.full(teachers, -1, dtype=np.int64)
    for row, (teacher, group) in enumerate(zip(frame["teacher"], frame["group"],
                                               strict=True)):
        try:
            number = text_number(str(teacher).strip())
            if not number.is_integer():
                raise ValueError(teacher)
            t = int(number)
        except (ValueError, OverflowError):
            raise InputError(f"{name}: line {row + 2}: teacher {teacher!r} is not a teacher "
                             "number (a whole number from 0)") from None
        if not 0 <= t < teachers:
            raise InputError(f"{name}: line {row + 2}: teacher {t} is outside 0..{teachers - 1}"
                             f" (the predictions have {teachers} teachers)")
        g = str(group).strip()
        if g not in index:
            raise InputError(f"{name}: line {row + 2}: unknown group {g!r} (the groups file "
                             f"lists {', '.join(groups.names)})")
        if assigned[t] >= 0:
            raise InputError(f"{name}: line {row + 2}: teacher {t} is listed twice")
        assigned[t] = index[g]
    missing = np.flatnonzero(assigned < 0)
    if missing.size:
        raise InputError(f"{name}: teacher {missing[0]} has no group ({missing.size} of "
                         f"{teachers} teachers are missing)")
    return _used(groups, name, assigned)


def _given_groups(values, groups: PrivacyGroups, teachers: int) -> np.ndarray:
    """Each teacher's group index from an array of group names in teacher order (matched as
    text, as a file's cells: ``2`` names the group ``"2"``)."""
    name = "the teacher groups"
    try:
        given = np.asarray(values)
    except (ValueError, TypeError):  # ragged lists
        raise InputError(f"{name}: expected one group name per teacher") from None
    if given.shape != (teachers,):
        raise InputError(f"{name}: expected one group per teacher ({teachers}), got shape "
                         f"{given.shape}")
    index = {group: number for number, group in enumerate(groups.names)}
    found = [index.get(str(group).strip(), -1) for group in given.tolist()]
    if -1 in found:
        teacher = found.index(-1)
        raise InputError(f"{name}: teacher {teacher}: unknown group "
                         f"{str(given.tolist()[teacher])!r} (the groups are "
                         f"{', '.join(groups.names)})")
    return np.asarray(found, dtype=np.int64)


def _used(groups: PrivacyGroups, name: str, assigned: np.ndarray) -> np.ndarray:
    """``assigned``, once every group has a teacher."""
    unused = [g for number, g in enumerate(groups.names) if not np.any(assigned == number)]
    if unused:
        raise InputError(f"{name}: no teacher belongs to group {unused[0]!r}, which the "
                         "groups file lists")
    return assigned


def read_groups(groups, teacher_groups=None, *,
                teachers) -> tuple[PrivacyGroups, np.ndarray | None]:
    """``--groups`` and ``--teacher-groups`` (``teachers`` teachers), files or the API's tables;
    ``PrivacyGroups`` taken as given."""
    if not isinstance(groups, PrivacyGroups):
        groups = load_groups(groups)
    if teacher_groups is None:
        return groups, None
    return groups, load_teacher_groups(teacher_groups, groups=groups, teachers=int(teachers))
