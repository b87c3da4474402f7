"""Attack risk (math:risk): the TPR and advantage bounds against independent values (the
Gaussian closed form at 40 digits, riskcal's trade-off of the same PLD, hand cases), and
their order: exact <= PLD route <= RDP route; data-dependent <= data-independent;
sampled <= unsampled."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.accounting.gnmax import rdp_gnmax_data_independent
from pate_cli.accounting.pld import gaussian_pld
from pate_cli.accounting.risk import (
    CURVE_FPRS,
    RDP_DELTAS,
    REPORTED_FPRS,
    gaussian_mu,
    gaussian_risk,
    pld_risk,
    profile_risk,
    profile_tpr,
    rdp_risk,
)
from pate_cli.orders import default_orders
from pate_cli.rounding import ceil_significant, ceil_text
from tests import SAMPLES
from tests.precision import digits

_digits = digits(40)  # mpmath's precision for this module's tests
VOTES = SAMPLES / "mnist_250_votes.npy"


def exact_tpr(mu: float, alpha: float) -> mpmath.mpf:
    """Phi(mu - Phi^-1(1 - alpha)) at 40 digits (Dong, Roth and Su's mu-GDP curve)."""
    if alpha == 0:
        return mpmath.mpf(0)
    if alpha == 1:
        return mpmath.mpf(1)
    quantile = -mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(alpha))  # Phi^-1(alpha)
    return mpmath.ncdf(mu + quantile)


def exact_advantage(mu: float) -> mpmath.mpf:
    return 2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1


@given(mu=st.floats(1e-3, 12.0))
@settings(max_examples=60)
def test_gaussian_risk_is_the_closed_form_never_below(mu):
    risk = gaussian_risk(mu)
    for alpha, tpr in zip(CURVE_FPRS, risk.tpr, strict=True):
        exact = exact_tpr(mu, float(alpha))
        assert tpr >= exact
        assert tpr <= exact * (1 + 1e-9) + 1e-300
    exact = exact_advantage(mu)
    assert exact <= risk.advantage <= exact * (1 + 1e-9)
    assert risk.at_reported == tuple(float(t) for t in risk.tpr_at(REPORTED_FPRS))


def test_no_step_is_the_identity_exactly():
    """mu = 0 (a run that processed nothing): TPR = FPR exactly; the rounded ndtr(ndtri)
    raised over its error printed 0.0011 at FPR 0.001."""
    for risk in (gaussian_risk(0.0), rdp_risk(np.zeros(5), orders=np.arange(2.0, 7.0))):
        assert risk.tpr.tolist() == CURVE_FPRS.tolist() and risk.advantage == 0.0
        assert risk.at_reported == tuple(REPORTED_FPRS)


def test_data_independent_gnmax_is_mu_gdp_with_mu_sqrt_q_sqrt2_over_sigma():
    queries, sigma = 640, 40.0
    result = pate_cli.analyze(VOTES, "gnmax", sigma=sigma, queries=queries,
                              accounting="data-independent")
    risk = result.risk
    assert risk is result.risk_data_independent and not risk.data_dependent
    assert risk.source == "pld"
    mu = math.sqrt(queries) * math.sqrt(2.0) / sigma
    assert risk.mu == pytest.approx(mu, rel=1e-15)
    for alpha, tpr in zip(REPORTED_FPRS, risk.at_reported, strict=True):
        exact = exact_tpr(mu, alpha)
        assert exact <= tpr <= exact * (1 + 1e-9)
    summary = result.to_dict()["risk"]
    assert set(summary) == {"source", "data_dependent", "tpr_at_fpr", "advantage", "mu",
                            "tradeoff"}
    assert list(summary["tpr_at_fpr"]) == ["0.001", "0.01", "0.1"]
    assert summary["tradeoff"]["fpr"] == [float(x) for x in CURVE_FPRS]


@pytest.mark.parametrize("steps", [[(math.sqrt(2.0), 40.0, 300)],
                                   [(math.sqrt(2.0), 40.0, 5000), (1.0, 150.0, 9000)],
                                   [(1.0, 3.0, 1)]])
