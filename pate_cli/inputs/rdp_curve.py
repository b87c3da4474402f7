"""``--add-rdp``: an external RDP curve (CSV ``order,rdp``) read at the analysis orders."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .checks import check_shape, show_number
from .readers import open_input, read_matrix


def load_rdp_curve(path, *, orders: np.ndarray) -> tuple[np.ndarray, str, str | None]:
    """An external RDP curve (CSV ``order,rdp``) at ``orders``.

    Orders absent from the file take the value at the next larger order given (RDP is
    non-decreasing in the order, so this is an upper bound); orders above the largest
    given one get ``inf`` (never chosen). Returns ``(curve, sha256, note or None)``.
    """
    name, raw, digest = open_input(path)
    array, _ = read_matrix(name, raw, key="rdp")
    check_shape(name, array)
    if array.shape[1] != 2:
        raise InputError(f"{name}: expected two columns (order, rdp), got {array.shape[1]}")
    given_orders, given = np.asarray(array[:, 0], float), np.asarray(array[:, 1], float)
    bad = np.flatnonzero(~np.isfinite(given_orders) | (given_orders <= 1))
    if bad.size:
        raise InputError(f"{name}: row {bad[0]}: order {show_number(given_orders[bad[0]])} "
                         "must be a number greater than 1")
    bad = np.flatnonzero(np.isnan(given) | (given < 0))
    if bad.size:
        raise InputError(f"{name}: row {bad[0]}: rdp {show_number(given[bad[0]])} must be >= 0")
    order_sort = np.argsort(given_orders, kind="stable")
    given_orders, given = given_orders[order_sort], given[order_sort]
    slot = np.searchsorted(given_orders, orders, side="left")
    curve = np.full(orders.shape, np.inf)
    inside = slot < given_orders.size
    curve[inside] = given[slot[inside]]
    exact = inside & np.isclose(given_orders[np.minimum(slot, given_orders.size - 1)], orders,
                                rtol=1e-12, atol=0)
    note = None
    if not exact.all():
        above = int(np.count_nonzero(~inside))
        note = (f"{name}: {int(np.count_nonzero(~exact))} of {orders.size} orders are not in "
                "the file; each takes the value at the next larger order given")
        if above:
            note += f" ({above} above the largest given order are left out: rdp = inf)"
    return curve, digest, note
