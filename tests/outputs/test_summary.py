"""The text summary: no ``None`` parameters, one word for the individualized halt point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pate_cli.outputs.summary import render, vacuous_text

FIXTURES = Path(__file__).resolve().parents[1] / "regression" / "fixtures"


def _summary(case: str) -> dict:
    return json.loads((FIXTURES / case / "stdout").read_text())


def test_unset_parameters_are_left_out_of_the_text():
    summary = _summary("svt_scale")
    summary["params"]["svt_threshold"] = None
    text = render(summary, "table")
    assert "None" not in text
    assert "svt_threshold" not in text
    assert "svt_scale=1.4" in text


def test_halt_point_is_the_first_query_not_released():
    summary = _summary("indiv_weighting")
    stop = summary["stopped_at"]
    text = render(summary, "table")
    assert f"stops before query {stop})" in text
    assert f"exhausted at query {stop}" in text  # the group that stops the labelling
    assert "stops after" not in text


def _line(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"{key} "))


@pytest.mark.parametrize("fmt", ["table", "markdown"])
@pytest.mark.parametrize("accounting, mechanism, dependent", [
    ("replay", "confident", True), ("expected", "gnmax", True),
    ("data-independent", "confident", False), ("replay", "svt", False)])
def test_a_data_dependent_figure_says_it_is_unsanitised(accounting, mechanism, dependent,
                                                        fmt):
    """The headline and the improved figure of a data-dependent run say they are not for
    publication as they are; a data-independent one (or SVT-PATE's) says nothing of it."""
    summary = dict(_summary("confident_replay"), accounting=accounting, mechanism=mechanism,
                   conversion="classic", epsilon_improved=1.0)
    text = render(summary, fmt).replace("| ", "").replace(" |", " ")
    assert ("data-dependent, unsanitised: not for publication" in _line(text, "epsilon")
            ) == dependent
    assert ("data-dependent, unsanitised" in _line(text, "epsilon improved")) == dependent
    assert "unsanitised" not in _line(text, "data-independent")


def test_expected_accounting_leads_with_the_bound_for_any_run():
    """The data-independent figure at the expected count is an average over runs: the
    line leads with the bound for every query answered (when larger), as the report does."""
    summary = dict(_summary("confident_replay"), accounting="expected",
                   epsilon_data_independent=3.0, epsilon_data_independent_worst=5.0,
                   epsilon_data_independent_pld=None, epsilon_data_independent_worst_pld=None)
    line = _line(render(summary, "table"), "data-independent")
    assert line.split()[1:4] == ["5.0000", "(RDP,", "every"]  # its accountant named
    assert "; 3.0000 (RDP, order" in line and line.endswith("at the expected count, an average")
    # the Gaussian steps' privacy-loss distribution gives a smaller bound: it leads
    summary["epsilon_data_independent_pld"] = summary["epsilon_data_independent_worst_pld"] = 4.0
    line = _line(render(summary, "table"), "data-independent")
    assert line.split()[1:3] == ["4.0000", "(privacy-loss"]
    assert "the bound for any run; RDP 5.0000); 3.0000 (RDP, order" in line
    del summary["epsilon_data_independent_worst_pld"]  # a summary from before the key: the
    assert _line(render(summary, "table"), "data-independent") == line  # _pld is the bound's
    summary["epsilon_data_independent_pld"] = None
    summary["epsilon_data_independent_worst"] = 3.0  # LNMax: every query pays the same
    assert _line(render(summary, "table"), "data-independent").split()[1:] == [
        "3.0000", "(RDP,", "order", f"{summary['order_data_independent']})"]


def test_one_query_is_singular():
    summary = _summary("confident_replay")
    summary = dict(summary, queries=1, answered=1, input=dict(summary["input"], queries=1))
    text = render(summary, "table")
    assert "of 1 query\n" in text and "1 query x " in text and "1 queries" not in text


@pytest.mark.parametrize(("tprs", "advantage", "vacuous"), [
    ((1.0, 1.0, 1.0), 1.0, True),
    ((0.99996, 1.0, 1.0), 0.99996, True),  # printed 1.0000 (rounded up): nothing below 1
    ((0.9999, 1.0, 1.0), 1.0, False),  # one TPR bound below 1 rules some attack out
    ((1.0, 1.0, 1.0), 0.9999, False),
])
def test_a_risk_whose_every_printed_bound_is_one_is_called_vacuous(tprs, advantage, vacuous):
    fprs = ("0.001", "0.01", "0.1")
    risk = {"tpr_at_fpr": dict(zip(fprs, tprs, strict=True)), "advantage": advantage}
    assert vacuous_text(risk) == ("; vacuous: every bound rounds to 1" if vacuous else "")


def test_a_huge_whole_number_stays_a_float():
    """An integral float of 2^53 or more is written as a float (``1e+300``), not as 301
    digits an int64 reader overflows on (review R17); below, as an int (``200``)."""
    from pate_cli.outputs.report_command import option_value
    from pate_cli.outputs.summary_json import plain_number

    assert plain_number(1e300) == 1e300 and isinstance(plain_number(1e300), float)
    assert plain_number(2.0**53) == 2.0**53 and isinstance(plain_number(2.0**53), float)
    assert plain_number(200.0) == 200 and isinstance(plain_number(200.0), int)
    assert option_value(1e300) == "1e+300" and option_value(40.0) == "40"


def test_an_automatic_svt_cutoff_is_named_on_every_figure_it_is_not_covered_by():
    """``--svt-cutoff auto``: the cut-off was chosen on the votes, and no figure covers the
    choice: the data-independent and attack-risk lines say so, as the epsilon line does."""
    summary = _summary("svt_auto")
    assert summary["svt"]["cutoff_from_search"]
    text = render(summary, "table")
    for key in ("epsilon", "data-independent", "attack risk"):
        assert "the cut-off was chosen on these votes, a choice this" in _line(text, key), key
    summary["svt"]["cutoff_from_search"] = False
    assert "chosen on these votes" not in render(summary, "table")


def test_a_markdown_summary_escapes_a_bar_in_a_path():
    summary = _summary("confident_replay")
    summary["input"]["path"] = "we|ird.npy"
    assert "| input | we\\|ird.npy (sha256 " in render(summary, "markdown")


def test_multilabel_tau_publishes_its_smaller_pld_figure_under_replay():
    """tau's curve is data-independent in every mode: under replay it publishes the PLD
    figure as a data-independent run does, and no line calls its RDP figure data-dependent
    (it printed 27.5130 by RDP, and "24.3817 (PLD, below the data-dependent figure)")."""
    import numpy as np

    from pate_cli import analyze
    rng = np.random.default_rng(3)
    votes = (rng.random((200, 50, 4)) < rng.uniform(0.1, 0.9, (200, 1, 4))).astype(np.int8)
    result = analyze(predictions=votes, mechanism="gnmax", multilabel="tau:2", sigma=10.0)
    assert result.epsilon == result.epsilon_data_independent_pld < result.epsilon_rdp
    text = render(result.to_dict(), "table")
    assert "data-dependent" not in text and "privacy-loss distribution" in _line(text, "epsilon")


def test_a_round_s_figure_says_what_it_is_under_every_accounting():
    """Each round's epsilon alone: unsanitised under replay; under data-independent
    accounting a round that selects composes the replay's answers, not a bound (it printed
    nothing there), in the summary and the report alike."""
    from pate_cli.outputs.report_content import report_content

    summary = _summary("rounds")
    replay = render(summary, "table")
    assert "unsanitised: not for publication)" in _line(replay, "round 0")
    summary["accounting"] = "data-independent"
    text = render(summary, "table")
    for line in (_line(text, "round 0"), _line(text, "round 1")):
        assert line.endswith("; the replay's answers, a count the votes decide: not a bound)")
    rows = {row["name"]: row["value"] for row in report_content(summary)["accounting"]}
    assert rows["round 0"].endswith("not a bound)")
