"""A privacy statement as plain data for the report templates (``pate-report``).

:func:`report_content` reads a JSON summary (cli:json): headline (math:smooth), privacy unit,
definition and conversion (math:conversion), mechanism, accounting (math:costs), decisions,
budget, groups (math:individualized), tuning (math:tuning), attack risk (math:risk, rounded
up), reproduction, and a checklist after Ponomareva et al. 2023, "How to DP-fy ML". Nothing
is computed; optional keys are read tolerantly.

Size: one concept, the statement section by section, for every kind of run.
"""

from __future__ import annotations

import os

from ..rounding import ceil_text, floor_text, limit_text
from .captions import MECHANISM_NAMES
from .report_command import command_line
from .report_statement import (
    ANY_RUN_KEY,
    AT_COUNT,
    AVERAGE_RELEASE,
    UNSANITISED,
    accountant_name,
    at_halt_reason,
    data_dependence,
    decisions_kind,
    decisions_text,
    epsilon_label,
    epsilon_text,
    halt_from_votes,
    halted_before,
    headline,
    largest_group,
    number,
    pld_key,
    pld_source,
    privacy_unit,
    round_note,
    selects,
    smaller_pld,
    tuning_law,
)
from .risk_figure import risk_problem, with_published_risk
from .summary import adds_to, risk_text, vacuous_text

LE = "\u2264"  # "at most", as the report writes it
PAPER = "Ponomareva et al. 2023, \u201cHow to DP-fy ML\u201d"
PARAMETER_NAMES = {
    "threshold": "selection threshold T", "sigma_threshold": "selection noise \u03c3\u2081",
    "sigma": "answer noise \u03c3\u2082 (Gaussian std)", "laplace_scale": "Laplace scale \u03bb",
    "confidence": "student confidence \u03b3", "svt_scale": "SVT Laplace scale",
    "svt_cutoff": "SVT cut-off (unstable queries)", "svt_threshold": "SVT threshold w",
    "eta": "exponential mechanism \u03b7 (\u03b5\u2080 = 2\u03b7 per answer)",
    "screening": "threshold step's data-independent curve (docs/explanation/screening.md)",
    "rounds": "number of rounds (each round's parameters below)",
}
METHODS = {"rdp": "R\u00e9nyi DP, converted at the best order "
                  "(docs/explanation/accounting.md#conversion)",
           "pure": "a pure-DP bound (no finite order)"}
SECTIONS = ("headline", "privacy-unit", "definition", "mechanism", "accounting", "risk",
            "budget", "groups", "tuning", "figures", "reproduction", "checklist")
RISK_SOURCES = {"pld": "privacy-loss distribution (PLD)",
                "rdp": "the R\u00e9nyi DP curve's (\u03b5, \u03b4) conversions (RDP)",
                "pure": "the pure-DP bound"}


def _figure(key: str, label: str, value, digits: int = 4, *, rounding: str = "up") -> dict:
    # an epsilon keeps its trailing zeros, as the headline and pate-analyze print it
    text = number(value, digits, rounding=rounding, strip="epsilon" not in key)
    return {"key": key, "label": label, "text": text,
            "value": "" if value is None else repr(value)}


def _answered_figures(summary: dict) -> list[dict]:
    """How many were answered: queries, or labels for multi-label votes (``answered`` counts
    (query, label) pairs), with the labels per query."""
    answered = summary.get("answered")
    expected = " (expected)" if isinstance(answered, float) else ""
    labels = (summary.get("multilabel") or {}).get("labels")
    if not isinstance(labels, int):
        return [_figure("answered", f"queries answered{expected}", answered,
                        rounding="nearest")]
    return [_figure("multilabel.labels", "labels per query", labels, rounding="nearest"),
            _figure("answered", f"labels answered{expected}, of "
                                f"{summary['queries'] * labels} (queries \u00d7 labels)",
                    answered, rounding="nearest")]


