"""What a privacy statement says, as plain data for the report templates (``pate-report``).

One function, :func:`report_content`, reads a JSON summary (CLI.md; the dict
``AnalysisResult.to_dict()`` returns) and states: the headline guarantee, whether the
published epsilon is data-dependent and whether it is sanitised (MATH.md s.10), the
privacy unit and neighbouring relation, the DP definition and conversion (s.6), delta and
why, the mechanism and every parameter, accounting (s.7), decisions, budget and halt,
per-group costs (s.9), tuning cost (s.12), the reproduction recipe, and a checklist after
the reporting guidance of Ponomareva et al. 2023, "How to DP-fy ML" (section on reporting).

Nothing here computes privacy: every number comes from the summary. Keys that other
parts of the toolkit add over time are read tolerantly (``budget`` with ``stopped_at`` or
``halted_at``; ``decisions``; ``tuning``).
"""

from __future__ import annotations

import math
import os

from ..rounding import ceil_significant, ceil_text, floor_text
from .captions import MECHANISM_NAMES

PAPER = "Ponomareva et al. 2023, \u201cHow to DP-fy ML\u201d"
DATA_INDEPENDENT_MECHANISMS = ("svt",)
PARAMETER_NAMES = {
    "threshold": "selection threshold T", "sigma_threshold": "selection noise \u03c3\u2081",
    "sigma": "answer noise \u03c3\u2082 (Gaussian std)", "laplace_scale": "Laplace scale \u03bb",
    "confidence": "student confidence \u03b3", "svt_scale": "SVT Laplace scale",
    "svt_cutoff": "SVT cut-off (unstable queries)", "svt_threshold": "SVT threshold w",
    "eta": "exponential mechanism \u03b7 (\u03b5\u2080 = 2\u03b7 per answer)",
    "screening": "threshold step's data-independent curve (MATH.md s.17)",
}
METHODS = {"rdp": "R\u00e9nyi DP, converted at the best order (MATH.md s.6)",
           "pld": "privacy-loss distributions (dp_accounting's PLD accountant), no order",
           "pure": "a pure-DP bound (no finite order)"}
SECTIONS = ("headline", "privacy-unit", "definition", "mechanism", "accounting", "budget",
            "groups", "tuning", "figures", "reproduction", "checklist")


def number(value, digits: int = 4, *, rounding: str = "nearest") -> str:
    """A figure as the report prints it: ``1.5468``, ``1e-05``, ``348.1``, ``inf``.

    ``rounding``: ``nearest``, ``up`` (every epsilon: a printed guarantee is never below
    the computed one, CLI.md) or ``down`` (what is left of a budget)."""
    if value is None:
        return "n/a"
    if isinstance(value, str):  # a named choice (``screening``)
        return value
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
        return ceil_significant(value, 3) if rounding == "up" else f"{value:.3g}"
    text = (ceil_text(value, digits) if rounding == "up" else
            floor_text(value, digits) if rounding == "down" else f"{value:.{digits}f}")
    return text.rstrip("0").rstrip(".") if digits else text


def epsilon_text(value, digits: int = 4) -> str:
    """An epsilon as the report prints it: :func:`number`, rounded up."""
    return number(value, digits, rounding="up")


def _figure(key: str, label: str, value, digits: int = 4, *, rounding: str = "up") -> dict:
    return {"key": key, "label": label, "text": number(value, digits, rounding=rounding),
            "value": "" if value is None else repr(value)}


def data_dependence(summary: dict) -> tuple[bool, bool]:
    """``(data_dependent, sanitised)`` of the published epsilon (MATH.md s.7, s.10)."""
    dependent = (summary.get("accounting") != "data-independent"
                 and summary.get("mechanism") not in DATA_INDEPENDENT_MECHANISMS)
    smooth = summary.get("smooth_sensitivity") or {}
    sanitised = dependent and smooth.get("sanitized_epsilon") is not None
    return dependent, sanitised


