"""``--multilabel`` through the command line: binary equals the two-class and the
flattened runs, tau and powerset by hand, the per-query table, and every refusal (exit 2,
one line)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.orders import default_orders

DIFFERENT = ("input", "multilabel", "queries", "labels_output", "files", "read")


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(7)
    queries, teachers, labels = 60, 30, 3
    truth = rng.integers(0, 2, (queries, labels))
    keep = rng.random((queries, teachers, labels)) < 0.8
    predictions = np.where(keep, truth[:, None, :], 1 - truth[:, None, :]).astype(np.int8)
    positive = predictions.sum(axis=1)
    counts = np.stack([teachers - positive, positive], axis=2)
    paths = {}
    for name, array in (("pred", predictions), ("truth", truth), ("counts", counts),
                        ("flat", counts.reshape(-1, 2)), ("flat_truth", truth.reshape(-1)),
                        ("one", counts[:, :1, :]), ("two", counts[:, 0, :]),
                        ("one_truth", truth[:, :1]), ("two_truth", truth[:, 0])):
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], array)
    return paths


def summary(cli, *args) -> dict:
    code, out, err = cli.analyze(*args, "-f", "json")
    assert code == 0, err
    return json.loads(out)


def without(summary_dict: dict) -> dict:
    return {key: value for key, value in summary_dict.items() if key not in DIFFERENT}


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("mechanism", ["gnmax", "confident"])
def test_one_label_is_the_two_class_run(cli, files, accounting, mechanism):
    common = ("-m", mechanism, "--accounting", accounting, "--sigma", "6")
    one = summary(cli, files["one"], "--multilabel", "binary", "--labels",
                  files["one_truth"], *common)
    two = summary(cli, files["two"], "--labels", files["two_truth"], *common)
    assert without(one) == without(two)
    assert one["multilabel"] == {"variant": "binary", "labels": 1, "tau": None,
                                 "sensitivity_squared": 2,
                                 "labels_output": two["labels_output"]}
    assert two["multilabel"] is None


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
def test_binary_is_the_flattened_run(cli, files, accounting):
    """Noise keyed by the flattened row: even replay gives the flattened run's bytes."""
    common = ("--accounting", accounting, "-T", "20", "--sigma-threshold", "10")
    multi = summary(cli, files["counts"], "--multilabel", "binary", "--labels",
                    files["truth"], *common)
    flat = summary(cli, files["flat"], "--labels", files["flat_truth"], *common)
    assert without(multi) == without(flat)
    assert multi["queries"] == 60 and flat["queries"] == 180
    assert multi["labels_output"] == flat["labels_output"]


