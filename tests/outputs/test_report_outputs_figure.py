"""pate-report's per-output figure (issue 28, item 7): cumulative epsilon after each
output, present only for votes grouped into outputs, with the data of ``pate-plot history
--x output``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pate_cli import analyze
from pate_cli.outputs.report_figures import report_figures
from tests import SAMPLES

TOKENS = str(SAMPLES / "tokens_stdlib.npz")
RUN = ["-T", "70", "--sigma-threshold", "30", "--sigma", "15", "--accounting", "expected",
       "--budget", "8", "--halt-at", "output"]


def _line(figure, gid: str = "history-0") -> np.ndarray:
    (axes,) = figure.axes
    (line,) = [line for line in axes.get_lines() if line.get_gid() == gid]
    return np.asarray(line.get_xydata())


def test_the_figure_only_when_there_are_outputs():
    tokens = analyze(TOKENS, "confident", threshold=70, sigma_threshold=30, sigma=15,
                     accounting="expected", queries=400)
    summary, frame = tokens.to_dict(), tokens.to_frame()
    assert [key for key, _ in report_figures(summary, frame)] == ["history", "outputs"]
    assert [key for key, _ in report_figures(summary, frame.drop(columns="output"))] == \
        ["history"]
    plain = analyze(str(SAMPLES / "mnist_250_votes.npy"), "gnmax", sigma=40, queries=100)
    assert "outputs" not in [key for key, _ in report_figures(plain.to_dict(),
                                                                plain.to_frame())]


def test_its_data_is_the_plots_and_each_outputs_last_token(cli, tmp_path, monkeypatch):
    """The report's figure against ``pate-plot history --x output`` on the run's per-query
    table (the figure the command would save), and against the table's rows read here:
    x = 1, 2, ..., y = epsilon_cumulative at each output's last analysed token."""
    table, summary_path = tmp_path / "q.csv", tmp_path / "run.json"
    done = cli.analyze(TOKENS, *RUN, "--per-query", str(table), "-f", "json",
                       "-o", str(summary_path))
    assert done.code == 0, done.err
    summary, frame = json.loads(summary_path.read_text()), pd.read_csv(table)
    (reported,) = [figure for key, figure in report_figures(summary, frame) if key == "outputs"]
    import pate_cli.outputs.plot_files as plot_files
    saved = []
    monkeypatch.setattr(plot_files, "save_figure", lambda figure, *_: saved.append(figure))
    assert cli.plot("history", str(table), "--x", "output", "--budget", "8",
                    "-o", str(tmp_path / "h.svg")).code == 0
    np.testing.assert_array_equal(_line(reported), _line(saved[0]))
    last = np.flatnonzero(np.append(np.diff(frame["output"].to_numpy()) != 0, True))
    expected = np.column_stack([np.arange(1, last.size + 1),
                                frame["epsilon_cumulative"].to_numpy()[last]])
    np.testing.assert_array_equal(_line(reported), expected)
    assert last.size == summary["outputs"]["completed"] > 0
    (caption,) = [text.get_text().replace("\n", " ") for text in reported.texts
                  if text.get_gid() == "caption"]
    assert "tokens_stdlib.npz: 200 outputs" in caption and "expected accounting" in caption


@pytest.mark.parametrize("name", ["report.md", "report.html"])
def test_the_report_shows_it(cli, tmp_path, name):
    output = tmp_path / name
    done = cli.report(TOKENS, *RUN, "-o", str(output))
    assert done.code == 0, done.err
    text = output.read_text(encoding="utf-8")
    assert "Cumulative privacy cost after each output (generated sequence)" in text
    if name.endswith(".md"):
        assert "(report_files/outputs.svg)" in text
        assert "outputs (generated sequences)" in (tmp_path / "report_files" /
                                                   "outputs.svg").read_text()
    else:
        assert 'id="figure-outputs"' in text