def outputs_view(outputs: dict | None) -> dict | None:
    """Outputs (generated sequences): their count, tokens and own epsilon (min / median /
    max; epsilons rounded up) and how many a halt left whole."""
    if not outputs:
        return None
    tokens, spent = outputs["tokens_per_output"], outputs.get("epsilon_per_output")
    return {"count": outputs["count"], "completed": outputs["completed"],
            "tokens": " / ".join(number(tokens[key]) for key in ("min", "median", "max")),
            "epsilon": ("n/a" if not spent else " / ".join(
                epsilon_text(spent[key]) for key in ("min", "median", "max")))}


def budget_view(budget: dict | None) -> dict | None:
    """The budget and its halt, from ``{limit, stopped_at}`` or ``{limit, halted_at, ...}``."""
    if not budget:
        return None
    halts = "halted_at" in budget  # MATH.md s.7: the run halts; else answers refused
    halted = budget.get("halted_at", budget.get("stopped_at"))
    if halted is None:
        text = "never: the run ended within the budget"
    elif halts:
        text = (f"halted before query {halted}: that query and every later one was "
                "neither selected, charged nor labelled")
    else:
        text = f"answers refused from query {halted} on"
    view = {"limit": number(budget.get("limit")), "halted_at": halted, "halt": text}
    for key in ("remaining", "answered"):
        if budget.get(key) is not None:
            view[key] = number(budget[key], rounding="down" if key == "remaining"
                               else "nearest")
    return view


def decisions_kind(summary: dict) -> str:
    """``file`` (the user's decisions, ``--decisions``), ``expected`` (nothing drawn) or
    ``simulated`` (a replay of the aggregator with the run's seed)."""
    if summary.get("decisions"):
        return "file"
    if summary.get("accounting") == "expected":
        return "expected"
    return "simulated"


def decisions_text(summary: dict) -> str:
    """Where the answered/outcome decisions came from (replay, expected, imported)."""
    decisions = summary.get("decisions")
    if isinstance(decisions, dict):
        path = decisions.get("path")
        digest = decisions.get("sha256")
        text = "the user's decisions, read from " + (str(path) if path else "a file")
        if digest:
            text += f" (sha256 {digest})"
        return text + "; no noise was drawn to decide them"
    if isinstance(decisions, str):
        return decisions
    if decisions_kind(summary) == "expected":
        return ("expected accounting: no decisions are drawn; each query's answer step is "
                "charged with its probability of being answered (the 2018 paper's "
                "analysis), an estimate of an average run, not a guarantee for a "
                "particular release")
    return (f"a simulated run with seed {summary.get('seed')}: the aggregator's noise drawn "
            "from that seed decides which queries are answered; it is not the release "
            "you made (give your own with pate-analyze --decisions FILE)")


def _scope(summary: dict) -> str:
    """What the guarantee is about: the queries, and whose decisions."""
    queries = summary["queries"]
    kind = decisions_kind(summary)
    groups = bool(summary.get("groups"))
    released = summary.get("labels_released", summary.get("labels_output"))
    answered = summary.get("labels_output") if not groups else released
    if kind == "file":
        decisions = summary["decisions"]
        path = decisions.get("path") if isinstance(decisions, dict) else None
        return (f"{released} labels released from {queries} queries, as decided in "
                + (str(path) if path else "the decisions file"))
    if kind == "expected":
        return (f"{queries} queries, expected accounting: an estimate for an average run, "
                "not a guarantee for a particular release")
    return (f"{queries} queries; a simulated run with seed {summary.get('seed')}, not a "
            f"release of yours, labels {answered} of them")


