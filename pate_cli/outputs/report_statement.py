"""The sentences of a privacy statement (``report_content``): the headline guarantee, whether
it is data-dependent or sanitised (math:smooth), the decisions, the privacy unit and relation;
and how figures print (a guarantee rounded up). Every number comes from the JSON summary.

Size: one concept, the statement's sentences, each worded for every accounting and mechanism.
"""

from __future__ import annotations

import math

from ..rounding import ceil_significant, ceil_text, floor_significant, floor_text

DATA_INDEPENDENT_MECHANISMS = ("svt",)


def number(value, digits: int = 4, *, rounding: str = "nearest", strip: bool = True) -> str:
    """A figure as the report prints it: ``1.5468``, ``1e-05``, ``348.1``, ``inf`` (``strip``:
    trailing zeros dropped; an epsilon keeps them, ``3.1110``, as pate-analyze). ``rounding``:
    ``nearest``, ``up`` (every epsilon: a printed guarantee is never below the computed one,
    cli:pate-analyze) or ``down`` (what is left of a budget)."""
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
        return (ceil_significant(value, 3) if rounding == "up" else
                floor_significant(value, 3) if rounding == "down" else f"{value:.3g}")
    text = (ceil_text(value, digits) if rounding == "up" else
            floor_text(value, digits) if rounding == "down" else f"{value:.{digits}f}")
    return text.rstrip("0").rstrip(".") if digits and strip else text


def epsilon_text(value, digits: int = 4) -> str:
    """An epsilon as printed: :func:`number`, rounded up, trailing zeros kept (``3.1110``)."""
    return number(value, digits, rounding="up", strip=False)


# How every output labels a data-dependent figure that has not been sanitised.
UNSANITISED = "data-dependent, unsanitised: not for publication"
# A group row's bound for any run (an aggregator with a selection step, math:costs)
ANY_RUN_KEY = "epsilon_data_independent_worst"
# How every output labels a smooth-sensitivity release under expected accounting (math:smooth).
AVERAGE_RELEASE = "an average run's estimate, not a guarantee"


def average_release(summary: dict) -> bool:
    """Whether the sanitised release is of an expected-accounting figure (an average run's:
    not the published epsilon, :func:`data_dependence`)."""
    return (summary.get("accounting") == "expected"
            and (summary.get("smooth_sensitivity") or {}).get("sanitized_epsilon") is not None)


def data_dependence(summary: dict) -> tuple[bool, bool]:
    """``(data_dependent, sanitised)`` of the published epsilon (math:costs, math:smooth).
    Under expected accounting a smooth-sensitivity release sanitises an average run's figure,
    not a guarantee: there the data-independent bound is published."""
    multilabel = summary.get("multilabel")
    dependent = (summary.get("accounting") != "data-independent"
                 and summary.get("mechanism") not in DATA_INDEPENDENT_MECHANISMS
                 # multi-label tau: every query's cost is alpha Delta_s^2 / sigma^2 in every
                 # accounting (no data-dependent bound, docs/tutorials/multilabel.md)
                 and not (isinstance(multilabel, dict) and multilabel.get("variant") == "tau"))
    smooth = summary.get("smooth_sensitivity") or {}
    sanitised = (dependent and smooth.get("sanitized_epsilon") is not None
                 and not average_release(summary))
    return dependent, sanitised


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
    queries = _queries(summary["queries"])
    kind = decisions_kind(summary)
    groups = bool(summary.get("groups"))
    released = summary.get("labels_released", summary.get("labels_output"))
    answered = summary.get("labels_output") if not groups else released
    multilabel = summary.get("multilabel")
    if isinstance(multilabel, dict) and kind != "file":  # answered counts labels
        labels = multilabel.get("labels")
        total = summary["queries"] * labels if isinstance(labels, int) else "their"
        queries = f"{queries} of {labels} labels each"
        if kind == "simulated":
            return (f"{queries}; a simulated run with seed {summary.get('seed')}, not a "
                    f"release of yours, answers {answered} of the {total} labels")
    if kind == "file":
        decisions = summary["decisions"]
        path = decisions.get("path") if isinstance(decisions, dict) else None
        made = (f"{released} labels released" if released or not summary.get("answered") else
                f"{number(summary['answered'])} queries answered (the file gives no labels)")
        return (f"{made} from {queries}, as decided in "
                + (str(path) if path else "the decisions file"))
    if kind == "expected":
        return (f"{queries}, expected accounting: an estimate for an average run, "
                "not a guarantee for a particular release")
    return (f"{queries}; a simulated run with seed {summary.get('seed')}, not a "
            f"release of yours, labels {answered} of them")


