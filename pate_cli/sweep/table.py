"""Sweep rows <-> files: CSV, JSON lines, parquet, and an aligned text table.

Column types are fixed whatever the rows hold: text for ``file, mechanism, accounting, sha256,
version, conversion, orders, labels_sha256, student_sha256`` (and ``command``), nullable
integers for ``svt_cutoff, queries, repeats, seed``, floats for the rest; empty cells / nulls
mark unused parameters. Floats are the shortest text that reads back exactly, so
``read_sweep_rows`` gives exactly the rows written. The text table (``-f table``) is for
reading only: 6 significant digits, empty cells blank."""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..inputs.table_pieces import read_table
from ..inputs.tables import SWEEP
from ..numerics import whole_int
from ..outputs.files import parquet_bytes, require_pyarrow
from ..outputs.report_statement import data_dependence
from ..outputs.writing import utf8_text
from ..rounding import ceil_significant
from .columns import OPTIONAL_KEYS, POINT_COLUMNS, SWEEP_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

TABLE_FORMATS = ("csv", "json", "table")
TABLE_EXTENSIONS = (".csv", ".json", ".jsonl", ".parquet")
TEXT_COLUMNS = ("file", "mechanism", "accounting", "sha256", "version", "conversion",
                 "orders", "labels_sha256", "student_sha256", "command", "tuning", "screening",
                 "sampling", "vote_change", "epsilon_method", "sampling_steps", "risk_source",
                 "read")
# Left out of the aligned text table (provenance, not for reading).
HIDDEN_COLUMNS = ("sha256", "version", "labels_sha256", "student_sha256", "command", "read")
# Shown in the text table only when some row differs from the default.
DEFAULT_SETTINGS = {"conversion": "classic", "orders": "default", "epsilon_method": "rdp"}
INTEGER_COLUMNS = ("svt_cutoff", "queries", "repeats", "seed")
# Upper bounds: the text table rounds them up (the others to nearest).
UPPER_COLUMNS = ("epsilon", "epsilon_data_independent", "epsilon_tuned", "epsilon_all_points",
                 "risk_tpr_0.001", "risk_tpr_0.01", "risk_tpr_0.1", "risk_advantage",
                 "epsilon_max", "epsilon_any_run")
# Float counts (means over repeats) written without ``.0`` when whole (``250``).
COUNT_COLUMNS = ("teachers", "answered", "labels_output")


def sweep_frame(rows: list[dict], extra: tuple = ()) -> pd.DataFrame:
    """Rows as a DataFrame with the fixed column types."""
    import pandas as pd
    columns = [*SWEEP_COLUMNS, *extra]
    data = {}
    for column in columns:
        values = [row.get(column) for row in rows]
        if column in TEXT_COLUMNS:
            data[column] = pd.array([v if v is None else utf8_text(v) for v in values],
                                    dtype="string")
        elif column in INTEGER_COLUMNS:
            data[column] = pd.array([None if _missing(v) else int(v) for v in values],
                                    dtype="Int64")
        else:
            data[column] = np.array([np.nan if _missing(v) else float(v) for v in values],
                                    dtype=np.float64)
    return pd.DataFrame(data, columns=columns)


def table_bytes(rows: list[dict], *, path: str | None = None, fmt: str | None = None,
                extra: tuple = ()) -> bytes:
    """Serialise rows for ``path``'s extension, or in ``fmt`` (``csv``, ``json`` lines,
    ``table``) for stdout."""
    if path is not None:
        extension = os.path.splitext(path)[1].lower()
        fmt = {".csv": "csv", ".json": "json", ".jsonl": "json",
               ".parquet": "parquet"}.get(extension)
        if fmt is None:
            raise ValueError(f"{path}: unknown extension for a sweep table "
                             f"(use {', '.join(TABLE_EXTENSIONS)})")
    frame = sweep_frame(rows, extra)
    if fmt == "csv":
        return _whole_counts(frame).to_csv(index=False, lineterminator="\n").encode()
    if fmt == "json":
        return "".join(json.dumps(_whole_counts_row(_plain_row(row, frame.columns)),
                                  allow_nan=False) + "\n" for row in rows).encode()
    if fmt == "parquet":
        return parquet_bytes(frame, path)
    if fmt == "table":
        return _text_table(frame).encode()
    raise ValueError(f"format must be one of {', '.join(TABLE_FORMATS)}, got {fmt!r}")


def check_destination(path: str) -> None:
    """Refuse, before any work, an output path whose extension or directory is unusable."""
    if os.path.splitext(path)[1].lower() not in TABLE_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for a sweep table "
                         f"(use {', '.join(TABLE_EXTENSIONS)})")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ValueError(f"{path}: cannot write: the directory {directory} does not exist")
    if path.lower().endswith(".parquet"):
        require_pyarrow(path)


def read_sweep_rows(path: str) -> list[dict]:
    """Rows of a ``table_bytes`` sweep table, exactly as written (none for an empty file or a
    header alone; a column the table lacks is absent, not None). ``InputError`` for an
    unreadable file or one that is not a sweep table."""
    if os.path.exists(path) and os.path.getsize(path) == 0:
        return []
    frame = read_table(path, expected=SWEEP, allow_empty=True, text_columns=TEXT_COLUMNS)
    missing = [column for column in POINT_COLUMNS
               if column not in frame.columns and column not in OPTIONAL_KEYS]
    if missing:
        raise InputError(f"{path}: not a pate-sweep table (no column {missing[0]!r})")
    try:
        return [_plain_row(row, frame.columns) for row in frame.to_dict("records")]
    except ValueError as error:  # a number column holding text
        raise InputError(f"{path}: not a pate-sweep table ({error})") from None


