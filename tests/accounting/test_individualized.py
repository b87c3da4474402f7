"""Individualized PATE (math:individualized): parameters, histograms, per-group costs and the
stopping rule, against pate_cli.analysis and hand-derived values."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
from pate_cli.accounting.individualized import (
    CostChunk,
    CurveSetting,
    group_costs,
    group_weights,
    rdp_individual,
    upsampling_factors,
    vanishing_costs,
    vanishing_frequencies,
)
from pate_cli.accounting.threshold import log_pr_answered, rdp_threshold
from pate_cli.analysis import analyze_votes, derive_parameters
from pate_cli.inputs import PrivacyGroups
from pate_cli.mechanisms import (
    NOISE_BLOCK,
    ConfidentGNMax,
    GNMax,
    NoiseSource,
    vanishing_participation,
    vanishing_votes,
    weighted_histogram,
)
from tests.accounting.group_history import AccountedGroups, account_groups

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0, 100.0])
DELTA = 1e-5
CLASSES = 4
GROUP_SIZES = (10, 8, 6)
TEACHER_GROUPS = np.repeat(np.arange(3), GROUP_SIZES)
TEACHERS = TEACHER_GROUPS.size


def make_predictions(seed=0, queries=400, teachers=TEACHERS, classes=CLASSES):
    """Teacher predictions whose agreement varies from query to query; a few -1."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(classes, size=queries)
    skill = rng.uniform(0.2, 1.0, size=queries)
    right = rng.random((queries, teachers)) < skill[:, None]
    noise = rng.integers(classes, size=(queries, teachers))
    predictions = np.where(right, truth[:, None], noise)
    predictions[rng.random((queries, teachers)) < 0.01] = -1
    return predictions


MECHANISMS = [GNMax(sigma=3.0),
              ConfidentGNMax(threshold=15.0, sigma_threshold=4.0, sigma=3.0)]


def curve_setting(mechanism):
    """The mechanism's curves on ORDERS."""
    return CurveSetting(sigma=mechanism.sigma, orders=ORDERS,
                        sigma_threshold=getattr(mechanism, "sigma_threshold", None))


def statistics(block, mechanism, noise, start, accounting):
    """What the owner's analysis would hand to the builders for one chunk: ``log q`` and
    the per-query keywords (the curves' setting is :func:`curve_setting`)."""
    decisions = mechanism.replay(block, noise=noise, start=start)
    log_q = log_q_gnmax(block, sigma=mechanism.sigma)
    kwargs = {"answered": decisions.answered}
    if isinstance(mechanism, ConfidentGNMax):
        log_pr = log_pr_answered(block.max(axis=1), threshold=mechanism.threshold,
                                 sigma_threshold=mechanism.sigma_threshold)
        kwargs.update(log_pr_answered=log_pr)
        if accounting == "expected":
            kwargs["charge"] = np.exp(log_pr)
    return log_q, kwargs


def individualized_run(variant, mechanism, accounting, *, predictions, budgets, seed=3,
                       chunk=97, frequencies=None):
    """Histogram for the variant, replay per chunk, costs, and per-group accounting."""
    budgets = np.asarray(budgets, dtype=float)
    member_groups = None
    sensitivities = None
    if variant == "upsampling":
        sensitivities = upsampling_factors(budgets).astype(float)
        votes = weighted_histogram(predictions, classes=CLASSES)
    elif variant == "weighting":
        sensitivities = group_weights(budgets, TEACHER_GROUPS)
        votes = weighted_histogram(predictions, sensitivities[TEACHER_GROUPS], classes=CLASSES)
    else:
        if frequencies is None:
            frequencies = vanishing_frequencies(budgets)
        vanishing = vanishing_votes(predictions, frequencies=frequencies[TEACHER_GROUPS],
                                    seed=seed, classes=CLASSES)
        votes = vanishing.votes
        member_groups = TEACHER_GROUPS
    noise = NoiseSource(seed)
    chunks = []
    for start in range(0, votes.shape[0], chunk):
        block = votes[start : start + chunk]
        log_q, kwargs = statistics(block, mechanism, noise, start, accounting)
        if variant == "vanishing":
            part = vanishing.participation[start : start + chunk]
            chunks.append(vanishing_costs(log_q, curve_setting(mechanism), participation=part,
                                          **kwargs))
        else:
            chunks.append(group_costs(log_q, curve_setting(mechanism),
                                      sensitivities=sensitivities, **kwargs))
    result = account_groups(chunks, AccountedGroups(budgets, member_groups=member_groups,
                                                    sensitivities=sensitivities),
                            orders=ORDERS, delta=DELTA)
    return result, votes