def tuning_law(tuning: dict, show=number) -> str:
    """A JSON ``tuning``'s law of K as ``--tuning`` takes it (``geometric:20``,
    ``negbin:20,0.5``: only negbin has a shape), each number as ``show`` writes it."""
    law = f"{tuning.get('distribution')}:{show(tuning.get('mean'))}"
    if tuning.get("distribution") == "negbin":
        law += f",{show(tuning.get('shape'))}"
    return law


def _tuning_law(summary: dict) -> str | None:
    """The search's law of K (:func:`tuning_law`), or None without a search."""
    tuning = summary.get("tuning")
    if not isinstance(tuning, dict) or tuning.get("epsilon_tuned") is None:
        return None
    return tuning_law(tuning)


def _tuning_headline(summary: dict, dependent: bool) -> tuple[str, float | None]:
    """The sentence on the search's cost (``--tuning``), and the tuned figure where it holds
    (from a data-independent curve)."""
    law = _tuning_law(summary)
    if law is None:
        return "", None
    tuning = summary["tuning"]
    tuned = epsilon_text(tuning["epsilon_tuned"])
    search = (f" Including the hyperparameter search (a random search, K ~ {law}; "
              "docs/explanation/tuning.md)")
    independent = tuning.get("epsilon_tuned_data_independent")
    if not dependent and independent is None:
        return (f"{search}: \u03b5 = {tuned} at the same \u03b4, a data-independent bound.",
                float(tuning["epsilon_tuned"]))
    if independent is not None:  # the published figure above already includes the search
        return (f"{search}, " + ("the data-dependent \u03b5 is " if dependent else
                                 "the run's answers alone give \u03b5 = ") + tuned + (
            ", unsanitised and not for publication." if dependent else
            ", not a bound: the votes decide that count."), float(independent))
    return (f"{search}: \u03b5 = {tuned}, which is data-dependent (computed from the run's "
            "data-dependent RDP curve) and unsanitised; the published figure above leaves "
            "the search out (analyse with --accounting data-independent --tuning for a "
            "bound that includes it)."), None


def _with_search(summary: dict, published: float) -> tuple[float, str]:
    """A data-dependent run's published bound and its wording: with ``--tuning``, the
    search's data-independent bound (the run alone given beside it)."""
    law = _tuning_law(summary)
    independent = (summary["tuning"].get("epsilon_tuned_data_independent")
                   if law is not None else None)
    if independent is None:
        return published, ""
    return float(independent), (f" including the hyperparameter search (a random search, "
                                f"K ~ {law}; the run alone: {epsilon_text(published)})")


def smaller_pld(summary: dict) -> float | None:
    """The PLD figure of the publishable data-independent bound where below its RDP figure
    (``epsilon_data_independent_worst``'s, every query answered, where present), else None:
    the figure the summary leads with and the report publishes."""
    pld = summary.get(pld_key(summary))
    bound = summary.get("epsilon_data_independent_worst")
    if bound is None:
        bound = summary.get("epsilon_data_independent")
    return None if pld is None or bound is None or not pld < bound else float(pld)


def pld_key(summary: dict) -> str:
    """The key of the publishable bound's PLD figure: ``epsilon_data_independent_worst_pld``
    beside the bound for any run (an expected run's summary written before that key: its
    ``epsilon_data_independent_pld`` is the bound's), else ``epsilon_data_independent_pld``."""
    worst = "epsilon_data_independent_worst_pld"
    if summary.get("epsilon_data_independent_worst") is not None and (
            worst in summary or summary.get("accounting") != "expected"):
        return worst
    return "epsilon_data_independent_pld"


