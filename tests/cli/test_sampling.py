"""``--sampling`` and ``--vote-change`` (MATH.md s.16, CLI.md) through the command line:
every refusal in one line with exit status 2, the JSON ``sampling`` object, the RDP
figure against the amplified curves composed by hand, rate 1 against no sampling."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.subsampling import rdp_poisson_gaussian, rdp_without_replacement
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
     "bounds (MATH.md s.3-s.5) are for a fixed histogram and no valid published bound "
     "combines them with amplification by subsampling (MATH.md s.16)"),
    (["--sampling", "poisson:0.1", "--accounting", "expected"],
     "--sampling needs --accounting data-independent, not expected: the data-dependent "
     "bounds (MATH.md s.3-s.5) are for a fixed histogram and no valid published bound "
     "combines them with amplification by subsampling (MATH.md s.16)"),
    (["--sampling", "with-replacement:100/1000", *DI],
     "--sampling with-replacement is refused: no amplification bound for sampling with "
     "replacement is implemented (MATH.md s.16); accounting it as poisson or "
     "without-replacement is invalid"),
    (["--sampling", "poisson:0", *DI], "--sampling poisson:RATE needs a rate in (0, 1], got 0"),
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
]


@pytest.mark.parametrize("options, message", REFUSALS)
def test_refusals_are_one_line_exit_2(cli, votes, options, message):
    result = cli.analyze(votes, *options)
    assert result.code == 2
    assert result.out == ""
    assert one_line_error(result) == f"Error: {message}{HINT}"


def test_json_sampling_is_null_without_sampling(cli, votes):
    summary = run_json(cli, votes, *DI)
    assert summary["sampling"] is None
    assert summary["epsilon_method"] in ("rdp", "pld")


@pytest.mark.parametrize("change, sensitivity", [("move", math.sqrt(2.0)), ("add", 1.0)])
def test_poisson_rdp_figure_is_the_amplified_curves_composed(cli, votes, change, sensitivity):
    """Confident, sigma = 10, sigma1 = 20, rate 0.2: every query's threshold step
    (z = sigma1) plus each answered query's argmax (z = sigma / Delta), composed and
    converted by hand; the PLD figure, where reported, is below it."""
    summary = run_json(cli, votes, *DI, "--sigma", "10", "--sigma-threshold", "20",
                       "-T", "18", "--sampling", "poisson:0.2", "--vote-change", change)
    assert summary["sampling"] == {
        "scheme": "poisson", "rate": 0.2, "size": None, "population": None,
        "vote_change": change, "sensitivity": sensitivity, "sensitivity_norm": "L2",
        "threshold_sensitivity": 1.0}
    orders = default_orders()
    answered = summary["answered"]
    curve = (40 * rdp_poisson_gaussian(rate=0.2, noise_multiplier=20.0, orders=orders)
             + answered * rdp_poisson_gaussian(rate=0.2, noise_multiplier=10.0 / sensitivity,
                                               orders=orders))
    epsilon, _ = rdp_to_epsilon(curve, orders=orders, delta=1e-5)
    rdp_figure = summary["epsilon_rdp"]
    assert rdp_figure == pytest.approx(float(epsilon), rel=1e-12)
    assert summary["epsilon"] <= rdp_figure
    assert summary["epsilon_method"] == ("pld" if summary["epsilon"] < rdp_figure else "rdp")


def test_without_replacement_is_theorem_9_and_rdp(cli, votes):
    summary = run_json(cli, votes, *DI, "-m", "gnmax", "--sigma", "8",
                       "--sampling", "without-replacement:150/1000")
    assert summary["sampling"]["size"] == 150 and summary["sampling"]["population"] == 1000
    orders = default_orders()
    z = 8.0 / math.sqrt(2.0)
    curve = 40 * rdp_without_replacement(lambda o: np.asarray(o) / (2 * z * z), rate=0.15,
                                         orders=orders)
    epsilon, _ = rdp_to_epsilon(curve, orders=orders, delta=1e-5)
    assert summary["epsilon_method"] == "rdp"
    assert summary["epsilon"] == pytest.approx(float(epsilon), rel=1e-12)


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
    for scheme in ("poisson:0.1", "without-replacement:1/10"):
        sampled = run_json(cli, votes, *DI, "-m", "lnmax", "--laplace-scale", "2",
                           "--sampling", scheme)
        assert sampled["sampling"]["sensitivity"] == 2.0
        assert sampled["sampling"]["sensitivity_norm"] == "L1"
        assert sampled["epsilon"] < plain["epsilon"]


@pytest.mark.parametrize("mechanism", ["gnmax", "confident"])
@pytest.mark.parametrize("rate", ["5e-324", "1e-310"])
def test_a_subnormal_rate_is_accounted_at_the_smallest_rate_dp_accounting_takes(
        cli, votes, mechanism, rate):
    """dp_accounting's PLD of a sampled Gaussian divides by the rate (inf below ~5.6e-309)
    and failed with its own message; such a rate is accounted at the smallest normal float,
    an upper bound (accounting.pld's docstring), whose epsilon is no larger than at any
    larger rate."""
    pytest.importorskip("dp_accounting")
    from pate_cli.accounting.pld import SMALLEST_RATE

    tiny = run_json(cli, votes, *DI, "-m", mechanism, "--sampling", f"poisson:{rate}")
    floor = run_json(cli, votes, *DI, "-m", mechanism, "--sampling",
                     f"poisson:{SMALLEST_RATE!r}")
    larger = run_json(cli, votes, *DI, "-m", mechanism, "--sampling", "poisson:1e-3")
    assert tiny["sampling"]["rate"] == float(rate)
    assert tiny["epsilon_method"] == "pld"
    assert tiny["epsilon"] == floor["epsilon"] <= larger["epsilon"]


def test_same_bytes_for_any_chunk_or_worker_count(cli, votes):
    args = (votes, *DI, "--sampling", "poisson:0.3", "--format", "json")
    first = cli.analyze(*args, "--workers", "1")
    second = cli.analyze(*args, "--workers", "2")
    assert first.code == 0 and first.out == second.out


def test_table_names_the_scheme(cli, votes):
    result = cli.analyze(votes, *DI, "--sampling", "without-replacement:15/100")
    assert result.code == 0
    assert ("sampling          without replacement, 15 of 100; a unit moves one vote "
            "(argmax L2 sensitivity 1.41421)") in result.out


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
        assert row["epsilon_method"] == "rdp"
        single = run_json(cli, votes, *DI, "-m", row["mechanism"], "--sigma",
                          str(row["sigma"]), "--sampling", "poisson:0.25", "--vote-change",
                          "add")
        assert row["epsilon"] == single["epsilon_rdp"]  # a sweep converts RDP curves


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


def test_report_states_the_sampling(cli, votes, tmp_path):
    pytest.importorskip("jinja2")
    out = tmp_path / "report.md"
    result = cli.report(votes, *DI, "--sampling", "poisson:0.2", "-o", str(out))
    assert result.code == 0, result.err
    assert "Poisson sampling at rate 0.2: every unit votes independently" in out.read_text()
