"""The compiled step agrees with the plain expression closures, and takes the first enabled
guard only for tables the loader proved deterministic."""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from collections.abc import Iterator

import pytest
from turnbound.reference.expr import Expr
from turnbound.reference.expr_compile import compile_expr, compile_slotted
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.proved import guards_proved
from turnbound.reference.readable import readable_facts, table_entering
from turnbound.reference.stepping import trusted_step
from turnbound.reference.table import Table, Transition, ValueSpec
from turnbound.reference.trace import Step
from turnbound.reference.types import BoolType, IntType, Value


def _value(rng: random.Random, type_: object) -> Value:
    if isinstance(type_, BoolType):
        return rng.random() < 0.5
    if isinstance(type_, IntType):
        return rng.randint(-3, 12)
    members = type_.members  # type: ignore[attr-defined]
    return rng.choice(list(members))


def _exprs(table: Table) -> list[tuple[str, Expr, tuple[ValueSpec, ...]]]:
    """Each guard, argument and update with where it is evaluated and the facts it may read
    besides that location's: a host call's updates read the call's own facts too."""
    out: list[tuple[str, Expr, tuple[ValueSpec, ...]]] = []
    for t in table.transitions:
        own = table.operations[t.op].facts if t.op is not None else ()
        out.append((t.source, t.guard, ()))
        out.extend((t.source, e, ()) for _, e in t.args)
        out.extend((t.source, e, own) for _, e in t.updates)
    return out


@pytest.mark.parametrize("name", profile_names())
def test_slotted_closures_agree_with_environment_closures(name: str) -> None:
    table = load_profile(name)
    machine = Machine(table)
    slots = {n: i for i, n in enumerate(machine.var_names)}
    readable = readable_facts(table.initial, table_entering(table))
    rng = random.Random(name)
    checked = 0
    for location, expr, own in _exprs(table):
        plain, slotted = compile_expr(expr), compile_slotted(expr, slots, machine.params)
        for _ in range(20):
            values = tuple(_value(rng, v.type) for v in table.variables)
            facts = {n: _value(rng, specs[0].domain.type) for n, specs in readable.get(location, {}).items()}
            facts |= {spec.name: _value(rng, spec.domain.type) for spec in own}
            env = {**machine.params, **dict(zip(machine.var_names, values, strict=True)), **facts}
            try:
                expected: object = plain(env)
            except (KeyError, TypeError) as exc:
                expected = type(exc)
            try:
                got: object = slotted(values, facts)
            except (KeyError, TypeError) as exc:
                got = type(exc)
            assert got == expected and type(got) is type(expected), (location, expr)
            checked += 1
    assert checked > 0


def test_a_loaded_table_is_proved_and_a_rewritten_one_is_not() -> None:
    table = load_profile("tool-call-budget")
    assert guards_proved(table)
    rewritten = dataclasses.replace(table, title=table.title + " (rewritten)")
    assert not guards_proved(rewritten)
    assert Machine(table)._first_enabled and not Machine(rewritten)._first_enabled


def test_states_are_plain_tuples() -> None:
    state = State("loop", (1, True), (("hasTools", False),))
    assert state == ("loop", (1, True), (("hasTools", False),))
    assert hash(state) == hash(("loop", (1, True), (("hasTools", False),)))


def test_trusted_step_is_the_constructed_step() -> None:
    outcome = Outcome.of_facts(hasTools=True)
    fast = trusted_step("call_round", {"mode": "exploration"}, outcome, {"rounds": 1}, "explore_round")
    slow = Step.model_construct(
        op="call_round",
        args={"mode": "exploration"},
        outcome=outcome,
        counters={"rounds": 1},
        transition="explore_round",
    )
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == slow.model_fields_set


def test_the_contract_memo_answers_per_outcome_object() -> None:
    table = load_profile("deeptutor-scheduler")
    machine = Machine(table)
    t = next(t for t in table.transitions if t.op == "call_round")
    good = machine.outcomes("call_round")[0]
    bad = Outcome.of_facts(hasTools="yes")
    assert machine.violation(t, good) is None
    first = machine.violation(t, bad)
    assert first is not None and "hasTools" in first
    assert machine.violation(t, bad) == first
    assert machine.violation(t, good) is None


@pytest.mark.parametrize("name", profile_names())
def test_a_machine_without_ghosts_runs_every_vector_the_same_way(name: str) -> None:
    """Ghosts decide nothing (the loader's rule), so skipping their updates changes no request,
    answer, counter or end; the trace then names only the table's own variables."""
    from turnbound.properties.conformance.vectors import bundled_vector_cases
    from turnbound.reference.host import ScriptHost
    from turnbound.reference.interpreter import run

    table = load_profile(name)
    ghosts = {v.name for v in table.variables if v.ghost}
    cases = bundled_vector_cases(table)
    assert cases
    for case in cases:
        full = run(table, ScriptHost(case.script), case.params)
        lean = run(table, ScriptHost(case.script), case.params, ghosts=False)
        assert lean.model_dump(exclude={"variables"}) == full.model_dump(exclude={"variables"}), case.id
        assert lean.variables == {k: v for k, v in full.variables.items() if k not in ghosts}, case.id


