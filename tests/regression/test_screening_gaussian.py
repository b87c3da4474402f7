"""``--screening gaussian`` reproduces the numbers from before math:screening's exact curve.

``gaussian/<case>/`` holds the outputs of regression cases recorded before that change.
The same commands with ``--screening gaussian`` must give the same bytes, apart from
what records the option itself: the JSON's ``params.screening`` key, and in a sweep table
the ``screening`` column and the ``--screening gaussian`` words of its ``command`` (also
printed on stderr by ``--best``). Per-query CSV tables were recorded in pandas' number
notation; they are compared by value (the tolerance rule of issue 27: every number the
same float64, to the bit; the header line the same), whichever notation writes them now.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from pate_cli.inputs.table_pieces import read_table
from pate_cli.inputs.tables import PER_QUERY
from pate_cli.numerics import raised_rdp

from .cases import CASES
from .runner import run_case

GAUSSIAN = Path(__file__).parent / "gaussian"
# JSON keys recorded since, not always null here
ADDED = ("risk", "risk_data_independent", "files", "epsilon_data_independent_pld",
         "individualized_rule", "epsilon_data_independent_worst_pld", "published", "read")
# The summary's data-independent line gives the PLD figure first since (the RDP one after)
PLD_FIRST = re.compile(rb"^(data-independent +)[0-9.]+ \(privacy-loss distribution "
                       rb"accountant(, below the data-dependent figure)?\); RDP ", re.M)
PLD_FIRST_WORST = re.compile(rb"^(data-independent +)[0-9.]+ \(privacy-loss distribution "
                             rb"accountant, (every query answered: the bound for any run); "
                             rb"RDP ([0-9.]+)\)", re.M)
# The bound for any run (every query answered) leads the line since, the run's count after
ANY_RUN = re.compile(rb"^(data-independent +)[0-9.]+ \(RDP, every query answered: the bound "
                     rb"for any run\); ([0-9.]+ \(RDP, order [^)]*\)) at the run's [0-9]+ "
                     rb"answers, not a bound: the votes decide that count$", re.M)
# A run in rounds of Gaussian aggregators has its PLD figures since (the bound for any run
# and the run's answers' figure), each beside its RDP one: the recorded line held the latter
ROUNDS_PLD = re.compile(rb"^(data-independent +)[0-9.]+ \(privacy-loss distribution "
                        rb"accountant, every query answered: the bound for any run; RDP "
                        rb"[0-9.]+\); [0-9.]+ \(privacy-loss distribution accountant; RDP "
                        rb"([0-9.]+), (order [^)]*)\) at the run's [0-9]+ answers, not a "
                        rb"bound: the votes decide that count$", re.M)
NAMES = sorted(path.name for path in GAUSSIAN.iterdir() if path.is_dir())


def _without_screening(name: str, data: bytes, recorded: bytes) -> bytes:
    """``data`` without what records the option, and without the keys, lines and columns
    added since ``recorded`` was written (null JSON keys: ``outputs``, ``multilabel``; the
    attack risk, which the screening does not enter: JSON ``risk`` and
    ``risk_data_independent``, the table's ``attack risk`` line; ``files``, the provenance
    of the files besides the votes; sweep columns such as
    ``eta``, empty for these runs)."""
    text = data.decode()
    if text.startswith("{"):  # a JSON summary: drop params.screening, same layout
        summary = json.loads(text)
        summary["params"].pop("screening", None)
        known = json.loads(recorded.decode())
        base = summary.get("baseline")
        if (isinstance(base, dict) and "epsilon_data_independent" in base
                and "epsilon_data_independent" not in known.get("baseline", {})):
            # the uniform run's figure moved to the baseline since (the top level: the
            # largest group's at the halt)
            for key in ("epsilon_data_independent", "order_data_independent",
                        "epsilon_data_independent_worst"):
                summary[key] = base.pop(key)
        if summary.get("rdp_at_order", 0) is None:  # an individualized run's: none since,
            summary["rdp_at_order"] = known["rdp_at_order"]  # the uniform run's sums were
        if isinstance(summary.get("budget"), dict) and "requested" not in (
                known.get("budget") or {}):  # the budget's requested count, added since
            summary["budget"].pop("requested", None)
        if known.get("epsilon_data_independent_worst", 0) is None:  # replay: added since
            summary["epsilon_data_independent_worst"] = None  # (the bound for any run)
        summary = {key: value for key, value in summary.items()
                   if key in known or (value is not None and key not in ADDED)}
        olds = known.get("groups") or []
        for row, old in zip(summary.get("groups") or [], olds, strict=True):  # added since:
            if "epsilon_data_independent_worst" not in old:  # each group's bound for any
                row.pop("epsilon_data_independent_worst", None)  # run, its risk's since
                if "risk" in old:
                    row["risk"] = old["risk"]
            if "risk" not in old:  # each group's risk
                row.pop("risk", None)
        return (json.dumps(summary, indent=2) + "\n").encode()
    if name.startswith("sweep") and "," in text.splitlines()[-1]:  # a CSV table
        rows = list(csv.DictReader(io.StringIO(text)))
        known = next(csv.reader(io.StringIO(recorded.decode())))
        out = io.StringIO()
        fields = [key for key in rows[0] if key != "screening" and key in known]
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for row in rows:
            if "command" in row:
                row["command"] = row["command"].replace(" --screening gaussian", "")
            writer.writerow(row)
        return out.getvalue().encode()
    data = ROUNDS_PLD.sub(rb"\1\2 (\3)", ANY_RUN.sub(rb"\1\2", data))
    data = PLD_FIRST_WORST.sub(rb"\1\3 (\2)", PLD_FIRST.sub(rb"\1", data))
    # an RDP figure names its accountant since ("(RDP, order 6", "(RDP, every query")
    data = re.sub(rb"(; data-independent [0-9.]+) \(RDP\)$", rb"\1", data.replace(
        b"RDP, order ", b"order ").replace(b"(RDP, every query", b"(every query"), flags=re.M)
    # a budget's remainder and each group's spent figure say they are data-dependent since
    data = data.replace(b" left of the data-dependent, unsanitised figure (see "
                        b"data-independent)", b" left")
    data = re.sub(rb"(spent [0-9.]+ \(RDP, order [0-9.]+); data-dependent, unsanitised\)",
                  rb"\1)", data)
    # each round's data-dependent figure says it is unsanitised since
    data = re.sub(rb"^(round \d+ .*); data-dependent, unsanitised: not for publication\)$",
                  rb"\1)", data, flags=re.M)
    return b"".join(line for line in data.splitlines(keepends=True)
                    if not line.startswith(b"attack risk"))


def _exact_pld(data: bytes, recorded: bytes) -> bytes:
    """A data-independent Gaussian run's PLD figure was recorded as dp_accounting's; it is
    now the steps' exact one (``accounting.pld.gaussian_exact_epsilon``), at most the
    recorded figure and within 1e-8 of it: checked, then given the recorded bits."""
    if not data.startswith(b"{"):
        return data
    summary, known = json.loads(data), json.loads(recorded)
    if known.get("data_independent_method") != "pld":
        return data
    places = [(summary, known, key) for key in
              ("epsilon", "epsilon_data_independent", "epsilon_improved")]
    if known.get("budget"):
        places.append((summary["budget"], known["budget"], "remaining"))
    for now, then, key in places:  # what is left of a budget grows as epsilon shrinks
        lower, higher = (then[key], now[key]) if key == "remaining" else (now[key], then[key])
        assert lower <= higher <= lower + 1e-8 * known["epsilon"], key
        now[key] = then[key]
    return (json.dumps(summary, indent=2) + "\n").encode()


def _raised_rdp(data: bytes, recorded: bytes) -> bytes:
    """RDP values handed on were recorded as summed; they are now raised as every epsilon
    (``numerics.raised_rdp``): ``rdp_at_order`` checked to be the recorded values raised, to
    the bit, then given the recorded bits."""
    if not data.startswith(b"{"):
        return data
    summary, known = json.loads(data), json.loads(recorded)
    for key, value in (known.get("rdp_at_order") or {}).items():
        if summary["rdp_at_order"][key] == value:  # (an individualized run's: none since)
            continue
        assert summary["rdp_at_order"][key] == float(raised_rdp(value)), key
        summary["rdp_at_order"][key] = value
    return (json.dumps(summary, indent=2) + "\n").encode()


def _counted_groups(data: bytes, recorded: bytes) -> bytes:
    """Each group's data-independent figures were recorded from running sums of its
    per-query curves; they are now its counts times one query's curve (another order of the
    same additions): checked within 1e-12 relative (math:tolerance), then given the recorded
    bits."""
    if not data.startswith(b"{"):
        return data
    summary, known = json.loads(data), json.loads(recorded)
    for row, old in zip(summary.get("groups") or [], known.get("groups") or [], strict=True):
        for key in ("epsilon_data_independent", "epsilon_data_independent_if_continued"):
            assert row[key] == pytest.approx(old[key], rel=1e-12, abs=0.0), key
            row[key] = old[key]
    return (json.dumps(summary, indent=2) + "\n").encode()


@pytest.mark.parametrize("name", NAMES)
def test_gaussian_screening_gives_the_earlier_bytes(name, tmp_path, monkeypatch):
    command, args, files = CASES[name]
    monkeypatch.setitem(CASES, "_gaussian", (command, [*args, "--screening", "gaussian"],
                                             files))
    produced = run_case("_gaussian", tmp_path)
    for filename, data in produced.items():
        recorded = (GAUSSIAN / name / filename).read_bytes()
        if filename == "stdout":
            data, recorded = (_without_screening(name, data, recorded),
                              _without_screening(name, recorded, recorded))
            data = _raised_rdp(_counted_groups(_exact_pld(data, recorded), recorded), recorded)
        elif filename == "stderr":  # pate-sweep --best prints the row's command
            data = data.replace(b" --screening gaussian", b"")
        elif filename.endswith(".csv"):
            assert data.split(b"\n", 1)[0] == recorded.split(b"\n", 1)[0]
            _same_values(tmp_path, data, recorded)
            continue
        assert data == recorded, f"{name}/{filename}"


def _same_values(folder: Path, data: bytes, recorded: bytes) -> None:
    """Both per-query tables read back to the same values and types, floats to the bit (the
    recorded RDP columns raised, ``numerics.raised_rdp``, as they are written since)."""
    import numpy as np
    import pandas as pd

    frames = []
    for number, text in enumerate((data, recorded)):
        path = folder / f"table{number}.csv"
        path.write_bytes(text)
        frames.append(read_table(path, expected=PER_QUERY))
    for column in ("rdp_selection", "rdp_answer"):
        frames[1][column] = raised_rdp(frames[1][column].to_numpy())
    pd.testing.assert_frame_equal(*frames, check_exact=True)
    for column in frames[0].columns:
        if frames[0][column].dtype == np.float64:
            assert np.array_equal(*(np.signbit(frame[column]) for frame in frames)), column


def test_the_exact_curve_changes_those_numbers(tmp_path):
    """The comparison above can fail: without --screening gaussian the numbers differ."""
    produced = run_case("confident_expected", tmp_path)
    assert produced["stdout"] != (GAUSSIAN / "confident_expected" / "stdout").read_bytes()