def test_the_pld_route_is_at_or_above_the_closed_form_within_its_discretisation(steps):
    pytest.importorskip("dp_accounting")
    pld_route, exact = pld_risk(gaussian_pld(steps)), gaussian_risk(gaussian_mu(steps))
    assert np.all(pld_route.tpr >= exact.tpr)
    assert np.all(pld_route.tpr <= exact.tpr + 2e-3)
    assert exact.advantage <= pld_route.advantage <= exact.advantage + 1e-3


@pytest.mark.parametrize("steps, rate", [
    ([(math.sqrt(2.0), 40.0, 300), (1.0, 150.0, 600)], None),
    # sampled Confident's steps (a joint answer step, math:sampling), whose distribution
    # keeps a mass at infinity (3e-15) above the smallest delta read
    ([(1.0, 1.0 / math.sqrt(1.0 / 150.0**2 + 1.0 / 40.0**2), 500), (1.0, 150.0, 8500)], 0.1),
    ([(math.sqrt(2.0), 5.0, 5000)], 0.002)])
def test_riskcal_reads_the_same_trade_off_from_the_same_pld(steps, rate):
    pytest.importorskip("dp_accounting")
    conversions = pytest.importorskip("riskcal.conversions")
    pld = gaussian_pld(steps, rate)
    ours = pld_risk(pld)
    alphas = np.array([1e-4, *REPORTED_FPRS, 0.3, 0.7])
    theirs = 1.0 - np.asarray(conversions.get_beta_from_pld(pld, alphas))
    assert np.all(ours.tpr_at(alphas) >= theirs - 1e-7)
    np.testing.assert_allclose(ours.tpr_at(alphas), theirs, rtol=1e-4, atol=1e-7)
    advantage = float(conversions.get_advantage_from_pld(pld))
    assert advantage - 1e-12 <= ours.advantage <= advantage + 1e-6


@given(sigma=st.floats(2.0, 200.0), queries=st.integers(1, 20_000))
@settings(max_examples=25)
def test_the_rdp_route_is_never_below_the_exact_curve(sigma, queries):
    rdp = queries * rdp_gnmax_data_independent(sigma=sigma, orders=default_orders())
    route = rdp_risk(rdp, orders=default_orders())
    exact = gaussian_risk(math.sqrt(queries) * math.sqrt(2.0) / sigma)
    assert np.all(route.tpr >= exact.tpr)
    assert route.advantage >= exact.advantage


def test_one_pair_by_hand():
    # (eps, delta) = (1, 1e-3): TPR <= min(delta + e alpha, 1 - (1 - delta - alpha) / e)
    risk = profile_risk([1.0], [1e-3], "rdp")
    for alpha in (0.0, 0.01, 0.2, 0.5, 0.9):
        first = mpmath.mpf("1e-3") + mpmath.e * alpha
        second = 1 - (1 - mpmath.mpf("1e-3") - alpha) / mpmath.e
        exact = min(first, second, 1)
        value = float(risk.tpr_at([alpha])[0])
        assert exact <= value <= exact * (1 + 1e-14)
    # pure epsilon: advantage tanh(eps / 2); with delta: (e^eps - 1 + 2 delta) / (e^eps + 1)
    assert profile_risk([2.0], [0.0], "pure").advantage >= math.tanh(1.0)
    assert profile_risk([2.0], [0.0], "pure").advantage == pytest.approx(math.tanh(1.0))
    exact = (mpmath.e - 1 + mpmath.mpf("2e-3")) / (mpmath.e + 1)
    assert exact <= profile_risk([1.0], [1e-3], "rdp").advantage <= exact * (1 + 1e-14)


def test_an_infinite_epsilon_bounds_nothing():
    risk = profile_risk([np.inf], [1e-5], "rdp")
    assert risk.advantage == 1.0
    assert np.all(risk.tpr == 1.0)


def test_data_dependent_is_within_data_independent_and_labelled():
    """Where the votes' curve is tighter somewhere (Adult, LNMax, expected: TPR 0.7247
    against 0.8298 at FPR 0.1) the headline risk is it, labelled data-dependent."""
    result = pate_cli.analyze(SAMPLES / "adult_250_votes.npy", "lnmax", laplace_scale=20,
                              queries=500, accounting="expected")
    risk, independent = result.risk, result.risk_data_independent
    assert risk.data_dependent and not independent.data_dependent
    assert risk.source == "rdp" and risk.mu is None
    assert np.all(risk.tpr <= independent.tpr) and np.any(risk.tpr < independent.tpr)
    assert risk.advantage <= independent.advantage
    # one direction only: never tighter than the data-dependent pair's two namings allow
    one_way = profile_risk([result.epsilon], [result.delta], "rdp", one_way=True)
    assert np.all(risk.tpr <= one_way.tpr)


