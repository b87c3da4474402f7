"""``-m exponential`` and ``-m confident-exponential`` at the command line (cli:decisions):
``--eta``, JSON ``params.eta``, per-query columns, decisions written and read back,
calibration, sweeps, reports, and one-line refusals (exit 2)."""

from __future__ import annotations

import csv
import json
import math

import pytest

MNIST = "sample_votes/mnist_250_votes.npy"
LABELS = "sample_votes/mnist_250_labels.npy"
PER_QUERY = ("query", "plurality", "plurality_class", "answered", "label", "log_q",
             "log_pr_answered", "rdp_selection", "rdp_answer", "epsilon",
             "epsilon_cumulative", "order_cumulative")


@pytest.mark.parametrize("name", ["exponential", "Confident-Exponential"])
def test_json_per_query_and_decisions_round_trip(cli, tmp_path, name):
    table, decisions = tmp_path / "q.csv", tmp_path / "d.csv"
    common = [MNIST, "-n", "300", "-m", name, "--eta", "0.05", "-f", "json"]
    first = cli.analyze(*common, "--per-query", table, "--write-decisions", decisions)
    assert first.code == 0, first.err
    summary = json.loads(first.out)
    assert summary["mechanism"] == name.lower() and summary["params"]["eta"] == 0.05
    assert summary["epsilon"] <= summary["epsilon_data_independent"] + 1e-12
    with open(table) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 300 and set(PER_QUERY) <= set(rows[0])
    assert float(rows[-1]["epsilon_cumulative"]) == pytest.approx(summary["epsilon"],
                                                                   rel=1e-12)
    if name == "exponential":
        assert all(float(row["log_pr_answered"]) == 0.0 for row in rows)
        assert summary["answered"] == 300
    again = cli.analyze(*common, "--decisions", decisions)
    assert again.code == 0, again.err
    replayed = json.loads(again.out)
    assert replayed["epsilon"] == summary["epsilon"]
    assert replayed["answered"] == summary["answered"]


def test_default_eta_matches_the_default_gaussian_worst_case(cli):
    out = [json.loads(cli.analyze(MNIST, "-n", "200", "-m", name, "--accounting",
                                  "data-independent", "-f", "json").out)
           for name in ("exponential", "gnmax")]
    assert out[0]["params"]["eta"] == pytest.approx(math.sqrt(2) / 40, rel=1e-15)
    assert out[0]["epsilon"] == pytest.approx(out[1]["epsilon_data_independent"], rel=1e-12) \
        or out[1]["data_independent_method"] == "pld"


@pytest.mark.parametrize(("arguments", "message"), [
    (["-m", "exponential", "--eta", "0"], "must be positive"),
    (["-m", "exponential", "--eta", "301"], "eta must lie in [1e-12, 300]"),
    (["-m", "exponential", "--smooth-sensitivity"], "--smooth-sensitivity applies to"),
    (["-m", "confident-exponential", "--q-bound", "integral"], "applies to Gaussian answers"),
    (["-m", "exponential", "--individualized", "upsampling", "--groups",
      "sample_votes/mnist_250_groups.csv"], "--individualized supports"),
])
def test_refusals_are_one_line_with_exit_2(cli, arguments, message):
    result = cli.analyze(MNIST, "-n", "50", *arguments)
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_decisions_of_another_mechanism_are_refused(cli, tmp_path):
    decisions = tmp_path / "d.csv"
    assert cli.analyze(MNIST, "-n", "100", "--write-decisions", decisions).code == 0
    result = cli.analyze(MNIST, "-n", "100", "-m", "exponential", "--decisions", decisions)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["exponential", "confident-exponential"])
@pytest.mark.parametrize("accounting", ["data-independent", "expected"])
def test_calibrate_solves_eta_never_above_the_target(cli, name, accounting):
    result = cli.calibrate(MNIST, "-m", name, "--target-epsilon", "2", "-n", "300",
                           "--accounting", accounting, "-f", "json")
    assert result.code == 0, result.err
    found = json.loads(result.out)
    assert found["solved"]["parameter"] == "eta"
    eta = found["solved"]["value"]
    assert found["epsilon"] <= 2.0 and found["params"]["eta"] == eta
    assert found["above"]["value"] > eta and found["above"]["epsilon"] > 2.0
    assert f"--eta {eta:.12g}" in found["command"]
    check = cli.analyze(MNIST, "-n", "300", "-m", name, "--eta", repr(eta), "--accounting",
                        accounting, "-f", "json")
    check = json.loads(check.out)
    # a selection step under data-independent accounting: the bound for any run is met
    if found.get("every_query_answered"):
        assert check["epsilon"] < found["epsilon"] == check["epsilon_data_independent_worst"]
    else:
        assert check["epsilon"] == found["epsilon"]


def test_calibrate_refuses_eta_as_input(cli):
    result = cli.calibrate(MNIST, "-m", "exponential", "--target-epsilon", "2",
                           "--sigma", "3")
    assert result.code == 2 and ("--sigma applies to -m gnmax, confident, interactive, not "
                                 "-m exponential") in result.err


def test_sweep_eta_grid_and_column(cli, tmp_path):
    out = tmp_path / "sweep.csv"
    result = cli.sweep(MNIST, "-m", "exponential", "-m", "gnmax", "-m",
                       "confident-exponential", "--eta", "0.02,0.04", "--sigma", "40",
                       "-T", "150,200", "-n", "200", "-w", "1", "-q", "--out", out)
    assert result.code == 0, result.err
    with open(out) as handle:
        rows = list(csv.DictReader(handle))
    header = list(rows[0])
    assert header.index("eta") == header.index("student_sha256") + 1  # appended after it
    shown = [(row["mechanism"], row["eta"], row["threshold"]) for row in rows]
    assert shown == [("exponential", "0.02", ""), ("exponential", "0.04", ""),
                     ("gnmax", "", ""),
                     ("confident-exponential", "0.02", "150.0"),
                     ("confident-exponential", "0.02", "200.0"),
                     ("confident-exponential", "0.04", "150.0"),
                     ("confident-exponential", "0.04", "200.0")]
    single = json.loads(cli.analyze(MNIST, "-n", "200", "-m", "exponential", "--eta", "0.04",
                                    "-f", "json").out)
    assert float(rows[1]["epsilon"]) == single["epsilon"]


def test_report_shows_the_mechanism_and_eta(cli, tmp_path):
    report = tmp_path / "r.md"
    result = cli.report(MNIST, "-n", "200", "-m", "confident-exponential", "--eta", "0.04",
                        "-o", report)
    assert result.code == 0, result.err
    text = report.read_text()
    assert "Confident-Exponential" in text and "`eta` | 0.04" in text
    assert "--eta 0.04" in text
