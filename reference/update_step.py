"""A transition's updates compiled into one function from a state's values to the next ones.

What one step pays per update is a closure call or more; the claims' ghost updates make most
of them (19 per host call at deeptutor-scheduler), and most of those are decided before any
state, or by the facts and booleans they read. So: a constant update is written, not
evaluated; an update that keeps its variable is dropped; the updates that read a fact or a
boolean or enum variable are partially evaluated once per distinct tuple of those inputs (a
finite set: every fact has a finite domain), into constants and what is left to read the
integers; the rest are closures, but for a count's increment (`n + 1`), written inline. The
values are written as runs of neighbouring slots. Whatever the path, a step makes what
evaluating the updates one at a time in their order makes, or raises the first error that would
raise (a missing fact, an integer beyond the limit); a variable kept is not checked again (no
state holds an integer beyond the limit).
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


def value_picker(slots: tuple[int, ...]) -> Callable[[Values], object]:
    """The items at these slots of a tuple, as a memo key: one item bare, several as a tuple,
    none as (); the cheapest picker where the key's shape does not matter."""
    return itemgetter(*slots) if slots else _no_items


def _no_items(values: Values) -> object:
    return ()


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
    computed: list[Item] = []
    checks: list[int] = []
    for slot, e in pairs:
        if _keeps(e, slot, slots):
            continue
        if isinstance(e, Lit) and (slot not in int_slots or -limit <= e.value <= limit):  # type: ignore[operator]
            fixed.append((slot, e.value))
            continue
        if slot in int_slots:
            checks.append(slot)
        if isinstance(e, Lit) or not any(_few(r, finite_vars) for r in refs(e)):
            computed.append((slot, e, compile_slotted(e, slots, params)))
        else:
            tabled.append((slot, e))
    if not (fixed or tabled or computed):
        return None
    checks_t = frozenset(checks)
    rank = {slot: k for k, (slot, _) in enumerate(pairs)}
    if not tabled:
        return _writer(fixed, computed, slots, rank, checks_t, limit, too_large)
    pick_vars, pick_facts, rows, made, as_written = _rows(
        tabled, fixed, computed, slots, params, finite_vars, rank, checks_t, limit, too_large
    )

    def apply(values: Values, f: Mapping[str, Value]) -> Values:
        try:
            key = (pick_vars(values), pick_facts(f))
        except KeyError:  # a fact not readable here: evaluated as written, which names it
            return as_written(values, f)
        return (rows.get(key) or made(values, f, key))(values, f)

    return apply


Runs = tuple[tuple[slice, Values], ...]
"""Values to write into a state's values, as runs of neighbouring slots (one slice assignment
each: the claims' ghosts are declared together, so the constants a step writes are mostly
neighbours)."""


def _runs(pairs: Sequence[tuple[int, Value]], free: Mapping[int, Value] | None = None) -> Runs:
    """`pairs` as runs; `free`: slots known to hold these values already (a row's few-valued
    inputs), written too where they join two runs into one."""
    bridged = {**(free or {}), **dict(pairs)}
    wanted = {slot for slot, _ in pairs}
    groups: list[list[int]] = []
    for slot in sorted(bridged):
        if groups and slot == groups[-1][-1] + 1:
            groups[-1].append(slot)
        else:
            groups.append([slot])
    runs: list[tuple[slice, Values]] = []
    for group in groups:
        ends = [k for k, slot in enumerate(group) if slot in wanted]
        if ends:
            kept = group[ends[0] : ends[-1] + 1]
            runs.append((slice(kept[0], kept[-1] + 1), tuple(bridged[slot] for slot in kept)))
    return tuple(runs)


def _keeps(e: Expr, slot: int, slots: Mapping[str, int]) -> bool:
    """Whether the update of `slot` to `e` leaves the variable as it was."""
    return isinstance(e, Ref) and e.kind == "var" and slots.get(e.name) == slot


def _few(r: Ref, finite_vars: frozenset[str]) -> bool:
    """Whether `r` takes few values: a fact (every fact has a finite domain) or a boolean or
    enum variable."""
    return r.kind == "fact" or (r.kind == "var" and r.name in finite_vars)


Item = tuple[int, Expr, Slotted]
"""An update evaluated at each step: its slot, its expression and that compiled."""


def _increment(e: Expr, slots: Mapping[str, int]) -> tuple[int, int] | None:
    """`e` as (slot read, constant) when it is a variable plus or minus an integer constant."""
    if not isinstance(e, Arith) or e.op == "*":
        return None
    var, const = e.left, e.right
    if e.op == "+" and isinstance(var, Lit):
        var, const = const, var
    if not (isinstance(var, Ref) and var.kind == "var" and var.name in slots and isinstance(const, Lit)):
        return None
    if type(const.value) is not int:
        return None
    return slots[var.name], const.value if e.op == "+" else -const.value