def test_machines_of_one_table_share_a_transition_compiled_for_the_parameters_it_reads() -> None:
    table = load_profile("deeptutor-scheduler")
    explore_round, accept = table.transition("explore_round"), table.transition("accept")
    a = Machine(table, {"explorationBudget": 1, "settlementBudget": 1})
    b = Machine(table, {"explorationBudget": 1, "settlementBudget": 4})
    c = Machine(table, {"explorationBudget": 2, "settlementBudget": 1})
    assert a._compile(accept) is b._compile(accept) is c._compile(accept)  # reads no parameter
    assert a._compile(explore_round) is b._compile(explore_round)  # reads explorationBudget only
    assert a._compile(explore_round) is not c._compile(explore_round)
    assert Machine(table, a.params, ghosts=False)._compile(accept) is not a._compile(accept)
    values = Machine(table).initial().values
    assert a._compile(explore_round).guard(values, {}) and not Machine(
        table, {"explorationBudget": 0}
    )._compile(explore_round).guard(values, {})


def _steps(plain: Machine, limit: int) -> Iterator[tuple[State, Transition, tuple[State, ...]]]:
    """Breadth first from the initial state: each state that is not terminal, its transition and
    the plain machine's successors (one per outcome of a host call), up to `limit` states."""
    queue, seen, n = deque([plain.initial()]), {plain.initial()}, 0
    while queue and n < limit:
        state = queue.popleft()
        if plain.is_terminal(state):
            continue
        n += 1
        t = plain.select(state)
        if t.op is None:
            successors: tuple[State, ...] = (plain.take_internal(state, t),)
        else:
            successors = tuple(plain.take_outcome(state, t, o) for o in plain.outcomes(t.op))
        yield state, t, successors
        for after in successors:
            if after not in seen:
                seen.add(after)
                queue.append(after)


@pytest.mark.parametrize("name", profile_names())
def test_a_memoizing_machine_takes_every_step_the_same_way(name: str) -> None:
    """The explorer's machine remembers update results by the values and facts they read: over
    the breadth-first search at the defaults, every successor it makes is the plain machine's."""
    table = load_profile(name)
    plain, memo = Machine(table), Machine(table, memo=True)
    steps = 0
    for state, t, successors in _steps(plain, 20_000):
        if t.op is None:
            got: tuple[State, ...] = (memo.take_internal(state, t),)
        else:
            got = tuple(memo.take_outcome(state, t, o) for o in plain.outcomes(t.op))
        assert got == successors, (t.id, state)
        steps += len(got)
    assert steps > 10
    assert any(plan.memo for plan in memo._plans.values())


@pytest.mark.parametrize("name", profile_names())
def test_all_outcomes_at_once_are_each_outcome_in_turn(name: str) -> None:
    """`take_outcomes` (a search's step at a host call: facts completed once, updates once per
    group of outcomes that agree on what they read) gives exactly one `take_outcome` per
    outcome, in order, for a memoizing machine, a plain one, one without ghosts and one that
    forgets unread facts."""
    table = load_profile(name)
    plain = Machine(table)
    memo, fresh, lean = Machine(table, memo=True), Machine(table), Machine(table, ghosts=False)
    forgets = Machine(table, memo=True, forget=True)
    calls = 0
    for state, t, successors in _steps(plain, 6_000):
        if t.op is None:
            continue
        calls += 1
        assert memo.take_outcomes(state, t) == successors, (t.id, state)
        assert fresh.take_outcomes(state, t) == successors, (t.id, state)
        assert lean.take_outcomes(state, t) == tuple(
            lean.take_outcome(state, t, o) for o in lean.outcomes(t.op)
        )
        kept = tuple(forgets.take_outcome(state, t, o) for o in plain.outcomes(t.op))
        assert forgets.take_outcomes(state, t) == kept
        assert all(forgets.kept(a.location, a.facts) == a.facts for a in kept)
    assert calls > 3


@pytest.mark.parametrize("name", profile_names())
def test_answered_is_the_verdict_then_the_state_it_leads_to(name: str) -> None:
    """`Machine.answered` (a turn's step) against `violation` then `take_outcome` or
    `contract_state` on a second machine, over every outcome and a broken one at each call
    the first turns reach."""
    table = load_profile(name)
    one, other = Machine(table), Machine(table)
    state, checked = one.initial(), 0
    for _ in range(30):
        while not one.is_terminal(state) and (t := one.select(state)).op is None:
            state = one.take_internal(state, t)
        if one.is_terminal(state):
            break
        assert t.op is not None
        outcomes = [*one.outcomes(t.op), Outcome(facts={"not_a_fact": True})]
        for o in outcomes:
            verdict = other.violation(t, o)
            expected = other.contract_state(state) if verdict else other.take_outcome(state, t, o)
            assert one.answered(state, t, o) == (verdict, expected), (t.id, o)
            checked += 1
        state = one.take_outcome(state, t, outcomes[0])
    assert checked > 3
