"""A ``VoteSet`` given to the API is checked as a file's votes are: one built by hand
against its own M, and any against a smaller ``teachers`` (a row above M would be charged
as if each teacher moved one vote: an under-charge)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import pate_cli
from pate_cli.analysis import read_votes
from pate_cli.errors import InputError
from pate_cli.inputs import VoteSet, load_votes

VOTES = np.array([[8, 2, 0], [6, 4, 0]] * 50)
CONFIDENT = dict(threshold=7, sigma_threshold=2, sigma=2, per_query=False)


def by_hand(votes, teachers) -> VoteSet:
    return VoteSet(votes=votes, teachers=teachers, path=None, sha256=None)


def test_a_hand_built_vote_set_above_its_teachers_is_refused():
    with pytest.raises(InputError, match="query 0 has 10 votes, more than --teachers 5"):
        pate_cli.analyze(by_hand(VOTES, 5), "confident", **CONFIDENT)


def test_a_hand_built_vote_set_within_its_teachers_gives_the_array_s_figure():
    assert (pate_cli.analyze(by_hand(VOTES, 10), "confident", **CONFIDENT).epsilon
            == pate_cli.analyze(VOTES, "confident", **CONFIDENT).epsilon)


@pytest.mark.parametrize("make", ["array", "file", "sparse"])
def test_teachers_below_a_loaded_set_s_rows_is_refused(make, tmp_path):
    if make == "file":
        np.save(tmp_path / "v.npy", VOTES)
        vote_set = load_votes(str(tmp_path / "v.npy"))
    elif make == "sparse":
        vote_set = read_votes(scipy.sparse.csr_matrix(VOTES))
    else:
        vote_set = read_votes(VOTES)
    with pytest.raises(InputError, match="more than --teachers 9"):
        pate_cli.analyze(vote_set, "confident", teachers=9, **CONFIDENT)
    assert pate_cli.analyze(vote_set, "confident", teachers=12, **CONFIDENT).teachers == 12


def test_hand_built_sparse_and_predicted_sets_are_checked(tmp_path):
    sparse = read_votes(scipy.sparse.csr_matrix(VOTES))
    with pytest.raises(InputError, match="more than --teachers 4"):
        read_votes(by_hand(sparse.votes, 4))
    predictions = np.tile(np.array([[0, 0, 1, 1, 2]]), (20, 1))
    predicted = read_votes(predictions=predictions)
    with pytest.raises(InputError, match="more than --teachers 3"):
        read_votes(VoteSet(votes=predicted.votes, teachers=3, path=None, sha256=None,
                           predictions=predictions))


def test_a_hand_built_vote_set_is_checked_by_the_audit():
    with pytest.raises(InputError, match="more than --teachers 5"):
        pate_cli.audit(by_hand(VOTES, 5), "gnmax", sigma=2.0, draws=1000)


def test_no_mark_carries_a_check_to_other_votes_or_a_smaller_m():
    """What was checked is the votes object at an M: ``replace`` with a smaller M, or a
    hand-built set with a loader's predictions beside other votes, is checked again."""
    import dataclasses

    loaded = read_votes(VOTES)
    with pytest.raises(InputError, match="more than --teachers 5"):
        pate_cli.analyze(dataclasses.replace(loaded, teachers=5), "confident", **CONFIDENT)
    with pytest.raises(InputError, match="more than --teachers 5"):
        pate_cli.audit(dataclasses.replace(loaded, teachers=5), "gnmax", sigma=2.0,
                       draws=1000)
    predictions = np.zeros((100, 5), dtype=np.int64)
    with pytest.raises(InputError, match="more than --teachers 5"):
        read_votes(VoteSet(votes=VOTES, teachers=5, path=None, sha256=None,
                           predictions=predictions))
    assert pate_cli.analyze(dataclasses.replace(loaded, teachers=12), "confident",
                            **CONFIDENT).teachers == 12


def test_hand_built_sparse_counts_and_teachers_are_checked():
    import dataclasses

    sparse = read_votes(scipy.sparse.csr_matrix(VOTES)).votes
    negative = dataclasses.replace(sparse, data=np.where(np.arange(sparse.data.size) == 0,
                                                         -4.0, sparse.data))
    with pytest.raises(InputError, match="negative or not finite"):
        read_votes(by_hand(negative, 10))
    for teachers in (float("nan"), float("inf"), 1e20):
        with pytest.raises(InputError, match="--teachers"):
            read_votes(by_hand(VOTES, teachers))