def _writer(
    writes: Sequence[tuple[int, Value]],
    items: Sequence[Item],
    slots: Mapping[str, int],
    rank: Mapping[int, int],
    checks: frozenset[int],
    limit: int,
    too_large: TooLarge,
    free: Mapping[int, Value] | None = None,
) -> Updater:
    """One step's writes as one function: the constants by runs, then each integer variable
    moved by a constant (a count's increment, the commonest update left) inline, then the other
    closures; every right side reads the pre-state. `rank`: each slot's place in the updates'
    order, in which the closures run and an integer beyond the limit is found (re-evaluated in
    that order, every expression being pure), so the error is the first that order raises."""
    runs = _runs(writes, free)
    incs: list[tuple[int, int, int]] = []
    rest: list[tuple[int, Slotted, bool]] = []
    items = sorted(items, key=lambda item: rank[item[0]])
    for slot, e, fn in items:
        inc = _increment(e, slots) if slot in checks else None
        if inc is None:
            rest.append((slot, fn, slot in checks))
        else:
            incs.append((slot, *inc))
    ordered = tuple((slot, fn, slot in checks) for slot, _, fn in items)
    incs_t, rest_t = tuple(incs), tuple(rest)

    def first_too_large(values: Values, f: Mapping[str, Value]) -> Exception:
        for i, fn, check in ordered:
            v = fn(values, f)
            if check and not -limit <= v <= limit:  # type: ignore[operator]
                return too_large(i, v)  # type: ignore[arg-type]
        raise AssertionError("an integer left the limit, then none did")  # every expression is pure

    def write(values: Values, f: Mapping[str, Value]) -> Values:
        out = list(values)
        for where, part in runs:
            out[where] = part
        for i, j, c in incs_t:
            v = out[i] = values[j] + c  # type: ignore[operator]
            if not -limit <= v <= limit:
                raise first_too_large(values, f)
        for i, fn, check in rest_t:
            v = out[i] = fn(values, f)
            if check and not -limit <= v <= limit:  # type: ignore[operator]
                raise first_too_large(values, f)
        return tuple(out)

    return write


Maker = Callable[[Values, Mapping[str, Value], Any], Updater]
"""The state's values and facts and their row key -> the row's step."""


def _rows(
    tabled: list[tuple[int, Expr]],
    fixed: list[tuple[int, Value]],
    computed: list[Item],
    slots: Mapping[str, int],
    params: Mapping[str, Value],
    finite_vars: frozenset[str],
    rank: Mapping[int, int],
    checks: frozenset[int],
    limit: int,
    too_large: TooLarge,
) -> tuple[Picker, Picker, dict[tuple[Any, Any], Updater], Maker, Updater]:
    """What reads a row's key (the facts and the few-valued variables the tabled updates read),
    the rows by key, what makes a row, and the tabled updates as written (for a fact that is
    not there). A row is the tabled updates partially evaluated at its key: each one's few-valued
    inputs replaced by their values and the rest folded (`expr_fold`), so most become
    constants, and a count that did not move (n + 0) keeps its variable; an integer constant
    beyond the limit raises before the row is remembered. The few-valued variables read are
    known in a row, so its constants may run over them."""
    read = {r for _, e in tabled for r in refs(e) if _few(r, finite_vars)}
    var_slots = tuple(sorted(slots[r.name] for r in read if r.kind == "var"))
    fact_names = tuple(sorted(r.name for r in read if r.kind == "fact"))
    names = {slots[r.name]: r.name for r in read if r.kind == "var"}
    rows: dict[tuple[Any, Any], Updater] = {}
    written = _writer(
        fixed,
        [(slot, e, compile_slotted(e, slots, params)) for slot, e in tabled] + computed,
        slots,
        rank,
        checks,
        limit,
        too_large,
    )
    seen: set[tuple[Any, Any]] = set()

    def made(values: Values, f: Mapping[str, Value], key: tuple[Any, Any]) -> Updater:
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

    def partial(values: Values, f: Mapping[str, Value]) -> Updater:
        known: dict[tuple[str, str], Value] = {("var", names[i]): values[i] for i in var_slots}
        known.update((("fact", n), f[n]) for n in fact_names)
        writes: list[tuple[int, Value]] = list(fixed)
        rest: list[Item] = []
        for slot, e in tabled:
            residue = fold(_bind(e, known), {})
            if isinstance(residue, Lit):
                if slot in checks and not -limit <= residue.value <= limit:  # type: ignore[operator]
                    written(values, f)  # raises: the first integer beyond in the updates' order
                    raise AssertionError("a folded update left the limit, its closure did not")
                writes.append((slot, residue.value))
            elif not _keeps(residue, slot, slots):
                rest.append((slot, residue, compile_slotted(residue, slots, params)))
        evaluated = {slot for slot, _, _ in rest} | {slot for slot, _, _ in computed}
        free = {i: values[i] for i in var_slots if i not in evaluated}
        return _writer(writes, rest + computed, slots, rank, checks, limit, too_large, free)

    return slot_picker(var_slots), slot_picker(fact_names), rows, made, written


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
