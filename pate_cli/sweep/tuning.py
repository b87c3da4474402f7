"""``pate-sweep --tuning``: what choosing among the grid's points costs (math:tuning).

Per vote file, from each row's private total RDP curve (``RDP_KEY``, largest over replays):
``epsilon_tuned``, a random search (Papernot and Steinke 2022) of K ~ DIST candidates bounded
by the points' largest RDP per order, and ``epsilon_all_points``, the sum of the curves; both
the same on every row of a file, after ``tuning`` (the ``--tuning`` text)."""

from __future__ import annotations

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.tuning import TuningDistribution, candidate_bound, tuned_epsilon
from ..orders import default_orders
from ..outputs.report_statement import UNSANITISED, data_dependence
from ..rounding import ceil_text

RDP_KEY = "rdp_curve"
TUNING_COLUMNS = ("tuning", "epsilon_tuned", "epsilon_all_points")


def add_tuning_columns(rows: list[dict], distribution: TuningDistribution, *, orders,
                       delta: float, conversion: str) -> list[dict]:
    """``rows`` with ``TUNING_COLUMNS`` filled per vote file (a row without a curve, e.g. kept
    from another grid, leaves the file's figures empty)."""
    grid = default_orders() if orders is None else np.asarray(orders, dtype=np.float64)
    figures = {}
    for file in dict.fromkeys(row["file"] for row in rows):
        curves = [row.get(RDP_KEY) for row in rows if row["file"] == file]
        if not curves or any(curve is None for curve in curves):
            figures[file] = (None, None)
            continue
        stacked = np.asarray(curves, dtype=np.float64)
        tuned, _ = tuned_epsilon(candidate_bound(stacked), orders=grid, delta=delta,
                                 conversion=conversion, distribution=distribution)
        composed, _ = rdp_to_epsilon(stacked.sum(axis=0), orders=grid, delta=delta,
                                     conversion=conversion)
        figures[file] = (tuned, float(composed))
    return [{**row, "tuning": distribution.text, "epsilon_tuned": figures[row["file"]][0],
             "epsilon_all_points": figures[row["file"]][1]} for row in rows]


def tuning_lines(rows: list[dict]) -> list[str]:
    """Per vote file, what choosing among the grid's points costs as a random search
    (``--tuning``) and running every point."""
    return [f"pate-sweep: {row['file']}: choosing among the grid's points costs epsilon "
            f"{ceil_text(row['epsilon_tuned'])} as a random search (--tuning "
            f"{row['tuning']}), {ceil_text(row['epsilon_all_points'])} running every point"
            + (f" ({UNSANITISED}: the rows' {row['accounting']} curves; --accounting "
               "data-independent gives the publishable cost)" if data_dependence(row)[0]
               else "")
            for row in {row["file"]: row for row in rows}.values()
            if row.get("epsilon_tuned") is not None]
