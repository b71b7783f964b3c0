"""The dsh turn, unguarded and with the turn-budget guard under both readings of maxFires."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from turnbound.properties.explore.explorer import explore
from turnbound.properties.explore.sweep import sweep, tally
from turnbound.properties.prove.prover import Prover
from turnbound.reference.cases import check_case
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.monitors import check_trace
from turnbound.reference.profiles import load_profile, profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, Trace

UNGUARDED, GUARD, REFIRE = "dsh-turn-unguarded", "dsh-turn-guard", "dsh-turn-guard-refire"
DSH = (UNGUARDED, GUARD, REFIRE)
GUARDS = (GUARD, REFIRE)


def once_bound(m: int, g: int, f: int) -> int:
    """The profile's tight bound on steps without user input (one request per crossing)."""
    return m + (f if f <= 1 else g + 1)


def refire_bound(m: int, g: int, f: int) -> int:
    """The variant's tight bound (a request at every past-budget step until maxFires are spent)."""
    return m + min(f, g + 1)


BOUND = {GUARD: once_bound, REFIRE: refire_bound}
NOTICES = {GUARD: lambda g, f: min(f, 1), REFIRE: lambda g, f: min(f, g + 1)}


def turn(
    steps: int, *, stop: bool = False, typed: frozenset[int] = frozenset(), cancel_typed: bool = False
) -> Script:
    """A model that calls tools for `steps` steps (the last one stops if `stop`); the user
    types during the steps in `typed`."""
    model: list[dict[str, Any]] = [
        {"facts": {"toolCalls": not (stop and i == steps), "userTyped": i in typed}}
        for i in range(1, steps + 1)
    ]
    return Script.model_validate(
        {
            "model_step": model,
            "run_tools": [{"facts": {}}] * steps,
            "cancel": [{"facts": {"userTyped": cancel_typed}}],
        }
    )


def go(name: str, script: Script, **params: int) -> Trace:
    return run(load_profile(name), ScriptHost(script), params)


def notice_steps(trace: Trace) -> list[int]:
    return [int(s.args["step"]) for s in trace.steps if s.op == "model_step" and s.args["notice"]]


# -- the tables and their cases ---------------------------------------------------------


@pytest.mark.parametrize("name", DSH)
def test_table_loads_with_its_readings_and_cases(name: str) -> None:
    table = load_profile(name)
    assert table.readings, "every open point of the seed is stated"
    cases = profile_cases(table)
    assert len(cases) >= 7
    for case in cases:
        result = check_case(table, case)
        assert result.passed, (case.name, result.mismatches)
        assert result.trace is not None
        assert [p.name for p in check_trace(table, result.trace) if p.expect == "holds"] == []


def test_only_the_unguarded_turn_is_unbounded() -> None:
    assert load_profile(UNGUARDED).step_horizon is not None
    assert load_profile(GUARD).step_horizon is None
    assert load_profile(REFIRE).variant_of == GUARD
    assert load_profile(GUARD).variant_of is None


def test_the_three_tables_share_one_wire_vocabulary() -> None:
    ops = {n: load_profile(n).operations for n in DSH}
    for op in ("model_step", "run_tools"):
        shapes = {(tuple(a for a, _ in o[op].args), tuple(f.name for f in o[op].facts)) for o in ops.values()}
        assert len(shapes) == 1, op
    assert "cancel" not in ops[UNGUARDED] and "cancel" in ops[GUARD]


# -- the unguarded turn has no ceiling ----------------------------------------------------


def test_a_model_that_keeps_calling_tools_reaches_the_horizon() -> None:
    table = load_profile(UNGUARDED)
    assert table.step_horizon is not None
    trace = go(UNGUARDED, turn(table.step_horizon))
    assert trace.terminal == HORIZON
    assert trace.counters["steps"] == table.step_horizon // 2


@pytest.mark.parametrize("ceiling", [0, 5, 20, 40])
def test_no_claimed_ceiling_holds_without_a_guard(ceiling: int) -> None:
    """For each K, a turn of K + 1 steps ends on its own, past the ceiling."""
    trace = go(UNGUARDED, turn(ceiling + 1, stop=True), claimedCeiling=ceiling)
    assert trace.terminal == "completed"
    assert trace.counters["steps"] == ceiling + 1 > ceiling


def test_a_user_message_does_not_end_the_unguarded_turn() -> None:
    trace = go(UNGUARDED, turn(6, stop=True, typed=frozenset({2})))
    assert trace.terminal == "completed" and trace.counters["steps"] == 6
    assert [s.args["admitted"] for s in trace.steps if s.op == "model_step"] == [0, 0, 1, 0, 0, 0]


# -- the guard ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GUARDS)
def test_a_turn_within_maxSteps_is_never_touched(name: str) -> None:
    for m in (1, 5, 20):
        trace = go(name, turn(m, stop=True), maxSteps=m)
        assert trace.terminal == "completed"
        assert notice_steps(trace) == [] and "cancel" not in trace.ops


