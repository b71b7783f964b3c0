"""A host call's successors for every outcome at once: what a search takes at each call.

A search asks the machine for the state after each of an operation's outcomes (67 for one
model round at deeptutor-scheduler). One at a time, each pays the contract's verdict lookup
and the updates; but the enumerated outcomes all satisfy the contract, their completed facts
are fixed per operation, and outcomes that agree on the facts the updates read make the same
values. So the facts are completed once per transition, the outcomes are grouped by what the
updates read, and one call evaluates the updates once per group. A failure's outcome (its
own target and ghost updates) and a transition whose updates read earlier facts take the
machine's one-outcome step, so the semantics stays in one place; a failure without ghost
updates only moves to its target with its fields, and is made here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from turnbound.reference.outcomes import complete
from turnbound.reference.table import Transition
from turnbound.reference.types import Value

if TYPE_CHECKING:
    from turnbound.reference.machine import Machine, State

Values = tuple[Value, ...]
Update = Callable[[Values, Mapping[str, Value]], Values]


class Fanout:
    """One host transition's successors for all its outcomes, in the outcomes' order."""

    def __init__(
        self, machine: Machine, t: Transition, reads: tuple[str, ...], update: Update | None
    ) -> None:
        assert t.op is not None
        self.machine = machine
        self.t = t
        self.outcomes = machine.outcomes(t.op)
        self.update = update
        op = machine.table.operations[t.op]
        groups: dict[tuple[Value, ...], int] = {}
        firsts: list[Mapping[str, Value]] = []
        rows: list[tuple[int, tuple[tuple[str, Value], ...]]] = []
        failures: list[tuple[str, tuple[tuple[str, Value], ...]] | None] = []
        for outcome in self.outcomes:
            if outcome.raise_ is not None:
                failures.append(self._failure_row(outcome.raise_, outcome.fields))
                continue
            filled = complete(op.facts, outcome.facts or {})
            key = tuple(filled[name] for name in reads)
            g = groups.get(key)
            if g is None:
                g = groups[key] = len(firsts)
                firsts.append(filled)
            rows.append((g, machine.kept(t.target, tuple(sorted(filled.items())))))
        self.firsts = tuple(firsts)
        """One completed facts mapping per group: what the group's outcomes give the updates."""
        self.rows = tuple(rows)
        self.failures = tuple(failures)
        """Per failure (they come last in `outcomes`), its target and kept fields when the raise
        makes no ghost update (the values stay as they are); None: taken one by one."""
        self.update_all: Callable[[Values], list[Values]] | None = None
        """The values after the updates, per group (a memoizing machine's own; else `update`)."""

    def after(self, state: State) -> tuple[State, ...]:
        values, target = state.values, self.t.target
        update = self.update
        if self.update_all is not None:
            made = self.update_all(values)
        elif update is None:
            made = [values] * len(self.firsts)
        else:
            made = [update(values, f) for f in self.firsts]
        new, cls = tuple.__new__, type(state)
        out = [new(cls, (target, made[g], items)) for g, items in self.rows]
        if self.failures:
            take, t = self.machine.take_outcome, self.t
            for o, row in zip(self.outcomes[len(self.rows) :], self.failures, strict=True):
                out.append(take(state, t, o) if row is None else new(cls, (row[0], values, row[1])))
        return tuple(out)

    def _failure_row(
        self, err: str, fields: Mapping[str, Value] | None
    ) -> tuple[str, tuple[tuple[str, Value], ...]] | None:
        if self.machine.raise_ghosts(self.t).get(err):
            return None
        target = self.t.on_raise[err]
        filled = complete(self.machine.table.failures[err].fields, fields or {})
        return target, self.machine.kept(target, tuple(sorted(filled.items())))
