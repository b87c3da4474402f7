"""``--sampling``, ``--vote-change`` and ``--sampling-steps`` (math:sampling, cli:json) through
the command line:
every refusal in one line with exit status 2, the JSON ``sampling`` object, the RDP
figure against the amplified curves composed by hand, rate 1 against no sampling."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli import analyze
from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.screening import rdp_screening
from pate_cli.accounting.subsampling import (
    rdp_poisson_gaussian,
    rdp_without_replacement_gaussian,
)
from pate_cli.numerics import raised_rdp
from pate_cli.orders import default_orders
from tests.cli.test_analyze import HINT, one_line_error

DI = ("--accounting", "data-independent")
# 40 queries x 4 classes, 30 voters each: a Private-kNN-like file (k = 30 neighbours)
ROWS = np.random.default_rng(7).multinomial(30, [0.7, 0.1, 0.1, 0.1], size=40)


@pytest.fixture
def votes(tmp_path):
    path = tmp_path / "knn_votes.npy"
    np.save(path, ROWS)
    return str(path)


def run_json(cli, *args) -> dict:
    result = cli.analyze(*args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


REFUSALS = [
    (["--sampling", "poisson:0.1"],
     "--sampling needs --accounting data-independent, not replay: the data-dependent "
     "bounds (docs/explanation/data-dependent.md) are for a fixed histogram and no valid "
     "published bound combines them with amplification by subsampling "
     "(docs/explanation/sampling.md)"),
    (["--sampling", "poisson:0.1", "--accounting", "expected"],
     "--sampling needs --accounting data-independent, not expected: the data-dependent "
     "bounds (docs/explanation/data-dependent.md) are for a fixed histogram and no valid "
     "published bound combines them with amplification by subsampling "
     "(docs/explanation/sampling.md)"),
    (["--sampling", "with-replacement:100/1000", *DI],
     "--sampling with-replacement is refused: no amplification bound for sampling with "
     "replacement is implemented (docs/explanation/sampling.md); accounting it as poisson or "
     "without-replacement is invalid"),
    (["--sampling", "poisson:0", *DI], "--sampling poisson:RATE needs a rate in (0, 1], got 0"),
    (["--sampling", "poisson:1.5"],  # a bad value first, whatever the accounting
     "--sampling poisson:RATE needs a rate in (0, 1], got 1.5"),
    (["--sampling", "poisson:1.5", *DI],
     "--sampling poisson:RATE needs a rate in (0, 1], got 1.5"),
    (["--sampling", "poisson:-0.2", *DI],
     "--sampling poisson:RATE needs a rate in (0, 1], got -0.2"),
    (["--sampling", "poisson:nan", *DI], "--sampling poisson:RATE needs a rate in (0, 1], got nan"),
    (["--sampling", "poisson:x", *DI], "--sampling poisson:RATE needs a number, got 'x'"),
    (["--sampling", "without-replacement:20/10", *DI],
     "--sampling without-replacement:20/10: m = 20 is larger than N = 10 (rate m/N must lie "
     "in (0, 1])"),
    (["--sampling", "without-replacement:0/10", *DI],
     "--sampling without-replacement:m/N needs whole numbers 1 <= m <= N, got '0/10'"),
    (["--sampling", "without-replacement:5", *DI],
     "--sampling without-replacement:m/N needs whole numbers 1 <= m <= N, got '5'"),
    (["--sampling", "bernoulli:0.1", *DI],
     "--sampling must be poisson:RATE or without-replacement:m/N, got 'bernoulli:0.1'"),
    (["--sampling", "poisson:0.1", *DI, "-m", "svt"],
     "--sampling applies to -m gnmax, confident, lnmax, not -m svt"),
    (["--sampling", "poisson:0.1", *DI, "--smooth-sensitivity"],
     "--sampling applies to single runs (not --rounds, --individualized or "
     "--smooth-sensitivity)"),
    (["--vote-change", "add"], "--vote-change applies to sampled voters (--sampling)"),
    (["--sampling", "without-replacement:29/100", *DI],  # rows of 30 votes (review R16)
     "--sampling without-replacement:29/100: a query's votes come from at most 29 sampled "
     "voters, each casting one vote, but M (--teachers, else the most votes a row holds) is "
     "larger (raise the sample size to at least M)"),
    *((["--sampling", "poisson:0.5", *DI, "-m", name, "--sampling-steps", "independent"],
       "--sampling-steps independent applies to -m confident (a threshold step and an answer "
       f"step that each sample the voters), not -m {name}") for name in ("gnmax", "lnmax")),
]


@pytest.mark.parametrize("options, message", REFUSALS)
def test_refusals_are_one_line_exit_2(cli, votes, options, message):
    result = cli.analyze(votes, *options)
    assert result.code == 2
    assert result.out == ""
    assert one_line_error(result) == f"Error: {message}{HINT}"


def test_a_noise_too_small_for_dp_accountings_grid_keeps_the_rdp_figure(cli, votes):
    """dp_accounting cannot discretise a sampled Gaussian of std 1e-6 (an overflow in its
    grid): ``gaussian_pld`` gives None and the run keeps its other figures, exit 0 (it
    was "unexpected OverflowError", exit 1)."""
    pytest.importorskip("dp_accounting")
    from pate_cli.accounting.pld import gaussian_pld
    assert gaussian_pld([(math.sqrt(2.0), 1e-6, 40)], 0.01) is None
    summary = run_json(cli, votes, *DI, "--sampling", "poisson:0.01", "-m", "gnmax",
                       "--sigma", "1e-6")
    assert math.isfinite(summary["epsilon"]) and summary["epsilon"] > 0


def test_json_sampling_is_null_without_sampling(cli, votes):
    summary = run_json(cli, votes, *DI)
    assert summary["sampling"] is None
    assert summary["epsilon_method"] in ("rdp", "pld")


def _threshold_curve(orders, change="move"):
    """The threshold step's own curve in these runs: T 18, sigma1 20, 30 voters
    (math:screening); a neighbour that adds a voter may bring the count to 31."""
    return rdp_screening(threshold=18.0, sigma_threshold=20.0, low=0.0,
                         high=31.0 if change == "add" else 30.0, orders=orders)


@pytest.mark.parametrize("change, sensitivity", [("move", math.sqrt(2.0)), ("add", 1.0)])
@pytest.mark.parametrize("steps", ["shared", "independent"])
def test_poisson_rdp_figure_is_the_amplified_curves_composed(cli, votes, change, sensitivity,
                                                             steps):
    """Confident, sigma = 10, sigma1 = 20, rate 0.2. Shared steps (one subset per query):
    each answered query one sampled Gaussian on the pair of counts, ``1/z^2 = 1/sigma1^2
    + Delta^2/sigma^2``, each other query the sampled threshold step; independent steps:
    every threshold step plus each answer, amplified apart. Each amplified curve is capped
    by its unsampled one (the threshold's exact curve). Composed and converted by hand; the
    PLD figure, where reported, is below it."""
    summary = run_json(cli, votes, *DI, "--sigma", "10", "--sigma-threshold", "20",
                       "-T", "18", "--sampling", "poisson:0.2", "--vote-change", change,
                       "--sampling-steps", steps)
    assert summary["sampling"] == {
        "scheme": "poisson", "rate": 0.2, "size": None, "population": None,
        "vote_change": change, "moves": change == "move", "sensitivity": sensitivity,
        "sensitivity_norm": "L2", "threshold_sensitivity": 1.0, "steps": steps}
    orders = default_orders()
    answered = summary["answered"]
    own_answer = orders * sensitivity**2 / 200.0
    threshold = np.minimum(rdp_poisson_gaussian(rate=0.2, noise_multiplier=20.0,
                                                orders=orders),
                           _threshold_curve(orders, change))
    if steps == "shared":
        joint = 1.0 / math.sqrt(1.0 / 400.0 + sensitivity**2 / 100.0)
        pair = np.minimum(rdp_poisson_gaussian(rate=0.2, noise_multiplier=joint, orders=orders),
                          _threshold_curve(orders, change) + own_answer)
        curve = answered * pair + (40 - answered) * threshold
    else:
        curve = 40 * threshold + answered * np.minimum(rdp_poisson_gaussian(
            rate=0.2, noise_multiplier=10.0 / sensitivity, orders=orders), own_answer)
    epsilon, _ = rdp_to_epsilon(curve, orders=orders, delta=1e-5)
    rdp_figure = summary["epsilon_rdp"]
    assert rdp_figure == pytest.approx(float(epsilon), rel=1e-12)
    assert rdp_figure >= float(epsilon) * (1 - 1e-15)  # never rounded below
    assert summary["epsilon"] <= rdp_figure
    assert summary["epsilon_method"] == ("pld" if summary["epsilon"] < rdp_figure else "rdp")


@pytest.mark.parametrize("rate", ["1", "0.5"])
def test_an_added_voter_reaches_the_count_m_plus_one(cli, tmp_path, rate):
    """--vote-change add: the neighbour may hold M + 1 voters, so the threshold's exact
    curve covers the counts 0..M+1 (it covered 0..M: at order 500, T 50, sigma1 3 and one
    row of 100 votes, 5.2453 where the pair (100, 101) gives 5.3450)."""
    np.save(tmp_path / "one.npy", np.array([[100, 0]]))
    summary = run_json(cli, tmp_path / "one.npy", *DI, "-m", "confident", "--sigma", "1000",
                       "-T", "50", "--sigma-threshold", "3", "--sampling", f"poisson:{rate}",
                       "--vote-change", "add", "--order", "500", "--sampling-steps",
                       "independent")
    reach = rdp_screening(threshold=50.0, sigma_threshold=3.0, low=0.0, high=101.0,
                          orders=[500.0])[0]
    assert reach > rdp_screening(threshold=50.0, sigma_threshold=3.0, low=0.0, high=100.0,
                                 orders=[500.0])[0] * 1.01
    raised = float(raised_rdp(reach))  # RDP values handed on are raised (numerics)
    if rate == "1":
        assert summary["rdp_at_order"]["selection"] == raised
    else:
        assert summary["rdp_at_order"]["selection"] <= raised


def test_shared_steps_cost_at_least_independent_ones(cli, votes):
    """One subset feeding both steps is the stronger charge (the issue's under-charge: the
    two steps amplified apart as if each drew its own subset)."""
    figures = {steps: run_json(cli, votes, *DI, "--sigma", "10", "--sigma-threshold", "20",
                               "-T", "18", "--sampling", "poisson:0.2",
                               "--sampling-steps", steps)
               for steps in ("shared", "independent")}
    assert figures["shared"]["epsilon_rdp"] > figures["independent"]["epsilon_rdp"]
    assert figures["shared"]["epsilon"] > figures["independent"]["epsilon"]


def test_shared_confident_is_the_joint_sampled_gaussian(cli, tmp_path):
    """T 200, sigma1 1, sigma 1.414, poisson:0.05, add, 100 answered queries: the PLD
    figure is dp_accounting's for 100 Poisson-sampled Gaussians of noise multiplier
    ``(1/1 + 1/1.414^2)^(-1/2)`` (5.4769); amplifying the two steps apart gave 3.91."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant
    path = tmp_path / "v.npy"
    np.save(path, np.tile([250] + [0] * 9, (100, 1)))
    args = (str(path), *DI, "-T", "200", "--sigma-threshold", "1", "--sigma", "1.414",
            "--sampling", "poisson:0.05", "--vote-change", "add")
    summary = run_json(cli, *args)
    assert summary["answered"] == 100 and summary["epsilon_method"] == "pld"
    joint = 1.0 / math.sqrt(1.0 + 1.0 / 1.414**2)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        0.05, dp_accounting.GaussianDpEvent(joint)), 100))
    assert summary["epsilon"] == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-9)
    assert summary["epsilon"] > 5.4
    apart = run_json(cli, *args, "--sampling-steps", "independent")
    assert apart["epsilon"] < 4.0


