"""Guards overlap or leave a gap: the loader rejects the table with z3's witness, in one line."""

from __future__ import annotations

import pytest
from turnbound.reference.errors import TableError
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.loader import load_table_text
from turnbound.reference.table import Table
from turnbound.reference.wellformed import (
    GuardProblem,
    available_facts,
    guard_problems,
    nonnegative_variables,
    unchecked,
)


def _rejected(text: str) -> str:
    with pytest.raises(TableError) as info:
        load_table_text(text, source="bad.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bad.toml: location ")
    return message


def _problem(text: str) -> tuple[Table, GuardProblem]:
    with unchecked():
        table = load_table_text(text, source="bad.toml")
    problems = guard_problems(table)
    assert len(problems) == 1
    return table, problems[0]


def _enabled(table: Table, problem: GuardProblem) -> list[str]:
    """Which guards of the location hold at the problem's witness valuation (read by the interpreter)."""
    env = dict(problem.witness)
    return [t.id for t in table.outgoing[problem.location] if compile_expr(t.guard)(env)]


def test_the_bundled_profile_is_well_formed(deeptutor: Table) -> None:
    assert guard_problems(deeptutor) == []


def test_overlapping_guards_are_rejected_with_both_transitions_and_a_witness(tiny_text: str) -> None:
    text = tiny_text.replace('guard = "steps >= budget"', 'guard = "steps >= 1"')
    message = _rejected(text)
    assert "location 'loop'" in message
    assert "'work' and 'stop' overlap" in message
    table, problem = _problem(text)
    assert problem.kind == "overlap"
    assert problem.transitions == ("work", "stop")
    assert f"hold at {', '.join(f'{k}={v}' for k, v in problem.witness)}" in message
    assert _enabled(table, problem) == ["work", "stop"]


def test_a_gap_between_guards_is_rejected_with_the_uncovered_case(tiny_text: str) -> None:
    text = tiny_text.replace('guard = "steps >= budget"', 'guard = "steps > budget"')
    message = _rejected(text)
    assert "no outgoing transition is enabled at budget=" in message
    assert "work: `steps < budget`; stop: `steps > budget`" in message
    table, problem = _problem(text)
    assert problem.kind == "uncovered"
    assert dict(problem.witness)["steps"] == dict(problem.witness)["budget"]
    assert _enabled(table, problem) == []


def test_a_gap_only_for_some_parameter_values_is_found(tiny_text: str) -> None:
    # Covers every case while budget <= 5 (what an explorer with a small range would see), not beyond.
    text = tiny_text.replace('guard = "steps >= budget"', 'guard = "steps >= budget and budget <= 5"')
    table, problem = _problem(text)
    assert problem.kind == "uncovered"
    assert dict(problem.witness)["budget"] > 5
    assert _enabled(table, problem) == []


def test_fact_guards_are_checked_within_the_fact_domain(tiny_text: str) -> None:
    int_fact = tiny_text.replace(
        'facts.more = { type = "bool" }', 'facts.more = { type = "int", min = 0, max = 1 }'
    )
    covering = int_fact.replace('guard = "more"', 'guard = "more == 1"').replace(
        'guard = "not more"', 'guard = "more == 0"'
    )
    load_table_text(covering)  # 0 and 1 are all the domain holds
    widened = covering.replace("min = 0, max = 1", "min = 0, max = 2")
    message = _rejected(widened)
    assert "location 'stepped'" in message
    assert "more=2" in message


def test_counters_are_assumed_nonnegative_only_when_the_table_keeps_them_so(tiny_text: str) -> None:
    # `steps > 0` / `steps == 0` cover every case only for a counter that never goes negative.
    guarded = tiny_text.replace('guard = "more"', 'guard = "more and steps > 0"').replace(
        'guard = "not more"', 'guard = "not more or steps == 0"'
    )
    table = load_table_text(guarded)
    assert nonnegative_variables(table) == ("steps",)
    decrementing = guarded.replace('update = { steps = "steps + 1" }', 'update = { steps = "steps - 1" }')
    with unchecked():
        assert nonnegative_variables(load_table_text(decrementing)) == ()
    assert "location 'stepped'" in _rejected(decrementing)


def test_readable_facts_follow_the_entering_edges(deeptutor: Table) -> None:
    facts = available_facts(deeptutor)
    assert facts["loop"] == {}
    assert set(facts["round_done"]) >= {"hasTools", "hasText", "truncated"}
    assert set(facts["round_failed"]) == {"partial"}


def test_unchecked_loads_an_ill_formed_table_for_runtime_tests(tiny_text: str) -> None:
    with unchecked():
        table = load_table_text(tiny_text.replace('guard = "steps >= budget"', 'guard = "steps >= 0"'))
    assert [t.id for t in table.outgoing["loop"]] == ["work", "stop"]
