"""``--write-rdp FILE``: a run's total RDP curve as CSV ``order,rdp`` (math:conversion).

The curve is the composition (sum over queries, plus any ``--add-rdp`` curve) at every
order of the grid, before conversion, so another accountant can compose it with its own
events; ``pate-analyze --add-rdp FILE`` reads it back exactly (floats written with
``repr``, ``inf`` where an order is unusable).
"""

from __future__ import annotations

import numpy as np


def rdp_curve_bytes(orders, rdp) -> bytes:
    """CSV ``order,rdp``, one row per order in grid order, values exactly as computed."""
    orders = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp, dtype=np.float64)
    if orders.shape != rdp.shape:
        raise ValueError(f"orders {orders.shape} and rdp {rdp.shape} differ in shape")
    rows = [f"{float(order)!r},{float(value)!r}" for order, value in zip(orders, rdp,
                                                                        strict=True)]
    return ("order,rdp\n" + "\n".join(rows) + "\n").encode()