def _tuning_headline(summary: dict, dependent: bool) -> tuple[str, float | None]:
    """The sentence on the search's cost (``--tuning``), and the tuned figure when it
    holds (computed from a data-independent curve)."""
    tuning = summary.get("tuning")
    if not isinstance(tuning, dict) or tuning.get("epsilon_tuned") is None:
        return "", None
    law = f"{tuning.get('distribution')}:{number(tuning.get('mean'))}"
    if tuning.get("shape") is not None:
        law += f",{number(tuning['shape'])}"
    tuned = epsilon_text(tuning["epsilon_tuned"])
    if not dependent:
        return (f" Including the hyperparameter search (a random search, K ~ {law}; MATH.md "
                f"s.12): \u03b5 = {tuned} at the same \u03b4, a data-independent bound.",
                float(tuning["epsilon_tuned"]))
    return (f" Including the hyperparameter search (a random search, K ~ {law}; MATH.md "
            f"s.12): \u03b5 = {tuned}, which is data-dependent (computed from the run's "
            "data-dependent RDP curve) and unsanitised; the published figure above leaves "
            "the search out (analyse with --accounting data-independent --tuning for a "
            "bound that includes it)."), None


def headline(summary: dict) -> dict:
    """The headline sentence, the published epsilon and the warning (or None).

    The published figure always holds: data-independent, sanitised by smooth
    sensitivity, or of a data-independent run (per group at the halt for an
    individualized run); a data-dependent figure is stated beside it, labelled as such.
    With ``--tuning`` the search's figure is part of the headline (published when it is
    data-independent, else labelled data-dependent); ``tuning_included`` says which.
    """
    dependent, sanitised = data_dependence(summary)
    delta = number(summary["delta"], 10)
    groups = summary.get("groups") or []
    scope = _scope(summary)
    lead = ("The released labels satisfy" if decisions_kind(summary) == "file" else
            "Labelling these votes with this mechanism and these parameters satisfies")
    lead += " (\u03b5, \u03b4)-DP at the teacher-partition level"
    warning = None
    kind = "data-dependent" if dependent else "data-independent"
    if groups and (not dependent or all(row.get("epsilon_data_independent") is not None
                                        for row in groups)):
        key = "epsilon_data_independent" if dependent else "epsilon"
        per_group = ", ".join(f"\u03b5 = {epsilon_text(row[key])} for group {row['group']}"
                              for row in groups)
        text = (f"{lead}, per privacy group, with {per_group}, at \u03b4 = {delta} "
                f"({scope}), data-independent bounds at the halt.")
        if dependent:
            text += (" The data-dependent figures, unsanitised and not for publication: "
                     + ", ".join(f"\u03b5 = {epsilon_text(row['epsilon'])} for group "
                                 f"{row['group']}" for row in groups) + ".")
        published = None
    elif groups:  # a summary written before the per-group data-independent figures
        per_group = ", ".join(f"\u03b5 = {epsilon_text(row['epsilon'])} for group {row['group']}"
                              for row in groups)
        text = (f"{lead}, per privacy group, with {kind} {per_group}, at \u03b4 = {delta} "
                f"({scope}).")
        published = None
    elif sanitised:
        smooth = summary["smooth_sensitivity"]
        published = smooth["sanitized_epsilon"]
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope}), the "
                "smooth-sensitivity sanitised release of the data-dependent \u03b5 = "
                f"{epsilon_text(smooth['epsilon_after'])} (which includes the release's own cost; "
                f"noise std {number(smooth['noise_std'])}).")
    elif dependent and summary.get("epsilon_data_independent_worst") is not None:
        # expected accounting: the data-independent figure at the expected count is an
        # average too; the bound that holds for any particular run answers every query
        published = summary["epsilon_data_independent_worst"]
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope}), a "
                "data-independent bound that holds whatever a run answers (every one of the "
                f"{summary['queries']:,} queries answered; at the expected "
                f"{number(summary['answered'])} answers it would be "
                f"{epsilon_text(summary['epsilon_data_independent'])}, an average, not a "
                "bound); the data-dependent \u03b5 = "
                f"{epsilon_text(summary['epsilon'])} is an expected figure, unsanitised and "
                "not for publication.")
    elif dependent:
        published = summary["epsilon_data_independent"]
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope}), a "
                "data-independent bound; the data-dependent \u03b5 = "
                f"{epsilon_text(summary['epsilon'])} is unsanitised and not for publication.")
    else:
        published = summary["epsilon"]
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope}); this "
                "bound does not depend on the votes.")
    tuning_text, tuned = _tuning_headline(summary, dependent)
    text += tuning_text
    if dependent and groups:
        warning = ("The per-group data-dependent \u03b5 are functions of the private "
                   "teacher votes, not sanitised, so publishing them leaks information about "
                   "the data and is not itself covered by the DP guarantee. Publish the "
                   "per-group data-independent bounds above.")
    elif dependent and not sanitised:
        warning = (f"The data-dependent \u03b5 = {epsilon_text(summary['epsilon'])} is a "
                   "function of the private teacher votes and has not been sanitised: "
                   "publishing it leaks information about the data and is not itself covered "
                   "by the DP "
                   "guarantee. Publish the data-independent bound above, or sanitise the "
                   "data-dependent figure (pate-analyze --smooth-sensitivity).")
    if warning and tuning_text:
        warning += " The same holds for the tuned figure."
    if warning and (summary.get("budget") or groups):
        warning += (" The halt point is chosen from the data-dependent cost, so "
                    "where the run stopped is itself a function of the votes; the "
                    "data-independent bound covers the queries processed, not that choice.")
    return {"text": text, "published": published, "data_dependent": dependent,
            "sanitised": sanitised, "warning": warning, "tuned": tuned,
            "tuning_included": tuned is not None}