def test_binary_per_query_rows_sum_the_labels(cli, files, tmp_path):
    multi, flat = tmp_path / "multi.csv", tmp_path / "flat.csv"
    args = ("-T", "20", "--sigma-threshold", "10")
    assert cli.analyze(files["counts"], "--multilabel", "binary", "--per-query", multi,
                       *args).code == 0
    assert cli.analyze(files["flat"], "--per-query", flat, *args).code == 0
    rows, labels = pd.read_csv(multi), pd.read_csv(flat)
    assert len(rows) == 60 and rows["query"].tolist() == list(range(60))
    grouped = labels.groupby(labels["query"] // 3)
    np.testing.assert_allclose(rows["rdp_answer"], grouped["rdp_answer"].sum(), rtol=1e-12)
    np.testing.assert_array_equal(rows["answered"], grouped["answered"].sum())
    np.testing.assert_array_equal(rows["epsilon_cumulative"],
                                  labels["epsilon_cumulative"].to_numpy()[2::3])
    # a query's own epsilon: its three labels' curves summed, converted (checked for one
    # query with Confident's data-independent ceiling as an upper bound)
    assert (rows["epsilon"] >= grouped["epsilon"].max() - 1e-12).all()
    bits = labels["label"].fillna(0).to_numpy().reshape(60, 3).astype(int)
    answered = labels["answered"].to_numpy().reshape(60, 3)
    want = np.where(answered.any(axis=1), (bits * [1, 2, 4]).sum(axis=1), -1)
    np.testing.assert_array_equal(rows["label"].fillna(-1).astype(int), want)


def test_tau_and_powerset_by_hand(cli, files):
    """tau 1 over 3 labels: two disjoint clipped sets, Delta_s^2 = 2, both counts noised:
    2 * 2 = 4, 60 queries of alpha * 4 / (2 sigma^2). powerset data-independent: one vote
    moved, 60 * alpha / sigma^2."""
    orders = default_orders()
    tau = summary(cli, "--predictions", files["pred"], "--multilabel", "tau:1", "-m", "gnmax",
                  "--sigma", "10")
    want = float(rdp_to_epsilon(60 * orders * 4 / 200, orders=orders, delta=1e-5)[0])
    assert tau["epsilon_rdp"] == pytest.approx(want, rel=1e-14) and tau["answered"] == 180
    assert tau["epsilon"] == tau["epsilon_data_independent_pld"] < tau["epsilon_rdp"]
    assert tau["multilabel"]["sensitivity_squared"] == 4 and tau["multilabel"]["tau"] == 1
    power = summary(cli, "--predictions", files["pred"], "--multilabel", "powerset", "-m",
                    "gnmax", "--sigma", "10", "--accounting", "data-independent")
    rdp_figure = float(rdp_to_epsilon(60 * orders / 100, orders=orders, delta=1e-5)[0])
    assert power["epsilon_rdp"] == pytest.approx(rdp_figure, rel=1e-14)
    assert power["epsilon"] <= power["epsilon_rdp"]  # the PLD figure where installed
    dependent = summary(cli, "--predictions", files["pred"], "--multilabel", "powerset",
                        "-m", "gnmax", "--sigma", "10")
    assert dependent["epsilon"] <= power["epsilon_rdp"]
    # expected accounting: the same figures, and (every query answered) the data-independent
    # one reported as the bound for any run too
    expected = summary(cli, "--predictions", files["pred"], "--multilabel", "powerset", "-m",
                       "gnmax", "--sigma", "10", "--accounting", "expected")
    assert expected["epsilon_data_independent_worst"] == expected["epsilon_data_independent"]
    assert dependent == expected | {"accounting": "replay",
                                    "epsilon_data_independent_worst": None,
                                    "epsilon_data_independent_worst_pld": None}
    assert expected["epsilon_data_independent_worst_pld"] == power["epsilon"]


def test_binary_from_predictions_equals_counts(cli, files):
    from_counts = summary(cli, files["counts"], "--multilabel", "binary")
    from_predictions = summary(cli, "--predictions", files["pred"], "--multilabel", "binary")
    assert without(from_counts) == without(from_predictions)


def test_replay_labels_are_seeded(cli, files, tmp_path):
    """Same seed, same bytes; labels decode to sets over 3 labels; accuracy is per label."""
    for variant in ("tau:1.5", "powerset"):
        args = ("--predictions", files["pred"], "--multilabel", variant, "-m", "gnmax",
                "--sigma", "8", "--labels", files["truth"], "--seed", "3")
        first, second = tmp_path / "a.csv", tmp_path / "b.csv"
        assert cli.analyze(*args, "--per-query", first).code == 0
        assert cli.analyze(*args, "--per-query", second).code == 0
        assert first.read_bytes() == second.read_bytes()
        rows = pd.read_csv(first)
        assert rows["label"].between(0, 7).all()
        assert 0.5 < summary(cli, *args)["label_accuracy"] <= 1


REFUSALS = {
    "3-D without the option": (lambda f: [f["counts"]],
                               "are read by pate-analyze --multilabel VARIANT"),
    "unknown variant": (lambda f: [f["counts"], "--multilabel", "ternary"],
                        "--multilabel must be binary, tau:TAU or powerset, got 'ternary'"),
    "bad tau": (lambda f: [f["counts"], "--multilabel", "tau:-1"],
                "--multilabel tau:TAU needs a positive number TAU, got 'tau:-1'"),
    "tau from counts": (lambda f: [f["counts"], "--multilabel", "tau:1", "-m", "gnmax"],
                        "--multilabel tau needs --predictions FILE"),
    "powerset from counts": (lambda f: [f["counts"], "--multilabel", "powerset", "-m",
                                        "gnmax"], "--multilabel powerset needs --predictions"),
    "2-D votes": (lambda f: [f["two"], "--multilabel", "binary"],
                  "--multilabel votes must have shape (queries, labels, 2)"),
    "lnmax": (lambda f: [f["counts"], "--multilabel", "binary", "-m", "lnmax"],
              "--multilabel binary runs -m gnmax or -m confident, not lnmax"),
    "confident tau": (lambda f: ["--predictions", f["pred"], "--multilabel", "tau:1"],
                      "--multilabel tau runs -m gnmax, not confident"),
    "budget": (lambda f: [f["counts"], "--multilabel", "binary", "--budget", "1"],
               "--multilabel does not combine with --budget"),
    "smooth": (lambda f: [f["counts"], "--multilabel", "binary", "--smooth-sensitivity"],
               "--multilabel does not combine with --smooth-sensitivity"),
    "decisions": (lambda f: [f["counts"], "--multilabel", "binary", "--write-decisions",
                             f["counts"].with_name("d.csv")],
                  "--write-decisions does not combine with --multilabel"),
    "integral tau": (lambda f: ["--predictions", f["pred"], "--multilabel", "tau:1", "-m",
                                "gnmax", "--q-bound", "integral"],
                     "--q-bound integral applies to --multilabel binary only"),
    "labels shape": (lambda f: [f["counts"], "--multilabel", "binary", "--labels",
                                f["flat_truth"]], "multi-label true labels must have shape"),
    "non-binary predictions": (lambda f: ["--predictions", f["counts"], "--multilabel",
                                          "powerset", "-m", "gnmax"], "is not 0 or 1"),
    "queries": (lambda f: [f["counts"], "--multilabel", "binary", "--queries", "61"],
                "--queries 61 is larger than the 60 queries"),
    "sampling": (lambda f: [f["counts"], "--multilabel", "binary", "-m", "gnmax",
                            "--accounting", "data-independent", "--sampling", "poisson:0.1"],
                 "--multilabel does not combine with --sampling"),
    "halt at outputs": (lambda f: [f["counts"], "--multilabel", "binary", "--halt-at",
                                   "output"], "--multilabel does not combine with --halt-at"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_are_one_line(cli, files, case):
    args, message = REFUSALS[case]
    code, out, err = cli.analyze(*args(files))
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_powerset_cap_and_large_label_count(cli, tmp_path):
    """63 labels: refused for powerset (64-bit sets), analysed for binary and tau."""
    predictions = np.zeros((2, 4, 63), dtype=np.int8)
    predictions[:, :3, 0] = 1
    path = tmp_path / "wide.npy"
    np.save(path, predictions)
    code, _, err = cli.analyze("--predictions", path, "--multilabel", "powerset", "-m",
                               "gnmax")
    assert code == 2 and "at most 62 labels" in err
    tau = summary(cli, "--predictions", path, "--multilabel", "tau:2", "-m", "gnmax")
    assert tau["multilabel"]["sensitivity_squared"] == 16  # 2 * (4 + 4)
    assert math.isfinite(tau["epsilon"])


@pytest.mark.parametrize("fmt", ["table", "markdown"])
@pytest.mark.parametrize("variant", ["binary", "tau:1", "powerset"])
def test_the_summary_counts_labels_not_two_classes(cli, files, fmt, variant):
    """A multi-label query's votes are L yes/no counts: the summary says "60 queries x 3
    labels" (it said "x 2 classes", the shape of each label's counts)."""
    result = cli.analyze("--predictions", files["pred"], "--multilabel", variant, "-m",
                         "gnmax", "-f", fmt)
    assert result.code == 0, result.err
    votes = next(line for line in result.out.splitlines() if "votes" in line)
    assert "60 queries x 3 labels, 30 teachers" in votes and "classes" not in votes


def test_the_report_counts_labels(cli, files, tmp_path):
    out = tmp_path / "report.md"
    result = cli.report(files["counts"], "--multilabel", "binary", "-m", "gnmax", "-o", out)
    assert result.code == 0, result.err
    assert "30 teachers, 3 yes/no labels per query." in out.read_text()
