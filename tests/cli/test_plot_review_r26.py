"""pate-plot fixes of review R26: a summary whose SVT cut-off ``--svt-cutoff auto`` chose is
not drawn as a guarantee (F8); a budget crossing names the accountant, and a published PLD
epsilon within the budget is not shown as over it (F2); a title or label matplotlib cannot
parse is a bad option (F4); ``inf`` in a cumulative epsilon is refused (F13); a per-query
table where votes belong is named, and a --tuning sweep's caption gives the search's cost
(F14)."""

from __future__ import annotations

import json
import re

import pytest

from tests import SAMPLES
from tests.cli.test_plot_qa import _axis_labels, _refused


def _text(svg_path) -> str:
    """The SVG's text, whitespace joined (an XML comment writes ``--`` as ``- -``)."""
    return " ".join(_axis_labels(svg_path.read_text()).replace("- -", "--").split())


# --- F8: --svt-cutoff auto ------------------------------------------------------------------

@pytest.fixture(scope="module")
def searched_svt(tmp_path_factory):
    """An SVT-PATE run whose cut-off --svt-cutoff auto chose: (table, summary)."""
    from pate_cli.cli.analyze import main
    directory = tmp_path_factory.mktemp("svt_auto")
    table, summary = directory / "svta.csv", directory / "svta.json"
    argv = [str(SAMPLES / "adult_250_votes.npy"), "-m", "svt", "--svt-cutoff", "auto",
            "--target-epsilon", "5", "-n", "300", "--per-query", str(table), "-f", "json",
            "-o", str(summary)]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    assert json.loads(summary.read_text())["svt"]["cutoff_from_search"] is True
    return table, summary


def test_tradeoff_curve_refuses_a_cutoff_chosen_on_the_votes(searched_svt, tmp_path, cli):
    """It drew 'SVT-PATE: publishable (pure DP)'; pate-report refuses such a summary."""
    _, summary = searched_svt
    out = tmp_path / "curve.png"
    _refused(cli.plot("tradeoff-curve", summary, "-o", out), "svta.json",
             "--svt-cutoff auto", "the automatic choice on these votes is not covered")
    assert not out.exists()


@pytest.mark.parametrize("kind", ["history", "partition"])
def test_history_of_a_cutoff_chosen_on_the_votes_says_not_a_guarantee(kind, searched_svt,
                                                                       tmp_path, cli):
    table, summary = searched_svt
    out = tmp_path / "h.svg"
    result = cli.plot(kind, table, "--summary", summary, "-o", out)
    assert result.code == 0, result.err
    assert ("not a guarantee: the cut-off was chosen on these votes (--svt-cutoff auto)"
            in _text(out)), _text(out)


# --- F2: a PLD headline within the budget ----------------------------------------------------

def test_a_published_pld_epsilon_within_the_budget_is_not_over_it(tmp_path, cli):
    """The RDP line crosses 3 at query 277; the run's published PLD epsilon, 2.9433 over
    all 400 queries, does not: the legend said 'GNMax (over budget at query 277)'."""
    from pate_cli.rounding import ceil_text
    table, summary_path = tmp_path / "g.csv", tmp_path / "g.json"
    assert cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", "400", "-m", "gnmax",
                       "--sigma", "40", "--accounting", "data-independent", "--per-query",
                       table, "-f", "json", "-o", summary_path).code == 0
    summary = json.loads(summary_path.read_text())
    assert summary["epsilon_method"] == "pld" and summary["epsilon"] < 3 < summary[
        "epsilon_rdp"]
    out = tmp_path / "h.svg"
    assert cli.plot("history", table, "--summary", summary_path, "--budget", "3",
                    "-o", out).code == 0
    text = _text(out)
    assert (f"GNMax (RDP figure over budget at query 277; published PLD epsilon "
            f"{ceil_text(summary['epsilon'])} within it)") in text, text
    assert "(over budget at" not in text


def test_a_pld_epsilon_that_is_not_a_bound_names_only_the_rdp_crossing(plot_runs, tmp_path,
                                                                         cli):
    """A data-independent Confident run's PLD epsilon composes the answers the votes chose:
    not said to be within the budget, and the crossing is named as the RDP figure's."""
    table, summary_path = tmp_path / "c.csv", tmp_path / "c.json"
    assert cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", "600", "--accounting",
                       "data-independent", "--per-query", table, "-f", "json", "-o",
                       summary_path).code == 0
    out = tmp_path / "h.svg"
    assert cli.plot("history", table, "--summary", summary_path, "--budget", "1.5",
                    "-o", out).code == 0
    text = _text(out)
    assert re.search(r"\(RDP figure over budget at query \d+\)", text), text
    assert "within it" not in text


