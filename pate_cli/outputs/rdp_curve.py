"""``--write-rdp FILE``: a run's total RDP curve as CSV ``order,rdp`` (math:conversion).

The composed curve (plus any ``--add-rdp``) at every order, before conversion, for another
accountant to compose; ``--add-rdp FILE`` reads it back exactly (``repr`` floats, ``inf``).
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
