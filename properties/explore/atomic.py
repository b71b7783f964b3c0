"""Atomic steps (SPIN's `d_step`): the internal transitions after a node, walked up to the
next state the search stores, as one edge (a chain).

A node stored by the atomic search is a state the host sees (see `search`); from it, a host
call's outcomes and an internal transition each lead through internal transitions, which are
deterministic, to the next such state. The walks are remembered where many nodes share them:
by the call and the values before it (a call that reads no earlier fact), by the state a call
left, by the state one internal transition after it, and a call's whole edges by the call,
values and monitors (`search._edge_memo`). A walk longer than CYCLE_CHECK is walked again
remembering its states, to stop where one repeats (an internal loop, stored as a node so
termination sees it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from turnbound.reference.errors import LimitReached, RunError
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import MonitorState
from turnbound.reference.stepping import MAX_INTERNAL
from turnbound.reference.table import Transition
from turnbound.reference.types import Value

if TYPE_CHECKING:
    from collections.abc import Callable

    from turnbound.properties.explore.search import Node, _EdgeKey, _Edges

CYCLE_CHECK = 64
"""An atomic edge longer than this many internal transitions is walked again remembering its
states, to stop where one repeats (an internal loop, stored as a node so termination sees it)."""

CHAIN_MEMO_LIMIT = 1 << 15
"""At most this many walks remembered by the state they start from (see `_chain_memo`)."""


class AtomicWalks:
    """The atomic search's walks, for `search._Search` (which holds the graph they add to)."""

    machine: Machine
    nodes: list[Node]
    index: dict[Node, int]
    calls: list[int]
    internal: list[int]
    dst: list[int]
    label: list[int]
    back: list[tuple[int, int]]
    alternatives: dict[int, list[int]]
    chains: list[tuple[int, ...]]
    intermediate: int
    horizon: int | None
    max_calls: int
    breaks: Callable[[tuple[Value, ...]], bool] | None
    _pure_calls: frozenset[str]
    _label_rows: dict[str, list[int]]
    # The search's own methods (`search._Search`), which the walks call.
    _add: Callable[[Node, int, int, int, int], int]
    _append: Callable[[Node, int, int, int, int], None]
    _chain_id: Callable[[tuple[int, ...]], int]
    _select: Callable[[State], Transition]
    _label_row: Callable[[Transition], list[int]]
    _new_label: Callable[[list[int], Transition, int, int], int]
    _monitor_row: Callable[[MonitorState, Transition, State], tuple[MonitorState, ...]]
    _edges_from: Callable[[int, int, int], _Edges]
    _edge_memo: dict[_EdgeKey, _Edges]
    _tail_id: Callable[[tuple[int, ...]], int]
    _internal_step: Callable[[Transition], Callable[[State], State]]

    def _init_walks(self) -> None:
        self._call_chains: dict[tuple[str, tuple[Value, ...], bool], tuple[tuple[State, int], ...]] = {}
        """For a call that reads no earlier facts (`_pure_calls`), by the values before it: per
        outcome, the stored state its internal transitions lead to and their tail (an index into
        `tails`). States that differ only in earlier facts share it, and it holds the stored
        state objects only, never one walked through."""
        self._chain_memo: dict[State, tuple[State, int]] = {}
        """Where the internal transitions from a state a host call left without facts lead
        (outcomes of calls from different states often leave the same one); emptied at
        CHAIN_MEMO_LIMIT, so the states it holds stay few beside the stored ones."""
        self._walked: dict[State, tuple[State, int]] = {}
        """The same from a state one internal transition after a call left facts (`_walk_on`)."""
        self._tail_after: dict[tuple[int, int], int] = {}
        """A first step and a tail, as the tail they make together."""
        self.tails: list[tuple[int, ...]] = [()]
        self._tail_ids: dict[tuple[int, ...], int] = {(): 0}
        self._chain_of: dict[tuple[int, int], int] = {}

    def _walk_internal(self, i: int, entered: State, mon: MonitorState, lid: int) -> None:
        """Node i's atomic edge for its internal transition (label `lid`), which `entered` a
        state: the transitions after it up to the next state to store."""
        calls = self.calls[i]
        chain = [self.chains[lid][0]]
        after, internal = self._walk(entered, calls, chain, self.internal[i] + 1, self.nodes[i][0])
        cid = self._chain_id(tuple(chain))
        j = self.index.get((after, mon))
        if j is None:
            j = self._add((after, mon), i, cid, calls, internal)
        elif j <= i:
            self.back.append((i, j))
        self.dst.append(j)
        self.label.append(cid)

    def _walk_call(
        self, i: int, state: State, t: Transition, mon: MonitorState, same: _EdgeKey | None
    ) -> None:
        """Node i's atomic edges for its host call `t`: each outcome, then the internal
        transitions up to the next state to store; remembered under `same` (not None: another
        node making the same call adds the same edges, `search._edge_memo`)."""
        calls = self.calls[i]
        row = self._label_rows[t.id]
        walks = calls + 1 < self.max_calls and (self.horizon is None or calls + 1 < self.horizon)
        start, alternatives, walked = len(self.dst), len(self.alternatives), self.intermediate
        mons = self._monitor_row(mon, t, state) if mon else None
        targets: dict[int, int] = {}
        key = (t.id, state.values, walks) if t.id in self._pure_calls else None
        found = self._call_chains.get(key) if key is not None else None
        results = found or self._call_and_walk(state, t, calls + 1, walks)
        stored: list[tuple[State, int]] = []
        tails, index, dst, label, nodes = self.tails, self.index, self.dst, self.label, self.nodes
        for k, (end, tail) in enumerate(results):
            first = row[k] if row[k] >= 0 else self._new_label(row, t, k, k)
            n = len(tails[tail])
            self.intermediate += n
            cid = first if tail == 0 else self._chain_after(first, tail)
            node = (end, mons[k] if mons else mon)
            j = index.setdefault(node, len(nodes))
            if j == len(nodes):
                self._append(node, i, cid, calls + 1, n)
            stored.append((nodes[j][0], tail))  # the stored object: the memo holds no copy
            if j in targets:
                self.alternatives.setdefault(targets[j], []).append(cid)
                continue
            if j <= i:
                self.back.append((i, j))
            targets[j] = len(dst)
            dst.append(j)
            label.append(cid)
        if key is not None and found is None:
            self._call_chains[key] = tuple(stored)
        if same is not None:
            self._edge_memo[same] = self._edges_from(start, alternatives, self.intermediate - walked)

    def _call_and_walk(self, state: State, t: Transition, calls: int, walks: bool) -> list[tuple[State, int]]:
        """Per outcome of `t`'s host call, the state to store after it and the tail of internal
        steps (an index into `tails`) that leads there."""
        assert t.op is not None
        out: list[tuple[State, int]] = []
        memo = self._chain_memo
        terminals, breaks = self.machine.table.terminals, self.breaks
        last: tuple[Value, ...] | None = None
        broken = False
        for after in self.machine.take_outcomes(state, t):
            location, values, facts = after
            if not walks or location in terminals:
                out.append((after, 0))
                continue
            if breaks is not None:
                if values is not last:  # a call's outcomes share their values: one after another
                    last, broken = values, breaks(values)
                if broken:
                    out.append((after, 0))
                    continue
            try:
                first = self._select(after)
            except LimitReached:
                raise
            except RunError:
                out.append((after, 0))  # stored, and its expansion records the error
                continue
            if first.op is not None:  # it calls the host: stored as it is
                out.append((after, 0))
            elif facts:
                out.append(self._walk_on(after, first, calls))
            else:
                found = memo.get(after)
                if found is None:
                    found = self._walk_from(after, calls, 0)
                    if len(memo) >= CHAIN_MEMO_LIMIT:
                        memo.clear()
                    memo[after] = found
                out.append(found)
        return out

    def _walk_from(self, state: State, calls: int, internal: int) -> tuple[State, int]:
        """Where the internal transitions from `state` lead, and their tail (`_walk`)."""
        steps: list[int] = []
        end, _ = self._walk(state, calls, steps, internal, None)
        self.intermediate -= len(steps)  # counted by the caller, as for a remembered call
        return end, self._tail_id(tuple(steps))

    def _walk_on(self, after: State, t: Transition, calls: int) -> tuple[State, int]:
        """`_walk_from(after, calls, 0)` for a state a call left with facts, whose selected
        transition `t` is internal: from the state `t` enters (no facts), the walk is remembered,
        as the outcomes of a call that agree on what `t` reads all enter it. No state the walk
        passes through has facts, so none is `after` (the loop check's start)."""
        row = self._label_rows.get(t.id) or self._label_row(t)
        first = self.chains[row[0] if row[0] >= 0 else self._new_label(row, t, 0, -1)][0]
        entered = self._internal_step(t)(after)
        rest = self._walked.get(entered)
        if rest is None:
            if len(self._walked) >= CHAIN_MEMO_LIMIT:
                self._walked.clear()
            rest = self._walked[entered] = self._walk_from(entered, calls, 1)
        end, tail = rest
        whole = self._tail_after.get((first, tail))
        if whole is None:
            whole = self._tail_after[(first, tail)] = self._tail_id((first, *self.tails[tail]))
        return end, whole

    def _chain_after(self, first: int, tail: int) -> int:
        """The chain of a one-step chain followed by a tail of internal steps."""
        cid = self._chain_of.get((first, tail))
        if cid is None:
            cid = self._chain_of[(first, tail)] = self._chain_id(self.chains[first] + self.tails[tail])
        return cid

    def _walk(
        self, state: State, calls: int, steps: list[int], internal: int, origin: State | None
    ) -> tuple[State, int]:
        """Take internal transitions from `state` until a state to store; append their labels to
        `steps`. Returns that state and the internal transitions since the last host call.

        A walk longer than CYCLE_CHECK is walked again remembering its states: where one repeats,
        the walk ends at its first visit, the loop's entry (so a lasso's loop starts where the
        interpreter's run first comes back); `origin` is the stored state the walk left.
        """
        base, intermediate = len(steps), self.intermediate
        found = self._walk_once(state, calls, steps, internal, None)
        if found is not None:
            return found
        del steps[base:]
        self.intermediate = intermediate
        seen: dict[State, int] = {} if origin is None else {origin: -1}
        found = self._walk_once(state, calls, steps, internal, seen)
        assert found is not None
        return found

    def _walk_once(
        self, state: State, calls: int, steps: list[int], internal: int, seen: dict[State, int] | None
    ) -> tuple[State, int] | None:
        """One walk; None when it passes CYCLE_CHECK without `seen` to find a loop with."""
        machine, terminals, breaks = self.machine, self.machine.table.terminals, self.breaks
        horizon = self.horizon if self.horizon is not None else self.max_calls
        give_up = internal + CYCLE_CHECK
        while True:
            if state.location in terminals or calls >= horizon or calls >= self.max_calls:
                return state, internal
            if breaks is not None and breaks(state.values):
                return state, internal
            if internal > MAX_INTERNAL:
                return state, internal  # stored, and its expansion reports the livelock
            if seen is None:
                if internal >= give_up:
                    return None
            else:
                first = seen.get(state)
                if first is not None:  # an internal loop: stored, it comes back to itself
                    if first >= 0:
                        removed = len(steps) - first
                        del steps[first:]
                        internal -= removed
                        self.intermediate -= removed
                    return state, internal
                seen[state] = len(steps)
            try:
                t = self._select(state)
            except LimitReached:
                raise
            except RunError:
                return state, internal  # stored, and its expansion records the error
            if t.op is not None:
                return state, internal
            row = self._label_rows.get(t.id) or self._label_row(t)
            cid = row[0] if row[0] >= 0 else self._new_label(row, t, 0, -1)
            steps.append(self.chains[cid][0])
            self.intermediate += 1
            state = machine.take_internal(state, t)
            internal += 1
