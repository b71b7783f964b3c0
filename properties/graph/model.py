"""A small graph model shared by every picture of a table.

Two sources build it: the control flow of a table (locations, terminals, transitions) and
an explorer's reachable state graph. Renderers (DOT text, and through it SVG/PNG) only read
this model, so a new output format never has to understand tables or explorations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

import networkx as nx
from turnbound.properties.explore.explorer import Exploration, PathStep, describe_outcome
from turnbound.reference.errors import RunError
from turnbound.reference.expr import Cond, Logic, conjuncts, render
from turnbound.reference.table import BUILTIN_TERMINALS, Table, Transition
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value

NodeKind = Literal["location", "terminal"]
EdgeKind = Literal["transition", "raise"]


@dataclass(frozen=True)
class Node:
    id: str
    label: tuple[str, ...]
    kind: NodeKind
    terminal: str | None = None
    """For terminal nodes: the terminal (its kind of exit), which decides the colour."""
    initial: bool = False
    highlighted: bool = False
    tooltip: str = ""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    key: str
    """Distinguishes parallel edges: a transition id, or `raise:<failure>`."""
    label: tuple[str, ...]
    kind: EdgeKind = "transition"
    highlighted: bool = False
    tooltip: str = ""

    @property
    def ident(self) -> EdgeId:
        return (self.source, self.target, self.key)


EdgeId = tuple[str, str, str]


@dataclass(frozen=True)
class Graph:
    """Nodes and edges in a fixed order (sorted ids), so every rendering is byte-stable."""

    name: str
    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    terminal_kinds: tuple[str, ...] = field(default=())
    """Every terminal the picture may colour, sorted: the colour of a kind is its index here."""
    direction: Literal["TB", "LR"] = "TB"
    """Layout: a state graph is shallow and very broad, so it reads better left to right."""

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def highlighted_edges(self) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.highlighted)


def _sorted(nodes: Iterable[Node], edges: Iterable[Edge]) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    return tuple(sorted(nodes, key=lambda n: n.id)), tuple(sorted(edges, key=lambda e: e.ident))


def guard_lines(t: Transition) -> tuple[str, ...]:
    """The guard, one conjunct per line (long guards stay readable in a picture)."""
    # A conjunct that binds more loosely than `and` keeps the parentheses `render` gives it.
    items = conjuncts(t.guard)
    parts = [f"({render(c)})" if len(items) > 1 and isinstance(c, Logic | Cond) else render(c) for c in items]
    if parts == ["true"]:
        return ()
    last = len(parts) - 1
    return tuple(("[" if i == 0 else "") + p + (" and" if i < last else "]") for i, p in enumerate(parts))


def _value_text(v: Value) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def op_line(t: Transition) -> str:
    args = ", ".join(f"{name}={render(e)}" for name, e in t.args)
    return f"{t.op}({args})" if t.op else "(internal)"


def _raise_edges(table: Table) -> list[Edge]:
    """One edge per (location, failure, target): the same failure from several transitions of a
    location lands in one place, and drawing it once per transition would only add clutter."""
    grouped: dict[EdgeId, list[str]] = {}
    for t in table.transitions:
        for failure, target in t.on_raise.items():
            grouped.setdefault((t.source, target, f"raise:{failure}"), []).append(t.id)
    return [
        Edge(
            src,
            dst,
            key,
            (f"raise {key.removeprefix('raise:')}",),
            "raise",
            tooltip="raised by " + ", ".join(sorted(tids)),
        )
        for (src, dst, key), tids in grouped.items()
    ]


def control_flow(table: Table) -> Graph:
    """Locations and terminals as nodes; each transition an edge labelled id, guard and operation;
    each way a host failure leaves a location a dashed `raise` edge."""
    nodes = [
        Node(loc, (loc,), "location", initial=loc == table.initial, tooltip=doc)
        for loc, doc in table.locations.items()
    ]
    nodes += [
        # A built-in terminal has no edge in the table; its label says how a run gets there.
        Node(
            term, (term, f"({doc})") if term in BUILTIN_TERMINALS else (term,), "terminal", term, tooltip=doc
        )
        for term, doc in table.terminals.items()
    ]
    edges = [
        Edge(t.source, t.target, t.id, (t.id, *guard_lines(t), op_line(t)), tooltip=t.doc)
        for t in table.transitions
    ]
    edges += _raise_edges(table)
    ns, es = _sorted(nodes, edges)
    return Graph(table.name, f"{table.name}: control flow", ns, es, tuple(sorted(table.terminals)))


def trace_edges(table: Table, trace: Trace) -> list[EdgeId]:
    """The control-flow edges a trace walked, in order (a raised failure takes its raise edge)."""
    out: list[EdgeId] = []
    steps = iter(trace.steps)
    for tid in trace.path:
        t = table.transition(tid)
        if t.op is None:
            out.append((t.source, t.target, t.id))
            continue
        step = next(steps, None)
        if step is None:  # the run ended inside this call (a contract violation)
            break
        failure = step.outcome.raise_
        if failure is not None:
            out.append((t.source, t.on_raise[failure], f"raise:{failure}"))
        else:
            out.append((t.source, t.target, t.id))
    return out


def highlight(graph: Graph, edges: Iterable[EdgeId], nodes: Iterable[str] = (), note: str = "") -> Graph:
    """The same graph with a path's edges, their end points and `nodes` marked; `note` is
    added to the title (what the highlighted path is)."""
    wanted = set(edges)
    known = {e.ident for e in graph.edges}
    wanted &= known
    touched = {s for s, _, _ in wanted} | {d for _, d, _ in wanted} | set(nodes)
    return replace(
        graph,
        title=f"{graph.title}\n{note}" if note else graph.title,
        nodes=tuple(replace(n, highlighted=n.id in touched) for n in graph.nodes),
        edges=tuple(replace(e, highlighted=e.ident in wanted) for e in graph.edges),
    )


# -- the reachable state graph (from the explorer) ---------------------------------


def state_id(exploration: Exploration, index: int) -> str:
    """A state's node id: zero-padded, so sorting the ids sorts the states by BFS index."""
    width = len(str(exploration.summary.states - 1))
    return f"s{index:0{width}d}"


