"""Choosing among sweep rows: ``--best``, ``--pareto``, and the command that reruns a row."""

from __future__ import annotations

import math
import shlex

import numpy as np

from ..mechanisms.aggregators import SELECTING
from ..outputs.figure_data import frontier_mask
from ..outputs.report_command import option_value
from ..outputs.report_statement import data_dependence
from ..rounding import ceil_significant, ceil_text, exact_text, limit_digits, limit_text
from .points import one_per_file


def score_column(rows: list[dict]) -> str:
    """``label_accuracy`` when the rows were scored (every row that output a label has one;
    a row that output none scores lowest, :func:`_score`), else ``answered``."""
    if any(row.get("label_accuracy") is not None for row in rows) and all(
            row.get("label_accuracy") is not None or not row.get("labels_output")
            for row in rows):
        return "label_accuracy"
    return "answered"


def _score(row: dict, column: str) -> float:
    """``row``'s ``column``; ``-inf`` for a label accuracy of no label output."""
    value = row.get(column)
    return -math.inf if value is None else float(value)


def largest_epsilon(row: dict) -> float | None:
    """A row's largest epsilon over its replays (``epsilon_max``, else ``epsilon``: one
    replay); data-independent: the any-run bound where the row has one (``epsilon_any_run``:
    a selection step's count is the votes')."""
    bound = _any_run(row)
    if bound is not None:
        return bound
    value = row.get("epsilon_max")
    return row.get("epsilon") if value is None or value != value else value


def _any_run(row: dict) -> float | None:
    """Data-independent: a row's any-run bound where it has one (a selection step's row's
    ``epsilon`` composes its count, the votes'); else None."""
    bound = row.get("epsilon_any_run")
    if row.get("accounting") == "data-independent" and bound is not None and bound == bound:
        return float(bound)
    return None


def _published(row: dict) -> float:
    """A row's epsilon on the frontier: :func:`_any_run`'s bound, else ``epsilon``."""
    bound = _any_run(row)
    return row["epsilon"] if bound is None else bound


def best_row(rows: list[dict], epsilon: float) -> dict | None:
    """The row answering the most queries with every replay within ``epsilon``
    (cli:pate-sweep ``--best``; its command holds at any seed), or None; ties: better label
    accuracy (when every row has one), smaller largest epsilon, earlier row."""
    accuracy = score_column(rows) == "label_accuracy"
    within = [(position, row) for position, row in enumerate(rows)
              if (largest := largest_epsilon(row)) is not None and largest <= epsilon]
    if not within:
        return None
    return min(within, key=lambda item: (
        -item[1]["answered"], -_score(item[1], "label_accuracy") if accuracy else 0.0,
        largest_epsilon(item[1]), item[0]))[1]


def pareto_rows(rows: list[dict]) -> list[dict]:
    """Rows no other row of the same file beats (``frontier_mask`` per file: at most the
    epsilon, at least the score (label accuracy, else answered), strictly better in one), in
    order."""
    column = score_column(rows)
    files = np.array([row["file"] for row in rows], dtype=object)
    epsilon = np.array([_published(row) for row in rows], dtype=np.float64)
    score = np.array([_score(row, column) for row in rows], dtype=np.float64)
    kept = np.zeros(len(rows), dtype=bool)
    for file in dict.fromkeys(files):
        mine = np.flatnonzero(files == file)
        kept[mine] = frontier_mask(epsilon[mine], score[mine])
    return [row for row, keep in zip(rows, kept, strict=True) if keep]


def pareto_note(rows: list[dict]) -> str | None:
    """The note after ``--pareto`` where its frontier ranks rows by what depends on the private
    votes (data-dependent epsilons, a selection step's answers, label accuracy): choosing one
    is not covered by its epsilon (math:tuning); ``None`` where nothing is chosen."""
    if len(rows) < 2 or not any(row.get("accounting") != "data-independent"
                                or _ranked_by_votes(row) for row in rows):
        return None
    return ("pate-sweep: note: the frontier ranks the rows by figures of the private votes; "
            "choosing a row on it is not covered by that row's epsilon: --tuning gives the "
            "cost of a random search over the grid (docs/explanation/tuning.md)")


def _ranked_by_votes(row: dict) -> bool:
    """Whether ranking ``row`` among others reads the private votes even under
    data-independent accounting: its label accuracy, or a selection step's answered count."""
    return (row.get("label_accuracy") is not None  # SVT-PATE answers where the votes pass
            or row.get("mechanism") in (*SELECTING, "svt"))


