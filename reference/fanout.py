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
from typing import TYPE_CHECKING, NamedTuple

from turnbound.reference.compiled import shared_compilations
from turnbound.reference.outcomes import complete
from turnbound.reference.table import Transition
from turnbound.reference.types import Value

if TYPE_CHECKING:
    from turnbound.reference.machine import Machine, State

Values = tuple[Value, ...]
Update = Callable[[Values, Mapping[str, Value]], Values]


Facts = tuple[tuple[str, Value], ...]


class Layout(NamedTuple):
    """Where one host transition's outcomes lead, whatever the parameters: the same for every
    machine of a table that keeps facts alike (so built once per table, `shared_compilations`)."""

    firsts: tuple[Mapping[str, Value], ...]
    """One completed facts mapping per group: what the group's outcomes give the updates."""
    rows: tuple[tuple[int, Facts], ...]
    """Per plain outcome, its group and the facts the state after it keeps."""
    failures: tuple[tuple[str, Facts] | None, ...]
    """Per failure (they come last in `outcomes`), its target and kept fields when the raise
    makes no ghost update (the values stay as they are); None: taken one by one."""
    plain_failures: tuple[tuple[str, Facts], ...]
    """Every failure's row, when none makes a ghost update (else empty)."""


def layout(machine: Machine, t: Transition, reads: tuple[str, ...]) -> Layout:
    """`t`'s layout for machines like `machine`, by the facts its updates read (`reads`)."""
    store = shared_compilations(machine.table).layouts
    key = (t.id, reads, machine.forgets, machine.ghosts)
    found = store.get(key)
    if found is None:
        found = store[key] = _layout(machine, t, reads)
    return found


def _layout(machine: Machine, t: Transition, reads: tuple[str, ...]) -> Layout:
    assert t.op is not None
    op = machine.table.operations[t.op]
    groups: dict[tuple[Value, ...], int] = {}
    firsts: list[Mapping[str, Value]] = []
    rows: list[tuple[int, Facts]] = []
    failures: list[tuple[str, Facts] | None] = []
    ghosts = machine.raise_ghosts(t)
    for outcome in machine.outcomes(t.op):
        err = outcome.raise_
        if err is not None:
            if ghosts.get(err):
                failures.append(None)
                continue
            target = t.on_raise[err]
            fields = complete(machine.table.failures[err].fields, outcome.fields or {})
            failures.append((target, machine.kept(target, tuple(sorted(fields.items())))))
            continue
        filled = complete(op.facts, outcome.facts or {})
        key = tuple(filled[name] for name in reads)
        g = groups.get(key)
        if g is None:
            g = groups[key] = len(firsts)
            firsts.append(filled)
        rows.append((g, machine.kept(t.target, tuple(sorted(filled.items())))))
    plain = tuple(row for row in failures if row is not None)
    return Layout(tuple(firsts), tuple(rows), tuple(failures), plain if len(plain) == len(failures) else ())


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
        self.firsts, self.rows, self.failures, self.plain_failures = layout(machine, t, reads)
        self.unchanged = tuple((t.target, items) for _, items in self.rows) + self.plain_failures
        """Each outcome's target and facts, for a call whose updates and failures change nothing."""
        self.update_all: Callable[[Values], list[Values]] | None = None
        """The values after the updates, per group (a memoizing machine's own; else `update`)."""

    def after(self, state: State) -> tuple[State, ...]:
        """The state after each outcome, in the outcomes' order."""
        values, target = state.values, self.t.target
        update = self.update
        if self.update_all is not None:
            made = self.update_all(values)
        elif update is None:
            if self.plain_failures or not self.failures:  # every outcome keeps the values
                new, cls = tuple.__new__, type(state)
                return tuple([new(cls, (where, values, fields)) for where, fields in self.unchanged])
            made = [values] * len(self.firsts)
        else:
            made = [update(values, f) for f in self.firsts]
        new, cls = tuple.__new__, type(state)
        out = [new(cls, (target, made[g], items)) for g, items in self.rows]
        if self.plain_failures:
            out += [new(cls, (where, values, fields)) for where, fields in self.plain_failures]
        elif self.failures:
            take, t = self.machine.take_outcome, self.t
            for o, row in zip(self.outcomes[len(self.rows) :], self.failures, strict=True):
                out.append(take(state, t, o) if row is None else new(cls, (row[0], values, row[1])))
        return tuple(out)
