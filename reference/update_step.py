"""A transition's updates compiled into one function from a state's values to the next ones.

What one step pays per update is a closure call or more; the claims' ghost updates make most
of them (19 per host call at deeptutor-scheduler), and most of those are decided before any
state or read only finite-domain inputs. So: a constant update is written, not evaluated; an
update that keeps its variable is dropped; the updates that read only facts and boolean or
enum variables are evaluated together, once per distinct tuple of what they read (a finite
set: every fact has a finite domain), and looked up after that; the rest are closures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from turnbound.reference.expr import Expr, Lit, Ref, refs
from turnbound.reference.expr_compile import Slotted, compile_slotted
from turnbound.reference.types import Value

Values = tuple[Value, ...]
Updater = Callable[[Values, Mapping[str, Value]], Values]
"""The state's values and the facts readable there -> the values after the updates."""
TooLarge = Callable[[int, int], Exception]
"""The error for an integer variable (by slot) that left the machine's limit."""
Picker = Callable[[Any], tuple[Any, ...]]


def slot_picker(slots: tuple[Any, ...]) -> Picker:
    """The items at these slots (of a tuple) or keys (of a mapping), always as a tuple."""
    if len(slots) == 1:
        only = slots[0]
        return lambda values: (values[only],)
    if not slots:
        return lambda values: ()
    return itemgetter(*slots)


ROWS_LIMIT = 4096
"""Rows kept per transition (cleared past this; reached only by a table with many finite inputs)."""


def update_step(
    pairs: Sequence[tuple[int, Expr]],
    slots: Mapping[str, int],
    params: Mapping[str, Value],
    finite_vars: frozenset[str],
    int_slots: frozenset[int],
    limit: int,
    too_large: TooLarge,
) -> Updater | None:
    """The updates `pairs` (slot, expression with the parameters folded in) as one function;
    None when they change nothing. `finite_vars`: the variables whose values are few (bool,
    enum); `int_slots`: the variables checked against +-`limit` after each step."""
    fixed: list[tuple[int, Value]] = []
    tabled: list[tuple[int, Expr]] = []
    computed: list[tuple[int, Slotted]] = []
    checks: list[int] = []
    for slot, e in pairs:
        if isinstance(e, Ref) and e.kind == "var" and slots.get(e.name) == slot:
            continue  # keeps its value
        if isinstance(e, Lit) and (slot not in int_slots or -limit <= e.value <= limit):  # type: ignore[operator]
            fixed.append((slot, e.value))
            continue
        if slot in int_slots:
            checks.append(slot)
        if isinstance(e, Ref | Lit) or not _finite(e, finite_vars):
            computed.append((slot, compile_slotted(e, slots, params)))
        else:
            tabled.append((slot, e))
    if not (fixed or tabled or computed):
        return None
    checks_t = frozenset(checks)
    computed_t = tuple((slot, fn, slot in checks_t) for slot, fn in computed)
    if tabled:
        pick_vars, pick_facts, rows, made = _rows(
            tabled, tuple(fixed), slots, params, frozenset(checks), limit, too_large
        )

        def apply(values: Values, f: Mapping[str, Value]) -> Values:
            out = list(values)
            try:
                key = (pick_vars(values), pick_facts(f))
            except KeyError:  # a fact not readable here: evaluated as written, which names it
                runs = made(values, f)
            else:
                runs = rows.get(key) or _remember(rows, key, made(values, f))
            for where, part in runs:
                out[where] = part
            for i, fn, check in computed_t:  # simultaneous: every right side reads the pre-state
                v = out[i] = fn(values, f)
                if check and not -limit <= v <= limit:  # type: ignore[operator]
                    raise too_large(i, v)  # type: ignore[arg-type]
            return tuple(out)

        return apply
    fixed_runs = _runs(tuple(fixed))

    def apply_fixed(values: Values, f: Mapping[str, Value]) -> Values:
        out = list(values)
        for where, made in fixed_runs:
            out[where] = made
        for i, fn, check in computed_t:  # simultaneous: every right side reads the pre-state
            v = out[i] = fn(values, f)
            if check and not -limit <= v <= limit:  # type: ignore[operator]
                raise too_large(i, v)  # type: ignore[arg-type]
        return tuple(out)

    return apply_fixed


Runs = tuple[tuple[slice, Values], ...]
"""Values to write into a state's values, as runs of neighbouring slots (one slice assignment
each: the claims' ghosts are declared together, so the constants a step writes are mostly
neighbours)."""


def _runs(pairs: tuple[tuple[int, Value], ...]) -> Runs:
    runs: list[tuple[slice, Values]] = []
    start, made = -2, list[Value]()
    for slot, value in sorted(pairs, key=lambda p: p[0]):
        if slot != start + len(made):
            if made:
                runs.append((slice(start, start + len(made)), tuple(made)))
            start, made = slot, []
        made.append(value)
    if made:
        runs.append((slice(start, start + len(made)), tuple(made)))
    return tuple(runs)


def _finite(e: Expr, finite_vars: frozenset[str]) -> bool:
    """Whether `e` reads only facts and variables of few values (so it takes few values)."""
    return all(r.kind == "fact" or (r.kind == "var" and r.name in finite_vars) for r in refs(e))


def _rows(
    tabled: list[tuple[int, Expr]],
    fixed: tuple[tuple[int, Value], ...],
    slots: Mapping[str, int],
    params: Mapping[str, Value],
    checks: frozenset[int],
    limit: int,
    too_large: TooLarge,
) -> tuple[Picker, Picker, dict[tuple[Any, Any], Runs], Callable[[Values, Mapping[str, Value]], Runs]]:
    """What reads a row's key (the variables and facts the tabled updates read), the rows by
    key, and what makes a row: the constants and the tabled updates' values, as runs (an
    integer beyond the limit raises before it is remembered)."""
    fns = tuple(compile_slotted(e, slots, params) for _, e in tabled)
    targets = tuple(slot for slot, _ in tabled)
    read = {r for _, e in tabled for r in refs(e)}
    pick_vars = slot_picker(tuple(sorted(slots[r.name] for r in read if r.kind == "var")))
    pick_facts = slot_picker(tuple(sorted(r.name for r in read if r.kind == "fact")))
    rows: dict[tuple[Any, Any], Runs] = {}

    def made(values: Values, f: Mapping[str, Value]) -> Runs:
        pairs = tuple(zip(targets, [fn(values, f) for fn in fns], strict=True))
        for i, v in pairs:
            if i in checks and not -limit <= v <= limit:  # type: ignore[operator]
                raise too_large(i, v)  # type: ignore[arg-type]
        return _runs(fixed + pairs)

    return pick_vars, pick_facts, rows, made


def _remember(rows: dict[tuple[Any, Any], Runs], key: tuple[Any, Any], runs: Runs) -> Runs:
    if len(rows) >= ROWS_LIMIT:
        rows.clear()
    rows[key] = runs
    return runs
