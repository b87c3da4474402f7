"""One row form (pate_cli/vote_rows.py): every kernel takes a ``VoteRows`` chunk, dense votes
being the form with no zero block. Checked over the package's source (``ast``, nothing
imported): outside ``inputs/`` and the row module no code asks which kind of votes it has
(``isinstance`` of a ``Sparse...`` class or of ``VoteRows``), and the kernels' sparse twins
and a second ``log1mexp`` do not come back."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "pate_cli"
ROW_MODULE = "vote_rows.py"
# The kernels' second copies, removed when the row form came; and log1mexp lives in
# numerics.py only.
TWINS = {"log_q_gnmax_sparse", "log_q_lnmax_sparse", "log_q_gnmax_with_zero_block",
         "_log_q_integral_sparse", "sparse_noisy_argmax", "sparse_gumbel_argmax",
         "_argmax_with_block", "_plurality_gaps"}


def _names(node: ast.AST) -> list[str]:
    """The class names a type argument of ``isinstance`` mentions."""
    return [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))]


def _asks_the_kind(node: ast.Call) -> bool:
    if not (isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2):
        return False
    return any("Sparse" in name or name == "VoteRows" for name in _names(node.args[1]))


def offences(package: Path) -> list[str]:
    """``path:line what`` for every breach of the module docstring's rules."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        exempt = relative.parts[0] == "inputs" or relative.as_posix() == ROW_MODULE
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = (relative.as_posix(), getattr(node, "lineno", 0))
            if isinstance(node, ast.Call) and not exempt and _asks_the_kind(node):
                found.append((*where, "asks which kind of votes it has (use the row form)"))
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (
                    node.name in TWINS
                    or node.name == "log1mexp" and relative.as_posix() != "numerics.py"):
                found.append((*where, f"defines {node.name}, a second copy of a kernel"))
    return [f"{path}:{line} {what}" for path, line, what in sorted(found)]


def test_every_kernel_takes_the_one_row_form():
    assert offences(SOURCE) == []


def test_the_scan_finds_a_branch_on_sparse_rows_and_a_twin(tmp_path):
    package = tmp_path / "pkg"
    (package / "inputs").mkdir(parents=True)
    (package / "accounting").mkdir()
    (package / "inputs" / "reader.py").write_text("ok = isinstance(v, SparseVotes)\n")
    (package / ROW_MODULE).write_text("ok = isinstance(v, VoteRows)\n")
    (package / "accounting" / "kernel.py").write_text(
        "if isinstance(votes, (np.ndarray, rows.SparseRows)):\n    pass\n"
        "def log_q_gnmax_sparse(rows):\n    pass\n"
        "def log1mexp(x):\n    pass\n")
    assert offences(package) == [
        "accounting/kernel.py:1 asks which kind of votes it has (use the row form)",
        "accounting/kernel.py:3 defines log_q_gnmax_sparse, a second copy of a kernel",
        "accounting/kernel.py:5 defines log1mexp, a second copy of a kernel",
    ]