def test_without_replacement_is_theorem_27(cli, votes):
    summary = run_json(cli, votes, *DI, "-m", "gnmax", "--sigma", "8",
                       "--sampling", "without-replacement:150/1000")
    assert summary["sampling"]["size"] == 150 and summary["sampling"]["population"] == 1000
    orders = default_orders()
    curve = 40 * rdp_without_replacement_gaussian(rate=0.15, noise_multiplier=8.0 / math.sqrt(2),
                                                  orders=orders)
    epsilon, _ = rdp_to_epsilon(curve, orders=orders, delta=1e-5)
    assert summary["epsilon_rdp"] == pytest.approx(float(epsilon), rel=1e-12)
    assert summary["epsilon"] <= summary["epsilon_rdp"]


def test_without_replacement_moves_a_vote_and_refuses_add(cli, tmp_path):
    """Neighbours replace one unit: a unit that casts one vote takes one count down and
    another up (L2 sqrt 2). At m = N nothing is sampled and the figure is the unsampled
    run's (100 rows of [200, 30, 20], sigma 40: 1.3565 by PLD; an old version charged
    sensitivity 1 and printed 1.2309). ``--vote-change add`` would not be used: refused,
    exit 2 (it was accepted and ignored)."""
    path = tmp_path / "v.npy"
    np.save(path, np.tile([200, 30, 20], (100, 1)))
    args = (str(path), *DI, "-m", "gnmax", "--sigma", "40")
    plain = run_json(cli, *args)
    full = run_json(cli, *args, "--sampling", "without-replacement:1000/1000")
    assert full["sampling"]["sensitivity"] == math.sqrt(2.0) and full["sampling"]["moves"]
    for key in ("epsilon", "epsilon_rdp", "order", "epsilon_method"):
        assert full[key] == plain[key], key
    assert full["epsilon"] > 1.35
    table = cli.analyze(*args, "--sampling", "without-replacement:250/1000")
    assert "a replaced unit moves one vote (argmax L2 sensitivity 1.41421)" in table.out
    refused = cli.analyze(*args, "--sampling", "without-replacement:250/1000",
                          "--vote-change", "add")
    assert refused.code == 2 and not refused.out
    assert "--vote-change add applies to --sampling poisson" in refused.err
    moved = run_json(cli, *args, "--sampling", "without-replacement:250/1000",
                     "--vote-change", "move")  # the default, said: accepted
    assert moved["sampling"]["vote_change"] == "move"


