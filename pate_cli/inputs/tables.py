"""Reading the tables and summaries our own commands write, for ``pate-plot``: per-query and
sweep tables (``.csv``, ``.tsv``, ``.json``/``.jsonl`` JSON lines, ``.parquet``) and JSON
summaries (``--format json``). Every problem is a one-line ``InputError`` naming the file and
the input expected there (a sweep table where a per-query table belongs, a missing column)."""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from .npy_files import NPY_MAGIC, ZIP_MAGIC
from .readers import (
    check_file,
    compression_of,
    decode_text,
    file_head,
    is_regular,
    read_stdin,
    read_stream,
    read_text_file,
)

if TYPE_CHECKING:
    import pandas as pd

TABLE_EXTENSIONS = (".csv", ".tsv", ".json", ".jsonl", ".parquet")

PER_QUERY = "a per-query table (pate-analyze --per-query FILE)"
SWEEP = "a pate-sweep table (pate-sweep --out FILE)"
SUMMARY = "a JSON summary (pate-analyze --format json -o FILE.json)"
MAX_QUERIES = 2**63 - 1  # a summary's query count (an int64)

# A per-query table's integer and text columns (cli:per-query); the rest are read as float64
# whatever their text (pyarrow writes 100.0 as ``100`` and -0.0 as ``-0``, pandas does not).
PER_QUERY_INTEGERS = ("query", "plurality_class", "label", "round", "unstable", "output",
                      "answered_labels")
PER_QUERY_TEXT = ("outcome",)

# Columns that tell the kinds of table apart (cli:per-query fixes them).
_PER_QUERY_MARKERS = ("query", "epsilon_cumulative")
_SWEEP_MARKERS = ("mechanism", "epsilon", "epsilon_std", "repeats")


def text_options(extension: str) -> dict:
    """``pandas.read_csv``'s options for a ``.csv``/``.tsv`` table (only empty cells missing)."""
    return {"sep": "\t" if extension == ".tsv" else ",", "keep_default_na": False,
            "na_values": [""]}


def per_query_floats(header) -> dict:
    """``read_csv``'s ``dtype``: float64 for ``header``'s columns but ``PER_QUERY_INTEGERS``
    and ``PER_QUERY_TEXT``."""
    return {column: np.float64 for column in header
            if str(column).strip() not in (*PER_QUERY_INTEGERS, *PER_QUERY_TEXT)}


def read_summary(path) -> dict:
    """Read a ``pate-analyze --format json`` summary (one JSON object; ``-``: standard input)."""
    name = os.fspath(path)
    if name == "-":
        text = decode_text(name, read_stdin())
    else:
        _check_file(name, SUMMARY)
        text = read_text_file(name)
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{name}: not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno}); expected {SUMMARY}") from None
    if not isinstance(summary, dict) or (summary.get("tool", "pate-analyze") == "pate-analyze"
                                         and not {"epsilon", "delta"} <= summary.keys()):
        raise InputError(f"{name}: has no 'epsilon' and 'delta' keys; expected {SUMMARY}")
    problem = _summary_problem(summary)  # another tool's JSON is named as such
    if problem is not None:
        raise InputError(f"{name}: {problem}; expected {SUMMARY}")
    return summary


