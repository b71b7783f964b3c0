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
import weakref
from collections.abc import Callable, Iterator, Mapping
from itertools import product

from turnbound.properties.gc_pause import gc_paused
from turnbound.properties.prove.encoding import Encoding, StateValues, SymbolicEdge, SymbolicRun
from turnbound.reference.errors import RunError
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors, MonitorState
from turnbound.reference.outcomes import complete
from turnbound.reference.table import Table
from turnbound.reference.types import Value

DEFAULT_CAP = 20_000
SAMPLE_CAP = 600

Node = tuple[State, MonitorState]
MonitorKey = tuple[MonitorState, str, tuple[tuple[str, Value], ...], int]
"""Monitor state, operation, arguments and outcome index: the monitors' step is a function of them."""
StateCheck = Callable[[str, Mapping[str, Value], MonitorState], bool]
"""A target: place, parameters + variables + readable facts, monitor states."""


class StateSpace:
    """Breadth-first enumeration of (state, monitor state) pairs, with a parent per node.

    Memoized for the prover's many questions at one parameter assignment: the search from
    the initial state is kept (`from_start` scans the nodes found so far before expanding
    further, in the same order, so it returns the path a fresh search would), and so are
    each node's successors and each monitor step.
    """

    def __init__(self, enc: Encoding, params: Mapping[str, int], cap: int) -> None:
        self.enc = enc
        self.machine = Machine(enc.table, params, memo=True)  # a breadth-first search, as the explorer's
        self.monitors = Monitors(enc.table)
        self.cap = cap
        self.edge_index = {(e.transition.id, e.kind, e.error): e for e in enc.edges}
        self.start: Node = (self.machine.initial(), self.monitors.initial())
        self._succ: dict[Node, tuple[tuple[SymbolicEdge, dict[str, Value], Node], ...]] = {}
        self._monitor_memo: dict[
            tuple[MonitorState, str, tuple[tuple[str, Value], ...], int], MonitorState
        ] = {}
        self._nodes: list[Node] = [self.start]
        self._parent: list[tuple[int, SymbolicEdge, dict[str, Value]] | None] = [None]
        self._seen: dict[Node, int] = {self.start: 0}
        self._expanded = 0
        self._envs: list[Mapping[str, Value]] = []

    def successors(self, node: Node) -> tuple[tuple[SymbolicEdge, dict[str, Value], Node], ...]:
        found = self._succ.get(node)
        if found is None:
            found = self._succ[node] = tuple(self._successors(node))
        return found

    def _successors(self, node: Node) -> Iterator[tuple[SymbolicEdge, dict[str, Value], Node]]:
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
        args_key = tuple(args.items())
        table = self.enc.table
        afters = self.machine.take_outcomes(state, t)
        for k, outcome in enumerate(self.machine.outcomes(t.op)):
            key = (ms, t.op, args_key, k)
            m2 = self._monitor_memo.get(key)
            if m2 is None:
                m2 = self._monitor_memo[key] = self.monitors.step(ms, t.op, args, outcome)
            nxt = (afters[k], m2)
            if outcome.raise_ is None:
                values = complete(table.operations[t.op].facts, outcome.facts or {})
                yield self.edge_index[(t.id, "success", None)], values, nxt
            else:
                values = complete(table.failures[outcome.raise_].fields, outcome.fields)
                yield self.edge_index[(t.id, "raise", outcome.raise_)], values, nxt

    def env(self, i: int) -> Mapping[str, Value]:
        """Parameters, variables and readable facts of the i-th node from the start (kept)."""
        envs = self._envs
        while len(envs) <= i:
            envs.append(dict(self.machine.env(self._nodes[len(envs)][0])))
        return envs[i]

    def from_start(
        self, target: Callable[[int, Node], bool], deadline: float
    ) -> tuple[list[tuple[Node, SymbolicEdge, dict[str, Value]]] | None, bool]:
        """The shortest path from the initial state to a node meeting the target (given the
        node's index and the node), and whether the search was exhaustive."""
        nodes, parent, seen = self._nodes, self._parent, self._seen
        i = 0
        while i < len(nodes):
            if i % 512 == 0 and time.monotonic() > deadline:
                return None, False
            if target(i, nodes[i]):
                return _path(nodes, parent, i), True
            if i >= self._expanded:
                for edge, values, nxt in self.successors(nodes[i]):
                    if nxt not in seen and len(nodes) < self.cap:
                        seen[nxt] = len(nodes)
                        nodes.append(nxt)
                        parent.append((i, edge, values))
                self._expanded = i + 1
            i += 1
        return None, len(nodes) < self.cap

    def bfs(
        self, start: Node, target: Callable[[Node], bool], deadline: float
    ) -> tuple[list[tuple[Node, SymbolicEdge, dict[str, Value]]] | None, bool]:
        """The shortest path to a node meeting the target, and whether the search was exhaustive."""
        nodes = [start]
        parent: list[tuple[int, SymbolicEdge, dict[str, Value]] | None] = [None]
        seen = {start: 0}
        i = 0
        while i < len(nodes):
            if i % 512 == 0 and time.monotonic() > deadline:
                return None, False
            if target(nodes[i]):
                return _path(nodes, parent, i), True
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


def _path(
    nodes: list[Node], parent: list[tuple[int, SymbolicEdge, dict[str, Value]] | None], i: int
) -> list[tuple[Node, SymbolicEdge, dict[str, Value]]]:
    path: list[tuple[Node, SymbolicEdge, dict[str, Value]]] = []
    j = i
    while (link := parent[j]) is not None:
        path.append((nodes[j], link[1], link[2]))
        j = link[0]
    return path[::-1]


_STATE_SPACES: weakref.WeakKeyDictionary[Encoding, dict[tuple[tuple[str, int], ...], StateSpace]] = (
    weakref.WeakKeyDictionary()
)
"""The memoized searches of each encoding (one prover's), per parameter assignment."""


def state_space_for(enc: Encoding, params: Mapping[str, int], cap: int) -> StateSpace:
    per_params = _STATE_SPACES.setdefault(enc, {})
    key = (*sorted(params.items()), ("", cap))
    graph = per_params.get(key)
    if graph is None:
        graph = per_params[key] = StateSpace(enc, params, cap)
    return graph


def search_state(
    enc: Encoding, params: Mapping[str, int], target: StateCheck, deadline: float, cap: int = DEFAULT_CAP
) -> tuple[SymbolicRun | None, bool]:
    """The shortest run to a state meeting the target, continued to the nearest terminal;
    and whether the search covered every reachable state (so None means: there is none)."""
    graph = state_space_for(enc, params, cap)
    start = graph.start

    def meets(i: int, node: Node) -> bool:
        return target(node[0].location, graph.env(i), node[1])

    with gc_paused():
        path, exhaustive = graph.from_start(meets, deadline)
        if path is None:
            return None, exhaustive
        end = path[-1][0] if path else start
        if not graph.machine.is_terminal(end[0]):
            rest, _ = graph.bfs(end, lambda n: graph.machine.is_terminal(n[0]), deadline)
            if rest is None:
                return None, False
            path += rest
    run = SymbolicRun(
        dict(graph.machine.params),
        [graph.node_values(n) for n in [start, *[node for node, _, _ in path]]],
        [edge for _, edge, _ in path],
        [values for _, _, values in path],
    )
    return run, exhaustive


def configurations_smallest_first(table: Table) -> list[dict[str, int]]:
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
    graph = StateSpace(enc, params, limit)
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
