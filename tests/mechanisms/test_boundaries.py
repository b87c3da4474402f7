"""Decisions at their boundaries, where seeded noise never lands (a stub noise source that
draws zeros puts a count, a probability or a distance exactly on a threshold), and choices
made on ties. A mutation review (R35) changed each of these comparisons (``>`` and ``>=``,
``<=`` and ``<``, first and last of a tie) and no test noticed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pate_cli
from pate_cli.decisions import SVT_STABLE, SVT_UNSTABLE
from pate_cli.mechanisms import NoiseSource
from pate_cli.mechanisms.aggregators import ConfidentGNMax, InteractiveGNMax
from pate_cli.mechanisms.sampled import parse_sampling
from pate_cli.mechanisms.svt import SVTPATE
from pate_cli.mechanisms.threshold import passes_threshold


class Zeros:
    """A noise source that draws 0 everywhere."""

    def draw(self, *, stream, kind, start, count, width=1):
        return np.zeros((count, width))


def test_a_noisy_count_equal_to_the_threshold_passes():
    """``count + N(0, sigma1^2) >= T`` (math:threshold): a count exactly at T passes."""
    mechanism = ConfidentGNMax(threshold=5, sigma_threshold=1, sigma=1)
    passed = passes_threshold(mechanism, np.array([[5.0, 0.0], [4.0, 1.0]]), noise=Zeros(),
                              start=0)
    assert passed.tolist() == [True, False]


def test_a_student_exactly_at_its_confidence_abstains():
    """Interactive-GNMax reinforces the student's label where ``max_j p_j > confidence``
    (strictly): at exactly 0.9 the query abstains."""
    mechanism = InteractiveGNMax(threshold=1e6, sigma_threshold=1, sigma=1, confidence=0.9,
                                 teachers=10)
    votes = np.array([[10, 0], [0, 10]] * 5)
    student = np.array([[0.9, 0.1], [0.05, 0.95]] * 5)
    made = mechanism.replay(votes, noise=NoiseSource(0), student=student)
    assert not made.answered.any()  # (T = 10^6: the teachers never answer)
    assert made.label.tolist() == [-1, 1] * 5  # 0.9: not above it; 0.95: the student's


def test_a_distance_equal_to_the_svt_threshold_is_unstable():
    """SVT-PATE answers where the noisy distance clears the noisy threshold (``>``); a
    distance equal to it is unstable (a new round, math:svt)."""
    mechanism = SVTPATE(scale=1.0, cutoff=5, threshold=2.0)
    made = mechanism.replay_distances(np.array([2.0, 3.0]), np.array([0, 0]), noise=Zeros())
    assert made.code.tolist() == [SVT_UNSTABLE, SVT_STABLE]


def test_sampling_without_replacement_moves_votes_whatever_vote_change_says():
    """A replaced unit's vote leaves one count and joins another, so sampling without
    replacement has the moving sensitivities whatever ``vote_change`` (which the run rules
    refuse as ``add`` there, but ``parse_sampling`` is public)."""
    sampling = parse_sampling("without-replacement:250/1000", vote_change="add")
    assert sampling.moves
    assert sampling.answer_sensitivity == math.sqrt(2.0)
    assert sampling.laplace_sensitivity() == 2.0
    poisson = parse_sampling("poisson:0.1", vote_change="add")
    assert (poisson.moves, poisson.answer_sensitivity, poisson.laplace_sensitivity()) == (
        False, 1.0, 1.0)


def test_a_query_index_equal_to_the_row_count_is_outside(cli, tmp_path):
    """Row numbers run 0 .. rows - 1: index 10 of 10 rows is refused in one line (it passed
    the check and failed later with a raw indexing error under a mutation, R35)."""
    votes = np.tile([8, 1, 1], (10, 1))
    with pytest.raises(pate_cli.InputError, match=r"query index 10 \(entry 1\) is outside 0\.\.9"):
        pate_cli.analyze(votes, "gnmax", query_indices=[0, 10])
    path = tmp_path / "v.npy"
    np.save(path, votes)
    (tmp_path / "q.csv").write_text("0\n10\n")
    result = cli.analyze(str(path), "-m", "gnmax", "--query-indices", str(tmp_path / "q.csv"))
    assert result.code == 2 and "query index 10 (entry 1) is outside 0..9" in result.err


def test_a_bound_for_any_run_without_a_pld_figure_is_named_rdp():
    """Where no PLD figure exists (Confident-Exponential's selection step), the bound for
    any run is the RDP one and says so: at equal figures it was named "pld" under a
    mutation (R35)."""
    from pate_cli.analysis.added_figures import any_run_bound
    votes = np.array([[100, 0, 0, 0], [40, 20, 20, 20]] * 100)
    result = pate_cli.analyze(votes, "confident-exponential", accounting="data-independent",
                              threshold=70, sigma_threshold=10, eta=0.05)
    assert result.epsilon_data_independent_worst_pld is None
    bound = any_run_bound(result)
    assert bound["method"] == "rdp" and bound["epsilon"] == bound["rdp"]


@pytest.mark.filterwarnings("ignore::pate_cli.errors.PateWarning")
def test_svt_auto_takes_the_smallest_cutoff_of_those_answering_most():
    """``--svt-cutoff auto`` keeps the first (smallest) cut-off among those answering the
    most (math:svt); cut-offs 1, 2 and 3 answer all 500 queries here."""
    result = pate_cli.analyze(np.tile([250, 0, 0], (500, 1)), "svt", target_epsilon=5.0,
                              svt_cutoff="auto")
    most = max(tried["answered"] for tried in result.svt.cutoffs_tried)
    ties = [tried["cutoff"] for tried in result.svt.cutoffs_tried if tried["answered"] == most]
    assert len(ties) > 1 and result.svt.cutoff == min(ties)