def count_figure(summary: dict) -> tuple[float, bool]:
    """The data-independent epsilon at the run's own answer count, and whether it is the
    PLD figure: not a bound beside ``epsilon_data_independent_worst`` (the count is an
    average under expected accounting, else the votes decide it, math:costs)."""
    if summary.get("accounting") == "data-independent":
        return summary["epsilon"], summary.get("epsilon_method") == "pld"
    figure, pld = summary["epsilon_data_independent"], summary.get("epsilon_data_independent_pld")
    if summary.get("accounting") != "expected" and pld is not None and pld < figure:
        return pld, True
    return figure, False


# What the data-independent figure at a run's own answer count is (math:costs).
AT_COUNT = {True: "the expected answered count (an average, not a bound)",
            False: "the run's answered count (not a bound: the votes decide the count)"}


def lacks_any_run_bound(summary: dict) -> bool:
    """Whether ``summary``, of an aggregator with a selection step, is from a version without
    the bound for any run (each group row's, or the run's PLD figure beside it; expected
    accounting always had its bound)."""
    if not selects(summary):
        return False
    if summary.get("groups"):
        return any(ANY_RUN_KEY not in row for row in summary["groups"])
    return (summary.get("accounting") != "expected"
            and "epsilon_data_independent_worst_pld" not in summary)


def selects(summary: dict) -> bool:
    """Whether the run's aggregator has a selection step (its ``threshold`` T), whose
    answered count the votes decide (math:costs)."""
    return "threshold" in (summary.get("params") or {})


def round_note(summary: dict, entry: dict) -> str:
    """What a round's epsilon alone (``--rounds``) is where it is not a bound: unsanitised
    (a data-dependent run), or the replay's answers (a round with a selection step under
    data-independent accounting); empty for a bound."""
    if data_dependence(summary)[0]:
        return "; " + UNSANITISED
    if selects(entry):
        return "; the replay's answers, a count the votes decide: not a bound"
    return ""


def halted_before(summary: dict, halted: int) -> tuple[str, str]:
    """``(text, unit)`` of a budget run's halt before query ``halted``: ``halted before output
    N (0-based; its first query is Q)`` with ``--halt-at output``, else ``halted before query
    Q``; ``unit`` is ``output`` or ``query``."""
    completed = (summary.get("outputs") or {}).get("completed")
    if (summary.get("budget") or {}).get("halt_at") == "output" and isinstance(completed, int):
        return (f"halted before output {completed} (0-based; its first query is {halted})",
                "output")
    return f"halted before query {halted}", "query"


def halt_from_votes(summary: dict) -> bool:
    """Whether an individualized run's per-group figures at the halt are not bounds (the votes
    decide a selection step's count, and a stop a data-dependent figure finds):
    ``run.reports_any_run_bound``'s rule on the JSON (no numpy: ``--help`` imports this)."""
    return selects(summary) or summary.get("accounting") != "data-independent"


def at_halt_reason(summary: dict) -> str:
    """Why a group's figure at the halt is not a bound (:func:`halt_from_votes`)."""
    return "the replay's answers" if selects(summary) else "a halt the votes decide"


def epsilon_label(summary: dict, head: dict) -> str:
    """How the report's key figures name the run's ``epsilon`` (``head``: :func:`headline`)."""
    if head["data_dependent"]:
        return "data-dependent \u03b5 (unsanitised: not for publication)"
    if summary.get("groups") and halt_from_votes(summary):  # (the groups' bounds apart)
        return "\u03b5, the largest group's at the halt (not a bound: the replay's answers)"
    if (summary.get("epsilon_data_independent_worst") is None
            or float(summary["answered"]) >= summary["queries"]):
        return "\u03b5"
    return "\u03b5 at " + AT_COUNT[False]  # a data-independent run's own answers