def test_the_publishable_risk_of_a_selecting_run_answers_every_query():
    """Confident on MNIST: the publishable curve is the Gaussian steps' mu-GDP curve with
    every query answered (the replay's count is the votes': composing only its answers is
    not a bound), answers sqrt(2)/sigma, selections 1/sigma1; the replay's own count gives
    a smaller mu that is not published."""
    result = pate_cli.analyze(VOTES, "confident")
    independent = result.risk_data_independent
    assert independent.source == "pld" and not independent.data_dependent
    mu = math.sqrt(9000 * 2 / 40.0**2 + 9000 / 150.0**2)
    assert independent.mu == pytest.approx(mu, rel=1e-14)
    assert result.answered_total < 9000
    assert result.risk.advantage <= independent.advantage


def test_a_one_way_pair_keeps_one_form_for_each_naming():
    """A data-dependent pair bounds M(D) against M(D') only: a target in the data keeps
    delta + e^eps alpha, one outside 1 - e^-eps (1 - delta - alpha); the bound is the larger
    (at FPR 0 the second, 1 - e^-eps (1 - delta), where both directions give delta)."""
    eps, delta = 1.0, 1e-5
    rates = np.array([0.0, 0.001, 0.1, 0.5, 1.0])
    first = np.minimum(1.0, delta + math.exp(eps) * rates)
    second = np.minimum(1.0, 1.0 - math.exp(-eps) * (1.0 - delta - rates))
    one_way = profile_risk([eps], [delta], "rdp", one_way=True)
    both = profile_risk([eps], [delta], "rdp")
    assert np.allclose(one_way.tpr_at(rates), np.maximum(first, second), rtol=1e-14, atol=0)
    assert np.all(one_way.tpr_at(rates) >= np.maximum(first, second))
    assert np.allclose(both.tpr_at(rates), np.minimum(first, second), rtol=1e-14, atol=0)
    assert both.tpr_at([0.0])[0] == pytest.approx(delta, rel=1e-12)
    assert one_way.advantage == pytest.approx(1.0 - math.exp(-eps) * (1.0 - delta), rel=1e-14)
    assert one_way.advantage > both.advantage
    # two one-way pairs: each naming takes its own smallest, then the larger naming
    pairs = profile_risk([1.0, 3.0], [1e-3, 1e-9], "rdp", one_way=True).tpr_at(rates)
    naming = [np.minimum(1.0, np.minimum(1e-3 + math.e * rates, 1e-9 + math.exp(3) * rates)),
              np.minimum(1.0, np.minimum(1.0 - math.exp(-1.0) * (1.0 - 1e-3 - rates),
                                         1.0 - math.exp(-3.0) * (1.0 - 1e-9 - rates)))]
    assert np.allclose(pairs, np.maximum(*naming), rtol=1e-13, atol=0)


@pytest.mark.parametrize("rate", [0.01, 0.3])
def test_sampling_never_raises_the_risk(rate):
    pytest.importorskip("dp_accounting")
    plain = pate_cli.analyze(VOTES, "confident", accounting="data-independent",
                             queries=2000)
    sampled = pate_cli.analyze(VOTES, "confident", accounting="data-independent",
                               queries=2000, sampling=f"poisson:{rate}")
    assert np.all(sampled.risk.tpr <= plain.risk.tpr)
    assert sampled.risk.advantage <= plain.risk.advantage
    assert sampled.risk.advantage < 0.9 * plain.risk.advantage
    assert sampled.risk.mu is None and plain.risk.mu is not None  # a sampled Gaussian is not