def first_above(values, limit):
    over = np.flatnonzero(values > limit)
    return int(over[0]) if over.size else None


# --- reduction to the standard analysis ------------------------------------------------------


@pytest.mark.parametrize("variant", ["upsampling", "weighting", "vanishing"])
@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.name)
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_equal_budgets_reduce_to_the_standard_analysis(variant, mechanism, accounting):
    predictions = make_predictions()
    plain = weighted_histogram(predictions, classes=CLASSES)
    standard = analyze_votes(plain, mechanism, accounting=accounting, orders=ORDERS,
                             delta=DELTA, seed=3, teachers=TEACHERS)
    budget = float(standard.epsilon_cumulative[150])
    result, votes = individualized_run(variant, mechanism, accounting, predictions=predictions,
                                       budgets=[budget] * 3)
    np.testing.assert_array_equal(votes, plain)
    for g in range(3):
        np.testing.assert_array_equal(result.cumulative_epsilon[:, g],
                                      standard.epsilon_cumulative)
        np.testing.assert_array_equal(result.cumulative_order[:, g], standard.order_cumulative)
    np.testing.assert_array_equal(result.baseline_epsilon, standard.epsilon_cumulative)
    stop = first_above(standard.epsilon_cumulative, budget)
    assert stop is not None and stop > 150
    assert result.stopped_at == stop == result.baseline_stopped_at
    assert result.exhausted_at == (stop,) * 3
    assert result.labels_released == result.baseline_labels == int(
        np.count_nonzero(standard.label[:stop] >= 0))
    assert result.answered_total == int(np.count_nonzero(standard.label >= 0))
    np.testing.assert_array_equal(result.epsilon, standard.epsilon_cumulative[stop - 1])


def test_chunking_does_not_change_anything():
    predictions = make_predictions(seed=5, queries=300)
    budgets = [0.8, 1.6, 2.4]
    mechanism = MECHANISMS[1]
    runs = [individualized_run("vanishing", mechanism, "replay", predictions=predictions,
                               budgets=budgets, chunk=size)[0] for size in (300, 64, 7)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.cumulative_epsilon, runs[0].cumulative_epsilon)
        np.testing.assert_array_equal(other.cumulative_order, runs[0].cumulative_order)
        assert other.stopped_at == runs[0].stopped_at
        assert other.exhausted_at == runs[0].exhausted_at


# --- parameters ------------------------------------------------------------------------------


@pytest.mark.parametrize("budgets, factors", [
    ((1.0, 2.0, 3.0), (1, 2, 3)),
    ((0.5, 0.75), (2, 3)),
    ((math.log(2), math.log(8)), (1, 3)),
    ((2.0, 2.0), (1, 1)),
    ((3.0, 1.0, 2.0), (3, 1, 2)),
])
def test_upsampling_factors(budgets, factors):
    result = upsampling_factors(budgets)
    assert result.dtype.kind == "i"
    assert tuple(result) == factors


def test_upsampling_precision_limits_the_denominators():
    # 1.2345 is 2469/2000 exactly; the closest fractions with denominators up to 100 and
    # 1000 are 100/81 and 458/371.
    assert tuple(upsampling_factors([1.0, 1.2345], precision=2)) == (81, 100)
    assert tuple(upsampling_factors([1.0, 1.2345], precision=3)) == (371, 458)
    assert tuple(upsampling_factors([1.0, 1.2345], precision=4)) == (2000, 2469)


