"""The pydantic-ai table on its own (no pydantic-ai needed): source references, cases, the
prover's verdicts, and the bounds at every knob value the real-code test measures."""

from __future__ import annotations

import re
import tomllib

import pytest
from turnbound.properties.adapters import pinned
from turnbound.properties.adapters import pydantic_ai as adapter
from turnbound.properties.explore.explorer import explore
from turnbound.properties.prove.prover import Prover
from turnbound.reference.cases import check_case
from turnbound.reference.errors import DefinitionError, ScriptExhausted
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_cases, table_path
from turnbound.reference.table import Table

PROFILE = "pydantic-ai"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")
DEFAULTS = {"requestLimit": 50, "requestLimited": 1, "toolCallsLimit": 0, "toolCallsLimited": 0}


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


def test_every_transition_cites_the_installed_source(table: Table) -> None:
    assert [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)] == []
    profile = tomllib.loads(table_path(PROFILE).read_text(encoding="utf-8"))["profile"]
    assert profile["source"].startswith(f"pydantic-ai-slim=={adapter.VERSION}, ")


def test_the_knobs_have_the_real_defaults(table: Table) -> None:
    defaults = table.defaults()
    assert {k: defaults[k] for k in DEFAULTS} == DEFAULTS  # request_limit=50, tool_calls_limit=None
    assert defaults["outputRetries"] == defaults["toolRetries"] == 1
    for knob in ("requestLimit", "toolCallsLimit", "outputRetries", "toolRetries"):
        lo, hi = next(p.range for p in table.parameters if p.name == knob)
        assert lo < 0 <= hi, knob  # the explore range holds 0 and a negative value


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_every_bundled_case_passes(table: Table) -> None:
    cases = profile_cases(table)
    assert len(cases) >= 25
    failed = {c.name: r.mismatches for c in cases if not (r := check_case(table, c)).passed}
    assert failed == {}


def test_the_prover_proves_every_claim_for_all_knob_values(table: Table) -> None:
    results = {r.goal.name: r for r in Prover(table, timeout=120).prove_all()}
    assert {n: r.verdict for n, r in results.items() if r.verdict != "proved"} == {}
    for name in (
        "model_requests_bound",
        "tool_executions_bound",
        "successful_tool_calls_bound",
        "output_retries_bound",
    ):
        assert results[name].tight is True, name


def test_the_explorer_agrees_at_the_edges(table: Table) -> None:
    for limit in (-1, 0, 2):
        s = explore(table, {"requestLimit": limit}).summary
        assert s.complete and s.ok, limit
        assert s.max["model_requests"] == max(0, limit)
        assert s.max["tool_executions"] == 2 * max(0, limit)


def test_tool_calls_limit_bounds_successes_not_executions(table: Table) -> None:
    s = explore(table, {"requestLimit": 2, "toolCallsLimited": 1, "toolCallsLimit": 1}).summary
    assert s.complete and s.ok
    assert s.max["tool_calls"] == 1
    assert s.max["tool_executions"] == 2  # a retried call ran but was not counted
    result = check_case(
        table, next(c for c in profile_cases(table) if c.name == "tool_calls_limit_counts_successes_only")
    )
    assert result.passed and result.trace is not None
    assert result.trace.counters["tool_executions"] > result.trace.params["toolCallsLimit"]


# -- the 0..5 and no-limit table of the docs page, from the reference --------------------


def always_tool(n: int) -> Script:
    """A model that calls the tool in every response, for n responses; the tool always succeeds."""
    return Script(
        {
            "model_request": [Outcome(facts={"calls": 1, "hasText": False})] * n,
            "run_tool": [Outcome(facts={})] * n,
        }
    )


def answers_at_step_2() -> Script:
    return Script(
        {
            "model_request": [
                Outcome(facts={"calls": 1, "hasText": False}),
                Outcome(facts={"calls": 0, "hasText": True}),
            ],
            "run_tool": [Outcome(facts={})],
        }
    )


def predicted(table: Table, limit: int | None, script: Script) -> tuple[str, int, int]:
    params = {"requestLimit": limit or 0, "requestLimited": 0 if limit is None else 1}
    trace = run(table, ScriptHost(script), params)
    return trace.terminal, trace.counters["model_requests"], trace.counters["tool_executions"]


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 4, 5])
def test_request_limit_n_allows_n_requests_and_runs_their_tools(table: Table, limit: int) -> None:
    assert predicted(table, limit, always_tool(limit)) == ("request_limit_exceeded", limit, limit)
    expected = ("output", 2, 1) if limit >= 2 else ("request_limit_exceeded", limit, limit)
    assert predicted(table, limit, answers_at_step_2()) == expected


def test_no_request_limit_keeps_asking(table: Table) -> None:
    with pytest.raises(ScriptExhausted):
        predicted(table, None, always_tool(200))
    assert predicted(table, None, answers_at_step_2()) == ("output", 2, 1)


def test_a_missing_framework_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(
        DefinitionError, match=r"pydantic-ai-slim is not installed; install it with: pip install"
    ):
        adapter.scheduler()


def test_another_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "2.69.0")
    with pytest.raises(
        DefinitionError,
        match=r"pydantic-ai-slim 2\.69\.0 is installed, but this adapter and its table model 2\.68\.0",
    ):
        adapter.scheduler()
