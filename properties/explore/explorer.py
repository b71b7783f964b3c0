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

Claims with `expect = "violated"` must be refuted; a verdict that differs from the
claim's `expect` makes the exploration fail (`Summary.ok`). Termination has no
`expect` in the table language: it is expected to hold, except that a table which
declares `step_horizon` says its turn may be unbounded, so either verdict is accepted.

Graph (`Exploration.graph`, a `networkx.DiGraph`; node keys are BFS indices, 0 is the
initial state, indices grow with distance from it):

- node attributes: `location` (str), `terminal` (bool), `values` (dict variable ->
  value), `facts` (dict fact -> value, the last host outcome readable here),
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
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Literal

import networkx as nx
from turnbound.reference.arguments import require_count, require_params, require_table
from turnbound.reference.cases import Case
from turnbound.reference.errors import LimitReached, Livelock, RunError, ScriptExhausted
from turnbound.reference.expr import Compare, Expr, refs, render
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import outcome_script, run
from turnbound.reference.judge import Judge
from turnbound.reference.machine import Machine, State, check_params
from turnbound.reference.monitors import Monitors, MonitorState, check_trace
from turnbound.reference.outcomes import Outcome, outcome_text
from turnbound.reference.profiles import profile_cases
from turnbound.reference.stepping import MAX_INTERNAL, step_limit
from turnbound.reference.table import ANY_OP, Claim, Table, TraceProperty, Transition
from turnbound.reference.trace import HORIZON, Trace, probe_line
from turnbound.reference.types import Value

Verdict = Literal["holds", "violated", "unknown"]
Expect = Literal["holds", "violated", "either"]
ClaimKind = Literal["invariant", "lemma", "bound", "trace_property", "termination", "determinism"]

TERMINATES = "terminates"
"""The implicit claim that every run ends at a terminal."""
DETERMINISTIC = "deterministic"
"""The implicit claim that every reachable state enables exactly one transition."""

DEFAULT_MAX_STATES = 500_000
"""Beyond this the graph is presumed infinite (a counter growing without a bound)."""

Node = tuple[State, MonitorState]


# -- results ------------------------------------------------------------------


@dataclass(frozen=True)
class PathStep:
    """One edge of a path: a transition, with the host outcome if it called the host."""

    transition: str
    op: str | None = None
    outcome: Outcome | None = None


@dataclass(frozen=True)
class Witness:
    """A path from the initial state, as a host script, replayed on the interpreter."""

    path: tuple[PathStep, ...]
    script: Mapping[str, list[Outcome]]
    trace: Trace
    line: str
    loop_start: int | None = None
    """For a lasso: the index in `path` where the repeating part begins."""

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "path": [s.transition for s in self.path],
            "loop_start": self.loop_start,
            "script": {op: [o.to_json() for o in q] for op, q in self.script.items()},
            "trace": self.trace.to_json(),
        }


@dataclass(frozen=True)
class Violation:
    claim: str
    kind: ClaimKind
    message: str
    witness: Witness
    replay_problem: str | None = None
    """None when the interpreter reproduced the violation from the witness's script."""
    exits: tuple[Exit, ...] = ()
    """For a refuted bound, single explorations only: one witness per distinct probe line."""

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "kind": self.kind,
            "message": self.message,
            "replayed": self.replay_problem is None,
            "replay_problem": self.replay_problem,
            **self.witness.to_json(),
            "exits": [e.to_json() for e in self.exits],
        }


@dataclass(frozen=True)
class Exit:
    """A distinct way a claim is broken at a terminal, with its shortest witness."""

    line: str
    case: str | None
    """The bundled case whose expected probe line (and parameters) this is, if any."""
    witness: Witness
    replay_problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "case": self.case,
            "replayed": self.replay_problem is None,
            "trace": self.witness.trace.to_json(),
        }


@dataclass(frozen=True)
class ClaimResult:
    name: str
    kind: ClaimKind
    text: str
    expect: Expect
    verdict: Verdict
    tight: bool | None = None
    """Bounds `lhs <= rhs`: whether some terminal reaches lhs == rhs."""
    lhs_max: int | None = None
    """Bounds `lhs <= rhs`: the largest lhs over terminal states."""
    rhs: int | None = None
    """Bounds `lhs <= rhs` whose right side reads parameters only: its value."""

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.expect or (self.expect == "either" and self.verdict != "unknown")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "expr": self.text,
            "expect": self.expect,
            "verdict": self.verdict,
            "as_expected": self.as_expected,
            "tight": self.tight,
            "lhs_max": self.lhs_max,
            "rhs": self.rhs,
        }