def _state_label(table: Table, index: int, data: Mapping[str, Any]) -> tuple[str, ...]:
    counters = data["values"]
    line = ", ".join(f"{name}={counters[name]}" for name in table.counters)
    head = f"#{index} {data['location']}"
    if data.get("horizon"):
        head += " (horizon)"
    lines = [head, line] if line else [head]
    facts = [k if v is True else f"{k}={_value_text(v)}" for k, v in data["facts"].items() if v is not False]
    if facts:  # states that differ only in the host's last answer are told apart by it
        lines.append("facts: " + ", ".join(facts))
    broken = data.get("violations") or ()
    if broken:
        lines.append("breaks " + ", ".join(broken))
    return tuple(lines)


def state_graph(
    exploration: Exploration, keep: Iterable[int] | None = None, edge_labels: bool = False
) -> Graph:
    """The explorer's reachable graph (or the part of it in `keep`): one node per state,
    labelled with its location and counters, terminal states coloured by their terminal.
    Edges carry `transition: outcome` as a tooltip, and as a label with `edge_labels`
    (only readable for a few dozen states)."""
    table, g = exploration.table, exploration.graph
    chosen = set(g.nodes) if keep is None else set(keep) & set(g.nodes)
    nodes = []
    for i in chosen:
        data = g.nodes[i]
        terminal = data["location"] if data["terminal"] else None
        nodes.append(
            Node(
                state_id(exploration, i),
                _state_label(table, i, data),
                "terminal" if terminal else "location",
                terminal,
                initial=i == 0,
                tooltip=", ".join(f"{k}={_value_text(v)}" for k, v in data["values"].items()),
            )
        )
    edges = []
    for a, b, data in g.edges(data=True):
        if a in chosen and b in chosen:
            text = data["label"].split(" | ")
            label = tuple(text) if edge_labels else ()
            edges.append(
                Edge(
                    state_id(exploration, a),
                    state_id(exploration, b),
                    data["transition"],
                    label,
                    tooltip=" | ".join(text),
                )
            )
    params = ", ".join(f"{k}={v}" for k, v in exploration.params.items())
    title = f"{table.name}: reachable states ({params})"
    if keep is not None:
        title += f", {len(chosen)} of {g.number_of_nodes()} shown"
    ns, es = _sorted(nodes, edges)
    return Graph(table.name, title, ns, es, tuple(sorted(table.terminals)), "LR")


