"""Review R26 of pate-report: the budget section says which figure the budget held and
where the published figure is above it (F1); the group table's headers label unsanitised
and not-a-bound columns (F3); 1/N prints with the digits the comparison needs (F5); a
rounds run lists each round's parameters and labels its figures (F6); the figures carry
pate-plot's caption text (F7); the checklist describes the published figure (F9); the
headline names the accountant of the run's answers' figure (F11); and the small items of
F14 (the vanishing warning's last sentence, a sampled run's level, a budget's digits)."""

from __future__ import annotations

import json

import pate_cli
from pate_cli.outputs.captions import figure_note
from pate_cli.outputs.report_content import report_content
from pate_cli.outputs.report_statement import privacy_unit
from pate_cli.outputs.summary_json import summary_dict
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
PREDICTIONS = str(SAMPLES / "mnist_250_predictions.npy")
GROUPS = str(SAMPLES / "mnist_250_groups.csv")
TEACHER_GROUPS = str(SAMPLES / "mnist_250_teacher_groups.csv")


def _content(**options) -> dict:
    return report_content(summary_dict(pate_cli.analyze(VOTES, **options)))


def _report(cli, tmp_path, *args, name: str = "r.md") -> str:
    out = tmp_path / name
    assert cli.report(*args, "-o", out).code == 0
    return out.read_text(encoding="utf-8")


def test_a_halt_decided_on_the_rdp_figure_says_so_and_the_published_bound_is_above():
    budget = _content(queries=2000, accounting="data-independent", budget=5.0)["budget"]
    assert "the halt was decided on the Rényi DP figure, 4.9987" in budget["note"]
    assert "(0.0013 of the budget left on it)" in budget["note"]
    assert budget["remaining_label"] == "Left on the run's answers (not a bound)"
    assert "The published bound, ε = 7.6709, is above the budget" in budget["note"]


def test_a_replay_budget_below_the_published_bound_says_so():
    budget = _content(mechanism="gnmax", sigma=40, queries=640, budget=1.5)["budget"]
    assert budget["remaining_label"].endswith("data-dependent ε (unsanitised)")
    assert ("The published bound, ε = 3.8487, is above the budget: the budget holds the "
            "run's data-dependent figure, not the published one.") in budget["note"]


def test_a_sanitised_release_above_a_budget_never_reached_says_so():
    budget = _content(queries=1000, smooth_sensitivity=True, budget=2.0)["budget"]
    assert budget["halt"].startswith("never")
    assert "where the run halted" not in budget["note"]
    assert "The published sanitised release, ε = 2.4149, is above the budget" in (
        budget["note"])


def test_a_search_above_the_budget_is_not_called_what_the_budget_held():
    budget = _content(mechanism="gnmax", queries=2000, accounting="data-independent",
                      budget=3.0, tuning="geometric:5")["budget"]
    assert "published privacy-loss distribution figure" not in budget["note"]
    assert "the run, 2.392" in budget["note"]
    assert ("The published bound with the hyperparameter search, ε = 4.9540, is above the "
            "budget: the budget holds one run's figure, without the search") in budget["note"]


def test_group_budgets_below_their_published_bounds_say_so(cli, tmp_path):
    text = _report(cli, tmp_path, "--predictions", PREDICTIONS, "--individualized",
                   "upsampling", "--groups", GROUPS, "-n", "1500", "--accounting",
                   "data-independent")
    assert "The published bounds are above the budgets: group high's ε = 7.6037 (budget 1)" in (
        text)


def test_the_group_table_headers_label_their_figures(cli, tmp_path):
    text = _report(cli, tmp_path, "--predictions", PREDICTIONS, "--individualized",
                   "weighting", "--groups", GROUPS, "--teacher-groups", TEACHER_GROUPS,
                   "-n", "3000")
    assert ("| ε spent at the halt (data-dependent, unsanitised) | order | data-independent ε "
            "for any run | data-independent ε at the halt (the replay's answers: not a bound) "
            "| data-independent ε, all queries (the run's answers: not a bound) |") in text


