"""pate-analyze --tuning (math:tuning): the run stands for every candidate."""

from __future__ import annotations

import json

import pytest

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.tuning import parse_tuning, tuned_rdp
from pate_cli.analysis import analyze
from pate_cli.errors import OptionError
from tests import ROOT

VOTES = str(ROOT / "sample_votes" / "mnist_250_votes.npy")


@pytest.mark.parametrize("law, name, shape", [
    ("poisson:20", "poisson", None), ("geometric:20", "geometric", 1),
    ("logarithmic:20", "logarithmic", 0), ("negbin:20,0.5", "negbin", 0.5)])
def test_json_tuning_object(cli, law, name, shape):
    done = cli.analyze(VOTES, "-n", "640", "--tuning", law, "-f", "json",
                       "--conversion", "improved")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    tuning = summary["tuning"]
    assert tuning["distribution"] == name and tuning["mean"] == 20
    assert tuning["shape"] == shape
    assert tuning["epsilon_single"] == summary["epsilon"]  # the headline is the run's
    result = analyze(VOTES, queries=640, conversion="improved")
    curve = tuned_rdp(result.rdp_total, orders=result.orders,
                      distribution=parse_tuning(law))
    expected, order = rdp_to_epsilon(curve, orders=result.orders, delta=1e-5,
                                     conversion="improved")
    assert tuning["epsilon_tuned"] == float(expected) and tuning["order"] == float(order)
    assert tuning["epsilon_tuned"] > tuning["epsilon_single"]


def test_null_without_tuning_and_the_text_line(cli):
    done = cli.analyze(VOTES, "-n", "640", "-f", "json")
    assert json.loads(done.out)["tuning"] is None
    text = cli.analyze(VOTES, "-n", "640", "--tuning", "geometric:20")
    line = [row for row in text.out.splitlines() if row.startswith("with tuning")]
    assert len(line) == 1
    assert "(random search, K ~ geometric:20; RDP, order" in line[0]
    markdown = cli.analyze(VOTES, "-n", "640", "--tuning", "negbin:5,2", "-f", "markdown")
    assert "| with tuning |" in markdown.out and "negbin:5,2" in markdown.out


def test_max_epsilon_checks_the_search_figure(cli):
    single = json.loads(cli.analyze(VOTES, "-n", "640", "-f", "json",
                                    "--tuning", "poisson:20").out)["tuning"]
    between = (single["epsilon_single"] + single["epsilon_tuned"]) / 2
    assert cli.analyze(VOTES, "-n", "640", "--max-epsilon", str(between)).code == 0
    over = cli.analyze(VOTES, "-n", "640", "--max-epsilon", str(between),
                       "--tuning", "poisson:20")
    assert over.code == 3 and "epsilon with tuning" in over.err


@pytest.mark.parametrize("args, message", [
    (["-m", "svt", "--tuning", "poisson:2"], "does not combine with -m svt"),
    (["--tuning", "negbin:2"], "negbin takes 2 numbers"),
    (["--tuning", "geometric:0.9"], "must be a number >= 1, got 0.9"),
])
def test_refused(cli, args, message):
    done = cli.analyze(VOTES, "-n", "50", *args)
    assert done.code == 2 and message in done.err
    assert len(done.err.strip().splitlines()) == 1


def test_api_refuses_before_any_work():
    with pytest.raises(OptionError, match="unknown distribution"):
        analyze("/nonexistent.npy", tuning="cauchy:2")