def analyze_command(row: dict, *, labels: str | None = None, student: str | None = None,
                    orders: str | None = None, conversion: str = "classic",
                    index_col: int | None = None, classes: int | None = None,
                    columns=None) -> str:
    """The ``pate-analyze`` command rerunning a row (its first seed; ``index_col``, ``classes``,
    ``columns``: how its vote file was read)."""
    words = ["pate-analyze", row["file"], "-m", row["mechanism"]]
    for column in ("sigma", "threshold", "sigma_threshold", "laplace_scale", "svt_scale",
                   "svt_cutoff", "eta", "confidence"):
        if row.get(column) is not None:
            words += ["--" + column.replace("_", "-"), option_value(row[column])]
    words += ["--queries", option_value(row["queries"]), "--accounting", row["accounting"],
              "--delta", option_value(row["delta"]), "--seed", option_value(row["seed"])]
    if row.get("budget") is not None:
        words += ["--budget", option_value(row["budget"])]
    if row.get("screening") == "gaussian":
        words += ["--screening", "gaussian"]
    if row.get("sampling"):
        words += ["--sampling", row["sampling"], "--vote-change", row["vote_change"]]
        if row.get("sampling_steps") == "independent":
            words += ["--sampling-steps", "independent"]
    if orders:
        words += ["--orders", orders]
    if conversion != "classic":
        words += ["--conversion", conversion]
    if labels:
        words += ["--labels", labels]
    if student:
        words += ["--student", student]
    for option, value in (("--index-col", index_col), ("--classes", classes),
                          ("--columns", columns)):
        if value is not None and str(value):
            words += [option, str(value)]
    return shlex.join(map(str, words))


def best_command(chosen: dict, spec, orders) -> str:
    """``analyze_command`` for ``--best``'s row of ``spec`` (a ``SweepSpec``), with its file's
    ``--labels`` and (Interactive) ``--student``; ``orders`` the grid."""
    files = spec.files
    label_of = dict(zip(files, one_per_file(spec.labels, files, "--labels"), strict=True))
    student_of = dict(zip(files, one_per_file(spec.students, files, "--student"),
                          strict=True))
    student = student_of.get(chosen["file"]) if chosen["mechanism"] == "interactive" else None
    return analyze_command(chosen, labels=label_of.get(chosen["file"]), student=student,
                           orders=None if orders is None else ",".join(map(exact_text, orders)),
                           conversion=spec.conversion, index_col=spec.index_col,
                           classes=spec.classes, columns=spec.columns)


def no_best_text(rows: list[dict], epsilon: float) -> str:
    """Why ``--best`` found no row: none within ``epsilon`` (and the smallest there is)."""
    smallest = min((value for row in rows if (value := largest_epsilon(row)) is not None),
                   default=None)
    replays = any((row.get("repeats") or 1) > 1 for row in rows)
    shown = ("" if smallest is None else f" (the smallest is {ceil_significant(smallest, 4)}"
             + (", a row's largest replay)" if replays else ")"))
    return f"no configuration stays within epsilon {limit_text(epsilon)}{shown}"


def best_lines(chosen: dict, rows: list[dict], epsilon: float, command: str, *,
               searched: bool = False) -> list[str]:
    """The lines after ``--best``'s row: a row chosen by a data-dependent epsilon leaks beyond
    it, or (without ``searched``, ``--tuning``'s columns) a choice among rows by what the
    replays answered is not covered by its epsilon (math:tuning); then the choice and its
    ``pate-analyze`` command."""
    lines = []
    if any(data_dependence(row)[0] for row in rows):  # (not SVT-PATE's pure-DP epsilon)
        lines.append(f"Warning: --best ranked the rows by their {chosen.get('accounting')} "
                     "epsilon, which depends on the private votes: choosing by it leaks "
                     "beyond any figure here (docs/explanation/tuning.md); "
                     "choose under --accounting data-independent")
    elif not searched and len(rows) > 1 and _ranked_by_votes(chosen):
        lines.append(f"Warning: --best chose among {len(rows)} rows by what their replays "
                     "answered" + (" and their label accuracy" if chosen.get("label_accuracy")
                                   is not None else "") + ", which depend on the private "
                     "votes: the chosen row's epsilon does not cover the choice; pate-sweep "
                     "--tuning gives the cost of a random search over the grid "
                     "(docs/explanation/tuning.md)")
    elif searched and (chosen.get("epsilon_tuned") or 0.0) > epsilon:
        lines.append(f"Warning: choosing among the grid's points costs epsilon "
                     f"{ceil_text(chosen['epsilon_tuned'])} as a random search (--tuning), "
                     f"above {epsilon:g}: the chosen row's epsilon does not cover the choice")
    accuracy = ("" if chosen.get("label_accuracy") is None
                else f", label accuracy {chosen['label_accuracy']:.6g}")
    repeats, bound = chosen.get("repeats") or 1, largest_epsilon(chosen)
    spread = ("" if repeats == 1 or bound == chosen["epsilon"]
              else f" (the largest of its {repeats:g} replays; their mean "
              f"{ceil_text(chosen['epsilon'])}; the command reruns the first, seed "
              f"{option_value(chosen['seed'])})")
    if bound is not None and bound == chosen.get("epsilon_any_run"):
        spread = " (the bound for any run, every query answered)"
    means = "" if repeats == 1 else f" (means over its {repeats:g} replays)"
    digits = limit_digits(epsilon)  # the figure beside the limit at the limit's decimals
    lines.append(f"pate-sweep: best within epsilon {limit_text(epsilon, digits)} by "
                 f"answered{means}: {chosen['answered']:.6g}{accuracy} at epsilon "
                 f"{ceil_text(bound, digits)}{spread}\n  {command}")
    return lines
