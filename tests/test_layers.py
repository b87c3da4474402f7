"""The import contract (docs/contributing.md#architecture), checked over the package's source.

Every module of ``pate_cli`` is parsed with ``ast`` (nothing is imported); each import,
at module level or inside a function, relative or absolute, is resolved to the module it
names and each module to its layer. ``check`` reports:

- ``upward``: an import pointing up the layers. Lowest first: the base modules
  (``errors``, ``numerics``, ``orders``, ``threads``, ``_version``), ``inputs``, ``mechanisms``,
  ``accounting``, ``analysis``, ``outputs``, ``sweep``, the public API (the package's
  ``__init__``, which may import any layer below the command line), ``cli``. A module may
  import its own layer and the layers below it.
- ``forbidden``: ``accounting`` is pure math: no mechanisms, no input files, no pandas,
  no threads or processes.
- ``cycle``: a circle in the graph of module-level imports.
- ``in-function``: a ``pate_cli`` import inside a function (the way to dodge a cycle).
  Imports inside functions are meant for heavy third-party libraries only (pandas,
  matplotlib, scipy.optimize, dask, jinja2, pyarrow), so ``import pate_cli`` stays fast.
  The ``cli`` layer is the exception: its commands import the analysis stack inside the
  command function, so that ``--help`` and ``--version`` load no numerics (fast start).
- ``unplaced``: a module under no known layer (a new top-level module or folder must be
  placed in ``LAYER_OF`` first).

``KNOWN_VIOLATIONS`` lists the violations the package has today; they are being removed,
and the list is meant to shrink to nothing. A stale entry only warns, so the fix can land
in the package before the list is emptied.
"""

from __future__ import annotations

import ast
import shutil
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

PACKAGE = "pate_cli"
SOURCE = Path(__file__).resolve().parents[1] / PACKAGE  # this checkout's package, not imported

# Layers, lowest first; "api" is the package's __init__.
LAYERS = ("base", "inputs", "mechanisms", "accounting", "analysis", "outputs", "sweep", "api",
          "cli")
# First name under the package -> layer.
LAYER_OF = {
    "errors": "base", "numerics": "base", "orders": "base", "_version": "base", "_lazy": "base",
    "_views": "base", "threads": "base", "rounding": "base", "vote_rows": "base",
    "interrupts": "base", "work_sizes": "base", "decisions": "base", "curve_store": "base",
    "query_table": "base",
    "inputs": "inputs", "mechanisms": "mechanisms", "accounting": "accounting",
    "analysis": "analysis", "outputs": "outputs", "sweep": "sweep", "cli": "cli",
}
# Layer -> modules it must not import (a name and everything under it); relative names
# are inside the package.
FORBIDDEN = {
    "accounting": (".mechanisms", ".inputs", ".threads", "pandas", "threading",
                   "concurrent.futures", "multiprocessing"),
}

# (kind, importer, imported) of violations in today's package. Each is being removed.
# Empty: the participation schedule moved to mechanisms/ and the threads to analysis/.
KNOWN_VIOLATIONS: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str       # dotted module name
    imported: str       # the module it names (internal), or ``base.name`` (external)
    where: str          # path:line
    in_function: bool


@dataclass(frozen=True)
class Violation:
    kind: str
    importer: str
    imported: str
    detail: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.importer, self.imported)

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


# --- reading the imports ------------------------------------------------------------------

