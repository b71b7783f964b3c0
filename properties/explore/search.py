"""The explorer's breadth-first search over the reference `Machine`.

Nodes are the interpreter's `State` paired with the monitor state; edges are stored
compactly (node i's edges are contiguous). The search only builds the graph; `checks`
judges the claims on it and `replay` turns its paths into host scripts.

Two ways to store (SPIN's atomic steps, issue 14): with every state (`all_states=True`)
each edge is one transition and, for a host call, its outcome. By default (atomic) a
node is a state the host sees: the initial state, a terminal, a state whose selected
transition calls the host, or one where the search stops (the step horizon, a limit, a
run error), plus a state that breaks an invariant or lemma (stored so it is judged and
witnessed like any node, as SPIN stops at a failed assertion inside a `d_step`). An edge
is then a chain: a host call's outcome followed by the internal transitions (which are
deterministic) up to the next such state (`atomic`); paths expand it back into one
`PathStep` per transition, so witnesses and replays are the same in both ways.

What the search reuses, it reuses exactly: a transition selected once per location, values the
guards read and fact tuple; a call's successors once per call and values when its updates read
no earlier fact; a call's edges once per call, values and monitors when, besides, its monitors
read no argument (the successors exist: only the edges are added again); what the table alone
decides, once per table for every search of a sweep (`compiled.derived`).

Why this module is long: the loop writes the selection and the all-states step out in one
frame (every node of a search passes there), beside the node and edge store it fills and the
path expansion that reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import repeat
from typing import TypeVar

from turnbound.properties.explore.atomic import AtomicWalks
from turnbound.properties.explore.cycles import kahn_leftover, lasso, may_loop
from turnbound.properties.explore.results import PathStep
from turnbound.reference.compiled import derived
from turnbound.reference.errors import LimitReached, Livelock, RunError
from turnbound.reference.expr import refs
from turnbound.reference.machine import Facts, Machine, State
from turnbound.reference.monitors import Monitors, MonitorState
from turnbound.reference.stepping import MAX_INTERNAL, step_limit
from turnbound.reference.table import Table, Transition
from turnbound.reference.types import Value
from turnbound.reference.update_step import value_picker

DEFAULT_MAX_STATES = 500_000
"""Beyond this the graph is presumed infinite (a counter growing without a bound)."""

SHARED_ROWS_LIMIT = 1 << 16
"""At most this many monitor rows kept for the next search of a table (see `_shared_rows`)."""

Node = tuple[State, MonitorState]
_RowKey = tuple[MonitorState, str, tuple[tuple[str, Value], ...]]
_Step = tuple[
    Transition, tuple[int, ...], bool, Callable[[State], tuple[State, ...]], Callable[[State], State]
]
"""A selected transition, its labels (per outcome of a call), whether its edges are shared, and
the machine's step: for all its call's outcomes (`Machine.outcomes_step`), or the internal one
(`Machine.internal_step`)."""


def _no_call(state: State) -> tuple[State, ...]:
    raise AssertionError("an internal transition has no outcomes")


def _no_internal(state: State) -> State:
    raise AssertionError("a host call has outcomes")


_Edges = tuple[list[int], list[int], int, tuple[tuple[int, tuple[int, ...]], ...], int]
"""A node's edges: their targets and labels (never changed), the lowest target, alternatives
by offset, and the states their atomic chains walk through."""
_EdgeKey = tuple[str, tuple[Value, ...], MonitorState, bool]
"""A call, the values and monitors it is made with, and whether an atomic walk goes on after."""


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
        out[location] = (value_picker(tuple(variables)), any(r.kind not in ("var", "param") for r in names))
    return out


K = TypeVar("K")
V = TypeVar("V")


def _intern(ids: dict[K, int], items: list[V], key: K, item: V) -> int:
    """`key`'s number: its position in `items`, where `item` is appended the first time."""
    found = ids.get(key)
    if found is None:
        found = ids[key] = len(items)
        items.append(item)
    return found


