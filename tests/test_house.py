"""The house rules of reference/ and properties/: modules stay small or say why they are not,
one public name means one thing, and no module-level import goes round in a circle.

Read from the source files (no imports), so the checks are fast and see every module,
adapters for frameworks that are not installed included.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reference", "properties")

MAX_LINES = 400
LONG_REASON = "Why this module is long:"
"""A module over MAX_LINES lines starts a line of its docstring with this, then says why."""

SHARED_NAMES: dict[str, tuple[frozenset[str], str]] = {
    "main": (
        frozenset({"turnbound.properties.cli.main", "turnbound.properties.conformance.serve"}),
        "the same role: each is the `main(argv) -> int` of a program (`turnbound`, and the reference "
        "served over the wire protocol)",
    ),
    "run": (
        frozenset({"turnbound.reference.interpreter", "turnbound.properties.cli.main"}),
        "cli.main.run is the console script pyproject.toml names ([project.scripts]); every installed "
        "`turnbound` script imports it by that name, so renaming it breaks them until reinstalled",
    ),
}
"""Public names defined in more than one module on purpose: name -> (the modules, why)."""

ADAPTER_INTERFACE = frozenset(
    {
        "scheduler",
        "installed_version",
        "load_sdk",
        "run_agent",
        "run_turn",
        "ScriptedModelError",
        "ScriptedModelFailure",
        "ScriptedToolError",
        "ScriptedToolFailure",
    }
)
"""Names every framework adapter may offer for the same role (docs/frameworks/ADDING.md), read
qualified by the adapter module (`adapter.scheduler`); allowed again only inside properties/adapters/."""

ADAPTERS = "turnbound.properties.adapters."


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(["turnbound", *parts])] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def test_the_modules_are_found() -> None:
    assert "turnbound.reference.loader" in MODULES
    assert "turnbound.properties.explore.explorer" in MODULES
    assert len(MODULES) > 100


def test_a_module_over_400_lines_says_why() -> None:
    unexplained = []
    for name, path in MODULES.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(TREES[name]) or ""
        if not any(line.startswith(LONG_REASON) for line in doc.splitlines()):
            unexplained.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    assert not unexplained, (
        f"split these modules, or start a line of the module docstring with {LONG_REASON!r} "
        f"and say why: {unexplained}"
    )


def _public_definitions() -> dict[str, set[str]]:
    """Public top-level class and function name -> the modules that define it."""
    out: dict[str, set[str]] = defaultdict(set)
    for name, tree in TREES.items():
        for node in tree.body:
            definition = isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            if definition and not node.name.startswith("_"):
                out[node.name].add(name)
    return out


def test_one_public_name_means_one_thing() -> None:
    clashes = {}
    for name, modules in _public_definitions().items():
        if len(modules) < 2:
            continue
        if name in SHARED_NAMES and modules == SHARED_NAMES[name][0]:
            continue
        if name in ADAPTER_INTERFACE and all(m.startswith(ADAPTERS) for m in modules):
            continue
        clashes[name] = sorted(modules)
    assert not clashes, (
        "a public name defined in two modules reads as one thing: give each its own name, or list it "
        f"in SHARED_NAMES with the reason: {clashes}"
    )


def test_the_shared_names_are_still_shared() -> None:
    defined = _public_definitions()
    stale = [name for name, (modules, _) in SHARED_NAMES.items() if defined.get(name) != modules]
    stale += [name for name in ADAPTER_INTERFACE if len(defined.get(name, ())) < 2]
    assert not stale, f"no longer defined where listed; update the list: {sorted(stale)}"


def _import_graph() -> nx.DiGraph:
    """Module -> the turnbound modules it imports at module level (imports inside functions are
    deliberately late and left out)."""
    graph = nx.DiGraph()
    for name, tree in TREES.items():
        graph.add_node(name)
        for node in tree.body:
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            graph.add_edges_from((name, t) for t in targets if t in MODULES and t != name)
    return graph


def test_no_module_level_import_cycle() -> None:
    graph = _import_graph()
    assert graph.number_of_edges() > 100
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"module-level imports that go round: {cycles[:5]}"


def test_the_cycle_check_sees_a_cycle() -> None:
    graph = _import_graph()
    graph.add_edge("turnbound.reference.table", "turnbound.reference.loader")
    assert list(nx.simple_cycles(graph))