def outputs_view(outputs: dict | None, dependent: bool) -> dict | None:
    """Outputs (generated sequences): count, tokens and own epsilon (min / median / max; RDP,
    rounded up, unsanitised where ``dependent``) and how many a halt left whole."""
    if not outputs:
        return None
    tokens, spent = outputs["tokens_per_output"], outputs.get("epsilon_per_output")
    return {"count": outputs["count"], "completed": outputs["completed"],
            "kind": "RDP" + (f"; {UNSANITISED}" if dependent else ""),
            "tokens": " / ".join(number(tokens[key]) for key in ("min", "median", "max")),
            "epsilon": ("n/a" if not spent else " / ".join(
                epsilon_text(spent[key]) for key in ("min", "median", "max")))}


def budget_view(summary: dict, head: dict | None = None) -> dict | None:
    """The budget and its halt, from ``{limit, stopped_at}`` or ``{limit, halted_at, ...}``.

    Args:
        summary: the JSON summary.
        head: :func:`headline`'s (computed where None).

    Returns:
        ``limit``, ``halt``, ``remaining`` (``remaining_label``: what it is left of),
        ``answered``, ``note`` (the figure the budget held, its accountant, whether the
        published figure is above the budget); None without a budget.
    """
    budget = summary.get("budget")
    if not budget:
        return None
    halts = "halted_at" in budget  # math:costs: the run halts; else answers refused
    halted = budget.get("halted_at", budget.get("stopped_at"))
    if halted is None:
        text = "never: the run ended within the budget"
    elif halts:
        text, unit = halted_before(summary, halted)
        text += f": that {unit} and every later one was neither selected, charged nor labelled"
    else:
        text = f"answers refused from query {halted} on"
    held, label, note = _budget_held(summary, halted is not None)
    over = _over_budget(summary, head or headline(summary), held)
    # rounded up as the epsilons held to it (exact where its digits hold it)
    view = {"limit": _limit(budget.get("limit")), "halted_at": halted, "halt": text,
            "remaining_label": label, "note": " ".join(part for part in (note, over) if part)
            or None}
    for key in ("remaining", "answered"):
        if budget.get(key) is not None:
            view[key] = number(budget[key], rounding="down" if key == "remaining"
                               else "nearest")
    return view


def _limit(value) -> str:
    """A budget as printed (``rounding.limit_text``: as given where four decimals hold it,
    else rounded up as the epsilons held to it), ``n/a`` for None."""
    return "n/a" if value is None else limit_text(value)


def _budget_held(summary: dict, halted: bool) -> tuple[str, str, str | None]:
    """``(held, label, note)``: the figure a budget run's budget held (a few words), the label
    of what its remaining budget is of, and a note or None. Held: the data-dependent figure
    (replay, expected: unsanitised), the data-independent one of the run's answers (a selection
    step: not a bound), or the run's data-independent one; where the halt was decided on the
    RDP figure and a smaller PLD figure is the run's, that, with what is left on the RDP
    figure. ``halted``: the run halted or refused answers."""
    limit = float(summary["budget"]["limit"])
    rdp = summary.get("epsilon_rdp")
    accountant = accountant_name(summary.get("epsilon_method"))
    if summary.get("accounting") != "data-independent":
        smooth = " before the release's own cost" if summary.get("smooth_sensitivity") else ""
        where = ("where the run halted depends on the private votes, so the data-independent "
                 "bound covers every requested query, past the halt" if halted else "whether a "
                 "run halts depends on the private votes, so the data-independent bound covers "
                 "every requested query")
        return ("the run's data-dependent figure", "Left of the budget on the data-dependent "
                "\u03b5 (unsanitised)",
                f"The budget holds the run's data-dependent \u03b5{smooth} ({accountant}; "
                f"unsanitised), not the data-independent bound; {where}.")
    decided = ""
    if halted and summary.get("data_independent_method") == "pld" and rdp is not None:
        decided = (f"the halt was decided on the R\u00e9nyi DP figure, {epsilon_text(rdp)} "
                   f"({floor_text(max(limit - float(rdp), 0.0))} of the budget left on it); ")
    figure = epsilon_text(summary.get("epsilon"))
    if summary.get(ANY_RUN_KEY) is not None:
        return ("the figure of the run's answers", "Left on the run's answers (not a bound)",
                "The budget holds the data-independent \u03b5 of the run's answers, a count "
                f"the votes decide: {decided}the remaining budget is the budget minus "
                f"{accountant}'s figure of those answers, {figure}, not a bound; the "
                "published bound covers every requested query answered.")
    if decided:
        return ("the run's figure", "Remaining budget", decided[0].upper() + decided[1:]
                + f"the remaining budget is the budget minus {accountant}'s figure of the "
                f"run, {figure}, not room for more queries.")
    return "the run's figure", "Remaining budget", None


