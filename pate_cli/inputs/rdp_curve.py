"""``--add-rdp``: an external RDP curve read at the analysis orders.

Two forms: a table ``order,rdp`` (CSV/TSV/.npy, :func:`load_rdp_curve`), or a ``.json``
dp_accounting ``DpEvent`` (e.g. a DP-SGD student's) evaluated by ``RdpAccountant`` at the
analysis orders (:func:`dp_event_curve`; the ``accounting`` extra). An event's JSON form is
its ``to_named_tuple()`` as nested objects: ``class_name`` (of ``dp_accounting.dp_event``),
optionally ``module_name`` (only that module is accepted: nothing else is imported), and its
fields; events inside are such objects or lists of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ..numerics import real_number
from .checks import check_shape, show_number
from .npy_files import NPY_MAGIC, ZIP_MAGIC
from .readers import (
    LINE_ENDS,
    check_file,
    decode_text,
    file_sha256,
    first_cells,
    given_matrix,
    is_header,
    is_regular,
    open_input,
    read_matrix,
    read_stream,
    read_text_file,
    text_separator,
)

DP_EVENT_MODULE = "dp_accounting.dp_event"


def load_rdp_curve(path, *, orders: np.ndarray) -> tuple[np.ndarray, str, str | None]:
    """An external RDP curve (``order,rdp`` file, the API's table or mapping ``{order: rdp}``)
    at ``orders``.

    An absent order takes the next larger given order's value (an upper bound: RDP is
    non-decreasing in the order, and a decreasing curve is refused); orders above the largest
    get ``inf`` (never chosen). Messages count rows from 1 (the first row of values).

    Returns:
      ``(curve, sha256 or None, note or None)``.
    """
    if isinstance(path, (str, os.PathLike)):
        if os.path.splitext(os.fspath(path))[1].lower() == ".json":
            return dp_event_curve(path, orders=orders)
        name, source, digest = open_input(path)
        if isinstance(source, bytes) and source.lstrip()[:1] == b"{":  # a DpEvent, piped
            return _event_curve(name, decode_text(name, source), digest, orders)
        array, _ = read_matrix(name, source, key="rdp")
    elif isinstance(path, Mapping):
        name, source, digest = "the add_rdp mapping", None, None
        if not all(real_number(key) and real_number(value) for key, value in path.items()):
            raise InputError(f"{name}: gives {{order: rdp}} numbers (a DpEvent: give its JSON "
                             "file's path)")
        array = np.array([list(path), list(path.values())], dtype=np.float64).T
    else:
        name, array, _, digest = given_matrix(path, name="the add_rdp table", key="rdp")
        source = path
    check_shape(name, array)
    if array.shape[1] != 2:
        raise InputError(f"{name}: expected two columns (order, rdp), got {array.shape[1]}")
    header = _header(source)
    if header == ["rdp", "order"]:  # the columns by name, whatever their place
        array = array[:, ::-1]
    elif header is not None and header != ["order", "rdp"]:
        raise InputError(f"{name}: columns {','.join(header)}: expected order,rdp (a header "
                         "names them; without one, order comes first)")
    given_orders, given = np.asarray(array[:, 0], float), np.asarray(array[:, 1], float)
    bad = np.flatnonzero(~np.isfinite(given_orders) | (given_orders <= 1))
    if bad.size:
        raise InputError(f"{name}: row {bad[0] + 1}: order {show_number(given_orders[bad[0]])} "
                         "must be a number greater than 1")
    bad = np.flatnonzero(np.isnan(given) | (given < 0))
    if bad.size:
        raise InputError(f"{name}: row {bad[0] + 1}: rdp {show_number(given[bad[0]])} must be >= 0")
    order_sort = np.argsort(given_orders, kind="stable")
    ranked, values = given_orders[order_sort], given[order_sort]
    twice = np.flatnonzero((ranked[1:] == ranked[:-1]) & (values[1:] != values[:-1]))
    if twice.size:  # which value holds? none is assumed (equal values are one value)
        rows = np.sort(order_sort[twice[0]:twice[0] + 2])
        raise InputError(f"{name}: rows {rows[0] + 1} and {rows[1] + 1} give order "
                         f"{show_number(given_orders[rows[0]])} two rdp values (one per order)")
    given_orders, given = given_orders[order_sort], given[order_sort]
    falls = np.flatnonzero(given[1:] < given[:-1])
    if falls.size:  # the next larger order's value bounds an order between only if not
        low, high = order_sort[falls[0]], order_sort[falls[0] + 1]
        raise InputError(f"{name}: rows {min(low, high) + 1} and {max(low, high) + 1}: rdp "
                         f"falls from {show_number(given[falls[0]])} at order "
                         f"{show_number(given_orders[falls[0]])} to "
                         f"{show_number(given[falls[0] + 1])} at order "
                         f"{show_number(given_orders[falls[0] + 1])} (an RDP curve never "
                         "decreases with the order)")
    slot = np.searchsorted(given_orders, orders, side="left")
    curve = np.full(orders.shape, np.inf)
    inside = slot < given_orders.size
    curve[inside] = given[slot[inside]]
    exact = inside & np.isclose(given_orders[np.minimum(slot, given_orders.size - 1)], orders,
                                rtol=1e-12, atol=0)
    low, high = show_number(given_orders[0]), show_number(given_orders[-1])
    checked_curve(curve, orders, name=name, hint=f"the file gives order {low} only"
                  if low == high else f"the file gives orders {low} to {high}")
    note = None
    if not exact.all():
        above = int(np.count_nonzero(~inside))
        note = (f"{name}: {int(np.count_nonzero(~exact))} of {orders.size} orders are not in "
                "the file; each takes the value at the next larger order given")
        if above:
            note += f" ({above} above the largest given order are left out: rdp = inf)"
    return curve, digest, note


def _header(table) -> list[str] | None:
    """The lower-case column names of an ``order,rdp`` table: a DataFrame's, or the header row
    of CSV/TSV text, a file's or a stream's bytes (None without one, or for other forms)."""
    if hasattr(table, "columns"):
        cells = [str(column).strip() for column in table.columns]
        return [cell.lower() for cell in cells] if is_header(cells) else None
    if isinstance(table, bytes):
        if table.startswith((NPY_MAGIC, ZIP_MAGIC)):
            return None
        text = table.decode("utf-8", errors="replace")
    elif (not isinstance(table, (str, os.PathLike))
            or os.path.splitext(os.fspath(table))[1].lower() not in (".csv", ".tsv")):
        return None
    else:
        with open(table, encoding="utf-8", errors="replace") as stream:
            text = stream.readline()
    line = LINE_ENDS.split(text.lstrip("\ufeff"), 1)[0]
    cells = first_cells(line, text_separator(line))
    return [cell.lower() for cell in cells] if is_header(cells) else None


def dp_event_curve(path, *, orders: np.ndarray) -> tuple[np.ndarray, str, str | None]:
    """RDP at ``orders`` of the dp_accounting ``DpEvent`` in the JSON file ``path``.

    ``RdpAccountant`` (add-or-remove-one) composes it at exactly ``orders``: ``(curve,
    sha256, None)``; ``InputError`` for a bad file or event, or no dp_accounting."""
    name = check_file(path)
    if is_regular(name):
        return _event_curve(name, read_text_file(name), file_sha256(name), orders)
    data = read_stream(name)  # a pipe: read once
    return _event_curve(name, decode_text(name, data), hashlib.sha256(data).hexdigest(),
                        orders)


def _event_curve(name: str, text: str, digest: str, orders: np.ndarray
                 ) -> tuple[np.ndarray, str, str | None]:
    """:func:`dp_event_curve` of a file's ``text``."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{name}: not valid JSON ({error.msg}, line {error.lineno}); "
                         "expected a dp_accounting DpEvent") from None
    event = dp_event_from_dict(document, name=name)
    try:
        from dp_accounting.rdp import RdpAccountant
    except ImportError:
        raise InputError(f"{name}: evaluating a DpEvent needs dp_accounting "
                         "(pip install 'pate_cli[accounting]')") from None
    accountant = RdpAccountant(orders=[float(order) for order in orders])
    try:
        accountant.compose(event)
    except Exception as error:  # dp_accounting: UnsupportedEventError, ValueError...
        raise InputError(f"{name}: dp_accounting's RdpAccountant cannot evaluate this "
                         f"event ({type(error).__name__}: {error})") from None
    curve = checked_curve(accountant.rdp, orders, name=name,
                          hint="an event without noise, e.g. a GaussianDpEvent with "
                               "noise_multiplier 0, is not private")
    return curve, digest, None


