"""The tool-call budget: trailers, the cap, the forced final, the kill switch, budget_exhausted."""

from __future__ import annotations

from typing import Any

import pytest
from turnbound.properties.explore.sweep import sweep, tally
from turnbound.properties.prove.prover import Prover
from turnbound.reference.cases import check_case
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.monitors import check_trace
from turnbound.reference.profiles import load_profile, profile_cases
from turnbound.reference.trace import Trace

NAME = "tool-call-budget"
QUIET = [{"facts": {}}] * 64
"""Outcomes for the operations that report nothing."""


def reply(calls: int = 0, content: bool = False, scaffolding: bool = False) -> dict[str, Any]:
    return {"facts": {"calls": calls, "content": content, "scaffolding": scaffolding}}


def turn(replies: list[dict[str, Any]], *, deflected: bool = False, **params: int) -> Trace:
    script = Script.model_validate(
        {
            "route": [{"facts": {"deflected": deflected}}],
            "request": replies,
            **{op: QUIET for op in ("show_tool_calls", "run_tool", "fallback_answer", "done", "error")},
        }
    )
    return run(load_profile(NAME), ScriptHost(script), params)


def trailers(trace: Trace) -> list[tuple[int, str]]:
    return [(int(s.args["remaining"]), str(s.args["trailer"])) for s in trace.steps if s.op == "run_tool"]


def requests(trace: Trace) -> list[dict[str, Any]]:
    return [dict(s.args) for s in trace.steps if s.op == "request"]


def done_flag(trace: Trace) -> bool:
    (flag,) = [s.args["budget_exhausted"] for s in trace.steps if s.op == "done"]
    return bool(flag)


def wording(n: int) -> str:
    return "spent" if n == 0 else "one" if n == 1 else "many"


def test_every_case_reproduces() -> None:
    table = load_profile(NAME)
    assert table.readings
    cases = profile_cases(table)
    names = {c.name for c in cases}
    assert {
        "decreasing_trailer",
        "max_rounds_one",
        "kill_switch",
        "cap_call_only_forced_final",
        "deflected_structured_calls",
        "continue_fresh_budget",
    } <= names
    for case in cases:
        result = check_case(table, case)
        assert result.passed, (case.name, result.mismatches)
        assert result.trace is not None
        broken = {p.name for p in check_trace(table, result.trace)}
        assert all(p.expect == "violated" for p in table.trace_properties if p.name in broken)
        empty = case.name in ("kill_switch_call_only", "deflected_call_only")
        assert ("empty_reply_never_answers" in broken) == empty, case.name


@pytest.mark.parametrize("max_rounds", [1, 2, 3, 10])
def test_trailers_count_down_to_the_spent_form_at_the_cap(max_rounds: int) -> None:
    trace = turn([reply(calls=1)] * max_rounds + [reply(content=True)], max_rounds=max_rounds)
    expected = [(n, wording(n)) for n in range(max_rounds - 1, -1, -1)]
    assert trailers(trace) == expected
    assert trace.counters["rounds"] == max_rounds
    assert requests(trace)[-1] == {"tools": False, "wrapup": True, "correction": False}
    assert all(r["tools"] for r in requests(trace)[:-1])
    assert trace.counters["requests"] == max_rounds + 1
    assert done_flag(trace) is True


def test_the_default_budget_is_ten_with_trailers_nine_to_spent() -> None:
    table = load_profile(NAME)
    assert table.defaults() == {"max_rounds": 10}
    trace = turn([reply(calls=1)] * 10 + [reply(content=True)])
    assert [n for n, _ in trailers(trace)] == list(range(9, -1, -1))
    assert [w for _, w in trailers(trace)][-2:] == ["one", "spent"]


def test_the_kill_switch_sends_exactly_one_request_without_tools() -> None:
    for replied in (reply(content=True), reply(calls=2), reply(calls=1, content=True)):
        trace = turn([replied], max_rounds=0)
        assert requests(trace) == [{"tools": False, "wrapup": False, "correction": False}]
        assert trailers(trace) == []
        assert "show_tool_calls" not in trace.ops and "run_tool" not in trace.ops
        assert done_flag(trace) is False


