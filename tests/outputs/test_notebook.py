"""The notebook API: a one-line repr, a small _repr_html_, result.plot.*, result.report().

The views live in the outputs layer and are registered with ``analysis.result`` when
``pate_cli`` is imported (analysis never imports outputs: tests/test_layers.py)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from matplotlib.figure import Figure

import pate_cli
from pate_cli.analysis import result as result_module
from pate_cli.rounding import ceil_text
from tests import SAMPLES

pytest.importorskip("jinja2")

VOTES = SAMPLES / "mnist_250_votes.npy"


@pytest.fixture(scope="module")
def confident():
    return pate_cli.analyze(VOTES, accounting="expected")  # all 9000 queries


@pytest.fixture(scope="module")
def groups():
    return pate_cli.analyze(VOTES, individualized="upsampling", queries=400,
                            groups=SAMPLES / "mnist_250_groups.csv")


def test_views_are_registered_by_the_outputs_layer():
    # the facade names the module; a view asked for first imports it (pate_cli._views)
    assert "pate_cli.outputs.notebook" in pate_cli._views.PROVIDERS
    pate_cli._views.load_providers()
    assert set(result_module.PRESENTERS) >= {"html", "plot", "report"}
    assert result_module.PRESENTERS["html"].__module__ == "pate_cli.outputs.notebook"


def test_repr_is_one_line(confident, groups):
    for result in (confident, groups):
        text = repr(result)
        assert "\n" not in text and text.startswith("<AnalysisResult ") and len(text) < 200


def test_repr_says_what_its_epsilon_is(confident):
    """repr printed a data-dependent epsilon bare ("epsilon 5.9408 at delta 1e-05 (replay,
    order 6)"), and a data-independent run's count figure as if a bound: it gives the
    summary's epsilon line."""
    assert repr(confident) == (
        "<AnalysisResult confident, expected: 9000 queries, answered 5029.2 expected, epsilon "
        "5.9326 at delta 1e-05 (RDP, order 6; data-dependent, unsanitised: not for "
        "publication)>")
    independent = pate_cli.analyze(VOTES, accounting="data-independent", queries=640)
    assert repr(independent).endswith(  # not the count's 2.8961
        "epsilon 3.9268 at delta 1e-05 (privacy-loss distribution accountant, every query "
        "answered: the bound for any run)>")
    assert independent.epsilon_data_independent_worst_pld <= 3.9268
    gnmax = pate_cli.analyze(VOTES, "gnmax", accounting="data-independent", queries=640)
    assert repr(gnmax).endswith("epsilon 3.8487 at delta 1e-05 (privacy-loss distribution "
                                "accountant)>")


def test_repr_html_is_small_and_well_formed(confident):
    html = confident._repr_html_()
    assert len(html.encode()) < 20_000
    assert ceil_text(confident.epsilon) in html and "<svg" in html and "<polyline" in html
    points = re.search(r'points="([^"]*)"', html).group(1).split()
    assert 2 <= len(points) <= 120

    class Check(HTMLParser):
        stack: list = []

        def handle_starttag(self, tag, attrs):
            self.stack.append(tag)

        def handle_endtag(self, tag):
            assert self.stack.pop() == tag

    checker = Check()
    checker.feed(html)
    assert checker.stack == []


def test_plots_are_pate_plot_figures(confident, groups):
    history = confident.plot.history()
    assert isinstance(history, Figure)
    line = next(a for a in history.axes[0].get_lines() if a.get_gid() == "history-0")
    assert line.get_ydata()[-1] == pytest.approx(confident.epsilon_cumulative[-1])
    assert isinstance(confident.plot.selection(), Figure)
    figure = groups.plot.groups()
    assert {line.get_gid() for line in figure.axes[0].get_lines()} >= {
        f"group-{name}" for name in ("high", "average", "low")}
    with pytest.raises(ValueError, match="individualized"):
        confident.plot.groups()
    with pytest.raises(ValueError, match="Confident-GNMax"):
        groups.plot.selection()


def test_report_is_the_pate_report_html(confident):
    html = confident.report()
    assert html.startswith("<!DOCTYPE html>")
    for section in ("headline", "privacy-unit", "reproduction", "checklist"):
        assert f'<section id="{section}">' in html
    assert f'data-value="{confident.epsilon!r}"' in html
    markdown = confident.report("markdown", dataset_size=60000)
    assert markdown.startswith("# Privacy statement") and "is below 1/N" in markdown


def test_a_result_without_its_table_reports_without_the_figures_drawn_from_it(confident):
    """It raised NoColumnsError; pate-report --from a summary gives the same statement."""
    totals = pate_cli.analyze(VOTES, accounting="expected", per_query=False)
    html = totals.report()
    assert f'data-value="{totals.epsilon!r}"' in html and totals.epsilon == confident.epsilon
    assert 'id="figure-history"' not in html and 'id="figure-history"' in confident.report()
    assert totals.report("markdown").startswith("# Privacy statement")


def test_sparkline_points_by_hand():
    from pate_cli.outputs.notebook import sparkline

    spark = sparkline([0.0, 1.0, 2.0])  # x from 2 to 238, y from 46 (0) to 2 (the top)
    assert spark["points"] == "2.0,46.0 120.0,24.0 238.0,2.0" and spark["top"] == "2"
    many = sparkline(range(100_000))
    assert len(many["points"].split()) == 120 and many["points"].endswith("238.0,2.0")
    assert sparkline([])["points"] == ""


@pytest.mark.filterwarnings("ignore::pate_cli.errors.PateWarning")
def test_a_report_of_a_searched_svt_cutoff_is_refused_as_pate_report_refuses_it():
    """``result.report()`` published a guarantee for ``svt_cutoff="auto"``, whose choice on
    these votes no composition covers, where pate-report exits 2 (review R32)."""
    result = pate_cli.analyze(SAMPLES / "mnist_250_votes.npy", "svt", target_epsilon=8,
                              svt_cutoff="auto", queries=300)
    with pytest.raises(pate_cli.OptionError, match="svt_cutoff='auto'.*give the cut-off"):
        result.report("markdown")
    fixed = pate_cli.analyze(SAMPLES / "mnist_250_votes.npy", "svt", target_epsilon=8,
                             svt_cutoff=result.svt.cutoff, queries=300)
    assert "satisfies" in fixed.report("markdown")
