"""Vector generation: few runs that together cover a table's cases, transitions and control edges.

The explorer (`turnbound.properties.explore.explorer`) gives the reachable graph at each
parameter assignment of the profile's default range. An *edge* is a step of the
control flow: a transition that calls the host, one outcome of that call, and the
transition (or terminal) that follows — `(transition, outcome, next)`. The concrete
graph distinguishes every counter value and so has thousands of edges per assignment;
the control edges are what an implementation can get wrong, and they are few enough
to cover with a few hundred runs.

Each edge also carries the *valuation* of the guards taken after the call: the truth of
each atom (a comparison, a bool variable) that reads a variable or a parameter in the guard
of the transition taken next and of each internal transition up to the next call. A
partial failure at `rounds == 0` and at `rounds > 0` take the same transition but are
different edges, so one vector can not stand for both: a defect in the second would be
masked by the first. Atoms that read only facts are left out, as the outcome in the edge
already decides them; so are the guards not taken (their atoms multiply the edges by
every combination of unrelated counters).

Every bundled case becomes a vector first. Then, for each control edge no vector covers
yet (assignments by increasing budgets, states in breadth-first order), one run is
added: the shortest path to the edge's state, the edge, the shortest way on to a
terminal. Each run covers every edge along it, so most edges need no run of their own.

The edges, their valuations and reading them off a finished run are in `control_edges`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
from turnbound.properties.conformance.control_edges import (
    EDGE_DEFINITION,
    Valuations,
    edge_key,
    given_clause,
    trace_edge_keys,
)
from turnbound.properties.conformance.vectors import (
    FORMAT,
    MANIFEST,
    Manifest,
    Vector,
    VectorCoverage,
    expected_of,
    vectors_dir,
)
from turnbound.properties.explore.explorer import PathStep, explore, replay
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import outcome_script, run
from turnbound.reference.jsonfile import read_json
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace, probe_line


@dataclass
class Generation:
    table: Table
    vectors: list[Vector] = field(default_factory=list)
    edges: dict[str, str] = field(default_factory=dict)
    """Every reachable control edge -> the first vector covering it ('' while uncovered)."""
    transitions: dict[str, str] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)
    assignments: int = 0

    def add(self, vid: str, description: str, params: dict[str, int], trace: Trace) -> None:
        script = Script(outcome_script(trace))
        vector = Vector(
            format=FORMAT,
            id=vid,
            profile=self.table.name,
            table_sha256=self.table.digest,
            description=description,
            params=dict(trace.params),
            script=script,
            expected=expected_of(trace, probe_line(self.table, trace)),
        )
        self.vectors.append(vector)
        for key in trace_edge_keys(self.table, trace):
            if not self.edges.get(key):
                self.edges[key] = vid
        for tid in trace.path:
            self.transitions.setdefault(tid, vid)


def generate(table: Table) -> tuple[list[Vector], Manifest]:
    """The profile's vectors and their manifest, the same bytes every time."""
    gen = Generation(table)
    for case in profile_cases(table):
        trace = _case_trace(table, case.params, case.script)
        gen.add(f"case-{case.name}", case.description or case.name, case.params, trace)
        gen.cases[case.name] = f"case-{case.name}"
    for params in _assignments(table):
        gen.assignments += 1
        _cover(gen, params)
    return gen.vectors, _manifest(gen)


def _case_trace(table: Table, params: dict[str, int], script: Script) -> Trace:
    return run(table, ScriptHost(script), params)


def _assignments(table: Table) -> Iterator[dict[str, int]]:
    names = [p.name for p in table.parameters]
    combos = itertools.product(*(range(p.range[0], p.range[1] + 1) for p in table.parameters))
    for combo in sorted(combos, key=lambda c: (sum(c), c)):
        yield dict(zip(names, combo, strict=True))


