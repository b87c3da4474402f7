"""Every epsilon a person reads is rounded UP at its displayed precision (cli:json).

``pate_cli.rounding`` on its own (decimal rounding of the float's repr, never a bump of a
value exact at the precision), then many analyses of the shipped sample votes: each
epsilon printed in the table and Markdown summaries and in the report is compared with
the JSON figure: printed >= exact, and printed - exact < one unit of the last digit shown.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pate_cli.outputs.report_content import report_content
from pate_cli.outputs.summary import render
from pate_cli.rounding import ceil_significant, ceil_text, floor_text, limit_text
from tests import ROOT

SAMPLES = ROOT / "sample_votes"
MNIST = str(SAMPLES / "mnist_250_votes.npy")
LABELS = str(SAMPLES / "mnist_250_labels.npy")


@pytest.mark.parametrize("value, digits, text", [
    (2.020029, 4, "2.0201"), (2.020029, 2, "2.03"), (4.42553, 4, "4.4256"),
    (2.02, 4, "2.0200"), (2.02, 2, "2.02"), (0.1 + 0.2, 4, "0.3001"), (1.5, 0, "2"),
    (5.0, 0, "5"), (0.0, 4, "0.0000"), (-0.0, 4, "0.0000"), (-1e-9, 4, "0.0000"),
    (1e-30, 4, "1e-30"), (1.379e-05, 4, "1.379e-05"), (1.3791e-05, 4, "1.38e-05"),
    (5e-324, 4, "5e-324"), (0.000999601, 4, "0.0009997"), (0.001, 4, "0.0010"),
    (71.52691865840117, 4, "71.5270"), (float("inf"), 4, "inf"),
])
def test_ceil_text(value, digits, text):
    assert ceil_text(value, digits) == text


def test_floor_and_significant_digits():
    assert floor_text(0.007966999907742967) == "0.0079"
    assert floor_text(0.008) == "0.0080"
    assert ceil_significant(0.000999601, 3) == "0.001"
    assert ceil_significant(1.234e-5, 3) == "1.24e-05"
    assert ceil_significant(1e-5, 3) == "1e-05"
    assert ceil_significant(2.5e300, 3) == "2.5e+300"
    assert ceil_significant(1.7976931348623157e308, 3) == "1.80e+308"


@given(value=st.floats(0, 1e12, allow_nan=False, allow_infinity=False),
       digits=st.integers(0, 8))
def test_ceil_text_is_never_below_and_within_one_unit(value, digits):
    exact = Decimal(repr(value))
    printed = Decimal(ceil_text(value, digits))
    unit = Decimal(1).scaleb(-digits)
    low = Decimal(floor_text(value, digits))
    with localcontext() as exactly:
        exactly.prec = 500  # the differences without rounding
        assert printed >= exact and printed - exact < unit
        assert low <= exact and exact - low < unit


# ---- many analyses: printed figures against the JSON -----------------------------------

RUNS = {
    "confident-replay": [MNIST, "--labels", LABELS],
    "gnmax": [MNIST, "-m", "gnmax", "--sigma", "40", "-n", "2000"],
    "gnmax-improved": [MNIST, "-m", "gnmax", "--sigma", "25", "-n", "700",
                       "--conversion", "improved"],
    "lnmax-expected": [str(SAMPLES / "adult_250_votes.npy"), "-m", "lnmax",
                       "--laplace-scale", "20", "--accounting", "expected", "-n", "500"],
    "lnmax-independent": [MNIST, "-m", "lnmax", "--laplace-scale", "50", "-n", "300",
                          "--accounting", "data-independent"],
    "confident-independent": [MNIST, "-n", "640", "--accounting", "data-independent"],
    "confident-budget": [MNIST, "-n", "1000", "--budget", "2", "--labels", LABELS],
    "budget-independent": [MNIST, "-m", "gnmax", "--sigma", "60", "--budget", "1.5",
                           "--accounting", "data-independent"],
    "smooth": [MNIST, "-n", "640", "--accounting", "expected", "--smooth-sensitivity"],
    "tuning": [MNIST, "-n", "640", "--accounting", "expected", "--tuning", "geometric:20"],
    "svt": [MNIST, "-m", "svt", "-n", "2000"],
    "interactive": [MNIST, "-m", "interactive", "--student",
                    str(SAMPLES / "mnist_250_student.npy"), "-n", "1500"],
    "rounds": [MNIST, "--rounds", str(SAMPLES / "mnist_250_rounds.csv")],
    "individualized": ["--predictions", str(SAMPLES / "mnist_250_predictions.npy"),
                       "--individualized", "weighting",
                       "--groups", str(SAMPLES / "mnist_250_groups.csv"),
                       "--teacher-groups", str(SAMPLES / "mnist_250_teacher_groups.csv")],
    "individualized-risk": ["--predictions", str(SAMPLES / "mnist_250_predictions.npy"),
                            "--individualized", "upsampling", "-m", "gnmax", "--sigma", "40",
                            "--groups", str(SAMPLES / "mnist_250_groups.csv"),
                            "--accounting", "data-independent"],
    "letter": [str(SAMPLES / "letter_100_votes.npy"), "-m", "gnmax", "--sigma", "10",
               "--delta", "1e-6"],
}

NUMBER = r"(\d+\.\d+|\d+)"


def _check(printed: str, exact: float, *, what: str, down: bool = False) -> None:
    """``printed`` (as shown) against ``exact``: the right side of it, within one unit."""
    shown = Decimal(printed)
    truth = Decimal(repr(float(exact)))
    unit = Decimal(1).scaleb(shown.as_tuple().exponent)
    with localcontext() as exactly:
        exactly.prec = 500  # the differences without rounding
        _compare(shown, truth, unit, what=(what, printed, exact), down=down)


def _compare(shown, truth, unit, *, what, down: bool) -> None:
    if down:
        assert shown <= truth and truth - shown < unit, what
    else:
        assert shown >= truth and shown - truth < unit, what


def _summary_figures(summary: dict) -> list[tuple[str, str, float, bool]]:
    """``(line key, pattern of the figure in the line, exact value, rounded down)``."""
    s = summary
    figures = [("epsilon", rf"^{NUMBER} at delta", s["epsilon"], False)]
    if s.get("groups"):  # the largest group's bound for any run (a selection step's) or at
        bounds = [row.get("epsilon_data_independent_worst") for row in s["groups"]]  # the halt,
        at_halt = max(row["epsilon_data_independent"] for row in s["groups"])  # then uniform
        figures += [("data-independent", rf"^{NUMBER} ",
                     at_halt if None in bounds else max(bounds), False),
                    *([] if None in bounds else [
                        ("data-independent", rf"; {NUMBER} \(group", at_halt, False)]),
                    ("uniform run", rf"^data-independent {NUMBER} ",
                     s["baseline"]["epsilon_data_independent_worst"]
                     or s["baseline"]["epsilon_data_independent"], False)]
    elif (s.get("epsilon_data_independent_worst") or 0) > s["epsilon_data_independent"]:
        # a selecting mechanism: the bound for any run first (the privacy-loss
        # distribution's where smaller, the RDP one beside it), then the run's own count's
        worst, pld = (s["epsilon_data_independent_worst"],
                      s["epsilon_data_independent_worst_pld"])
        if s["accounting"] == "expected":
            figures += [("data-independent",
                         rf"; {NUMBER} \(RDP, order [^)]*\) at the expected count",
                         s["epsilon_data_independent"], False)]
        else:  # the run's count: its PLD figure where smaller (the epsilon, data-independent)
            counted = (s["epsilon"] if s["accounting"] == "data-independent" else
                       min(s["epsilon_data_independent"],
                           s.get("epsilon_data_independent_pld") or float("inf")))
            figures += [("data-independent", rf"; {NUMBER} \([^)]*\) at the run's", counted,
                         False)]
        if pld is not None and pld < worst:
            figures += [("data-independent", rf"^{NUMBER} \(privacy-loss", pld, False),
                        ("data-independent", rf"RDP {NUMBER}\)", worst, False)]
        else:
            figures.append(("data-independent", rf"^{NUMBER} \((RDP, )?every query answered",
                            worst, False))
    elif s.get("epsilon_method") != "pld" and (s.get("epsilon_data_independent_pld") or
                                               float("inf")) < s["epsilon_data_independent"]:
        figures += [("data-independent", rf"^{NUMBER} \(privacy-loss",
                     s["epsilon_data_independent_pld"], False),
                    ("data-independent", rf"RDP {NUMBER} ", s["epsilon_data_independent"],
                     False)]
    else:
        figures.append(("data-independent", rf"^{NUMBER} ", s["epsilon_data_independent"],
                        False))
    if s.get("epsilon_improved") is not None and s["conversion"] != "improved":
        figures.append(("epsilon improved", rf"^{NUMBER} ", s["epsilon_improved"], False))
    if s.get("epsilon_method") == "pld":
        figures.append(("epsilon RDP", rf"^{NUMBER} ", s["epsilon_rdp"], False))
    if s.get("tuning"):
        figures.append(("with tuning", rf"^{NUMBER} ", s["tuning"]["epsilon_tuned"], False))
    if s.get("budget"):
        figures.append(("budget", rf", {NUMBER} left(?: |$)", s["budget"]["remaining"], True))
    for row in s.get("groups") or []:
        figures.append((f"group {row['group']}", rf"spent {NUMBER}", row["epsilon"], False))
        figures.append((f"group {row['group']}", rf"(?:,|data-independent) {NUMBER} at the halt",
                        row["epsilon_data_independent"], False))
        figures.append((f"group {row['group']}", rf"at the halt(?:,| and) {NUMBER} over all",
                        row["epsilon_data_independent_if_continued"], False))
        if row.get("epsilon_data_independent_worst") is not None:  # a selection step's
            figures.append((f"group {row['group']}", rf"data-independent {NUMBER} for any run",
                            row["epsilon_data_independent_worst"], False))
        if isinstance(row.get("risk"), dict):  # each group's attack risk, on one line
            name, risk = re.escape(str(row["group"])), row["risk"]
            figures += [("attack risk", rf"[:;] {name} <= {NUMBER} /",
                         next(iter(risk["tpr_at_fpr"].values())), False),
                        ("attack risk", rf"[:;] {name} <= [0-9. /]*, {NUMBER}",
                         risk["advantage"], False)]
    for entry in s.get("rounds") or []:
        figures.append((f"round {entry['round']}", rf"epsilon {NUMBER} alone",
                        entry["epsilon"], False))
    ss = s.get("smooth_sensitivity")
    if ss:
        figures += [("smooth sensitivity", rf"^epsilon {NUMBER} ->", ss["epsilon_before"],
                     False),
                    ("smooth sensitivity", rf"-> {NUMBER} ", ss["epsilon_after"], False)]
        if ss["sanitized_epsilon"] is not None:
            figures.append(("smooth sensitivity", rf"sanitised release {NUMBER}",
                            ss["sanitized_epsilon"], False))
    return figures


def _lines(text: str, fmt: str) -> dict[str, str]:
    if fmt == "table":
        pairs = [re.split(r"\s{2,}", line, maxsplit=1) for line in text.splitlines()]
    else:
        pairs = [[cell.strip() for cell in line.strip("|").split("|")]
                 for line in text.splitlines()[2:]]
    return {key: value for key, value in pairs}


def _check_report(summary: dict) -> int:
    content = report_content(summary)
    checked = 0
    head = content["headline"]
    if head["published"] is not None:
        printed = re.search(r"\u03b5 = ([0-9.]+) at", head["text"]).group(1)
        _check(printed, head["published"], what="report headline")
        checked += 1
    for row in summary.get("groups") or []:
        printed = re.search(rf"\u03b5 = ([0-9.]+) for group {re.escape(str(row['group']))}\b",
                            head["text"]).group(1)
        published = row.get("epsilon_data_independent")
        if published is None or not head["data_dependent"]:
            published = row["epsilon"]
        if row.get("epsilon_data_independent_worst") is not None:  # the bound for any run
            published = row["epsilon_data_independent_worst"]
        _check(printed, published, what=f"report headline, group {row['group']}")
        checked += 1
    for figure in content["key_figures"]:
        if "epsilon" in figure["key"] and figure["value"] not in ("", "None"):
            _check(figure["text"], float(figure["value"]), what=f"report {figure['key']}")
            checked += 1
    by_group = {str(row["group"]): row for row in summary.get("groups") or []}
    for row in content["groups"]:
        _check(row["epsilon"], by_group[row["group"]]["epsilon"], what="report group table")
        _check(row["independent"], by_group[row["group"]]["epsilon_data_independent"],
               what="report group table, data-independent")
        _check(row["independent_all"],
               by_group[row["group"]]["epsilon_data_independent_if_continued"],
               what="report group table, data-independent over all queries")
        checked += 3
        if row["any_run"] is not None:
            _check(row["any_run"], by_group[row["group"]]["epsilon_data_independent_worst"],
                   what="report group table, bound for any run")
            checked += 1
    if content["budget"] and "remaining" in content["budget"]:
        _check(content["budget"]["remaining"], summary["budget"]["remaining"],
               what="report budget left", down=True)
        checked += 1
    for row in (content["tuning"] or {}).get("rows", []):
        if row["name"].startswith("epsilon"):
            _check(row["value"], summary["tuning"][row["name"]], what="report tuning")
            checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_printed_epsilon_is_rounded_up(cli, name):
    done = cli.analyze(*RUNS[name], "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    table = cli.analyze(*RUNS[name])
    assert table.code == 0 and table.out == render(summary, "table")  # the same figures
    checked = 0
    for fmt in ("table", "markdown"):
        lines = _lines(render(summary, fmt), fmt)
        for key, pattern, exact, down in _summary_figures(summary):
            match = re.search(pattern, lines[key])
            assert match, (fmt, key, lines[key], pattern)
            _check(match.group(1), exact, what=f"{name} {fmt} {key}", down=down)
            checked += 1
    assert checked >= 4
    if name != "svt":  # SVT-PATE's report is covered by the summaries' figures
        pytest.importorskip("jinja2")
    assert _check_report(summary) >= 1


def test_max_epsilon_message_is_rounded_up(cli):
    summary = json.loads(cli.analyze(MNIST, "-n", "1000", "-f", "json").out)
    done = cli.analyze(MNIST, "-n", "1000", "--max-epsilon", "0.5")
    assert done.code == 3
    printed = re.search(r"Error: epsilon ([0-9.]+) exceeds", done.err).group(1)
    _check(printed, summary["epsilon"], what="--max-epsilon message")


def test_the_issue_30_examples():
    """2.020029 printed 2.02, 4.42553 printed 4.4255: below the computed guarantee."""
    summary = {"epsilon": 4.42553, "epsilon_improved": 2.020029}
    assert ceil_text(summary["epsilon"]) == "4.4256"
    from pate_cli.outputs.report_statement import epsilon_text

    assert epsilon_text(2.020029) == "2.0201" and epsilon_text(2.02) == "2.0200"
    # the report prints an epsilon as pate-analyze does, trailing zeros kept (review R26)
    assert epsilon_text(3.111) == ceil_text(3.111) == "3.1110"


@pytest.mark.parametrize("budget", ["1.124400293338287", "1.12345", "1.8"])
def test_a_run_within_its_budget_never_prints_above_it(cli, tmp_path, budget):
    """A budget's halt leaves the run's epsilon within the budget, often a hair below it:
    the epsilon prints rounded up, so the budget prints as given where four decimals hold it
    and else rounded up alike (a budget 1.124400293338287 printed 1.1244 under an epsilon
    printed 1.1245; review R25), in the summary, the report and the group rows."""
    done = cli.analyze(MNIST, "-m", "gnmax", "--sigma", "40", "-n", "400", "--budget", budget,
                       "-f", "json")
    summary = json.loads(done.out)
    assert summary["epsilon"] <= float(budget)
    text = cli.analyze(MNIST, "-m", "gnmax", "--sigma", "40", "-n", "400", "--budget",
                       budget).out
    shown = dict(re.findall(r"^(epsilon|budget) {2,}([0-9.e+-]+?):? ", text, re.MULTILINE))
    assert Decimal(shown["epsilon"]) <= Decimal(shown["budget"])
    if budget == "1.8":
        assert shown["budget"] == "1.8"
    content = report_content(summary)
    assert Decimal(content["budget"]["limit"]) >= Decimal(ceil_text(summary["epsilon"]))


@pytest.mark.parametrize("value, text", [
    (1.8, "1.8"), (6.0, "6"), (1e9, "1e+09"), (12345.6789, "12345.6789"), (1e-05, "1e-05"),
    (1.124400293338287, "1.1245"), (1.12345, "1.1235"),
])
def test_a_limit_prints_as_given_or_rounded_up(value, text):
    assert limit_text(value) == text
    assert Decimal(text) >= Decimal(repr(value))


@pytest.mark.parametrize("limit", [2.0, 1.99939, 1.1234567890123457, 0.30000000000000004,
                                   1.5e-05, 123456.789012345])
def test_figures_beside_a_limit_print_on_their_side_of_it(limit):
    """At ``limit_digits`` decimals the limit prints exactly, a figure equal to it prints
    equal and one float above it prints above, whatever the limit's decimals (past 12, the
    figures printed at 4 decimals: 1.1235 beside a limit 1.1234567890123457; review R30)."""
    from pate_cli.rounding import limit_digits, limit_text

    digits = limit_digits(limit)
    above = np.nextafter(limit, np.inf)
    assert Decimal(limit_text(limit, digits)) == Decimal(repr(limit))
    assert Decimal(ceil_text(above, digits)) > Decimal(limit_text(limit, digits))
    assert Decimal(ceil_text(limit, digits)) == Decimal(repr(limit))


@given(st.floats(min_value=1e-12, max_value=1e12, allow_nan=False, allow_infinity=False))
def test_the_reports_figures_round_up_and_down_at_every_scale(value):
    """``number(..., rounding="up")`` is never below the value and ``"down"`` never above,
    below 1e-3 and from 1e6 on too (review R39: rounding there to nearest printed 5e-07 for
    5.01e-07 and no test failed)."""
    from pate_cli.outputs.report_statement import number

    up, down = number(value, rounding="up"), number(value, rounding="down")
    exact = Decimal(repr(value))  # the float as the tests of ceil_text read it
    assert Decimal(up) >= exact >= Decimal(down), (value, up, down)
    assert number(5.01e-07, rounding="up") == "5.01e-07"
    assert float(number(5.0149e-07, rounding="up")) >= 5.0149e-07
