"""A transition's updates compiled into one function from a state's values to the next ones.

What one step pays per update is a closure call or more; the claims' ghost updates make most
of them (19 per host call at deeptutor-scheduler), and most of those are decided before any
state, or by the facts and booleans they read. So: a constant update is written, not
evaluated; an update that keeps its variable is dropped; the updates that read a fact or a
boolean or enum variable are partially evaluated once per distinct tuple of those inputs (a
finite set: every fact has a finite domain), into constants and what is left to read the
integers; the rest are closures. The values are written as runs of neighbouring slots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref, refs
from turnbound.reference.expr_compile import Slotted, compile_slotted
from turnbound.reference.expr_fold import fold
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
        if isinstance(e, Ref | Lit) or not any(_few(r, finite_vars) for r in refs(e)):
            computed.append((slot, compile_slotted(e, slots, params)))
        else:
            tabled.append((slot, e))
    if not (fixed or tabled or computed):
        return None
    checks_t = frozenset(checks)
    computed_t = tuple((slot, fn, slot in checks_t) for slot, fn in computed)

    def write(values: Values, f: Mapping[str, Value], runs: Runs, rest: Computed) -> Values:
        out = list(values)
        for where, part in runs:
            out[where] = part
        for i, fn, check in rest:  # simultaneous: every right side reads the pre-state
            v = out[i] = fn(values, f)
            if check and not -limit <= v <= limit:  # type: ignore[operator]
                raise too_large(i, v)  # type: ignore[arg-type]
        return tuple(out)

    if tabled:
        pick_vars, pick_facts, rows, made, as_written = _rows(
            tabled, tuple(fixed), computed_t, slots, params, finite_vars, checks_t, limit, too_large
        )

        def apply(values: Values, f: Mapping[str, Value]) -> Values:
            try:
                key = (pick_vars(values), pick_facts(f))
            except KeyError:  # a fact not readable here: evaluated as written, which names it
                runs, rest = _runs(tuple(fixed)), as_written
            else:
                runs, rest = rows.get(key) or made(values, f, key)
            return write(values, f, runs, rest)

        return apply
    fixed_runs = _runs(tuple(fixed))

    def apply_fixed(values: Values, f: Mapping[str, Value]) -> Values:
        return write(values, f, fixed_runs, computed_t)

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


def _few(r: Ref, finite_vars: frozenset[str]) -> bool:
    """Whether `r` takes few values: a fact (every fact has a finite domain) or a boolean or
    enum variable."""
    return r.kind == "fact" or (r.kind == "var" and r.name in finite_vars)


Computed = tuple[tuple[int, Slotted, bool], ...]
"""Updates evaluated at each step: (slot, closure, checked against the integer limit?)."""
Row = tuple[Runs, Computed]
"""What a step writes for one input of few values: constants by runs, then closures."""


def _rows(
    tabled: list[tuple[int, Expr]],
    fixed: tuple[tuple[int, Value], ...],
    computed: Computed,
    slots: Mapping[str, int],
    params: Mapping[str, Value],
    finite_vars: frozenset[str],
    checks: frozenset[int],
    limit: int,
    too_large: TooLarge,
) -> tuple[
    Picker, Picker, dict[tuple[Any, Any], Row], Callable[[Values, Mapping[str, Value], Any], Row], Computed
]:
    """What reads a row's key (the facts and the few-valued variables the tabled updates read),
    the rows by key, what makes a row, and the tabled updates as written (for a fact that is
    not there). A row is the tabled updates partially evaluated at its key: each one's few-valued
    inputs replaced by their values and the rest folded (`expr_fold`), so most become
    constants, and a count that did not move (n + 0) keeps its variable; an integer constant
    beyond the limit raises before the row is remembered."""
    read = {r for _, e in tabled for r in refs(e) if _few(r, finite_vars)}
    var_slots = tuple(sorted(slots[r.name] for r in read if r.kind == "var"))
    fact_names = tuple(sorted(r.name for r in read if r.kind == "fact"))
    names = {slots[r.name]: r.name for r in read if r.kind == "var"}
    rows: dict[tuple[Any, Any], Row] = {}
    as_written = (
        tuple((slot, compile_slotted(e, slots, params), slot in checks) for slot, e in tabled) + computed
    )

    seen: set[tuple[Any, Any]] = set()
    written: Row = (_runs(fixed), as_written)

    def made(values: Values, f: Mapping[str, Value], key: tuple[Any, Any]) -> Row:
        """The row for `key`, made and remembered the second time the key comes (a key met once,
        as most are in a short fuzzed turn, is not worth the folding): the first time, the
        updates as written."""
        if key not in seen:
            if len(seen) >= ROWS_LIMIT:
                seen.clear()
            seen.add(key)
            return written
        if len(rows) >= ROWS_LIMIT:
            rows.clear()
        row = rows[key] = partial(values, f)
        return row

    def partial(values: Values, f: Mapping[str, Value]) -> Row:
        known: dict[tuple[str, str], Value] = {("var", names[i]): values[i] for i in var_slots}
        known.update((("fact", n), f[n]) for n in fact_names)
        writes: list[tuple[int, Value]] = list(fixed)
        rest: list[tuple[int, Slotted, bool]] = []
        for slot, e in tabled:
            residue = fold(_bind(e, known), {})
            if isinstance(residue, Lit):
                if slot in checks and not -limit <= residue.value <= limit:  # type: ignore[operator]
                    raise too_large(slot, residue.value)  # type: ignore[arg-type]
                writes.append((slot, residue.value))
            elif not (isinstance(residue, Ref) and residue.kind == "var" and slots.get(residue.name) == slot):
                rest.append((slot, compile_slotted(residue, slots, params), slot in checks))
        return _runs(tuple(writes)), tuple(rest) + computed

    return slot_picker(var_slots), slot_picker(fact_names), rows, made, as_written


def _bind(e: Expr, known: Mapping[tuple[str, str], Value]) -> Expr:
    """`e` with the names in `known` replaced by their values."""
    if isinstance(e, Ref):
        found = known.get((e.kind, e.name), _UNKNOWN)
        return e if found is _UNKNOWN else Lit(found, e.type)  # type: ignore[arg-type]
    if isinstance(e, Not):
        return Not(_bind(e.operand, known), e.type)
    if isinstance(e, Neg):
        return Neg(_bind(e.operand, known), e.type)
    if isinstance(e, Arith):
        return Arith(e.op, _bind(e.left, known), _bind(e.right, known), e.type)
    if isinstance(e, Compare):
        return Compare(e.op, _bind(e.left, known), _bind(e.right, known), e.type)
    if isinstance(e, Logic):
        return Logic(e.op, tuple(_bind(o, known) for o in e.operands), e.type)
    if isinstance(e, Cond):
        return Cond(_bind(e.test, known), _bind(e.then, known), _bind(e.orelse, known), e.type)
    return e


_UNKNOWN = object()