def _plain_row(row: dict, columns) -> dict:
    """Python values: str, int, float; None for empty cells (``ValueError`` for a number
    column's text)."""
    plain = {}
    for column in columns:
        value = row.get(column)
        if _missing(value):
            plain[column] = None
        elif column in TEXT_COLUMNS:
            plain[column] = str(value)
        elif column in INTEGER_COLUMNS:
            plain[column] = int(value)
        else:
            plain[column] = float(value)
    return plain


def _whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``COUNT_COLUMNS`` as Python numbers, whole ones as int (for CSV)."""
    import pandas as pd
    counts = {column: pd.Series([None if _missing(v) else whole_int(float(v))
                                 for v in frame[column]], index=frame.index, dtype=object)
              for column in COUNT_COLUMNS if column in frame.columns}
    return frame.assign(**counts)


def _whole_counts_row(row: dict) -> dict:
    return {column: whole_int(value) if column in COUNT_COLUMNS else value
            for column, value in row.items()}


def _missing(value) -> bool:
    import pandas as pd
    if value is None or value is pd.NA:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _text_table(frame: pd.DataFrame) -> str:
    """Aligned columns for reading, leaving out empty columns, provenance and settings at
    their defaults in every row (classic conversion, the default orders)."""
    shown = frame.drop(columns=[c for c in HIDDEN_COLUMNS if c in frame.columns])
    if "epsilon_max" in shown.columns and (shown["epsilon_max"].isna()
                                           | (shown["epsilon_max"] == shown["epsilon"])).all():
        shown = shown.drop(columns=["epsilon_max"])  # one replay a row: epsilon itself
    for column, default in DEFAULT_SETTINGS.items():
        if column in shown.columns and (shown[column] == default).all():
            shown = shown.drop(columns=[column])
    shown = shown.loc[:, [column for column in shown.columns if shown[column].notna().any()]]
    if shown.empty:
        return "(no rows)\n"
    bounds = {column: _bound_text for column in UPPER_COLUMNS if column in shown.columns}
    for column in shown.columns:  # (na_rep does not reach a string column's <NA>)
        if str(shown[column].dtype) in ("string", "Int64") and shown[column].isna().any():
            shown[column] = shown[column].astype(object).where(shown[column].notna(), "")
    return shown.to_string(index=False, na_rep="", float_format=lambda x: f"{x:.6g}",
                           formatters=bounds) + "\n" + _means_note(frame, shown.columns) \
        + _dependent_note(frame) + _at_run_note(frame)


# Columns of a row that are means over its replays (``points``' row statistics).
MEAN_COLUMNS = ("epsilon", "answered", "labels_output", "label_accuracy",
                "epsilon_data_independent")


def _means_note(frame: pd.DataFrame, shown) -> str:
    """A line under the table where some row averages replays: which shown columns are means,
    and where the largest replay's epsilon is (what ``--best`` holds)."""
    if "repeats" not in frame.columns or not (frame["repeats"].fillna(1) > 1).any():
        return ""
    means = [column for column in shown if column in MEAN_COLUMNS]
    largest = ("epsilon_max the largest replay's (what --best holds within its limit)"
               if "epsilon_max" in shown else "epsilon_max (hidden) equals epsilon in every row")
    return f"{', '.join(means)}: means over each row's replays (repeats); {largest}\n"


def _dependent_note(frame: pd.DataFrame) -> str:
    """A line under the table where some row's ``epsilon`` is data-dependent (replay or
    expected: a function of the votes, math:costs), as pate-analyze labels it."""
    kinds = sorted({row["accounting"] for row in frame.to_dict("records")
                    if data_dependence(row)[0] and isinstance(row.get("accounting"), str)})
    if not kinds:
        return ""
    return (f"epsilon: {' and '.join(kinds)} accounting, data-dependent and unsanitised: not "
            "for publication (pate-analyze prints a point's publishable bound)\n")


def _at_run_note(frame: pd.DataFrame) -> str:
    """Lines under the table where a row's figure counts the run's answers (a count the votes
    decide: a selection step), below its ``epsilon_any_run``: a data-independent row's
    ``epsilon``, a replay or expected row's ``epsilon_data_independent``."""
    if "epsilon_any_run" not in frame.columns:
        return ""
    rows = [row for row in frame.to_dict("records") if not _missing(row["epsilon_any_run"])]
    independent = any(row.get("accounting") == "data-independent"
                      and row["epsilon_any_run"] != row["epsilon"] for row in rows)
    dependent = any(row.get("accounting") != "data-independent"
                    and row["epsilon_any_run"] != row.get("epsilon_data_independent")
                    for row in rows)
    return ("epsilon (data-independent rows with a selection step): the run's answers' "
            "figure, not a bound (the votes decide that count); epsilon_any_run is the bound "
            "for any run\n" if independent else "") + (
        "epsilon_data_independent (replay and expected rows with a selection step or a "
        "budget): the run's answers' figure (expected: an average), not a bound; "
        "epsilon_any_run is the bound for any run (the PLD figure where smaller)\n"
        if dependent else "")


def _bound_text(value) -> str:
    """An upper bound as a person reads it: 6 significant digits, rounded up (cli:json)."""
    return "" if _missing(value) else ceil_significant(value, 6)
