"""Inputs taken at their word that should not have been, and failures shown as the
user's mistake that were not: each case through the command as a user meets it.

- ``--teachers`` below the voters of a predictions file's rows (refused as for votes);
- file names that are not UTF-8 in the text outputs; a matplotlib failure on a per-query
  table shown as bad input;
- a labels ``.npy`` given as ``--decisions``; pate-calibrate's ``files``; the relative
  step a calibration reached; summaries edited by hand given to ``pate-report --from``.
"""

from __future__ import annotations

import numpy as np

import pate_cli
from pate_cli.errors import InputError
from tests import SAMPLES
from tests.hostile.test_issue30_cases import one_error

PREDICTIONS = SAMPLES / "mnist_250_predictions.npy"
GROUPS = SAMPLES / "mnist_250_groups.csv"
TEACHER_GROUPS = SAMPLES / "mnist_250_teacher_groups.csv"


# --- --teachers below the voters of predictions ---------------------------------------------

def test_predictions_with_more_voters_than_teachers_are_refused(cli):
    line = one_error(cli.analyze("--predictions", PREDICTIONS, "--teachers", 10),
                     "mnist_250_predictions.npy: query 0 has 250 votes",
                     "more than --teachers 10", "weights exceed 1")
    assert "--individualized weighting" in line
    one_error(cli.calibrate("--predictions", PREDICTIONS, "--teachers", 10, "-m", "gnmax",
                            "--target-epsilon", 2), "more than --teachers 10")
    one_error(cli.report("--predictions", PREDICTIONS, "--teachers", 10, "-o",
                         "unused.html"), "more than --teachers 10")
    try:
        pate_cli.analyze(predictions=PREDICTIONS, teachers=10)
    except InputError as error:
        assert "more than --teachers 10" in str(error)
    else:
        raise AssertionError("the API took 250 voters under teachers=10")


def test_predictions_with_abstentions_pass_under_teachers(cli, tmp_path):
    predictions = np.load(PREDICTIONS)[:300].copy()
    predictions[:, 200:] = -1  # 200 voters per query
    path = tmp_path / "partial.npy"
    np.save(path, predictions)
    assert cli.analyze("--predictions", path, "--teachers", 200, "-f", "json").code == 0
    one_error(cli.analyze("--predictions", path, "--teachers", 199), "query 0 has 200 votes",
              "more than --teachers 199")


def test_teacher_groups_count_the_predictions_columns(cli):
    result = cli.analyze("--predictions", PREDICTIONS, "--teachers", 300, "--groups", GROUPS,
                         "--teacher-groups", TEACHER_GROUPS, "--individualized", "weighting",
                         "-m", "gnmax", "-f", "json")
    assert result.code == 0, result.err