def _sampled_unit(sampling: dict) -> tuple[str, str]:
    """Privacy unit and neighbouring relation of sampled voters (MATH.md s.16)."""
    moves = sampling["vote_change"] == "move"
    unit = ("one privacy unit (a training record) of the population the voters of each "
            "query are drawn from, afresh for every query; a unit's presence "
            + ("moves one vote" if moves else "adds or removes one vote")
            + f" (argmax sensitivity {number(sampling['sensitivity'])}, the threshold's "
            "count 1). The figure is amplified by subsampling and holds only if the voters "
            "were drawn exactly as declared.")
    if sampling["scheme"] == "poisson":
        relation = (f"Poisson sampling at rate {number(sampling['rate'])}: every unit votes "
                    "independently with that probability; neighbours add or remove one "
                    "unit (Mironov, Talwar and Zhang 2019; Zhu and Wang 2019).")
    else:
        relation = (f"sampling {sampling['size']} of {sampling['population']} units without "
                    "replacement; neighbours replace one unit (Wang, Balle and "
                    "Kasiviswanathan 2019, Theorem 9).")
    return unit, relation


def privacy_unit(summary: dict, *, dataset_size: int | None) -> dict:
    """The privacy unit, neighbouring relation, DP definition, conversion, delta and why."""
    teachers = summary["input"].get("teachers")
    groups = summary.get("groups") or []
    unit = ("one training example of the private data set. The data set is split into "
            f"{number(teachers)} disjoint partitions, one per teacher, so one example "
            "influences a single teacher and moves at most one vote of each query's "
            "histogram (L2 sensitivity \u221a2 for the argmax, 1 for the plurality count).")
    if groups:
        unit += (" Individualized PATE: examples belong to privacy groups, each with its own "
                 "budget; a group's guarantee holds for each example of that group, through "
                 "the sensitivity its teachers' votes carry (Boenisch et al., MATH.md s.9).")
    relation = ("two data sets are neighbours when they differ in one training example "
                "(added, removed or replaced); either way one teacher's partition changes, "
                "so the vote histograms differ by moving one vote (MATH.md s.2).")
    sampling = summary.get("sampling")
    if sampling:
        unit, relation = _sampled_unit(sampling)
    delta = summary["delta"]
    if dataset_size:
        ok = delta < 1.0 / dataset_size
        why = (f"\u03b4 = {number(delta, 10)} is {'below' if ok else 'NOT below'} 1/N = "
               f"{number(1.0 / dataset_size, 10)} for the N = {dataset_size} training "
               "examples" + ("" if ok else "; a \u03b4 this large allows releasing an "
                             "example outright and should be lowered") + ".")
    else:
        why = (f"\u03b4 = {number(delta, 10)}; the data set size was not given "
               "(pate-report --dataset-size N), so whether \u03b4 < 1/N is not checked here.")
    orders = summary.get("orders") or {}
    conversion = summary.get("conversion", "classic")
    definition = ("(\u03b5, \u03b4)-differential privacy, derived from R\u00e9nyi DP: the "
                  "per-query RDP curves are summed over queries at each of "
                  f"{orders.get('count', '?')} orders (from {number(orders.get('min'))} to "
                  f"{number(orders.get('max'))}) and converted with the {conversion} "
                  + ("conversion (Mironov 2017, Prop. 3)" if conversion == "classic" else
                     "conversion (Canonne, Kamath and Steinke 2020)")
                  + f"; the best order was {number(summary.get('order'))} (MATH.md s.6).")
    if summary.get("data_independent_method") == "pld":
        definition += (f" That conversion gives ε = {epsilon_text(summary.get('epsilon_rdp'))}; "
                       f"the reported ε = {epsilon_text(summary['epsilon'])} is smaller and "
                       "also valid: the Gaussian steps' privacy-loss distributions composed "
                       "by dp_accounting's PLD accountant (pessimistic discretisation), "
                       "which has no order.")
    return {"unit": unit, "relation": relation, "definition": definition, "delta": why,
            "delta_ok": bool(dataset_size) and delta < 1.0 / dataset_size}


