"""A result's per-query table is a second pass over the votes: votes changed since the
run was analysed (a caller's array written, a vote file rewritten) are refused there, not
read into a table that is not the run's (it had been silently different, and a shorter
rewritten file killed the interpreter with SIGBUS)."""

from __future__ import annotations

import numpy as np
import pytest

import pate_cli
from pate_cli.errors import InputError
from tests import SAMPLES

VOTES = np.load(SAMPLES / "mnist_250_votes.npy")[:640]


def test_an_array_written_after_the_run_is_refused_by_its_table():
    votes = VOTES.copy()
    result = pate_cli.analyze(votes, accounting="expected")
    table = result.to_frame()
    assert len(table) == 640 and result.to_frame().equals(table)  # unchanged: read again
    votes[:, 0], votes[:, 1:] = 250, 0
    with pytest.raises(InputError, match="the vote array: changed since the run was "
                                         "analysed"):
        result.to_frame()
    assert result.epsilon > 0 and result.to_dict()["epsilon"] == result.epsilon  # totals kept


@pytest.mark.parametrize("rows", [640, 100])
def test_a_vote_file_rewritten_after_the_run_is_refused_by_its_table(tmp_path, rows):
    path = tmp_path / "votes.npy"
    np.save(path, VOTES)
    result = pate_cli.analyze(str(path), accounting="expected")
    np.save(path, VOTES[::-1][:rows].copy())
    with pytest.raises(InputError, match="votes.npy: changed since the run was analysed"):
        list(result.iter_frames())


def test_votes_read_into_memory_from_a_file_need_no_check(tmp_path):
    path = tmp_path / "votes.csv"
    np.savetxt(path, VOTES, delimiter=",", fmt="%d")
    result = pate_cli.analyze(str(path), accounting="expected")
    path.write_text("1,2\n")
    assert len(result.to_frame()) == 640  # the parsed rows, as analysed
