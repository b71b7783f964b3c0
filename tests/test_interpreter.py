"""The reference interpreter: contracts, failures, abort, and the errors of a broken run."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from turnbound.reference.errors import DefinitionError, Livelock, Nondeterminism, ScriptExhausted, StuckState
from turnbound.reference.expr_parse import Symbol, parse_expr
from turnbound.reference.host import HostRaise, ObjectHost, Script, ScriptHost
from turnbound.reference.interpreter import outcome_script, run
from turnbound.reference.loader import load_table_text
from turnbound.reference.monitors import check_trace
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON
from turnbound.reference.types import BOOL, INT

TOOLS = {"hasTools": True, "hasText": False, "truncated": False, "reasoningBudgetExhausted": False}
ANSWER = {"hasTools": False, "hasText": True, "truncated": False, "reasoningBudgetExhausted": False}
EMPTY = {"hasTools": False, "hasText": False, "truncated": False, "reasoningBudgetExhausted": False}


def script(**queues: list[dict[str, Any]]) -> ScriptHost:
    return ScriptHost(Script.model_validate(queues))


def facts(**values: Any) -> dict[str, Any]:
    return {"facts": values}


def test_first_round_answer_finishes(deeptutor: Table) -> None:
    trace = run(deeptutor, script(call_round=[facts(**ANSWER)], finish=[facts()]))
    assert trace.terminal == "finish"
    assert trace.ops == ["call_round", "finish"]
    assert trace.counters == {"rounds": 1, "exploration_rounds": 1, "settlement_rounds": 0, "tool_steps": 0}
    assert trace.steps[0].args == {"mode": "exploration", "recovery": False}


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ({"hasTools": False, "hasText": True}, "incomplete: 'truncated' is missing"),
        ({**ANSWER, "hasTools": 1}, "hasTools=1 is outside its domain (bool)"),
        ({**ANSWER, "mood": "happy"}, "undeclared fields ['mood']"),
    ],
)
def test_call_round_contract(deeptutor: Table, bad: dict[str, Any], fragment: str) -> None:
    trace = run(deeptutor, script(call_round=[facts(**bad)]))
    assert trace.terminal == "contract_violation"
    assert trace.violation is not None and fragment in trace.violation
    assert trace.counters["rounds"] == 0


@pytest.mark.parametrize("extra", [2, -1])
def test_forced_finish_extra_rounds_outside_zero_one_is_rejected(deeptutor: Table, extra: int) -> None:
    host = script(
        call_round=[facts(**TOOLS)] * 2,
        dispatch_tools=[facts()] * 2,
        prepare_recovery=[facts(available=False)],
        forced_finish=[facts(extraRounds=extra)],
    )
    trace = run(deeptutor, host)
    assert trace.terminal == "contract_violation"
    assert trace.violation is not None and "extraRounds" in trace.violation and "int 0..1" in trace.violation
    assert trace.counters["rounds"] == 2  # the rejected value was never added


def test_undeclared_failure_is_a_contract_violation(deeptutor: Table) -> None:
    trace = run(deeptutor, script(call_round=[facts(**TOOLS)], dispatch_tools=[{"raise": "host_failure"}]))
    assert trace.terminal == "contract_violation"
    assert trace.violation is not None and "dispatch_tools may not raise 'host_failure'" in trace.violation


def test_failure_without_its_field_is_a_contract_violation(deeptutor: Table) -> None:
    trace = run(deeptutor, script(call_round=[{"raise": "host_failure"}]))
    assert trace.terminal == "contract_violation"
    assert trace.violation is not None and "'partial' is missing" in trace.violation


@pytest.mark.parametrize("op_index", range(4))
def test_abort_ends_the_run_at_any_operation_keeping_counted_effects(deeptutor: Table, op_index: int) -> None:
    """An abort raised inside the n-th host call: no later call, completed effects stay counted."""
    full = run(
        deeptutor,
        script(
            call_round=[facts(**TOOLS), facts(**TOOLS)],
            dispatch_tools=[facts(), facts()],
            prepare_recovery=[facts(available=False)],
            forced_finish=[facts(extraRounds=1)],
        ),
    )
    queues: dict[str, list[dict[str, Any]]] = {}
    for i, step in enumerate(full.steps):
        outcome = {"raise": "abort"} if i == op_index else step.outcome.to_json()
        queues.setdefault(step.op, []).append(outcome)
        if i == op_index:
            break
    trace = run(deeptutor, script(**queues))
    assert trace.terminal == "aborted"
    assert len(trace.steps) == op_index + 1
    before = full.steps[op_index - 1].counters if op_index else dict.fromkeys(trace.counters, 0)
    assert trace.counters == before
    assert check_trace(deeptutor, trace) == []


def test_later_nonpartial_failure_forces_finish_with_reason_error(deeptutor: Table) -> None:
    host = script(
        call_round=[facts(**TOOLS), {"raise": "host_failure", "fields": {"partial": False}}],
        dispatch_tools=[facts()],
        forced_finish=[facts(extraRounds=0)],
    )
    trace = run(deeptutor, host)
    assert trace.ops[-1] == "forced_finish"
    assert trace.steps[-1].args == {"reason": "error"}


def test_empty_rounds_are_recovered_then_forced(deeptutor: Table) -> None:
    host = script(call_round=[facts(**EMPTY)] * 3, forced_finish=[facts(extraRounds=1)])
    trace = run(deeptutor, host, {"explorationBudget": 5, "emptyRecoveryBudget": 2})
    assert trace.ops == ["call_round", "call_round", "call_round", "forced_finish"]
    assert trace.steps[-1].args == {"reason": "budget"}
    assert trace.counters["rounds"] == 4


def test_script_exhausted_names_the_operation_and_call(deeptutor: Table) -> None:
    with pytest.raises(ScriptExhausted, match=r"call #2 of 'call_round'"):
        run(deeptutor, script(call_round=[facts(**TOOLS)], dispatch_tools=[facts()]))


def test_replaying_a_trace_gives_the_same_trace(deeptutor: Table) -> None:
    host = script(
        call_round=[facts(**TOOLS), facts(**TOOLS), facts(**ANSWER)],
        dispatch_tools=[facts(), facts()],
        prepare_recovery=[facts(available=True)],
        finish=[facts()],
    )
    first = run(deeptutor, host)
    again = run(deeptutor, ScriptHost(Script.model_validate(outcome_script(first))))
    assert again == first


class _Host:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def call_round(self, mode: str, recovery: bool) -> dict[str, bool]:
        self.calls.append(f"call_round:{mode}")
        return TOOLS if len(self.calls) == 1 else ANSWER

    def dispatch_tools(self) -> dict[str, bool]:
        self.calls.append("dispatch_tools")
        raise HostRaise("abort")


def test_object_host(deeptutor: Table) -> None:
    host = _Host()
    trace = run(deeptutor, ObjectHost(host))
    assert host.calls == ["call_round:exploration", "dispatch_tools"]
    assert trace.terminal == "aborted"


def test_unknown_parameter_is_rejected(deeptutor: Table) -> None:
    with pytest.raises(DefinitionError, match="unknown parameter 'budget'"):
        run(deeptutor, script(), {"budget": 1})


def test_parameter_outside_its_domain_is_rejected(deeptutor: Table) -> None:
    with pytest.raises(DefinitionError, match="explorationBudget=-1 is outside"):
        run(deeptutor, script(), {"explorationBudget": -1})


def _with_guard(table: Table, tid: str, text: str) -> Table:
    """The table with one guard replaced, past the loader (which would reject it): a runtime check."""
    t = table.transition(tid)
    scope = {p.name: Symbol(p.name, "param", INT) for p in table.parameters}
    scope |= {v.name: Symbol(v.name, "var", v.type) for v in table.variables}
    changed = dataclasses.replace(t, guard=parse_expr(text, scope, BOOL))
    transitions = tuple(changed if x.id == tid else x for x in table.transitions)
    outgoing = {loc: tuple(changed if x.id == tid else x for x in ts) for loc, ts in table.outgoing.items()}
    return dataclasses.replace(table, transitions=transitions, outgoing=outgoing)


def test_stuck_state_names_location_and_candidates(tiny_text: str) -> None:
    table = _with_guard(load_table_text(tiny_text), "stop", "steps > budget")
    with pytest.raises(StuckState) as info:
        run(table, script(step=[facts(more=True)] * 2), {"budget": 2})
    assert info.value.location == "loop"
    assert info.value.candidates == ["work", "stop"]
    assert "steps=2" in str(info.value)


def test_overlapping_guards_are_nondeterminism(tiny_text: str) -> None:
    table = _with_guard(load_table_text(tiny_text), "stop", "steps >= 0")
    with pytest.raises(Nondeterminism) as info:
        run(table, script(), {"budget": 1})
    assert info.value.enabled == ["work", "stop"]


def test_unbounded_loop_stops_at_the_horizon(tiny_text: str) -> None:
    table = _with_guard(_with_guard(load_table_text(tiny_text), "work", "true"), "stop", "false")
    trace = run(table, ObjectHost(type("Always", (), {"step": lambda self: {"more": True}})()), max_steps=50)
    assert trace.terminal == HORIZON
    assert len(trace.steps) == 50


def test_outcome_needs_exactly_one_kind() -> None:
    with pytest.raises(ValueError, match="either"):
        Outcome.model_validate({"facts": {}, "raise": "abort"})


SPIN = """
[profile]
name = "spin"
initial = "a"

