"""A table's transitions compiled for one assignment of the parameters, and shared by every
machine of the table that gives the parameters a transition reads the same values: a
conformance or Hypothesis run builds a machine per assignment, and most transitions read no
parameter at all, so compiling stops costing more than running."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast
from weakref import ref

from turnbound.reference.expr import Expr, Lit, refs
from turnbound.reference.expr_compile import Slotted, compile_slotted
from turnbound.reference.expr_fold import fold
from turnbound.reference.table import Table, Transition
from turnbound.reference.types import Value
from turnbound.reference.update_step import Updater, slot_picker

if TYPE_CHECKING:
    from turnbound.reference.fanout import Layout

T = TypeVar("T")

SHARED_LIMIT = 50_000
"""Compiled transitions kept per table across its machines (cleared past this)."""

CompileKey = tuple[str, bool, tuple[int, ...]]
"""A transition, whether ghost updates are made, and the values of the parameters it reads."""


def compiled_expr(node: Expr, slots: Mapping[str, int], params: Mapping[str, int]) -> Slotted:
    """The closure the step runs: the expression partially evaluated with the parameters first
    (`expr_fold`: the claims' ghost updates carry comparisons decided before any state)."""
    return compile_slotted(fold(node, params), slots, params)


@dataclass(frozen=True)
class CompiledTransition:
    t: Transition
    guard: Slotted
    args: tuple[tuple[str, Slotted], ...]
    updates: tuple[tuple[int, Slotted], ...]
    reads_earlier_facts: bool
    """A host transition whose updates read facts other than its own call's (those the
    state it leaves could read): its updates see both, the call's own facts on top."""
    int_slots: tuple[int, ...]
    """The updated variables of type int: each is checked against the machine's INT_LIMIT."""
    read_slots: tuple[int, ...] = ()
    """The variables the updates read: with `read_facts`, all that decides what they make."""
    read_facts: tuple[str, ...] = ()
    apply: Updater | None = None
    """The updates as one function (`update_step`); None: they change nothing."""


class SharedCompilations:
    """What every machine of one table shares: its transitions compiled per the values of the
    parameters each reads."""

    def __init__(self) -> None:
        self.compiled: dict[CompileKey, CompiledTransition] = {}
        self._reads: dict[str, tuple[str, ...]] = {}
        self.layouts: dict[tuple[str, tuple[str, ...], bool, bool], Layout] = {}
        """Each host transition's `fanout.Layout`, which no parameter changes."""
        self.derived: dict[str, object] = {}
        """What an engine derives from the table alone (`derived`), by name."""

    def reads(self, t: Transition) -> tuple[str, ...]:
        found = self._reads.get(t.id)
        if found is None:
            exprs = [t.guard, *(e for _, e in t.args), *(e for _, e in t.updates)]
            found = tuple(sorted({r.name for e in exprs for r in refs(e) if r.kind == "param"}))
            self._reads[t.id] = found
        return found

    def store(self, key: CompileKey, c: CompiledTransition) -> CompiledTransition:
        if len(self.compiled) >= SHARED_LIMIT:
            self.compiled.clear()
        self.compiled[key] = c
        return c


_SHARED: dict[int, tuple[ref[Table], SharedCompilations]] = {}


def shared_compilations(table: Table) -> SharedCompilations:
    """The table's shared compilations, dropped with the table (tables are not hashable: keyed
    by identity, checked through a weak reference)."""
    entry = _SHARED.get(id(table))
    if entry is not None and entry[0]() is table:
        return entry[1]
    key = id(table)
    shared = SharedCompilations()
    _SHARED[key] = (ref(table, lambda _: _SHARED.pop(key, None)), shared)
    return shared


def derived(table: Table, name: str, make: Callable[[], T]) -> T:
    """What `make` derives from the table alone (no parameter value), made once per table:
    a sweep builds a machine and a search per parameter assignment."""
    store = shared_compilations(table).derived
    if name not in store:
        store[name] = make()
    return cast(T, store[name])


def reads_of(exprs: list[Expr], slots: Mapping[str, int]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The variable slots and fact names `exprs` read (parameters are bound constants)."""
    names = {r.name: r.kind for e in exprs for r in refs(e)}
    return (
        tuple(sorted(slots[n] for n, k in names.items() if k == "var")),
        tuple(sorted(n for n, k in names.items() if k != "var" and k != "param")),
    )


def counter_dict(named: tuple[tuple[str, int], ...]) -> Callable[[tuple[Value, ...]], dict[str, int]]:
    """The counters (name, slot) as a fresh dict per call, built by a dict display for up to six
    of them: `dict(zip(...))` costs several times more, and every host call records them."""
    if len(named) > 6:
        names, pick = tuple(n for n, _ in named), slot_picker(tuple(i for _, i in named))
        return lambda v: dict(zip(names, pick(v), strict=True))
    (a, i), (b, j), (c, k), (d, p), (e, q), (g, r) = named + (("", 0),) * (6 - len(named))
    return [
        lambda v: {},
        lambda v: {a: v[i]},
        lambda v: {a: v[i], b: v[j]},
        lambda v: {a: v[i], b: v[j], c: v[k]},
        lambda v: {a: v[i], b: v[j], c: v[k], d: v[p]},
        lambda v: {a: v[i], b: v[j], c: v[k], d: v[p], e: v[q]},
        lambda v: {a: v[i], b: v[j], c: v[k], d: v[p], e: v[q], g: v[r]},
    ][len(named)]


def arg_maker(
    compiled: tuple[tuple[str, Slotted], ...], folded: list[Expr]
) -> Callable[[tuple[Value, ...], Mapping[str, Value]], dict[str, Value]]:
    """The arguments a host call sends, as a fresh dict per call (a step record keeps it)."""
    if all(isinstance(e, Lit) for e in folded):
        fixed = {name: e.value for (name, _), e in zip(compiled, folded, strict=True)}  # type: ignore[union-attr]
        return lambda values, f: fixed.copy()
    return lambda values, f: {name: fn(values, f) for name, fn in compiled}