@dataclass(frozen=True)
class Summary:
    """What an exploration found, without its graph: small, picklable, JSON-ready."""

    profile: str
    params: dict[str, int]
    states: int
    edges: int
    terminals: dict[str, int]
    max: dict[str, int]
    claims: tuple[ClaimResult, ...]
    violations: tuple[Violation, ...]
    covered: dict[str, int]
    """Transition id -> edges labelled with it (every internal transition has its own edge)."""
    uncovered: tuple[str, ...]
    complete: bool
    """False when a limit stopped the search: a claim not refuted is then `unknown` (not decided)."""
    seconds: float = field(default=0.0, compare=False)
    limit: str | None = None
    """The limit that stopped the search, by name (`max_states=500000`, `INT_LIMIT`)."""
    terminal_max: dict[str, dict[str, int]] = field(default_factory=dict, compare=False)
    """Per terminal, each counter's largest value there: which exits the longest runs take."""

    @property
    def ok(self) -> bool:
        return (
            self.complete
            and all(c.as_expected for c in self.claims)
            and all(v.replay_problem is None for v in self.violations)
            and all(e.replay_problem is None for v in self.violations for e in v.exits)
        )

    def claim(self, name: str) -> ClaimResult:
        for c in self.claims:
            if c.name == name:
                return c
        raise KeyError(name)

    def violation(self, name: str) -> Violation | None:
        return next((v for v in self.violations if v.claim == name), None)

    def to_json(self) -> dict[str, Any]:
        """Byte-stable: no timings."""
        return {
            "params": dict(self.params),
            "states": self.states,
            "edges": self.edges,
            "terminals": dict(self.terminals),
            "max": dict(self.max),
            "claims": [c.to_json() for c in self.claims],
            "violations": [v.to_json() for v in self.violations],
            "transitions_covered": dict(self.covered),
            "transitions_uncovered": list(self.uncovered),
            "complete": self.complete,
            **({"limit": self.limit} if self.limit is not None else {}),
            "ok": self.ok,
        }


# -- the claims, compiled once per exploration --------------------------------


@dataclass(frozen=True)
class _StateClaim:
    claim: Claim
    check: Compiled
    lhs: Compiled | None
    rhs: Compiled | None
    rhs_params_only: bool


def bound_sides(expr: Expr) -> tuple[Expr, Expr] | None:
    """`lhs <= rhs` (or `rhs >= lhs`) as its two sides; other shapes have no tightness."""
    if isinstance(expr, Compare) and expr.op == "<=":
        return expr.left, expr.right
    if isinstance(expr, Compare) and expr.op == ">=":
        return expr.right, expr.left
    if isinstance(expr, Compare) and expr.op == "==":  # an exact count: tight where it is met
        return expr.left, expr.right
    return None


def _state_claim(c: Claim, check: Compiled) -> _StateClaim:
    """The judge's compiled claim, with the sides of a bound for its tightness."""
    sides = bound_sides(c.expr)
    if sides is None:
        return _StateClaim(c, check, None, None, False)
    lhs, rhs = sides
    params_only = all(r.kind == "param" for r in refs(rhs))
    return _StateClaim(c, check, compile_expr(lhs), compile_expr(rhs), params_only)


def describe_property(p: TraceProperty) -> str:
    """A trace property as one line of text."""
    if p.kind == "at_most":
        return f"{p.op} at most {p.limit}x per run"
    assert p.after is not None
    what = p.after.op or "a call"
    if p.after.raise_ is not None:
        what += f" raising {p.after.raise_}"
    when = render(p.after.when)
    if when != "true":
        what += f" with {when}"
    if p.forbid == ANY_OP:
        return f"after {what}: no {'next' if p.within == 'next' else 'further'} call"
    return f"after {what}: no {p.forbid} {'next' if p.within == 'next' else 'later'}"


