"""The JSON summary's ``published`` key: the figure pate-report's headline publishes (the
bound for any run, the sanitised release, per group, or nothing for a cut-off chosen on the
votes), and pate-report's gate tests that same figure."""

from __future__ import annotations

import json
import math

import pytest

from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
GROUPS = ["--predictions", str(SAMPLES / "mnist_250_predictions.npy"), "-n", "1000",
          "--individualized", "upsampling", "--groups", str(SAMPLES / "mnist_250_groups.csv")]


def summary(cli, *args) -> dict:
    result = cli.analyze(*args, "-f", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_a_replay_publishes_the_bound_for_any_run_not_its_data_dependent_figure(cli):
    s = summary(cli, VOTES, "-n", "640")
    assert s["published"]["kind"] == "bound"
    bound = min(s["epsilon_data_independent_worst"], s["epsilon_data_independent_worst_pld"])
    assert s["published"]["epsilon"] == bound > s["epsilon"]


def test_data_independent_gnmax_publishes_its_epsilon(cli):
    s = summary(cli, VOTES, "-n", "300", "-m", "gnmax", "--accounting", "data-independent")
    assert s["published"] == {"epsilon": s["epsilon"], "kind": "bound"}


def test_a_smooth_sensitivity_run_publishes_its_sanitised_release(cli):
    s = summary(cli, VOTES, "-n", "640", "--smooth-sensitivity", "--seed", "12345")
    assert s["published"] == {"epsilon": s["smooth_sensitivity"]["sanitized_epsilon"],
                              "kind": "sanitised release"}


def test_an_individualized_run_publishes_per_group(cli):
    s = summary(cli, *GROUPS)
    assert s["published"] == {"epsilon": None, "kind": "per group"}
    assert all(row["epsilon_data_independent_worst"] is not None for row in s["groups"])


def test_a_cutoff_chosen_on_the_votes_publishes_nothing(cli):
    s = summary(cli, VOTES, "-n", "300", "-m", "svt", "--target-epsilon", "8",
                "--svt-cutoff", "auto")
    assert s["published"] == {"epsilon": None, "kind": None}


@pytest.mark.parametrize("args", [("-n", "640"), ("-n", "640", "--accounting", "expected",
                                                  "--smooth-sensitivity")])
def test_the_report_gate_tests_the_published_figure(cli, tmp_path, args):
    published = summary(cli, VOTES, *args)["published"]["epsilon"]
    below, above = math.nextafter(published, 0.0), math.nextafter(published, math.inf)
    assert cli.report(VOTES, *args, "--max-epsilon", above, "-o", tmp_path / "a.md").code == 0
    over = cli.report(VOTES, *args, "--max-epsilon", below, "-o", tmp_path / "b.md")
    assert over.code == 3, over.err


def test_the_text_labels_every_figure_that_is_not_published(cli):
    text = cli.analyze(VOTES, "-n", "640", "--smooth-sensitivity", "--seed", "12345",
                       "--budget", "10").out
    assert "(a private estimate of the cost, not an upper bound)" in text
    assert "left of the data-dependent, unsanitised figure" in text
    groups = cli.analyze(*GROUPS).out
    assert all("; data-dependent, unsanitised), " in line for line in groups.splitlines()
               if line.startswith("group "))
