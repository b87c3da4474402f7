"""Data-independent figures: exact Laplace RDP (Mironov Prop. 6), the PLD accountant's
figure against the exact Gaussian composition, and ``--orders auto``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.laplace import rdp_laplace, rdp_lnmax_data_independent
from pate_cli.accounting.pld import (
    DEFAULT_INTERVAL,
    MAX_POINTS,
    discretization_interval,
    gaussian_exact_epsilon,
    gaussian_pld,
)
from pate_cli.analysis.api import analyze
from pate_cli.orders import default_orders, extend_orders
from pate_cli.rounding import ceil_text
from tests import SAMPLES


def laplace_rdp_by_integration(scale: float, order: float) -> float:
    """``1/(a-1) log int p^a q^(1-a)``, p = Laplace(0, b), q = Laplace(1, b), by mpmath."""
    import mpmath as mp

    with mp.workdps(30):  # a context: the process-wide precision is other tests' too
        b, a = mp.mpf(scale), mp.mpf(order)
        def density(x, mu):
            return mp.exp(-abs(x - mu) / b) / (2 * b)
        def integrand(x):
            return density(x, 0) ** a * density(x, 1) ** (1 - a)
        total = mp.quad(integrand, [-mp.inf, 0, 1, mp.inf])
        return float(mp.log(total) / (a - 1))


@pytest.mark.parametrize("scale", [0.3, 1.0, 5.0, 20.0])
@pytest.mark.parametrize("order", [1.5, 2.0, 7.5, 40.0])
def test_laplace_rdp_matches_integration(scale, order):
    exact = float(rdp_laplace(scale=scale, orders=[order])[0])
    assert exact == pytest.approx(laplace_rdp_by_integration(scale, order), rel=1e-10)


def test_lnmax_data_independent_is_below_the_generic_bound():
    orders = default_orders()
    for scale in (5.0, 20.0, 50.0):
        eps0 = 2.0 / scale
        generic = np.minimum(0.5 * eps0 * eps0 * orders, eps0)
        exact = rdp_lnmax_data_independent(scale=scale, orders=orders)
        assert np.all(exact <= generic)
        assert np.all(exact == np.minimum(2 * rdp_laplace(scale=scale, orders=orders), generic))
        assert 2.2 < float(np.max(generic / exact)) < 2.4


@pytest.mark.parametrize("steps, delta", [
    ([(math.sqrt(2), 40.0, 300), (1.0, 150.0, 640)], 1e-5),
    ([(math.sqrt(2), 100.0, 9000)], 1e-6),
    ([(math.sqrt(2), 5.0, 3)], 1e-5),
    # grids the default step would make gigabytes of (CI ran out of memory on the first)
    ([(math.sqrt(2), 0.16, 41), (1.0, 6.2368, 76)], 1e-5),
    ([(math.sqrt(2), 40.0, 10**6), (1.0, 150.0, 10**6)], 1e-5),
    ([(math.sqrt(2), 0.5, 10**6)], 1e-6),
])
def test_pld_figure_is_never_below_the_exact_one(steps, delta):
    pytest.importorskip("dp_accounting")
    exact = gaussian_exact_epsilon(steps, delta)
    pld = gaussian_pld(steps).get_epsilon_for_delta(delta)
    assert exact <= pld <= exact * 1.01 + 2 * discretization_interval(steps) + 1e-3


@pytest.mark.parametrize("steps, delta", [
    ([(math.sqrt(2), 40.0, 300)], 1e-5), ([(math.sqrt(2), 5.0, 3)], 1e-5),
    ([(1.0, 150.0, 640), (math.sqrt(2), 40.0, 300)], 1e-6), ([(1.0, 2.0, 1)], 1e-3),
])
def test_the_gaussian_pld_is_dp_accountings_pessimistic_one(steps, delta):
    """``gaussian_pld`` is built pessimistic: its epsilon at delta is at least that of
    dp_accounting's own PLD accountant for the same Gaussians (pessimistic by default),
    and the exact profile (Balle and Wang 2018, mpmath at 50 digits) at it is at most
    delta. An optimistic build reads below both; one mixed with the pessimistic identity
    is refused by dp_accounting, and ``gaussian_pld`` then gives None."""
    pytest.importorskip("dp_accounting")
    import mpmath
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    pld = gaussian_pld(steps)
    assert pld is not None
    ours = float(pld.get_epsilon_for_delta(delta))
    accountant = pld_privacy_accountant.PLDAccountant()
    for sensitivity, std, count in steps:
        accountant.compose(dp_event.SelfComposedDpEvent(
            dp_event.GaussianDpEvent(std / sensitivity), count))
    assert ours >= accountant.get_epsilon(delta)
    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.fsum(count * (mpmath.mpf(sensitivity) / mpmath.mpf(std))**2
                                     for sensitivity, std, count in steps))
        eps = mpmath.mpf(ours)
        assert (mpmath.ncdf(-eps / mu + mu / 2)
                - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)) <= delta


@given(std=st.floats(1e-3, 1e3), count=st.integers(1, 10**9))
def test_the_pld_grid_step_bounds_its_points(std, count):
    steps = [(math.sqrt(2), std, count), (1.0, 2 * std, count)]
    interval = discretization_interval(steps)
    for sensitivity, noise, times in steps:
        r = noise / sensitivity / math.sqrt(times)
        assert (20 / r + 1 / r**2) / interval <= MAX_POINTS * (1 + 1e-12)
    # the library's own step wherever it needs few enough points
    if std / math.sqrt(2) / math.sqrt(count) >= 2.5:  # about 8 / 1e-4 points
        assert interval == DEFAULT_INTERVAL


def test_exact_gaussian_by_hand():
    # mu = 1: delta(eps) = Phi(-eps + 1/2) - e^eps Phi(-eps - 1/2)
    from scipy.stats import norm

    eps = gaussian_exact_epsilon([(1.0, 1.0, 1)], 1e-5)
    value = norm.cdf(-eps + 0.5) - math.exp(eps) * norm.cdf(-eps - 0.5)
    assert value == pytest.approx(1e-5, rel=1e-9)


def exact_delta(mu, eps):
    """The Gaussian profile at ``eps`` by mpmath at 60 digits (no cancellation left)."""
    import mpmath as mp

    with mp.workdps(60):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


@settings(max_examples=150, deadline=None)
@given(std=st.floats(0.02, 200.0), count=st.integers(1, 10**6),
       log_delta=st.floats(-30.0, -1.0))
def test_the_exact_figure_is_rounded_up_and_tight(std, count, log_delta):
    """Never below the exact epsilon (the profile at it is at most delta), and within
    1e-9 of it (just below, the profile is above delta)."""
    import mpmath as mp

    delta = 10.0**log_delta
    eps = gaussian_exact_epsilon([(1.0, std, count)], delta)
    with mp.workdps(60):
        mu = mp.sqrt(count) / mp.mpf(std)
    assert exact_delta(mu, eps) <= delta
    if eps > 0.0:
        assert exact_delta(mu, eps * (1.0 - 1e-9)) > delta


def test_data_independent_accounting_uses_the_smaller_valid_figure():
    votes = "sample_votes/mnist_250_votes.npy"
    result = analyze(votes, "confident", queries=640, accounting="data-independent")
    rdp = analyze(votes, "confident", queries=640, accounting="replay")
    steps = [(math.sqrt(2), 40.0, int(result.answered_total)), (1.0, 150.0, 640)]
    summary = result.to_dict()
    assert summary["data_independent_method"] == "pld"
    assert result.epsilon < rdp.epsilon_data_independent
    assert result.epsilon == gaussian_exact_epsilon(steps, 1e-5)
    assert rdp.to_dict()["data_independent_method"] == "rdp"
    # the RDP figure the PLD one replaced is reported beside it; without PLD it is epsilon
    assert summary["epsilon_rdp"] == rdp.epsilon_data_independent > result.epsilon
    assert rdp.to_dict()["epsilon_rdp"] == rdp.epsilon


@pytest.mark.parametrize("mechanism, options", [
    ("confident", {}), ("gnmax", {"sigma": 40.0}),
    ("interactive", {"student": "sample_votes/mnist_250_student.npy"})])
def test_replay_and_expected_give_the_pld_figure_beside_the_rdp_one(mechanism, options):
    """Under replay, the PLD figure is data-independent accounting's headline for the same
    answers; under expected, the exact composition of every query answered, the bound
    beside ``epsilon_data_independent_worst``. The RDP figures themselves do not move."""
    from pate_cli.accounting.risk import gaussian_mu

    votes = "sample_votes/mnist_250_votes.npy"
    common = dict(queries=900, **options)
    replay = analyze(votes, mechanism, **common)
    independent = analyze(votes, mechanism, accounting="data-independent", **common)
    assert replay.epsilon_data_independent_pld == independent.epsilon
    assert replay.data_independent_method == "rdp"
    assert replay.epsilon_data_independent == independent.epsilon_rdp
    assert replay.epsilon_data_independent_pld < replay.epsilon_data_independent
    expected = analyze(votes, mechanism, accounting="expected", **common)
    steps = [(math.sqrt(2), 40.0, 900)] + ([(1.0, 150.0, 900)] if mechanism != "gnmax" else [])
    assert expected.epsilon_data_independent_pld == gaussian_exact_epsilon(steps, 1e-5)
    # the exact profile at the printed figure is within delta (mpmath, independent)
    mu = gaussian_mu(steps)
    assert exact_delta(mu, expected.epsilon_data_independent_pld) <= 1e-5
    worst = expected.epsilon_data_independent_worst or expected.epsilon_data_independent
    assert expected.epsilon_data_independent_pld < worst
    summary = expected.to_dict()
    assert summary["epsilon_data_independent_pld"] == expected.epsilon_data_independent_pld


def test_the_summary_and_report_put_the_smaller_bound_first(cli, tmp_path):
    """The data-independent line leads with the PLD figure where smaller and says when it
    is below the data-dependent headline (GNMax on token votes with little consensus; a
    selecting aggregator's bound answers every query, test_replay_count_is_not_a_bound); pate-report
    publishes it; the exponential mechanism's exact pure-DP composition, larger over 300
    answers, stays beside the RDP figure, which is published; SVT-PATE has none."""
    import json

    from pate_cli.outputs.report_content import report_content

    text = cli.analyze("sample_votes/tokens_zipf.npz", "-m", "gnmax").out
    line = next(row for row in text.splitlines() if row.startswith("data-independent"))
    summary = json.loads(cli.analyze("sample_votes/tokens_zipf.npz", "-m", "gnmax", "-f",
                                     "json").out)
    pld = summary["epsilon_data_independent_pld"]
    assert pld < summary["epsilon"] <= summary["epsilon_data_independent"]
    assert line == (f"data-independent  {ceil_text(pld)} (privacy-loss distribution "
                    "accountant, below the data-dependent figure); RDP "
                    f"{ceil_text(summary['epsilon_data_independent'])} (order "
                    f"{summary['order_data_independent']:g})")
    assert report_content(summary)["headline"]["published"] == pld
    exponential = json.loads(cli.analyze("sample_votes/mnist_250_votes.npy", "-m",
                                         "exponential", "-n", "300", "-f", "json").out)
    assert exponential["epsilon_data_independent_pld"] > exponential["epsilon_data_independent"]
    assert (report_content(exponential)["headline"]["published"]
            == exponential["epsilon_data_independent"])
    svt = json.loads(cli.analyze("sample_votes/mnist_250_votes.npy", "-m", "svt", "-n",
                                 "300", "-f", "json").out)
    assert svt["epsilon_data_independent_pld"] is None


def test_pld_headline_says_whose_figure_and_table_ends_at_rdp(cli, tmp_path):
    import json

    import pandas as pd

    table = tmp_path / "q.csv"
    args = ("sample_votes/mnist_250_votes.npy", "-n", "640", "--accounting",
            "data-independent", "--per-query", str(table))
    summary = json.loads(cli.analyze(*args, "-f", "json").out)
    frame = pd.read_csv(table)
    last = frame["epsilon_cumulative"].iloc[-1]  # a running sum: equal up to the last bits
    assert summary["epsilon_rdp"] == pytest.approx(last, rel=1e-13)
    assert last > 1.2 * summary["epsilon"]
    assert frame["order_cumulative"].iloc[-1] == summary["order"] == 8
    text = cli.analyze(*args).out
    assert ("(privacy-loss distribution accountant; the run's 366 answers: not a bound, see "
            "data-independent)") in text  # the replay's count: the bound for any run below
    assert (f"epsilon RDP       {ceil_text(last)} (order 8; the per-query table's figures; the "
            "run's answers: not a bound)") in text
    assert "(order" not in next(line for line in text.splitlines()
                                if line.startswith("epsilon  "))


def test_orders_auto_moves_off_both_edges():
    votes = "sample_votes/mnist_250_votes.npy"
    low = analyze(votes, "gnmax", sigma=2.0, orders="auto")
    assert low.order < 2 and low.order > low.orders.min() and low.warnings == ()
    plain = analyze(votes, "gnmax", sigma=2.0)
    assert low.epsilon < plain.epsilon
    high = analyze(votes, "gnmax", sigma=20000.0, accounting="data-independent",
                   orders="auto")
    assert high.order > 500 and high.order < high.orders.max()
    assert extend_orders(default_orders(), 10) is None



def test_orders_auto_on_the_command_line(cli):
    done = cli.analyze("sample_votes/mnist_250_votes.npy", "-m", "gnmax", "--sigma", "2",
                       "--orders", "auto", "-f", "json")
    assert done.code == 0 and '"order": 1.8408964152537144' in done.out
    assert "Warning" not in done.err
    done = cli.sweep("sample_votes/mnist_250_votes.npy", "--sigma", "40", "-n", "50",
                     "--orders", "auto", "-w", "1", "--no-progress")
    assert done.code == 2 and "auto applies to pate-analyze and pate-report only" in done.err
    assert "start:stop:step, auto" not in cli.sweep("--help").out  # nor offered (review R14)
    assert "start:stop:step, auto" not in cli.calibrate("--help").out
    assert "start:stop:step, auto" in cli.report("--help").out


def test_a_report_extends_the_orders_as_pate_analyze_does(cli, tmp_path):
    """pate-report --orders auto: the grid pate-analyze extends (it was refused while its
    --help offered it; review R14), named in the accounting text and the recipe."""
    votes = ("sample_votes/mnist_250_votes.npy", "-m", "gnmax", "--sigma", "2000", "-n", "10",
             "--orders", "auto")
    summary = json.loads(cli.analyze(*votes, "-f", "json").out)
    assert summary["order"] > 500
    done = cli.report(*votes, "-o", tmp_path / "r.md")
    assert done.code == 0, done.err
    text = (tmp_path / "r.md").read_text()
    assert f"{summary['orders']['count']} orders (from 2 to" in text and "--orders auto" in text


@pytest.mark.parametrize("grid", [("--orders", "auto"), ("--order", "8"), ("--orders", "2,4")])
def test_svt_pate_refuses_an_order_grid_it_would_not_use(cli, grid, tmp_path):
    """SVT-PATE converts its guarantee over a continuous order of its own: a grid is refused
    (--orders auto failed with an IndexError looking for that order on the grid; a grid
    given was recorded in the JSON and not used), and taken with --add-rdp, whose curve is
    known on the grid only."""
    args = ("sample_votes/mnist_250_votes.npy", "-n", "400", "-m", "svt", *grid)
    done = cli.analyze(*args)
    assert done.code == 2 and "--orders and --order do not apply to -m svt" in done.err
    curve = tmp_path / "rdp.csv"
    curve.write_text("order,rdp\n2,0.1\n4,0.1\n8,0.2\n32,0.3\n")
    if grid[1] != "auto":
        assert cli.analyze(*args, "--add-rdp", str(curve)).code == 0


def test_a_pld_budget_run_leaves_the_budget_minus_the_reported_figure():
    pytest.importorskip("dp_accounting")
    result = analyze("sample_votes/mnist_250_votes.npy", "confident",
                     accounting="data-independent", budget=5.0)
    summary = result.to_dict()
    assert summary["data_independent_method"] == "pld"
    assert summary["epsilon"] < summary["epsilon_rdp"] <= 5.0  # the halt: on the RDP sums
    assert summary["budget"]["remaining"] == 5.0 - summary["epsilon"]


# The exact Laplace curve against mpmath at 60 digits (issue 30: the logaddexp form lost
# digits to cancellation for a large scale, 4.9e-11 below at scale 1000, order 2).
SCALES = (1e-3, 3e-3, 0.01, 0.1, 0.5, 0.99, 1.0, 2.0, 7.0, 50.0, 100.0, 1e3, 1e4, 1e5, 1e6)
ORDERS = (1.01, 1.0001, 1.1, 1.5, 2.0, 3.5, 10.0, 32.0, 100.0, 700.5, 1000.0, 1e4)
TOLERANCE = 1e-12


def laplace_rdp_mpmath(scale: float, order: float):
    """Mironov's Prop. 6 in 60-digit arithmetic on the floats' exact values."""
    import mpmath as mp

    with mp.workdps(60):
        b, a = mp.mpf(scale), mp.mpf(order)
        inner = (a / (2 * a - 1) * mp.exp((a - 1) / b)
                 + (a - 1) / (2 * a - 1) * mp.exp(-a / b))
        return mp.log(inner) / (a - 1)


def lnmax_data_independent_mpmath(scale: float, order: float):
    import mpmath as mp

    with mp.workdps(60):
        eps0 = 2 / mp.mpf(scale)
        generic = min(eps0 * eps0 * mp.mpf(order) / 2, eps0)
        return min(2 * laplace_rdp_mpmath(scale, order), generic)


def _relative_errors(computed: np.ndarray, exact: list) -> tuple[float, float]:
    """(largest |relative error|, largest relative shortfall below the exact value)."""
    import mpmath as mp

    errors = [float((mp.mpf(float(value)) - truth) / truth)
              for value, truth in zip(computed, exact, strict=True)]
    return max(abs(e) for e in errors), max(0.0, -min(errors))


@pytest.mark.parametrize("scale", SCALES)
def test_laplace_rdp_matches_mpmath_at_extreme_scales_and_orders(scale):
    computed = rdp_laplace(scale=scale, orders=list(ORDERS))
    error, below = _relative_errors(computed, [laplace_rdp_mpmath(scale, a) for a in ORDERS])
    assert error <= TOLERANCE
    assert below <= TOLERANCE


@pytest.mark.parametrize("scale", SCALES)
def test_lnmax_data_independent_is_never_below_its_formula(scale):
    computed = rdp_lnmax_data_independent(scale=scale, orders=list(ORDERS))
    exact = [lnmax_data_independent_mpmath(scale, a) for a in ORDERS]
    error, below = _relative_errors(computed, exact)
    assert error <= TOLERANCE
    assert below <= TOLERANCE


def test_the_issue_30_value():
    value = float(rdp_lnmax_data_independent(scale=1000, orders=[2])[0])
    assert value == pytest.approx(1.99933283383345e-06, rel=1e-13)


@pytest.mark.parametrize("order", [2.0, 10.0, 1e4])
def test_laplace_rdp_across_the_series_and_overflow_switches(order):
    # (alpha - 1) / b near 1 (the series' edge) and near 700 (the direct form's start)
    scales = [(order - 1) / x for x in (0.999999, 1.0, 1.000001, 699.9, 700.0, 700.1, 1e4)]
    for scale in scales:
        computed = rdp_laplace(scale=scale, orders=[order])
        error, below = _relative_errors(computed, [laplace_rdp_mpmath(scale, order)])
        assert error <= TOLERANCE, scale


@given(log_scale=st.floats(-3, 6), log_steps=st.floats(-4, 4))
def test_laplace_rdp_matches_mpmath_anywhere(log_scale, log_steps):
    scale, order = 10.0**log_scale, 1.0 + 10.0**log_steps
    computed = rdp_laplace(scale=scale, orders=[order])
    error, below = _relative_errors(computed, [laplace_rdp_mpmath(scale, order)])
    assert error <= TOLERANCE


@pytest.mark.parametrize("sigma, rate, steps", [(1.0, 0.01, 1000), (2.0, 0.1, 200),
                                                (0.8, 0.001, 5000)])
def test_the_sampled_gaussian_pld_lies_in_prv_accountants_interval(sigma, rate, steps):
    """A Poisson-sampled Gaussian composed by our PLD (math:sampling) against
    prv_accountant's certified interval (Gopi, Lee and Wutschitz 2021) for the same
    mechanism, an independent implementation: within its lower and upper bounds."""
    pytest.importorskip("dp_accounting")
    prv = pytest.importorskip("prv_accountant")
    from pate_cli.accounting.pld import gaussian_pld

    lower, _, upper = prv.Accountant(
        noise_multiplier=sigma, sampling_probability=rate, delta=1e-5, eps_error=0.01,
        max_compositions=steps).compute_epsilon(num_compositions=steps)
    ours = gaussian_pld([(1.0, sigma, steps)], rate).get_epsilon_for_delta(1e-5)
    assert lower <= ours <= upper


@pytest.mark.parametrize(("mechanism", "parameters", "pure"),
                         [("lnmax", {"laplace_scale": 20.0}, 0.1),
                          ("exponential", {"eta": 0.05}, 0.1)])
def test_few_pure_dp_answers_are_composed_exactly(mechanism, parameters, pure):
    """One LNMax (2 / lambda) or exponential (2 eta) answer: the exact figure, at most the
    step's own epsilon (0.1), where the RDP curve's conversion gives more; the headline
    takes it under data-independent accounting and a sweep row gives the same; over 300
    exponential answers the RDP figure is smaller and stays the headline."""
    from pate_cli.accounting.pld import (
        laplace_pld_epsilon,
        pld_available,
        pure_composed_epsilon,
    )
    from pate_cli.sweep import run_sweep

    votes = str(SAMPLES / "adult_250_votes.npy")
    for queries in (1, 3):
        run = analyze(votes, mechanism, queries=queries, accounting="data-independent",
                      **parameters)
        exact = pure_composed_epsilon(pure, queries, 1e-5)
        if mechanism == "lnmax" and pld_available():  # its noisy counts' PLD: two Laplaces
            exact = min(exact, laplace_pld_epsilon(20.0, 2 * queries, 1e-5))
        assert run.epsilon == exact <= queries * pure
        assert run.data_independent_method == "pld" and run.epsilon < run.epsilon_rdp
        grid = {key: [value] for key, value in parameters.items()}
        (row,) = run_sweep(votes, [mechanism], queries=[queries],
                           accounting="data-independent", **grid).to_dict("records")
        assert row["epsilon"] == run.epsilon
    many = analyze(votes, mechanism, queries=300, accounting="data-independent",
                   **parameters)
    if mechanism == "exponential":  # LNMax's noisy counts' PLD stays the smaller
        assert many.data_independent_method == "rdp"
        assert many.epsilon < many.epsilon_data_independent_pld


@pytest.mark.parametrize(("scale", "answers"), [(20.0, 100), (20.0, 9000), (5.0, 300)])
def test_lnmax_noisy_counts_pld_against_prv_accountant(scale, answers):
    """LNMax's answers are two Laplace steps each (sensitivity 1): dp_accounting's PLD of
    2 x answers of them lies inside prv_accountant's bounds for the same composition,
    below the RDP conversion, and is the data-independent headline."""
    pytest.importorskip("dp_accounting")
    prv = pytest.importorskip("prv_accountant")
    from prv_accountant.privacy_random_variables import LaplaceMechanism

    from pate_cli.accounting.pld import laplace_pld_epsilon

    figure = laplace_pld_epsilon(scale, 2 * answers, 1e-5)
    accountant = prv.PRVAccountant(prvs=[LaplaceMechanism(mu=1.0 / scale)],
                                   max_self_compositions=[2 * answers], eps_error=1e-2,
                                   delta_error=1e-10)
    low, _, high = accountant.compute_epsilon(delta=1e-5, num_self_compositions=[2 * answers])
    assert low <= figure <= high
    run = analyze(str(SAMPLES / "mnist_250_votes.npy"), "lnmax", laplace_scale=scale,
                  queries=answers, accounting="data-independent")
    assert run.epsilon == figure < run.epsilon_rdp and run.data_independent_method == "pld"


@pytest.mark.parametrize("args", [
    ("-n", "50", "-m", "gnmax", "--sigma", "1e-8"),
    ("-n", "50", "-m", "confident", "--sigma-threshold", "1e-9"),
    ("--rounds", "{rounds}"),
])
def test_an_unresolved_profile_leaves_the_rdp_figure_alone(cli, tmp_path, args):
    """A std near its lower limit (1e-9 is accepted): the Gaussian profile is not resolved
    in floats, so there is no PLD figure (null), never inf: the JSON stays valid (it was
    exit 2, "not JSON compliant: inf"; review R17)."""
    rounds = tmp_path / "rounds.csv"
    rounds.write_text("rows,mechanism,sigma\n0:20,gnmax,1e-9\n20:50,gnmax,1e-9\n")
    done = cli.analyze("sample_votes/mnist_250_votes.npy",
                       *(arg.format(rounds=rounds) for arg in args), "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["epsilon_data_independent_pld"] is None
    assert math.isfinite(summary["epsilon_data_independent"])


def test_an_order_is_shown_as_itself(cli):
    """An order just above 1 was shown as "order 1" (not a Rényi order) in the summary and
    the grid-edge note (review R17); an extended grid's order keeps its digits."""
    from pate_cli.accounting.conversion import grid_edge_notes
    from pate_cli.rounding import order_text

    assert [order_text(order) for order in (13.5, 2.0, 1e6, 1.0000001, 1.61761328)] \
        == ["13.5", "2", "1e+06", "1.0000001", "1.61761"]
    done = cli.analyze("sample_votes/mnist_250_votes.npy", "-n", "50", "-m", "gnmax",
                       "--sigma", "1e6", "--orders", "1.0000001")
    assert done.code == 0 and "(RDP, order 1.0000001;" in done.out
    assert "the best order 1.0000001 is the first" in grid_edge_notes(
        np.array([1.0000001, 2.0]), 1.0000001, 5.0)[0]