def _over_budget(summary: dict, head: dict, held: str) -> str | None:
    """A sentence where the headline's published figure is above the budget, else None (a
    printed budget beside a larger printed epsilon must read neither as overspent nor as held
    by it). ``held``: :func:`_budget_held`'s words."""
    published = head.get("published")
    if published is None or not float(published) > float(summary["budget"]["limit"]):
        return None
    what = ("sanitised release" if head["sanitised"] else "bound with the hyperparameter "
            "search" if head["tuning_included"] else "bound")
    if head["tuning_included"] and summary.get("accounting") == "data-independent" \
            and summary.get(ANY_RUN_KEY) is None:
        held = "one run's figure, without the search"
    return (f"The published {what}, \u03b5 = {epsilon_text(published)}, is above the "
            f"budget: the budget holds {held}, not the published one.")


def group_budget_note(summary: dict, head: dict) -> str | None:
    """Which figure each privacy group's budget held (its ``epsilon``, spent at the halt),
    and which groups' published bounds are above their budgets.

    Args:
        summary: the JSON summary (an individualized run's).
        head: :func:`headline`'s.

    Returns:
        The note, or None without groups or where the held figure is the published one.
    """
    groups = [row for row in summary.get("groups") or [] if row.get("budget") is not None]
    if not groups:
        return None
    held = group_headers(summary)["epsilon"]
    if not held:  # the data-independent figure at a halt the same on any votes: published
        return None
    text = f"Each group's budget holds its \u03b5 spent at the halt{held}, not its published bound."
    bounds = [row.get(ANY_RUN_KEY) for row in groups]
    if None in bounds:
        if halt_from_votes(summary):  # vanishing: no bound is formed (the headline's)
            return text.replace(", not its published bound.", "; no bound for any run is "
                                "formed (see the headline).")
        bounds = [row.get("epsilon_data_independent") for row in groups]
    over = [f"group {row['group']}'s \u03b5 = {epsilon_text(bound)} (budget "
            f"{_limit(row['budget'])})" for row, bound in zip(groups, bounds, strict=True)
            if bound is not None and float(bound) > float(row["budget"])]
    if over:
        text += (" The published bounds are above the budgets: " + ", ".join(over)
                 + "; each budget holds the figure at the halt, not the published one.")
    return text


def group_headers(summary: dict) -> dict:
    """What the group table's columns hold where a header would not say: the data-dependent
    figure (unsanitised), or figures of the replay's answers or of a halt the votes decide (not
    bounds), as the key figures label them.

    Args:
        summary: the JSON summary.

    Returns:
        Suffixes (empty or `` (...)``) of ``epsilon``, ``independent`` and
        ``independent_all``.
    """
    dependent = data_dependence(summary)[0]
    at_halt = f" ({at_halt_reason(summary)}: not a bound)" if halt_from_votes(summary) else ""
    answers = " (the run's answers: not a bound)" if selects(summary) else ""
    return {"epsilon": " (data-dependent, unsanitised)" if dependent else at_halt,
            "independent": at_halt, "independent_all": answers}


def parameter_rows(summary: dict) -> list[dict]:
    rows = [{"name": PARAMETER_NAMES.get(key, key), "key": key, "value": number(value, 6)}
            for key, value in (summary.get("params") or {}).items() if value is not None]
    svt = summary.get("svt")
    if svt:
        rows += [{"name": f"SVT {key}", "key": f"svt.{key}", "value": number(svt[key], 6)}
                 for key in ("scale", "cutoff", "threshold", "unstable", "delta1", "delta2")
                 if key in svt]
    return rows