# An added RDP value above this is taken as infinite (see checked_curve).
HUGE_RDP = 1e300


def checked_curve(curve, orders: np.ndarray, *, name: str = "add_rdp",
                  hint: str | None = None) -> np.ndarray:
    """An added RDP curve (one value per order) as float64, refused in one line for a wrong
    shape, a negative or NaN value, or ``inf`` at every order (an infinite epsilon no grid
    helps). ``hint`` says why it may be."""
    curve = np.asarray(curve, dtype=np.float64)
    if curve.shape != orders.shape:
        given = (f"{curve.size} RDP values" if curve.ndim == 1
                 else f"an array of shape {curve.shape}")
        raise InputError(f"{name}: {given} for {orders.size} orders (give one RDP value per "
                         "order of the analysis, or a table order,rdp)")
    if np.any(np.isnan(curve)) or np.any(curve < 0):
        raise InputError(f"{name}: the added RDP curve has negative or NaN values")
    # past 1e300 the conversion's terms and upward margin overflow: such an order bounds
    # nothing, as an infinite value (never below the value given)
    curve = np.where(curve > HUGE_RDP, np.inf, curve)
    if not np.any(np.isfinite(curve)):
        raise InputError(f"{name}: the added RDP is infinite (or above 1e300) at every order "
                         "of the analysis"
                         f"{f' ({hint})' if hint else ''}, so its cost and the total "
                         "epsilon would be infinite")
    return curve