@pytest.mark.parametrize("name", GUARDS)
@pytest.mark.parametrize(("m", "g", "f"), [(20, 8, 2), (3, 0, 1), (3, 2, 0), (4, 1, 3), (2, 5, 3)])
def test_a_model_that_never_stops_is_cancelled_at_the_tight_bound(name: str, m: int, g: int, f: int) -> None:
    bound = BOUND[name](m, g, f)
    trace = go(name, turn(bound + 10), maxSteps=m, gracefulSteps=g, maxFires=f)
    assert trace.terminal == "aborted"
    assert trace.counters["steps"] == bound
    assert trace.counters["notices"] == NOTICES[name](g, f) <= f
    assert trace.ops[-1] == "cancel"
    assert trace.steps[-1].args == {"cause": "turn_budget", "keepInbox": True}


def test_the_readings_differ_exactly_when_two_to_gracefulSteps_requests_are_allowed() -> None:
    for m, g, f in itertools.product(range(3), range(5), range(6)):
        differ = once_bound(m, g, f) != refire_bound(m, g, f)
        assert differ == (2 <= f <= g), (m, g, f)
    defaults = load_profile(GUARD).defaults()
    assert defaults == {"maxSteps": 20, "gracefulSteps": 8, "maxFires": 2, "maxUserMessages": 1}
    assert (once_bound(20, 8, 2), refire_bound(20, 8, 2)) == (29, 22)


@pytest.mark.parametrize("name", GUARDS)
def test_a_user_reengaging_at_step_30_gets_maxSteps_fresh_steps(name: str) -> None:
    """The seed's example: with a baseline, the room after step 30 is steps 31..50."""
    trace = go(name, turn(90, typed=frozenset({15, 30})), maxUserMessages=2)
    assert notice_steps(trace)[0] == 51
    quiet = go(name, turn(50, stop=True, typed=frozenset({15, 30})), maxUserMessages=2)
    assert quiet.terminal == "completed" and notice_steps(quiet) == []
    alone = go(name, turn(50, stop=True))
    assert notice_steps(alone)[0] == 21, "without the user, step 21 is already past the budget"


@pytest.mark.parametrize("name", GUARDS)
def test_a_notice_is_never_counted_as_a_user_message(name: str) -> None:
    trace = go(name, turn(90, typed=frozenset({21})), maxUserMessages=1)
    noticed = [s for s in trace.steps if s.op == "model_step" and s.args["notice"]]
    assert noticed and all(s.args["admitted"] == 0 for s in noticed)
    assert trace.counters["admitted"] == trace.counters["user_messages"] == 1
    assert trace.counters["notices"] >= 2, "the user's reply rebased; the notice itself never does"


@pytest.mark.parametrize("name", GUARDS)
def test_a_message_typed_while_the_turn_is_cancelled_stays_in_the_inbox(name: str) -> None:
    trace = go(name, turn(10, cancel_typed=True), maxSteps=2, maxFires=0)
    assert trace.terminal == "aborted"
    assert trace.counters["inbox"] == trace.counters["user_messages"] == 1
    assert trace.counters["admitted"] == 0


@pytest.mark.parametrize("name", GUARDS)
def test_more_user_messages_than_the_scenario_is_a_contract_violation(name: str) -> None:
    trace = go(name, turn(5, typed=frozenset({1, 2})), maxUserMessages=1)
    assert trace.terminal == "contract_violation"
    assert trace.counters["steps"] == 2


# -- the engines agree with the claims -------------------------------------------------------


@pytest.mark.parametrize("name", DSH)
def test_the_explorer_confirms_every_claim_over_the_default_ranges(name: str) -> None:
    table = load_profile(name)
    summaries = sweep(table, jobs=1, progress=False)
    assert summaries and all(s.ok for s in summaries)
    assert all(t.unexpected == 0 for t in tally(summaries))
    if table.step_horizon is None:
        assert all(s.complete for s in summaries)


@pytest.mark.parametrize("name", GUARDS)
def test_the_explorer_finds_the_exact_worst_case_without_user_input(name: str) -> None:
    table: Table = load_profile(name)
    for m, g, f in itertools.product((0, 2), (0, 1, 3), (0, 1, 2, 4)):
        params = {"maxSteps": m, "gracefulSteps": g, "maxFires": f, "maxUserMessages": 0}
        summary = explore(table, params).summary
        assert summary.complete, params
        # steps_per_turn needs a user message to be refuted; every other claim is as expected
        assert all(c.as_expected for c in summary.claims if c.expect == "holds"), params
        assert summary.max["steps"] == BOUND[name](m, g, f), params
        assert summary.max["notices"] == NOTICES[name](g, f), params


@pytest.mark.parametrize(
    "name",
    [UNGUARDED, pytest.param(GUARD, marks=pytest.mark.slow), pytest.param(REFIRE, marks=pytest.mark.slow)],
)
def test_the_prover_settles_every_claim_for_all_parameter_values(name: str) -> None:
    results = Prover(load_profile(name)).prove_all()
    assert results
    for r in results:
        assert r.ok, (r.goal.name, r.verdict, r.reason)
    by_name = {r.goal.name: r for r in results}
    if name in GUARDS:
        assert by_name["period_steps_bound"].tight is True
        assert by_name["period_notices_bound"].tight is True
        assert by_name["steps_per_turn"].verdict == "refuted"
    else:
        assert by_name["assumed_ceiling"].verdict == "refuted"
        assert by_name["assumed_ceiling"].witness is not None
