"""AnalysisResult -> JSON dict, per-query DataFrame, text renderings; atomic file writing.

The keys and columns follow ``CLI.md``: scripts parse them, so they may be extended but
never renamed. Output files are written to a temporary file in the target directory and
renamed into place, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile

import numpy as np
import pandas as pd

from ._version import __version__
from .mechanisms import OUTCOME_NAMES

PER_QUERY_COLUMNS = (
    "query", "plurality", "plurality_class", "answered", "label", "log_q", "log_pr_answered",
    "rdp_selection", "rdp_answer", "epsilon", "epsilon_cumulative", "order_cumulative",
)
FORMATS = ("table", "json", "csv", "markdown")


def summary_dict(result) -> dict:
    """The JSON summary of CLI.md (``--format json``), with provenance."""
    source = result.source
    expected = result.accounting == "expected"
    answered = result.answered_total if expected else int(round(result.answered_total))
    budget = None
    summary = {}
    if result.budget_limit is not None:
        budget = {"limit": result.budget_limit, "stopped_at": result.budget_stopped_at,
                  "answered": answered}
    summary.update({
        "tool": "pate-analyze",
        "version": __version__,
        "input": {
            "path": getattr(source, "path", None),
            "sha256": getattr(source, "sha256", None),
            "queries": int(getattr(source, "queries", result.queries)),
            "classes": result.classes,
            "teachers": _plain(result.teachers),
        },
        "mechanism": result.mechanism.name,
        "params": {key: _plain(value) for key, value in result.mechanism.params.items()},
        "accounting": result.accounting,
        "conversion": result.conversion,
        "delta": result.delta,
        "seed": result.seed,
        "orders": _orders_summary(result.orders),
        "queries": result.queries,
        "answered": answered,
        "epsilon": result.epsilon,
        "order": _plain(result.order),
        "epsilon_data_independent": result.epsilon_data_independent,
        "order_data_independent": _plain(result.order_data_independent),
        "rdp_at_order": dict(result.rdp_at_order),
        "label_accuracy": result.label_accuracy,
        "labels_output": int(np.count_nonzero(result.label >= 0)),
        "budget": budget,
        "smooth_sensitivity": None,
        "svt": _plain_dict(result.extra.get("svt")),
        "groups": None,
        "warnings": list(result.warnings),
    })
    if result.outcome is not None:
        counts = np.bincount(result.outcome.astype(np.int64), minlength=3)
        summary["outcomes"] = {name: int(counts[code])
                               for code, name in enumerate(OUTCOME_NAMES)}
        summary["accuracy_by_outcome"] = result.accuracy_by_outcome
    if "groups" in result.extra:
        info = result.extra["groups"]
        summary["groups"] = [_plain_dict(row) for row in info["list"]]
        summary["individualized"] = info["variant"]
        summary["stopped_at"] = info["stopped_at"]
        summary["labels_released"] = info["labels_released"]
        summary["baseline"] = _plain_dict(info["baseline"])
    if "rounds" in result.extra:
        summary["rounds"] = [_plain_dict(entry) for entry in result.extra["rounds"]]
    if result.query_index is not None and not np.array_equal(result.query_index,
                                                             np.arange(result.queries)):
        summary["query_indices"] = True
    return summary


def per_query_frame(result) -> pd.DataFrame:
    """The per-query table of CLI.md, one row per analysed query in file order.

    ``answered`` is 0/1 (replay, data-independent) or pr_answered (expected); ``label``
    is empty (<NA>) where nothing was output; ``rdp_answer`` is the charged answer cost.
    """
    answered = result.answered
    if result.accounting != "expected":
        answered = answered.astype(np.int64)
    label = pd.array(np.where(result.label >= 0, result.label, 0), dtype="Int64")
    label[result.label < 0] = pd.NA
    index = np.arange(result.queries) if result.query_index is None else result.query_index
    frame = pd.DataFrame({
        "query": index,
        "plurality": _integral(result.plurality),
        "plurality_class": result.plurality_class,
        "answered": answered,
        "label": label,
        "log_q": result.log_q,
        "log_pr_answered": result.log_pr_answered,
        "rdp_selection": result.rdp_selection,
        "rdp_answer": result.rdp_answer,
        "epsilon": result.epsilon_query,
        "epsilon_cumulative": result.epsilon_cumulative,
        "order_cumulative": result.order_cumulative,
    })
    if result.outcome is not None:
        frame["outcome"] = np.asarray(OUTCOME_NAMES)[result.outcome.astype(np.int64)]
    for name, values in result.extra.get("columns", {}).items():
        frame[name] = values
    return frame


# --- renderings ---------------------------------------------------------------------------

def render(summary: dict, fmt: str) -> str:
    """Render the summary as ``table``, ``json``, ``csv`` or ``markdown`` text."""
    if fmt == "json":
        return json.dumps(summary, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        frame = pd.DataFrame([_flat(summary)])
        return frame.to_csv(index=False, lineterminator="\n")
    lines = _summary_lines(summary)
    if fmt == "markdown":
        out = ["| quantity | value |", "|---|---|"]
        out += [f"| {key} | {value.replace('|', '/')} |" for key, value in lines]
        return "\n".join(out) + "\n"
    if fmt == "table":
        width = max(len(key) for key, _ in lines)
        return "\n".join(f"{key:<{width}}  {value}" for key, value in lines) + "\n"
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _summary_lines(s: dict) -> list[tuple[str, str]]:
    source = s["input"]
    digest = (source["sha256"] or "")[:12]
    params = ", ".join(f"{key}={_short(value)}" for key, value in s["params"].items())
    answered = s["answered"]
    answered_text = (f"{answered:.1f} expected" if isinstance(answered, float)
                     else f"{answered}")
    answered_text += f" of {s['queries']} queries"
    lines = [
        ("input", f"{source['path']} (sha256 {digest}...)" if digest else str(source["path"])),
        ("votes", f"{source['queries']} queries x {source['classes']} classes, "
                  f"{_short(source['teachers'])} teachers"),
        ("mechanism", f"{s['mechanism']} ({params})"),
        ("accounting", f"{s['accounting']}, {s['conversion']} conversion, seed {s['seed']}"),
        ("answered", answered_text),
        ("epsilon", f"{s['epsilon']:.4f} at delta {s['delta']:g} (order {_short(s['order'])})"),
        ("data-independent", f"{s['epsilon_data_independent']:.4f} "
                             f"(order {_short(s['order_data_independent'])})"),
    ]
    if s["label_accuracy"] is not None:
        lines.append(("label accuracy", f"{s['label_accuracy']:.4f} "
                                        f"over {s['labels_output']} labels output"))
    if s.get("outcomes"):
        o = s["outcomes"]
        lines.append(("outcomes", f"{o['teacher']} teacher labels, {o['student']} student "
                                  f"labels reinforced, {o['abstain']} abstentions"))
        by = s.get("accuracy_by_outcome") or {}
        if any(value is not None for value in by.values()):
            shown = ", ".join(f"{name} {value:.4f}" for name, value in by.items()
                              if value is not None)
            lines.append(("accuracy by kind", shown))
    if s.get("svt"):
        v = s["svt"]
        lines.append(("svt", f"scale {v['scale']:.6g}, cut-off {v['cutoff']}, threshold "
                             f"{v['threshold']:.6g}; {v['unstable']} unstable queries met; "
                             f"delta1 {v['delta1']:.3g} + delta2 {v['delta2']:.3g}"))
    for entry in s.get("rounds") or []:
        lines.append((f"round {entry['round']}",
                      f"{entry['mechanism']}: {entry['queries']} queries from row "
                      f"{entry['first_row']}, {entry['answered']} answered, epsilon "
                      f"{entry['epsilon']:.4f} alone (order {_short(entry['order'])})"))
    if s.get("groups"):
        for row in s["groups"]:
            exhausted = ("within budget" if row["exhausted_at"] is None
                         else f"exhausted after query {row['exhausted_at']}")
            knob = next(f"{key} {_short(row[key])}" for key in
                        ("upsampling", "weight", "participation") if key in row)
            lines.append((f"group {row['group']}",
                          f"budget {_short(row['budget'])}, {knob}: epsilon "
                          f"{row['epsilon']:.4f} (order {_short(row['order'])}), {exhausted}"))
        stop = ("no group exhausted" if s["stopped_at"] is None
                else f"stops after query {s['stopped_at'] - 1}")
        base = s["baseline"]
        lines.append(("labels released", f"{s['labels_released']} ({stop}); a uniform run at "
                                         f"epsilon {_short(base['budget'])} releases "
                                         f"{base['labels_released']}"))
    if s.get("smooth_sensitivity"):
        ss = s["smooth_sensitivity"]
        sanitized = ("" if ss["sanitized_epsilon"] is None
                     else f"; sanitised release {ss['sanitized_epsilon']:.4f}")
        lines.append(("smooth sensitivity",
                      f"epsilon {ss['epsilon_before']:.4f} -> {ss['epsilon_after']:.4f} +/- "
                      f"{ss['noise_std']:.4f} (order {_short(ss['order'])}, beta "
                      f"{ss['beta']:.4g}, sigma_ss {ss['sigma_ss']:.4g}){sanitized}"))
    if s.get("add_rdp"):
        lines.append(("added rdp", f"{s['add_rdp']['path']}"
                                   + (" (interpolated)" if s["add_rdp"]["note"] else "")))
    if s["budget"] is not None:
        b = s["budget"]
        stop = "never" if b["stopped_at"] is None else f"from query {b['stopped_at']}"
        lines.append(("budget", f"{_short(b['limit'])}: answers refused {stop}"))
    return lines


def _flat(summary: dict) -> dict:
    """One-level dict for the CSV row: nested keys joined with '.', lists as JSON."""
    flat = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            for inner, item in _flat(value).items():
                flat[f"{key}.{inner}"] = item
        elif isinstance(value, list):
            flat[key] = json.dumps(value)
        else:
            flat[key] = "" if value is None else value
    return flat


def _plain_dict(value):
    if value is None:
        return None
    return {key: _plain(item) if not isinstance(item, dict) else _plain_dict(item)
            for key, item in value.items()}


def _orders_summary(orders: np.ndarray) -> dict:
    return {"count": int(orders.size), "min": float(orders.min()), "max": float(orders.max())}


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _plain(value):
    """numpy scalars to Python numbers; integral floats to int."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _integral(values: np.ndarray) -> np.ndarray:
    rounded = np.round(values)
    return rounded.astype(np.int64) if np.array_equal(rounded, values) else values


