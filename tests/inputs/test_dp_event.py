"""Interop with dp_accounting: --add-rdp takes a JSON DpEvent (e.g. a DP-SGD student),
--write-rdp exports the run's total curve; our conversion against its RdpAccountant."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.conversion import ROUNDING_MARGIN, rdp_to_epsilon
from pate_cli.inputs import load_rdp_curve
from pate_cli.inputs.rdp_curve import dp_event_dict, dp_event_from_dict
from pate_cli.orders import default_orders
from tests import SAMPLES

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import RdpAccountant  # noqa: E402
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon  # noqa: E402

VOTES = str(SAMPLES / "mnist_250_votes.npy")


def dpsgd(q=0.01, noise=1.1, steps=1000):
    """A DP-SGD student: `steps` Poisson-sampled Gaussian steps."""
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(noise)),
                                   steps)


def accountant_rdp(event, orders) -> np.ndarray:
    accountant = RdpAccountant(orders=list(orders))
    accountant.compose(event)
    return accountant.rdp


def write_event(path, event) -> str:
    path.write_text(json.dumps(dp_event_dict(event)))
    return str(path)


@pytest.mark.parametrize("event", [
    dpsgd(),
    dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.LaplaceDpEvent(2.0), dpsgd(0.05, 2.0, 50)]),
    dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 7),
])
def test_event_json_round_trip_and_curve(tmp_path, event):
    assert dp_event_from_dict(json.loads(json.dumps(dp_event_dict(event)))) == event
    orders = default_orders()
    curve, digest, note = load_rdp_curve(write_event(tmp_path / "e.json", event), orders=orders)
    assert note is None and len(digest) == 64
    np.testing.assert_array_equal(curve, accountant_rdp(event, orders))


def test_the_event_form_is_public_api(tmp_path):
    """The JSON form --add-rdp reads is written and read back from ``pate_cli`` itself."""
    import pate_cli

    assert {"dp_event_dict", "dp_event_from_dict"} <= set(pate_cli.__all__)
    assert pate_cli.dp_event_dict is dp_event_dict
    assert pate_cli.dp_event_from_dict is dp_event_from_dict
    assert "--add-rdp" in pate_cli.dp_event_dict.__doc__
    path = tmp_path / "student.json"
    path.write_text(json.dumps(pate_cli.dp_event_dict(dpsgd())))
    assert pate_cli.dp_event_from_dict(json.loads(path.read_text())) == dpsgd()
    alone = pate_cli.analyze(VOTES, queries=100, accounting="expected")
    both = pate_cli.analyze(VOTES, queries=100, accounting="expected", add_rdp=str(path))
    assert both.epsilon > alone.epsilon


def test_gaussian_event_curve_is_alpha_over_two_sigma_squared(tmp_path):
    orders = np.array([2.0, 3.5, 10.0, 64.0])
    path = write_event(tmp_path / "g.json", dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 3))
    curve, _, _ = load_rdp_curve(path, orders=orders)
    np.testing.assert_allclose(curve, 3 * orders / (2 * 16.0), rtol=1e-12)  # hand-derived


@settings(max_examples=40, deadline=None)
@given(sigma=st.floats(0.5, 50), count=st.integers(1, 10_000),
       delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_improved_conversion_equals_rdp_accountant(sigma, count, delta):
    orders = default_orders()
    rdp = count * orders / (2 * sigma**2)
    ours, order = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="improved")
    theirs, their_order = compute_epsilon(orders, rdp, delta)
    assert float(ours) == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    classic, _ = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="classic")
    assert float(ours) <= float(classic) + 1e-12


def test_added_dpsgd_curve_composes_with_the_pate_run(cli, tmp_path):
    """Total RDP (--write-rdp) = PATE's own curve + dp_accounting's DP-SGD curve, and the
    improved conversion of the total equals dp_accounting's epsilon of that total."""
    event = write_event(tmp_path / "student.json", dpsgd())
    alone, both = tmp_path / "alone.csv", tmp_path / "both.csv"
    base = [VOTES, "-n", "500", "--accounting", "expected", "--conversion", "improved"]
    assert cli.analyze(*base, "--write-rdp", alone).code == 0
    result = cli.analyze(*base, "--add-rdp", event, "--write-rdp", both, "-f", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    orders = default_orders()
    pate = np.loadtxt(alone, delimiter=",", skiprows=1)
    total = np.loadtxt(both, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(total[:, 0], orders)
    np.testing.assert_allclose(total[:, 1], pate[:, 1] + accountant_rdp(dpsgd(), orders),
                               rtol=1e-12)
    theirs, _ = compute_epsilon(orders, total[:, 1], 1e-5)
    assert summary["epsilon"] == pytest.approx(theirs, rel=1e-9)
    assert summary["add_rdp"]["path"] == event and summary["add_rdp"]["note"] is None


def test_write_rdp_reads_back_exactly(cli, tmp_path):
    import pate_cli

    curve = tmp_path / "curve.csv"
    assert cli.analyze(VOTES, "-n", "300", "--write-rdp", curve, "-o", tmp_path / "s.txt"
                       ).code == 0
    assert curve.read_text().startswith("order,rdp\n2.0,")
    result = pate_cli.analyze(VOTES, queries=300)
    back, _, note = load_rdp_curve(curve, orders=result.orders)
    assert note is None  # raised by the conversion's margin, never below the computed sum
    np.testing.assert_array_equal(back, result.rdp_total * (1.0 + ROUNDING_MARGIN))
    assert np.all(back > result.rdp_total)


def test_write_rdp_refuses_individualized(cli, tmp_path):
    result = cli.analyze(VOTES, "--individualized", "upsampling", "--groups",
                         SAMPLES / "mnist_250_groups.csv", "--write-rdp", tmp_path / "c.csv")
    assert result.code == 2 and "one curve" in result.err
    assert not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('[1, 2]', "expected a JSON object with 'class_name'"),
    ('{"class_name": "Nope"}', "'Nope' is not a dp_accounting DpEvent class"),
    ('{"class_name": "GaussianDpEvent", "module_name": "os"}', "module_name 'os'"),
    ('{"class_name": "GaussianDpEvent", "sigma": 1}', "cannot build GaussianDpEvent"),
    ('{"class_name": "UnsupportedDpEvent"}', "RdpAccountant cannot evaluate"),
])
def test_bad_events_are_one_line_errors(cli, tmp_path, text, message):
    path = tmp_path / "event.json"
    path.write_text(text)
    result = cli.analyze(VOTES, "-n", "10", "--add-rdp", path)
    assert result.code == 2, result.err
    assert message in result.err and len(result.err.strip().splitlines()) == 1


