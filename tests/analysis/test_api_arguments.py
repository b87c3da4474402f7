"""The Python API's arguments are checked as the command line's are: a wrong type or value
is a ``TypeError`` or ``ValueError`` (``InputError``, ``OptionError``) of one line, never an
``AttributeError`` from deep inside, and arrays pass the checks their files pass."""

from __future__ import annotations

import numpy as np
import pytest

import pate_cli
from pate_cli.analysis import analyze_votes
from pate_cli.errors import InputError, OptionError

VOTES = np.random.default_rng(0).multinomial(20, [0.6, 0.2, 0.1, 0.05, 0.05], size=50)


@pytest.mark.parametrize("student, message", [
    (np.full((50, 5), 0.5), "the student array: query 0 sums to 2.5, not 1"),
    (np.full((50, 5), -1.0), "the student array: query 0, class 0 is negative"),
    (np.full((50, 5), np.nan), "the student array: query 0, class 0 is not finite"),
    (np.full((49, 5), 0.2), "the student array: has shape 49 x 5 but the votes are 50"),
])
def test_a_student_array_is_checked_as_a_student_file_is(student, message):
    """It was taken as it was: rows summing to 2.5 or negative gave a run, NaN a message
    about log q."""
    with pytest.raises(InputError, match=message):
        pate_cli.analyze(VOTES, "interactive", student=student)


def test_a_student_given_as_lists_is_the_array():
    student = np.full((50, 5), 0.2)
    assert (pate_cli.analyze(VOTES, "interactive", student=student.tolist()).epsilon
            == pate_cli.analyze(VOTES, "interactive", student=student).epsilon)


@pytest.mark.parametrize("call, kind, message", [
    (lambda: pate_cli.analyze(VOTES, None), TypeError, "mechanism must be a name or a "
                                                       "mechanism, got None"),
    (lambda: pate_cli.analyze(VOTES, 3), TypeError, "got 3"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", executor=5), TypeError,
     "executor must be a concurrent.futures executor or a distributed.Client, got 5"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", teachers="20"), InputError,
     "--teachers must be a positive number, got '20'"),
    (lambda: pate_cli.load_votes(VOTES, classes="3"), OptionError,
     "--classes must be a whole number of at least 2, got '3'"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", budget="2"), OptionError,
     "--budget must be a positive number, got '2'"),  # was "must be real number, not str"
    (lambda: pate_cli.analyze(VOTES, "gnmax", workers="2"), OptionError,
     "--workers must be a whole number of at least 1, got '2'"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", progress=5), OptionError,
     "progress must be a function of .done, total., got 5"),
])
def test_a_wrong_argument_is_one_clear_error(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


def test_analyze_votes_takes_rows_as_lists():
    mechanism = pate_cli.GNMax(sigma=10.0)
    assert (analyze_votes(VOTES.tolist(), mechanism, per_query=False).epsilon
            == analyze_votes(VOTES, mechanism, per_query=False).epsilon)


@pytest.mark.parametrize("options, message", [
    ({"queries": 10**6}, "--queries 1000000 is larger than the 50 queries in the vote array"),
    ({"labels": np.zeros(3, dtype=int)}, "has 3 labels but the vote array has 50 queries"),
    ({"query_indices": np.ones(50, dtype=bool)}, "must be integer row numbers, got bool"),
])
def test_messages_about_an_array_name_it_not_none(options, message):
    with pytest.raises(ValueError, match=message):
        pate_cli.analyze(VOTES, "gnmax", **options)


def test_query_indices_as_a_list_or_a_range_are_row_numbers():
    assert pate_cli.analyze(VOTES, "gnmax", query_indices=[0, 2]).queries == 2
    assert pate_cli.analyze(VOTES, "gnmax", query_indices=range(5)).queries == 5


def test_a_boolean_mask_file_is_not_row_numbers(tmp_path):
    from pate_cli.inputs.query_indices import load_query_indices
    np.save(tmp_path / "mask.npy", np.ones(10, dtype=bool))
    with pytest.raises(InputError, match="holds true/false values .a mask., not row numbers"):
        load_query_indices(tmp_path / "mask.npy")
