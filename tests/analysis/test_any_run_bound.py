"""The data-independent bound for any run of an aggregator with a selection step.

The replay's (or the decisions') answered count is a function of the votes: composing only
its answers bounds that outcome, not the mechanism. The bound whatever a run answers
charges every query's answer step (``epsilon_data_independent_worst`` and its PLD figure);
it is what pate-report publishes, what the attack risk rests on and what pate-calibrate
meets, and it does not depend on the seed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import pate_cli
from pate_cli.orders import default_orders
from pate_cli.outputs.report_content import report_content
from pate_cli.outputs.summary_json import summary_dict
from pate_cli.rounding import ceil_text
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
RUN = dict(queries=1000, threshold=200.0, sigma_threshold=150.0, sigma=40.0,
           screening="gaussian")


def _gdp_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of mu-GDP at ``delta`` (Dong, Roth and Su 2022, Corollary 2.13)."""
    def excess(eps):
        return (norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
                - delta)
    return brentq(excess, 0.0, 100.0, xtol=1e-15, rtol=1e-15)


@pytest.mark.parametrize("accounting", ["replay", "data-independent"])
def test_the_bound_answers_every_query_against_independent_values(accounting):
    result = pate_cli.analyze(VOTES, "confident", accounting=accounting,
                              conversion="improved", **RUN)
    assert result.answered_total < 1000  # the replay's count is below the queries
    dp = pytest.importorskip("dp_accounting")
    accountant = dp.rdp.RdpAccountant(orders=default_orders().tolist())
    accountant.compose(dp.GaussianDpEvent(40.0 / math.sqrt(2.0)), 1000)  # every answer
    accountant.compose(dp.GaussianDpEvent(150.0), 1000)  # every selection
    independent = accountant.get_epsilon(1e-5)
    worst = result.epsilon_data_independent_worst
    assert worst >= independent and worst == pytest.approx(independent, rel=1e-11)
    exact = _gdp_epsilon(math.sqrt(1000 * 2 / 40.0**2 + 1000 / 150.0**2), 1e-5)
    pld = result.epsilon_data_independent_worst_pld
    assert pld >= exact and pld == pytest.approx(exact, rel=1e-9)
    # the run's own count gives less: a figure of the votes, not a bound
    assert result.epsilon_data_independent < worst
    assert result.epsilon_data_independent_pld < pld


def test_the_published_bound_and_risk_do_not_depend_on_the_seed():
    published, mus, counts = set(), set(), set()
    for seed in range(4):
        summary = summary_dict(pate_cli.analyze(VOTES, "confident", seed=seed, **RUN))
        counts.add(summary["answered"])
        published.add(report_content(summary)["headline"]["published"])
        mus.add(summary["risk_data_independent"]["mu"])
        assert report_content(summary)["headline"]["published"] == min(
            summary["epsilon_data_independent_worst"],
            summary["epsilon_data_independent_worst_pld"])
    assert len(counts) > 1 and len(published) == 1 and len(mus) == 1
    assert mus.pop() == pytest.approx(math.sqrt(1000 * 2 / 40.0**2 + 1000 / 150.0**2),
                                      rel=1e-14)


def test_a_budget_run_is_bounded_over_every_requested_query():
    """GNMax answers every query: no separate bound. A budget's halt bounds no other run
    (under replay the votes decide it, under data-independent accounting the outcomes), so
    the bound for any run answers every requested query, not only those processed."""
    assert pate_cli.analyze(VOTES, "gnmax", queries=300).epsilon_data_independent_worst is None
    whole = pate_cli.analyze(VOTES, "confident", queries=1000)
    for accounting in ("replay", "data-independent"):
        budgeted = pate_cli.analyze(VOTES, "confident", accounting=accounting, budget=1.5,
                                    queries=1000)
        assert budgeted.budget.halted_at is not None and budgeted.epsilon <= 1.5
        assert budgeted.epsilon_data_independent_worst == whole.epsilon_data_independent_worst
        assert (budgeted.epsilon_data_independent_worst_pld
                == whole.epsilon_data_independent_worst_pld)


