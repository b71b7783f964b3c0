"""The langgraph-react table on its own (no langgraph needed): its source references, its
cases, what the prover settles, and the closed forms the docs page states."""

from __future__ import annotations

import re

import pytest
from turnbound.properties.adapters import pinned
from turnbound.properties.explore.explorer import explore
from turnbound.properties.prove.prover import Prover
from turnbound.reference.cases import check_case
from turnbound.reference.host import ScriptHost, parse_script
from turnbound.reference.interpreter import run
from turnbound.reference.profiles import load_profile, profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON

PROFILE = "langgraph-react"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


def _always_tool(n: int = 60) -> dict[str, list[dict[str, object]]]:
    return {"model_request": [{"facts": {"toolCall": True}}] * n, "run_tool": [{"facts": {}}] * n}


def _answer_at_2() -> dict[str, list[dict[str, object]]]:
    return {
        "model_request": [{"facts": {"toolCall": True}}, {"facts": {"toolCall": False}}],
        "run_tool": [{"facts": {}}],
    }


def test_every_transition_names_the_source_lines_it_models(table: Table) -> None:
    assert [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)] == []


def test_the_knob_and_its_modes_have_their_real_defaults(table: Table) -> None:
    defaults = table.defaults()
    assert defaults["recursion_limit"] == 9999  # create_agent binds it with with_config
    assert defaults["limited"] == 1
    assert defaults["prebuilt"] == 0  # the entry point users are told to use
    assert set(table.counters) >= {"model_requests", "tool_executions", "steps"}


def test_every_case_passes(table: Table) -> None:
    cases = profile_cases(table)
    assert len(cases) >= 16
    failed = {c.name: r.mismatches for c in cases if not (r := check_case(table, c)).passed}
    assert failed == {}


@pytest.mark.parametrize("prebuilt", [0, 1])
@pytest.mark.parametrize("limit", [-1, 0, 1, 2, 3, 4, 5, 6])
def test_always_calling_model_meets_both_bounds_exactly(table: Table, limit: int, prebuilt: int) -> None:
    """Tight at every limit of the range: ceil(N/2) requests, floor((N - prebuilt)/2) tool
    executions (create_react_agent replaces its last call at even N), none for N < 1."""
    params = {"recursion_limit": limit, "limited": 1, "prebuilt": prebuilt}
    trace = run(table, ScriptHost(parse_script(_always_tool(), "always")), params)
    want = (0, 0) if limit < 1 else ((limit + 1) // 2, (limit - prebuilt) // 2)
    assert (trace.counters["model_requests"], trace.counters["tool_executions"]) == want
    expected_end = (
        "invalid_limit"
        if limit < 1
        else ("need_more_steps" if prebuilt and limit % 2 == 0 else "recursion_error")
    )
    assert trace.terminal == expected_end


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_answer_at_step_2_needs_four_super_steps(table: Table, limit: int) -> None:
    """The answer comes at super-step 3 but returns only when recursion_limit >= 4."""
    trace = run(table, ScriptHost(parse_script(_answer_at_2(), "answer2")), {"recursion_limit": limit})
    assert trace.terminal == ("answer" if limit >= 4 else "recursion_error")


def test_no_limit_is_unbounded(table: Table) -> None:
    trace = run(table, ScriptHost(parse_script(_always_tool(), "always")), {"limited": 0})
    assert trace.terminal == HORIZON
    assert trace.counters["model_requests"] == table.step_horizon // 2


def test_prover_settles_every_claim_for_every_limit(table: Table) -> None:
    results = {r.goal.name: r for r in Prover(table, timeout=120).prove_all()}
    assert {n for n, r in results.items() if not r.ok} == set()
    for name in ("model_requests_bound", "tool_executions_bound", "steps_bound"):
        assert results[name].verdict == "proved" and results[name].tight, name


def test_an_odd_limit_makes_the_prebuilt_agent_raise(table: Table) -> None:
    summary = explore(table, {"recursion_limit": 3, "limited": 1, "prebuilt": 1}).summary
    assert summary.ok
    assert (
        summary.terminals.get("recursion_error", 0) > 0 and summary.terminals.get("need_more_steps", 0) == 0
    )
    even = explore(table, {"recursion_limit": 4, "limited": 1, "prebuilt": 1}).summary
    assert even.terminals.get("recursion_error", 0) == 0 and even.terminals.get("need_more_steps", 0) > 0


def test_a_missing_framework_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from turnbound.properties.adapters import langgraph_react as adapter
    from turnbound.reference.errors import DefinitionError

    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: {**adapter.VERSIONS, "langgraph": None}[d])
    with pytest.raises(DefinitionError, match=r"langgraph is not installed; install it with: pip install"):
        adapter.load_langgraph()
    monkeypatch.setattr(pinned, "installed_version", lambda d: {**adapter.VERSIONS, "langgraph": "0.6.0"}[d])
    with pytest.raises(DefinitionError, match=r"langgraph 0.6.0 is installed, but .* model 1.2.24"):
        adapter.load_langgraph()