def _cover(gen: Generation, params: dict[str, int]) -> None:
    table = gen.table
    exploration = explore(table, params, all_states=True)  # its graph: every state
    g = exploration.graph
    edges = _Edges(g, Machine(table, params, forget=True))  # the explorer's states
    to_end = _paths_to_terminals(g)
    found: list[tuple[str, int, PathStep, int]] = []
    for i in g.nodes:
        for key, step, j in edges.of(i):
            if key not in gen.edges:
                gen.edges[key] = ""
                found.append((key, i, step, j))
    for key, i, step, j in found:
        if gen.edges[key] or j not in to_end:
            continue
        path = [*exploration.path_to(i), step, *_completion(gen, edges, to_end, j)]
        trace = replay(table, exploration.params, path).trace
        if not table.is_terminal(trace.terminal):
            continue
        digest = hashlib.sha256(
            json.dumps([trace.params, outcome_script(trace)], default=_json, sort_keys=True).encode()
        ).hexdigest()
        gen.add(f"{step.transition}-{digest[:10]}", f"covers {key}", params, trace)


def _json(value: object) -> object:
    if isinstance(value, Outcome):
        return value.to_json()
    raise TypeError(type(value).__name__)


class _Edges:
    """The control edges leaving each node of one exploration's graph."""

    def __init__(self, g: nx.DiGraph, machine: Machine) -> None:
        self.g = g
        self.machine = machine
        self._index: dict[int, int] = {}  # id of an outcome object on the graph -> its index in the domain
        self._prefix: dict[tuple[str, int], str] = {}
        self._after: dict[int, str] = {}
        self.valuations = Valuations(machine.table)

    def of(self, i: int) -> Iterator[tuple[str, PathStep, int]]:
        """Each host outcome at node i: (control edge, the step, target node). Outcomes that lead to
        the same node share one graph edge; they are stepped on the machine to find their target."""
        g, machine = self.g, self.machine
        out = list(g.out_edges(i, data=True))
        if not out or out[0][2]["op"] is None:
            return
        tid, op = out[0][2]["transition"], out[0][2]["op"]
        outcomes = machine.outcomes(op)
        target = {self._k(outcomes, data["outcome"]): j for _, j, data in out}
        if len(target) < len(outcomes):
            node = g.nodes[i]
            state = State(
                node["location"], tuple(node["values"].values()), tuple(sorted(node["facts"].items()))
            )
            t = machine.table.transition(tid)
            nodes = {_state_key(g.nodes[j]): j for _, j, _ in out}
            for k, outcome in enumerate(outcomes):
                if k not in target:
                    after = machine.take_outcome(state, t, outcome)
                    target[k] = nodes[(after.location, after.values, after.facts)]
        for k, outcome in enumerate(outcomes):
            j = target[k]
            if not g.nodes[j]["horizon"]:  # a run cut off at the step horizon has no next step to cover
                yield self._key(tid, k, outcome, j), PathStep(tid, op, outcome), j

    def _k(self, outcomes: tuple[Outcome, ...], outcome: Outcome) -> int:
        k = self._index.get(id(outcome))
        if k is None:
            k = self._index[id(outcome)] = outcomes.index(outcome)
        return k

    def _key(self, tid: str, k: int, outcome: Outcome, j: int) -> str:
        prefix = self._prefix.get((tid, k))
        if prefix is None:
            prefix = self._prefix[(tid, k)] = edge_key(tid, outcome, "")
        after = self._after.get(j)
        if after is None:
            after = self._after[j] = _next(self.g, j) + given_clause(self._chain(j))
        return prefix + after

    def _chain(self, j: int) -> list[str]:
        """The valuation of the guard taken at node j and at each node internal transitions pass
        through before the next call."""
        g = self.g
        parts: list[str] = []
        seen: set[int] = set()
        node = j
        while node not in seen:
            seen.add(node)
            out = list(g.out_edges(node, data=True))
            if not out:
                break
            data = g.nodes[node]
            facts = tuple(sorted(data["facts"].items()))
            state = State(data["location"], tuple(data["values"].values()), facts)
            parts.append(self.valuations.at(out[0][2]["transition"], self.machine.env(state)))
            if out[0][2]["op"] is not None:
                break
            node = out[0][1]
        return parts


def _state_key(node: dict[str, object]) -> tuple[object, ...]:
    values = node["values"]
    facts = node["facts"]
    assert isinstance(values, dict) and isinstance(facts, dict)
    return (node["location"], tuple(values.values()), tuple(sorted(facts.items())))


def _next(g: nx.DiGraph, j: int) -> str:
    node = g.nodes[j]
    if node["terminal"]:
        return f"end:{node['location']}"
    for _, _, data in g.out_edges(j, data=True):
        return str(data["transition"])
    return "stuck"


