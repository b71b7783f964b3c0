"""The google-adk profile: its table, its claims for every max_llm_calls, its cases and findings.

No google-adk import here: the real Runner is driven in test_google_adk_real.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from turnbound.properties.adapters import google_adk as adapter
from turnbound.properties.adapters import pinned
from turnbound.properties.explore.explorer import explore
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.reference.cases import check_case
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_cases, table_path
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace

PROFILE = "google-adk"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")
DEFAULTS = {"maxLlmCalls": 500, "agentTool": 0}


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


@pytest.fixture(scope="module")
def proofs(table: Table) -> dict[str, ProofResult]:
    return {r.goal.name: r for r in Prover(table).prove_all()}


def _case(table: Table, name: str) -> Trace:
    case = next(c for c in profile_cases(table) if c.name == name)
    result = check_case(table, case)
    assert result.passed, result.mismatches
    assert result.trace is not None
    return result.trace


def _reply(**facts: object) -> Outcome:
    return Outcome(facts={"calls": 0, **facts})


def _run(limit: int, replies: list[Outcome], agent_tool: int = 0, horizon: int | None = None) -> Trace:
    """The reference against a scripted model (the replies over and over), every tool succeeding."""
    script = {"model_request": replies * 40, "run_tool": [Outcome(facts={"ok": True})] * 80}
    params = {"maxLlmCalls": limit, "agentTool": agent_tool}
    return run(load_profile(PROFILE), ScriptHost(Script(script)), params, max_steps=horizon)


def test_every_transition_cites_the_installed_source(table: Table) -> None:
    assert [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)] == []
    profile = tomllib.loads(table_path(PROFILE).read_text(encoding="utf-8"))["profile"]
    assert profile["source"].startswith(f"google-adk=={adapter.VERSION}, google/adk/flows/llm_flows/core/")


def test_the_knob_has_the_real_default_and_says_what_it_counts(table: Table) -> None:
    assert table.defaults() == DEFAULTS  # _DEFAULT_MAX_LLM_CALLS = 500 (run_config.py:38), no AgentTool
    knob = table.parameters[0]
    assert knob.name == "maxLlmCalls" and knob.min < 0
    assert knob.doc.startswith("RunConfig.max_llm_calls: counts the LLM calls of one invocation")
    assert knob.range == (1, 3)  # <= 0 is no limit: proved, and run by cases, not explored (see its doc)


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_every_bundled_case_passes(table: Table) -> None:
    cases = profile_cases(table)
    assert len(cases) >= 25
    assert {c.name: r.mismatches for c in cases if not (r := check_case(table, c)).passed} == {}


def test_every_claim_is_settled_by_the_prover_as_expected(proofs: dict[str, ProofResult]) -> None:
    assert {name: r.verdict for name, r in proofs.items() if not r.ok} == {}
    for name in ("model_requests_bound", "tool_executions_bound"):
        assert proofs[name].verdict == "proved" and proofs[name].tight is True, name


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 10])
def test_both_bounds_are_met_exactly_at_every_positive_value(limit: int) -> None:
    """Tight for each value: N requests and 2N tools; with the AgentTool 2N requests."""
    one = _run(limit, [_reply(calls=1)], horizon=60)
    two = _run(limit, [_reply(calls=2)], horizon=60)
    helped = _run(limit, [_reply(delegate=True), _reply()], agent_tool=1, horizon=60)
    assert one.terminal == two.terminal == helped.terminal == "llm_calls_limit_exceeded"
    assert (one.counters["model_requests"], one.counters["tool_executions"]) == (limit, limit)
    assert (two.counters["model_requests"], two.counters["tool_executions"]) == (limit, 2 * limit)
    assert (helped.counters["model_requests"], helped.counters["agent_tool_runs"]) == (2 * limit, limit)


@pytest.mark.parametrize("limit", [0, -1, -1000])
def test_zero_and_negative_values_set_no_limit(limit: int) -> None:
    trace = _run(limit, [_reply(calls=1)])
    assert trace.terminal == "horizon" and trace.counters["model_requests"] == 8


def test_the_explorer_gives_the_same_maxima(table: Table) -> None:
    for limit, agent_tool in ((1, 0), (3, 0), (2, 1)):
        summary = explore(table, {"maxLlmCalls": limit, "agentTool": agent_tool}).summary
        assert summary.complete and summary.ok
        assert summary.max["model_requests"] == (1 + agent_tool) * limit
        assert summary.max["tool_executions"] == 2 * limit
    unlimited = explore(table, {"maxLlmCalls": 0, "agentTool": 0}).summary
    assert [c.verdict for c in unlimited.claims if c.kind == "termination"] == ["violated"]


def test_the_limit_raises_before_the_extra_call_after_the_capped_replys_tools(table: Table) -> None:
    trace = _case(table, "cap_reached")
    assert trace.ops == ["model_request", "run_tool"] * 3
    assert trace.terminal == "llm_calls_limit_exceeded"
    assert _case(table, "answer_on_the_last_call").terminal == "final_response"


def test_a_transfer_does_not_reset_the_count(table: Table) -> None:
    trace = _case(table, "transfer_shares_the_limit")
    assert [s.args["agent"] for s in trace.steps if s.op == "model_request"] == [
        "root",
        "specialist",
        "specialist",
    ]
    assert trace.terminal == "llm_calls_limit_exceeded"


def test_agent_tool_runs_are_not_counted(table: Table) -> None:
    trace = _case(table, "agent_tool_runs_outside_the_limit")
    assert [s.args["agent"] for s in trace.steps] == ["root", "helper", "root", "helper"]
    assert trace.counters["model_requests"] == 4 > 2 == trace.counters["agent_tool_runs"]
    assert trace.terminal == "llm_calls_limit_exceeded"


def _with_claims(extra: str) -> Table:
    return load_table_text(table_path(PROFILE).read_text(encoding="utf-8") + extra, "extended")


PROMISES = """
[[bounds]]
name = "a_limit_on_the_total_number_of_llm_calls_for_a_given_run"
expr = "maxLlmCalls <= 0 or model_requests <= maxLlmCalls"

