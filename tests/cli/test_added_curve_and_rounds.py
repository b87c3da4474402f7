"""``--add-rdp``'s table read by its header, a budget the added curve alone exceeds, and a
rounds file's repeated row (an auditor's cases)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pate_cli.inputs import load_rdp_curve
from pate_cli.orders import default_orders
from tests import SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"
RUN = (VOTES, "-n", 100, "-m", "gnmax", "--sigma", 40, "-f", "json")


def test_the_added_table_is_read_by_its_header(cli, tmp_path):
    """'rdp,order' read by name (by position it gave epsilon 4.9578 where the curve gives
    8.9578, an under-charge); other names refused; no header: order first."""
    rows = [(2, 5), (5, 6), (100, 101)]
    files = {"named": "order,rdp\n", "swapped": "rdp,order\n", "bare": "", "other": "a,b\n"}
    epsilon = {}
    for kind, header in files.items():
        path = tmp_path / f"{kind}.csv"
        swap = kind == "swapped"
        path.write_text(header + "".join(f"{b},{a}\n" if swap else f"{a},{b}\n"
                                         for a, b in rows))
        done = cli.analyze(*RUN, "--add-rdp", path)
        if kind == "other":
            assert done.code == 2 and done.err.count("\n") == 1, done.err
            assert "columns a,b: expected order,rdp" in done.err
            continue
        assert done.code == 0, done.err
        epsilon[kind] = json.loads(done.out)["epsilon"]
    assert epsilon["named"] == epsilon["swapped"] == epsilon["bare"]
    orders = default_orders()
    frame = pd.DataFrame({"rdp": [5.0, 6.0, 101.0], "order": [2.0, 5.0, 100.0]})
    by_name, _, _ = load_rdp_curve(frame, orders=orders)
    plain, _, _ = load_rdp_curve(pd.DataFrame(np.array(rows, dtype=float)), orders=orders)
    assert np.array_equal(by_name, plain)


def test_a_budget_the_added_curve_alone_exceeds_has_a_negative_remainder(cli, tmp_path):
    """remaining = budget - epsilon, as the budgets tutorial says: not clamped to 0, which
    read as a budget met."""
    path = tmp_path / "big.csv"
    path.write_text("order,rdp\n2,5\n1000,5\n")
    done = cli.analyze(*RUN, "--budget", 1, "--add-rdp", path)
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["budget"]["halted_at"] == 0
    assert summary["budget"]["remaining"] == 1.0 - summary["epsilon"] < 0
    text = cli.analyze(*RUN[:-2], "--budget", 1, "--add-rdp", path).out
    assert "budget            1: halted before query 0, exceeded by 4.0231 before the first " \
           "query" in text


def test_a_rounds_row_listed_twice_names_the_file(cli, tmp_path):
    path = tmp_path / "rounds.json"
    path.write_text('[{"mechanism": "gnmax", "rows": [5, 7, 5], "sigma": 40}]')
    done = cli.analyze(VOTES, "--rounds", path)
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert done.err.startswith(f"Error: {path}: round 0: row 5 is listed twice (entries 0 "
                               "and 2)")


def test_an_added_curve_that_falls_is_refused(cli, tmp_path):
    """rdp 0.1 at order 2, 0.05 at order 4: order 3 took order 4's 0.05 (the next larger
    order's value bounds an order between only on a non-decreasing curve)."""
    path = tmp_path / "falls.csv"
    path.write_text("order,rdp\n2,0.1\n4,0.05\n")
    done = cli.analyze(*RUN, "--add-rdp", path)
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert "rdp falls from 0.1 at order 2 to 0.05 at order 4" in done.err
    # rows counted from 1, the header not counted (as the decisions reader counts them)
    assert f"{path}: rows 1 and 2: rdp falls" in done.err