def _fmt(value: Value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


describe_outcome = outcome_text
"""The one rendering of an outcome (`turnbound.reference.outcomes.outcome_text`)."""


# -- the search ----------------------------------------------------------------


def _pure_calls(table: Table) -> frozenset[str]:
    """Host transitions whose updates read only variables, parameters and their own op's facts."""
    out = set()
    for t in table.transitions:
        if t.op is None:
            continue
        op = table.operations[t.op]
        own = {f.name for f in op.facts} | {f.name for err in op.raises for f in table.failures[err].fields}
        made = [*t.updates, *(u for ups in t.raise_updates.values() for u in ups)]
        names = {r.name for _, e in made for r in refs(e) if r.kind not in ("param", "var")}
        if names <= own:
            out.add(t.id)
    return frozenset(out)


def _select_keys(machine: Machine) -> dict[str, tuple[Callable[[tuple[Value, ...]], object], bool]]:
    """Per location, what its guards read: the variables' slots (as one picker) and whether
    any fact. States that agree on those select the same transition (the loader's scopes
    guarantee nothing else is read), so the search selects once per such class."""
    slots = {name: i for i, name in enumerate(machine.var_names)}
    out: dict[str, tuple[Callable[[tuple[Value, ...]], object], bool]] = {}
    for location in machine.table.locations:
        names = {r for t in machine.table.outgoing.get(location, ()) for r in refs(t.guard)}
        variables = sorted(slots[r.name] for r in names if r.kind == "var")
        pick: Callable[[tuple[Value, ...]], object] = itemgetter(*variables) if variables else (lambda v: ())
        out[location] = (pick, any(r.kind not in ("var", "param") for r in names))
    return out


class _Search:
    """Breadth-first search with edges stored compactly: node i's edges are contiguous."""

    def __init__(self, machine: Machine, monitors: Monitors, max_states: int) -> None:
        self.machine = machine
        self.monitors = monitors
        self.max_states = max_states
        self.horizon = machine.table.step_horizon
        self.max_calls = step_limit(machine.table)
        """The one run's horizon: past it a path without a terminal is a limit (the table's own
        `step_horizon` makes such a path a leaf instead, the turn it declares unbounded)."""
        self.internal: list[int] = []
        """Internal transitions since the last host call on the node's shortest path."""
        self.nodes: list[Node] = []
        self.index: dict[Node, int] = {}
        self.parent: list[int] = []
        self.parent_label: list[int] = []
        self.calls: list[int] = []
        self.depth: list[int] = []
        self.first_edge: list[int] = []
        self.dst: list[int] = []
        self.label: list[int] = []
        self.labels: list[tuple[Transition, int]] = []  # (transition, outcome index or -1)
        self._label_ids: dict[tuple[str, int], int] = {}
        self.alternatives: dict[int, list[int]] = {}  # edge -> further labels leading to the same node
        self.coverage: dict[str, int] = {}
        self.horizon_leaves: list[int] = []
        self.run_errors: dict[int, RunError] = {}
        self.complete = True
        self.limit: str | None = None
        self._pure_calls = _pure_calls(machine.table)
        self._call_memo: dict[tuple[str, tuple[Value, ...]], tuple[State, ...]] = {}
        self._monitor_memo: dict[
            tuple[MonitorState, str, tuple[tuple[str, Value], ...], int], MonitorState
        ] = {}
        self._label_rows: dict[str, list[int]] = {}
        self._select_keys = _select_keys(machine)
        self._select_memo: dict[tuple[object, ...], Transition] = {}

    def _label_id(self, t: Transition, outcome: int) -> int:
        key = (t.id, outcome)
        lid = self._label_ids.get(key)
        if lid is None:
            lid = len(self.labels)
            self._label_ids[key] = lid
            self.labels.append((t, outcome))
        return lid

    def _add(self, node: Node, parent: int, label: int, calls: int, depth: int) -> int:
        """A node not seen before: its index, with its shortest path's last step."""
        i = len(self.nodes)
        self.index[node] = i
        self.nodes.append(node)
        self.parent.append(parent)
        self.parent_label.append(label)
        self.calls.append(calls)
        self.depth.append(depth)
        self.internal.append(self.internal[parent] + 1 if calls == self.calls[parent] and parent >= 0 else 0)
        return i

    def _monitor_step(
        self,
        m: MonitorState,
        op: str,
        args: dict[str, Value],
        args_key: tuple[tuple[str, Value], ...],
        k: int,
    ) -> MonitorState:
        key = (m, op, args_key, k)
        out = self._monitor_memo.get(key)
        if out is None:
            out = self.monitors.step(m, op, args, self.machine.outcomes(op)[k])
            self._monitor_memo[key] = out
        return out

    def run(self) -> None:
        machine = self.machine
        terminals = machine.table.terminals
        self._add((machine.initial(), self.monitors.initial()), -1, -1, 0, 0)
        queue_pos = 0
        while queue_pos < len(self.nodes):
            i = queue_pos
            queue_pos += 1
            self.first_edge.append(len(self.dst))
            state, mon = self.nodes[i]
            if state.location in terminals:
                continue
            if self.horizon is not None and self.calls[i] >= self.horizon:
                self.horizon_leaves.append(i)
                continue
            if len(self.nodes) >= self.max_states:
                self.complete, self.limit = False, f"max_states={self.max_states}"
                continue
            if self.calls[i] >= self.max_calls:
                self.complete, self.limit = False, f"DEFAULT_MAX_STEPS={self.max_calls} host calls"
                continue
            if self.internal[i] > MAX_INTERNAL:
                raise Livelock(state.location, self.internal[i], [self.labels[self.parent_label[i]][0].id])
            try:
                self._expand(i, state, mon)
            except LimitReached as exc:
                self.complete, self.limit = False, self.limit or exc.limit
                continue
        self.first_edge.append(len(self.dst))
        self._count_coverage()

    def _count_coverage(self) -> None:
        """Edges per transition, an outcome that joins another's edge included."""
        per_label = Counter(self.label)
        for alts in self.alternatives.values():
            per_label.update(alts)
        for lid in sorted(per_label):
            tid = self.labels[lid][0].id
            self.coverage[tid] = self.coverage.get(tid, 0) + per_label[lid]

    def _label_row(self, t: Transition) -> list[int]:
        row = self._label_rows.get(t.id)
        if row is None:
            n = len(self.machine.outcomes(t.op)) if t.op is not None else 1
            row = self._label_rows[t.id] = [-1] * n
        return row

    def _expand(self, i: int, state: State, mon: MonitorState) -> None:
        """Add node i's successors: the machine's one step, once per outcome of a host call."""
        machine = self.machine
        location, values, facts = state
        pick, reads_facts = self._select_keys[location]
        key = (location, pick(values), facts if reads_facts else None)
        t = self._select_memo.get(key)
        if t is None:
            try:
                t = self._select_memo[key] = machine.select(state)
            except LimitReached:
                raise
            except RunError as exc:
                self.run_errors[i] = exc
                return
        calls, depth = self.calls[i], self.depth[i] + 1
        row = self._label_rows.get(t.id) or self._label_row(t)
        index, dst, label = self.index, self.dst, self.label
        if t.op is None:
            lid = row[0] if row[0] >= 0 else self._new_label(row, t, 0, -1)
            node = (machine.take_internal(state, t), mon)
            j = index.get(node)
            if j is None:
                j = self._add(node, i, lid, calls, depth)
            dst.append(j)
            label.append(lid)
            return
        op = t.op
        args = machine.args(state, t) if mon else {}
        args_key = tuple(args.items())
        targets: dict[int, int] = {}
        for k, after in enumerate(self._after_call(state, t)):
            lid = row[k] if row[k] >= 0 else self._new_label(row, t, k, k)
            node = (after, self._monitor_step(mon, op, args, args_key, k) if mon else mon)
            j = index.get(node)
            if j is None:
                j = self._add(node, i, lid, calls + 1, depth)
            elif j in targets:
                self.alternatives.setdefault(targets[j], []).append(lid)
                continue
            targets[j] = len(dst)
            dst.append(j)
            label.append(lid)

    def _new_label(self, row: list[int], t: Transition, slot: int, outcome: int) -> int:
        row[slot] = lid = self._label_id(t, outcome)
        return lid

    def _after_call(self, state: State, t: Transition) -> tuple[State, ...]:
        """The state after each outcome of `t`'s host call.

        A host transition's updates read the variables and the call's own facts, never
        the facts of the call before (the loader's scope rule), so states that differ
        only in those earlier facts share one computation.
        """
        assert t.op is not None
        key = (t.id, state.values) if t.id in self._pure_calls else None
        found = self._call_memo.get(key) if key is not None else None
        if found is None:
            found = tuple(self.machine.take_outcome(state, t, o) for o in self.machine.outcomes(t.op))
            if key is not None:
                self._call_memo[key] = found
        return found

    def successors(self, i: int) -> list[int]:
        return self.dst[self.first_edge[i] : self.first_edge[i + 1]]

    def step_of(self, lid: int) -> PathStep:
        t, k = self.labels[lid]
        if k < 0:
            return PathStep(t.id)
        assert t.op is not None
        return PathStep(t.id, t.op, self.machine.outcomes(t.op)[k])

    def path_to(self, i: int) -> list[PathStep]:
        steps: list[PathStep] = []
        while self.parent[i] >= 0:
            steps.append(self.step_of(self.parent_label[i]))
            i = self.parent[i]
        steps.reverse()
        return steps

    def edge_label(self, src: int, dst: int) -> int:
        for e in range(self.first_edge[src], self.first_edge[src + 1]):
            if self.dst[e] == dst:
                return self.label[e]
        raise KeyError((src, dst))

    def cyclic_nodes(self) -> list[int]:
        """Nodes left by Kahn's algorithm: on a cycle or downstream of one (empty: acyclic)."""
        n = len(self.nodes)
        indegree = [0] * n
        for j in self.dst:
            indegree[j] += 1
        ready = [i for i in range(n) if indegree[i] == 0]
        removed = 0
        while ready:
            i = ready.pop()
            removed += 1
            for j in self.successors(i):
                indegree[j] -= 1
                if indegree[j] == 0:
                    ready.append(j)
        if removed == n:
            return []
        return [i for i in range(n) if indegree[i] > 0]

    def lasso(self, candidates: list[int]) -> tuple[int, list[int]]:
        """The cycle node nearest the initial state, and the shortest loop back to it."""
        sub = nx.DiGraph()
        keep = set(candidates)
        for i in candidates:
            sub.add_node(i)
            sub.add_edges_from((i, j) for j in self.successors(i) if j in keep)
        on_cycle = set()
        for comp in nx.strongly_connected_components(sub):
            if len(comp) > 1 or any(sub.has_edge(i, i) for i in comp):
                on_cycle.update(comp)
        start = min(on_cycle)
        if sub.has_edge(start, start):
            return start, [start, start]
        best: list[int] | None = None
        for j in sorted(sub.successors(start)):
            if j == start or j not in on_cycle:
                continue
            try:
                back = nx.shortest_path(sub, j, start)
            except nx.NetworkXNoPath:
                continue
            if best is None or len(back) + 1 < len(best):
                best = [start, *back]
        assert best is not None
        return start, best


# -- replaying a path on the interpreter ---------------------------------------


class _ReplayMachine(Machine):
    """The interpreter's machine, recording each state it enters and ending the run after
    `stop` transitions, so a witness that ends mid-run replays to exactly its last state."""

    def __init__(self, table: Table, params: Mapping[str, int], stop: int) -> None:
        super().__init__(table, params)
        self.stop = stop
        self.visited: list[State] = []

    @classmethod
    def like(cls, machine: Machine, stop: int) -> _ReplayMachine:
        """A replay machine sharing `machine`'s compiled table (compiling is the costly part)."""
        clone = cls.__new__(cls)
        clone.__dict__.update(machine.__dict__)
        clone.stop = stop
        clone.visited = []
        return clone

    def _enter(self, state: State) -> State:
        self.visited.append(state)
        return state

    def initial(self) -> State:
        return self._enter(super().initial())

    def take_internal(self, state: State, t: Transition) -> State:
        return self._enter(super().take_internal(state, t))

    def take_outcome(self, state: State, t: Transition, outcome: Outcome) -> State:
        return self._enter(super().take_outcome(state, t, outcome))

    def contract_state(self, state: State) -> State:
        return self._enter(super().contract_state(state))

    def is_terminal(self, state: State) -> bool:
        return super().is_terminal(state) or len(self.visited) > self.stop


@dataclass(frozen=True)
class Replay:
    """What the interpreter did with a path's host script."""

    script: dict[str, list[Outcome]]
    trace: Trace
    visited: tuple[State, ...]
    """Every state the interpreter entered, the initial one first."""


def path_script(path: Iterable[PathStep]) -> dict[str, list[Outcome]]:
    """The host script of a path: each operation's outcomes in call order."""
    script: dict[str, list[Outcome]] = {}
    for step in path:
        if step.op is not None and step.outcome is not None:
            script.setdefault(step.op, []).append(step.outcome)
    return script


def replay(table: Table | Machine, params: Mapping[str, int] | None, path: Iterable[PathStep]) -> Replay:
    """Run the interpreter on the path's host script, stopping where the path ends.

    The trace of a path that ends before a terminal has terminal `horizon` (cut off).
    """
    steps = list(path)
    script = path_script(steps)
    if isinstance(table, Machine):
        machine = _ReplayMachine.like(table, len(steps))
    else:
        machine = _ReplayMachine(table, params or {}, len(steps))
    trace = run(machine, ScriptHost(Script.model_validate(script)))
    if not machine.table.is_terminal(trace.terminal) and trace.terminal != HORIZON:
        trace = trace.model_copy(update={"terminal": HORIZON})
    return Replay(script, trace, tuple(machine.visited))


def _run_error(machine: Machine, path: list[PathStep]) -> RunError | None:
    """The error the interpreter raises one step after the path (a stuck or nondeterministic state)."""
    replaying = _ReplayMachine.like(machine, len(path) + 1)
    try:
        run(replaying, ScriptHost(Script.model_validate(path_script(path))))
    except ScriptExhausted:
        return None
    except RunError as exc:
        return exc
    return None


# -- the exploration -------------------------------------------------------------


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
        """The reachable graph (attributes in the module docstring), built on first use."""
        if self._graph is None:
            self._graph = _to_graph(self._search, self.summary, self._broken)
        return self._graph

    def path_to(self, node: int) -> list[PathStep]:
        """The shortest path from the initial state to a node of `graph`."""
        return self._search.path_to(node)

    def steps(self, nodes: Iterable[int]) -> list[PathStep]:
        """The edges along a walk through `graph` (e.g. `nx.shortest_path(graph, 0, n)`).

        A walk that starts at node 0 replays with `replay(table, params, steps)`.
        """
        walk = list(nodes)
        out = []
        for a, b in itertools.pairwise(walk):
            try:
                out.append(self._search.step_of(self._search.edge_label(a, b)))
            except (KeyError, IndexError):
                raise ValueError(f"no edge from node {a} to node {b}") from None
        return out

    def witness(self, node: int) -> Witness:
        """The shortest path to a node, as a host script replayed on the interpreter."""
        path = self.path_to(node)
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
            w = self.witness(i)
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
        t, k = search.labels[search.parent_label[i]]
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
) -> Exploration:
    """Search every reachable state at these parameter values (defaults for the rest).

    `exits=True` also lists, for each refuted bound, one witness per distinct probe line.
    """
    require_table(table, "explore")
    require_params(params, "explore")
    require_count(max_states, "explore", "max_states")
    started = time.perf_counter()
    machine = Machine(table, params)
    monitors = Monitors(table)
    search = _Search(machine, monitors, max_states)
    search.run()
    checker = _Checker(table, machine, monitors, search)
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


