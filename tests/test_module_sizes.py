"""Issue 27's size limits, kept: ``pate_cli/analysis/`` at most 3,000 lines in at most 16
modules, ``pate_cli/cli/`` at most 2,000 lines, and no module over 400 lines (split a
module by concept before it passes them)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pate_cli"


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_400_lines():
    long = {str(path.relative_to(PACKAGE)): _lines(path)
            for path in PACKAGE.rglob("*.py") if _lines(path) > 400}
    assert not long, long


def test_the_orchestration_and_the_commands_stay_small():
    analysis = sorted((PACKAGE / "analysis").glob("*.py"))
    assert len(analysis) <= 16, [path.name for path in analysis]
    assert sum(map(_lines, analysis)) <= 3000
    assert sum(map(_lines, (PACKAGE / "cli").glob("*.py"))) <= 2000


def test_the_count_sees_every_module():
    """The limits above read real files (a wrong root would pass them vacuously)."""
    assert len(list(PACKAGE.rglob("*.py"))) > 100
    assert len(list((PACKAGE / "analysis").glob("*.py"))) >= 10