@pytest.mark.parametrize("mechanism", ["gnmax", "confident", "lnmax"])
def test_rate_one_is_no_sampling(cli, votes, mechanism):
    plain = run_json(cli, votes, *DI, "-m", mechanism)
    for scheme in ("poisson:1", "without-replacement:40/40"):
        sampled = run_json(cli, votes, *DI, "-m", mechanism, "--sampling", scheme)
        for key in ("epsilon", "epsilon_rdp", "epsilon_method", "order", "answered",
                    "epsilon_data_independent", "rdp_at_order"):
            assert sampled[key] == plain[key], key


def test_lnmax_sampled_is_below_unsampled(cli, votes):
    plain = run_json(cli, votes, *DI, "-m", "lnmax", "--laplace-scale", "2")
    for scheme in ("poisson:0.1", "without-replacement:30/300"):
        sampled = run_json(cli, votes, *DI, "-m", "lnmax", "--laplace-scale", "2",
                           "--sampling", scheme)
        assert sampled["sampling"]["sensitivity"] == 2.0
        assert sampled["sampling"]["sensitivity_norm"] == "L1"
        assert sampled["epsilon"] < plain["epsilon"]


@pytest.mark.parametrize("mechanism", ["gnmax", "confident"])
def test_a_subnormal_rate_is_accounted_at_the_smallest_rate_dp_accounting_takes(
        cli, votes, mechanism):
    """dp_accounting's PLD of a sampled Gaussian divides by the rate (inf below ~5.6e-309)
    and failed with its own message; such a rate (the smallest subnormal and another) is
    accounted at the smallest normal float, an upper bound (accounting.pld's docstring),
    whose epsilon is no larger than at any larger rate."""
    pytest.importorskip("dp_accounting")
    from pate_cli.accounting.pld import SMALLEST_RATE

    floor = run_json(cli, votes, *DI, "-m", mechanism, "--sampling",
                     f"poisson:{SMALLEST_RATE!r}")
    larger = run_json(cli, votes, *DI, "-m", mechanism, "--sampling", "poisson:1e-3")
    for rate in ("5e-324", "1e-310"):
        tiny = run_json(cli, votes, *DI, "-m", mechanism, "--sampling", f"poisson:{rate}")
        assert tiny["sampling"]["rate"] == float(rate)
        assert tiny["epsilon_method"] == "pld"
        assert tiny["epsilon"] == floor["epsilon"] <= larger["epsilon"]