def test_weights_sum_to_the_number_of_teachers():
    budgets = [0.7, 1.9, 2.6]
    weights = group_weights(budgets, TEACHER_GROUPS)
    assert weights[TEACHER_GROUPS].sum() == pytest.approx(TEACHERS, rel=1e-14)
    np.testing.assert_allclose(weights / weights[0], np.array(budgets) / budgets[0])
    np.testing.assert_array_equal(group_weights([0.1, 0.1, 0.1], TEACHER_GROUPS), 1.0)


def test_appendix_c_weights_by_hand():
    # Three teachers at budget 1, one at budget 3: the mean budget over teachers is 1.5.
    groups = np.array([0, 0, 0, 1])
    np.testing.assert_allclose(group_weights([1.0, 3.0], groups), [2 / 3, 2.0], rtol=1e-15)
    # Algorithm 2 as printed: w_g = k eps_g n_g / sum eps_l n_l = 4 * (3, 3) / 6.
    np.testing.assert_allclose(group_weights([1.0, 3.0], groups, rule="group-size"),
                               [2.0, 2.0], rtol=1e-15)
    with pytest.raises(ValueError, match="rule"):
        group_weights([1.0, 3.0], groups, rule="size")


def test_paper_parameter_examples():
    # Appendix C: budget ratio c -> duplicates (1, c) and frequencies (1/c^2, 1) (1/c^4 in
    # the paper's experiments, power=4).
    for c in (2.0, 3.0, 4.0):
        assert tuple(upsampling_factors([1.0, c])) == (1, int(c))
        np.testing.assert_allclose(vanishing_frequencies([1.0, c]), [1 / c**2, 1.0])
        np.testing.assert_allclose(vanishing_frequencies([1.0, c], power=4), [1 / c**4, 1.0])


def test_appendix_b_example_three_quarters_of_the_teachers_vote():
    # "if the higher budget is twice the lower, the higher-budget teachers always vote,
    # the others in half of the votings, and 3/4 of all teachers vote in each voting"
    frequencies = vanishing_frequencies([1.0, 2.0], power=1)
    groups = np.repeat([0, 1], 8)
    mask = vanishing_participation(frequencies[groups], seed=11, count=3000)
    assert np.all(mask.sum(axis=1) == 12)
    assert np.all(mask[:, 8:])
    np.testing.assert_allclose(mask[:, :8].mean(axis=0), 0.5, atol=0.01)


# --- histograms ------------------------------------------------------------------------------


