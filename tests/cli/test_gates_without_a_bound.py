"""A gate never passes on a figure that is not a bound: --max-epsilon on a vanishing run
whose figures at the halt the votes decide fails (exit 3), and pate-sweep --pareto draws
its frontier on the bound for any run under data-independent accounting."""

from __future__ import annotations

import json

import pytest

from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
VANISHING = ["--predictions", str(SAMPLES / "mnist_250_predictions.npy"), "-n", "1000",
             "--individualized", "vanishing", "--groups", str(SAMPLES / "mnist_250_groups.csv"),
             "--teacher-groups", str(SAMPLES / "mnist_250_teacher_groups.csv")]


@pytest.mark.parametrize("mechanism, accounting", [("confident", "data-independent"),
                                                    ("gnmax", "replay")])
def test_a_vanishing_run_without_a_bound_fails_the_report_gate(cli, tmp_path, mechanism,
                                                                accounting):
    result = cli.report(*VANISHING, "-m", mechanism, "--accounting", accounting,
                        "--max-epsilon", "1000", "-o", str(tmp_path / "r.md"))
    assert result.code == 3, result.err
    assert "vanishing forms no bound for any run" in result.err


def test_the_analyze_gate_fails_where_vanishing_forms_no_bound(cli):
    result = cli.analyze(*VANISHING, "-m", "confident", "--accounting", "data-independent",
                         "--max-epsilon", "1000")
    assert result.code == 3 and "no epsilon of this run can be held" in result.err
    # GNMax under data-independent accounting: the halt is the same on any votes, and its
    # figures at the halt are the bounds the gate holds
    held = cli.analyze(*VANISHING, "-m", "gnmax", "--accounting", "data-independent",
                       "--max-epsilon", "1000")
    assert held.code == 0, held.err


def test_the_pareto_frontier_rests_on_the_bound_for_any_run(cli):
    grid = (VOTES, "--queries", "2000", "-m", "gnmax", "-m", "confident", "--sigma", "100",
            "--accounting", "data-independent", "-w", "1", "-q", "-f", "json")
    rows = [json.loads(line) for line in cli.sweep(*grid).out.splitlines()]
    confident = next(row for row in rows if row["mechanism"] == "confident")
    gnmax = next(row for row in rows if row["mechanism"] == "gnmax")
    # Confident's own epsilon (its count's) is below GNMax's, its bound for any run above:
    # fewer answers at more epsilon, so the frontier drops it
    assert confident["epsilon"] < gnmax["epsilon"] < confident["epsilon_any_run"]
    assert confident["answered"] < gnmax["answered"]
    kept = [json.loads(line) for line in cli.sweep(*grid, "--pareto").out.splitlines()]
    assert [row["mechanism"] for row in kept] == ["gnmax"]