INFINITE = "the added RDP is infinite (or above 1e300) at every order of the analysis"


@pytest.mark.parametrize("event", [
    dpa.GaussianDpEvent(0.0),
    dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(0.0), 10),
    dpa.ComposedDpEvent([dpa.GaussianDpEvent(2.0), dpa.GaussianDpEvent(0.0)]),
])
def test_an_event_without_noise_is_refused_not_an_infinite_epsilon(cli, tmp_path, event):
    """A Gaussian event of noise 0 gave epsilon inf, exit 0, and the hint that a wider order
    grid might help (none can): refused in one line, saying the cost is infinite."""
    path = write_event(tmp_path / "zero.json", event)
    result = cli.analyze(VOTES, "-n", "10", "--add-rdp", path, "-o", tmp_path / "s.txt")
    assert result.code == 2, result.err
    assert result.err.splitlines() == [
        f"Error: {path}: {INFINITE} (an event without noise, e.g. a GaussianDpEvent with "
        "noise_multiplier 0, is not private), so its cost and the total epsilon would be "
        "infinite"]
    assert not (tmp_path / "s.txt").exists()


@pytest.mark.parametrize("text, hint", [
    ("order,rdp\n2,inf\n600,inf\n", "the file gives orders 2 to 600"),
    ("order,rdp\n1.5,0.25\n", "the file gives order 1.5 only"),
])
def test_a_table_infinite_at_every_order_is_refused(cli, tmp_path, text, hint):
    path = tmp_path / "curve.csv"
    path.write_text(text)
    result = cli.analyze(VOTES, "-n", "10", "--add-rdp", path)
    assert result.code == 2, result.err
    assert result.err.splitlines() == [f"Error: {path}: {INFINITE} ({hint}), so its cost "
                                       "and the total epsilon would be infinite"]