def round_rows(summary: dict) -> list[dict]:
    """Each round's mechanism, rows, parameters and student file (``--rounds``), as rows.

    Args:
        summary: the JSON summary (its ``rounds`` and ``files``).

    Returns:
        Rows of ``name``, ``key`` and ``value``; none without rounds.
    """
    rows = []
    files = summary.get("files") or {}
    for index, entry in enumerate(summary.get("rounds") or []):
        name = f"round {entry.get('round', index)}"
        first = entry.get("first_row")
        span = (f"rows {first} to {first + entry['queries'] - 1}" if isinstance(first, int)
                and isinstance(entry.get("queries"), int) else "n/a")
        mechanism = entry.get("mechanism")
        rows.append({"name": f"{name}: mechanism", "key": f"rounds.{index}.mechanism",
                     "value": f"{MECHANISM_NAMES.get(mechanism, mechanism)} ({span})"})
        rows += [{"name": f"{name}: {PARAMETER_NAMES.get(key, key)}",
                  "key": f"rounds.{index}.params.{key}", "value": number(value, 6)}
                 for key, value in (entry.get("params") or {}).items() if value is not None]
        student = files.get(f"rounds_student_{entry.get('round', index)}")
        if isinstance(student, dict):
            rows.append({"name": f"{name}: student predictions",
                         "key": f"files.rounds_student_{entry.get('round', index)}",
                         "value": f"{student.get('path')} (sha256 {student.get('sha256')})"})
    return rows


def group_rows(summary: dict) -> list[dict]:
    rows = []
    for row in summary.get("groups") or []:
        knob = next((key for key in ("upsampling", "weight", "participation") if key in row),
                    None)
        rows.append({"group": str(row["group"]), "budget": _limit(row.get("budget")),
                     "knob": f"{knob} {number(row[knob])}" if knob else "",
                     "sensitivity": number(row.get("sensitivity")),
                     "epsilon": epsilon_text(row.get("epsilon")), "order": number(row.get("order")),
                     "independent": epsilon_text(row.get("epsilon_data_independent")),
                     "independent_all": epsilon_text(
                         row.get("epsilon_data_independent_if_continued")),
                     "any_run": None if row.get(ANY_RUN_KEY) is None
                     else epsilon_text(row[ANY_RUN_KEY]),  # a selection step's bound
                     "exhausted_at": ("within budget" if row.get("exhausted_at") is None
                                      else f"query {row['exhausted_at']}")})
    return rows


def tuning_view(summary: dict) -> dict | None:
    """The search's figures (math:tuning) as labelled rows, every epsilon rounded up, those
    from the data-dependent curve labelled unsanitised (its risk is the risk section's); None
    without a search."""
    tuning = summary.get("tuning")
    if not tuning:
        return None
    if not isinstance(tuning, dict):  # a summary written by hand: shown as given
        return {"rows": [{"name": "search", "value": str(tuning)}]}
    dependent = data_dependence(summary)[0]
    bound = tuning.get("epsilon_tuned_data_independent")
    note = (f" ({UNSANITISED})" if dependent else " (data-independent)" if bound is None
            else " (data-independent, the replay's answers: not a bound)")
    rows = [("search", f"random search, K ~ {tuning_law(tuning)} (docs/explanation/tuning.md)"),
            ("\u03b5 of one run" + note, epsilon_text(tuning.get("epsilon_single"))),
            ("\u03b5 with the search" + note, f"{epsilon_text(tuning.get('epsilon_tuned'))} "
             f"(order {number(tuning.get('order'))})")]
    if bound is not None:
        rows.append(("\u03b5 with the search (data-independent bound for any run)",
                     epsilon_text(bound)))
    return {"rows": [{"name": name, "value": value} for name, value in rows]}


def risk_rows(risk: dict) -> list[dict]:
    """A risk's TPR at each reported FPR and advantage, rounded up at 4 decimals (a printed
    bound is never below the computed one)."""
    rows = [{"label": f"attacker's TPR at FPR {fpr}", "text": ceil_text(tpr)}
            for fpr, tpr in risk["tpr_at_fpr"].items()]
    return rows + [{"label": "advantage (largest TPR \u2212 FPR)",
                    "text": ceil_text(risk["advantage"])}]


