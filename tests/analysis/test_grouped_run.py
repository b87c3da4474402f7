"""analysis.grouped_run: chunks counted apart (threads, memory-mapped files, labels
not drawn when nothing scores them)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pate_cli
from pate_cli.analysis import analyze_votes
from pate_cli.inputs.rows import drop_mapped_rows
from pate_cli.mechanisms import NoiseSource, build_mechanism
from pate_cli.threads import ordered_map
from tests.synthetic import synthetic_votes


@pytest.mark.parametrize("name", ["lnmax", "gnmax", "confident", "interactive"])
def test_a_replay_without_labels_makes_the_same_decisions(name):
    votes, _ = synthetic_votes(queries=300)
    student = np.random.default_rng(0).dirichlet(np.ones(votes.shape[1]), size=300)
    mechanism = build_mechanism(name, teachers=50)
    options = dict(start=40, student=student if name == "interactive" else None)
    full = mechanism.replay(votes, noise=NoiseSource(4), **options)
    bare = mechanism.replay(votes, noise=NoiseSource(4), labels=False, **options)
    np.testing.assert_array_equal(full.answered, bare.answered)
    np.testing.assert_array_equal(full.label >= 0, bare.label >= 0)
    teacher = full.answered
    np.testing.assert_array_equal(full.label[~teacher], bare.label[~teacher])  # student's
    if full.code is not None:
        np.testing.assert_array_equal(full.code, bare.code)


def test_totals_without_labels_equal_the_run_that_draws_them():
    votes, truth = synthetic_votes(queries=500)
    mechanism = build_mechanism("confident", teachers=50)
    scored = analyze_votes(votes, mechanism, labels=truth, per_query=False)
    bare = analyze_votes(votes, mechanism, per_query=False)
    summary, other = scored.to_dict(), bare.to_dict()
    assert summary.pop("label_accuracy") is not None and other.pop("label_accuracy") is None
    assert json.dumps(summary) == json.dumps(other)


def test_ordered_map_keeps_the_order_and_raises_what_a_task_raises():
    assert list(ordered_map(lambda x: x * x, range(50), workers=3)) == [x * x for x in range(50)]

    def failing(x):
        if x == 7:
            raise ValueError("seven")
        return x

    with pytest.raises(ValueError, match="seven"):
        list(ordered_map(failing, range(20), workers=2))


def test_a_memory_mapped_file_is_read_right_after_its_pages_are_dropped(tmp_path):
    votes, _ = synthetic_votes(queries=4000)
    path = tmp_path / "votes.npy"
    np.save(path, votes.astype(np.int16))
    mapped = np.load(path, mmap_mode="r")
    before = np.array(mapped[100:3000])
    drop_mapped_rows(mapped, 0, 4000)
    drop_mapped_rows(mapped[10:], 5, 900)   # a view into the mapping
    drop_mapped_rows(votes, 0, 10)          # not a mapping: nothing happens
    np.testing.assert_array_equal(mapped[100:3000], before)
    from_file = pate_cli.analyze(pate_cli.load_votes(path), "confident", per_query=False,
                                 chunk_size=333, accounting="expected")
    in_memory = pate_cli.analyze(votes, "confident", per_query=False, accounting="expected")
    assert from_file.to_dict()["epsilon"] == in_memory.to_dict()["epsilon"]


def _mapped_kb(path) -> int:
    """The resident kB of this process's mappings of ``path`` (``/proc/self/smaps``)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:  # a mapping's header
                inside = line.rstrip("\n").endswith(str(path))
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def _resident_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))


@pytest.mark.skipif(not hasattr(__import__("mmap"), "MADV_DONTNEED"), reason="Linux only")
def test_dropped_rows_of_a_mapped_file_leave_this_process(tmp_path):
    """Rows read through a memory map stay resident until dropped (64 MB here)."""
    path = tmp_path / "votes.npy"
    np.save(path, np.ones((3_200_000, 10), dtype=np.int16))
    mapped = np.load(path, mmap_mode="r")
    view = np.asarray(mapped)  # a plain view of the mapping, as analyses may hold
    before = _resident_kb()
    assert int(view[:, 0].sum()) == 3_200_000   # touches every page
    grown = _resident_kb() - before
    drop_mapped_rows(view, 0, view.shape[0])
    dropped = _resident_kb() - before
    assert grown > 50_000 and dropped < 10_000, (grown, dropped)
    assert int(view[:, 1].sum()) == 3_200_000   # still readable


@pytest.mark.skipif(not hasattr(__import__("mmap"), "MADV_DONTNEED"), reason="Linux only")
def test_chunks_dropped_one_after_another_leave_no_edge_page(tmp_path):
    """Chunks whose edges fall inside a page (1,000 rows of 20 bytes), read and dropped
    out of order (as threads finish them: here the last first): every page goes, the
    shared edge pages too (kept, they were one page per chunk: 12.5 MB here, 30 MB of a
    4 GB file's pass); rows are read right afterwards."""
    path = tmp_path / "votes.npy"
    np.save(path, np.ones((3_200_000, 10), dtype=np.int16))
    view = np.asarray(np.load(path, mmap_mode="r"))
    before = _mapped_kb(path)
    for lo in reversed(range(0, view.shape[0], 1000)):
        assert int(view[lo:lo + 1000, 0].sum()) == min(1000, view.shape[0] - lo)
        drop_mapped_rows(view, lo, lo + 1000)
    left = _mapped_kb(path) - before  # the file's own pages: no other allocation counts
    assert left < 4_000, left
    assert int(view[999:1001, 2].sum()) == 2