[[bounds]]
name = "no_limit_is_bounded_by_the_knob"
expr = "agentTool == 1 or model_requests <= (maxLlmCalls if maxLlmCalls > 0 else 0)"
"""


@pytest.mark.slow
def test_the_prover_refutes_the_readings_the_profile_corrects() -> None:
    """run_config.py:271-276 read literally ('a limit on the total number of llm calls for a given run'),
    and max_llm_calls <= 0 read as a limit: each refuted, with a replayed witness."""
    extended = _with_claims(PROMISES)
    names = ["a_limit_on_the_total_number_of_llm_calls_for_a_given_run", "no_limit_is_bounded_by_the_knob"]
    results = {r.goal.name: r for r in Prover(extended).prove_all(names)}
    total = results[names[0]]
    assert total.verdict == "refuted" and total.witness is not None
    assert total.witness.params["agentTool"] == 1 and total.witness.params["maxLlmCalls"] > 0
    assert "delegate" in total.witness.trace.path
    assert total.witness.trace.counters["model_requests"] > total.witness.params["maxLlmCalls"]
    unbounded = results[names[1]]
    assert unbounded.verdict == "refuted" and unbounded.witness is not None
    assert unbounded.witness.params["maxLlmCalls"] <= 0
    assert unbounded.witness.trace.counters["model_requests"] >= 1


def test_a_missing_adk_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(DefinitionError, match=r"google-adk is not installed; install it with: pip install"):
        adapter.scheduler()


def test_another_adk_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "2.12.0")
    with pytest.raises(DefinitionError, match=r"google-adk 2\.12\.0 is installed, but this adapter"):
        adapter.scheduler()


def test_the_pin_in_pyproject_is_the_adapters_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert f'google-adk = ["google-adk=={adapter.VERSION}"]' in pyproject.read_text(encoding="utf-8")