def test_same_bytes_for_any_chunk_or_worker_count(cli, votes):
    args = (votes, *DI, "--sampling", "poisson:0.3", "--format", "json")
    first = cli.analyze(*args, "--workers", "1")
    second = cli.analyze(*args, "--workers", "2")
    assert first.code == 0 and first.out == second.out


def test_table_names_the_scheme(cli, votes):
    result = cli.analyze(votes, *DI, "--sampling", "without-replacement:30/100")
    assert result.code == 0
    assert ("sampling          without replacement, 30 of 100; a replaced unit moves one "
            "vote (argmax L2 sensitivity 1.41421); one subset feeds both steps") in result.out


# --- pate-sweep, pate-calibrate, pate-report -----------------------------------------------

def test_sweep_rows_carry_the_scheme_and_match_pate_analyze(cli, votes):
    result = cli.sweep(votes, "-m", "gnmax", "-m", "confident", "--sigma", "8,12", *DI,
                       "--sampling", "poisson:0.25", "--vote-change", "add", "-f", "json",
                       "-q", "--no-progress", "-w", "1")
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert len(rows) == 4
    for row in rows:
        assert row["sampling"] == "poisson:0.25" and row["vote_change"] == "add"
        assert row["sampling_steps"] == ("shared" if row["mechanism"] == "confident" else None)
        single = run_json(cli, votes, *DI, "-m", row["mechanism"], "--sigma",
                          str(row["sigma"]), "--sampling", "poisson:0.25", "--vote-change",
                          "add")
        # pate-analyze's figure, its sampled composition by dp_accounting where smaller
        assert (row["epsilon"], row["epsilon_method"]) == (single["epsilon"],
                                                           single["epsilon_method"])
        assert row["epsilon"] <= single["epsilon_rdp"]
    apart = cli.sweep(votes, "-m", "confident", "--sigma", "8", *DI, "--sampling",
                      "poisson:0.25", "--sampling-steps", "independent", "-f", "json", "-q",
                      "--no-progress", "-w", "1")
    row = json.loads(apart.out)
    assert row["sampling_steps"] == "independent"
    single = run_json(cli, votes, *DI, "--sigma", "8", "--sampling", "poisson:0.25",
                      "--sampling-steps", "independent")
    shared = run_json(cli, votes, *DI, "--sigma", "8", "--sampling", "poisson:0.25")
    assert row["epsilon"] == single["epsilon"]
    assert single["epsilon_rdp"] < shared["epsilon_rdp"]