class _Checker:
    """Evaluates every claim over a finished search and builds the replayed witnesses."""

    def __init__(self, table: Table, machine: Machine, monitors: Monitors, search: _Search) -> None:
        self.table = table
        self.machine = machine
        self.monitors = monitors
        self.search = search
        self.judge = Judge(table)
        self.state_claims = [_state_claim(c, fn) for c, fn in self.judge.invariants]
        self.bounds = [_state_claim(c, fn) for c, fn in self.judge.bounds]
        self.first: dict[str, int] = {}
        self.bound_nodes: dict[str, list[int]] = {b.claim.name: [] for b in self.bounds}
        self.terminals: dict[str, int] = {}
        self.terminal_max: dict[str, dict[str, int]] = {}
        self.max: dict[str, int] = {}
        self.lhs_max: dict[str, int] = {}
        self.tight: dict[str, bool] = {b.claim.name: False for b in self.bounds}
        self.broken: dict[int, tuple[str, ...]] = {}

    def check(self) -> None:
        search, machine = self.search, self.machine
        env_memo: dict[tuple[Value, ...], dict[str, Value]] = {}
        inv_memo: dict[tuple[Value, ...], tuple[str, ...]] = {}
        mon_memo: dict[MonitorState, tuple[str, ...]] = {}
        counters = [(n, machine.var_names.index(n)) for n in self.table.counters]
        for i, (state, mon) in enumerate(search.nodes):
            env = env_memo.get(state.values)
            if env is None:
                env = dict(machine.params)
                env.update(zip(machine.var_names, state.values, strict=True))
                env_memo[state.values] = env
            broken = inv_memo.get(state.values)
            if broken is None:
                broken = tuple(c.claim.name for c in self.state_claims if not c.check(env))
                inv_memo[state.values] = broken
            if mon:
                bad = mon_memo.get(mon)
                if bad is None:
                    bad = tuple(p.name for p in self.judge.broken_properties(mon))
                    mon_memo[mon] = bad
                broken += bad
            if self.judge.judges_bounds(state.location):
                broken += self._terminal(i, state, env, counters)
            if broken:
                self.broken[i] = broken
                for name in broken:
                    self.first.setdefault(name, i)

    def _terminal(
        self, i: int, state: State, env: Mapping[str, Value], counters: list[tuple[str, int]]
    ) -> tuple[str, ...]:
        """Count the terminal, raise the counters' maxima, and return the bounds it breaks."""
        self.terminals[state.location] = self.terminals.get(state.location, 0) + 1
        at = self.terminal_max.setdefault(state.location, {})
        for name, k in counters:
            v = int(state.values[k])
            if name not in self.max or v > self.max[name]:
                self.max[name] = v
            if name not in at or v > at[name]:
                at[name] = v
        broken = []
        for b in self.bounds:
            name = b.claim.name
            if not b.claim.judged_at(state.location):
                continue
            if not b.check(env):
                broken.append(name)
                self.bound_nodes[name].append(i)
            if b.lhs is not None and b.rhs is not None:
                lhs, rhs = int(b.lhs(env)), int(b.rhs(env))
                if name not in self.lhs_max or lhs > self.lhs_max[name]:
                    self.lhs_max[name] = lhs
                if lhs == rhs:
                    self.tight[name] = True
        return tuple(broken)

    # -- verdicts ------------------------------------------------------------

    def summary(self, seconds: float) -> Summary:
        table, search = self.table, self.search
        violations: list[Violation] = []
        claims: list[ClaimResult] = []
        for c in (*self.state_claims, *self.bounds):
            claim = c.claim
            kind: ClaimKind = claim.kind
            node = self.first.get(claim.name)
            claims.append(self._claim_result(c, node))
            if node is not None:
                violations.append(self._state_violation(claim.name, kind, node, c))
        for p in table.trace_properties:
            node = self.first.get(p.name)
            verdict: Verdict = self._undecided() if node is None else "violated"
            claims.append(ClaimResult(p.name, "trace_property", describe_property(p), p.expect, verdict))
            if node is not None:
                violations.append(self._property_violation(p, node))
        claims.append(self._termination(violations))
        claims.append(self._determinism(violations))
        ids = [t.id for t in table.transitions]
        covered = {tid: search.coverage[tid] for tid in ids if tid in search.coverage}
        return Summary(
            profile=table.name,
            params=dict(self.machine.params),
            states=len(search.nodes),
            edges=len(search.dst),
            terminals={name: self.terminals[name] for name in table.terminals if name in self.terminals},
            max={name: self.max[name] for name in table.counters if name in self.max},
            claims=tuple(claims),
            violations=tuple(violations),
            covered=covered,
            uncovered=tuple(tid for tid in ids if tid not in covered),
            complete=search.complete,
            seconds=seconds,
            limit=search.limit,
            terminal_max={t: dict(self.terminal_max[t]) for t in table.terminals if t in self.terminal_max},
        )

    def _undecided(self) -> Verdict:
        """What a claim not refuted is: `holds` after a complete search, else not decided."""
        return "holds" if self.search.complete else "unknown"

    def _claim_result(self, c: _StateClaim, node: int | None) -> ClaimResult:
        claim = c.claim
        verdict: Verdict = self._undecided() if node is None else "violated"
        if claim.kind != "bound" or c.lhs is None or c.rhs is None:
            return ClaimResult(claim.name, claim.kind, claim.text, claim.expect, verdict)
        rhs = int(c.rhs(dict(self.machine.params))) if c.rhs_params_only else None
        return ClaimResult(
            claim.name,
            "bound",
            claim.text,
            claim.expect,
            verdict,
            tight=self.tight[claim.name],
            lhs_max=self.lhs_max.get(claim.name),
            rhs=rhs,
        )

    def _witness(self, path: list[PathStep], loop_start: int | None = None) -> tuple[Witness, Replay]:
        r = replay(self.machine, None, path)
        w = Witness(tuple(path), r.script, r.trace, probe_line(self.table, r.trace), loop_start)
        return w, r

    def _replay_problem(self, path: list[PathStep], r: Replay) -> str | None:
        taken = [s.transition for s in path]
        if r.trace.path != taken:
            return f"the interpreter took {r.trace.path}, the explorer's path is {taken}"
        if outcome_script(r.trace) != r.script:
            return "the interpreter consumed a different host script than the witness's"
        return None

    def _reading(self, expr: Expr, state: State) -> str:
        """The values an expression reads in a state, in the order the table declares them."""
        names = {r.name for r in refs(expr)}
        env = self.machine.env(state)
        order = [*self.machine.var_names, *self.machine.params]
        return ", ".join(f"{n}={_fmt(env[n])}" for n in order if n in names)

    def _describe(self, state: State) -> str:
        return f"at {state.location} {self.machine.describe(state)}"

    def _state_violation(self, name: str, kind: ClaimKind, node: int, c: _StateClaim) -> Violation:
        path = self.search.path_to(node)
        w, r = self._witness(path)
        state = self.search.nodes[node][0]
        if c.claim.step is not None:
            message = f"a call broke it ({c.claim.text}), at {state.location}"
        else:
            message = (
                f"{render(c.claim.expr)} fails at {state.location} with {self._reading(c.claim.expr, state)}"
            )
        problem = self._replay_problem(path, r)
        if problem is None:
            last = r.visited[-1]
            env = self.machine.env(last)
            if kind == "bound" and not self.table.is_terminal(r.trace.terminal):
                problem = f"the replay ended at {r.trace.terminal}, not at a terminal"
            elif c.check(env):
                problem = f"the claim holds in the replayed state {self.machine.describe(last)}"
        return Violation(name, kind, message, w, problem)

    def _property_violation(self, p: TraceProperty, node: int) -> Violation:
        path = self.search.path_to(node)
        w, r = self._witness(path)
        message = f"{describe_property(p)}: broken by the path's last call"
        problem = self._replay_problem(path, r)
        if problem is None and p.name not in {q.name for q in check_trace(self.table, r.trace)}:
            problem = "the replayed trace satisfies the property"
        return Violation(p.name, "trace_property", message, w, problem)

    def _termination(self, violations: list[Violation]) -> ClaimResult:
        search, table = self.search, self.table
        expect: Expect = "holds" if table.step_horizon is None else "either"
        text = "every run reaches a terminal"
        if table.step_horizon is not None:
            text += f" (explored to {table.step_horizon} host calls)"
        cyclic = search.cyclic_nodes()
        if cyclic:
            start, loop = search.lasso(cyclic)
            prefix = search.path_to(start)
            path = prefix + [search.step_of(search.edge_label(a, b)) for a, b in itertools.pairwise(loop)]
            w, r = self._witness(path, len(prefix))
            problem = self._replay_problem(path, r)
            if problem is None and r.visited[len(prefix)] != r.visited[-1]:
                problem = "the interpreter did not come back to the state the loop starts from"
            state = search.nodes[start][0]
            message = (
                f"a run may loop forever: {len(loop) - 1} transitions lead back to {self._describe(state)}"
            )
            violations.append(Violation(TERMINATES, "termination", message, w, problem))
            return ClaimResult(TERMINATES, "termination", text, expect, "violated")
        if search.horizon_leaves:
            node = search.horizon_leaves[0]
            path = search.path_to(node)
            w, r = self._witness(path)
            problem = self._replay_problem(path, r)
            if problem is None and r.trace.terminal != HORIZON:
                problem = f"the replay ended at {r.trace.terminal}, not at the horizon"
            message = f"horizon reached: {table.step_horizon} host calls without a terminal"
            violations.append(Violation(TERMINATES, "termination", message, w, problem))
            return ClaimResult(TERMINATES, "termination", text, expect, "violated")
        if not search.complete:
            return ClaimResult(TERMINATES, "termination", text, expect, "unknown")
        return ClaimResult(TERMINATES, "termination", text, expect, "holds")

    def _determinism(self, violations: list[Violation]) -> ClaimResult:
        text = "exactly one transition enabled in every reachable state"
        if not self.search.run_errors:
            return ClaimResult(DETERMINISTIC, "determinism", text, "holds", self._undecided())
        node = min(self.search.run_errors)
        error = self.search.run_errors[node]
        path = self.search.path_to(node)
        w, r = self._witness(path)
        problem = self._replay_problem(path, r)
        if problem is None:
            again = _run_error(self.machine, path)
            if type(again) is not type(error) or str(again) != str(error):
                problem = f"the interpreter raised {again!r} instead of {error!r}"
        violations.append(Violation(DETERMINISTIC, "determinism", str(error), w, problem))
        return ClaimResult(DETERMINISTIC, "determinism", text, "holds", "violated")