def path_nodes(exploration: Exploration, path: Iterable[PathStep]) -> list[int]:
    """The states a path from the initial state walks through, the initial state first."""
    g = exploration.graph
    current = 0
    out = [current]
    for step in path:
        want = (
            step.transition
            if step.outcome is None
            else f"{step.transition}: {describe_outcome(step.outcome)}"
        )
        nxt = next(
            (j for j in sorted(g.successors(current)) if want in g.edges[current, j]["label"].split(" | ")),
            None,
        )
        if nxt is None:
            raise RunError(f"{exploration.table.name}: the path leaves the explored graph at state {current}")
        current = nxt
        out.append(current)
    return out


def state_path_edges(exploration: Exploration, nodes: list[int]) -> list[EdgeId]:
    g = exploration.graph
    return [
        (state_id(exploration, a), state_id(exploration, b), g.edges[a, b]["transition"])
        for a, b in itertools.pairwise(nodes)
    ]


# -- how runs end, over every host behaviour -----------------------------------------------

HORIZON_EXIT = "horizon"
"""Not a terminal: runs cut off at the table's step horizon (an unbounded turn)."""


@dataclass(frozen=True)
class ExitShare:
    """How many host behaviours end at one terminal, and how likely that end is when a host
    picks each outcome of every call uniformly at random."""

    terminal: str
    paths: int
    probability: float


def exit_shares(exploration: Exploration) -> dict[str, ExitShare]:
    """Distinct host behaviours (sequences of outcomes from the initial state) by the terminal
    they end at, counted over the explorer's acyclic state graph.

    Terminal *states* are not the right unit here: one terminal state is the end of many
    behaviours, and a researcher asking "how often does this turn end in a forced finish"
    means behaviours. An edge that stands for several outcomes counts once per outcome.
    """
    g = exploration.graph
    if not nx.is_directed_acyclic_graph(g):
        raise RunError(
            f"{exploration.table.name}: the reachable graph has a cycle (a run may never end): "
            "behaviours can not be counted"
        )
    paths: dict[int, int] = {0: 1}
    chance: dict[int, Fraction] = {0: Fraction(1)}
    ends: dict[str, tuple[int, Fraction]] = {}
    for u in nx.topological_sort(g):
        n, p = paths.get(u, 0), chance.get(u, Fraction(0))
        out = [(v, len(data["label"].split(" | "))) for v, data in g.succ[u].items()]
        if not out:
            data = g.nodes[u]
            kind = data["location"] if data["terminal"] else HORIZON_EXIT if data["horizon"] else "stuck"
            before = ends.get(kind, (0, Fraction(0)))
            ends[kind] = (before[0] + n, before[1] + p)
            continue
        total = sum(k for _, k in out)
        for v, k in out:
            paths[v] = paths.get(v, 0) + n * k
            chance[v] = chance.get(v, Fraction(0)) + p * k / total
    order = [*exploration.table.terminals, HORIZON_EXIT, "stuck"]
    return {kind: ExitShare(kind, ends[kind][0], float(ends[kind][1])) for kind in order if kind in ends}
