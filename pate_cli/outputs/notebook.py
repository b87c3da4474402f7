"""A result in a notebook: ``result._repr_html_()``, ``result.plot.*()``, ``result.report()``.

``AnalysisResult`` cannot import this layer (imports point down,
docs/contributing.md#architecture): importing it registers the views
(``analysis.result.register_presenter``). The HTML repr is a summary table and a sparkline of
the cumulative epsilon (inline SVG, a few KB whatever the query count).
"""

from __future__ import annotations

import numpy as np

from ..analysis.added_figures import any_run_bound
from ..analysis.result import AnalysisResult, register_presenter
from ..rounding import ceil_text
from .captions import MECHANISM_NAMES, summary_parameters
from .report import environment, render_report
from .report_figures import groups_plot, history_plot, selection_plot
from .report_files import analysed_votes
from .report_statement import AVERAGE_RELEASE, average_release, epsilon_text, number
from .summary import PLD, summary_lines

SPARK_WIDTH, SPARK_HEIGHT, SPARK_POINTS = 240.0, 48.0, 120


class ResultPlots:
    """``result.plot``: the run's figures as matplotlib ``Figure`` objects, each with an
    optional ``style`` (``pate_cli.outputs.figures.Style``: size, dpi, title, log axis)."""

    def __init__(self, result: AnalysisResult):
        self._result = result

    def history(self, *, style=None):
        """Cumulative epsilon per query (``pate-plot history``), budget line if any."""
        result = self._result
        return history_plot(result.to_dict(), result.to_frame(), style=style)

    def selection(self, *, style=None):
        """Confident-GNMax's plurality histogram and answered counts (``pate-plot
        selection``, 2018 Figure 5 left) over the analysed queries."""
        result = self._result
        if result.mechanism.name != "confident" or result.source is None \
                or result.rounds is not None or result.groups is not None \
                or result.multilabel is not None:
            kind = "multi-label " if result.multilabel is not None else ""
            raise ValueError("plot.selection() needs a Confident-GNMax run on a vote set "
                             f"(this is a {kind}{result.mechanism.name} run)")
        return selection_plot(result.to_dict(), analysed_votes(result), style=style)

    def groups(self, *, style=None):
        """Per-group cost histories of an individualized run (``pate-plot groups``)."""
        result = self._result
        if result.groups is None:
            raise ValueError("plot.groups() needs an individualized run "
                             "(analyze(..., individualized=...))")
        return groups_plot(result.to_dict(), result.to_frame(), style=style)

    def __repr__(self) -> str:
        return "<ResultPlots: .history(), .selection(), .groups()>"


def result_report(result: AnalysisResult, *, fmt: str = "html", command: str | None = None,
                  dataset_size: int | None = None) -> str:
    """``result.report()``: the ``pate-report`` statement (HTML with inline figures, or
    Markdown without its figure files); without the table's figures for a result analysed with
    ``per_query=False``, as ``pate-report --from``."""
    rows = analysed_votes(result) if result.mechanism.name == "confident" else None
    frame = result.to_frame() if result.has_columns else None
    text, _ = render_report(result.to_dict(), frame, fmt=fmt, votes=rows,
                            command=command, dataset_size=dataset_size)
    return text


def sparkline(values) -> dict:
    """Polyline points of a small line chart of ``values`` (at most 120 points)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {"points": "", "width": SPARK_WIDTH, "height": SPARK_HEIGHT, "top": "n/a"}
    picks = np.unique(np.linspace(0, values.size - 1, min(values.size, SPARK_POINTS))
                      .round().astype(np.int64))
    ys = values[picks]
    top = float(ys.max()) or 1.0
    xs = picks / max(values.size - 1, 1) * (SPARK_WIDTH - 4) + 2
    ys = SPARK_HEIGHT - 2 - ys / top * (SPARK_HEIGHT - 4)
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))
    return {"points": points, "width": SPARK_WIDTH, "height": SPARK_HEIGHT,
            "top": number(top, rounding="up")}  # an axis's top: "2", not "2.0000"


def _cumulative_picks(result: AnalysisResult) -> np.ndarray:
    """The cumulative epsilon at ``SPARK_POINTS`` evenly spread queries, streamed (empty without
    a table)."""
    total = result.queries
    if total == 0 or not result.has_columns:
        return np.empty(0)
    picks = np.unique(np.linspace(0, total - 1, min(total, SPARK_POINTS)).round()
                      .astype(np.int64))
    found, start = [], 0
    for frame in result.iter_frames():
        stop = start + len(frame)
        inside = picks[(picks >= start) & (picks < stop)]
        found.append(frame["epsilon_cumulative"].to_numpy(np.float64)[inside - start])
        start = stop
    return np.concatenate(found) if found else np.empty(0)


def result_html(result: AnalysisResult) -> str | None:
    """``_repr_html_``: the run's key figures and its cost history, under 20 KB."""
    try:
        env = environment()
    except ValueError:  # jinja2 absent: Jupyter falls back to repr()
        return None
    summary = result.to_dict()
    name = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    params = summary_parameters(summary)
    answered = summary["answered"]
    # the summary's own lines: each figure with its accountant, and a bound told from an
    # average (expected accounting) or a group's (individualized)
    lines = dict(summary_lines(summary))
    rows = [
        ("mechanism", f"{name} ({params})" if params else name),
        ("accounting", f"{summary['accounting']}, {summary['conversion']} conversion, "
                       f"seed {summary['seed']}"),
        ("queries", f"{summary['queries']} analysed, {number(answered, 1)} answered"
                    + (" (expected)" if isinstance(answered, float) else "")),
        *((key, lines[key]) for key in ("epsilon", "epsilon RDP", "data-independent",
                                        "uniform run") if key in lines),
    ]
    smooth = summary.get("smooth_sensitivity")
    if smooth and smooth.get("sanitized_epsilon") is not None:
        rows.append(("sanitised epsilon", f"{epsilon_text(smooth['sanitized_epsilon'])} "
                                          f"(noise std {number(smooth['noise_std'])}"
                                          + (f"; {AVERAGE_RELEASE}" if average_release(summary)
                                             else "") + ")"))
    if summary.get("label_accuracy") is not None:
        rows.append(("label accuracy", number(summary["label_accuracy"])))
    for row in summary.get("groups") or []:
        budget = number(row["budget"], rounding="up")  # as the epsilons held to it
        rows.append((f"group {row['group']}",
                     f"budget {budget}, epsilon {epsilon_text(row['epsilon'])}"))
    for note in summary.get("warnings") or []:
        rows.append(("warning", note))
    return env.get_template("repr.html.j2").render(
        title=f"AnalysisResult: {name}", rows=rows,
        spark=sparkline(_cumulative_picks(result)))


def result_epsilon(result: AnalysisResult) -> str:
    """``repr``'s epsilon: the summary's line (accountant, caveats); where it composes a
    data-independent run's answers (a count the votes decide), the bound for any run."""
    bound = any_run_bound(result)
    if bound is None or not bound["rdp"] > result.epsilon:
        return dict(summary_lines(result.to_dict()))["epsilon"]
    accountant = PLD if bound["method"] == "pld" else "RDP"
    return (f"{ceil_text(bound['epsilon'])} at delta {result.delta:g} ({accountant}, every "
            "query answered: the bound for any run)")


register_presenter("epsilon", result_epsilon)
register_presenter("plot", ResultPlots)
register_presenter("report", result_report)
register_presenter("html", result_html)
