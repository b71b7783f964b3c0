"""The compiled update step (`update_step`) makes what the updates say, one closure per update
would make: constants, kept variables, looked-up rows and closures alike, with the machine's
integer limit and its error."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from turnbound.reference.compiled import counter_dict
from turnbound.reference.errors import ValueTooLarge
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Not, Ref, refs
from turnbound.reference.expr_compile import compile_slotted
from turnbound.reference.expr_fold import fold
from turnbound.reference.machine import INT_LIMIT, Machine
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.table import Table, Transition
from turnbound.reference.types import BOOL, INT, Value
from turnbound.reference.update_step import ROWS_LIMIT, Updater, update_step

SLOTS = {"n": 0, "b": 1, "c": 2, "m": 3}
n, m = Ref("n", "var", INT), Ref("m", "var", INT)
b, c = Ref("b", "var", BOOL), Ref("c", "var", BOOL)
x, k = Ref("x", "fact", BOOL), Ref("k", "fact", INT)


class _Big(Exception):
    pass


def _step(pairs: list[tuple[str, Expr]], limit: int = 100) -> Updater | None:
    return update_step(
        [(SLOTS[v], e) for v, e in pairs],
        SLOTS,
        {},
        frozenset({"b", "c"}),
        frozenset({0, 3}),
        limit,
        lambda slot, v: _Big(slot, v),
    )


def _plain(
    pairs: list[tuple[str, Expr]], values: tuple[Value, ...], f: dict[str, Value]
) -> tuple[Value, ...]:
    out = list(values)
    for v, e in pairs:
        out[SLOTS[v]] = compile_slotted(e, SLOTS, {})(values, f)
    return tuple(out)


UPDATES: list[tuple[str, Expr]] = [
    ("n", Arith("+", n, Cond(Logic("and", (Not(x), b)), Lit(1, INT), Lit(0, INT)))),
    ("b", Logic("and", (c, Not(x)))),
    ("c", x),
    ("m", Arith("+", m, k)),
]


def test_a_step_makes_what_each_update_makes_from_the_pre_state() -> None:
    step = _step(UPDATES)
    assert step is not None
    rng = random.Random(0)
    for _ in range(200):
        values: tuple[Value, ...] = (
            rng.randint(-5, 5),
            rng.random() < 0.5,
            rng.random() < 0.5,
            rng.randint(0, 9),
        )
        f: dict[str, Value] = {"x": rng.random() < 0.5, "k": rng.randint(0, 3)}
        assert step(values, f) == _plain(UPDATES, values, f)


def test_a_row_is_the_updates_partially_evaluated_at_its_few_valued_inputs() -> None:
    """A count that did not move keeps its variable, a conjunction decided by its booleans is a
    constant, and what is left reads the integers at each step, with the limit checked."""
    pairs: list[tuple[str, Expr]] = [
        ("n", Arith("+", n, Cond(x, Lit(1, INT), Lit(0, INT)))),
        ("b", Logic("and", (c, Compare("<", m, Lit(5, INT))))),
    ]
    step = _step(pairs)
    assert step is not None
    assert step((3, True, False, 9), {"x": False}) == (3, False, False, 9)
    assert step((3, True, True, 4), {"x": True}) == (4, True, True, 4)
    assert step((3, True, True, 5), {"x": True}) == (4, False, True, 5)
    with pytest.raises(_Big):
        step((100, True, True, 5), {"x": True})
    assert step((100, True, True, 5), {"x": False}) == (100, False, True, 5)


def test_constants_and_kept_variables_are_not_evaluated() -> None:
    assert _step([("n", n), ("b", b)]) is None  # nothing changes
    step = _step([("n", Lit(7, INT)), ("b", Lit(True, BOOL)), ("c", c), ("m", Lit(0, INT))])
    assert step is not None
    assert step((1, False, False, 5), {}) == (7, True, False, 0)


def test_an_integer_beyond_the_limit_raises_from_a_closure_a_row_and_a_constant() -> None:
    from_closure = _step([("n", Arith("+", n, Lit(1, INT)))])
    from_row = _step([("n", Cond(x, Lit(101, INT), Lit(0, INT)))])
    from_constant = _step([("m", Lit(-101, INT))])
    assert from_closure is not None and from_row is not None and from_constant is not None
    assert from_closure((99, False, False, 0), {}) == (100, False, False, 0)
    with pytest.raises(_Big):
        from_closure((100, False, False, 0), {})
    assert from_row((0, False, False, 0), {"x": False}) == (0, False, False, 0)
    for _ in range(2):  # a row that raised is not remembered
        with pytest.raises(_Big):
            from_row((0, False, False, 0), {"x": True})
    with pytest.raises(_Big):
        from_constant((0, False, False, 0), {})


def test_a_missing_fact_is_named_as_the_closures_name_it() -> None:
    step = _step([("b", Logic("and", (c, x)))])
    assert step is not None
    with pytest.raises(KeyError, match="'x'"):
        step((0, False, True, 0), {})


def test_rows_past_their_limit_are_forgotten_not_wrong() -> None:
    step = _step([("b", Logic("or", (c, Not(x)))), ("m", Cond(x, k, Lit(0, INT)))], limit=10 * ROWS_LIMIT)
    assert step is not None
    for i in range(ROWS_LIMIT + 10):
        f: dict[str, Value] = {"x": True, "k": i}
        assert step((0, False, False, 0), f) == (0, False, False, i)


def test_the_ghost_updates_of_every_profile_agree_with_their_closures() -> None:
    """Every transition of every profile, compiled both ways, over random values and facts."""
    rng = random.Random(1)
    for name in profile_names():
        table = load_profile(name)
        machine = Machine(table)
        slots = {v: i for i, v in enumerate(machine.var_names)}
        for t in table.transitions:
            own = table.operations[t.op].facts if t.op is not None else ()
            c_t = machine._transition(t)
            if c_t.apply is None:
                continue
            for _ in range(10):
                values = tuple(
                    rng.random() < 0.5 if v.type == BOOL else _other(rng, v.type) for v in table.variables
                )
                f = {s.name: rng.choice(list(s.domain.values())) for s in own}
                f |= {r.name: _fact(table, r.name, rng) for _, e in t.updates for r in _facts_of(e)}
                expected = list(values)
                for v, e in t.updates:
                    expected[slots[v]] = compile_slotted(fold(e, machine.params), slots, machine.params)(
                        values, f
                    )
                got = c_t.apply(values, f)
                assert got == tuple(expected), (name, t.id)
                assert [type(v) for v in got] == [type(v) for v in expected], (name, t.id)


def _other(rng: random.Random, type_: object) -> Value:
    members = getattr(type_, "members", None)
    return rng.choice(list(members)) if members else rng.randint(0, 4)


def _facts_of(e: Expr) -> list[Ref]:
    return [r for r in refs(e) if r.kind == "fact"]


def _fact(table: Table, name: str, rng: random.Random) -> Value:
    for op in table.operations.values():
        for s in op.facts:
            if s.name == name:
                return rng.choice(list(s.domain.values()))
    raise AssertionError(name)


def test_the_machine_raises_value_too_large_naming_the_variable() -> None:
    table = load_profile("deeptutor-scheduler")
    machine = Machine(table, {"explorationBudget": 3})
    t = table.transition("explore_round")
    state = machine.initial()
    big = (INT_LIMIT, *state.values[1:])
    with pytest.raises(ValueTooLarge, match="rounds"):
        machine.take_outcome(state._replace(values=big), t, machine.outcomes("call_round")[0])


@pytest.mark.parametrize("count", range(9))
def test_counter_dicts_name_each_counter_once_in_order(count: int) -> None:
    named = tuple((f"c{i}", 2 * i) for i in range(count))
    values = tuple(range(20))
    made = counter_dict(named)(values)
    assert list(made.items()) == [(f"c{i}", 2 * i) for i in range(count)]
    assert counter_dict(named)(values) is not made  # a fresh dict for every step record


def test_equal_outcomes_built_apart_share_a_verdict_but_not_a_type() -> None:
    """The verdict is remembered by content too; True and 1 are equal and hash alike, but only
    one of them is a boolean fact."""
    table = load_profile("deeptutor-scheduler")
    machine = Machine(table)
    t = table.transition("dispatch")
    assert machine.violation(t, Outcome(facts={"paused": True})) is None
    assert machine.violation(t, Outcome(facts={"paused": True})) is None
    assert machine.violation(t, Outcome(facts={"paused": 1})) is not None
    assert machine.violation(t, Outcome(facts={"paused": [1]})) is not None  # unhashable: not remembered


# -- generated updates, states and facts ----------------------------------------------------

LIMIT = INT_LIMIT
NEAR = [LIMIT - 1, LIMIT, -LIMIT, -LIMIT + 1]
"""Integers at the limit's edges. No state holds one beyond (every update is checked), so a
variable an update keeps is not checked again."""
INTS = st.one_of(st.integers(-3, 3), st.sampled_from(NEAR))


def _int_exprs() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.sampled_from([n, m, k]),
        st.one_of(st.integers(-2, 2), st.sampled_from([LIMIT, -LIMIT, 2 * LIMIT])).map(lambda v: Lit(v, INT)),
    )

    def grow(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*"]), inner, inner).map(
                lambda t: Arith(t[0], t[1], t[2])  # type: ignore[arg-type]
            ),
            st.tuples(_bool_exprs(), inner, inner).map(lambda t: Cond(t[0], t[1], t[2], INT)),
        )

    increments = st.tuples(st.sampled_from([n, m]), st.integers(-2, 2), st.booleans()).map(
        lambda t: Arith("+", t[0], Lit(t[1], INT)) if t[2] else Arith("-", Lit(t[1], INT), t[0])
    )
    return st.one_of(increments, st.recursive(leaves, grow, max_leaves=4))


def _bool_exprs() -> st.SearchStrategy[Expr]:
    compares = st.tuples(
        st.sampled_from(["<", "==", ">="]), st.sampled_from([n, m, k]), st.integers(-1, 1)
    ).map(
        lambda t: Compare(t[0], t[1], Lit(t[2], INT))  # type: ignore[arg-type]
    )
    leaves = st.one_of(st.sampled_from([b, c, x]), compares, st.booleans().map(lambda v: Lit(v, BOOL)))

    def grow(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            inner.map(Not),
            st.tuples(st.sampled_from(["and", "or"]), st.lists(inner, min_size=2, max_size=3)).map(
                lambda t: Logic(t[0], tuple(t[1]))  # type: ignore[arg-type]
            ),
        )

    return st.recursive(leaves, grow, max_leaves=4)


UPDATE_SETS = st.fixed_dictionaries(
    {},
    optional={"n": _int_exprs(), "b": _bool_exprs(), "c": _bool_exprs(), "m": _int_exprs()},
).flatmap(lambda d: st.permutations(sorted(d.items(), key=lambda p: p[0])))
"""Updates of some of the variables, in any order (the order names the first integer beyond)."""
STATES = st.tuples(INTS, st.booleans(), st.booleans(), INTS)
FACTS = st.fixed_dictionaries({}, optional={"x": st.booleans(), "k": st.integers(-1, 1)})


def _in_order(pairs: list[tuple[str, Expr]], values: tuple[Value, ...], f: dict[str, Value]) -> object:
    """The updates' values evaluated one at a time in their order, or the first error: a
    missing fact's KeyError or the first integer beyond the limit."""
    out = list(values)
    try:
        for v, e in pairs:
            made = out[SLOTS[v]] = compile_slotted(e, SLOTS, {})(values, f)
            if SLOTS[v] in (0, 3) and not -LIMIT <= made <= LIMIT:  # type: ignore[operator]
                return ("too large", SLOTS[v], made)
    except KeyError as missing:
        return ("missing", missing.args)
    return [(type(v), v) for v in out]