def at_count_text(summary: dict, *, alone: bool = False) -> str:
    """Where the run answered fewer than its queries, what its count gives and why that is not
    a bound, else empty; ``alone``: beside a search's figure, named one run's without it."""
    if float(summary["answered"]) >= summary["queries"]:
        return ""
    value, pld = count_figure(summary)
    figure = f"{epsilon_text(value)} ({count_accountant(summary, pld)})"
    it = "one run alone, without the search, would be" if alone else "it would be"
    if summary.get("accounting") == "expected":
        return (f"; at the expected {number(summary['answered'])} answers {it} "
                f"{figure}, an average, not a bound")
    return (f"; at the run's {number(summary['answered'])} answers {it} {figure}, "
            "not a bound: the votes decide that count")


def count_accountant(summary: dict, pld: bool) -> str:
    """The accountant of :func:`count_figure`'s figure (``pld``: the PLD one), named."""
    if pld:
        return accountant_name("pld")
    pure = (summary.get("accounting") == "data-independent"
            and summary.get("epsilon_method") == "pure")
    return accountant_name("pure" if pure else "rdp")


def accountant_name(method) -> str:
    """The accountant of a JSON ``*_method`` (``pld``, ``pure``, ``rdp``), named."""
    return {"pld": "the privacy-loss distribution accountant",
            "pure": "the pure-DP bound"}.get(method, "the R\u00e9nyi DP accountant")


PLD_SOURCES = {  # what a pure-DP aggregator's PLD figure composes (else Gaussian steps)
    "lnmax": "the smaller of the answers' exact pure-DP composition and the noisy counts' "
             "privacy-loss distribution (two Laplace mechanisms an answer, pessimistic)",
    "exponential": "the pure-DP answers' exact composition (randomized response's)"}


def pld_source(summary: dict) -> str:
    """What the run's PLD figure composes: Gaussian steps, or pure-DP answers."""
    return PLD_SOURCES.get(summary.get("mechanism"),
                           "the Gaussian steps' privacy-loss distribution")


def _smaller_pld(summary: dict, rdp: float, order=None) -> tuple[float, str]:
    """A data-dependent run's data-independent bound ``rdp`` (at ``order`` where known) or
    :func:`smaller_pld`, with the words naming its accountant."""
    pld = smaller_pld(summary)
    if pld is None:
        at = "" if order is None or not math.isfinite(order) else f" at order {number(order)}"
        return rdp, f" by the Rényi DP accountant{at}"
    return pld, (f" by {pld_source(summary)} (their Rényi DP curve converted gives ε = "
                 f"{epsilon_text(rdp)})")


def accountant_text(summary: dict) -> str:
    """The accountant of the run's ``epsilon`` (JSON ``epsilon_method``), in headline words."""
    method = summary.get("epsilon_method")
    if method == "pld":
        return f"by {pld_source(summary)}"
    if method == "pure":
        return "by the pure-DP bound (the cut-off times the per-answer \u03b5)"
    return f"by the Rényi DP accountant at order {number(summary['order'])}"


def privacy_level(summary: dict) -> str:
    """At what level the guarantee holds: one record of the population sampled voters are
    drawn from (math:sampling), else the teacher partition.

    Args:
        summary: the JSON summary.

    Returns:
        ``at the teacher-partition level`` or the sampled voters' record level.
    """
    if summary.get("sampling"):
        return ("at the level of one record of the population the voters are drawn from "
                "(sampled voters; see Privacy unit)")
    return "at the teacher-partition level"


