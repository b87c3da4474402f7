"""``--write-rdp FILE``: a run's total RDP curve as CSV ``order,rdp`` (math:conversion).

The composed curve (plus any ``--add-rdp``) at every order, before conversion, for another
accountant to compose. Each value is raised by ``ROUNDING_MARGIN`` (``2**-40`` relative),
as every epsilon is: the curve is summed in floats, a few ulps either side of the formulas'
values, and a bound handed to another tool must not be below them. ``--add-rdp FILE``
reads the written floats back exactly (``repr`` floats, ``inf``).
"""

from __future__ import annotations

import numpy as np

from ..accounting.conversion import ROUNDING_MARGIN


def rdp_curve_bytes(orders, rdp) -> bytes:
    """CSV ``order,rdp``, one row per order in grid order, each value raised by
    ``ROUNDING_MARGIN`` relative (0 and ``inf`` stay)."""
    orders = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp, dtype=np.float64) * (1.0 + ROUNDING_MARGIN)
    if orders.shape != rdp.shape:
        raise ValueError(f"orders {orders.shape} and rdp {rdp.shape} differ in shape")
    rows = [f"{float(order)!r},{float(value)!r}" for order, value in zip(orders, rdp,
                                                                        strict=True)]
    return ("order,rdp\n" + "\n".join(rows) + "\n").encode()
