"""A multi-label run's own per-query table and JSON summary are one run's for pate-plot
(history, partition) and pate-report --from: the labels output are counted as (query,
label) pairs on both sides (a binary table's ``answered_labels`` bits; every label of a
tau or powerset query), where the table was counted one row per query (2,000 labels
against the summary's 6,000)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pate_cli.outputs.run_match import RunTotals
from tests.multilabel_sample import write_multilabel_sample

RUNS = {
    "binary-gnmax": ["--multilabel", "binary", "-m", "gnmax", "--sigma", "40"],
    "binary-confident": ["--multilabel", "binary"],
    "binary-expected": ["--multilabel", "binary", "--accounting", "expected"],
    "tau": ["--multilabel", "tau:1", "-m", "gnmax", "--sigma", "40"],
    "powerset": ["--multilabel", "powerset", "-m", "gnmax", "--sigma", "40"],
}


@pytest.fixture(scope="module")
def multilabel_runs(tmp_path_factory) -> dict:
    """Each of ``RUNS`` on three labels of the MNIST sample's first 300 queries (the
    tutorial's): its table and summary, written by pate-analyze."""
    from pate_cli.cli.analyze import main

    folder = tmp_path_factory.mktemp("multilabel")
    predictions, truth = write_multilabel_sample(folder)
    runs = {}
    for name, args in RUNS.items():
        table, summary = folder / f"{name}.csv", folder / f"{name}.json"
        with pytest.raises(SystemExit) as done:
            main(["--predictions", str(predictions), *args, "--labels",
                  str(truth), "--per-query", str(table), "-f", "json", "-o",
                  str(summary)])
        assert done.value.code == 0
        runs[name] = (str(table), str(summary))
    return runs


@pytest.mark.parametrize("name", RUNS)
@pytest.mark.parametrize("kind", ["history", "partition"])
def test_pate_plot_takes_a_multilabel_runs_own_pair(name, kind, multilabel_runs, tmp_path,
                                                    cli):
    table, summary = multilabel_runs[name]
    out = tmp_path / "f.png"
    result = cli.plot(kind, table, "--summary", summary, "--dpi", "30", "-o", out)
    assert (result.code, result.err) == (0, "")
    assert out.exists()


@pytest.mark.parametrize("name", ["binary-confident", "tau"])
def test_pate_report_takes_a_multilabel_runs_own_pair(name, multilabel_runs, tmp_path, cli):
    table, summary = multilabel_runs[name]
    result = cli.report("--from", summary, "--per-query", table, "-o", tmp_path / "r.html")
    assert (result.code, result.err) == (0, "")


def test_a_multilabel_pair_is_still_compared_on_its_labels(multilabel_runs):
    """One label pair fewer in the table (a released label's bit cleared) is found."""
    import json

    table, summary_path = multilabel_runs["binary-confident"]
    with open(summary_path, encoding="utf-8") as handle:
        summary = json.load(handle)
    frame = pd.read_csv(table)
    assert RunTotals(summary).add(frame).difference() is None
    row = int(np.flatnonzero(frame["answered_labels"].to_numpy() == 3)[0])
    frame.loc[row, "answered_labels"] = 1
    found = RunTotals(summary).add(frame).difference()
    assert found == (f"the table outputs {summary['labels_output'] - 1} labels, the "
                     f"summary {summary['labels_output']}")
