"""pate-analyze --smooth-sensitivity (issue 4) and --individualized (issue 5) end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests import SAMPLES

# --- smooth sensitivity -------------------------------------------------------------------

def test_paper_mnist_row_through_the_cli(cli, tmp_path, paper_votes):
    mnist = paper_votes / "mnist_250_teachers.npy"
    code, out, _ = cli.analyze(mnist, "-n", 640, "--accounting", "expected",
                               "--smooth-sensitivity", "-f", "json", "--ss-history",
                               tmp_path / "h.csv", "--ss-every", 100,
                               "--screening", "gaussian")  # the paper's accounting
    assert code == 0
    ss = json.loads(out)["smooth_sensitivity"]
    assert ss["order"] == 14                       # the accounting's choice
    assert round(ss["epsilon_before"], 3) == 1.999
    assert round(ss["epsilon_after"], 3) == 2.516
    assert round(ss["noise_std"], 3) == 0.385
    assert round(ss["smooth_sensitivity"], 5) == 0.06175
    assert round(ss["beta"], 4) == 0.0329
    assert round(ss["sigma_ss"], 3) == 6.233
    assert ss["conditions"] == {"c5": True, "c6": True}
    assert ss["sanitized_epsilon"] is not None
    history = pd.read_csv(tmp_path / "h.csv")
    assert history["queries"].tolist() == [100, 200, 300, 400, 500, 600, 640]
    assert history["epsilon_after"].iloc[-1] == ss["epsilon_after"]
    # Same seed, same sanitised number; another seed, another.
    code, again, _ = cli.analyze(mnist, "-n", 640, "--accounting", "expected",
                                 "--smooth-sensitivity", "-f", "json", "--screening", "gaussian")
    assert json.loads(again)["smooth_sensitivity"] == ss
    code, other, _ = cli.analyze(mnist, "-n", 640, "--accounting", "expected",
                                 "--smooth-sensitivity", "-f", "json", "--seed", 5,
                                 "--screening", "gaussian")
    assert json.loads(other)["smooth_sensitivity"]["sanitized_epsilon"] != \
        ss["sanitized_epsilon"]


def test_failed_condition_exits_2_naming_it(cli):
    code, out, err = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 200, "-m", "gnmax",
                                 "--sigma", 20, "--order", 25, "--smooth-sensitivity")
    assert code == 2 and out == ""
    assert err == ("Error: smooth sensitivity is not valid here: condition C6 fails for sigma "
                   "20, K 10, order 25 (choose another --order)\n")


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "lnmax", "--smooth-sensitivity"], "applies to gnmax, confident, interactive"),
    (["--accounting", "data-independent", "--smooth-sensitivity"], "replay or expected"),
    (["--ss-history", "h.csv"], "--ss-history needs --smooth-sensitivity"),
])
def test_smooth_sensitivity_usage_errors(cli, args, message):
    code, _, err = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 50, *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_smooth_sensitivity_in_the_table(cli):
    code, out, _ = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 300, "--smooth-sensitivity")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("smooth sensitivity"))
    assert "->" in line and "+/-" in line and "beta" in line and "sigma_ss" in line


# --- individualized --------------------------------------------------------------------------

GROUPS = SAMPLES / "mnist_250_groups.csv"
TEACHER_GROUPS = SAMPLES / "mnist_250_teacher_groups.csv"
PREDICTIONS = SAMPLES / "mnist_250_predictions.npy"


def test_show_parameters(cli):
    code, out, _ = cli.analyze("--predictions", PREDICTIONS, "--individualized", "weighting",
                               "--groups", GROUPS, "--teacher-groups", TEACHER_GROUPS,
                               "--show-parameters", "-f", "json")
    assert code == 0
    rows = json.loads(out)["groups"]
    assert [r["group"] for r in rows] == ["high", "average", "low"]
    # Appendix C: weights are budget / mean teacher budget, summing to 250 over teachers.
    teachers = pd.read_csv(TEACHER_GROUPS)["group"].value_counts()
    total = sum(r["weight"] * teachers[r["group"]] for r in rows)
    assert abs(total - 250) < 1e-9
    code, out, _ = cli.analyze(SAMPLES / "mnist_250_votes.npy", "--individualized", "upsampling",
                               "--groups", GROUPS, "--show-parameters", "-f", "csv")
    assert pd.read_csv(__import__("io").StringIO(out))["upsampling"].tolist() == [1, 2, 3]


def test_show_parameters_reads_predictions_stored_teachers_first(cli, tmp_path):
    # --predictions-layout reaches --show-parameters' reading (it was left out: the
    # teachers x queries file was read as 250 queries of 9,000 teachers, and refused).
    flipped = tmp_path / "teachers_first.npy"
    np.save(flipped, np.load(PREDICTIONS).T.copy())
    common = ("--individualized", "weighting", "--groups", GROUPS, "--teacher-groups",
              TEACHER_GROUPS, "--show-parameters", "-f", "json")
    code, out, err = cli.analyze("--predictions", flipped, "--predictions-layout",
                                 "teachers-first", *common)
    assert code == 0, err
    assert out == cli.analyze("--predictions", PREDICTIONS, *common)[1]


def test_weighting_run_reports_groups_and_stops(cli, tmp_path):
    code, out, _ = cli.analyze("--predictions", PREDICTIONS, "--labels",
                               SAMPLES / "mnist_250_labels.npy", "--individualized", "weighting",
                               "--groups", GROUPS, "--teacher-groups", TEACHER_GROUPS, "-n", 1500,
                               "-f", "json", "--per-query", tmp_path / "q.csv")
    assert code == 0
    summary = json.loads(out)
    groups = {g["group"]: g for g in summary["groups"]}
    assert set(groups) == {"high", "average", "low"}
    for g in groups.values():
        assert set(g) >= {"group", "budget", "sensitivity", "epsilon", "order",
                          "exhausted_at"}
    table = pd.read_csv(tmp_path / "q.csv")
    stop = summary["stopped_at"]
    assert stop == min(g["exhausted_at"] for g in groups.values()
                       if g["exhausted_at"] is not None)
    for name, g in groups.items():
        column = table[f"epsilon_cumulative_{name}"]
        # what the group spent when labelling halted (at most its budget); the cost over
        # every query under epsilon_if_continued
        assert column.iloc[stop - 1] == pytest.approx(g["epsilon"], rel=1e-12)
        assert g["epsilon"] <= g["budget"]
        assert column.iloc[-1] == pytest.approx(g["epsilon_if_continued"], rel=1e-12)
        if g["exhausted_at"] is not None:
            first = int(np.argmax(column.to_numpy() > g["budget"]))
            assert first == g["exhausted_at"]
    # No label after the stopping point is released.
    assert table["label"].iloc[stop:].isna().all()
    assert summary["labels_released"] == int(table["label"].iloc[:stop].notna().sum())
    assert summary["labels_released"] > summary["baseline"]["labels_released"]
    assert summary["epsilon"] == max(g["epsilon"] for g in groups.values())


def test_equal_budgets_reduce_to_the_standard_analysis(cli, tmp_path):
    (tmp_path / "g.csv").write_text("group,budget\na,2\nb,2\n")
    teachers = pd.DataFrame({"teacher": range(250), "group": ["a", "b"] * 125})
    teachers.to_csv(tmp_path / "t.csv", index=False)
    plain = json.loads(cli.analyze("--predictions", PREDICTIONS, "-n", 500, "-f", "json")[1])
    for variant in ("upsampling", "weighting", "vanishing"):
        code, out, _ = cli.analyze("--predictions", PREDICTIONS, "-n", 500, "-f", "json",
                                   "--individualized", variant, "--groups", tmp_path / "g.csv",
                                   "--teacher-groups", tmp_path / "t.csv")
        assert code == 0, variant
        summary = json.loads(out)
        for g in summary["groups"]:
            assert g["epsilon"] == pytest.approx(plain["epsilon"], rel=1e-12), variant


@pytest.mark.parametrize(("groups", "teachers", "message"), [
    ("group,budget\nhigh,1\nlow,0\n", None, "group 'low': budget 0 must be positive"),
    ("group,budget\nhigh,1\nlow,\n", None, "group 'low' has no budget"),
    ("group,budget,participation\nhigh,1,1.5\nlow,2,\n", None,
     "group 'high': participation 1.5 must be in (0, 1]"),
    ("group,budget\nhigh,1\nlow,2\n", "teacher,group\n0,middle\n", "unknown group 'middle'"),
    ("group,budget\nhigh,1\nlow,2\n", "teacher,group\n0,high\n", "teacher 1 has no group"),
    ("group,budget\nhigh,1\nlow,2\nmid,3\n", "all-high", "no teacher belongs to group 'low'"),
    ("group,budget,weight\nhigh,1,2\nlow,2,3\n", "half",
     "the weights sum to 625 over the 250 teachers, not 250"),
])
def test_group_file_errors(cli, tmp_path, groups, teachers, message):
    (tmp_path / "g.csv").write_text(groups)
    if teachers == "half":
        teachers = "teacher,group\n" + "".join(f"{t},{'high' if t < 125 else 'low'}\n"
                                               for t in range(250))
    if teachers == "all-high":
        teachers = "teacher,group\n" + "".join(f"{t},high\n" for t in range(250))
    (tmp_path / "t.csv").write_text(teachers or "teacher,group\n" + "".join(
        f"{t},high\n" for t in range(250)))
    code, out, err = cli.analyze("--predictions", PREDICTIONS, "-n", 50, "--individualized",
                                 "weighting", "--groups", tmp_path / "g.csv", "--teacher-groups",
                                 tmp_path / "t.csv")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