def parameter_rows(summary: dict) -> list[dict]:
    rows = [{"name": PARAMETER_NAMES.get(key, key), "key": key, "value": number(value, 6)}
            for key, value in (summary.get("params") or {}).items() if value is not None]
    svt = summary.get("svt")
    if svt:
        rows += [{"name": f"SVT {key}", "key": f"svt.{key}", "value": number(svt[key], 6)}
                 for key in ("scale", "cutoff", "threshold", "unstable", "delta1", "delta2")
                 if key in svt]
    return rows


def group_rows(summary: dict) -> list[dict]:
    rows = []
    for row in summary.get("groups") or []:
        knob = next((key for key in ("upsampling", "weight", "participation") if key in row),
                    None)
        rows.append({"group": str(row["group"]), "budget": number(row.get("budget")),
                     "knob": f"{knob} {number(row[knob])}" if knob else "",
                     "sensitivity": number(row.get("sensitivity")),
                     "epsilon": epsilon_text(row.get("epsilon")), "order": number(row.get("order")),
                     "independent": epsilon_text(row.get("epsilon_data_independent")),
                     "independent_all": epsilon_text(
                         row.get("epsilon_data_independent_if_continued")),
                     "exhausted_at": ("within budget" if row.get("exhausted_at") is None
                                      else f"query {row['exhausted_at']}")})
    return rows


def tuning_view(summary: dict) -> dict | None:
    tuning = summary.get("tuning")
    if not tuning:
        return None
    if not isinstance(tuning, dict):
        return {"rows": [{"name": "tuning", "value": str(tuning)}]}
    return {"rows": [{"name": str(key),
                      "value": number(value, rounding="up" if str(key).startswith("epsilon")
                                      else "nearest")
                      if isinstance(value, float | int) and not isinstance(value, bool)
                      else str(value)}
                     for key, value in tuning.items()]}