def risk_view(summary: dict, figure: dict | None = None) -> dict:
    """The attack risk section (math:risk): the publishable bounds (``rows``, rounded up) with
    ``source``, ``mu`` and ``figure`` (embedded, or None); a data-dependent run's own bounds
    (``dependent``, labelled ``UNSANITISED``); or ``missing``, a sentence, without a risk;
    ``search``: the bounds are a tuned run's search's (``tuning.risk``)."""
    tuning = summary.get("tuning")
    search = isinstance(tuning, dict) and tuning.get("risk") is not None
    independent = with_published_risk(summary).get("risk_data_independent")
    if independent is None or risk_problem(independent) is not None:
        why = ("an individualized run has one guarantee per privacy group, so no single "
               "attack risk" + (", nor a group's: vanishing forms no bound for any run"
                                if halt_from_votes(summary) else "")
               if summary.get("groups") or summary.get("individualized")
               else "this summary records no attack risk" if independent is None
               else "this summary's risk_data_independent is not pate-analyze's")
        groups = [row for row in summary.get("groups") or [] if isinstance(row, dict)
                  and isinstance(row.get("risk"), dict)]
        if groups:  # each group's own bounds, from its data-independent pair
            why = "; ".join(f"group {row['group']}: {risk_text(row['risk'], at_most=LE)}"
                            f"{vacuous_text(row['risk'])}" for row in groups)
            return {"missing": "No single attack risk: an individualized run has one "
                               "guarantee per privacy group. Each group's, from the "
                               "(\u03b5, \u03b4) pair of its " + ("bound for any run" if
                               groups[0].get(ANY_RUN_KEY) is not None else "data-independent "
                               "figure at the halt") + f": {why} (docs/explanation/risk.md)."}
        return {"missing": f"No attack risk: {why} (docs/explanation/risk.md)."}
    source = str(independent.get("source"))
    view = {"missing": None, "rows": risk_rows(independent), "figure": figure,
            "source": RISK_SOURCES.get(source, source),
            "mu": None if independent.get("mu") is None else ceil_text(independent["mu"]),
            "dependent": None, "search": search, "vacuous": bool(vacuous_text(independent))}
    risk = summary.get("risk")
    if adds_to(risk, independent) and risk_problem(risk) is None:
        source = str(risk.get("source"))
        view["dependent"] = {"label": UNSANITISED + ("; one run, without the search" if search
                                                     else ""), "rows": risk_rows(risk),
                             "source": RISK_SOURCES.get(source, source)}
    return view


def checklist(summary: dict, *, head: dict, unit: dict, dataset_size) -> list[dict]:
    """Items of the reporting guidance (Ponomareva et al. 2023), each ok or flagged."""
    tuning = summary.get("tuning")
    items = [
        ("Privacy unit stated", True, "one record of the population the voters are drawn "
         "from (sampled voters)" if summary.get("sampling") else "one training example, "
         "through disjoint teacher partitions" + (" (per privacy group)" if summary.get(
             "groups") else "")),
        ("Neighbouring relation stated", True, "add, remove or replace one example"),
        ("DP definition and conversion", True,
         f"(\u03b5, \u03b4)-DP from RDP, {summary.get('conversion', 'classic')} conversion"),
        ("\u03b4 justified (\u03b4 < 1/N)", unit["delta_ok"],
         "checked against --dataset-size" if dataset_size else
         "data set size not given: give --dataset-size N"),
        _published_item(summary, head),
        *_unsanitised_item(head),
        ("Mechanism and every parameter", True, "listed under Mechanism"),
        ("Accounting method", True, f"{summary.get('accounting')} accounting"),
        ("Hyperparameter tuning accounted", head["tuning_included"],
         "tuning cost included in the published \u03b5 (docs/explanation/tuning.md)"
         if head["tuning_included"] else
         "the tuning cost is data-dependent and left out of the published \u03b5: analyse "
         "with --accounting data-independent --tuning" if tuning else
         "no tuning cost recorded: if the parameters were chosen on the private votes, "
         "account for it (pate-sweep --tuning)"),
        ("Reproducible (version, seed, input hash)", bool(summary["input"].get("sha256")),
         "tool version, seed and the votes' sha256 under Reproduction"
         if summary["input"].get("sha256") else "the input has no sha256 (read from an array)"),
    ]
    return [{"item": item, "ok": bool(ok), "note": note} for item, ok, note in items]