def test_sweep_without_sampling_has_empty_columns(cli, votes):
    result = cli.sweep(votes, "-m", "gnmax", "--sigma", "8", "-f", "json", "-q",
                       "--no-progress", "-w", "1")
    row = json.loads(result.out)
    assert row["sampling"] is None and row["vote_change"] is None
    assert row["epsilon_method"] == "rdp"


@pytest.mark.parametrize("options, message", [
    (["--sampling", "poisson:0.1"], REFUSALS[0][1]),
    (["--sampling", "poisson:2", *DI], "--sampling poisson:RATE needs a rate in (0, 1], got 2"),
    (["-m", "svt", "--sampling", "poisson:0.1", *DI],
     "--sampling applies to -m gnmax, confident, lnmax, not -m svt"),
])
def test_sweep_refusals(cli, votes, options, message):
    result = cli.sweep(votes, *options, "-q", "--no-progress")
    assert result.code == 2
    assert result.err.strip() == f"Error: {message} (see pate-sweep --help)"


def test_calibrate_solves_sigma_at_a_rate(cli, votes):
    result = cli.calibrate(votes, "--target-epsilon", "1", "-m", "gnmax",
                           "--sampling", "poisson:0.2", "-f", "json")
    assert result.code == 0, result.err
    found = json.loads(result.out)
    assert found["sampling"]["rate"] == 0.2 and found["epsilon"] <= 1.0
    assert found["command"].endswith("--sampling poisson:0.2")
    again = run_json(cli, votes, *DI, "-m", "gnmax", "--sigma", str(found["params"]["sigma"]),
                     "--sampling", "poisson:0.2")
    assert again["epsilon"] == found["epsilon"]
    plain = json.loads(cli.calibrate(votes, "--target-epsilon", "1", "-m", "gnmax",
                                     "-f", "json").out)
    assert found["params"]["sigma"] < plain["params"]["sigma"]  # sampling needs less noise