def _summary_problem(summary: dict) -> str | None:
    """Why ``summary`` is not pate-analyze's JSON summary, or None: another tool's JSON, or
    a field a report or plot states (epsilon, delta, query count, parameters) out of range."""
    tool = summary.get("tool", "pate-analyze")  # a summary cut down to its keys: no tool
    if tool != "pate-analyze":
        return (f"is the JSON of {tool}, not a pate-analyze summary"
                if isinstance(tool, str) and tool.startswith("pate-") else
                f"'tool' is {_shown(tool)}, not \"pate-analyze\"")
    problem = _kind_problem(summary)
    if problem is not None:
        return problem
    figures = [(key, summary.get(key)) for key in (
        "epsilon", "epsilon_data_independent", "epsilon_data_independent_worst",
        "epsilon_data_independent_pld", "epsilon_data_independent_worst_pld", "epsilon_rdp",
        "epsilon_improved")]  # the figures a report may publish
    base = summary.get("baseline")
    if isinstance(base, dict):  # an individualized run's uniform run, and each group's
        figures += [(f"baseline.{key}", base.get(key)) for key in (
            "epsilon_data_independent", "epsilon_data_independent_worst")]
    groups = summary.get("groups")
    if isinstance(groups, list):
        figures += [(f"groups.{number}.epsilon_data_independent",
                     row.get("epsilon_data_independent") if isinstance(row, dict) else row)
                    for number, row in enumerate(groups)]
    for key, value in figures:
        if (key == "epsilon" or value is not None) and not (_finite(value) and value >= 0):
            return f"'{key}' must be a finite number >= 0, got {_shown(value)}"
    delta = summary["delta"]
    if not (_real(delta) and 0 < delta < 1):
        return f"'delta' must be a number in (0, 1), got {_shown(delta)}"
    queries = summary.get("queries", 0)
    if not (isinstance(queries, int) and not isinstance(queries, bool)
            and 0 <= queries <= MAX_QUERIES):
        return f"'queries' must be a whole number >= 0, got {_shown(queries)}"
    seed = summary.get("seed")
    if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)
                                 and seed >= 0):
        return f"'seed' must be a whole number >= 0, got {_shown(seed)}"
    numbers = [(f"params.{key}", value) for key, value in summary.get("params", {}).items()
               if key in NUMERIC_PARAMS]
    numbers.append(("input.teachers", summary.get("input", {}).get("teachers")))
    budget = summary.get("budget")
    if isinstance(budget, dict):
        numbers.append(("budget.limit", budget.get("limit")))
    for key, value in numbers:  # the figures a report states or redraws from
        if value is not None and not _finite(value):
            return f"'{key}' must be a finite number, got {_shown(value)}"
        if key.split(".")[-1] in POSITIVE_PARAMS and value is not None and not value > 0:
            return f"'{key}' must be a number > 0, got {_shown(value)}"
    return None


def _kind_problem(summary: dict) -> str | None:
    """Why a key the report or the plots read holds another JSON type than its own (a
    number, an object, a list, a name; null where ``json.md`` allows it), or None."""
    for key, value in summary.items():
        kind = SUMMARY_KINDS.get(key)
        if kind is None:
            continue
        if value is None and key == "order" and summary.get("epsilon_method") != "pure":
            return "'order' must be a number (null only for a pure-DP epsilon), got null"
        if value is None and key in NOT_NULL or value is not None and not _KIND_TESTS[kind](
                value):
            return f"'{key}' must be {kind}, got {_shown(value)}"
    for number, row in enumerate(summary.get("groups") or []):
        if not isinstance(row, dict):
            return f"'groups.{number}' must be a JSON object, got {_shown(row)}"
    return None


# Keys pate-report always reads (a plot takes a summary cut down to the keys it draws:
# epsilon, delta and the risks for the trade-off curve).
REPORT_KEYS = ("input", "mechanism", "queries", "accounting", "params", "answered", "order",
               "epsilon_data_independent")
# The JSON type of the summary's keys that a report or plot reads (json.md); null is
# allowed except in NOT_NULL, and in ``order`` only with a pure-DP epsilon.
_NUMBER, _OBJECT, _LIST, _NAME = "a finite number >= 0", "a JSON object", "a JSON list", "a name"
SUMMARY_KINDS = {
    **dict.fromkeys(("answered", "order", "order_data_independent", "label_accuracy",
                     "labels_output", "stopped_at", "labels_released",
                     "epsilon_data_independent"), _NUMBER),
    **dict.fromkeys(("params", "input", "orders", "rdp_at_order", "budget",
                     "smooth_sensitivity", "svt", "sampling", "tuning", "outputs",
                     "multilabel", "decisions", "files",  # risks: risk_figure.risk_problem
                     "baseline", "individualized_rule", "add_rdp", "outcomes",
                     "accuracy_by_outcome"), _OBJECT),
    **dict.fromkeys(("groups", "warnings", "rounds"), _LIST),
    **dict.fromkeys(("version", "mechanism", "accounting", "conversion", "q_bound",
                     "data_independent_method", "epsilon_method", "individualized"), _NAME),
}
NOT_NULL = ("params", "input", "answered", "mechanism", "accounting",
            "epsilon_data_independent")