def _published_item(summary: dict, head: dict) -> tuple[str, bool, str]:
    """The checklist's ``(item, ok, note)`` on the headline's published figure: the
    data-independent bound, the sanitised release, or (vanishing) no bound formed."""
    item = "Published \u03b5 is not data-dependent, or is sanitised"
    if head["sanitised"]:
        return item, True, "smooth-sensitivity sanitised release"
    if summary.get("groups") and halt_from_votes(summary) and any(
            row.get(ANY_RUN_KEY) is None for row in summary["groups"]):
        return item, False, "no bound for any run is formed: nothing here is publishable"
    return item, True, "data-independent bound" + (
        " (the headline's; the data-dependent figure beside it is not published)"
        if head["data_dependent"] else "")


def _unsanitised_item(head: dict) -> list[tuple[str, bool, str]]:
    """A checklist caution where the report prints unsanitised data-dependent figures (each
    labelled: none to publish); none for a data-independent run."""
    if not head["data_dependent"]:
        return []
    return [("Unsanitised figures stripped before publishing", False,
             "this report prints data-dependent, unsanitised figures (each labelled): publish "
             "the headline's figure, not these")]


def _independent_figures(summary: dict) -> list[dict]:
    """The data-independent figures: the PLD figure first where smaller; under expected
    accounting the bound for any run, then the figure at the expected count (an average);
    individualized: the largest group's at the halt and the uniform run's (each group's own
    are in its table; older summaries, without the baseline's, hold it at the top)."""
    worst = summary.get("epsilon_data_independent_worst")
    if summary.get("groups"):
        base, groups = summary.get("baseline") or {}, summary["groups"]
        row, bounded = largest_group(groups), largest_group(groups, ANY_RUN_KEY)
        older = "epsilon_data_independent" not in base  # the uniform run's at the top
        largest = (f"groups.{groups.index(row)}.epsilon_data_independent"
                   if older and row is not None else "epsilon_data_independent")
        uniform = "epsilon_data_independent" if older else "baseline.epsilon_data_independent"
        bound = base.get("epsilon_data_independent_worst")  # for any run
        average = bound is not None and bound > base["epsilon_data_independent"]
        return [*([] if bounded is None else [_figure(  # a selection step's, for any run
                    f"groups.{groups.index(bounded)}.{ANY_RUN_KEY}", "data-independent \u03b5, "
                    f"group {bounded['group']}'s for any run (the largest; every query "
                    "answered)", bounded[ANY_RUN_KEY])]),
                *([] if row is None else [_figure(
                    largest, f"data-independent \u03b5, group {row['group']}'s at the halt "
                    "(the largest" + (f": {at_halt_reason(summary)}, not a bound"
                                      if halt_from_votes(summary) else "") + ")",
                    row["epsilon_data_independent"])]),
                *([_figure("baseline.epsilon_data_independent_worst", "uniform run's "
                           "data-independent \u03b5 (any run: every query answered; every "
                           "query at sensitivity 1, no halt)", bound)] if average else []),
                _figure(uniform, "uniform run's data-independent \u03b5 " + (
                    "at " + AT_COUNT[summary.get("accounting") == "expected"] if average
                    else "(every query at sensitivity 1, no halt; each group's own below)"),
                        summary["epsilon_data_independent"] if older
                        else base["epsilon_data_independent"])]
    pld, any_run = smaller_pld(summary), " (any run: every query answered)"
    smaller = ([] if pld is None else [_figure(pld_key(summary), "data-independent \u03b5, "
                                               "privacy-loss distribution"
                                               + any_run * bool(worst), pld)])
    rdp = ", R\u00e9nyi DP" if smaller else ""
    if worst is None:
        return smaller + [_figure("epsilon_data_independent", f"data-independent \u03b5{rdp}",
                                  summary.get("epsilon_data_independent"))]
    figures = smaller + [_figure("epsilon_data_independent_worst",
                                 f"data-independent \u03b5{rdp}{any_run}", worst)]
    at_count = (float(summary["answered"]) < summary["queries"]  # data-independent: epsilon's
                and summary.get("accounting") != "data-independent")
    return figures + ([_figure("epsilon_data_independent", f"data-independent \u03b5{rdp} at "
                               + AT_COUNT[summary.get("accounting") == "expected"],
                               summary.get("epsilon_data_independent"))] if at_count else [])