def test_calibrate_refuses_expected_with_sampling(cli, votes):
    result = cli.calibrate(votes, "--target-epsilon", "1", "-m", "gnmax", "--accounting",
                           "expected", "--sampling", "poisson:0.2")
    assert result.code == 2
    assert result.err.splitlines()[-1].startswith("Error: --sampling needs --accounting "
                                                  "data-independent, not expected")
    assert len(result.err.splitlines()) == 1


def test_calibrate_refuses_independent_steps_without_a_threshold_step(cli, votes):
    result = cli.calibrate(votes, "--target-epsilon", "1", "-m", "gnmax", "--sampling",
                           "poisson:0.2", "--sampling-steps", "independent")
    assert (result.code, result.out) == (2, "")
    assert result.err == ("Error: --sampling-steps independent applies to -m confident (a "
                          "threshold step and an answer step that each sample the voters), "
                          "not -m gnmax (see pate-calibrate --help)\n")


def test_report_states_the_sampling(cli, votes, tmp_path):
    pytest.importorskip("jinja2")
    out = tmp_path / "report.md"
    result = cli.report(votes, *DI, "--sampling", "poisson:0.2", "-o", str(out))
    assert result.code == 0, result.err
    assert "Poisson sampling at rate 0.2: every unit votes independently" in out.read_text()


# --- sampling never costs more than no sampling ----------------------------------------------

@settings(max_examples=12, deadline=None)
@given(mechanism=st.sampled_from(["gnmax", "confident", "lnmax"]),
       scheme=st.sampled_from(["poisson:0.999", "poisson:0.6", "without-replacement:59999/60000",
                               "without-replacement:700/1000"]),
       noise=st.floats(min_value=2.0, max_value=80.0))
