"""The sweep table's text view (``-f table``): settings at their defaults stay out."""

from __future__ import annotations

from pate_cli.sweep.columns import SWEEP_COLUMNS
from pate_cli.sweep.table import table_bytes


def row(**changes):
    base = {column: None for column in SWEEP_COLUMNS}
    base.update(file="v.npy", mechanism="gnmax", sigma=40.0, queries=10, teachers=250.0,
                answered=10.0, epsilon=1.5, order=8.0, repeats=1, seed=0,
                accounting="replay", delta=1e-5, conversion="classic", orders="default")
    base.update(changes)
    return base


def test_default_conversion_and_orders_are_left_out_of_the_text_table():
    header = table_bytes([row(), row(sigma=50.0)], fmt="table").decode().splitlines()[0]
    assert "conversion" not in header and "orders" not in header
    assert "sigma" in header and "epsilon" in header


def test_a_setting_that_differs_in_some_row_is_shown():
    text = table_bytes([row(), row(conversion="improved", orders="2:40:0.5")],
                       fmt="table").decode()
    header = text.splitlines()[0]
    assert "conversion" in header and "orders" in header
    assert "improved" in text and "2:40:0.5" in text
