"""Interactive-GNMax, SVT-PATE, multi-round runs, --query-indices and --add-rdp (issue 3).

SVT-PATE's accounting functions alone are tested in tests/accounting/test_svt.py."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import log_ndtr

from pate_cli.analysis import analyze_votes
from pate_cli.analysis.rounds import Round, analyze_rounds
from pate_cli.errors import InputError
from pate_cli.mechanisms import SVTPATE, ConfidentGNMax, GNMax, InteractiveGNMax


def votes_with_labels(seed=0, queries=400, classes=10, teachers=250):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, queries)
    agreement = rng.beta(5, 2, queries)
    probs = np.full((queries, classes), 0.0) + ((1 - agreement) / classes)[:, None]
    probs[np.arange(queries), labels] += agreement
    votes = np.array([rng.multinomial(teachers, p) for p in probs], dtype=float)
    return votes, labels


# --- Interactive-GNMax ----------------------------------------------------------------------

def test_confident_right_student_needs_few_teacher_labels():
    votes, _ = votes_with_labels()
    plurality = np.argmax(votes, axis=1)
    student = np.eye(10)[plurality] * 0.99 + 0.001  # confident and right
    # v = n - M p removes the plurality: max v is the runner-up count, far below T.
    mechanism = InteractiveGNMax(threshold=200, sigma_threshold=50, sigma=40, confidence=0.9,
                                 teachers=250)
    result = analyze_votes(votes, mechanism, student=student, labels=plurality)
    counts = np.bincount(result.outcome, minlength=3)
    assert counts[1] <= 0.01 * len(votes)              # few teacher labels
    assert counts[2] >= 0.99 * len(votes)              # the student's own labels
    assert result.accuracy_by_outcome["student"] == 1.0
    confident = analyze_votes(votes, ConfidentGNMax(threshold=200, sigma_threshold=50,
                                                    sigma=40))
    assert confident.answered_total > 0.3 * len(votes)  # the teachers alone answer more
    # The cost is (almost) the selection cost alone.
    expected = analyze_votes(votes, mechanism, student=student, accounting="expected")
    assert expected.rdp_at_order["answer"] < 0.05 * expected.rdp_at_order["selection"]


@pytest.mark.parametrize("accounting", ["expected", "replay", "data-independent"])
def test_uniform_student_equals_confident_with_shifted_threshold(accounting):
    votes, _ = votes_with_labels(seed=1)
    student = np.full(votes.shape, 0.1)                # M/K = 25 exactly
    interactive = analyze_votes(
        votes, InteractiveGNMax(threshold=180, sigma_threshold=150, sigma=40, confidence=0.9,
                                teachers=250, screening="gaussian"),
        student=student, accounting=accounting)
    confident = analyze_votes(votes, ConfidentGNMax(threshold=205, sigma_threshold=150,
                                                    sigma=40), accounting=accounting)
    np.testing.assert_array_equal(interactive.log_pr_answered, confident.log_pr_answered)
    np.testing.assert_array_equal(interactive.epsilon_cumulative, confident.epsilon_cumulative)
    assert interactive.answered_total == confident.answered_total
    assert np.all(interactive.outcome != 2)             # max p = 0.1 never exceeds 0.9


@pytest.mark.parametrize(("teachers", "top", "p0", "shifted_max", "toward"), [
    (4.0, 2.0, 0.375, 0.5, 0.5), (4.0, 2.0, 0.125, 1.5, 1.5), (8.0, 4.0, 0.1875, 2.5, 2.5),
    (8.0, 4.0, 0.0625, 3.5, 3.5), (3.0, 2.0, 0.3, 1.1, 1.125),
])
def test_fractional_maxima_are_rounded_toward_the_threshold(teachers, top, p0, shifted_max,
                                                           toward):
    """K = 2, n = (top, M - top), p = (p0, 1 - p0): max (n - M p) = top - M p0, exactly; the
    threshold step's probability is that of the count rounded toward T = 3 on the lattice of
    1/32 counts at sigma1 2 (half to even, the 2018 paper's, gave 0.5 the probability of 0:
    an under-charge)."""
    votes = np.array([[top, teachers - top]])
    student = np.array([[p0, 1.0 - p0]])
    mechanism = InteractiveGNMax(threshold=3.0, sigma_threshold=2.0, sigma=1.0,
                                 confidence=0.9, teachers=teachers)
    assert mechanism.selection_counts(votes, student)[0] == shifted_max
    result = analyze_votes(votes, mechanism, student=student, teachers=teachers,
                           accounting="expected", orders=[2.0, 3.0])
    assert result.log_pr_answered[0] == log_ndtr((toward - 3.0) / 2.0)


@pytest.mark.parametrize("per_query", [False, "stream"])
def test_the_expected_charge_is_never_below_the_mechanisms(per_query):
    """Expected accounting charges the answer step with pr_answered (math:costs). Rounded
    toward T, a fractional count above T (n - M p) has a lower pr_answered than the
    mechanism's: its charge is one lattice step up (threshold.raised_charge). The expected
    answers and the answer step's sum at every order are at least those of the true
    counts (scipy, per query), in the totals and in the streamed table alike; the
    selection step is unchanged."""
    from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax

    votes, _ = votes_with_labels(seed=5, queries=600)
    student = np.random.default_rng(5).dirichlet(np.ones(10), size=600)
    mechanism = InteractiveGNMax(threshold=0.0, sigma_threshold=100.0, sigma=20.0,
                                 confidence=0.99, teachers=250.0)
    orders = np.array([2.0, 5.0, 10.0, 20.0])
    result = analyze_votes(votes, mechanism, student=student, teachers=250.0,
                           accounting="expected", orders=orders, per_query=per_query)
    counts = mechanism.selection_counts(votes, student)
    assert np.any(counts != np.round(counts))  # fractional
    true_pr = np.exp(log_ndtr((counts - 0.0) / 100.0))
    answer = rdp_gnmax(log_q_gnmax(votes, sigma=20.0), sigma=20.0, orders=orders)
    assert result.answered_total >= true_pr.sum() * (1 - 1e-14)
    charged = result.counts.step_sums[1]
    assert np.all(charged >= true_pr @ answer * (1 - 1e-13))
    if per_query:
        frame = result.to_frame()
        assert np.all(frame["answered"].to_numpy() >= true_pr * (1 - 1e-15))
        assert frame["answered"].sum() == pytest.approx(result.answered_total, rel=1e-12)


def test_student_file_must_hold_probability_rows(tmp_path, cli):
    votes, _ = votes_with_labels(queries=20)
    np.save(tmp_path / "v.npy", votes)
    bad = np.full(votes.shape, 0.1)
    bad[3, 0] = 0.5
    np.save(tmp_path / "p.npy", bad)
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "-m", "interactive", "--student",
                               str(tmp_path / "p.npy"))
    assert code == 2
    assert err == (f"Error: {tmp_path / 'p.npy'}: query 3 sums to 1.4, not 1 (student rows "
                   "must be probability vectors)\n")
    np.save(tmp_path / "p.npy", np.full((20, 3), 1 / 3))
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "-m", "interactive", "--student",
                               str(tmp_path / "p.npy"))
    assert code == 2 and "has shape 20 x 3 but the votes are 20 queries x 10 classes" in err
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "-m", "interactive")
    assert code == 2 and "-m interactive needs --student FILE" in err


def test_interactive_cli_reports_outcomes(tmp_path, cli):
    votes, labels = votes_with_labels(queries=200)
    np.save(tmp_path / "v.npy", votes)
    np.save(tmp_path / "y.npy", labels)
    np.save(tmp_path / "p.npy", np.eye(10)[labels] * 0.95 + 0.005)
    code, out, _ = cli.analyze(str(tmp_path / "v.npy"), "-m", "interactive", "--student",
                               str(tmp_path / "p.npy"), "--labels", str(tmp_path / "y.npy"),
                               "-f", "json", "--per-query", str(tmp_path / "q.csv"))
    assert code == 0
    summary = json.loads(out)
    assert sum(summary["outcomes"].values()) == 200
    assert summary["accuracy_by_outcome"]["student"] == 1.0
    import pandas as pd

    table = pd.read_csv(tmp_path / "q.csv")
    assert set(table["outcome"]) <= {"teacher", "student", "abstain"}
    assert (table["outcome"] == "teacher").sum() == summary["outcomes"]["teacher"]


# --- SVT-PATE --------------------------------------------------------------------------------

def test_huge_margins_answer_everything_with_the_majority():
    votes = np.zeros((300, 4))
    votes[np.arange(300), np.arange(300) % 4] = 5000
    result = analyze_votes(votes, SVTPATE(scale=1.0, cutoff=5), delta=1e-5)
    assert result.svt.unstable == 0
    assert result.answered_total == 300
    np.testing.assert_array_equal(result.label, np.arange(300) % 4)


def test_ties_halt_after_the_cutoff():
    votes = np.tile([[5.0, 5.0, 0.0]], (200, 1))
    result = analyze_votes(votes, SVTPATE(scale=1.0, cutoff=7), delta=1e-5)
    unstable = result.columns["unstable"]
    assert result.svt.unstable == 7 == unstable.sum()
    assert result.answered_total <= 7 and np.all(result.label[np.flatnonzero(unstable)[-1]:] < 0)


def test_svt_seeds_reproduce_and_accounting_does_not_change_epsilon():
    votes, _ = votes_with_labels(queries=500, teachers=250)
    mechanism = SVTPATE(scale=1.0, cutoff=20)
    first = analyze_votes(votes, mechanism, seed=3)
    again = analyze_votes(votes, mechanism, seed=3, chunk_size=7)
    np.testing.assert_array_equal(first.label, again.label)
    assert first.svt == again.svt
    expected = analyze_votes(votes, mechanism, seed=3, accounting="expected")
    assert expected.epsilon == first.epsilon == first.epsilon_data_independent


# --- rounds, query indices, external RDP ------------------------------------------------------

def test_rounds_compose_to_the_sum_of_their_parts():
    votes, labels = votes_with_labels(queries=600)
    student = np.eye(10)[labels] * 0.9 + 0.01
    first = ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40)
    second = InteractiveGNMax(threshold=200, sigma_threshold=150, sigma=40, confidence=0.9,
                              teachers=250)
    rounds = [Round(rows=np.arange(0, 300), mechanism=first),
              Round(rows=np.arange(300, 600), mechanism=second, student=student)]
    composed = analyze_rounds(votes, rounds, accounting="expected")
    alone = [analyze_votes(votes[:300], first, accounting="expected"),
             analyze_votes(votes[300:], second, student=student[300:], accounting="expected")]
    np.testing.assert_allclose(composed.rdp_total, alone[0].rdp_total + alone[1].rdp_total,
                               rtol=1e-12)
    assert composed.queries == 600
    assert math.isclose(composed.rounds[0].epsilon, alone[0].epsilon, rel_tol=1e-9)


def test_rounds_cli(tmp_path, cli):
    votes, labels = votes_with_labels(queries=100)
    np.save(tmp_path / "v.npy", votes)
    np.save(tmp_path / "p.npy", np.eye(10)[labels] * 0.9 + 0.01)
    (tmp_path / "r.csv").write_text("rows,mechanism,student\n0:50,confident,\n"
                                    "50:100,interactive,p.npy\n")
    code, out, _ = cli.analyze(str(tmp_path / "v.npy"), "--rounds", str(tmp_path / "r.csv"),
                               "-f", "json")
    assert code == 0
    summary = json.loads(out)
    assert [r["mechanism"] for r in summary["rounds"]] == ["confident", "interactive"]
    (tmp_path / "bad.csv").write_text("rows,mechanism\n0:500,confident\n")
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "--rounds", str(tmp_path / "bad.csv"))
    assert code == 2 and "rows 0 to 499 but" in err
    # a range is checked before it is formed (0:9999999999 allocated 74.5 GiB, exit 1); a
    # negative row of a JSON list counted from the end
    for rows, shown in (('"0:9999999999"', "rows 0 to 9999999998"),
                        ('"0:99999999999999999999"', "rows 0 to 99999999999999999998"),
                        ("[3, -1]", "rows -1 to 3")):
        (tmp_path / "big.json").write_text(f'[{{"rows": {rows}, "mechanism": "gnmax"}}]')
        code, _, err = cli.analyze(str(tmp_path / "v.npy"), "--rounds",
                                   str(tmp_path / "big.json"))
        assert code == 2 and f"{shown} but" in err and err.count("\n") == 1, err


def test_query_indices_analyse_those_rows_in_that_order(tmp_path, cli):
    votes, _ = votes_with_labels(queries=50)
    order = np.array([7, 3, 41, 0, 19])
    mechanism = GNMax(sigma=40)
    picked = analyze_votes(votes, mechanism, query_indices=order, accounting="expected")
    direct = analyze_votes(votes[order], mechanism, accounting="expected")
    np.testing.assert_array_equal(picked.epsilon_cumulative, direct.epsilon_cumulative)
    np.testing.assert_array_equal(picked.query_index, order)
    with pytest.raises(ValueError, match="listed twice"):
        analyze_votes(votes, mechanism, query_indices=np.array([1, 2, 1]))
    np.save(tmp_path / "v.npy", votes)
    (tmp_path / "i.txt").write_text("3\n3\n")
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "--query-indices",
                               str(tmp_path / "i.txt"))
    assert code == 2 and err == (f"Error: {tmp_path / 'i.txt'}: query index 3 is listed "
                                 "twice (entry 1)\n")  # named by its file
    (tmp_path / "r.csv").write_text("rows,mechanism,sigma\n0:3,gnmax,40\n3:6,gnmax,-3\n")
    code, _, err = cli.analyze(str(tmp_path / "v.npy"), "--rounds", str(tmp_path / "r.csv"))
    assert code == 2 and err == (f"Error: {tmp_path / 'r.csv'}: round 1: sigma must be "
                                 "positive, got -3\n")  # named by its file and round


def test_add_rdp_uses_the_next_larger_order(tmp_path, cli):
    votes, _ = votes_with_labels(queries=30)
    np.save(tmp_path / "v.npy", votes)
    (tmp_path / "gan.csv").write_text("order,rdp\n3,0.5\n8,1.0\n")
    code, out, err = cli.analyze(str(tmp_path / "v.npy"), "-m", "gnmax", "--orders",
                                 "2,3,5,8,10", "-f", "json", "--accounting", "expected",
                                 "--per-query", str(tmp_path / "q.csv"))
    base = json.loads(out)
    code, out, err = cli.analyze(str(tmp_path / "v.npy"), "-m", "gnmax", "--orders",
                                 "2,3,5,8,10", "-f", "json", "--accounting", "expected",
                                 "--add-rdp", str(tmp_path / "gan.csv"))
    assert code == 0
    added = json.loads(out)
    assert added["add_rdp"]["note"] and "next larger order" in err
    # Orders 2, 3 take 0.5; 5, 8 take 1.0; 10 is above the file: infinite, never chosen.
    from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax

    rdp = rdp_gnmax(log_q_gnmax(votes, sigma=40.0), sigma=40.0,
                    orders=[2.0, 3, 5, 8, 10]).sum(axis=0)
    curve = rdp + np.array([0.5, 0.5, 1.0, 1.0, np.inf])
    eps = curve + np.log(1e5) / (np.array([2.0, 3, 5, 8, 10]) - 1)
    assert math.isclose(added["epsilon"], eps.min(), rel_tol=1e-12)
    assert added["epsilon"] > base["epsilon"]


def test_a_votes_archive_gives_its_own_student(tmp_path):
    """A .npz of arrays votes and student (as the input formats list them) runs
    Interactive-GNMax without --student, as --student would; its rows are checked."""
    import pate_cli
    votes, _ = votes_with_labels(queries=60)
    student = np.full(votes.shape, 1.0 / votes.shape[1])
    student[::3, 0] += 0.5
    student /= student.sum(axis=1, keepdims=True)
    np.savez(tmp_path / "v.npz", votes=votes, student=student)
    np.save(tmp_path / "p.npy", student)
    own = pate_cli.analyze(str(tmp_path / "v.npz"), "interactive", per_query=False)
    given = pate_cli.analyze(votes, "interactive", student=str(tmp_path / "p.npy"),
                             per_query=False)
    assert own.to_dict()["epsilon"] == given.to_dict()["epsilon"]
    assert own.to_dict()["outcomes"] == given.to_dict()["outcomes"]
    student[5, 0] += 0.5
    np.savez(tmp_path / "bad.npz", votes=votes, student=student)
    with pytest.raises(InputError, match="query 5 sums to"):
        pate_cli.analyze(str(tmp_path / "bad.npz"), "interactive")
