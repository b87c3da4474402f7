"""The f-DP trade-off curve (``pate_cli.outputs.risk_figure``, ``pate-plot tradeoff-curve``):
the drawn lines are the JSON summary's curves (beta = 1 - tpr against alpha = fpr), the
mu-GDP curve is drawn exactly where ``mu`` is set, and the caption rounds its bounds up."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

import pate_cli
from pate_cli.outputs.captions import risk_caption
from pate_cli.outputs.risk_figure import (
    FINE_ALPHAS,
    curve_lines,
    reported_points,
    risk_problem,
    tradeoff_curve_figure,
)
from pate_cli.rounding import ceil_text
from tests import SAMPLES


def drawn(figure) -> dict:
    return {line.get_gid(): line for line in figure.axes[0].get_lines()}


@pytest.fixture(scope="module")
def summaries(plot_runs) -> dict:
    """Confident replay (data-dependent, mu-GDP), LNMax (RDP, no mu), GNMax
    data-independent (mu-GDP, nothing data-dependent)."""
    votes = pate_cli.load_votes(SAMPLES / "mnist_250_votes.npy")
    gnmax = pate_cli.analyze(votes, pate_cli.GNMax(sigma=40), queries=300,
                             accounting="data-independent")
    return {"confident": json.loads(plot_runs["confident_json"].read_text()),
            "lnmax": json.loads(plot_runs["lnmax_json"].read_text()),
            "gnmax": json.loads(json.dumps(gnmax.to_dict()))}


def test_the_drawn_curves_are_the_summary_curves(summaries):
    summary = summaries["lnmax"]  # its data-dependent curve is tighter somewhere
    figure = tradeoff_curve_figure([("run", summary)])
    lines = drawn(figure)
    for gid, key in (("publishable-0", "risk_data_independent"), ("data-dependent-0", "risk")):
        curve = summary[key]["tradeoff"]
        np.testing.assert_array_equal(lines[gid].get_xdata(), curve["fpr"])
        np.testing.assert_array_equal(lines[gid].get_ydata(), 1.0 - np.array(curve["tpr"]))
    assert lines["data-dependent-0"].get_linestyle() == "--"
    assert "data-dependent (unsanitised)" in lines["data-dependent-0"].get_label()
    alpha, beta = (lines["reported-0"].get_xdata(), lines["reported-0"].get_ydata())
    np.testing.assert_array_equal(alpha, [0.001, 0.01, 0.1])
    np.testing.assert_array_equal(
        beta, 1.0 - np.array(list(summary["risk_data_independent"]["tpr_at_fpr"].values())))
    np.testing.assert_array_equal(lines["diagonal"].get_ydata(), 1.0 - FINE_ALPHAS)
    assert figure.axes[0].get_xlim() == (0.0, 1.0) and figure.axes[0].get_ylim() == (0.0, 1.0)


def test_the_gdp_curve_only_where_mu_is_set(summaries):
    for name in ("confident", "gnmax"):
        summary = summaries[name]
        mu = summary["risk_data_independent"]["mu"]
        assert mu is not None
        gdp = drawn(tradeoff_curve_figure([(name, summary)]))["gdp-0"]
        alpha = np.asarray(gdp.get_xdata())
        assert alpha.size > 500 and alpha[0] == 0.0 and alpha[-1] == 1.0  # smooth
        exact = norm.cdf(norm.ppf(1.0 - alpha) - mu)  # f(alpha) of mu-GDP
        np.testing.assert_allclose(gdp.get_ydata(), exact, rtol=0, atol=1e-9)
        assert f"mu-GDP, mu = {ceil_text(mu)}" in gdp.get_label()
        # an unsampled Gaussian run's publishable curve is that curve, at its FPRs
        curve = summary["risk_data_independent"]["tradeoff"]
        np.testing.assert_allclose(1.0 - np.array(curve["tpr"]),
                                   norm.cdf(norm.ppf(1.0 - np.array(curve["fpr"])) - mu),
                                   rtol=0, atol=1e-9)
    lines = drawn(tradeoff_curve_figure([("lnmax", summaries["lnmax"])]))
    assert summaries["lnmax"]["risk_data_independent"]["mu"] is None
    assert "gdp-0" not in lines and "publishable-0" in lines


def test_nothing_data_dependent_for_a_data_independent_run(summaries):
    lines = drawn(tradeoff_curve_figure([("g", summaries["gnmax"])]))
    assert "data-dependent-0" not in lines
    lines = drawn(tradeoff_curve_figure([("c", summaries["confident"])], dependent=False))
    assert "data-dependent-0" not in lines and "gdp-0" in lines


def test_several_runs_and_a_log_axis(summaries):
    figure = tradeoff_curve_figure([("a", summaries["confident"]), ("b", summaries["lnmax"]),
                                    ("c", summaries["gnmax"])], log=True)
    lines = drawn(figure)
    assert {"publishable-0", "publishable-1", "publishable-2", "gdp-0", "gdp-2"} <= set(lines)
    assert figure.axes[0].get_xscale() == "log"
    assert figure.axes[0].get_xlim() == pytest.approx((1e-6, 1.0))
    assert [kind.kind for kind in curve_lines(summaries["lnmax"], "b")] == [
        "publishable", "data-dependent"]


def test_caption_rounds_up_and_labels_the_data_dependent_bounds(summaries):
    same = summaries["confident"]  # its data-dependent bounds equal the publishable ones
    assert same["risk"]["tpr_at_fpr"] == same["risk_data_independent"]["tpr_at_fpr"]
    assert "unsanitised" not in risk_caption(["run"], [same])  # nothing new to say
    summary = json.loads(json.dumps(same))
    summary["risk"]["tpr_at_fpr"] = {fpr: tpr / 2 for fpr, tpr in
                                     summary["risk"]["tpr_at_fpr"].items()}
    summary["risk"].update(data_dependent=True, source="rdp", mu=None)  # the votes' curve
    text = risk_caption(["run"], [summary])
    independent, risk = summary["risk_data_independent"], summary["risk"]
    for value in (*independent["tpr_at_fpr"].values(), independent["advantage"],
                  independent["mu"], *risk["tpr_at_fpr"].values()):
        assert ceil_text(value) in text
    assert "unsanitised: not for publication" in text
    assert "unsanitised" not in risk_caption(["run"], [summary], dependent=False)
    alpha, beta = reported_points(independent)
    assert list(alpha) == [0.001, 0.01, 0.1] and np.all((beta >= 0) & (beta <= 1))


@pytest.mark.parametrize("change, phrase", [
    (lambda r: r.update(tradeoff=None), "no tradeoff curve"),
    (lambda r: r["tradeoff"]["fpr"].pop(), "differ in length"),
    (lambda r: r.update(advantage=1.5), "not a number in [0, 1]"),
    (lambda r: r["tpr_at_fpr"].update(x=0.5), "not a false-positive rate"),
    (lambda r: r.update(mu=-1), "mu is not"),
])
def test_risk_problem(summaries, change, phrase):
    risk = json.loads(json.dumps(summaries["confident"]["risk_data_independent"]))
    assert risk_problem(risk) is None
    change(risk)
    assert phrase in risk_problem(risk)
    assert risk_problem([1, 2]) == "not an object"
