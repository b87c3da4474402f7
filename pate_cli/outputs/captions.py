"""Caption texts of the ``pate-plot`` figures, from JSON summaries and per-query tables."""

from __future__ import annotations

import numpy as np

from ..rounding import ceil_text
from .report_statement import ANY_RUN_KEY, UNSANITISED, data_dependence, selects
from .summary import adds_to, decisions_source, risk_source_text, risk_text, tprs_text, vacuous_text

MECHANISM_NAMES = {"lnmax": "LNMax", "gnmax": "GNMax", "confident": "Confident-GNMax",
                   "interactive": "Interactive-GNMax", "svt": "SVT-PATE",
                   "exponential": "Exponential (Gumbel-max)",
                   "confident-exponential": "Confident-Exponential"}
# The noise parameters of a sweep table's rows (pate-sweep's columns).
SWEEP_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "eta")


def summary_parameters(summary: dict | None) -> str:
    """``threshold=200, sigma_threshold=150, sigma=40`` from a summary's params (null ones out)."""
    if not summary:
        return ""
    return ", ".join(f"{key}={value:g}" if isinstance(value, float | int) else
                     f"{key}={value}" for key, value in (summary.get("params") or {}).items()
                     if value is not None)


def summary_accounting(summary: dict | None) -> str:
    """``replay accounting, classic conversion, seed 0`` from a JSON summary."""
    if not summary:
        return ""
    parts = [f"{summary.get('accounting')} accounting",
             f"{summary.get('conversion', 'classic')} conversion"]
    if (source := decisions_source(summary)) is not None:  # not a seeded replay
        parts.append(source)
    elif summary.get("accounting") == "replay":
        parts.append(f"seed {summary.get('seed')}")
    return ", ".join(parts)


def summary_caption(summary: dict | None) -> str:
    """Mechanism (parameters)[, individualized variant], accounting, from a summary."""
    if not summary:
        return ""
    text = MECHANISM_NAMES.get(summary.get("mechanism"), str(summary.get("mechanism")))
    params = summary_parameters(summary)
    parts = [f"{text} ({params})" if params else text]
    if summary.get("individualized"):
        parts.append(f"individualized {summary['individualized']}")
    parts.append(summary_accounting(summary))
    return ", ".join(parts)


def table_queries(frame) -> int:
    """The queries of a per-query table, or of the table ``frame`` was drawn from (its
    ``attrs``, ``plot_tables.drawn_table``)."""
    return int(frame.attrs.get("queries", len(frame)))


def drawn_from(frame) -> str:
    """`` (drawn from one query in every k, ...)`` when ``frame`` holds every k-th row of its
    table (``figure_data.figure_rows``), else ``''``."""
    every = frame.attrs.get("every", 1)
    if every <= 1:
        return ""
    outputs = ", each output's last" if "output" in frame.columns else ""
    return (f" (drawn from one query in every {every:,}, with the last{outputs} and the "
            "first over each budget)")


def figure_note(summary: dict | None, what: str = "figure") -> str:
    """What a per-query table's cumulative epsilon is: its RDP (SVT-PATE's: pure-DP) ``what``,
    beside a PLD headline if any; unsanitised for a data-dependent run (math:costs), or
    possibly so without a summary."""
    pure = (summary or {}).get("epsilon_method") == "pure"
    parts = [f"the per-query table's {'pure-DP' if pure else 'RDP'} {what}"]
    if not summary:
        parts.append("its accounting is not known without the run's summary: if "
                     "data-dependent, unsanitised, not for publication")
    if (summary or {}).get("epsilon_method") == "pld" and summary.get("epsilon") is not None:
        parts.append(f"the summary's epsilon, {ceil_text(float(summary['epsilon']), 4)}, is "
                     "the PLD (privacy-loss distribution) accountant's")
    if summary and data_dependence(summary)[0]:
        parts.append(UNSANITISED)
    elif summary and summary.get("groups"):
        parts += answers_note(summary, what)
    elif summary and summary.get("accounting") == "data-independent" and (summary.get(
            "epsilon_data_independent_worst") or 0) > summary["epsilon"]:
        worst = float(summary["epsilon_data_independent_worst"])
        pld = summary.get("epsilon_data_independent_worst_pld")  # led with where smaller
        bound = (f"{ceil_text(float(pld), 4)}, PLD, and {ceil_text(worst, 4)}, RDP"
                 if pld is not None and float(pld) < worst else f"{ceil_text(worst, 4)}, RDP")
        parts.append("the run's answers, a count the votes decide: not a bound (every query "
                     f"answered: {bound})")
    return "; ".join(parts)


