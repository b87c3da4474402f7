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


def test_weighted_counts_that_happen_to_be_whole_keep_the_real_grid(tmp_path):
    """The threshold step's exact curve takes the integer grid only where the counts are
    whole on any data: weights 0.5 / 1 / 1.5 can give x.5 counts on a neighbouring
    dataset even where these predictions (teachers voting in pairs) give whole ones. The
    group at weight 1 then pays the real-count curve (11.20 here, where the integer one
    gave 11.07)."""
    import numpy as np

    from pate_cli.accounting.screening import rdp_screening
    from pate_cli.mechanisms.participation import HistogramRows
    from pate_cli.orders import default_orders

    predictions = np.load(SAMPLES / "mnist_250_predictions.npy")[:300].astype(np.int8)
    for teacher in [*range(0, 100, 2), *range(150, 250, 2)]:
        predictions[:, teacher + 1] = predictions[:, teacher]  # pairs vote alike
    groups = np.array(["high"] * 100 + ["average"] * 50 + ["low"] * 100)
    np.save(tmp_path / "p.npy", predictions)
    (tmp_path / "t.csv").write_text("teacher,group\n" + "".join(
        f"{t},{g}\n" for t, g in enumerate(groups)))
    (tmp_path / "g.csv").write_text("group,budget\nhigh,1\naverage,2\nlow,3\n")
    result = pate_cli.analyze(None, predictions=str(tmp_path / "p.npy"), threshold=200,
                              sigma_threshold=1.0, sigma=40.0, queries=5,
                              accounting="data-independent", individualized="weighting",
                              groups=str(tmp_path / "g.csv"),
                              teacher_groups=str(tmp_path / "t.csv"), per_query=True)
    (row,) = [row for row in result.groups.groups if row["group"] == "average"]
    assert row["sensitivity"] == 1.0
    orders = default_orders()
    answered = int(result.to_frame()["answered"].sum())  # the replay's, every query
    for integer, relation in ((False, "equal"), (True, "below")):
        selection = rdp_screening(threshold=200, sigma_threshold=1.0, low=0.0, high=250.0,
                                  orders=orders, integer=integer)
        total = 5 * selection + answered * orders / 40.0**2
        figure = float(np.min(total + np.log(1e5) / (orders - 1)))
        if relation == "equal":
            assert row["epsilon_data_independent_if_continued"] == pytest.approx(figure,
                                                                                rel=1e-12)
        else:
            assert figure < row["epsilon_data_independent_if_continued"] - 0.05
    weighted = HistogramRows(predictions, 10, weights=np.array([0.5, 1.0, 1.5])[
        np.repeat([0, 1, 2], [100, 50, 100])])
    assert not weighted.whole_on_any_data(100)
    assert HistogramRows(predictions, 10, weights=np.repeat([1.0, 2.0], 125)
                         ).whole_on_any_data(100)