def test_every_mechanism_reports_a_risk_within_its_epsilon():
    # each (epsilon, delta) the run prints bounds the curve too: the risk is never above it
    for mechanism, options in [("lnmax", {"queries": 200}), ("exponential", {"queries": 200}),
                               ("lnmax", {"queries": 200, "delta": 2e-5}),  # off the grid
                               ("svt", {"queries": 200}),
                               (None, {"rounds": SAMPLES / "mnist_250_rounds.csv"})]:
        result = pate_cli.analyze(VOTES, mechanism, accounting="data-independent",
                                  **options)
        printed = result.epsilon_data_independent_worst  # rounds with a selecting round:
        own = profile_risk([result.epsilon if printed is None else printed],  # any run's
                           [result.delta], "rdp")
        risk = result.risk
        assert risk is not None and risk.source in ("rdp", "pure", "pld")
        assert np.all(risk.tpr <= own.tpr), mechanism
        assert risk.advantage <= own.advantage
        assert RDP_DELTAS.min() <= result.delta <= RDP_DELTAS.max()


def test_individualized_runs_have_no_single_risk_but_one_per_group():
    result = pate_cli.analyze(VOTES, "gnmax", sigma=40, queries=100,
                              individualized="upsampling",
                              groups=SAMPLES / "mnist_250_groups.csv")
    summary = result.to_dict()
    assert result.risk is None and summary["risk"] is None
    for row in summary["groups"]:  # the bound for any run: replay's halt is the votes'
        pair = profile_risk([row["epsilon_data_independent_worst"]], [result.delta], "rdp")
        assert row["risk"]["tpr_at_fpr"] == dict(zip(["0.001", "0.01", "0.1"],
                                                     pair.at_reported, strict=True))
        assert row["risk"]["advantage"] == pair.advantage and "tradeoff" not in row["risk"]
    report = result.report(fmt="markdown")
    section = report[report.index("## Attack risk"):]
    assert "Each group's, from the (\u03b5, \u03b4) pair" in section
    high = summary["groups"][0]["risk"]["advantage"]
    assert f"advantage \u2264 {ceil_text(high)}" in section


def test_a_tuned_runs_published_risk_includes_the_search(tmp_path):
    result = pate_cli.analyze(VOTES, "confident", queries=640, tuning="geometric:20")
    search, single = result.tuning.risk, result.risk_data_independent
    alone = rdp_risk(result.rdp_data_independent, orders=result.orders)
    assert search.source == "rdp" and not search.data_dependent
    assert np.all(search.tpr >= alone.tpr) and search.advantage > alone.advantage
    assert search.advantage > single.advantage
    summary = result.to_dict()
    assert summary["tuning"]["risk"]["advantage"] == search.advantage
    report = tmp_path / "report.md"
    report.write_text(result.report(fmt="markdown"))
    text = report.read_text()
    section = text[text.index("## Attack risk"):]
    assert "The bounds include the parameter search (--tuning)" in section
    assert f"| advantage (largest TPR \u2212 FPR) | {ceil_text(search.advantage)} |" in section


def test_a_sweep_row_carries_its_points_publishable_risk(cli):
    frame = pate_cli.run_sweep(str(VOTES), ["gnmax", "confident", "lnmax", "exponential"],
                               sigma=[40.0], laplace_scale=[20.0], eta=[0.05], queries=[640],
                               repeats=3, workers=1)
    for _, row in frame.iterrows():
        knobs = {"gnmax": {"sigma": 40.0}, "confident": {"sigma": 40.0},
                 "lnmax": {"laplace_scale": 20.0}, "exponential": {"eta": 0.05}}
        runs = [pate_cli.analyze(VOTES, row["mechanism"], queries=640, seed=seed,
                                 **knobs[row["mechanism"]]) for seed in range(3)]
        worst = [max(run.risk_data_independent.at_reported[i] for run in runs)
                 for i in range(3)]
        assert [row["risk_tpr_0.001"], row["risk_tpr_0.01"], row["risk_tpr_0.1"]] == worst
        assert row["risk_advantage"] == max(run.risk_data_independent.advantage
                                            for run in runs)
        assert row["risk_source"] == "pld"
    # the aligned table rounds the bounds up (0.3452791539817683 -> 0.34528)
    done = cli.sweep(str(VOTES), "-m", "gnmax", "--sigma", "40", "-n", "640",
                     "--accounting", "data-independent", "-f", "table")
    values = done.out.splitlines()[1].split()
    assert values[-2] == ceil_significant(frame.loc[0, "risk_advantage"], 6) == "0.34528"