def headline(summary: dict) -> dict:
    """The headline sentence, the published epsilon and the warning (or None).

    The published figure always holds (data-independent; per group when individualized), or is
    the sanitised smooth-sensitivity release, a private estimate beside the bound; a
    data-dependent figure is beside it, labelled. With ``--tuning`` the search's figure is in
    the headline (published if data-independent, leading where the run's own figure is one:
    ``led_by_search``); ``tuning_included`` says which."""
    dependent, sanitised = data_dependence(summary)
    delta = number(summary["delta"], 10)
    groups = summary.get("groups") or []
    bounds = [row.get(ANY_RUN_KEY) for row in groups]  # with a selection step: for any run
    scope = _scope(summary)
    lead = ("The released labels satisfy" if decisions_kind(summary) == "file" else
            "Labelling these votes with this mechanism and these parameters satisfies")
    added = summary.get("add_rdp")
    if isinstance(added, dict):  # the external curve is part of every figure below
        lead = (lead.replace(" satisf", ", composed with the RDP curve added before the "
                             f"first query ({added.get('path') or 'given to the API'}), satisf"))
    lead += f" (\u03b5, \u03b4)-DP {privacy_level(summary)}"
    warning = None
    led_by_search = False
    kind = "data-dependent" if dependent else "data-independent"
    if groups and (not dependent or all(row.get("epsilon_data_independent") is not None
                                        for row in groups)):
        key = "epsilon_data_independent" if dependent else "epsilon"
        per_group = ", ".join(f"\u03b5 = {epsilon_text(row[key])} for group {row['group']}"
                              for row in groups)
        text = (f"{lead}, per privacy group, with {per_group}, at \u03b4 = {delta} "
                f"({scope}), data-independent bounds at the halt (Rényi DP).")
        if bounds and None not in bounds:  # each group's bound for any run
            queries = summary["queries"]
            if summary.get("accounting") == "expected":  # a bound, not an average
                scope = f"{_queries(queries)}, expected accounting"
            text = (f"{lead}, per privacy group, with " + ", ".join(
                        f"\u03b5 = {epsilon_text(bound)} for group {row['group']}"
                        for row, bound in zip(groups, bounds, strict=True))
                    + f", at \u03b4 = {delta} ({scope}), data-independent bounds (Rényi DP) "
                    "that hold "
                    "whatever a run answers and wherever it halts ("
                    + _every_query(queries) + " answered at each group's sensitivity); the "
                    f"per-group figures at the halt, {per_group}, " + (
                        "compose the replay's answers (a count the votes decide)"
                        if selects(summary) else "stop where the data-dependent cost, a "
                        "function of the votes, decides") + " and are not bounds.")
        elif halt_from_votes(summary):  # vanishing: the figures at a halt the votes decide
            text = (f"No per-group bound of (\u03b5, \u03b4)-DP {privacy_level(summary)} "
                    "for any run is formed for vanishing (a teacher's sensitivity varies from "
                    "query to query): the per-group data-independent figures at the halt, "
                    f"{per_group} at \u03b4 = {delta} ({scope}), " + (
                        "compose the replay's answers (a count the votes decide) up to "
                        if selects(summary) else "stop at ")
                    + "a halt the votes decide, and are not bounds "
                    "(docs/explanation/index.md).")
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
        bound, how = _smaller_pld(summary, summary.get(ANY_RUN_KEY)
                                  or summary["epsilon_data_independent"])
        # unsanitised figures go in the warning and labelled rows, not the sentence to publish
        text = ("The data-dependent privacy cost of labelling these votes with this "
                f"mechanism and these parameters, {privacy_level(summary)}, has the "
                f"smooth-sensitivity sanitised release \u03b5 = {epsilon_text(published)} at "
                f"\u03b4 = {delta} ({scope}; Rényi DP at order {number(smooth['order'])}, "
                "the release's own cost included): a differentially private estimate of "
                "that cost, which may be published if its noise is secret (drawn with a "
                "--seed chosen at random and kept private), not an upper bound (its "
                "Gaussian noise may take it below the cost). The data-independent bound, "
                "which holds for "
                "any run, is "
                f"\u03b5 = {epsilon_text(bound)}{how}.")
    elif summary.get("epsilon_data_independent_worst") is not None:
        # the bound for any run answers every query (expected accounting; a selection step)
        bound, how = _smaller_pld(summary, summary["epsilon_data_independent_worst"])
        published, search = _with_search(summary, bound)
        alone, search = bool(search), search or how
        expected = summary.get("accounting") == "expected"
        if expected:  # a bound, not an average
            scope = f"{_queries(summary['queries'])}, expected accounting"
        requested = (summary.get("budget") or {}).get("requested") or summary["queries"]
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope})"
                f"{search}, a "
                "data-independent bound that holds whatever a run answers ("
                + _every_query(requested) + (" requested, past the halt," if requested > 1
                                             and summary.get("budget") else "")
                + f" answered{at_count_text(summary, alone=alone)})" + (
                    f"; the data-dependent \u03b5 = {epsilon_text(summary['epsilon'])} is "
                    + ("an expected figure, " if expected else "")
                    + "unsanitised and not for publication." if dependent else "."))
        if average_release(summary):
            text += (" Its smooth-sensitivity sanitised release, \u03b5 = "
                     f"{epsilon_text(summary['smooth_sensitivity']['sanitized_epsilon'])}, is "
                     "an estimate for an average run, not a guarantee for a particular "
                     "release.")
    elif dependent:
        bound, how = _smaller_pld(summary, summary["epsilon_data_independent"],
                                  summary.get("order_data_independent"))
        published, search = _with_search(summary, bound)
        search = search or how
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope})"
                f"{search}, a data-independent bound; the data-dependent \u03b5 = "
                f"{epsilon_text(summary['epsilon'])} is unsanitised and not for publication.")
    else:
        published, alone = summary["epsilon"], ""  # (the search's figure leads, where one)
        law = _tuning_law(summary)
        if law is not None and summary["tuning"].get("epsilon_tuned_data_independent") is None:
            # the search's own data-independent figure leads: the run alone is beside it
            published = float(summary["tuning"]["epsilon_tuned"])
            alone = (" including the hyperparameter search (a random search, K ~ "
                     f"{law}, by the Rényi DP accountant; docs/explanation/tuning.md; the run "
                     f"alone: \u03b5 = {epsilon_text(summary['epsilon'])} "
                     f"{accountant_text(summary)})")
        text = (f"{lead}: \u03b5 = {epsilon_text(published)} at \u03b4 = {delta} ({scope})"
                + (alone or f" {accountant_text(summary)}") + "; this bound does not "
                "depend on the votes.")
        led_by_search = bool(alone)
    tuning_text, tuned = _tuning_headline(summary, dependent)
    if not led_by_search:  # (else the sentence above gave the search's figure)
        text += tuning_text
    if dependent and groups:
        warning = ("The per-group data-dependent \u03b5 are functions of the private "
                   "teacher votes, not sanitised, so publishing them leaks information about "
                   "the data and is not itself covered by the DP guarantee. " + (
                       "Publish the per-group data-independent bounds above."
                       if not halt_from_votes(summary) or None not in bounds else "The "
                       "per-group data-independent figures above stop at a halt the votes "
                       "decide: for a bound, run -m gnmax with --accounting data-independent "
                       "(its stop is the same on any votes), or analyse without "
                       "--individualized (the uniform run's bound for any run)."))
    elif sanitised:
        smooth = summary["smooth_sensitivity"]
        warning = (f"The data-dependent \u03b5 = {epsilon_text(summary['epsilon'])} and "
                   f"\u03b5 = {epsilon_text(smooth['epsilon_after'])} with the release's own "
                   "cost are functions of the private teacher votes and have not been "
                   "sanitised: publishing them leaks information about the data and is not "
                   "itself covered by the DP guarantee. Publish the sanitised \u03b5 = "
                   f"{epsilon_text(smooth['sanitized_epsilon'])} (an estimate of the cost, not "
                   "a bound) or the data-independent bound, not these.")
    elif dependent:
        advice = (" (under expected accounting even the sanitised release is an average "
                  "run's estimate)." if average_release(summary) else ", or sanitise the "
                  "data-dependent figure (pate-analyze --smooth-sensitivity).")
        warning = (f"The data-dependent \u03b5 = {epsilon_text(summary['epsilon'])} is a "
                   "function of the private teacher votes and has not been sanitised: "
                   "publishing it leaks information about the data and is not itself covered "
                   f"by the DP guarantee. Publish the data-independent bound above{advice}")
    if warning and tuning_text:
        warning += " The same holds for the tuned figure."
    budget = summary.get("budget")
    halted = (isinstance(budget, dict) and budget.get("halted_at", budget.get("stopped_at"))
              is not None) or (bool(groups) and summary.get("stopped_at") is not None)
    if warning and halted:  # a run the budget never bound stopped nowhere
        covered = ("the bound for any run covers every requested query, not that choice"
                   if summary.get("epsilon_data_independent_worst") is not None else
                   "no bound for any run is formed, so no figure here covers that choice"
                   if groups and halt_from_votes(summary) else
                   "the data-independent bound covers the queries processed, not that "
                   "choice")
        warning += (" The halt point is chosen from the data-dependent cost, so where the "
                    f"run stopped is itself a function of the votes; {covered}.")
    return {"text": text, "published": published, "data_dependent": dependent,
            "sanitised": sanitised, "warning": warning, "tuned": tuned,
            "led_by_search": led_by_search,
            "tuning_included": tuned is not None}