# --- F4: math text in --title and --label ----------------------------------------------------

@pytest.mark.parametrize(("kind", "option", "value"), [
    ("history", "--title", "a $\\badcmd$ b"),
    ("history", "--title", "$x^$"),
    ("history", "--label", "x $\\badcmd$ y"),
    ("tradeoff-curve", "--label", "$\\badcmd$"),
])
def test_math_text_matplotlib_cannot_parse_is_a_bad_option(kind, option, value, plot_runs,
                                                           tmp_path, cli):
    """It was 'Error: unexpected ValueError: \\badcmd ^ ParseFatalException...', exit 1."""
    source = plot_runs["confident" if kind == "history" else "confident_json"]
    out = tmp_path / "f.png"
    _refused(cli.plot(kind, source, option, value, "-o", out), f"'{option}'", "math text")
    assert not out.exists()


def test_math_text_that_parses_and_dollar_file_names_are_drawn(plot_runs, tmp_path, cli):
    """A file name is drawn as it is, not as math text (``$\\bad$`` in one was exit 1)."""
    table = tmp_path / "cost$\\bad$.csv"
    table.write_bytes(plot_runs["confident"].read_bytes())
    out = tmp_path / "f.svg"
    result = cli.plot("history", table, "--title", "$\\varepsilon$ of \\$5 runs", "-o", out)
    assert result.code == 0 and result.err == "", result.err
    assert "cost$\\bad$.csv" in _text(out)  # drawn as it is


# --- F13: inf in a cumulative epsilon --------------------------------------------------------

def _with_inf(plot_runs, tmp_path):
    import pandas as pd
    frame = pd.read_csv(plot_runs["confident"])
    frame.loc[9, "epsilon_cumulative"] = float("inf")
    path = tmp_path / "inf.csv"
    frame.to_csv(path, index=False)
    return path


def test_inf_in_the_cumulative_epsilon_is_refused(plot_runs, tmp_path, cli):
    """It was drawn with a gap (exit 0), while nan was refused."""
    table = _with_inf(plot_runs, tmp_path)
    out = tmp_path / "h.png"
    for args in ([], ["--summary", plot_runs["confident_json"]]):
        _refused(cli.plot("history", table, *args, "-o", out), "inf.csv", "row 9",
                 "'epsilon_cumulative'", "inf")
        assert not out.exists()
    report = tmp_path / "r.md"
    _refused(cli.report("--from", plot_runs["confident_json"], "--per-query", table,
                        "-o", report), "row 9", "inf")
    assert not report.exists()


# --- F14: what was expected; the search's cost -----------------------------------------------

def test_selection_names_a_per_query_table_given_as_votes(plot_runs, tmp_path, cli):
    """It said only 'line 4, column 5: empty'."""
    out = tmp_path / "s.png"
    _refused(cli.plot("selection", plot_runs["confident"], "--params", "200,150", "-o", out),
             "this is a per-query table", "expected a vote file")
    assert not out.exists()


def test_tradeoff_caption_of_a_tuning_sweep_gives_the_search_cost(tmp_path, cli):
    import pandas as pd

    from pate_cli.rounding import ceil_text
    table = tmp_path / "swt.csv"
    assert cli.sweep(SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "--sigma", "20,40,80",
                     "--labels", SAMPLES / "mnist_250_labels.npy", "-n", "300",
                     "--accounting", "data-independent", "--tuning", "poisson:3",
                     "-o", table).code == 0
    row = pd.read_csv(table).iloc[0]
    out = tmp_path / "t.svg"
    assert cli.plot("tradeoff", table, "-o", out).code == 0
    text = _text(out)
    assert ("choosing among these points costs the search, epsilon_all_points "
            f"{ceil_text(row['epsilon_all_points'])} (every point run), epsilon_tuned "
            f"{ceil_text(row['epsilon_tuned'])} as a random search (--tuning poisson:3)"
            ) in text, text