def test_svts_risk_reads_its_guarantee_at_every_delta():
    result = pate_cli.analyze(VOTES, "svt", queries=2000, svt_scale=20.0, svt_cutoff=50)
    printed = profile_risk([result.epsilon], [result.delta], "rdp")
    risk = result.risk
    assert risk.source == "rdp" and not risk.data_dependent
    assert np.all(risk.tpr <= printed.tpr)
    assert risk.at_reported[0] < 0.5 * printed.at_reported[0]  # 0.0173 against 0.0422


@pytest.mark.parametrize("sigma, queries", [(40.0, 300), (10.0, 50), (100.0, 5000),
                                            (5.0, 1), (200.0, 10)])
def test_the_rdp_route_is_never_below_the_pld_route(sigma, queries):
    """Two algorithms on one mechanism: the RDP route's TPR bounds are at or above the PLD
    route's, to 1e-12 (where both reach 1 they differ by rounding only), at false-positive
    rates from 1e-6 (the PLD route reads its profile down to delta 1e-8 only)."""
    pytest.importorskip("dp_accounting")
    rdp = queries * rdp_gnmax_data_independent(sigma=sigma, orders=default_orders())
    through_rdp = rdp_risk(rdp, orders=default_orders())
    through_pld = pld_risk(gaussian_pld([(math.sqrt(2.0), sigma, queries)]))
    rates = np.logspace(-6.0, 0.0, 121)
    assert np.all(through_rdp.tpr_at(rates) >= through_pld.tpr_at(rates) - 1e-12)
    assert through_rdp.advantage >= through_pld.advantage


@given(mechanism=st.sampled_from(["gnmax", "confident", "lnmax", "exponential"]),
       accounting=st.sampled_from(["replay", "expected", "data-independent"]),
       noise=st.floats(0.02, 0.5), seed=st.integers(0, 3), delta=st.sampled_from([1e-5, 3e-7]))
@settings(max_examples=30)
def test_risk_properties_over_runs(mechanism, accounting, noise, seed, delta):
    """Any run: each TPR bound in [FPR, 1] and increasing in the FPR; the headline risk
    within the publishable one; both within the (epsilon, delta) pairs printed beside them;
    the same seed gives the same risk."""
    scale = {"gnmax": "sigma", "confident": "sigma", "lnmax": "laplace_scale",
             "exponential": "eta"}[mechanism]
    value = noise * 250 if scale != "eta" else 0.5 / (noise * 250)
    run = dict(queries=300, accounting=accounting, seed=seed, delta=delta, **{scale: value})
    result = pate_cli.analyze(VOTES, mechanism, **run)
    risk, independent = result.risk, result.risk_data_independent
    for bound in (risk, independent):
        assert np.all(bound.tpr >= bound.fpr) and np.all(bound.tpr <= 1.0)
        assert np.all(np.diff(bound.tpr) >= -1e-15)
        assert bound.at_reported == tuple(float(t) for t in bound.tpr_at(REPORTED_FPRS))
    assert np.all(risk.tpr <= independent.tpr) and risk.advantage <= independent.advantage
    # data-dependent where the votes' curve is tighter somewhere, else the publishable one
    assert risk.data_dependent == (accounting != "data-independent" and (
        risk.advantage < independent.advantage or bool(np.any(risk.tpr < independent.tpr))))
    assert risk.data_dependent or risk == independent
    printed = result.epsilon_data_independent_worst  # the bound for any run, where reported
    if printed is None:
        printed = result.epsilon_data_independent
    assert np.all(independent.tpr <= profile_risk([printed], [delta], "rdp").tpr)
    headline = result.epsilon  # a data-independent run's own answers: the bound beside it
    if accounting == "data-independent" and result.epsilon_data_independent_worst is not None:
        headline = result.epsilon_data_independent_worst
    assert np.all(risk.tpr <= profile_risk([headline], [delta], "rdp",
                                           one_way=accounting != "data-independent").tpr)
    again = pate_cli.analyze(VOTES, mechanism, **run).risk
    assert np.array_equal(again.tpr, risk.tpr) and again.advantage == risk.advantage


