"""The JSON summary dict rendered as ``table``, ``json``, ``csv`` or ``markdown`` text.

Size: one concept, the summary's lines, each worded for every kind of run.
"""

from __future__ import annotations

import json

from ..rounding import ceil_significant, ceil_text, floor_text, limit_text, order_text
from .report_statement import (
    ANY_RUN_KEY,
    AVERAGE_RELEASE,
    UNSANITISED,
    at_halt_reason,
    average_release,
    count_figure,
    data_dependence,
    halt_from_votes,
    halted_before,
    largest_group,
    round_note,
    selects,
    smaller_pld,
    tuning_law,
)
from .writing import utf8_text

FORMATS = ("table", "json", "csv", "markdown")
PLD = "privacy-loss distribution accountant"


def render(summary: dict, fmt: str) -> str:
    """Render the summary as ``table``, ``json``, ``csv`` or ``markdown`` text."""
    if fmt == "json":
        return json.dumps(summary, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        import pandas as pd

        frame = pd.DataFrame([_flat(summary)])
        return frame.to_csv(index=False, lineterminator="\n")
    lines = summary_lines(summary)
    if fmt == "markdown":
        out = ["| quantity | value |", "|---|---|"]
        out += [f"| {key} | {cell} |" for key, value in lines
                for cell in [value.replace("|", "\\|")]]  # a path's | kept, escaped
        return utf8_text("\n".join(out) + "\n")
    if fmt == "table":
        width = max(len(key) for key, _ in lines)
        return utf8_text("\n".join(f"{key:<{width}}  {value}" for key, value in lines) + "\n")
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")



def parameters_text(parameters, fmt: str) -> str:
    """``--show-parameters``: a run's ``GroupParameters`` (math:individualized) as ``fmt``."""
    import pandas as pd
    rows = parameters.as_rows()
    if fmt == "json":
        return json.dumps({"individualized": parameters.variant, "groups": rows},
                          indent=2) + "\n"
    frame = pd.DataFrame(rows)
    if fmt == "csv":
        return frame.to_csv(index=False, lineterminator="\n")
    if fmt == "markdown":
        header = "| " + " | ".join(frame.columns) + " |"
        lines = [header, "|" + "---|" * len(frame.columns)]
        lines += ["| " + " | ".join(f"{v:g}" if isinstance(v, float) else str(v)
                                    for v in row) + " |" for row in frame.to_numpy()]
        return "\n".join(lines) + "\n"
    return f"individualized {parameters.variant}\n" + frame.to_string(index=False) + "\n"


def decisions_source(s: dict) -> str | None:
    """``the decisions of FILE`` (or ``given decisions``, an object) for a run of
    ``--decisions``, whose seed then draws no decision; None for a seeded or expected run."""
    given = s.get("decisions")
    if not given:
        return None
    return f"the decisions of {given['path']}" if given.get("path") else "given decisions"


def _accounting_text(s: dict) -> str:
    """``replay, classic conversion, seed 0``; with ``--decisions``, their source in place of
    the seed, which draws only a smooth-sensitivity release's noise then (named beside it)."""
    text = f"{s['accounting']}, {s['conversion']} conversion"
    source = decisions_source(s)
    if source is None:
        return f"{text}, seed {s['seed']}"
    release = f", seed {s['seed']} (the release's noise)" if s.get("smooth_sensitivity") else ""
    return f"{text}, {source}{release}"


def _sampling_line(sampling: dict | None) -> list[tuple[str, str]]:
    """The sampled voters (math:sampling), when declared: the scheme and what one unit changes."""
    if not sampling:
        return []
    scheme = (f"poisson, rate {_short(sampling['rate'])}" if sampling["scheme"] == "poisson"
              else f"without replacement, {sampling['size']} of {sampling['population']}")
    norm = sampling.get("sensitivity_norm", "L2")
    if sampling["scheme"] == "poisson":
        change = f"a unit {sampling['vote_change']}s one vote"
    else:
        change = "a replaced unit moves one vote"
    steps = {"shared": "; one subset feeds both steps",
             "independent": "; each step draws its own subset"}.get(sampling.get("steps"), "")
    return [("sampling", f"{scheme}; {change} (argmax {norm} sensitivity "
                         f"{_short(sampling['sensitivity'])}){steps}")]


# SVT-PATE's --svt-cutoff auto: the cut-off, chosen on the votes, is not covered.
CHOSEN_CUTOFF = "the cut-off was chosen on these votes, a choice this epsilon does not cover"
CHOSEN_LINES = {"data-independent": CHOSEN_CUTOFF,  # they say it too
                "attack risk": CHOSEN_CUTOFF.replace("this epsilon", "this bound")}


def summary_lines(s: dict) -> list[tuple[str, str]]:
    """The table's lines; a data-dependent figure says it is unsanitised."""
    source = s["input"]
    dependent = data_dependence(s)[0]
    digest = (source["sha256"] or "")[:12]
    params = ", ".join(f"{key}={_short(value)}" for key, value in s["params"].items()
                       if value is not None  # the default screening goes without saying
                       and not (key == "screening" and value == "exact"))
    answered = s["answered"]
    answered_text = (f"{answered:.1f} expected" if isinstance(answered, float)
                     else f"{answered}")
    chosen = "; " + CHOSEN_CUTOFF if (s.get("svt") or {}).get("cutoff_from_search") else ""
    multi = s.get("multilabel")
    answered_text += (f" of {s['queries'] * multi['labels']} labels ({_queries(s['queries'])} "
                      f"x {multi['labels']})" if multi else f" of {_queries(s['queries'])}")
    lines = [
        ("input", f"{source['path']} (sha256 {digest}...)" if digest else str(source["path"])),
        ("votes", f"{_queries(source['queries'])} x "  # a multi-label query: L yes/no votes
                  + (f"{multi['labels']} labels" if multi else f"{source['classes']} classes")
                  + f", {_short(source['teachers'])} teachers"),
        ("mechanism", f"{s['mechanism']} ({params})"),
        ("accounting", _accounting_text(s)),
        *_sampling_line(s.get("sampling")),
        ("answered", answered_text),
        ("epsilon", f"{_up(s['epsilon'])} at delta {s['delta']:g} ({_rdp(s['order'])}"
                    f"{'; ' + UNSANITISED if dependent else ''}{chosen})"),
        _independent_line(s),
    ]
    if s.get("groups"):  # the run's bound is its largest group's; then the uniform run's
        base = s["baseline"]
        figure = f"{_up(base['epsilon_data_independent'])} ({_rdp(base['order_data_independent'])}"
        bound = base.get("epsilon_data_independent_worst")
        if bound is not None and bound > base["epsilon_data_independent"]:
            figure = (f"{_up(bound)} (RDP, every query answered: the bound for any uniform run; "
                      f"{figure}) at the " + ("expected count, an average"
                                              if s["accounting"] == "expected" else
                                              "replay's count, not a bound"))
        uniform = ("uniform run", f"data-independent {figure}; every query at sensitivity 1, "
                                  "no halt: a comparison, not this run's bound)")
        worst = largest_group(s["groups"])
        assert worst is not None  # a run's own summary: every group row holds its figure
        at_halt = f"{_up(worst['epsilon_data_independent'])} (group {worst['group']}'s at the halt"
        largest = largest_group(s["groups"], ANY_RUN_KEY)  # a selection step: the bound
        if selects(s) and s["accounting"] == "data-independent":  # a count's figure
            at = next(i for i, (name, _) in enumerate(lines) if name == "epsilon")
            lines[at] = ("epsilon", f"{lines[at][1][:-1]}; group {worst['group']}'s at the "
                                    "halt, the replay's answers: not a bound)")
        why = f"{at_halt_reason(s)}, not a bound)"  # (vanishing: no bound for any run)
        tail = f", the largest: {why}" if halt_from_votes(s) else ", the largest)"
        lines[-1:] = [("data-independent", at_halt + tail if largest is None else
                       f"{_up(largest[ANY_RUN_KEY])} (RDP, group {largest['group']}'s, every "
                       f"query answered: the largest bound for any run); {at_halt}: {why}"),
                      uniform]
    if s.get("data_independent_method") == "pld":
        # the PLD headline has no order: give the RDP figure the per-query table belongs to
        pld = PLD
        lines[-2:] = [
            ("epsilon", f"{_up(s['epsilon'])} at delta {s['delta']:g} ({pld})"),
            ("epsilon RDP", f"{_up(s['epsilon_rdp'])} ({_order(s['order'])}; the per-query "
                            "table's figures)"),
            ("data-independent", f"{_up(s['epsilon_data_independent'])} ({pld})")]
    worst = s.get("epsilon_data_independent_worst")
    counted = (s["accounting"] == "data-independent" and worst is not None  # the headline
               and worst > s["epsilon"] and not s.get("groups"))  # composes the run's count
    if counted:
        lines[-1] = _independent_line(s)
        at = next(i for i, (name, _) in enumerate(lines) if name == "epsilon")
        lines[at] = ("epsilon", f"{lines[at][1][:-1]}; the run's {s['answered']} answers: "
                                "not a bound, see data-independent)")
    if s.get("epsilon_improved") is not None and s.get("conversion") != "improved":
        # math:conversion: the tighter figure beside the classic (headline under improved)
        after = 1 + next(i for i, (name, _) in enumerate(lines) if name == "epsilon")
        lines.insert(after, ("epsilon improved", f"{_up(s['epsilon_improved'])} "
                                             f"({_improved_label(s)}"
                                             f"{DEPENDENT if dependent else ''})"))
    if counted:  # the headline's other conversions compose the same answers
        lines = [(name, f"{text[:-1]}; the run's answers: not a bound)"
                  if name in ("epsilon improved", "epsilon RDP") else text)
                 for name, text in lines]
    if multi:
        tau = f" {_short(multi['tau'])}" if multi["tau"] is not None else ""
        lines.insert(3, ("multilabel", f"{multi['variant']}{tau}, {multi['labels']} labels, "
                                       f"sensitivity^2 {_short(multi['sensitivity_squared'])} "
                                       "per query"))
    if s["label_accuracy"] is not None:
        replayed = (f" (the replay with seed {s['seed']}; expected accounting averages the "
                    "cost over replays)" if s.get("accounting") == "expected" else "")
        lines.append(("label accuracy", f"{s['label_accuracy']:.4f} "
                                        f"over {s['labels_output']} labels output{replayed}"))
    if s.get("outcomes"):
        o = s["outcomes"]
        lines.append(("outcomes", f"{o['teacher']} teacher labels, {o['student']} student "
                                  f"labels reinforced, {o['abstain']} abstentions"))
        by = s.get("accuracy_by_outcome") or {}
        if any(value is not None for value in by.values()):
            shown = ", ".join(f"{name} {value:.4f}" for name, value in by.items()
                              if value is not None)
            lines.append(("accuracy by kind", shown))
    if s.get("svt"):
        v = s["svt"]
        chosen = " (auto: chosen on these votes)" if v.get("cutoff_from_search") else ""
        lines.append(("svt", f"scale {v['scale']:.6g}, cut-off {v['cutoff']}{chosen}, "
                             f"threshold {ceil_significant(v['threshold'], 6)}; "
                             f"{v['unstable']} unstable queries met; "
                             f"delta1 {v['delta1']:.3g} + delta2 {v['delta2']:.3g}"))
    for entry in s.get("rounds") or []:
        lines.append((f"round {entry['round']}",
                      f"{entry['mechanism']}: {_queries(entry['queries'])} from row "
                      f"{entry['first_row']}, {entry['answered']} answered, epsilon "
                      f"{_up(entry['epsilon'])} alone (RDP, order {_short(entry['order'])}"
                      f"{round_note(s, entry)})"))
    if s.get("groups"):
        for row in s["groups"]:
            exhausted = ("within budget" if row["exhausted_at"] is None
                         else f"exhausted at query {row['exhausted_at']}")
            knob = next(f"{key} {_short(row[key])}" for key in
                        ("upsampling", "weight", "participation") if key in row)
            spent_order = ("" if row["order"] is None else  # nothing spent: no figure
                           f" ({_rdp(row['order'])}{DEPENDENT if dependent else ''})")
            independent = ""
            if row.get("epsilon_data_independent") is not None:
                halt, every = (_up(row["epsilon_data_independent"]),
                               _up(row["epsilon_data_independent_if_continued"]))
                independent = f"; data-independent {halt} at the halt, {every} over all queries"
                if halt_from_votes(s):  # vanishing: no bound for any run is formed
                    independent += f" ({at_halt_reason(s)}: not bounds)"
                if row.get(ANY_RUN_KEY) is not None:  # those count the replay's answers
                    independent = (f"; data-independent {_up(row[ANY_RUN_KEY])} for any run "
                                   f"(RDP, every query answered), {halt} at the halt" + (
                                       f" and {every} over all queries with the replay's "
                                       "answers" if selects(s) else
                                       " (a halt the votes decide: not a bound)"))
            lines.append((f"group {row['group']}",
                          f"budget {limit_text(row['budget'])}, {knob}: spent "
                          f"{_up(row['epsilon'])}{spent_order}, {exhausted}{independent}"))
        # 0-based queries: ``stopped_at`` is the first not released (the one exhausting a group)
        stop = ("no group exhausted" if s["stopped_at"] is None
                else f"stops before query {s['stopped_at']}")
        base = s["baseline"]
        lines.append(("labels released", f"{s['labels_released']} ({stop}); a uniform run at "
                                         f"epsilon {limit_text(base['budget'])} releases "
                                         f"{base['labels_released']}"))
        lines.append(_group_risk_line(s))
    if s.get("smooth_sensitivity"):
        ss = s["smooth_sensitivity"]
        sanitized = ("" if ss["sanitized_epsilon"] is None
                     else f"; sanitised release {_up(ss['sanitized_epsilon'])} (" + (
                         AVERAGE_RELEASE if average_release(s) else
                         "a private estimate of the cost, not an upper bound") + ")")
        # the release converts by the classic rule whatever the run's --conversion
        classic = "" if s.get("conversion") == "classic" else ", classic conversion"
        lines.append(("smooth sensitivity",
                      f"epsilon {_up(ss['epsilon_before'])} -> {_up(ss['epsilon_after'])} +/- "
                      f"{ss['noise_std']:.4f} (RDP, order {_short(ss['order'])}{classic}, beta "
                      f"{ss['beta']:.4g}, sigma_ss {ss['sigma_ss']:.4g}; these: {UNSANITISED})"
                      f"{sanitized}"))
    if s.get("add_rdp"):
        lines.append(("added rdp", f"{s['add_rdp']['path']}"
                                   + (" (interpolated)" if s["add_rdp"]["note"] else "")))
    if s.get("tuning"):
        t = s["tuning"]
        law = tuning_law(t, _short)
        tuned = (f"{_up(t['epsilon_tuned'])} (random search, K ~ {law}; "
                 f"{_rdp(t['order'])}{DEPENDENT if dependent else ''})")
        if t.get("epsilon_tuned_data_independent") is not None:  # the search's any-run bound
            bound = _up(t["epsilon_tuned_data_independent"])
            tuned = (f"{tuned}; data-independent {bound} (RDP)" if dependent else
                     f"{bound} (data-independent, RDP, every query answered: the bound for any "
                     f"run); {tuned[:-1]}; the run's answers: not a bound)")
        lines.append(("with tuning", tuned))
    lines += _risk_line(s.get("risk"), s.get("risk_data_independent"),
                        dependent=data_dependence(s)[0], any_run=counted)
    tuned = (s.get("tuning") or {}).get("risk")
    if isinstance(tuned, dict) and lines[-1][0] == "attack risk":  # the release's, searched
        lines.append(("risk with tuning", f"{risk_text(tuned)} (the search's data-independent "
                                          f"curve, {risk_source_text(tuned)}"
                                          f"{vacuous_text(tuned)}; the line above is one "
                                          "run's)"))
    if s["budget"] is not None:
        b = s["budget"]
        stop = ("never bound" if b["halted_at"] is None
                else halted_before(s, b["halted_at"])[0])
        if b["halted_at"] and s.get("data_independent_method") == "pld" \
                and s.get("accounting") == "data-independent":  # math:costs: RDP sums
            stop += f" (decided by the RDP figure, {ceil_text(s['epsilon_rdp'])})"
        left = (f"{floor_text(b['remaining'])} left" if b["remaining"] >= 0
                else f"exceeded by {ceil_text(-b['remaining'], 4)} before the first query")
        if counted:  # the budget held the run's count's figure, not the bound for any run
            left += " on the run's answers, not a bound (see data-independent)"
        elif dependent:  # the budget held the data-dependent figure, not the published one
            left += " of the data-dependent, unsanitised figure (see data-independent)"
        lines.append(("budget", f"{limit_text(b['limit'])}: {stop}, {left}"))
    if s.get("decisions"):
        d = s["decisions"]
        lines.append(("decisions", f"{d['rows']} from {d['path']}"))
    if (s.get("svt") or {}).get("cutoff_from_search"):  # no figure covers the choice
        lines = [(name, f"{text[:-1]}; {CHOSEN_LINES[name]})" if name in CHOSEN_LINES
                  else text) for name, text in lines]
    return lines


def tprs_text(risk: dict) -> str:
    """A JSON risk's TPR bounds, each rounded up: ``0.3115 / 0.6073 / 0.9061`` (math:risk)."""
    return " / ".join(_up(tpr) for tpr in risk["tpr_at_fpr"].values())


def risk_text(risk: dict, *, at_most: str = "<=") -> str:
    """``TPR <= a / b / c at FPR 0.001 / 0.01 / 0.1, advantage <= d``, rounded up (``at_most``:
    how "at most" is written)."""
    return (f"TPR {at_most} {tprs_text(risk)} at FPR {' / '.join(risk['tpr_at_fpr'])}, "
            f"advantage {at_most} {_up(risk['advantage'])}")


def vacuous_text(risk: dict) -> str:
    """``; vacuous: every bound rounds to 1`` where every reported bound of a JSON risk (TPRs,
    advantage) prints as 1.0000 rounded up (math:risk), else empty."""
    printed = {_up(value) for value in (*risk["tpr_at_fpr"].values(), risk["advantage"])}
    return "; vacuous: every bound rounds to 1" if printed == {_up(1.0)} else ""


def risk_source_text(risk: dict) -> str:
    """A JSON risk's route, and ``mu`` rounded up where it is set: ``PLD, mu 2.5986``."""
    mu = risk.get("mu")
    source = str(risk.get("source"))
    return ("pure DP" if source == "pure" else source.upper()) + (
        "" if mu is None else f", mu {_up(mu)}")


def adds_to(risk, independent: dict) -> bool:
    """Whether ``risk`` is a data-dependent run's and bounds the TPR tighter than
    ``independent`` at some reported rate: only then is it shown (unsanitised), everywhere."""
    return (isinstance(risk, dict) and bool(risk.get("data_dependent"))
            and risk.get("tpr_at_fpr") != independent.get("tpr_at_fpr"))


def _risk_line(risk: dict | None, independent: dict | None, *,
               dependent: bool, any_run: bool = False) -> list[tuple[str, str]]:
    """The attack risk (math:risk): the publishable bounds, rounded up, with their source
    (named data-independent where ``dependent``, the bound for any run's where ``any_run``);
    then smaller data-dependent bounds, labelled unsanitised."""
    if independent is None:
        return []
    text = (f"{risk_text(independent)} ({'data-independent, ' if dependent else ''}"
            f"{risk_source_text(independent)}{', of the bound for any run' if any_run else ''}"
            f"{vacuous_text(independent)})")
    if adds_to(risk, independent):
        assert risk is not None
        text += (f"; data-dependent: TPR <= {tprs_text(risk)} ({risk['source'].upper()}, "
                 "unsanitised: not for publication)")
    return [("attack risk", text)]


def _group_risk_line(s: dict) -> tuple[str, str]:
    """An individualized run's attack risk (math:risk): each group's bounds, from the
    (epsilon, delta) pair its JSON ``risk`` was formed from."""
    groups = [row for row in s["groups"] if isinstance(row.get("risk"), dict)]
    if not groups:
        return ("attack risk", "none: one guarantee per privacy group, and vanishing forms "
                               "no group's bound for any run")
    pair = ("bound for any run" if groups[0].get(ANY_RUN_KEY) is not None
            else "data-independent figure at the halt")
    rates = " / ".join(groups[0]["risk"]["tpr_at_fpr"])
    return ("attack risk", f"per group, TPR at FPR {rates} and advantage, from the (epsilon, "
                           f"delta) pair of its {pair}: " + "; ".join(
                               f"{row['group']} <= {tprs_text(row['risk'])}, "
                               f"{_up(row['risk']['advantage'])}"
                               + (" (vacuous)" if vacuous_text(row["risk"]) else "")
                               for row in groups))


def _independent_line(s: dict) -> tuple[str, str]:
    """The data-independent figure; with ``epsilon_data_independent_worst`` the bound for every
    query answered first (the figure at the run's count is not a bound: an average under
    expected accounting, else a count the votes decide)."""
    figure, order = _up(s["epsilon_data_independent"]), s["order_data_independent"]
    worst = s.get("epsilon_data_independent_worst")
    pld = smaller_pld(s)
    dependent = data_dependence(s)[0]  # ("below" it: only a data-dependent figure's)
    if worst is None or not worst > s["epsilon_data_independent"]:  # LNMax: every query's
        if pld is not None:
            below = ", below the data-dependent figure" if dependent and pld < s["epsilon"] else ""
            return ("data-independent", f"{_up(pld)} ({PLD}{below}); RDP {figure} "
                                        f"({_order(order)})")
        return ("data-independent", f"{figure} ({_rdp(order)})")
    below = (", below the data-dependent figure"
             if dependent and min(worst, pld or worst) < s["epsilon"] else "")
    bound = f"{_up(worst)} (RDP, every query answered: the bound for any run{below}"
    if pld is not None:
        bound = (f"{_up(pld)} ({PLD}, every query answered: the bound for any run{below}; "
                 f"RDP {_up(worst)}")
    if s["accounting"] == "expected":
        return ("data-independent", f"{bound}); {figure} ({_rdp(order)}) at the expected "
                                    "count, an average")
    at, is_pld = count_figure(s)
    rdp = s.get("epsilon_rdp") if s["accounting"] == "data-independent" else None
    how = (f"{PLD}; RDP {figure if rdp is None else _up(rdp)}, {_order(order)}" if is_pld
           else _rdp(order))
    return ("data-independent", f"{bound}); {_up(at)} ({how}) at the run's "
                                f"{s['answered']} answers, not a bound: the votes decide "
                                "that count")


def _flat(summary: dict) -> dict:
    """One-level dict for the CSV row: nested keys joined with '.', lists as JSON."""
    flat = {}
    for key, value in summary.items():
        if key == "tradeoff":  # a risk's curve: the JSON's, not a column per point
            continue
        if isinstance(value, dict):
            for inner, item in _flat(value).items():
                flat[f"{key}.{inner}"] = item
        elif isinstance(value, list):
            flat[key] = json.dumps(value)
        else:
            flat[key] = ("" if value is None else utf8_text(value) if isinstance(value, str)
                         else value)
    return flat


# what a data-dependent figure says of itself (math:costs: a function of the votes)
DEPENDENT = "; data-dependent, unsanitised"


def _up(value) -> str:
    """An epsilon as a person reads it: 4 decimals, rounded up (cli:json)."""
    return ceil_text(value, 4)


def _improved_label(s: dict) -> str:
    """What ``epsilon improved`` is: the improved RDP conversion (math:conversion), or in a
    PLD run the smaller of that and the PLD figure, saying which."""
    if s.get("data_independent_method") != "pld":
        return "improved conversion"
    if s["epsilon_improved"] < s["epsilon"]:
        return "improved RDP conversion, below the PLD figure"
    return "PLD figure, below the improved RDP conversion"


def _queries(count) -> str:
    """``1 query``, ``9000 queries``."""
    return f"{count} {'query' if count == 1 else 'queries'}"


def _order(value) -> str:
    """``order A``, or for no order (SVT-PATE's pure-DP bound ``c eps0``) what gave it."""
    return "pure-DP bound c*eps0" if value is None else f"order {order_text(value)}"


def _rdp(value) -> str:
    """:func:`_order` naming its accountant: ``RDP, order A`` (a figure of an RDP curve)."""
    return _order(value) if value is None else f"RDP, {_order(value)}"


def _short(value) -> str:
    """A parameter as a person reads it: ``1e+300``, not 301 digits of a whole float."""
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)
                                    and abs(value) >= 10**15):
        return f"{float(value):g}"
    return str(value)
