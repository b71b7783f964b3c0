"""The deeptutor-agentloop table on its own (no deeptutor needed): its source references, its
bundled cases, and what the engines find about the loop's documented bound."""

from __future__ import annotations

import re

import pytest
from turnbound.properties.adapters import deeptutor_agentloop as adapter
from turnbound.properties.adapters import pinned
from turnbound.properties.explore.explorer import Exploration, explore
from turnbound.reference.cases import check_case
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.monitors import check_trace
from turnbound.reference.profiles import load_profile, profile_cases
from turnbound.reference.table import Table

PROFILE = "deeptutor-agentloop"
SOURCE_LINE = re.compile(r"\bL\d+(-\d+)?\b")


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


@pytest.fixture(scope="module")
def explored(table: Table) -> dict[int, Exploration]:
    """Every exploration of this module, by maxRounds (each takes seconds: explore once)."""
    return {m: explore(table, {"maxRounds": m}) for m in (0, 1)}


def _case(table: Table, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in profile_cases(table) if c.name == name)


def test_every_transition_names_the_source_lines_it_models(table: Table) -> None:
    unnamed = [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)]
    assert unnamed == []
    assert table.variant_of == "deeptutor-scheduler"


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_the_documented_bound_is_in_the_table_as_refuted(table: Table) -> None:
    claims = {c.name: c for c in table.bounds}
    assert claims["documented_bound"].expect == "violated"
    assert "exploration + 4" in claims["documented_bound"].doc
    assert claims["tight_rounds_bound"].expect == "holds"


def test_the_bound_breaking_case_is_exploration_plus_five(table: Table) -> None:
    """Replayable witness: maxRounds=1, six rounds, and only the documented bound breaks."""
    result = check_case(table, _case(table, "documented_bound_exceeded"))
    assert result.passed, result.mismatches
    trace = result.trace
    assert trace is not None
    budget = trace.variables["exploration_budget"]
    assert trace.counters["rounds"] == budget + 5
    assert trace.variables["forced_rounds"] == 1 and trace.variables["recovery"] is True
    assert check_trace(table, trace) == []


def test_a_guard_that_rejects_the_empty_probe_keeps_the_documented_bound(table: Table) -> None:
    result = check_case(table, _case(table, "salvage_probe_keeps_the_bound"))
    assert result.passed, result.mismatches
    assert result.trace is not None
    assert result.trace.counters["rounds"] == result.trace.variables["exploration_budget"] + 4


def test_salvage_after_visible_output_breaks_only_the_property_expected_to_break(table: Table) -> None:
    """The finding as a case: a non-transport failure after output is answered by a forced round."""
    result = check_case(table, _case(table, "partial_provider_failure_salvaged"))
    assert result.passed, result.mismatches
    assert result.trace is not None
    broken = check_trace(table, result.trace)
    assert [p.name for p in broken] == ["partial_failure_not_salvaged"]
    assert all(p.expect == "violated" for p in broken)


def test_the_forced_round_counts_in_rounds_but_in_neither_stage(table: Table) -> None:
    trace = check_case(table, _case(table, "ordinary_cap")).trace
    assert trace is not None
    c = trace.counters
    assert c["rounds"] == c["exploration_rounds"] + c["settlement_rounds"] + 1
    fallback = check_case(table, _case(table, "forced_round_failure_fallback")).trace
    assert fallback is not None
    assert fallback.counters["rounds"] == fallback.counters["exploration_rounds"]


@pytest.mark.parametrize("max_rounds", [0, 1])
def test_explorer_finds_the_tight_bound_and_refutes_the_documented_one(
    explored: dict[int, Exploration], max_rounds: int
) -> None:
    s = explored[max_rounds].summary
    assert s.complete and s.ok
    assert s.max["rounds"] == max(1, max_rounds) + 5
    assert s.claim("documented_bound").verdict == "violated"
    assert s.claim("tight_rounds_bound").verdict == "holds"
    assert s.claim("documented_bound_unless_forced_after_recovery").verdict == "holds"
    violation = s.violation("documented_bound")
    assert violation is not None and violation.replay_problem is None
    path = [step.transition for step in violation.witness.path]
    assert "recovery_round" in path and "reasoning_only_forced" in path


def test_explorer_refutes_salvage_after_visible_output_but_not_for_transport_errors(
    explored: dict[int, Exploration],
) -> None:
    s = explored[1].summary
    assert s.claim("partial_failure_not_salvaged").verdict == "violated"
    assert s.claim("transport_partial_not_salvaged").verdict == "holds"
    assert s.claim("no_replay_after_output").verdict == "holds"


def test_the_explorer_witness_replays_on_the_interpreter(
    table: Table, explored: dict[int, Exploration]
) -> None:
    """The shortest counterexample is a host script: run it again and get six rounds at maxRounds=1."""
    v = explored[1].summary.violation("documented_bound")
    assert v is not None
    trace = run(table, ScriptHost(Script(dict(v.witness.script))), {"maxRounds": 1})
    assert trace.terminal == "forced_finish"
    assert trace.counters["rounds"] == 6
    assert trace.ops[-3:] == ["call_round", "finish_guard", "forced_round"]


def test_a_missing_deeptutor_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(
        DefinitionError, match=r"deeptutor is not installed; install it with: pip install --no-deps"
    ):
        adapter.scheduler()


def test_another_deeptutor_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "1.7.0")
    with pytest.raises(
        DefinitionError,
        match=r"deeptutor 1\.7\.0 is installed, but this adapter and its table model 1\.6\.15",
    ):
        adapter.scheduler()


@pytest.mark.slow
@pytest.mark.parametrize("max_rounds", [2, 3])
def test_explorer_tight_bound_at_larger_budgets(table: Table, max_rounds: int) -> None:
    s = explore(table, {"maxRounds": max_rounds}).summary
    assert s.complete and s.ok
    assert s.max["rounds"] == max_rounds + 5


@pytest.mark.slow
def test_prover_settles_the_bounds_for_every_budget(table: Table) -> None:
    from turnbound.properties.prove.prover import Prover

    prover = Prover(table, timeout=300)
    results = {
        r.goal.name: r
        for r in prover.prove_all(
            [
                "settlement_overrun_only_by_recovery",
                "documented_bound_unless_forced_after_recovery",
                "documented_bound",
            ]
        )
    }
    assert results["settlement_overrun_only_by_recovery"].verdict == "proved"
    assert results["documented_bound_unless_forced_after_recovery"].verdict == "proved"
    assert results["documented_bound"].verdict == "refuted"