# -- the networkx graph -----------------------------------------------------------


def _to_graph(search: _Search, summary: Summary, broken: Mapping[int, tuple[str, ...]]) -> nx.DiGraph:
    machine = search.machine
    horizon = set(search.horizon_leaves)
    g = nx.DiGraph(profile=summary.profile, params=dict(summary.params))
    for i, (state, mon) in enumerate(search.nodes):
        g.add_node(
            i,
            location=state.location,
            terminal=machine.is_terminal(state),
            values=machine.variables(state),
            facts=dict(state.facts),
            monitors=mon,
            depth=search.depth[i],
            calls=search.calls[i],
            horizon=i in horizon,
            violations=broken.get(i, ()),
        )
    for i in range(len(search.nodes)):
        for e in range(search.first_edge[i], search.first_edge[i + 1]):
            step = search.step_of(search.label[e])
            label = _label_text(step)
            for alt in search.alternatives.get(e, ()):
                label += " | " + _label_text(search.step_of(alt))
            g.add_edge(
                i, search.dst[e], transition=step.transition, op=step.op, outcome=step.outcome, label=label
            )
    return g


def _label_text(step: PathStep) -> str:
    if step.outcome is None:
        return step.transition
    return f"{step.transition}: {describe_outcome(step.outcome)}"


__all__ = [
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