class _Overflowing:
    """A PLD whose profile dp_accounting computes as nan or -inf where e^eps overflows
    (as it does for 2,000 Poisson-sampled queries at rate 1 and sigma 1, add/remove)."""

    def get_delta_for_epsilon(self, epsilons):
        eps = np.asarray(epsilons, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(eps < 700.0, 0.5 * np.exp(-eps / 100.0),
                            np.where(eps < 1000.0, -np.inf, np.nan))

    def get_epsilon_for_delta(self, delta):
        return 1300.0


def test_a_pld_profile_that_overflows_gives_a_bound_not_minus_infinity():
    """The pairs past the overflow are left out (each pair is a bound of its own): the TPR
    bounds were -inf, printed 'TPR <= -inf' and failed the JSON summary."""
    risk = pld_risk(_Overflowing())
    tpr = risk.tpr_at([0.001, 0.01, 0.1])
    assert np.all(np.isfinite(tpr)) and np.all((tpr >= [0.001, 0.01, 0.1]) & (tpr <= 1.0))
    assert 0.0 <= risk.advantage <= 1.0
    done = pate_cli.analyze(str(SAMPLES / "mnist_250_votes.npy"), "gnmax", sigma=1.0,
                            queries=2000, accounting="data-independent",
                            sampling="poisson:1", vote_change="add")
    assert np.all(np.isfinite(done.risk.tpr_at([0.001, 0.01, 0.1])))


def test_a_pld_whose_largest_epsilon_overflows_leaves_the_rdp_risk():
    """Confident at sigmas 0.05 sampled at 1e-6: dp_accounting's epsilon at the trusted
    delta overflowed to inf, the profile's epsilons were NaN and the run failed ("Epsilons
    in get_delta_for_epsilon must be sorted"). The PLD profile is left out, the RDP curve's
    risk stands, and the figures stay at most the unsampled run's."""
    votes = np.tile([250, 0], (100, 1))
    options = dict(threshold=200, sigma_threshold=0.05, sigma=0.05,
                   accounting="data-independent")
    sampled = pate_cli.analyze(votes, "confident", sampling="poisson:1e-6", **options)
    plain = pate_cli.analyze(votes, "confident", **options)
    assert math.isfinite(sampled.epsilon) and sampled.epsilon <= plain.epsilon
    assert sampled.risk is not None and sampled.risk.source == "rdp"
    assert np.all(np.isfinite(sampled.risk.tpr_at([0.001, 0.01, 0.1])))


def test_a_sampled_pld_is_not_read_below_the_trusted_delta():
    """9,000 queries sampled at 0.001 with sigma 1, delta 1e-10: the PLD figure was
    3.411213, below prv_accountant's lower bound 3.411396 on the exact epsilon (the FFT's
    rounding in the far tail); the run now reports its RDP figure there, and the PLD
    figure at delta 1e-5, where a finer grid gives a smaller figure, as it must."""
    from pate_cli.accounting.risk import TRUSTED_DELTA

    votes = str(SAMPLES / "mnist_250_votes.npy")
    options = dict(sigma=1.0, accounting="data-independent", sampling="poisson:0.001")
    small = pate_cli.analyze(votes, "gnmax", delta=1e-10, **options)
    assert small.epsilon >= 3.411396 and small.to_dict()["epsilon_method"] == "rdp"
    usual = pate_cli.analyze(votes, "gnmax", delta=1e-5, **options)
    assert usual.to_dict()["epsilon_method"] == "pld" and TRUSTED_DELTA <= 1e-5


def test_a_data_dependent_risk_allows_what_one_direction_allows():
    """MNIST, 640 queries, expected accounting: the data-dependent curve's pairs bound one
    direction only, so at each FPR the risk is at least the smaller of the publishable
    bound and the larger naming's (a target outside the data: 1 - e^-eps (1 - delta -
    alpha), the smallest over the pairs): 0.0784 at FPR 0.01 where both forms together
    would claim 0.0319."""
    from pate_cli.accounting.conversion import epsilons_at_deltas

    result = pate_cli.analyze(str(SAMPLES / "mnist_250_votes.npy"), queries=640,
                              accounting="expected")
    epsilons = np.append(epsilons_at_deltas(result.rdp_total, orders=result.orders,
                                            deltas=RDP_DELTAS, conversion="classic"),
                         result.epsilon)
    deltas = np.append(RDP_DELTAS, result.delta)
    rates = np.array(REPORTED_FPRS)
    outside = np.min(1.0 - np.exp(-epsilons)[:, None] * (1.0 - deltas[:, None] - rates),
                     axis=0)
    floor = np.minimum(result.risk_data_independent.tpr_at(rates), outside)
    assert np.all(result.risk.tpr_at(rates) >= floor * (1 - 1e-12))
    assert result.risk.tpr_at([0.01])[0] > 0.07


def exact_randomized_response_tpr(epsilon: float, k: int, alpha: float) -> mpmath.mpf:
    """The exact trade-off of k composed epsilon-DP randomized responses (which dominate
    any k pure epsilon-DP steps): the Neyman-Pearson test on the count of agreements,
    randomised at its threshold, at mpmath's precision."""
    p = mpmath.e ** epsilon / (1 + mpmath.e ** epsilon)
    inside = [mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j) for j in range(k + 1)]
    outside = inside[::-1]
    tpr, fpr, alpha = mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(alpha)
    for j in range(k, -1, -1):  # reject the largest counts first
        if fpr + outside[j] >= alpha:
            return tpr + inside[j] * (alpha - fpr) / outside[j]
        tpr, fpr = tpr + inside[j], fpr + outside[j]
    return tpr