def test_the_vanishing_warning_ends_in_a_sentence(cli, tmp_path):
    text = _report(cli, tmp_path, "--predictions", PREDICTIONS, "--individualized",
                   "vanishing", "--groups", GROUPS, "--teacher-groups", TEACHER_GROUPS,
                   "-n", "1500")
    assert "formed, not that choice" not in text
    assert "no bound for any run is formed, so no figure here covers that choice." in text


def test_one_over_n_prints_with_the_digits_the_comparison_needs():
    summary = {"input": {"teachers": 250}, "delta": 1e-5}
    below = privacy_unit(summary, dataset_size=99999)["delta"]
    assert "is below 1/N = 1.00001e-05" in below
    above = privacy_unit(summary, dataset_size=100001)["delta"]
    assert "is NOT below 1/N = 9.9999e-06" in above


def test_a_rounds_run_lists_each_round_and_labels_its_figures(cli, tmp_path):
    text = _report(cli, tmp_path, VOTES, "--rounds", str(SAMPLES / "mnist_250_rounds.csv"))
    assert "| round 1: student confidence γ | `rounds.1.params.confidence` | 0.9 |" in text
    assert "| round 0: selection threshold T | `rounds.0.params.threshold` | 200 |" in text
    assert "mnist_250_student.npy (sha256 " in text
    assert ("ε 1.9159 alone (Rényi DP, order 14; data-dependent, unsanitised: not for "
            "publication) |") in text


def test_the_figure_files_carry_their_own_labels(cli, tmp_path):
    _report(cli, tmp_path, VOTES, "-n", "640", "--budget", "1.5")
    history = (tmp_path / "r_files" / "history.svg").read_text()
    selection = (tmp_path / "r_files" / "selection.svg").read_text()
    assert "not for publication" in history and "not for publication" in selection
    text = _report(cli, tmp_path, VOTES, "-n", "2000", "--accounting", "data-independent",
                   "--budget", "5", name="r.html")
    assert ("<figcaption>Cumulative privacy cost (the run&#39;s answers, a count the votes "
            "decide: not a bound") in text


def test_a_group_figure_of_a_data_independent_run_is_not_called_a_bound(cli, tmp_path):
    out = tmp_path / "s.json"
    assert cli.analyze("--predictions", PREDICTIONS, "--individualized", "upsampling",
                       "--groups", GROUPS, "-n", "1500", "--accounting", "data-independent",
                       "-f", "json", "-o", out).code == 0
    note = figure_note(json.loads(out.read_text()), "figures")
    assert "a count the votes decide: not bounds" in note and "high 7.6037" in note


def test_the_checklist_describes_the_published_figure():
    rows = {row["item"]: row for row in _content(mechanism="gnmax", sigma=40, queries=640,
                                                 budget=1.5)["checklist"]}
    published = rows["Published ε is not data-dependent, or is sanitised"]
    assert published["ok"] and published["note"].startswith("data-independent bound")
    assert not rows["Unsanitised figures stripped before publishing"]["ok"]


def test_the_run_answers_figure_names_its_accountant():
    text = _content(queries=2000, accounting="data-independent")["headline"]["text"]
    assert ("at the run's 1098 answers it would be 5.4606 (the privacy-loss distribution "
            "accountant), not a bound") in text


def test_a_sampled_run_names_its_level(cli, tmp_path):
    text = _content(mechanism="gnmax", sigma=40, queries=300, sampling="poisson:0.1",
                    accounting="data-independent")["headline"]["text"]
    assert "teacher-partition level" not in text
    assert "one record of the population the voters are drawn from" in text


def test_a_group_budget_prints_as_limit_text_everywhere(tmp_path):
    groups = tmp_path / "g.csv"
    groups.write_text("group,budget,share\nhigh,0.33333333333,0.34\n"
                      "average,0.66666666667,0.432\nlow,1.00004999,0.228\n")
    summary = summary_dict(pate_cli.analyze(None, "confident", threshold=200,
                                            sigma_threshold=150, sigma=40,
                                            predictions=PREDICTIONS,
                                            individualized="upsampling", groups=str(groups),
                                            queries=300))
    content = report_content(summary)
    assert content["groups"][0]["budget"] == content["baseline"]["budget"] == "0.3334"