def test_a_turn_that_answers_before_the_cap_leaves_the_flag_absent() -> None:
    trace = turn([reply(calls=1)] * 3 + [reply(content=True)])
    assert done_flag(trace) is False
    assert trailers(trace) == [(9, "many"), (8, "many"), (7, "many")]


def test_calls_of_the_forced_final_are_rejected_and_the_fallback_answers() -> None:
    trace = turn([reply(calls=1)] * 2 + [reply(calls=2)], max_rounds=2)
    assert trace.counters["rejected_calls"] == 2
    assert trace.counters["rounds"] == 2 and trace.counters["tool_frames"] == 2
    forced = trace.ops.index("request", len(trace.ops) - 3)
    assert trace.ops[forced:] == ["request", "fallback_answer", "done"]
    assert done_flag(trace) is True


def test_a_scaffolding_only_forced_final_is_answered_by_the_fallback_not_an_error() -> None:
    trace = turn([reply(calls=1), reply(scaffolding=True)], max_rounds=1)
    assert trace.terminal == "done" and "error" not in trace.ops
    assert trace.ops[-2:] == ["fallback_answer", "done"]


def test_scaffolding_only_twice_in_a_row_off_the_cap_is_the_malformed_reply_error() -> None:
    trace = turn([reply(scaffolding=True), reply(scaffolding=True)], max_rounds=3)
    assert trace.terminal == "malformed_reply"
    assert [r["correction"] for r in requests(trace)] == [False, True]
    broken = turn([reply(scaffolding=True), reply(calls=1), reply(scaffolding=True), reply(content=True)])
    assert broken.terminal == "done", "a reply with calls breaks the streak"


def test_a_deflected_turn_never_shows_or_runs_structured_calls() -> None:
    trace = turn([reply(calls=2, content=True)], deflected=True)
    assert requests(trace) == [{"tools": False, "wrapup": False, "correction": False}]
    assert trace.counters["dropped_calls"] == 2 and trace.counters["tool_frames"] == 0
    assert trace.ops == ["route", "request", "done"]


def test_only_the_first_call_of_a_reply_runs() -> None:
    trace = turn([reply(calls=2), reply(content=True)], max_rounds=3)
    assert trace.counters["tool_frames"] == 2 and trace.counters["rounds"] == 1
    shown = [s.args["count"] for s in trace.steps if s.op == "show_tool_calls"]
    assert shown == [2] and trace.ops.count("run_tool") == 1


def test_continue_is_a_new_turn_with_the_whole_budget() -> None:
    exhausted = turn([reply(calls=1)] * 10 + [reply(content=True)])
    assert done_flag(exhausted) is True
    again = turn([reply(calls=1), reply(content=True)])
    assert trailers(again) == [(9, "many")]
    assert again.counters["requests"] == 2


# -- the engines agree with the claims ---------------------------------------------------------


def test_the_explorer_confirms_every_claim_and_the_tight_bounds() -> None:
    table = load_profile(NAME)
    summaries = sweep(table, jobs=1, progress=False)
    assert summaries and all(s.ok for s in summaries)
    assert all(t.unexpected == 0 for t in tally(summaries))
    for s in summaries:
        m = s.params["max_rounds"]
        assert s.max["rounds"] == m
        assert s.max["requests"] == (2 if m == 0 else 2 * m + 1)


@pytest.mark.slow
def test_the_prover_settles_every_claim_for_all_budgets() -> None:
    results = Prover(load_profile(NAME)).prove_all()
    assert results
    for r in results:
        assert r.ok, (r.goal.name, r.verdict, r.reason)
    by_name = {r.goal.name: r for r in results}
    for bound in ("executions_within_budget", "budgeted_requests", "all_requests"):
        assert by_name[bound].tight is True, bound