@pytest.mark.parametrize(("epsilon", "k"), [(0.1, 1), (0.1, 30), (0.5, 7), (0.02, 400),
                                            (1.0, 3)])
def test_pure_composition_risk_is_the_exact_trade_off_never_below(epsilon, k):
    """LNMax's and the exponential mechanism's publishable risk: the exact profile of their
    answers' pure-DP composition, never below the exact trade-off and within 0.01 of it."""
    from pate_cli.accounting.pld import pure_composed_profile

    risk = profile_risk(*pure_composed_profile(epsilon, k), "pld")
    fpr = np.array([0.0, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0])
    bound = risk.tpr_at(fpr)
    exact = np.array([float(exact_randomized_response_tpr(epsilon, k, a)) for a in fpr])
    assert np.all(bound >= exact) and np.all(bound <= exact + 0.01)
    p = mpmath.e ** epsilon / (1 + mpmath.e ** epsilon)
    total_variation = float(sum(max(0, mpmath.binomial(k, j) * (p**j * (1 - p) ** (k - j)
                                                                - p ** (k - j) * (1 - p)**j))
                                for j in range(k + 1)))
    assert total_variation <= risk.advantage <= total_variation + 0.01


def test_an_lnmax_runs_risk_is_its_answers_composition():
    """The publishable risk of an LNMax run: the pure composition's profile where it is
    tighter than the RDP curve (100 answers at lambda 20: TPR at FPR 0.1 at most 0.39,
    where the RDP curve allowed 0.65), capped by the printed pair."""
    from pate_cli.accounting.pld import pure_composed_profile

    run = pate_cli.analyze(str(SAMPLES / "mnist_250_votes.npy"), "lnmax", queries=100,
                           accounting="data-independent")
    composed = profile_risk(*pure_composed_profile(0.1, 100), "pld")
    rdp = rdp_risk(run.rdp_total, orders=run.orders)
    fpr = np.array([1e-3, 1e-2, 1e-1])
    got = run.risk_data_independent.tpr_at(fpr)
    assert run.risk_data_independent.source == "pld"
    assert np.all(got <= composed.tpr_at(fpr)) and np.all(got <= rdp.tpr_at(fpr))
    assert got[2] < 0.39 < 0.64 < rdp.tpr_at(fpr)[2]


def test_the_publishable_risk_is_held_within_the_printed_pld_figure_under_any_accounting():
    """Under replay and expected accounting the data-independent line prints the PLD figure
    first where smaller; the risk is held within that pair too, as under data-independent
    accounting (LNMax lambda 50, 1,000 answers, delta 1e-3: TPR at FPR 0.001 at most
    1e-3 + e^2.7232 1e-3 = 0.0163, where the RDP pair allowed 0.0317)."""
    runs = {accounting: pate_cli.analyze(VOTES, "lnmax", laplace_scale=50.0, queries=1000,
                                         delta=1e-3, accounting=accounting)
            for accounting in ("replay", "expected", "data-independent")}
    independent = runs["data-independent"].risk_data_independent
    for run in runs.values():
        own = profile_risk([run.epsilon_data_independent_pld], [1e-3], "pld")
        assert np.all(run.risk_data_independent.tpr <= own.tpr)
        assert run.risk_data_independent.at_reported == independent.at_reported
    assert independent.at_reported[0] < 0.0164