# --- files --------------------------------------------------------------------------------

PER_QUERY_EXTENSIONS = (".csv", ".json", ".jsonl", ".parquet")


def per_query_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """Serialise the per-query table for ``path``'s extension (CSV, JSON lines, parquet)."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".csv":
        return frame.to_csv(index=False, lineterminator="\n").encode()
    if extension in (".json", ".jsonl"):
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        return "".join(json.dumps(_json_record(r), allow_nan=False) + "\n"
                       for r in records).encode()
    if extension == ".parquet":
        return parquet_bytes(frame, path)
    raise ValueError(f"{path}: unknown extension for the per-query table "
                     f"(use {', '.join(PER_QUERY_EXTENSIONS)})")


def require_pyarrow(path: str) -> None:
    """A one-line error naming ``path`` when pyarrow (the ``parquet`` extra) is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{path}: writing .parquet needs pyarrow "
                         "(pip install 'pate_cli[parquet]')") from None


def parquet_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """``frame`` as parquet bytes (no index), for writing to ``path``."""
    require_pyarrow(path)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _json_record(record: dict) -> dict:
    plain = {key: _plain(value) if isinstance(value, np.generic) else value
             for key, value in record.items()}
    return {key: None if isinstance(value, float) and not math.isfinite(value) else value
            for key, value in plain.items()}


def write_outputs(files: dict) -> None:
    """Write several outputs (path -> bytes) only once every destination is usable.

    Each is written atomically; a destination whose directory is missing stops the run
    before any file is touched. An ``OSError`` becomes a ``ValueError`` naming the file.
    """
    for path in files:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise ValueError(f"{path}: cannot write: the directory {directory} does not exist")
    for path, data in files.items():
        try:
            write_atomically(path, data)
        except OSError as error:
            raise ValueError(f"{path}: cannot write: {error.strerror or error}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and a rename."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ValueError(f"{path}: the directory {directory} does not exist")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".pate-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would give
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