def _every_query(count: int) -> str:
    """``the query`` or ``every one of the N queries`` (a bound for any run's scope)."""
    return "the query" if count == 1 else f"every one of the {count:,} queries"


def _queries(count: int) -> str:
    """``1 query``, ``300 queries``."""
    return f"{count} quer{'y' if count == 1 else 'ies'}"


def largest_group(groups: list[dict], key: str = "epsilon_data_independent") -> dict | None:
    """The JSON group row with the largest ``key`` (default: the data-independent figure at
    the halt; ``ANY_RUN_KEY``: the bound for any run; math:individualized), the first among
    equals; None where no row holds it (an older summary, or no bound)."""
    return max((row for row in groups if row.get(key) is not None),
               key=lambda row: row[key], default=None)


def _sampled_unit(sampling: dict) -> tuple[str, str]:
    """Privacy unit and neighbouring relation of sampled voters (math:sampling)."""
    moves = sampling.get("moves", sampling["vote_change"] == "move")
    unit = ("one privacy unit (a training record) of the population the voters of each "
            "query are drawn from, afresh for every query; a unit's presence "
            + ("moves one vote" if moves else "adds or removes one vote")
            + f" (argmax sensitivity {number(sampling['sensitivity'])}, the threshold's "
            "count 1). The figure is amplified by subsampling and holds only if the voters "
            "were drawn exactly as declared"
            + {"shared": "; one subset per query feeds both the threshold and the answer, "
                         "so an answered query is charged as one sampled Gaussian on both "
                         "counts.",
               "independent": "; the threshold and the answer each draw their own subset, "
                              "as declared."}.get(sampling.get("steps"), "."))
    if sampling["scheme"] == "poisson":
        relation = (f"Poisson sampling at rate {number(sampling['rate'])}: every unit votes "
                    "independently with that probability; neighbours add or remove one "
                    "unit (Mironov, Talwar and Zhang 2019; Zhu and Wang 2019).")
    else:
        relation = (f"sampling {sampling['size']} of {sampling['population']} units without "
                    "replacement; neighbours replace one unit (Wang, Balle and "
                    "Kasiviswanathan 2019, Theorems 9 and 27).")
    return unit, relation


