"""A host call's successors for every outcome at once: what a search takes at each call.

A search asks the machine for the state after each of an operation's outcomes (67 for one
model round at deeptutor-scheduler). One at a time, each pays the contract's verdict lookup
and the updates; but the enumerated outcomes all satisfy the contract, their completed facts
are fixed per operation, and outcomes that agree on the facts the updates read make the same
values. So the facts are completed once per transition, the outcomes are grouped by what the
updates read, and one call evaluates the updates once per group. A failure's outcome (its
own target and ghost updates) is made from the machine's step of its ghost updates; one whose
ghost updates, and a transition whose updates, read earlier facts take the machine's
one-outcome step, so the semantics stays in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from turnbound.reference.compiled import shared_compilations
from turnbound.reference.expr import Expr, refs
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
    failures: tuple[tuple[str, str, Facts, Mapping[str, Value]], ...]
    """Per failure (they come last in `outcomes`): its name, target, kept fields and fields."""
    plain_failures: tuple[tuple[str, Facts], ...]
    """Every failure's target and kept fields, when no raise makes a ghost update (the values
    stay as they are); else empty."""


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
    failures: list[tuple[str, str, Facts, Mapping[str, Value]]] = []
    ghosts = machine.raise_ghosts(t)
    for outcome in machine.outcomes(t.op):
        err = outcome.raise_
        if err is not None:
            target = t.on_raise[err]
            fields = complete(machine.table.failures[err].fields, outcome.fields or {})
            failures.append((err, target, machine.kept(target, tuple(sorted(fields.items()))), fields))
            continue
        filled = complete(op.facts, outcome.facts or {})
        key = tuple(filled[name] for name in reads)
        g = groups.get(key)
        if g is None:
            g = groups[key] = len(firsts)
            firsts.append(filled)
        rows.append((g, machine.kept(t.target, tuple(sorted(filled.items())))))
    plain = () if any(ghosts.get(err) for err, *_ in failures) else tuple((w, k) for _, w, k, _ in failures)
    return Layout(tuple(firsts), tuple(rows), tuple(failures), plain)


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
        self.firsts, self.rows, failures, self.plain_failures = layout(machine, t, reads)
        self.failures = tuple(
            (where, kept, machine.raise_step(t, err, fields)) for err, where, kept, fields in failures
        )
        """Per failure, its target, kept fields and the values after its ghost updates (None:
        taken one by one, the updates read an earlier fact)."""
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
            for o, (where, fields, step) in zip(self.outcomes[len(self.rows) :], self.failures, strict=True):
                out.append(take(state, t, o) if step is None else new(cls, (where, step(values), fields)))
        return tuple(out)


class GroupedUpdates:
    """A host transition's updates for every group of outcomes at once. An update that reads
    no variable gives one value per group, whatever the state (made once); one that reads no
    fact gives one value per state, whatever the group; only one that reads both is evaluated
    per group (deeptutor-scheduler's round: 21 updates, 2 of them per group)."""

    def __init__(
        self,
        fns: list[Callable[[Values, Mapping[str, Value]], Value]],
        exprs: list[Expr],
        firsts: tuple[Mapping[str, Value], ...],
        int_positions: tuple[int, ...],
        limit: int,
        too_large: Callable[[int, int], Exception],
    ) -> None:
        self.fns, self.firsts = fns, firsts
        self.int_positions, self.limit, self.too_large = int_positions, limit, too_large
        self.per_state: list[int] = []
        self.per_both: list[int] = []
        self.per_group: list[int] = []
        for k, e in enumerate(exprs):
            kinds = {r.kind for r in refs(e)} - {"param"}
            if "var" not in kinds:
                self.per_group.append(k)
            elif kinds == {"var"}:
                self.per_state.append(k)
            else:
                self.per_both.append(k)
        self._fixed: list[list[Value]] | None = None

    def rows(self, values: Values) -> tuple[Values, ...]:
        """Per group, what the updates make from `values`, in their order, each int checked."""
        if not self.firsts:
            return ()
        fns, firsts = self.fns, self.firsts
        if self._fixed is None:
            blank: list[Value] = [False] * len(fns)
            self._fixed = [blank.copy() for _ in firsts]
            for row, f in zip(self._fixed, firsts, strict=True):
                for k in self.per_group:
                    row[k] = fns[k](values, f)
        once = [(k, fns[k](values, firsts[0])) for k in self.per_state]
        out = []
        for fixed, f in zip(self._fixed, firsts, strict=True):
            row = fixed.copy()
            for k, v in once:
                row[k] = v
            for k in self.per_both:
                row[k] = fns[k](values, f)
            for k in self.int_positions:
                v = row[k]
                if not -self.limit <= v <= self.limit:  # type: ignore[operator]
                    raise self.too_large(k, v)  # type: ignore[arg-type]
            out.append(tuple(row))
        return tuple(out)