def _stepped(step: Updater, values: tuple[Value, ...], f: dict[str, Value]) -> object:
    try:
        return [(type(v), v) for v in step(values, f)]
    except _Big as big:
        return ("too large", *big.args)
    except KeyError as missing:
        return ("missing", missing.args)


@settings(max_examples=400, deadline=None)
@given(pairs=UPDATE_SETS, inputs=st.lists(st.tuples(STATES, FACTS), min_size=1, max_size=4))
def test_generated_updates_step_as_evaluated_one_at_a_time(
    pairs: list[tuple[str, Expr]], inputs: list[tuple[tuple[Value, ...], dict[str, Value]]]
) -> None:
    """Every input three times (as written, the row made, the row remembered), between the
    others: the same values of the same types, or the same error naming the same variable."""
    step = _step(pairs, limit=LIMIT)
    if step is None:
        assert all(e == Ref(v, e.kind, e.type) for v, e in pairs if isinstance(e, Ref))
        return
    for _ in range(3):
        for values, f in inputs:
            assert _stepped(step, values, f) == _in_order(pairs, values, f), (values, f)


@pytest.mark.parametrize("ghosts", [True, False])
def test_counts_at_the_limit_raise_value_too_large_naming_the_first_beyond(ghosts: bool) -> None:
    """At deeptutor-scheduler's round and dispatch: each count at the limit, alone or together,
    the same on every pass (as written, the row made, the row remembered); one below, none."""
    table = load_profile("deeptutor-scheduler")
    machine = Machine(table, {"explorationBudget": 3}, ghosts=ghosts)
    names = machine.var_names
    state = machine.initial()
    tools = Outcome(
        facts={"hasTools": True, "hasText": False, "truncated": False, "reasoningBudgetExhausted": False}
    )
    explore_round, dispatch = table.transition("explore_round"), table.transition("dispatch")
    cases: list[tuple[Transition, dict[str, int], str | None]] = [
        (explore_round, {"rounds": INT_LIMIT}, "rounds"),
        (explore_round, {"exploration_rounds": -INT_LIMIT, "rounds": INT_LIMIT - 1}, None),
        (explore_round, {"rounds": INT_LIMIT, "exploration_rounds": INT_LIMIT}, "rounds"),
        (dispatch, {"tool_steps": INT_LIMIT}, "tool_steps"),
        (dispatch, {"dispatches": INT_LIMIT}, "dispatches" if ghosts else None),
        (dispatch, {"dispatches": INT_LIMIT, "tool_steps": INT_LIMIT}, "tool_steps"),
    ]
    for t, at, named in cases:
        values = tuple(at.get(name, v) for name, v in zip(names, state.values, strict=True))
        outcome = tools if t is explore_round else Outcome(facts={})
        start = state._replace(values=values, facts=() if t is explore_round else (("hasTools", True),))
        for _ in range(3):
            if named is None:
                after = machine.variables(machine.take_outcome(start, t, outcome))
                assert all(after[name] == v + 1 for name, v in at.items() if name in after), at
            else:
                with pytest.raises(ValueTooLarge, match=rf"\b{named}\b"):
                    machine.take_outcome(start, t, outcome)