_KIND_TESTS = {_NUMBER: lambda value: _finite(value) and value >= 0,
               _OBJECT: lambda value: isinstance(value, dict),
               _LIST: lambda value: isinstance(value, list),
               _NAME: lambda value: isinstance(value, str)}


# The mechanisms' numeric parameters (JSON ``params``; ``screening`` is a name).
NUMERIC_PARAMS = ("threshold", "sigma_threshold", "sigma", "laplace_scale", "svt_scale",
                  "svt_cutoff", "svt_threshold", "target_epsilon", "eta", "confidence")
# Of them (and of the teachers), those a mechanism takes only above 0.
POSITIVE_PARAMS = ("sigma_threshold", "sigma", "laplace_scale", "svt_scale", "svt_cutoff",
                   "eta", "teachers")


def _real(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value) -> bool:
    """A JSON number that is finite as a float (10**400 is not: it overflows)."""
    try:
        return _real(value) and math.isfinite(value)
    except OverflowError:
        return False


def _shown(value) -> str:
    """A field's value in an error line (JSON spelling, shortened)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def table_kind(frame: pd.DataFrame) -> str | None:
    """``per-query``, ``sweep`` or None, from the columns cli:per-query fixes."""
    columns = set(frame.columns)
    if all(column in columns for column in _PER_QUERY_MARKERS):
        return "per-query"
    if all(column in columns for column in _SWEEP_MARKERS):
        return "sweep"
    return None


def require_table(frame: pd.DataFrame, name: str, *, kind: str, columns) -> None:
    """Check that ``frame`` is a ``kind`` table with ``columns``, or raise naming it."""
    expected = PER_QUERY if kind == "per-query" else SWEEP
    found = table_kind(frame)
    if found is not None and found != kind:
        other = PER_QUERY if found == "per-query" else SWEEP
        raise InputError(f"{name}: this is {other}; expected {expected}")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(f"{name}: no column '{missing[0]}'; expected {expected}")


def numeric_column(frame: pd.DataFrame, name: str, column: str, *,
                   allow_empty: bool = False) -> np.ndarray:
    """``frame[column]`` as float64 (empty cells NaN when ``allow_empty``), else raise."""
    values, problem = _numbers(frame, name, column, allow_empty=allow_empty)
    if problem is not None:
        raise InputError(problem)
    return values


def bad_cell(frame: pd.DataFrame, name: str, column: str, *, first_row: int = 0
             ) -> str | None:
    """The error line of ``frame[column]``'s first empty or non-numeric cell (None: every
    cell a number), its row counted from ``first_row`` (``frame`` a piece of a table)."""
    return _numbers(frame, name, column, allow_empty=False, first_row=first_row)[1]


def _numbers(frame: pd.DataFrame, name: str, column: str, *, allow_empty: bool,
             first_row: int = 0) -> tuple[np.ndarray, str | None]:
    import pandas as pd
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
    given = frame[column].notna().to_numpy()
    bad = np.flatnonzero(given & np.isnan(values))
    if bad.size:
        return values, (f"{name}: row {first_row + bad[0]}: column '{column}' has "
                        f"{frame[column].iloc[bad[0]]!r}, not a number")
    if not allow_empty and np.any(~given):
        row = first_row + int(np.flatnonzero(~given)[0])
        return values, f"{name}: row {row}: column '{column}' is empty"
    low, high = _domain(column)
    out = np.flatnonzero((values < low) | (values > high))  # NaN compares False
    if out.size:
        return values, (f"{name}: row {first_row + out[0]}: column '{column}' has "
                        f"{values[out[0]]:g}, outside [{low:g}, {high:g}]")
    return values, None


def _domain(column: str) -> tuple[float, float]:
    """The values a column of our tables can hold: epsilons and RDP are >= 0, accuracies
    and rates in [0, 1]; others are not bounded here."""
    if column.startswith(("label_accuracy", "risk_tpr", "risk_advantage")):
        return 0.0, 1.0
    if column.startswith(("epsilon", "rdp")):
        return 0.0, np.inf
    return -np.inf, np.inf


def table_source(name: str, expected: str) -> tuple[str, bytes | None]:
    """Where the table ``name`` is and what format it has.

    ``-`` and a FIFO are read once, whole; one without a table extension is told by its bytes
    (parquet's ``PAR1``, JSON lines' ``{``, else CSV). Returns ``(extension, data)``: one of
    ``TABLE_EXTENSIONS``, and a stream's bytes (None for a regular file). ``InputError``: a
    missing or empty file, an unknown extension.
    """
    if name != "-" and is_regular_file(name, expected):
        return table_extension(name, expected), None
    data = read_stdin() if name == "-" else read_stream(name)
    if not data.strip():
        raise InputError(f"{name}: the file is empty (expected {expected})")
    if data.startswith((NPY_MAGIC, ZIP_MAGIC)):
        kind = ".npy" if data.startswith(NPY_MAGIC) else ".npz (zip)"
        raise InputError(f"{name}: is binary {kind} data, not a table (expected {expected})")
    extension = os.path.splitext(name)[1].lower() if name != "-" else ""
    if extension not in TABLE_EXTENSIONS:
        head = data.lstrip()[:4]
        extension = (".parquet" if data.startswith(b"PAR1") else
                     ".jsonl" if head.startswith((b"{", b"\xef\xbb\xbf{")) else ".csv")
    return extension, data


def is_regular_file(name: str, expected: str) -> bool:
    """Whether ``name`` is a regular file (one-line errors for a missing one)."""
    check_file(name, expected=expected)
    return is_regular(name)


def table_extension(name: str, expected: str) -> str:
    """The extension of the table ``name`` (one of ``TABLE_EXTENSIONS``), else one line."""
    extension = _check_file(name, expected)
    if extension not in TABLE_EXTENSIONS:
        compression = compression_of(file_head(name)) if is_regular(name) else None
        if compression:  # named as such (table.csv.gz)
            raise InputError(f"{name}: is {compression}-compressed; decompress it first "
                             f"(expected {expected}: {', '.join(TABLE_EXTENSIONS)})")
        shown = f"'{extension}'" if extension else "none"
        raise InputError(f"{name}: unknown extension {shown} for {expected} "
                         f"(use {', '.join(TABLE_EXTENSIONS)})")
    return extension


def _check_file(name: str, expected: str) -> str:
    check_file(name, expected=expected)
    if is_regular(name) and os.path.getsize(name) == 0:  # a FIFO's size is 0: read it
        raise InputError(f"{name}: the file is empty (expected {expected})")
    return os.path.splitext(name)[1].lower()


def summary_hint(expected: str) -> str:
    """Where a summary goes instead: the per-query figures take one with ``--summary``, the
    trade-off curve draws one."""
    if expected == SWEEP:
        return " (pate-plot tradeoff-curve draws a summary's trade-off)"
    return " (give a summary with --summary)" if expected == PER_QUERY else ""


def is_summary(text: str) -> bool:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    # a summary nests its input's description; a sweep row (also with epsilon) is flat
    return (isinstance(value, dict) and "epsilon" in value and "delta" in value
            and isinstance(value.get("input"), dict))


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