def test_the_summary_and_report_say_the_count_is_not_a_bound(cli, tmp_path):
    args = (VOTES, "-n", "1000", "-T", "200", "--sigma-threshold", "150", "--sigma", "40")
    line = next(row for row in cli.analyze(*args).out.splitlines()
                if row.startswith("data-independent"))
    summary = json.loads(cli.analyze(*args, "-f", "json").out)
    bound = ceil_text(summary["epsilon_data_independent_worst_pld"])
    assert line.startswith(f"data-independent  {bound} (privacy-loss distribution "
                           "accountant, every query answered: the bound for any run; RDP ")
    assert line.endswith(f"at the run's {summary['answered']} answers, not a bound: the votes "
                         "decide that count")
    report = tmp_path / "r.md"
    assert cli.report(*args, "-o", report).code == 0
    text = report.read_text()
    assert "a data-independent bound that holds whatever a run answers" in text
    assert f"at the run's {summary['answered']} answers it would be" in text


def test_calibrate_meets_the_bound_for_any_run():
    answer = pate_cli.calibrate(VOTES, "confident", target_epsilon=2.0, queries=640,
                                threshold=200.0, sigma_threshold=150.0)
    sigma = answer.params["sigma"]
    for seed in range(3):  # whatever a run answers
        run = pate_cli.analyze(VOTES, "confident", accounting="data-independent", seed=seed,
                               queries=640, threshold=200.0, sigma_threshold=150.0,
                               sigma=sigma)
        bound = min(run.epsilon_data_independent_worst,
                    run.epsilon_data_independent_worst_pld)
        assert bound <= 2.0 and run.epsilon < bound
    assert answer.to_dict()["every_query_answered"] is True
    assert np.isclose(answer.epsilon, bound, rtol=0, atol=0)


def test_a_report_refuses_an_earlier_summary_without_the_bound(cli, tmp_path):
    """A summary written before the bound for any run was recorded would publish the
    replay's count's figure: refused (exit 2) with what to do."""
    summary = json.loads(cli.analyze(VOTES, "-n", "300", "-f", "json").out)
    del summary["epsilon_data_independent_worst_pld"]
    older = tmp_path / "older.json"
    older.write_text(json.dumps(summary))
    done = cli.report("--from", older, "-o", tmp_path / "r.md")
    assert done.code == 2 and "written before summaries held the bound for any run" in done.err
    assert not (tmp_path / "r.md").exists()


def test_a_data_independent_budget_line_says_it_held_the_runs_count():
    """Under data-independent accounting a selecting run's budget halts on the replay's
    count's figure ("3: halted before query 462, 0.5769 left"), read as if 3 were the
    guarantee: the line says it is not a bound, and the bound for any run is above it."""
    from pate_cli.outputs.summary import summary_lines

    result = pate_cli.analyze(VOTES, "confident", accounting="data-independent", budget=3.0)
    lines = dict(summary_lines(summary_dict(result)))
    assert lines["budget"].endswith("left on the run's answers, not a bound (see "
                                    "data-independent)")
    assert result.epsilon <= 3.0 < result.epsilon_data_independent_worst_pld
    plain = dict(summary_lines(summary_dict(pate_cli.analyze(VOTES, "gnmax", budget=3.0,
                                                             accounting="data-independent"))))
    assert plain["budget"].endswith(" left")  # GNMax: a count the votes do not decide


def test_a_budget_reports_headline_counts_the_requested_queries():
    """Review H6: after a halt the headline said "every one of the 826 queries answered"
    (the processed count) for a bound over all 8,080 requested: JSON budget.requested."""
    summary = summary_dict(pate_cli.analyze(VOTES, "confident", queries=3000, budget=2.0))
    assert summary["budget"]["requested"] == 3000 and summary["queries"] < 3000
    text = report_content(summary)["headline"]["text"]
    assert "every one of the 3,000 queries requested, past the halt, answered" in text