def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``root / package``."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, modules: Iterable[str], where: str):
        self.module, self.is_package, self.modules = module, is_package, set(modules)
        self.where, self.depth, self.found = where, 0, []

    def _add(self, name: str, node: ast.AST) -> None:
        self.found.append(Import(self.module, name, f"{self.where}:{node.lineno}",
                                 self.depth > 0))

    def _internal(self, name: str) -> str:
        """The module ``name`` executes: itself, or its nearest existing package."""
        while name not in self.modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    def _function(self, node) -> None:
        for default in node.args.defaults + node.args.kw_defaults:
            if default is not None:
                self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.depth += 1
        for statement in node.body:
            self.visit(statement)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Import(self, node: ast.Import) -> None:
        top = self.module.split(".")[0]
        for alias in node.names:
            internal = alias.name == top or alias.name.startswith(top + ".")
            self._add(self._internal(alias.name) if internal else alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            parts = self.module.split(".")
            if not self.is_package:
                parts = parts[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        if base == "__future__":
            return
        top = self.module.split(".")[0]
        internal = base == top or base.startswith(top + ".")
        for alias in node.names:
            name = f"{base}.{alias.name}"
            if internal:
                self._add(name if name in self.modules else self._internal(base), node)
            else:
                self._add(name, node)


def read_imports(root: Path, package: str) -> tuple[dict[str, Path], list[Import]]:
    """Every module of ``package`` (a folder under ``root``) and every import in it."""
    modules = module_files(root, package)
    imports = []
    for name, path in modules.items():
        visitor = _Imports(name, path.name == "__init__.py", modules,
                           path.relative_to(root).as_posix())
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        imports += dict.fromkeys(visitor.found)  # once per (importer, imported, line)
    return modules, imports


# --- the contract ----------------------------------------------------------------------------

def layer_of(module: str, package: str) -> str | None:
    parts = module.split(".")
    if parts[0] != package:
        return None
    if len(parts) == 1:
        return "api"
    return LAYER_OF.get(parts[1])


def _is_under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def find_cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component (Tarjan), as ``[a, b, ..., a]``."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node: str) -> None:  # recursion depth is bounded by the module count
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                components.append(component)

    for node in sorted(edges):
        if node not in index:
            connect(node)
    cycles = []
    for component in components:
        start = min(component)
        paths = {start: [start]}
        queue = [start]
        while queue:  # breadth first inside the component: a shortest circle through start
            node = queue.pop(0)
            for other in sorted(edges.get(node, ())):
                if other == start:
                    cycles.append(paths[node] + [start])
                    queue = []
                    break
                if other in component and other not in paths:
                    paths[other] = paths[node] + [other]
                    queue.append(other)
    return sorted(cycles)


def check(root: Path, package: str) -> list[Violation]:
    """Every breach of the contract by ``package`` (a folder under ``root``)."""
    modules, imports = read_imports(root, package)
    found: dict[tuple[str, str, str], Violation] = {}

    def report(kind: str, imp: Import, detail: str) -> None:
        violation = Violation(kind, imp.importer, imp.imported, detail)
        found.setdefault(violation.key, violation)

    for module, path in modules.items():
        if layer_of(module, package) is None:
            found[("unplaced", module, "")] = Violation(
                "unplaced", module, "", f"{module} ({path.relative_to(root).as_posix()}) is in "
                "no layer; add its first name to LAYER_OF in tests/test_layers.py")
    edges: dict[str, set[str]] = {module: set() for module in modules}
    wheres: dict[tuple[str, str], str] = {}
    for imp in imports:
        mine = layer_of(imp.importer, package)
        internal = _is_under(imp.imported, package)
        if internal and not imp.in_function:
            edges[imp.importer].add(imp.imported)
            wheres.setdefault((imp.importer, imp.imported), imp.where)
        if internal and imp.in_function and mine != "cli":
            report("in-function", imp, f"{imp.importer} imports {imp.imported} inside a "
                   f"function at {imp.where} (import it at the top of the module)")
        theirs = layer_of(imp.imported, package) if internal else None
        if mine in LAYERS and theirs in LAYERS and LAYERS.index(theirs) > LAYERS.index(mine):
            report("upward", imp, f"{imp.importer} ({mine}) imports {imp.imported} "
                   f"({theirs}) at {imp.where}")
        for banned in FORBIDDEN.get(mine, ()):
            target = package + banned if banned.startswith(".") else banned
            if _is_under(imp.imported, target):
                report("forbidden", imp, f"{imp.importer} ({mine}) imports {imp.imported} at "
                       f"{imp.where}; {mine} must not import {target}")
    for cycle in find_cycles(edges):
        steps = ", ".join(f"{a} imports {b} at {wheres[a, b]}" for a, b in pairwise(cycle))
        found[("cycle", cycle[0], cycle[-2])] = Violation(
            "cycle", cycle[0], cycle[-2], f"{' -> '.join(cycle)} ({steps})")
    return sorted(found.values(), key=lambda v: (v.kind, v.importer, v.imported))


def assert_contract(violations: list[Violation], allowed=frozenset()) -> None:
    new = [v for v in violations if v.key not in allowed]
    assert not new, "import contract broken (tests/test_layers.py):\n" + "\n".join(
        f"  {v}" for v in new)


# --- the package ----------------------------------------------------------------------------

def test_the_package_keeps_its_layers():
    violations = check(SOURCE.parent, PACKAGE)
    stale = KNOWN_VIOLATIONS - {v.key for v in violations}
    if stale:
        warnings.warn(f"fixed, remove from KNOWN_VIOLATIONS: {sorted(stale)}", stacklevel=1)
    assert_contract(violations, KNOWN_VIOLATIONS)


def test_every_module_is_read():
    modules, imports = read_imports(SOURCE.parent, PACKAGE)
    assert {"pate_cli", "pate_cli.errors", "pate_cli.accounting.gnmax",
            "pate_cli.cli.analyze"} <= set(modules)
    edges = {(i.importer, i.imported) for i in imports}
    assert ("pate_cli.accounting.gnmax", "pate_cli.numerics") in edges        # from ..x import
    assert ("pate_cli.analysis", "pate_cli.analysis.run") in edges            # from .x import
    assert ("pate_cli", "pate_cli.sweep") in edges                            # the API
    assert ("pate_cli.sweep.executors", "distributed.Client") in {                # in a function
        (i.importer, i.imported) for i in imports if i.in_function}


# --- the checker on small made-up packages ------------------------------------------------

def make_package(root: Path, files: dict[str, str], name: str = "fake") -> Path:
    """A package ``name`` under ``root`` with the layer folders and ``files`` added."""
    base = {"__init__.py": "from .analysis import run\n", "errors.py": "",
            "accounting/__init__.py": "", "accounting/core.py": "from ..errors import *\n",
            "analysis/__init__.py": "", "analysis/run.py": "from ..accounting import core\n",
            "cli/__init__.py": "", "cli/main.py": "import fake\nfrom fake.analysis import run\n"}
    for relative, text in {**base, **files}.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("fake", name))
    return root


def kinds(violations):
    return [(v.kind, v.importer, v.imported) for v in violations]


def test_checker_passes_a_clean_package(tmp_path):
    assert check(make_package(tmp_path, {}), "fake") == []


def test_checker_reports_an_upward_import(tmp_path):
    root = make_package(tmp_path, {"accounting/core.py": "from ..analysis.run import x\n"})
    violations = check(root, "fake")
    assert ("upward", "fake.accounting.core", "fake.analysis.run") in kinds(violations)
    with pytest.raises(AssertionError) as failed:
        assert_contract(violations)
    assert ("upward: fake.accounting.core (accounting) imports fake.analysis.run (analysis) "
            "at fake/accounting/core.py:1") in str(failed.value)


def test_checker_reports_absolute_and_api_imports_going_up(tmp_path):
    root = make_package(tmp_path, {"errors.py": "import fake.cli.main\n",
                                   "analysis/run.py": "from fake import errors, cli\n"})
    assert kinds(check(root, "fake")) == [
        ("cycle", "fake", "fake.cli.main"),
        ("upward", "fake.analysis.run", "fake.cli"),
        ("upward", "fake.errors", "fake.cli.main"),
    ]


def test_checker_reports_a_cycle_inside_a_layer(tmp_path):
    root = make_package(tmp_path, {"analysis/a.py": "from . import b\n",
                                   "analysis/b.py": "from .c import x\n",
                                   "analysis/c.py": "from fake.analysis.a import y\n"})
    (violation,) = check(root, "fake")
    assert violation.kind == "cycle"
    assert str(violation) == (
        "cycle: fake.analysis.a -> fake.analysis.b -> fake.analysis.c -> fake.analysis.a "
        "(fake.analysis.a imports fake.analysis.b at fake/analysis/a.py:1, "
        "fake.analysis.b imports fake.analysis.c at fake/analysis/b.py:1, "
        "fake.analysis.c imports fake.analysis.a at fake/analysis/c.py:1)")


def test_checker_reports_package_imports_inside_functions_only(tmp_path):
    body = ("def f():\n    import pandas\n    from scipy import optimize\n"
            "    from ..errors import InputError\n    return pandas, optimize, InputError\n"
            "class C:\n    async def g(self):\n        import fake.accounting.core\n")
    root = make_package(tmp_path, {"analysis/run.py": body})
    assert kinds(check(root, "fake")) == [
        ("in-function", "fake.analysis.run", "fake.accounting.core"),
        ("in-function", "fake.analysis.run", "fake.errors"),
    ]


def test_checker_lets_commands_import_the_package_inside_functions(tmp_path):
    body = "def command():\n    from ..analysis import run\n    return run\n"
    root = make_package(tmp_path, {"cli/main.py": body, "analysis/run.py": ""})
    assert check(root, "fake") == []


def test_checker_keeps_accounting_free_of_mechanisms_io_and_threads(tmp_path):
    body = ("import threading\nimport pandas as pd\nfrom concurrent import futures\n"
            "from ..mechanisms import GNMax\nfrom ..inputs.votes import load\n")
    root = make_package(tmp_path, {"accounting/core.py": body, "mechanisms/__init__.py": "",
                                   "inputs/__init__.py": "", "inputs/votes.py": ""})
    assert kinds(check(root, "fake")) == [
        ("forbidden", "fake.accounting.core", "concurrent.futures"),
        ("forbidden", "fake.accounting.core", "fake.inputs.votes"),
        ("forbidden", "fake.accounting.core", "fake.mechanisms"),
        ("forbidden", "fake.accounting.core", "pandas"),
        ("forbidden", "fake.accounting.core", "threading"),
    ]


def test_checker_reports_a_module_in_no_layer(tmp_path):
    root = make_package(tmp_path, {"helpers.py": ""})
    assert kinds(check(root, "fake")) == [("unplaced", "fake.helpers", "")]


def test_a_new_upward_import_in_the_real_package_fails(tmp_path):
    """The contract test itself, on a copy of pate_cli with one import added."""
    shutil.copytree(SOURCE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    gnmax = tmp_path / PACKAGE / "accounting" / "gnmax.py"
    gnmax.write_text(gnmax.read_text() + "\nfrom ..analysis import analyze_votes\n")
    violations = check(tmp_path, PACKAGE)
    with pytest.raises(AssertionError, match=r"upward: pate_cli\.accounting\.gnmax \(accounting\) "
                       r"imports pate_cli\.analysis \(analysis\) at pate_cli/accounting/gnmax\.py"):
        assert_contract(violations, KNOWN_VIOLATIONS)
