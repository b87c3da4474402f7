"""``--write-rdp FILE``: a run's total RDP curve as CSV ``order,rdp`` (math:conversion).

The composed curve (plus any ``--add-rdp``) at every order, before conversion, for another
accountant to compose. Each value is raised as every epsilon is (``numerics.raised_rdp``:
``2**-40`` relative, more for sums of over 4,080 queries): the curve is summed in floats, a
few ulps either side of the formulas' values, and a bound handed to another tool must not
be below them. ``--add-rdp FILE`` reads the floats back exactly (``repr`` floats, ``inf``).
"""

from __future__ import annotations

import numpy as np

from ..numerics import raised_rdp


def rdp_curve_bytes(orders, rdp, terms: int) -> bytes:
    """CSV ``order,rdp``, one row per order in grid order, each value (a sum of up to
    ``terms`` queries' curves) raised by ``numerics.raised_rdp`` (0 and ``inf`` stay)."""
    orders = np.asarray(orders, dtype=np.float64)
    rdp = raised_rdp(rdp, terms)
    if orders.shape != rdp.shape:
        raise ValueError(f"orders {orders.shape} and rdp {rdp.shape} differ in shape")
    rows = [f"{float(order)!r},{float(value)!r}" for order, value in zip(orders, rdp,
                                                                        strict=True)]
    return ("order,rdp\n" + "\n".join(rows) + "\n").encode()