def test_declaring_sampling_never_costs_more_than_no_sampling(mechanism, scheme, noise):
    """Every amplified curve is at most the step's own unsampled one, order by order (the
    threshold's: its exact curve), and a sampled PLD figure at most the unsampled one: not
    even an ulp above (the run's sums are capped by the unsampled steps' composition, which
    Confident's shared steps, carried as a joint charge less the threshold's, left an ulp
    above it where amplification gains nothing)."""
    parameters = ({"laplace_scale": noise} if mechanism == "lnmax" else {"sigma": noise}
                  if mechanism == "gnmax"
                  else {"sigma": noise, "sigma_threshold": noise, "threshold": 20})
    common = dict(accounting="data-independent", per_query=False, **parameters)
    plain = analyze(ROWS, mechanism, **common)
    sampled = analyze(ROWS, mechanism, sampling=scheme, **common)
    assert sampled.epsilon <= plain.epsilon
    assert (sampled.epsilon_rdp or sampled.epsilon) <= (plain.epsilon_rdp or plain.epsilon)
    assert sampled.epsilon_data_independent <= plain.epsilon_data_independent


def test_sampled_confident_is_not_an_ulp_above_where_amplification_gains_nothing():
    """34 of 37 voters, shared steps: the answered queries' joint charge less the threshold's
    adds back to the unsampled pair an ulp above it; the run was 8.46178267908692 against
    8.461782679086916 without sampling."""
    votes = np.random.default_rng(5).multinomial(34, [0.4, 0.3, 0.1, 0.1, 0.1], size=217)
    common = dict(accounting="data-independent", per_query=False, threshold=24.530603566598778,
                  sigma_threshold=12.530456731866728, sigma=9.728377675784394,
                  delta=7.268608093786186e-08)
    plain = analyze(votes, "confident", **common)
    sampled = analyze(votes, "confident", sampling="without-replacement:34/37", **common)
    assert sampled.epsilon <= plain.epsilon
    assert sampled.epsilon_data_independent <= plain.epsilon_data_independent


def test_the_private_knn_run_costs_no_more_sampled_near_rate_one(cli, tmp_path):
    """The README's Private-kNN setting (1,000 queries of 300 votes, T 180, sigma1 75, sigma
    25, 735 answered): poisson:0.999 and without-replacement:59999/60000 gave 8.8871 and
    8.8972 by RDP where the run without sampling costs 8.7680 (the threshold step was capped
    by the Gaussian curve, not its exact one)."""
    votes, answered = tmp_path / "knn.npy", tmp_path / "answered.npy"
    np.save(votes, np.tile([300] + [0] * 9, (1000, 1)))
    np.save(answered, (np.arange(1000) < 735).astype(np.int8))
    args = (str(votes), *DI, "-T", "180", "--sigma-threshold", "75", "--sigma", "25",
            "--decisions", str(answered))
    plain = run_json(cli, *args)
    assert plain["epsilon_rdp"] == pytest.approx(8.768001113797594, rel=1e-12)
    for scheme in ("poisson:0.999", "without-replacement:59999/60000"):
        sampled = run_json(cli, *args, "--sampling", scheme)
        assert sampled["epsilon_rdp"] <= plain["epsilon_rdp"]
        assert sampled["epsilon"] <= plain["epsilon"]


def test_every_command_refuses_a_sample_smaller_than_a_row(cli, votes, tmp_path):
    """pate-sweep took --sampling without-replacement:29/100 over rows of 30 votes and
    reported the amplified figure of 29 voters (review R16's under-charge, left in sweep)."""
    message = ("--sampling without-replacement:29/100: a query's votes come from at most 29 "
               "sampled voters")
    options = ("-m", "gnmax", "--sigma", "10", *DI, "--sampling", "without-replacement:29/100")
    for run in (cli.analyze, cli.sweep, cli.report):
        result = run(votes, *options, *(("-o", tmp_path / "r.md") if run == cli.report
                                        else ()))
        assert result.code == 2 and message in result.err, (run, result.err)
    calibrated = cli.calibrate(votes, "-m", "gnmax", *DI, "--sampling",
                               "without-replacement:29/100", "--target-epsilon", "1")
    assert calibrated.code == 2 and message in calibrated.err