def report_content(summary: dict, *, command: str | None = None,
                   dataset_size: int | None = None, figures=(), risk_figure=None,
                   given: dict | None = None) -> dict:
    """Everything the templates show, from a JSON ``summary`` (nothing is recomputed).

    ``command``: the command that produced it (else rebuilt from the summary); ``figures``:
    dicts of ``id``, ``title``, ``caption`` and ``svg`` (HTML) or ``file`` (Markdown);
    ``risk_figure``: the risk section's, likewise; ``given``: the run's options (files its
    summary does not record, for ``report_command``)."""
    analyze, notes = command_line(summary, given)
    head = headline(summary)
    unit = privacy_unit(summary, dataset_size=dataset_size)
    source = summary["input"]
    mechanism = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    smooth = summary.get("smooth_sensitivity")
    pld = summary.get("epsilon_method", summary.get("data_independent_method")) == "pld"
    key_figures = [
        *([_figure("tuning.epsilon_tuned", "data-independent \u03b5 with the search "
                   "(published)", summary["tuning"]["epsilon_tuned"])]
          if head["led_by_search"] else []),
        _figure("epsilon", epsilon_label(summary, head) + (
            ", one run without the search" if head["led_by_search"] else ""),
            summary["epsilon"]),
        *([_figure("epsilon_rdp", "R\u00e9nyi DP \u03b5 (the PLD \u03b5 above is smaller)",
                   summary.get("epsilon_rdp"))] if pld else []),
        _figure("order", "best R\u00e9nyi order" + (" (of the R\u00e9nyi DP \u03b5)" if pld
                                                    else ""),
                summary.get("order"), rounding="nearest"),
        *_independent_figures(summary),
        *([_figure("tuning.epsilon_tuned_data_independent",
                   "data-independent \u03b5 with the search (published)",
                   summary["tuning"]["epsilon_tuned_data_independent"])]
          if (summary.get("tuning") or {}).get("epsilon_tuned_data_independent") is not None
          else []),
        _figure("delta", "\u03b4", summary["delta"], 10, rounding="nearest"),
        _figure("queries", "queries analysed", summary["queries"], rounding="nearest"),
        *_answered_figures(summary),
        _figure("labels_output", "labels output" + (
            f" (by a replay with seed {summary.get('seed')}, not charged)"
            if summary.get("accounting") == "expected" else ""),
            summary.get("labels_output"), rounding="nearest"),
    ]
    if summary.get("label_accuracy") is not None:
        key_figures.append(_figure("label_accuracy", "label accuracy",
                                   summary["label_accuracy"], rounding="nearest"))
    if smooth:
        key_figures += [
            _figure("smooth_sensitivity.epsilon_after", "\u03b5 with the release's cost "
                    "(unsanitised: not for publication)", smooth.get("epsilon_after")),
            _figure("smooth_sensitivity.noise_std", "release noise std (data-dependent: not "
                    "for publication)", smooth.get("noise_std"), rounding="nearest"),
            _figure("smooth_sensitivity.sanitized_epsilon", "sanitised \u03b5 (published: "
                    "a private estimate, not an upper bound)"
                    if head["sanitised"] else f"sanitised \u03b5 ({AVERAGE_RELEASE})",
                    smooth.get("sanitized_epsilon")),
        ]
    accounting = [
        ("accounting", f"{summary.get('accounting')} (docs/explanation/accounting.md#costs)"),
        ("decisions", decisions_text(summary)),
        *([("seed", f"{summary.get('seed')} (of the simulated run)")]
          if decisions_kind(summary) == "simulated" else []),
        ("conversion", str(summary.get("conversion"))),
        ("accountant of the data-dependent \u03b5" if head["data_dependent"] else
         "accountant of \u03b5", f"{pld_source(summary)}, no order"
         if summary.get("epsilon_method") == "pld" else
         METHODS.get(str(summary.get("epsilon_method")), str(summary.get("epsilon_method")))),
        *([("RDP at the best order", ", ".join(f"{key} {epsilon_text(value)}" for key, value
                                               in summary["rdp_at_order"].items()))]
          if summary.get("rdp_at_order") else []),  # none for an individualized run
    ]
    if summary.get("outcomes"):
        accounting.append(("outcomes", ", ".join(f"{count} {name}" for name, count in
                                                 summary["outcomes"].items())))
    if smooth:
        accounting.append(("smooth sensitivity", (
            f"order {number(smooth['order'])}, \u03b2 {number(smooth['beta'])}, "
            f"\u03c3_ss {number(smooth['sigma_ss'])}, smooth sensitivity "
            f"{number(smooth['smooth_sensitivity'])} (these chosen on the private votes: "
            f"{UNSANITISED}); conditions C5 "
            f"{'hold' if smooth['conditions']['c5'] else 'FAIL'}, C6 "
            f"{'hold' if smooth['conditions']['c6'] else 'FAIL'} "
            "(docs/explanation/smooth-sensitivity.md#smooth)")))
    if summary.get("add_rdp"):
        added = summary["add_rdp"]
        accounting.append(("added RDP curve", f"{added.get('path')} (sha256 "
                                              f"{added.get('sha256')}), composed before "
                                              "the first query"))
    for entry in summary.get("rounds") or []:
        order = "" if entry.get("order") is None else f", order {number(entry['order'])}"
        accounting.append((f"round {entry['round']}",
                           f"{entry['mechanism']}: {entry['queries']} queries from row "
                           f"{entry['first_row']}, \u03b5 {epsilon_text(entry['epsilon'])} alone "
                           f"(R\u00e9nyi DP{order}{round_note(summary, entry)})"))
    return {
        "title": f"Privacy statement: {mechanism} on "
                 + (os.path.basename(str(source["path"])) if source.get("path")
                    else "votes given as an array"),
        "sections": SECTIONS,
        "headline": head,
        "key_figures": key_figures,
        "unit": unit,
        "mechanism": {"name": mechanism, "key": summary["mechanism"],
                      "parameters": parameter_rows(summary) + round_rows(summary),
                      "individualized": summary.get("individualized"),
                      "teachers": number(source.get("teachers")),
                      "classes": source.get("classes"),
                      "labels": (summary.get("multilabel") or {}).get("labels")},
        "accounting": [{"name": name, "value": value} for name, value in accounting],
        "budget": budget_view(summary, head),
        "group_budget_note": group_budget_note(summary, head),
        "group_headers": group_headers(summary),
        "outputs": outputs_view(summary.get("outputs"), head["data_dependent"]),
        "groups": group_rows(summary),
        "group_stop": summary.get("stopped_at"),
        "baseline": summary.get("baseline") and {
            **summary["baseline"], "budget": _limit(summary["baseline"].get("budget"))},
        "tuning": tuning_view(summary),
        "risk": risk_view(summary, risk_figure),
        "figures": list(figures),
        "warnings": list(summary.get("warnings") or []),
        "reproduction": {"command": command or analyze, "analyze": analyze, "notes": notes,
                         "version": summary.get("version"), "tool": summary.get("tool"),
                         "path": source.get("path"), "sha256": source.get("sha256"),
                         "queries": source.get("queries")},
        "checklist": checklist(summary, head=head, unit=unit, dataset_size=dataset_size),
        "paper": PAPER,
    }