def answers_note(summary: dict, what: str = "figure") -> list[str]:
    """For an individualized data-independent run whose halt the votes decide (a selection
    step's answers): its per-query figures compose the run's answers and are not bounds, with
    each group's bound for any run where the summary has them.

    Args:
        summary: the JSON summary of an individualized run.
        what: what the figures are called (``figure``, ``figures``).

    Returns:
        The caption part, or an empty list.
    """
    if summary.get("accounting") != "data-independent" or not selects(summary):
        return []
    bounds = [(row.get("group"), row.get(ANY_RUN_KEY)) for row in summary["groups"]]
    named = "; ".join(f"{group} {ceil_text(float(bound), 4)}" for group, bound in bounds
                      if bound is not None)
    plural = what.endswith("s")
    return [f"the run's answers, a count the votes decide: not {'bounds' if plural else 'a bound'}"
            + (f" (each group's bound for any run, every query answered: {named}; RDP)"
               if named and None not in dict(bounds).values() else "")]


def svt_running_note(summary: dict | None, last: float) -> str:
    """For an SVT-PATE table whose last figure is below the run's epsilon (cut-off not met):
    it is the guarantee had the run stopped there, a function of how many unstable queries the
    votes gave (math:svt), not the run's; else empty."""
    if (summary or {}).get("svt") is None or not last < float(summary["epsilon"]):
        return ""
    return (f"; the cut-off not met, it is the guarantee had the run stopped there "
            f"({UNSANITISED}); the run's guarantee is {ceil_text(float(summary['epsilon']), 4)}")


def runs_caption(labels, frames, summaries) -> str:
    """Per run: label (parameters): queries, answered, final epsilon and what figure it is
    (``figure_note``); shared accounting."""
    parts = []
    for label, frame, summary in zip(labels, frames, summaries, strict=True):
        answered = frame.attrs.get("answered")
        if answered is None:
            answered = float(frame["answered"].to_numpy(dtype=np.float64).sum())
        count = f"{answered:,.0f}" if answered.is_integer() else f"{answered:,.1f}"
        params = summary_parameters(summary)
        mechanism = MECHANISM_NAMES.get((summary or {}).get("mechanism"), "")
        name = label if not mechanism or mechanism in label else f"{label}, {mechanism}"
        last = None if frame.empty else float(frame["epsilon_cumulative"].iloc[-1])
        final = ("no query in the table (the run halted before its first)" if last is None
                 else f"final epsilon {ceil_text(last, 4)} ({figure_note(summary)}"
                 f"{svt_running_note(summary, last)})")
        multilabel = isinstance((summary or {}).get("multilabel"), dict)  # labels answered
        parts.append(f"{name}{f' ({params})' if params else ''}: "
                     f"{table_queries(frame):,} queries{drawn_from(frame)}, {count} "
                     f"{'labels answered' if multilabel else 'answered'}, {final}")
    accounting = {summary_accounting(s) for s in summaries if s}
    text = "; ".join(parts) + "."
    if len(accounting) == 1:
        text += f" {accounting.pop().capitalize()}."
    return text


def sweep_caption(table) -> str:
    """Sweep rows: how many, each setting's value or range (``sigma 20-200``); their epsilon
    unsanitised unless every row is data-independent."""
    parts = [f"{len(table)} sweep rows"]
    for column in ("queries", "teachers", "repeats", *SWEEP_PARAMETERS):
        if column not in table.columns:
            continue
        values = np.unique(table[column].to_numpy(dtype=np.float64))
        values = values[np.isfinite(values)]
        if values.size == 1:
            parts.append(f"{column} {values[0]:g}")
        elif values.size > 1:
            parts.append(f"{column} {values.min():g}-{values.max():g}")
    text = ", ".join(parts)
    if "accounting" in table.columns and (table["accounting"] != "data-independent").any():
        text += ("; epsilon of replay or expected accounting: data-dependent, unsanitised: "
                 "not for publication (sweep with --accounting data-independent for a "
                 "publishable figure)")
    return text


def risk_caption(labels, summaries, *, dependent: bool = True) -> str:
    """Per run: label (parameters), publishable TPR and advantage bounds (rounded up), their
    source and (``dependent``) the unsanitised bounds; then any shared accounting.
    ``summaries``: each with a non-null ``risk_data_independent`` (math:risk)."""
    parts = []
    for label, summary in zip(labels, summaries, strict=True):
        independent = summary["risk_data_independent"]
        params = summary_parameters(summary)
        text = (f"{label}{f' ({params})' if params else ''}: {risk_text(independent)} "
                f"(data-independent, {risk_source_text(independent)}"
                f"{vacuous_text(independent)})")
        risk = summary.get("risk")
        if dependent and adds_to(risk, independent):
            text += (f"; data-dependent TPR <= {tprs_text(risk)} "
                     f"({str(risk.get('source')).upper()}, unsanitised: not for publication)")
        tuned = (summary.get("tuning") or {}).get("risk")
        if isinstance(tuned, dict) and tuned == independent:  # pate-report's: the release's
            text += "; the --tuning search included"
        elif isinstance(tuned, dict):  # the curve drawn is one run's
            text += (f"; one run, without its --tuning search (with it: TPR <= "
                     f"{tprs_text(tuned)})")
        parts.append(text)
    accounting = {summary_accounting(s) for s in summaries}
    text = "; ".join(parts) + "."
    if len(accounting) == 1:
        text += f" {accounting.pop().capitalize()}."
    return text