def checklist(summary: dict, *, head: dict, unit: dict, dataset_size) -> list[dict]:
    """Items of the reporting guidance (Ponomareva et al. 2023), each ok or flagged."""
    tuning = summary.get("tuning")
    items = [
        ("Privacy unit stated", True, "one training example, through disjoint teacher "
         "partitions" + (" (per privacy group)" if summary.get("groups") else "")),
        ("Neighbouring relation stated", True, "add, remove or replace one example"),
        ("DP definition and conversion", True,
         f"(\u03b5, \u03b4)-DP from RDP, {summary.get('conversion', 'classic')} conversion"),
        ("\u03b4 justified (\u03b4 < 1/N)", unit["delta_ok"],
         "checked against --dataset-size" if dataset_size else
         "data set size not given: give --dataset-size N"),
        ("Published \u03b5 is not data-dependent, or is sanitised",
         not head["data_dependent"] or head["sanitised"],
         "data-independent bound" if not head["data_dependent"] else
         "smooth-sensitivity sanitised release" if head["sanitised"] else
         "the data-dependent \u03b5 is unsanitised: publish the data-independent bound"),
        ("Mechanism and every parameter", True, "listed under Mechanism"),
        ("Accounting method", True, f"{summary.get('accounting')} accounting"),
        ("Hyperparameter tuning accounted", head["tuning_included"],
         "tuning cost included in the published \u03b5 (MATH.md s.12)"
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


def command_line(summary: dict) -> str:
    """A ``pate-analyze`` command that recomputes the summary's numbers (from its keys)."""
    words = ["pate-analyze", str(summary["input"].get("path") or "VOTES")]
    mechanism = summary.get("mechanism")
    words += ["-m", str(mechanism)]
    for key, value in (summary.get("params") or {}).items():
        if value is not None and key != "target_epsilon":
            words += [f"--{key.replace('_', '-')}", number(value, 12)]
    if summary["queries"] != summary["input"].get("queries"):
        words += ["-n", str(summary["queries"])]
    words += ["--accounting", str(summary.get("accounting")), "--delta",
              repr(summary["delta"]), "--conversion", str(summary.get("conversion")),
              "--seed", str(summary.get("seed"))]
    if summary.get("budget"):
        words += ["--budget", number(summary["budget"].get("limit"), 12)]
        if summary["budget"].get("halt_at") == "output":
            words += ["--halt-at", "output"]
    if summary.get("smooth_sensitivity"):
        words.append("--smooth-sensitivity")
    if summary.get("individualized"):
        words += ["--individualized", summary["individualized"], "--groups", "GROUPS.csv"]
    return " ".join(words)


def report_content(summary: dict, *, command: str | None = None,
                   dataset_size: int | None = None, figures=()) -> dict:
    """Everything the templates show, from a JSON ``summary`` (nothing is recomputed).

    ``command``: the exact command that produced the report (else one is rebuilt from the
    summary); ``figures``: dicts with ``id``, ``title``, ``caption`` and ``svg`` (HTML) or
    ``file`` (Markdown).
    """
    head = headline(summary)
    unit = privacy_unit(summary, dataset_size=dataset_size)
    source = summary["input"]
    mechanism = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    smooth = summary.get("smooth_sensitivity")
    answered = summary.get("answered")
    pld = summary.get("epsilon_method", summary.get("data_independent_method")) == "pld"
    key_figures = [
        _figure("epsilon", "data-dependent \u03b5" if head["data_dependent"] else "\u03b5",
                summary["epsilon"]),
        *([_figure("epsilon_rdp", "R\u00e9nyi DP \u03b5 (the PLD \u03b5 above is smaller)",
                   summary.get("epsilon_rdp"))] if pld else []),
        _figure("order", "best R\u00e9nyi order" + (" (of the R\u00e9nyi DP \u03b5)" if pld
                                                    else ""),
                summary.get("order"), rounding="nearest"),
        _figure("epsilon_data_independent", "data-independent \u03b5",
                summary.get("epsilon_data_independent")),
        _figure("delta", "\u03b4", summary["delta"], 10, rounding="nearest"),
        _figure("queries", "queries analysed", summary["queries"], rounding="nearest"),
        _figure("answered", "queries answered" + (" (expected)" if isinstance(answered, float)
                                                  else ""), answered, rounding="nearest"),
        _figure("labels_output", "labels output", summary.get("labels_output"),
                rounding="nearest"),
    ]
    if summary.get("label_accuracy") is not None:
        key_figures.append(_figure("label_accuracy", "label accuracy",
                                   summary["label_accuracy"], rounding="nearest"))
    if smooth:
        key_figures += [
            _figure("smooth_sensitivity.epsilon_after", "\u03b5 with the release's cost",
                    smooth.get("epsilon_after")),
            _figure("smooth_sensitivity.noise_std", "release noise std",
                    smooth.get("noise_std"), rounding="nearest"),
            _figure("smooth_sensitivity.sanitized_epsilon", "sanitised \u03b5 (published)",
                    smooth.get("sanitized_epsilon")),
        ]
    accounting = [
        ("accounting", f"{summary.get('accounting')} (MATH.md s.7)"),
        ("decisions", decisions_text(summary)),
        *([("seed", f"{summary.get('seed')} (of the simulated run)")]
          if decisions_kind(summary) == "simulated" else []),
        ("conversion", str(summary.get("conversion"))),
        ("accountant of \u03b5", METHODS.get(str(summary.get("epsilon_method")),
                                          str(summary.get("epsilon_method")))),
        ("RDP at the best order", ", ".join(f"{key} {epsilon_text(value)}" for key, value in
                                            (summary.get("rdp_at_order") or {}).items())),
    ]
    if summary.get("outcomes"):
        accounting.append(("outcomes", ", ".join(f"{count} {name}" for name, count in
                                                 summary["outcomes"].items())))
    if smooth:
        accounting.append(("smooth sensitivity", (
            f"order {number(smooth['order'])}, \u03b2 {number(smooth['beta'])}, "
            f"\u03c3_ss {number(smooth['sigma_ss'])}, smooth sensitivity "
            f"{number(smooth['smooth_sensitivity'])}; conditions C5 "
            f"{'hold' if smooth['conditions']['c5'] else 'FAIL'}, C6 "
            f"{'hold' if smooth['conditions']['c6'] else 'FAIL'} (MATH.md s.10)")))
    if summary.get("add_rdp"):
        added = summary["add_rdp"]
        accounting.append(("added RDP curve", f"{added.get('path')} (sha256 "
                                              f"{added.get('sha256')}), composed before "
                                              "the first query"))
    for entry in summary.get("rounds") or []:
        accounting.append((f"round {entry['round']}",
                           f"{entry['mechanism']}: {entry['queries']} queries from row "
                           f"{entry['first_row']}, \u03b5 {epsilon_text(entry['epsilon'])} alone"))
    return {
        "title": f"Privacy statement: {mechanism} on "
                 + (os.path.basename(str(source["path"])) if source.get("path")
                    else "votes given as an array"),
        "sections": SECTIONS,
        "headline": head,
        "key_figures": key_figures,
        "unit": unit,
        "mechanism": {"name": mechanism, "key": summary["mechanism"],
                      "parameters": parameter_rows(summary),
                      "individualized": summary.get("individualized"),
                      "teachers": number(source.get("teachers")),
                      "classes": source.get("classes")},
        "accounting": [{"name": name, "value": value} for name, value in accounting],
        "budget": budget_view(summary.get("budget")),
        "outputs": outputs_view(summary.get("outputs")),
        "groups": group_rows(summary),
        "group_stop": summary.get("stopped_at"),
        "baseline": summary.get("baseline"),
        "tuning": tuning_view(summary),
        "figures": list(figures),
        "warnings": list(summary.get("warnings") or []),
        "reproduction": {"command": command or command_line(summary),
                         "analyze": command_line(summary),
                         "version": summary.get("version"), "tool": summary.get("tool"),
                         "path": source.get("path"), "sha256": source.get("sha256"),
                         "queries": source.get("queries")},
        "checklist": checklist(summary, head=head, unit=unit, dataset_size=dataset_size),
        "paper": PAPER,
    }