def dp_event_from_dict(document, *, name: str = "the DpEvent"):
    """A dp_accounting ``DpEvent`` from its JSON form (see the module docstring; public as
    ``pate_cli.dp_event_from_dict``).

    Args:
      document: the form :func:`dp_event_dict` writes (``class_name`` and fields).
      name: what messages call it.

    Returns:
      The ``dp_accounting.dp_event.DpEvent``.

    Raises:
      InputError: dp_accounting is not installed, or the form is malformed (one line).
    """
    try:
        from dp_accounting import dp_event
    except ImportError:
        raise InputError(f"{name}: reading a DpEvent needs dp_accounting "
                         "(pip install 'pate_cli[accounting]')") from None

    def build(value, where: str):
        if isinstance(value, list):
            return [build(item, f"{where}[{number}]") for number, item in enumerate(value)]
        if not isinstance(value, dict) or "class_name" not in value:
            return value
        module = value.get("module_name", DP_EVENT_MODULE)
        if module != DP_EVENT_MODULE:
            raise InputError(f"{name}: {where}: module_name {module!r} is not "
                             f"{DP_EVENT_MODULE!r}")
        cls = getattr(dp_event, str(value["class_name"]), None)
        if not (isinstance(cls, type) and issubclass(cls, dp_event.DpEvent)):
            raise InputError(f"{name}: {where}: {value['class_name']!r} is not a "
                             "dp_accounting DpEvent class")
        fields = {key: build(item, f"{where}.{key}") for key, item in value.items()
                  if key not in ("class_name", "module_name")}
        try:
            return cls(**fields)
        except (TypeError, ValueError) as error:
            raise InputError(f"{name}: {where}: cannot build {cls.__name__} "
                             f"({error})") from None

    if not isinstance(document, dict) or "class_name" not in document:
        raise InputError(f"{name}: expected a JSON object with 'class_name' (a dp_accounting "
                         "DpEvent, e.g. {\"class_name\": \"GaussianDpEvent\", "
                         "\"noise_multiplier\": 1.1})")
    return build(document, "event")


def dp_event_dict(event) -> dict:
    """The JSON form of a dp_accounting ``DpEvent`` (inverse of :func:`dp_event_from_dict`);
    public as ``pate_cli.dp_event_dict`` (docs/tutorials/composing-and-tighter-figures.md).

    Args:
      event: a ``dp_accounting.dp_event.DpEvent``.

    Returns:
      A dict of plain values, what ``--add-rdp EVENT.json`` reads once ``json.dump``-ed.
    """
    def plain(value):
        if hasattr(value, "_asdict"):
            return {key: plain(item) for key, item in value._asdict().items()}
        if isinstance(value, list | tuple):
            return [plain(item) for item in value]
        return value

    return plain(event.to_named_tuple())