def _multilabel_unit(multilabel: dict, teachers) -> tuple[str, str]:
    """Privacy unit and neighbouring relation of multi-label votes: one teacher changes its
    votes on every label of a query at once (``sensitivity_squared``: squared L2)."""
    squared = multilabel.get("sensitivity_squared")
    sensitivity = ("not recorded" if not isinstance(squared, int | float) else
                   f"\u221a{number(squared)} \u2248 {number(math.sqrt(squared))}"
                   if squared >= 0 else number(squared))
    labels = multilabel.get("labels")
    unit = ("one training example of the private data set. The data set is split into "
            f"{number(teachers)} disjoint partitions, one per teacher, so one example "
            f"influences a single teacher, whose votes on all {number(labels)} labels of "
            "a query can change at once: the query's released vector moves by at most "
            f"L2 sensitivity {sensitivity} ({multilabel.get('variant')} multi-label votes, "
            "docs/tutorials/multilabel.md).")
    relation = ("two data sets are neighbours when they differ in one training example "
                "(added, removed or replaced); either way one teacher's partition changes, "
                "so one teacher's votes differ, on every label of every query at once.")
    return unit, relation


def reciprocal_text(delta: float, dataset_size: int) -> str:
    """1/N with the fewest significant digits (at least 3) that show how it compares with
    ``delta`` printed beside it (``9.9999e-06`` beside ``1e-05``): never equal in print where
    they differ.

    Args:
        delta: the run's delta.
        dataset_size: N, the number of training examples.

    Returns:
        1/N as text.
    """
    value = 1.0 / dataset_size
    for digits in range(3, 18):
        text = f"{value:.{digits}g}"
        if value == delta or (float(text) != delta and (delta < float(text)) == (delta < value)):
            return text
    return repr(value)