def _paths_to_terminals(g: nx.DiGraph) -> dict[int, list[int]]:
    """For each node from which a terminal is reachable, a shortest path to one (node list)."""
    terminals = [n for n, d in g.nodes(data=True) if d["terminal"]]
    if not terminals:
        return {}
    _, paths = nx.multi_source_dijkstra(g.reverse(copy=False), terminals)
    return {n: list(reversed(p)) for n, p in paths.items()}


def _completion(gen: Generation, edges: _Edges, to_end: dict[int, list[int]], j: int) -> list[PathStep]:
    """A way from node j to a terminal that takes an uncovered edge wherever one still leads to a
    terminal (nearest terminal first), so that one run covers as many edges as it can."""
    g = edges.g
    steps: list[PathStep] = []
    seen = {j}
    node = j
    while not g.nodes[node]["terminal"]:
        out = list(g.out_edges(node, data=True))
        if out[0][2]["op"] is None:
            (_, nxt, data), *_ = out
            steps.append(PathStep(data["transition"]))
        else:
            options = [
                (bool(gen.edges.get(key)), len(to_end[t]), k, step, t)
                for k, (key, step, t) in enumerate(edges.of(node))
                if t in to_end and t not in seen
            ]
            if not options:
                return steps + _steps(g, to_end[node])
            *_, step, nxt = min(options, key=lambda o: o[:3])
            steps.append(step)
        seen.add(nxt)
        node = nxt
    return steps


def _steps(g: nx.DiGraph, nodes: list[int]) -> list[PathStep]:
    steps = []
    for u, v in itertools.pairwise(nodes):
        data = g.edges[u, v]
        steps.append(PathStep(data["transition"], data["op"], data["outcome"]))
    return steps


def _manifest(gen: Generation) -> Manifest:
    table = gen.table

    def coverage(items: dict[str, str]) -> VectorCoverage:
        covered = {k: v for k, v in sorted(items.items()) if v}
        return VectorCoverage(items=covered, uncovered=sorted(k for k, v in items.items() if not v))

    transitions = {t.id: gen.transitions.get(t.id, "") for t in table.transitions}
    return Manifest(
        format=FORMAT,
        profile=table.name,
        table_sha256=table.digest,
        parameter_range={p.name: [p.range[0], p.range[1]] for p in table.parameters},
        parameter_assignments=gen.assignments,
        edge_definition=EDGE_DEFINITION,
        vectors=[v.id for v in gen.vectors],
        cases=coverage(gen.cases),
        transitions=coverage(transitions),
        edges=coverage(gen.edges),
    )


def json_text(model: Vector | Manifest) -> str:
    """A vector's or the manifest's file, byte for byte."""
    return json.dumps(model.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2) + "\n"


_VECTOR_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*-[A-Za-z0-9_-]+\.json")
"""A vector file: `case-NAME.json`, or `TRANSITION-DIGEST.json` for a run that covers an edge."""


def written_before(table: Table, out: Path) -> set[str]:
    """The vector files the previous generation for this profile wrote, by its manifest.

    Only these may be removed: a file the manifest does not list, or a directory whose
    manifest is another profile's (or is missing or unreadable), is someone else's.
    """
    path = out / MANIFEST
    if not path.is_file():
        return set()
    try:
        data = read_json(path, "manifest")
    except DefinitionError:
        return set()
    if not isinstance(data, dict) or data.get("profile") != table.name:
        return set()
    ids = data.get("vectors")
    names = {f"{i}.json" for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()
    return {n for n in names if _VECTOR_FILE.fullmatch(n)}


def write_vectors(table: Table, directory: Path | None = None) -> tuple[Path, list[Vector], Manifest]:
    """Generate and write `<dir>/<id>.json` and `manifest.json`, removing the vectors the previous
    generation wrote that are no longer generated (and no other file)."""
    out = directory if directory is not None else vectors_dir(table)
    vectors, manifest = generate(table)
    out.mkdir(parents=True, exist_ok=True)
    keep = {f"{v.id}.json" for v in vectors} | {MANIFEST}
    for name in sorted(written_before(table, out) - keep):
        (out / name).unlink(missing_ok=True)
    for v in vectors:
        (out / f"{v.id}.json").write_text(json_text(v), encoding="utf-8")
    (out / MANIFEST).write_text(json_text(manifest), encoding="utf-8")
    return out, vectors, manifest
