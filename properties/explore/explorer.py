"""The explorer: every reachable state of one table at fixed parameter values.

The interpreter walks one path, the explorer all of them: a breadth-first search
over the reference `Machine`, so every claim is checked on exactly the semantics the
interpreter runs, and every counterexample is the shortest path to its state,
replayed on the interpreter (`interpreter.run`) before it is reported. A witness that
does not replay is an explorer bug and is reported as such (`Violation.replay_problem`).

What is checked:

- invariants and lemmas on every state, bounds on every terminal state;
- trace properties on every path: a node is the interpreter's `State` paired with the
  monitor state of `turnbound.reference.monitors.Monitors`, so a path that breaks a
  trace property reaches a node whose monitors say so;
- `terminates`: a cycle in the reachable graph is a run that may never end, reported
  with a lasso (prefix, then the loop). A table with `profile.step_horizon` is explored
  to that many host calls; reaching it is reported as `horizon reached`;
- `deterministic`: a reachable state with no enabled transition, or more than one.

API: `explore(table, params) -> Exploration` (`.summary`, `.violations`, `.covered`,
`.graph`, `.path_to(node)`, `.steps(walk)`, `.witness(node)`, `.exits(claim)`);
`replay(table, params, steps) -> Replay` turns a path into a host script and the
interpreter's trace; sweeps are in `turnbound.properties.explore.sweep`.

This module is the entry point and re-exports what callers use; the parts live beside
it: `results` (PathStep, Witness, Violation, Exit, ClaimResult, Summary), `search` (the
breadth-first search), `checks` (the claims judged over the search), `replay` (a path
on the interpreter) and `to_graph` (the networkx graph).

Claims with `expect = "violated"` must be refuted; a verdict that differs from the
claim's `expect` makes the exploration fail (`Summary.ok`). Termination has no
`expect` in the table language: it is expected to hold, except that a table which
declares `step_horizon` says its turn may be unbounded, so either verdict is accepted.

Stored states (`Summary.stored`): by default the search takes SPIN's atomic steps: it
stores the initial state, terminals, the states that call the host, leaves (step
horizon, limits, run errors) and states that break an invariant or lemma, and walks
through the internal transitions between them without storing them (`search`). Every
verdict, witness and the covered transitions are the same as with `all_states=True`,
which stores every state; `Summary.states` counts what was stored.

Graph (`Exploration.graph`, a `networkx.DiGraph`; node keys are BFS indices, 0 is the
initial state, indices grow with distance from it). The graph has every state, one edge
per transition, whichever way the exploration stored: an atomic exploration searches
again with every state stored on first use of `graph`, `path_to`, `steps` or `witness`
(whose node numbers are the graph's), so a caller that wants the graph passes
`all_states=True` to search once.

- node attributes: `location` (str), `terminal` (bool), `values` (dict variable ->
  value), `facts` (dict fact -> value: of the last host outcome, those something here
  reads; the explorer forgets the rest, `readable.facts_read`),
  `monitors` (tuple[int, ...], `Monitors` state), `depth` (edges from the initial
  state), `calls` (host calls on the shortest path), `horizon` (bool: a leaf cut off
  at the step horizon), `violations` (tuple of claim names broken here);
- edge attributes: `transition` (id), `op` (str, or None for an internal transition),
  `outcome` (`Outcome` or None), `label` (text: `transition: outcome`; when two
  outcomes of one call lead to the same node, the label lists both).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx
from turnbound.properties.explore.checks import _Checker
from turnbound.properties.explore.claims import StateClaimMemo, bound_sides, describe_property
from turnbound.properties.explore.replay import Replay, path_script, replay
from turnbound.properties.explore.results import (
    DETERMINISTIC,
    TERMINATES,
    ClaimResult,
    Exit,
    PathStep,
    Summary,
    Violation,
    Witness,
)
from turnbound.properties.explore.search import DEFAULT_MAX_STATES, _Search
from turnbound.properties.explore.to_graph import _to_graph, describe_outcome
from turnbound.properties.gc_pause import gc_paused
from turnbound.reference.arguments import require_count, require_params, require_table
from turnbound.reference.cases import Case
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.machine import Machine, check_params
from turnbound.reference.monitors import Monitors
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import probe_line


@dataclass
class Exploration:
    """One table at one parameter assignment: its reachable graph and what it shows."""

    table: Table
    params: dict[str, int]
    summary: Summary
    _search: _Search = field(repr=False)
    _bound_nodes: dict[str, list[int]] = field(repr=False)
    _broken: dict[int, tuple[str, ...]] = field(repr=False)
    _graph: nx.DiGraph | None = field(default=None, repr=False)
    _full: tuple[_Search, dict[int, tuple[str, ...]]] | None = field(default=None, repr=False)

    @property
    def violations(self) -> tuple[Violation, ...]:
        return self.summary.violations

    @property
    def covered(self) -> dict[str, int]:
        return self.summary.covered

    @property
    def ok(self) -> bool:
        return self.summary.ok

    @property
    def graph(self) -> nx.DiGraph:
        """The reachable graph with every state (attributes in the module docstring), built on first use."""
        if self._graph is None:
            search, broken = self._every_state()
            self._graph = _to_graph(search, self.summary, broken)
        return self._graph

    def _every_state(self) -> tuple[_Search, dict[int, tuple[str, ...]]]:
        """The search with every state stored, and the claims each node breaks: this exploration's
        own, or (atomic) a second search made once."""
        if self._search.all_states:
            return self._search, self._broken
        if self._full is None:
            old = self._search
            search = _Search(old.machine, old.monitors, old.max_states, all_states=True)
            search.run()
            checker = _Checker(self.table, old.machine, old.monitors, search)
            checker.check()
            self._full = (search, checker.broken)
        return self._full

    def path_to(self, node: int) -> list[PathStep]:
        """The shortest path from the initial state to a node of `graph`."""
        return self._every_state()[0].path_to(node)

    def steps(self, nodes: Iterable[int]) -> list[PathStep]:
        """The edges along a walk through `graph` (e.g. `nx.shortest_path(graph, 0, n)`).

        A walk that starts at node 0 replays with `replay(table, params, steps)`.
        """
        walk = list(nodes)
        search = self._every_state()[0]
        out = []
        for a, b in itertools.pairwise(walk):
            try:
                out.extend(search.steps_of(search.edge_label(a, b)))
            except (KeyError, IndexError):
                raise ValueError(f"no edge from node {a} to node {b}") from None
        return out

    def witness(self, node: int) -> Witness:
        """The shortest path to a node of `graph`, as a host script replayed on the interpreter."""
        return self._witness(self.path_to(node))

    def _witness(self, path: list[PathStep]) -> Witness:
        r = replay(self._search.machine, None, path)
        return Witness(tuple(path), r.script, r.trace, probe_line(self.table, r.trace))

    def exits(self, claim: str) -> list[Exit]:
        """Each distinct probe line at which a bound is broken, with its shortest witness."""
        search = self._search
        seen: set[tuple[object, ...]] = set()
        lines: dict[str, Exit] = {}
        cases = [c for c in profile_cases(self.table) if check_params(self.table, c.params) == self.params]
        for i in self._bound_nodes.get(claim, []):
            state, _ = search.nodes[i]
            key = (state.location, state.values, tuple(sorted(_op_counts(search, i).items())))
            if key in seen:  # same report environment, same probe line
                continue
            seen.add(key)
            w = self._witness(search.path_to(i))
            if w.line not in lines:
                case = next((c.name for c in cases if _reproduces(c, w)), None)
                lines[w.line] = Exit(w.line, case, w, self._exit_problem(claim, w))
        return sorted(lines.values(), key=lambda e: (len(e.witness.path), e.line))

    def _exit_problem(self, claim: str, w: Witness) -> str | None:
        if w.trace.path != [s.transition for s in w.path]:
            return f"the interpreter took {w.trace.path}"
        bound = next(b for b in self.table.bounds if b.name == claim)
        env = {**w.trace.params, **w.trace.variables}
        if not self.table.is_terminal(w.trace.terminal) or not bound.judged_at(w.trace.terminal):
            return f"the replayed run ends at {w.trace.terminal}, where {claim} is not judged"
        if compile_expr(bound.expr)(env):
            return f"the replayed run ends at {w.trace.terminal} without breaking {claim}"
        return None


def _reproduces(case: Case, w: Witness) -> bool:
    """The witness ends as the case expects: terminal, probe line and the counters it names."""
    exp = case.expect
    got = {**w.trace.variables, **w.trace.counters}
    return (
        exp.terminal == w.trace.terminal
        and exp.line in (None, w.line)
        and all(got.get(k) == v for k, v in exp.counters.items())
    )


def _op_counts(search: _Search, i: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    while search.parent[i] >= 0:
        for lid in search.chains[search.parent_label[i]]:
            t, k = search.labels[lid]
            if k >= 0 and t.op is not None:
                counts[t.op] = counts.get(t.op, 0) + 1
        i = search.parent[i]
    return counts


def explore(
    table: Table,
    params: Mapping[str, int] | None = None,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    exits: bool = False,
    all_states: bool = False,
) -> Exploration:
    """Search every reachable state at these parameter values (defaults for the rest).

    `exits=True` also lists, for each refuted bound, one witness per distinct probe line.
    `all_states=True` stores every state, not only the atomic ones (module docstring);
    `max_states` limits the states stored.
    """
    require_table(table, "explore")
    require_params(params, "explore")
    require_count(max_states, "explore", "max_states")
    if not isinstance(all_states, bool):
        raise DefinitionError(f"explore: all_states must be true or false, not {all_states!r}")
    started = time.perf_counter()
    machine = Machine(table, params, memo=True, forget=True)  # few update inputs; no fact read later
    monitors = Monitors(table)
    claim_memo = StateClaimMemo(table, machine)
    breaks = None if all_states or not claim_memo.claims else claim_memo.breaks
    search = _Search(machine, monitors, max_states, all_states=all_states, breaks=breaks)
    checker = _Checker(table, machine, monitors, search, claim_memo)
    with gc_paused():
        search.run()
        checker.check()
    summary = checker.summary(time.perf_counter() - started)
    exploration = Exploration(
        table, dict(machine.params), summary, search, checker.bound_nodes, checker.broken
    )
    if exits:
        with_exits = tuple(
            v if v.kind != "bound" else _with_exits(v, exploration) for v in summary.violations
        )
        exploration.summary = dataclasses.replace(summary, violations=with_exits)
    return exploration


def _with_exits(v: Violation, exploration: Exploration) -> Violation:
    return dataclasses.replace(v, exits=tuple(exploration.exits(v.claim)))


__all__ = [
    "DEFAULT_MAX_STATES",
    "DETERMINISTIC",
    "TERMINATES",
    "ClaimResult",
    "Exit",
    "Exploration",
    "PathStep",
    "Replay",
    "Summary",
    "Violation",
    "Witness",
    "bound_sides",
    "describe_outcome",
    "describe_property",
    "explore",
    "path_script",
    "replay",
]
