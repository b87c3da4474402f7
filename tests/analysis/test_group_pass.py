"""An individualized run's group accounting is a consumer of the run's one pass
(math:individualized): every query replayed once, the figures independent of the chunks,
and under expected accounting the answers before the stop the bits of the run analysed
up to the stop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting import grouped
from pate_cli.analysis import analyze_individualized, analyze_votes, derive_parameters
from pate_cli.inputs import PrivacyGroups
from pate_cli.mechanisms import ConfidentGNMax

TEACHERS = 250
MECHANISM = ConfidentGNMax(threshold=150.0, sigma_threshold=40.0, sigma=20.0)
ORDERS = [1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0]


def votes(queries: int = 3000, classes: int = 10, seed: int = 44) -> np.ndarray:
    rng = np.random.default_rng(seed)
    agree = rng.beta(4.0, 1.5, queries)
    top = rng.integers(0, classes, queries)
    shares = rng.dirichlet(np.ones(classes), queries) * (1 - agree)[:, None]
    shares[np.arange(queries), top] += agree
    return rng.multinomial(TEACHERS, shares / shares.sum(axis=1, keepdims=True))


def run(counts, accounting="expected", budgets=(2.0, 4.0, 6.0), **options):
    parameters = derive_parameters(
        PrivacyGroups(names=("a", "b", "c"), budgets=np.array(budgets)), variant="upsampling")
    return analyze_individualized(counts, MECHANISM, parameters, accounting=accounting,
                                  teachers=float(TEACHERS), orders=ORDERS, delta=1e-5,
                                  per_query=False, **options)


def test_each_query_is_replayed_once(monkeypatch):
    """The group accounting reads the run's own pass: no replay of its own."""
    counts = votes()
    replayed = []
    original = ConfidentGNMax.replay

    def counting(self, block, **keywords):
        replayed.append((keywords["start"], block.shape[0]))
        return original(self, block, **keywords)

    monkeypatch.setattr(ConfidentGNMax, "replay", counting)
    result = run(counts, chunk_size=256)
    covered = np.zeros(counts.shape[0], dtype=int)
    for start, size in replayed:
        covered[start:start + size] += 1
    assert 0 < result.groups.stopped_at < counts.shape[0]
    np.testing.assert_array_equal(covered, 1)


COUNTS = votes()
REFERENCE = {accounting: run(COUNTS, accounting)
             for accounting in ("replay", "expected", "data-independent")}


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(REFERENCE)), st.integers(16, 4000), st.sampled_from([1, 2]))
def test_the_chunks_and_workers_change_no_figure(accounting, size, workers):
    """The pass's chunks (and so the consumer's) and the threads change no figure."""
    other, reference = run(COUNTS, accounting, chunk_size=size, workers=workers), \
        REFERENCE[accounting]
    assert other.groups == reference.groups
    assert (other.epsilon, other.order, other.answered_total) == (
        reference.epsilon, reference.order, reference.answered_total)
    assert other.counts == reference.counts


@pytest.mark.parametrize("window, limit", [(1 << 17, 1 << 20), (1 << 6, 1 << 4)])
def test_expected_answers_before_the_stop_are_the_runs_up_to_it(monkeypatch, window, limit):
    """Summed as the run analysed up to the stop sums them (small windows and tables:
    in several parts), bit for bit."""
    monkeypatch.setattr(grouped, "TOTALS_WINDOW", window)
    monkeypatch.setattr(grouped, "TABLE_LIMIT", limit)
    counts = votes()
    result = run(counts, chunk_size=128)
    stop = result.groups.stopped_at
    assert stop is not None and 0 < stop < counts.shape[0]
    upto = analyze_votes(counts, MECHANISM, accounting="expected", teachers=float(TEACHERS),
                         orders=ORDERS, delta=1e-5, queries=stop, per_query=False)
    assert result.answered_total == upto.answered_total
    assert result.answered_total < run(counts, budgets=(500.0, 600.0, 700.0)).answered_total


def test_a_consumer_is_refused_where_no_single_pass_feeds_it():
    with pytest.raises(ValueError, match="consumer"):
        analyze_votes(votes(100), MECHANISM, budget=5.0, consumer=print)
