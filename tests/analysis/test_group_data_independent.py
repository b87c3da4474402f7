"""Each privacy group's data-independent figure, at the halt and over all queries
(issue 30 item 5; math:individualized with math:independent at the group's sensitivity).

Checked against a run under ``--accounting data-independent`` with the same seed (the
same replay decisions): its per-group ``epsilon_if_continued`` is what the replay's and
the expected run's ``epsilon_data_independent_if_continued`` must be, and in that run the
two keys equal the spent figures.
"""

from __future__ import annotations

import pytest

import pate_cli
from tests import SAMPLES

GROUPS = str(SAMPLES / "mnist_250_groups.csv")
VOTES = str(SAMPLES / "mnist_250_votes.npy")


def _groups(accounting: str, variant: str = "upsampling") -> dict:
    if variant == "upsampling":
        result = pate_cli.analyze(VOTES, queries=1200, accounting=accounting, seed=2,
                                  individualized=variant, groups=GROUPS)
    else:
        result = pate_cli.analyze(
            None, predictions=str(SAMPLES / "mnist_250_predictions.npy"), queries=1200,
            accounting=accounting, seed=2, individualized=variant, groups=GROUPS,
            teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"))
    summary = result.to_dict()
    return summary


@pytest.mark.parametrize("variant", ["upsampling", "weighting", "vanishing"])
def test_group_figures_match_a_data_independent_run(variant):
    independent = _groups("data-independent", variant)
    for row in independent["groups"]:
        assert row["epsilon_data_independent"] == row["epsilon"]
        assert row["epsilon_data_independent_if_continued"] == row["epsilon_if_continued"]
    worst = {row["group"]: row["epsilon_if_continued"] for row in independent["groups"]}
    for accounting in ("replay", "expected"):
        summary = _groups(accounting, variant)
        stopped = summary["stopped_at"]
        for row in summary["groups"]:
            assert row["epsilon_data_independent_if_continued"] == pytest.approx(
                worst[row["group"]], rel=1e-12)
            # at the halt: at most the whole run, at least the data-dependent spend
            assert row["epsilon"] <= row["epsilon_data_independent"]
            assert (row["epsilon_data_independent"]
                    <= row["epsilon_data_independent_if_continued"])
            if stopped is None:
                assert (row["epsilon_data_independent"]
                        == row["epsilon_data_independent_if_continued"])