def privacy_unit(summary: dict, *, dataset_size: int | None) -> dict:
    """The privacy unit, neighbouring relation, DP definition, conversion, delta and why."""
    teachers = summary["input"].get("teachers")
    groups = summary.get("groups") or []
    unit = ("one training example of the private data set. The data set is split into "
            f"{number(teachers)} disjoint partitions, one per teacher, so one example "
            "influences a single teacher and moves at most one vote of each query's "
            "histogram (L2 sensitivity \u221a2 for the argmax, 1 for the plurality count).")
    if groups:
        unit = unit.replace(", so one example influences a single teacher and moves",
                            "; without individualization one example would influence a "
                            "single teacher and move")
        unit += (" Individualized PATE: examples belong to privacy groups, each with its own "
                 "budget; an example of a group moves its query's votes by that group's "
                 "sensitivity (upsampled into several teachers, or a weighted or rescaled "
                 "vote), and the group's guarantee holds for each of its examples through "
                 "that sensitivity (Boenisch et al., docs/explanation/individualized.md).")
    relation = ("two data sets are neighbours when they differ in one training example "
                "(added, removed or replaced); either way one teacher's partition changes, "
                "so the vote histograms differ by moving one vote "
                "(docs/explanation/data-independent.md#independent).")
    sampling = summary.get("sampling")
    if sampling:
        unit, relation = _sampled_unit(sampling)
    if isinstance(summary.get("multilabel"), dict):
        unit, relation = _multilabel_unit(summary["multilabel"], teachers)
    delta = summary["delta"]
    if dataset_size:
        ok = delta < 1.0 / dataset_size
        why = (f"\u03b4 = {number(delta, 10)} is {'below' if ok else 'NOT below'} 1/N = "
               f"{reciprocal_text(delta, dataset_size)} for the N = {dataset_size} training "
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
                  + f"; the best order was {number(summary.get('order'))} "
                  "(docs/explanation/accounting.md#conversion).")
    how = ("rounded up" if summary.get("mechanism") in PLD_SOURCES else
           "their exact composition, rounded up" if summary.get("sampling") is None
           else "the smaller of their exact unsampled composition, rounded up, and "
           "dp_accounting's PLD of the sampled steps (pessimistic discretisation)")
    rdp = summary.get("epsilon_data_independent_worst") or summary.get(
        "epsilon_data_independent")
    any_run = ("" if summary.get("epsilon_data_independent_worst") is None
               or float(summary["answered"]) >= summary["queries"]
               else " for any run (every query answered)")
    if summary.get("data_independent_method") == "pld" and not any_run:
        definition += (f" That conversion gives ε = {epsilon_text(summary.get('epsilon_rdp'))}; "
                       f"the reported ε = {epsilon_text(summary['epsilon'])} is smaller and "
                       f"also valid: {pld_source(summary)} ({how}), which has no order.")
    elif smaller_pld(summary) is not None:
        definition += (f" The data-independent bound{any_run} ε = "
                       f"{epsilon_text(smaller_pld(summary))} is "
                       f"{pld_source(summary)} ({how}), which has no order; their Rényi DP "
                       f"curve converted gives ε = {epsilon_text(rdp)}.")
    elif any_run:
        definition += (f" The data-independent bound{any_run} is their Rényi DP curve's, "
                       f"ε = {epsilon_text(rdp)}.")
    return {"unit": unit, "relation": relation, "definition": definition, "delta": why,
            "delta_ok": bool(dataset_size) and delta < 1.0 / dataset_size}
