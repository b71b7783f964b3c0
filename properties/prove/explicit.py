"""Explicit-state bounded search on the reference machine, at fixed parameter values.

SAT-based bounded model checking decides a whole parameter range at once, but on larger
tables every extra step makes the unsatisfiable depths slower. At fixed parameter values
the reachable states are few enough to enumerate breadth first with the interpreter's
own `Machine`: the first state found that meets a target is at the smallest depth, and
the path to it is a run. Such runs are checked against the z3 encoding
(`turnbound.properties.prove.witness.admitted`) and replayed on the interpreter like any other
witness; the same enumeration also samples reachable states to discard candidate atoms.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from itertools import product

from turnbound.properties.prove.encoding import Edge, Encoding, Run, StateValues
from turnbound.reference.errors import RunError
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors, MonitorState
from turnbound.reference.outcomes import complete
from turnbound.reference.table import Table
from turnbound.reference.types import Value

DEFAULT_CAP = 20_000
SAMPLE_CAP = 600

Node = tuple[State, MonitorState]
StateCheck = Callable[[str, Mapping[str, Value], MonitorState], bool]
"""A target: place, parameters + variables + readable facts, monitor states."""


class Graph:
    """Breadth-first enumeration of (state, monitor state) pairs, with a parent per node."""

    def __init__(self, enc: Encoding, params: Mapping[str, int], cap: int) -> None:
        self.enc = enc
        self.machine = Machine(enc.table, params)
        self.monitors = Monitors(enc.table)
        self.cap = cap
        self.edge_index = {(e.transition.id, e.kind, e.error): e for e in enc.edges}

    def successors(self, node: Node) -> Iterator[tuple[Edge, dict[str, Value], Node]]:
        state, ms = node
        if self.machine.is_terminal(state):
            return
        try:
            t = self.machine.select(state)
        except RunError:  # a table loaded without the guard check
            return
        if t.op is None:
            yield self.edge_index[(t.id, "internal", None)], {}, (self.machine.take_internal(state, t), ms)
            return
        args = self.machine.args(state, t)
        table = self.enc.table
        for outcome in self.machine.outcomes(t.op):
            nxt = (self.machine.take_outcome(state, t, outcome), self.monitors.step(ms, t.op, args, outcome))
            if outcome.raise_ is None:
                values = complete(table.operations[t.op].facts, outcome.facts or {})
                yield self.edge_index[(t.id, "success", None)], values, nxt
            else:
                values = complete(table.failures[outcome.raise_].fields, outcome.fields)
                yield self.edge_index[(t.id, "raise", outcome.raise_)], values, nxt

    def bfs(
        self, start: Node, target: Callable[[Node], bool], deadline: float
    ) -> tuple[list[tuple[Node, Edge, dict[str, Value]]] | None, bool]:
        """The shortest path to a node meeting the target, and whether the search was exhaustive."""
        nodes = [start]
        parent: list[tuple[int, Edge, dict[str, Value]] | None] = [None]
        seen = {start: 0}
        i = 0
        while i < len(nodes):
            if i % 512 == 0 and time.monotonic() > deadline:
                return None, False
            if target(nodes[i]):
                path: list[tuple[Node, Edge, dict[str, Value]]] = []
                j = i
                while (link := parent[j]) is not None:
                    path.append((nodes[j], link[1], link[2]))
                    j = link[0]
                return path[::-1], True
            for edge, values, nxt in self.successors(nodes[i]):
                if nxt not in seen and len(nodes) < self.cap:
                    seen[nxt] = len(nodes)
                    nodes.append(nxt)
                    parent.append((i, edge, values))
            i += 1
        return None, len(nodes) < self.cap

    def node_values(self, node: Node) -> StateValues:
        state, ms = node
        return StateValues(state.location, self.machine.variables(state), dict(state.facts), ms)


def search_state(
    enc: Encoding, params: Mapping[str, int], target: StateCheck, deadline: float, cap: int = DEFAULT_CAP
) -> tuple[Run | None, bool]:
    """The shortest run to a state meeting the target, continued to the nearest terminal;
    and whether the search covered every reachable state (so None means: there is none)."""
    graph = Graph(enc, params, cap)
    start: Node = (graph.machine.initial(), graph.monitors.initial())

    def meets(node: Node) -> bool:
        return target(node[0].location, graph.machine.env(node[0]), node[1])

    path, exhaustive = graph.bfs(start, meets, deadline)
    if path is None:
        return None, exhaustive
    end = path[-1][0] if path else start
    if not graph.machine.is_terminal(end[0]):
        rest, _ = graph.bfs(end, lambda n: graph.machine.is_terminal(n[0]), deadline)
        if rest is None:
            return None, False
        path += rest
    run = Run(
        dict(graph.machine.params),
        [graph.node_values(n) for n in [start, *[node for node, _, _ in path]]],
        [edge for _, edge, _ in path],
        [values for _, _, values in path],
    )
    return run, exhaustive


def configurations(table: Table) -> list[dict[str, int]]:
    """The defaults, then every combination of the explore ranges, smallest first."""
    axes = [range(p.range[0], p.range[1] + 1) for p in table.parameters]
    names = [p.name for p in table.parameters]
    combos = sorted(product(*axes), key=lambda c: (sum(c), c))
    out = [table.defaults()]
    out += [dict(zip(names, c, strict=True)) for c in combos if dict(zip(names, c, strict=True)) != out[0]]
    return out


def sample_parameters(table: Table) -> list[dict[str, int]]:
    """The defaults and both corners of the explore ranges (distinct, in that order)."""
    out: list[dict[str, int]] = []
    for params in (
        table.defaults(),
        {p.name: p.range[0] for p in table.parameters},
        {p.name: p.range[1] for p in table.parameters},
    ):
        if params not in out:
            out.append(params)
    return out


def reachable(
    enc: Encoding, params: Mapping[str, int], limit: int = SAMPLE_CAP
) -> Iterator[tuple[str, dict[str, Value], MonitorState]]:
    """Up to `limit` reachable states, breadth first: (place, environment, monitors)."""
    graph = Graph(enc, params, limit)
    start: Node = (graph.machine.initial(), graph.monitors.initial())
    seen = {start}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            yield node[0].location, graph.machine.env(node[0]), node[1]
            for _, _, nxt in graph.successors(node):
                if nxt not in seen and len(seen) < limit:
                    seen.add(nxt)
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