class _Search(AtomicWalks):
    """Breadth-first search with edges stored compactly: node i's edges are contiguous."""

    def __init__(
        self,
        machine: Machine,
        monitors: Monitors,
        max_states: int,
        *,
        all_states: bool = True,
        breaks: Callable[[tuple[Value, ...]], bool] | None = None,
    ) -> None:
        self.machine = machine
        self.all_states = all_states
        self.breaks = breaks
        """Atomic: whether variable values break a state claim (such a state is stored)."""
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
        self.first_edge: list[int] = []
        self.dst: list[int] = []
        self.label: list[int] = []
        """Per edge, its chain: an index into `chains`."""
        self.labels: list[tuple[Transition, int]] = []  # (transition, outcome index or -1)
        self._label_ids: dict[tuple[str, int], int] = {}
        self.chains: list[tuple[int, ...]] = []
        """Each edge label as its steps (indices into `labels`); one step with every state stored,
        where chain i is step i."""
        self._chain_ids: dict[tuple[int, ...], int] = {}
        self.intermediate = 0
        """Atomic: the states walked through inside edges and not stored (a state inside two
        edges counts twice); 0 with every state stored."""
        self.alternatives: dict[int, list[int]] = {}  # edge -> further labels leading to the same node
        self.back: list[tuple[int, int]] = []
        """Edges i -> j to a node found no later (j <= i): every cycle has one (`cycles`)."""
        self.coverage: dict[str, int] = {}
        self.horizon_leaves: list[int] = []
        self.terminal_nodes: list[int] = []
        self.run_errors: dict[int, RunError] = {}
        self.complete = True
        self.limit: str | None = None
        table = machine.table
        self._pure_calls = derived(table, "explore.pure_calls", lambda: _pure_calls(table))
        self._call_memo: dict[tuple[str, tuple[Value, ...]], tuple[State, ...]] = {}
        self._label_rows: dict[str, list[int]] = {}
        self._monitor_args: dict[str, bool] = derived(table, "explore.monitor_args", dict)
        """Per operation, whether the monitors' step reads its arguments (`Monitors.reads_args`)."""
        self._monitor_rows: dict[_RowKey, tuple[MonitorState, ...]] = {}
        """The monitors after each outcome of a call, by the monitors before, the operation and
        its arguments: every row this search used (`monitor_states`)."""
        self._shared_rows: dict[_RowKey, tuple[MonitorState, ...]] = derived(table, "explore.rows", dict)
        """The same rows for every search of the table (no parameter reaches a pattern), at most
        SHARED_ROWS_LIMIT of them."""
        self._select_keys = derived(table, "explore.select_keys", lambda: _select_keys(machine))
        self._edge_memo: dict[_EdgeKey, _Edges] = {}
        """A call's edges by `_EdgeKey` (`_edges_shared`): another node making it adds them alone."""
        self._steps: dict[str, _Step] = {}
        self._internal_steps: dict[str, Callable[[State], State]] = {}
        self._fact_contents: dict[Facts, int] = {}
        self._fact_numbers: dict[int, int] = {}
        self._fact_tuples: list[Facts] = []
        self._select_memo: dict[tuple[str, object, int], Transition] = {}
        """Selected transitions by location, the values the guards read and the number of the
        facts when they read any (`_fact_number`)."""
        self._init_walks()

    def _label_id(self, t: Transition, outcome: int) -> int:
        return _intern(self._label_ids, self.labels, (t.id, outcome), (t, outcome))

    def _chain_id(self, steps: tuple[int, ...]) -> int:
        return _intern(self._chain_ids, self.chains, steps, steps)

    def _tail_id(self, tail: tuple[int, ...]) -> int:
        return _intern(self._tail_ids, self.tails, tail, tail)

    def _add(self, node: Node, parent: int, label: int, calls: int, internal: int) -> int:
        """A node not seen before: its index, with its shortest path's last edge."""
        i = len(self.nodes)
        self.index[node] = i
        self._append(node, parent, label, calls, internal)
        return i

    def _append(self, node: Node, parent: int, label: int, calls: int, internal: int) -> None:
        """A node already put in `index` at the next position: it, and its shortest path's last edge."""
        self.nodes.append(node)
        self.parent.append(parent)
        self.parent_label.append(label)
        self.calls.append(calls)
        self.internal.append(internal)

    def depths(self) -> list[int]:
        """Per node, the transitions on its shortest path (a parent is found before its child)."""
        depth = [0] * len(self.nodes)
        chains, parent, parent_label = self.chains, self.parent, self.parent_label
        for i in range(1, len(depth)):
            depth[i] = depth[parent[i]] + len(chains[parent_label[i]])
        return depth

    def _monitor_row(self, m: MonitorState, t: Transition, state: State) -> tuple[MonitorState, ...]:
        """The monitors after each outcome of `t`'s host call from `state`."""
        assert t.op is not None
        reads = self._monitor_args.get(t.op)
        if reads is None:
            reads = self._monitor_args[t.op] = self.monitors.reads_args(t.op)
        args = self.machine.args(state, t) if reads else {}
        key = (m, t.op, tuple(args.items()))
        out = self._monitor_rows.get(key)
        if out is None:
            out = self._shared_rows.get(key)
            if out is None:
                step, op = self.monitors.step, t.op
                out = tuple(step(m, op, args, o) for o in self.machine.outcomes(op))
                if len(self._shared_rows) >= SHARED_ROWS_LIMIT:
                    self._shared_rows.clear()
                self._shared_rows[key] = out
            self._monitor_rows[key] = out
        return out

    def monitor_states(self) -> set[MonitorState]:
        """Every monitor state a node may hold: the initial one and each a call's step made."""
        made = {m for row in self._monitor_rows.values() for m in row}
        made.add(self.monitors.initial())
        return made

    def run(self) -> None:
        self._add((self.machine.initial(), self.monitors.initial()), -1, -1, 0, 0)
        self._loop()
        self.first_edge.append(len(self.dst))
        self._count_coverage()

    def _last_transition(self, i: int) -> str:
        return self.labels[self.chains[self.parent_label[i]][-1]][0].id

    def _count_coverage(self) -> None:
        """Edges per transition (atomic: steps of edges), an outcome that joins another's edge included."""
        per_chain = Counter(self.label)
        for alts in self.alternatives.values():
            per_chain.update(alts)
        per_label: Counter[int] = Counter()
        for cid, n in per_chain.items():
            for lid in self.chains[cid]:
                per_label[lid] += n
        for lid in sorted(per_label):
            tid = self.labels[lid][0].id
            self.coverage[tid] = self.coverage.get(tid, 0) + per_label[lid]

    def _label_row(self, t: Transition) -> list[int]:
        row = self._label_rows.get(t.id)
        if row is None:
            n = len(self.machine.outcomes(t.op)) if t.op is not None else 1
            row = self._label_rows[t.id] = [-1] * n
        return row

    def _loop(self) -> None:
        """The search: each node in the order found, its transition selected, its edges added.

        Every node of a large search passes here, so the selection and, with every state stored,
        the machine's one step are written out in the loop (a method call per node and per
        successor was a fifth of the search). With every state stored each edge is one
        transition and, for a host call, its outcome; atomic edges are made by `_walk_internal`
        and `_walk_call`. Outcomes that lead to the same node make one edge, the others its
        alternatives.
        """
        machine = self.machine
        terminals = machine.table.terminals
        horizon, max_states, max_calls = self.horizon, self.max_states, self.max_calls
        nodes, index, first_edge, dst, label = self.nodes, self.index, self.first_edge, self.dst, self.label
        parent, parent_label, calls, internal = self.parent, self.parent_label, self.calls, self.internal
        back = self.back
        select_keys, select = self._select_keys, machine.select
        monitor_row = self._monitor_row
        pure_calls, call_memo = self._pure_calls, self._call_memo
        monitor_args, monitor_rows = self._monitor_args, self._monitor_rows
        edge_memo = self._edge_memo
        chosen: dict[tuple[str, object, int], _Step] = {}
        fact_numbers = self._fact_numbers
        last_values: tuple[Value, ...] | None = None
        last_location, picked, reads_facts = "", None, False
        last_t: _Step | None = None
        call_limit = max_calls if horizon is None else min(horizon, max_calls)
        livelock = MAX_INTERNAL
        atomic = not self.all_states
        for i, (state, mon) in enumerate(nodes):  # breadth first: the list grows as it is read
            first_edge.append(len(dst))
            location, values, facts = state
            if location in terminals:
                self.terminal_nodes.append(i)
                continue
            c = calls[i]
            if c >= call_limit:
                if horizon is not None and c >= horizon:
                    self.horizon_leaves.append(i)
                elif len(nodes) >= max_states:
                    self.complete, self.limit = False, f"max_states={max_states}"
                else:
                    self.complete, self.limit = False, f"DEFAULT_MAX_STEPS={max_calls} host calls"
                continue
            if len(nodes) >= max_states:
                self.complete, self.limit = False, f"max_states={max_states}"
                continue
            if internal[i] > livelock:
                raise Livelock(location, internal[i], [self._last_transition(i)])
            try:
                # Selected once per location, values the guards read and facts (by number): the
                # outcomes of one call come one after another with the same values.
                if values is not last_values or location != last_location:
                    pick, reads_facts = select_keys[location]
                    picked, last_values, last_location, last_t = pick(values), values, location, None
                if reads_facts:
                    numbered = fact_numbers.get(id(facts))
                    if numbered is None:
                        numbered = self._fact_number(facts)
                    key = (location, picked, numbered)
                    step = chosen.get(key)
                else:
                    key = (location, picked, -1)
                    step = last_t or chosen.get(key)
                if step is None:
                    try:
                        step = chosen[key] = self._step_of(select(state), mon)
                    except LimitReached:
                        raise
                    except RunError as exc:
                        self.run_errors[i] = exc
                        continue
                last_t = step
                t, lids, shared, outcomes, take_internal = step
                if t.op is None and atomic:
                    self._walk_internal(i, take_internal(state), mon, lids[0])
                    continue
                if t.op is None:
                    lid = lids[0]
                    node = (take_internal(state), mon)
                    j = index.get(node)
                    if j is None:
                        j = index[node] = len(nodes)
                        nodes.append(node)
                        parent.append(i)
                        parent_label.append(lid)
                        calls.append(c)
                        internal.append(internal[i] + 1)
                    elif j <= i:
                        back.append((i, j))
                    dst.append(j)
                    label.append(lid)
                    continue
                same: _EdgeKey | None = None
                if shared:
                    same = (t.id, values, mon, c + 1 < call_limit)  # the last: atomic walks on
                    edges = edge_memo.get(same)
                    if edges is not None:  # its successors exist: only the edges are new
                        js, labels, low, alts, walked = edges
                        if alts:
                            e = len(dst)
                            self.alternatives.update((e + offset, list(more)) for offset, more in alts)
                        dst.extend(js)
                        label.extend(labels)
                        if low <= i:
                            back.extend((i, j) for j in js if j <= i)
                        self.intermediate += walked
                        continue
                if atomic:
                    self._walk_call(i, state, t, mon, same)
                    continue
                mons = None
                if mon:
                    if monitor_args.get(t.op) is False:  # `_monitor_row`, its memo read here
                        mons = monitor_rows.get((mon, t.op, ()))
                    if mons is None:
                        mons = monitor_row(mon, t, state)
                if t.id in pure_calls:  # its successors read no earlier fact: by the values
                    afters = call_memo.get((t.id, values))
                    if afters is None:
                        afters = call_memo[(t.id, values)] = outcomes(state)
                else:
                    afters = outcomes(state)
                start, alternatives = len(dst), len(self.alternatives)
                targets: dict[int, int] = {}
                for after, lid, m in zip(afters, lids, mons or repeat(mon), strict=False):
                    n = len(nodes)
                    node = (after, m)
                    j = index.setdefault(node, n)
                    if j == n:
                        nodes.append(node)
                        parent.append(i)
                        parent_label.append(lid)
                        calls.append(c + 1)
                        internal.append(0)
                    elif j in targets:  # another outcome of this call led there first
                        self.alternatives.setdefault(targets[j], []).append(lid)
                        continue
                    elif j <= i:
                        back.append((i, j))
                    targets[j] = len(dst)
                    dst.append(j)
                    label.append(lid)
                if same is not None:
                    edge_memo[same] = self._edges_from(start, alternatives, 0)
            except LimitReached as exc:
                self.complete, self.limit = False, self.limit or exc.limit

    def _step_of(self, t: Transition, mon: MonitorState) -> _Step:
        """`t` with its labels (one per outcome of a call, in order), whether the edges of a call
        are shared (`_edges_shared`) and the machine's step for its outcomes."""
        found = self._steps.get(t.id)
        if found is not None:
            return found
        row = self._label_row(t)
        lids: tuple[int, ...] = ()
        if t.op is None or self.all_states:  # atomic: a call's labels made as its chains are
            lids = tuple(
                row[k] if row[k] >= 0 else self._new_label(row, t, k, k if t.op is not None else -1)
                for k in range(len(row))
            )
        if t.op is None:
            step: _Step = (t, lids, False, _no_call, self._internal_step(t))
        else:
            step = (t, lids, self._edges_shared(t, mon), self.machine.outcomes_step(t), _no_internal)
        self._steps[t.id] = step
        return step

    def _internal_step(self, t: Transition) -> Callable[[State], State]:
        """The machine's step of internal transition `t` (`Machine.internal_step`), one per search."""
        found = self._internal_steps.get(t.id)
        if found is None:
            found = self._internal_steps[t.id] = self.machine.internal_step(t)
        return found

    def _fact_number(self, facts: Facts) -> int:
        """One number per distinct fact tuple, found again by the tuple's identity (the tuple is
        kept here, so no other object takes its id while the search runs)."""
        number = self._fact_contents.setdefault(facts, len(self._fact_contents))
        self._fact_numbers[id(facts)] = number
        self._fact_tuples.append(facts)
        return number

    def _edges_shared(self, t: Transition, mon: MonitorState) -> bool:
        """Whether every node that calls `t` with the same values and monitors has the same
        edges: the call's successors read no earlier fact (`_pure_calls`), and the monitors'
        step reads no argument (which could read one)."""
        assert t.op is not None
        if not mon:
            return t.id in self._pure_calls
        reads = self._monitor_args.get(t.op)
        if reads is None:
            reads = self._monitor_args[t.op] = self.monitors.reads_args(t.op)
        return t.id in self._pure_calls and not reads

    def _edges_from(self, start: int, alternatives: int, walked: int) -> _Edges:
        """The edges from `start` on (the last node's), to give another node with the same call;
        `alternatives` were there before them, and their chains walk through `walked` states."""
        found = self.alternatives
        js = self.dst[start:]
        alts: tuple[tuple[int, tuple[int, ...]], ...] = ()
        if len(found) > alternatives:
            alts = tuple((e, tuple(found[start + e])) for e in range(len(js)) if start + e in found)
        return js, self.label[start:], min(js, default=-1), alts, walked

    def _new_label(self, row: list[int], t: Transition, slot: int, outcome: int) -> int:
        """The one-step chain of `t` (and outcome), cached in its row: a chain id, which with
        every state stored is the step's own label id."""
        row[slot] = cid = self._chain_id((self._label_id(t, outcome),))
        return cid

    def _select(self, state: State) -> Transition:
        """The machine's selected transition, memoized by what the location's guards read."""
        location, values, facts = state
        pick, reads_facts = self._select_keys[location]
        number = -1
        if reads_facts:
            found = self._fact_numbers.get(id(facts))
            number = self._fact_number(facts) if found is None else found
        key = (location, pick(values), number)
        t = self._select_memo.get(key)
        if t is None:
            t = self._select_memo[key] = self.machine.select(state)
        return t

    def successors(self, i: int) -> list[int]:
        return self.dst[self.first_edge[i] : self.first_edge[i + 1]]

    def step_of(self, lid: int) -> PathStep:
        """One step label (an index into `labels`) as a path step."""
        t, k = self.labels[lid]
        if k < 0:
            return PathStep(t.id)
        assert t.op is not None
        return PathStep(t.id, t.op, self.machine.outcomes(t.op)[k])

    def steps_of(self, cid: int) -> list[PathStep]:
        """An edge label (a chain) as its path steps, one per transition."""
        return [self.step_of(lid) for lid in self.chains[cid]]

    def path_to(self, i: int) -> list[PathStep]:
        edges: list[int] = []
        while self.parent[i] >= 0:
            edges.append(self.parent_label[i])
            i = self.parent[i]
        return [step for cid in reversed(edges) for step in self.steps_of(cid)]

    def edge_label(self, src: int, dst: int) -> int:
        for e in range(self.first_edge[src], self.first_edge[src + 1]):
            if self.dst[e] == dst:
                return self.label[e]
        raise KeyError((src, dst))

    def cyclic_nodes(self) -> list[int]:
        """Nodes on a cycle or downstream of one (empty: acyclic); Kahn only if a cycle may exist."""
        if not may_loop(self.dst, self.first_edge, self.back):
            return []
        return kahn_leftover(len(self.nodes), self.dst, self.first_edge)

    def lasso(self, candidates: list[int]) -> tuple[int, list[int]]:
        """The cycle node nearest the initial state, and the shortest loop back to it."""
        return lasso(self.dst, self.first_edge, candidates)