def test_at_fpr_zero_a_finite_epsilon_bounds_the_tpr_by_its_delta():
    """e^eps overflows past eps 709 (inf * 0 is nan): a finite epsilon's pair still bounds
    the TPR at FPR 0 by its delta; an infinite epsilon bounds nothing."""
    from pate_cli.accounting.pld import pure_composed_profile

    assert profile_tpr([800.0], [1e-10], [0.0])[0] == pytest.approx(1e-10, rel=1e-9)
    assert profile_tpr([math.inf], [0.0], [0.0])[0] == 1.0
    risk = profile_risk(*pure_composed_profile(5.0, 300), "pld")  # eps k = 1,500
    assert risk.tpr_at(np.array([0.0]))[0] < 1e-11  # was 1


def exact_sampled_delta(rate: float, z: float, count: int, epsilon: float = 0.0) -> float:
    """``delta(epsilon) = P(S > eps) - e^eps Q(S > eps)`` of ``count`` Poisson-sampled
    Gaussians (noise multiplier ``z``) against their remove-neighbours, ``S`` the summed
    privacy loss; at ``epsilon`` 0 the total variation (the advantage). By Gil-Pelaez
    inversion of the characteristic functions (each a trapezoid sum over the Gaussian,
    spectrally exact; the inversion by quad to 1e-13): independent of any PLD grid."""
    from scipy.integrate import quad
    x = np.linspace(-14.0, 14.0, 4001)
    weight = np.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi) * (x[1] - x[0])

    def loss(points):
        return np.logaddexp(math.log1p(-rate), math.log(rate) + (2.0 * points - 1.0) / (2 * z * z))

    under_q, shifted = loss(z * x), loss(1.0 + z * x)

    def integrand(t):
        q = np.sum(weight * np.exp(1j * t * under_q))
        p = (1.0 - rate) * q + rate * np.sum(weight * np.exp(1j * t * shifted))
        turn = np.exp(-1j * t * epsilon)
        return (np.imag(turn * p**count) - math.exp(epsilon) * np.imag(turn * q**count)) / t

    tails = quad(integrand, 1e-12, 60.0, limit=2000, epsabs=1e-14, epsrel=1e-13)[0] / math.pi
    return 0.5 * (1.0 - math.exp(epsilon)) + tails


@pytest.mark.parametrize("sigma, rate, queries", [(5.0, 0.5, 200), (2.0, 0.1, 100)])
def test_a_sampled_runs_advantage_and_epsilon_are_not_below_the_exact_values(sigma, rate,
                                                                            queries):
    """An outside check read the advantage 2.8e-7 below riskcal's at (sigma 5, rate 0.5, 200
    answers), where dp_accounting's pessimistic delta(0) rises with a finer grid
    (0.6826669, 0.6826708): the exact value (0.68266650645 by inversion) is below both,
    and the printed advantage is above it, within 1e-5."""
    pytest.importorskip("dp_accounting")
    votes = np.tile([[20, 0, 0]], (queries, 1))
    result = pate_cli.analyze(votes, "gnmax", sigma=sigma, accounting="data-independent",
                              sampling=f"poisson:{rate}")
    z = sigma / math.sqrt(2.0)
    exact = exact_sampled_delta(rate, z, queries)
    assert exact <= result.risk.advantage <= exact * (1.0 + 1e-5)
    # and its epsilon (PLD) at delta 1e-5: the exact delta there at most 1e-5 (9.74e-6 and
    # 9.9998e-6), the exact epsilon within 0.2% below it (10.291 against 10.303)
    assert result.to_dict()["epsilon_method"] == "pld"
    assert exact_sampled_delta(rate, z, queries, result.epsilon) <= 1e-5
    assert exact_sampled_delta(rate, z, queries, result.epsilon * (1 - 2e-3)) > 1e-5