def test_weighted_histogram_by_hand():
    predictions = np.array([[0, 1, 1, -1], [2, 2, 0, 2]])
    weights = np.array([0.5, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(weighted_histogram(predictions, weights, classes=3),
                                  [[0.5, 3.0, 0.0], [2.0, 0.0, 5.5]])
    np.testing.assert_array_equal(weighted_histogram(predictions, classes=3),
                                  [[1, 2, 0], [1, 0, 3]])
    per_query = np.array([[1.0, 1.0, 0.0, 1.0], [0.0, 3.0, 1.0, 1.0]])
    np.testing.assert_array_equal(weighted_histogram(predictions, per_query, classes=3),
                                  [[1.0, 1.0, 0.0], [1.0, 0.0, 4.0]])


def test_vanishing_votes_are_rescaled_to_all_teachers():
    predictions = make_predictions(queries=200)
    frequencies = vanishing_frequencies([1.0, 2.0, 3.0])[TEACHER_GROUPS]
    result = vanishing_votes(predictions, frequencies=frequencies, seed=4, classes=CLASSES)
    taking = result.participation.sum(axis=1)
    np.testing.assert_array_equal(result.scale, TEACHERS / taking)
    kept = np.where(result.participation, predictions, -1)
    expected = weighted_histogram(kept, classes=CLASSES) * (TEACHERS / taking)[:, None]
    np.testing.assert_array_equal(result.votes, expected)
    voted = (kept >= 0).sum(axis=1)
    np.testing.assert_allclose(result.votes.sum(axis=1), TEACHERS * voted / taking)


# --- vanishing participation ------------------------------------------------------------------


def test_participation_is_reproducible_and_chunk_invariant():
    frequencies = vanishing_frequencies([1.0, 2.0, 3.0])[TEACHER_GROUPS]
    count = 2 * NOISE_BLOCK + 300
    whole = vanishing_participation(frequencies, seed=9, count=count)
    np.testing.assert_array_equal(whole, vanishing_participation(frequencies, seed=9,
                                                                 count=count))
    for size in (1000, 333, NOISE_BLOCK):
        pieces = [vanishing_participation(frequencies, seed=9, start=s,
                                          count=min(size, count - s))
                  for s in range(0, count, size)]
        np.testing.assert_array_equal(np.concatenate(pieces), whole)
    assert not np.array_equal(whole, vanishing_participation(frequencies, seed=10,
                                                             count=count))


@pytest.mark.parametrize("budgets, power", [((1.0, 2.0, 3.0), 2), ((0.3, 1.1, 2.9), 2),
                                             ((1.0, 1.5, 4.0), 4), ((1.0, 2.0, 2.0), 1)])
def test_participating_teachers_vary_by_at_most_one(budgets, power):
    frequencies = vanishing_frequencies(budgets, power=power)[TEACHER_GROUPS]
    count = 3 * NOISE_BLOCK
    mask = vanishing_participation(frequencies, seed=2, count=count)
    taking = mask.sum(axis=1)
    assert taking.max() - taking.min() <= 1
    expected = frequencies.sum()
    assert math.floor(expected) <= taking.min() and taking.max() <= math.ceil(expected)
    assert taking.mean() == pytest.approx(expected, abs=0.01)
    # every teacher takes part at its frequency (low-discrepancy schedule in each block)
    np.testing.assert_allclose(mask.mean(axis=0), frequencies, atol=0.01)


def test_a_group_that_never_takes_part_spends_nothing():
    predictions = make_predictions(queries=300)
    frequencies = np.array([0.0, 0.6, 1.0])
    result, _ = individualized_run("vanishing", MECHANISMS[1], "replay",
                                   predictions=predictions, budgets=[0.5, 1.0, 2.0],
                                   frequencies=frequencies)
    assert np.all(result.cumulative_epsilon[:, 0] == 0.0)
    assert np.all(np.isnan(result.cumulative_order[:, 0]))
    assert result.exhausted_at[0] is None
    assert np.all(result.cumulative_epsilon[-1, 1:] > 0)


def test_vanishing_group_reports_its_worst_off_teacher():
    predictions = make_predictions(queries=250)
    mechanism = MECHANISMS[1]
    frequencies = vanishing_frequencies([1.0, 1.5, 2.0])[TEACHER_GROUPS]
    vanishing = vanishing_votes(predictions, frequencies=frequencies, seed=1, classes=CLASSES)
    log_q, kwargs = statistics(vanishing.votes, mechanism, NoiseSource(1), 0, "replay")
    costs = vanishing_costs(log_q, curve_setting(mechanism),
                            participation=vanishing.participation, **kwargs)
    result = account_groups(costs, AccountedGroups([1.0, 1.5, 2.0],
                                                   member_groups=TEACHER_GROUPS),
                            orders=ORDERS, delta=DELTA)
    # brute force: a teacher pays the sensitivity-(k/|S_q|) curve of each query it joined
    log_pr, answered = kwargs["log_pr_answered"], kwargs["answered"]
    per_query = np.stack([
        rdp_threshold(log_pr[q], sigma_threshold=4.0 / d, orders=ORDERS)
        + answered[q] * rdp_gnmax(log_q[q], sigma=3.0 / d, orders=ORDERS)
        for q, d in enumerate(vanishing.scale)])
    teacher_rdp = np.cumsum(vanishing.participation.T[:, :, None] * per_query[None], axis=1)
    teacher_eps, _ = rdp_to_epsilon(teacher_rdp, orders=ORDERS, delta=DELTA)
    teacher_eps[~np.logical_or.accumulate(vanishing.participation.T, axis=1)] = 0.0
    for g in range(3):
        worst = teacher_eps[TEACHER_GROUPS == g].max(axis=0)
        np.testing.assert_allclose(result.cumulative_epsilon[:, g], worst, rtol=1e-12)
    # teachers of the always-voting group all pay the same; the others differ
    last = teacher_eps[:, -1]
    assert np.ptp(last[TEACHER_GROUPS == 2]) == 0.0
    assert np.ptp(last[TEACHER_GROUPS == 0]) > 0.0


# --- sensitivity D: data-independent and data-dependent halves -------------------------------


def test_sensitivity_d_data_independent_side_is_noise_over_d():
    # Paper Table 2 / Theorem 1: a point with sensitivity u pays (alpha, u^2 alpha / sigma^2)
    # for each GNMax answer; the selection step pays u^2 alpha / (2 sigma1^2).
    sigma, sigma1 = 40.0, 150.0
    for d in (1.0, 2.0, 3.0, 0.7):
        gn = rdp_individual(np.zeros(2), CurveSetting(sigma=sigma, orders=ORDERS,
                                                      data_independent=True),
                            sensitivities=[d])
        np.testing.assert_allclose(gn[0], np.broadcast_to(d**2 * ORDERS / sigma**2, (2, 9)),
                                   rtol=1e-14)
        np.testing.assert_allclose(gn[0, 0], rdp_gnmax_data_independent(sigma=sigma / d,
                                                                         orders=ORDERS))
        conf = rdp_individual(np.zeros(2), CurveSetting(sigma=sigma, orders=ORDERS,
                                                        sigma_threshold=sigma1,
                                                        data_independent=True),
                              sensitivities=[d], charge=np.array([1.0, 0.0]))
        np.testing.assert_allclose(conf[0, 0], d**2 * ORDERS * (1 / sigma**2 + 0.5 / sigma1**2),
                                   rtol=1e-14)
        np.testing.assert_allclose(conf[0, 1], d**2 * ORDERS * 0.5 / sigma1**2, rtol=1e-14)


def test_sensitivity_d_data_dependent_side_uses_the_real_q():
    sigma, d = 40.0, 2.0
    votes = np.array([[200.0, 30.0, 20.0], [230.0, 15.0, 5.0]])
    log_q_real = log_q_gnmax(votes, sigma=sigma)
    ours = rdp_individual(log_q_real, CurveSetting(sigma=sigma, orders=ORDERS),
                          sensitivities=[d])[0]
    np.testing.assert_array_equal(ours, rdp_gnmax(log_q_real, sigma=sigma / d, orders=ORDERS))
    # the data-dependent bound is in force (below the data-independent one) ...
    assert np.all(ours[:, :4] < ORDERS[:4] * d**2 / sigma**2)
    # ... and the q of the sigma/D mechanism would give a different (smaller) number
    log_q_scaled = log_q_gnmax(votes, sigma=sigma / d)
    wrong = rdp_gnmax(log_q_scaled, sigma=sigma / d, orders=ORDERS)
    assert np.all(log_q_scaled < log_q_real)
    assert np.all(wrong[:, :4] < ours[:, :4])


def test_sensitivity_d_selection_uses_the_real_pr_answered():
    sigma, sigma1, threshold, d = 40.0, 20.0, 150.0, 2.0
    votes = np.array([[240.0, 6.0, 4.0], [210.0, 30.0, 10.0], [195.0, 40.0, 15.0]])
    log_q = log_q_gnmax(votes, sigma=sigma)
    log_pr = log_pr_answered(votes.max(axis=1), threshold=threshold, sigma_threshold=sigma1)
    charge = np.array([1.0, 0.0, 0.3])
    ours = rdp_individual(log_q, CurveSetting(sigma=sigma, orders=ORDERS,
                                              sigma_threshold=sigma1),
                          sensitivities=[d, 1.0], log_pr_answered=log_pr, charge=charge)
    selection = rdp_threshold(log_pr, sigma_threshold=sigma1 / d, orders=ORDERS)
    answer = rdp_gnmax(log_q, sigma=sigma / d, orders=ORDERS)
    np.testing.assert_allclose(ours[0], selection + charge[:, None] * answer, rtol=1e-15)
    # the data-dependent selection bound is in force at sigma1 / D
    assert np.all(selection[:, :3] < ORDERS[:3] * d**2 / (2 * sigma1**2))
    # the selection step of the sigma1/D mechanism would have another pr_answered
    log_pr_scaled = log_pr_answered(votes.max(axis=1), threshold=threshold,
                                    sigma_threshold=sigma1 / d)
    assert not np.allclose(log_pr_scaled, log_pr)
    wrong = rdp_threshold(log_pr_scaled, sigma_threshold=sigma1 / d, orders=ORDERS)
    assert not np.allclose(wrong, selection)
    # sensitivity 1 is the standard cost; larger sensitivity costs more
    np.testing.assert_allclose(ours[1], rdp_threshold(log_pr, sigma_threshold=sigma1,
                                                      orders=ORDERS)
                               + charge[:, None] * rdp_gnmax(log_q, sigma=sigma, orders=ORDERS),
                               rtol=1e-15)
    assert np.all(ours[0] >= ours[1])


def test_group_costs_charge_each_group_at_its_sensitivity():
    predictions = make_predictions(queries=200)
    budgets = np.array([1.0, 2.0, 3.0])
    mechanism = MECHANISMS[1]
    weights = group_weights(budgets, TEACHER_GROUPS)
    votes = weighted_histogram(predictions, weights[TEACHER_GROUPS], classes=CLASSES)
    log_q, kwargs = statistics(votes, mechanism, NoiseSource(0), 0, "expected")
    costs = group_costs(log_q, curve_setting(mechanism), sensitivities=weights, **kwargs)
    for g, w in enumerate(weights):
        expected = rdp_threshold(kwargs["log_pr_answered"], sigma_threshold=4.0 / w,
                                 orders=ORDERS) + kwargs["charge"][:, None] * rdp_gnmax(
            log_q, sigma=3.0 / w, orders=ORDERS)
        np.testing.assert_allclose(costs.curves[g], expected, rtol=1e-15)
    result = account_groups(costs, AccountedGroups(budgets), orders=ORDERS, delta=DELTA)
    final = result.cumulative_epsilon[-1]
    assert final[0] < final[1] < final[2]  # larger weight, larger cost


# --- stopping rule ---------------------------------------------------------------------------


def synthetic_chunk(rates, answered, queries, baseline_rate=5e-4):
    """Every query costs ``rate_g * alpha`` to group g, ``baseline_rate * alpha`` to the
    uniform run."""
    curves = np.asarray(rates, dtype=float)[:, None, None] * np.broadcast_to(
        ORDERS, (queries, ORDERS.size))[None]
    index = np.broadcast_to(np.arange(len(rates))[:, None], (len(rates), queries))
    baseline = baseline_rate * np.broadcast_to(ORDERS, (queries, ORDERS.size))
    return CostChunk(curves=curves, index=index, baseline=baseline, answered=answered,
                     baseline_answered=answered)


def test_the_stopping_point_is_the_first_exhaustion():
    queries = 250
    answered = np.random.default_rng(0).random(queries) < 0.7
    rates = [1e-3, 4e-3, 2e-3]
    budgets = np.array([2.0, 3.0, 4.0])
    chunk = synthetic_chunk(rates, answered, queries)
    whole = account_groups(chunk, AccountedGroups(budgets), orders=ORDERS, delta=DELTA)
    pieces = [dataclasses.replace(chunk, curves=chunk.curves[:, s:s + 25],
                                  index=chunk.index[:, s:s + 25], baseline=chunk.baseline[s:s + 25],
                                  answered=answered[s:s + 25],
                                  baseline_answered=answered[s:s + 25])
              for s in range(0, queries, 25)]
    split = account_groups(pieces, AccountedGroups(budgets), orders=ORDERS, delta=DELTA)
    np.testing.assert_array_equal(split.cumulative_epsilon, whole.cumulative_epsilon)
    # each group's epsilon after t+1 queries, by hand: min over alpha
    t = np.arange(1, queries + 1)[:, None, None]
    by_hand = (np.array(rates)[None, :, None] * t * ORDERS
               + math.log(1 / DELTA) / (ORDERS - 1)).min(axis=2)
    np.testing.assert_allclose(whole.cumulative_epsilon, by_hand, rtol=1e-12)
    exhausted = [first_above(by_hand[:, g], budgets[g]) for g in range(3)]
    assert whole.exhausted_at == tuple(exhausted)
    assert all(e is not None for e in exhausted)
    stop = min(exhausted)
    assert whole.stopped_at == stop and exhausted.index(stop) == 1  # not the smallest budget
    assert whole.labels_released == int(answered[:stop].sum())
    # no label at or after the stopping point is counted, however many there are
    more = answered.copy()
    more[stop:] = True
    again = account_groups(synthetic_chunk(rates, more, queries), AccountedGroups(budgets),
                           orders=ORDERS, delta=DELTA)
    assert again.labels_released == whole.labels_released
    assert again.answered_total > whole.answered_total
    # spent epsilon is read after the last query before the stop: within every budget
    np.testing.assert_array_equal(whole.epsilon, whole.cumulative_epsilon[stop - 1])
    assert np.all(whole.epsilon <= budgets)
    # the uniform run (5e-4 alpha per query) against the smallest budget, 2.0
    base = (t[:, 0] * 5e-4 * ORDERS + math.log(1 / DELTA) / (ORDERS - 1)).min(axis=1)
    base_stop = first_above(base, 2.0)
    np.testing.assert_allclose(whole.baseline_epsilon, base, rtol=1e-12)
    assert base_stop is not None and whole.baseline_stopped_at == base_stop
    assert whole.baseline_labels == int(answered[:base_stop].sum())


def test_nobody_exhausted_releases_every_answer():
    queries = 40
    answered = np.ones(queries, dtype=bool)
    result = account_groups(synthetic_chunk([1e-6, 2e-6], answered, queries),
                            AccountedGroups([50.0, 60.0], names=["low", "high"]),
                            orders=ORDERS, delta=DELTA)
    assert result.stopped_at is None and result.exhausted_at == (None, None)
    assert result.labels_released == queries
    np.testing.assert_array_equal(result.epsilon, result.cumulative_epsilon[-1])
    assert result.names == ("low", "high")


# --- input checks ----------------------------------------------------------------------------


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="budget"):
        upsampling_factors([1.0, -2.0])
    with pytest.raises(ValueError, match="group"):
        group_weights([1.0, 2.0], np.array([0, 2]))
    with pytest.raises(ValueError, match="class ids"):
        weighted_histogram(np.array([[0, 5]]), classes=3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        vanishing_participation([0.5, 1.5], seed=0, count=3)
    with pytest.raises(ValueError, match="no teacher"):
        vanishing_votes(np.zeros((3, 2), dtype=int), frequencies=np.zeros(2), seed=0,
                        classes=2)
    with pytest.raises(ValueError, match="log_pr_answered"):
        rdp_individual(np.zeros(2), CurveSetting(sigma=1.0, orders=ORDERS, sigma_threshold=2.0),
                       sensitivities=[1.0])
    with pytest.raises(ValueError, match="member_groups"):
        account_groups(synthetic_chunk([1e-3, 1e-3], np.ones(3, bool), 3),
                       AccountedGroups([1.0]), orders=ORDERS, delta=DELTA)


# --- the fast path: unevaluated curves, shared sums, pruned orders ---------------------------


@pytest.mark.parametrize("conversion", ["classic", "improved"])
@pytest.mark.parametrize("accounting", ["replay", "expected"])
@pytest.mark.parametrize("block_rows", [5, 10_000])
def test_unevaluated_curves_give_the_same_bits(accounting, conversion, block_rows,
                                               monkeypatch):
    """group_costs(evaluate=False) through account_groups (one curve at a time, orders
    pruned per block, the uniform run shared with the D=1 group and, with ``uniform``,
    taken from the standard analysis) equals the evaluated generic path bit for bit."""
    from pate_cli.accounting import composition

    monkeypatch.setattr(composition, "WORK_VALUES", block_rows * ORDERS.size)
    mechanism = MECHANISMS[1]
    votes = weighted_histogram(make_predictions(seed=7, queries=700), classes=CLASSES)
    standard = analyze_votes(votes, mechanism, accounting=accounting, orders=ORDERS,
                             delta=DELTA, seed=2, conversion=conversion, teachers=TEACHERS)
    kwargs = dict(sensitivities=[1.0, 2.0, 0.0, 3.5, 2.0], answered=standard.label >= 0,
                  charge=standard.answered, log_pr_answered=standard.log_pr_answered)
    budgets = [1.0, 2.0, 2.0, 3.0, 2.5]
    shared = AccountedGroups(budgets, member_groups=[0, 1, 2, 3, 4, 0])
    common = dict(orders=ORDERS, delta=DELTA, conversion=conversion)
    evaluated = group_costs(standard.log_q, curve_setting(mechanism), **kwargs)
    # a varying index sends the chunk through the generic, fully evaluated path
    generic = account_groups(dataclasses.replace(evaluated, index=np.vstack(
        [evaluated.index, np.where(np.arange(700) % 2, 0, -1)])), shared, **common)
    lazy = group_costs(standard.log_q, curve_setting(mechanism), evaluate=False, **kwargs)
    for result in (account_groups(dataclasses.replace(lazy, index=np.vstack(
                       [lazy.index, np.where(np.arange(700) % 2, 0, -1)])), shared, **common),
                   account_groups(lazy, AccountedGroups(budgets), **common)):
        np.testing.assert_array_equal(result.cumulative_epsilon, generic.cumulative_epsilon)
        np.testing.assert_array_equal(result.cumulative_order, generic.cumulative_order)
        np.testing.assert_array_equal(result.baseline_epsilon, generic.baseline_epsilon)
    np.testing.assert_array_equal(generic.baseline_epsilon, standard.epsilon_cumulative)
    np.testing.assert_array_equal(generic.cumulative_epsilon[:, 0], standard.epsilon_cumulative)


@pytest.mark.parametrize("budgets, precision, message", [
    ((1.0, 1e20), 2, r"largest ratio \(1e\+20\) needs an upsampling factor above 1,000,000"),
    ((1e-300, 1e300), 2, r"largest ratio \(inf\)"),
    ((1.0, 999_999.5), 2, "need factors up to 1,999,999"),
])
def test_upsampling_factors_past_the_limit_are_refused(budgets, precision, message):
    """Budgets whose ratio needs more than a million copies of a teacher's votes: one
    message (they overflowed int64, or Fraction(inf), before)."""
    with pytest.raises(ValueError, match=message):
        upsampling_factors(budgets, precision=precision)


def test_given_upsampling_past_the_limit_is_refused_and_needs_no_derived_factors():
    groups = PrivacyGroups(names=("a", "b"), budgets=np.array([1.0, 1e20]),
                           upsampling=np.array([1.0, 3.0]))
    assert derive_parameters(groups, variant="upsampling").sensitivity.tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match=r"group 'b': upsampling 2e\+06 is above 1,000,000"):
        derive_parameters(PrivacyGroups(names=("a", "b"), budgets=np.array([1.0, 2.0]),
                                        upsampling=np.array([1.0, 2e6])), variant="upsampling")