[variables.n]
type = "int"
init = "0"

[operations.finish]

[locations]
a = "first"
b = "second"

[terminals]
done = "never reached"

[[transitions]]
id = "ab"
from = "a"
to = "b"

[[transitions]]
id = "ba"
from = "b"
guard = "n >= 0"
update = { n = "n + 1" }
to = "a"

[[transitions]]
id = "stop"
from = "b"
guard = "n < 0"
op = "finish"
to = "done"
"""


def test_internal_livelock_is_an_error_not_a_hang() -> None:
    table = load_table_text(SPIN)
    with pytest.raises(Livelock, match="internal transitions in a row without a host call"):
        run(table, script())


@pytest.mark.parametrize(
    ("back", "loop"), [("a", "ab -> ba -> ab"), ("b", "ab -> bb -> bb")], ids=["two", "one"]
)
def test_a_state_that_comes_back_between_host_calls_is_a_livelock(back: str, loop: str) -> None:
    """The states are remembered only from the second internal transition on; a loop of one
    transition or of two is still found at the first repeat."""
    text = SPIN.replace('update = { n = "n + 1" }\n', "")
    if back == "b":
        text = text.replace('id = "ba"\nfrom = "b"', 'id = "bb"\nfrom = "b"').replace(
            'to = "a"\n\n[[', 'to = "b"\n\n[['
        )
    with pytest.raises(Livelock, match=f"loop at location '{back}' without a host call \\({loop}\\)"):
        run(load_table_text(text), script())


def test_one_rendering_of_an_outcome_in_every_report() -> None:
    from turnbound.properties.cli.interpret import fmt_outcome
    from turnbound.properties.conformance.runner import fmt_call
    from turnbound.properties.explore.explorer import describe_outcome
    from turnbound.reference.outcomes import outcome_text
    from turnbound.reference.trace import Step

    cases = [
        (Outcome.of_raise("host_failure", partial=True), "raise host_failure (partial=true)"),
        (Outcome.of_raise("abort"), "raise abort"),
        (Outcome(facts={}), "ok"),
        (Outcome(facts={"available": False}), "available=false"),
        (Outcome(facts={"a": False, "b": False}), "a=false, b=false"),
        (Outcome(facts={"hasTools": True, "hasText": False, "extraRounds": 1}), "hasTools, extraRounds=1"),
    ]
    for outcome, text in cases:
        step = Step(op="op", args={}, outcome=outcome, counters={}, transition="t")
        assert outcome_text(outcome) == text
        assert describe_outcome(outcome) == fmt_outcome(step) == text
        assert fmt_call("op", {}, outcome) == f"op() -> {text}"