def test_the_api_checks_an_added_array_as_a_file():
    import pate_cli

    orders = default_orders()
    with pytest.raises(pate_cli.InputError, match=re.escape(f"add_rdp: {INFINITE}, so")):
        pate_cli.analyze(VOTES, queries=10, add_rdp=np.full(orders.size, np.inf))
    with pytest.raises(pate_cli.InputError, match="add_rdp: 3 RDP values for 298 orders"):
        pate_cli.analyze(VOTES, queries=10, add_rdp=[0.1, 0.2, 0.3])
    finite = pate_cli.analyze(VOTES, queries=10, add_rdp=np.r_[np.inf, np.zeros(orders.size - 1)])
    assert np.isfinite(finite.epsilon)


def test_no_grid_hint_for_an_infinite_epsilon():
    from pate_cli.accounting.conversion import grid_edge_notes

    orders = default_orders()
    assert grid_edge_notes(orders, orders[0], np.inf) == ()
    assert grid_edge_notes(orders, orders[0], 1.0) != ()


def test_missing_dp_accounting_is_a_clear_error(cli, tmp_path, monkeypatch):
    path = write_event(tmp_path / "e.json", dpsgd())
    for name in [name for name in sys.modules if name.startswith("dp_accounting")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import raises ImportError
    result = cli.analyze(VOTES, "-n", "10", "--add-rdp", path)
    assert result.code == 2
    assert "needs dp_accounting (pip install 'pate_cli[accounting]')" in result.err


def test_an_order_given_twice_is_refused(tmp_path):
    """Two rdp values for one order: neither is assumed (the first one used to win, so
    the order of the rows could lower the figure); the same value twice is one value."""
    path = tmp_path / "curve.csv"
    path.write_text("order,rdp\n2,0.1\n3,0.2\n2,0.3\n")
    with pytest.raises(ValueError, match=r"curve\.csv: rows 1 and 3 give order 2 two rdp "
                                         r"values \(one per order\)$"):
        load_rdp_curve(str(path), orders=np.array([2.0, 3.0]))
    path.write_text("order,rdp\n2,0.1\n3,0.2\n2,0.1\n")
    curve, _, _ = load_rdp_curve(str(path), orders=np.array([2.0, 3.0]))
    assert curve.tolist() == [0.1, 0.2]


def test_write_rdp_refuses_an_extension_it_does_not_write(cli, tmp_path):
    """--write-rdp writes the CSV table order,rdp: a .json name is refused before any
    work (as --per-query and --write-decisions refuse theirs), nothing written."""
    result = cli.analyze(VOTES, "-n", "3", "--write-rdp", tmp_path / "curve.json")
    assert result.code == 2 and "unknown extension for --write-rdp (use .csv" in result.err
    assert list(tmp_path.iterdir()) == []


def test_a_value_no_conversion_carries_counts_as_infinite(cli, tmp_path):
    """An added RDP value near the float maximum overflowed the conversion to an infinite
    epsilon that JSON cannot hold (exit 2 at the output; review R17): above 1e300 it counts
    as infinite, refused where every order is, left out where others bound."""
    path = tmp_path / "huge.csv"
    path.write_text("order,rdp\n2,1.7976931348623157e308\n")
    done = cli.analyze(VOTES, "-n", "50", "--add-rdp", path, "-f", "json")
    assert done.code == 2 and f"Error: {path}: {INFINITE}" in done.err
    from pate_cli.inputs.rdp_curve import checked_curve

    curve = checked_curve(np.array([1e301, 2.0, 3.0]), np.array([2.0, 3.0, 4.0]))
    assert curve.tolist() == [np.inf, 2.0, 3.0]
