"""The smolagents profile: its table, its claims for every max_steps, its cases and findings.

No smolagents import here: the real ToolCallingAgent is driven in test_smolagents_real.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from turnbound.properties.adapters import pinned
from turnbound.properties.adapters import smolagents as adapter
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

PROFILE = "smolagents"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")
DEFAULTS = {
    "maxSteps": 20,
    "limited": 1,
    "viaRun": 0,
    "planning": 0,
    "planningInterval": 1,
    "finalAnswerChecks": 0,
}


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


def _always_tool(max_steps: int, calls: int = 1, **params: int) -> Trace:
    """The reference against a model that calls `calls` tools in every reply, never answering."""
    script = {
        "model_request": [Outcome(facts={"calls": calls})] * 60,
        "run_tool": [Outcome(facts={"ok": True})] * 120,
        "plan_request": [Outcome(facts={})] * 60,
        "final_answer_request": [Outcome(facts={})],
    }
    return run(
        load_profile(PROFILE), ScriptHost(Script(script)), {**DEFAULTS, "maxSteps": max_steps, **params}
    )


def test_every_transition_cites_the_installed_source(table: Table) -> None:
    uncited = [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)]
    assert uncited == []
    profile = tomllib.loads(table_path(PROFILE).read_text(encoding="utf-8"))["profile"]
    assert profile["source"].startswith(f"smolagents=={adapter.VERSION}, smolagents/agents.py")


def test_the_knob_and_its_modes_have_the_real_defaults(table: Table) -> None:
    params = {p.name: p for p in table.parameters}
    assert table.parameters[0].name == "maxSteps"  # the knob comes first (the README's generated row)
    assert params["maxSteps"].default == adapter.AGENT_DEFAULT_MAX_STEPS == 20  # agents.py:300
    assert params["maxSteps"].min < 0 and params["maxSteps"].range[0] < 0 <= params["maxSteps"].range[1]
    assert params["maxSteps"].doc.startswith("Counts action steps")
    assert (params["limited"].min, params["limited"].max, params["limited"].default) == (0, 1, 1)
    assert all(params[n].default == 0 for n in ("viaRun", "planning", "finalAnswerChecks"))
    assert params["planningInterval"].min < 0 and params["planningInterval"].range[0] < 0


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_every_claim_is_settled_by_the_prover_as_expected(proofs: dict[str, ProofResult]) -> None:
    assert {name: r.verdict for name, r in proofs.items() if not r.ok} == {}
    for name in ("model_requests_bound", "tool_executions_bound"):
        assert proofs[name].verdict == "proved" and proofs[name].tight is True, name


@pytest.mark.parametrize("max_steps", [-3, -1, 0, 1, 2, 3, 4, 5, 20])
def test_both_bounds_are_met_exactly_at_every_knob_value(max_steps: int) -> None:
    """Tight for each value: N + 1 requests (N >= 0), 0 below; 2 x max(0, N) tool executions."""
    one = _always_tool(max_steps)
    two = _always_tool(max_steps, calls=2)
    requests = max_steps + 1 if max_steps >= 0 else 0
    steps = max(0, max_steps)
    assert (one.counters["model_requests"], one.counters["tool_executions"]) == (requests, steps)
    assert (two.counters["model_requests"], two.counters["tool_executions"]) == (requests, 2 * steps)
    ending = "max_steps_answer" if max_steps > 0 else ("unbound_action_step" if max_steps == 0 else "unbound_final_answer")
    assert one.terminal == two.terminal == ending


@pytest.mark.parametrize("interval", [-3, -2, -1, 1, 2, 3])
@pytest.mark.parametrize("max_steps", [1, 2, 3, 4, 5, 6, 7])
def test_planning_adds_one_request_per_interval(max_steps: int, interval: int) -> None:
    """Plans before steps 1, 1 + I, 1 + 2I, ...: N + 2 + floor((N - 1) / |I|) requests at the cap, 2N + 1 at I = 1."""
    trace = _always_tool(max_steps, planning=1, planningInterval=interval)
    plans = 1 + (max_steps - 1) // abs(interval)
    assert trace.ops.count("plan_request") == plans
    assert trace.counters["model_requests"] == max_steps + plans + 1
    assert trace.terminal == "max_steps_answer"
    if abs(interval) == 1:
        assert trace.counters["model_requests"] == 2 * max_steps + 1


def test_the_cap_makes_one_tool_less_request_after_the_last_steps_tools(table: Table) -> None:
    trace = _case(table, "cap_reached")
    assert trace.ops == ["model_request", "run_tool"] * 3 + ["final_answer_request"]
    assert trace.terminal == "max_steps_answer"
    assert _case(table, "cap_request_error_is_the_answer").terminal == "max_steps_answer"


def test_zero_and_negative_crash(table: Table) -> None:
    zero = _case(table, "zero_steps")
    assert zero.ops == ["final_answer_request"] and zero.terminal == "unbound_action_step"
    negative = _case(table, "negative_steps")
    assert negative.ops == [] and negative.terminal == "unbound_final_answer"


def test_run_max_steps_zero_is_the_agents_default(table: Table) -> None:
    trace = _case(table, "run_max_steps_zero_uses_the_default")
    assert trace.counters["model_requests"] == 21 and trace.terminal == "max_steps_answer"
    assert _case(table, "run_max_steps_negative").terminal == "unbound_final_answer"


def test_errors_use_up_steps(table: Table) -> None:
    for name in (
        "tool_error_uses_a_step",
        "text_without_tool_call_uses_a_step",
        "final_answer_with_other_calls_uses_a_step",
        "check_rejects_then_accepts",
    ):
        assert _case(table, name).terminal == "final_answer", name
    assert _case(table, "text_only_until_the_cap").ops[-1] == "final_answer_request"


def test_no_limit_is_unbounded(table: Table) -> None:
    trace = _case(table, "no_limit_keeps_calling_tools")
    assert trace.terminal == "horizon"
    assert trace.counters["model_requests"] == 48 > 21
    assert _case(table, "no_limit_past_the_default").counters["model_requests"] == 26


def _with_claims(extra: str) -> Table:
    return load_table_text(table_path(PROFILE).read_text(encoding="utf-8") + extra, "extended")


PROMISES = """
[[bounds]]
name = "recorded_steps_within_max_steps"
expr = "limited == 0 or recorded_steps <= (max_steps if max_steps > 0 else 0)"

[[bounds]]
name = "requests_within_max_steps"
expr = "limited == 0 or model_requests <= (max_steps if max_steps > 0 else 0)"

[[invariants]]
name = "a_given_max_steps_is_used"
expr = "viaRun == 0 or max_steps == maxSteps"

[[bounds]]
name = "every_answer_is_checked"
expr = "finalAnswerChecks == 0 or not unchecked_answer"

[[bounds]]
name = "no_limit_is_bounded"
expr = "model_requests <= (2 * maxSteps + 1 if maxSteps >= 0 else 0)"
"""


@pytest.mark.slow
def test_the_prover_refutes_the_promises_the_code_breaks() -> None:
    """agents.py:278 read as the steps the run records or as model calls, agents.py:457 ('if not
    provided, will use the agent's default value') read as 'a value given is used', agents.py:287
    ('validation functions to run before accepting a final answer'), and float('inf') as a bound:
    each refuted for some configuration, with a replayed witness."""
    extended = _with_claims(PROMISES)
    names = [
        "recorded_steps_within_max_steps",
        "requests_within_max_steps",
        "a_given_max_steps_is_used",
        "every_answer_is_checked",
        "no_limit_is_bounded",
    ]
    results = {r.goal.name: r for r in Prover(extended).prove_all(names)}
    assert {n: results[n].verdict for n in names} == dict.fromkeys(names, "refuted")
    recorded = results["recorded_steps_within_max_steps"].witness
    assert recorded is not None and "cap_final_answer_request" in recorded.trace.path
    requests = results["requests_within_max_steps"].witness
    assert requests is not None and requests.trace.ops[-1] == "final_answer_request"
    given = results["a_given_max_steps_is_used"].witness
    assert given is not None and given.params["viaRun"] == 1 and given.params["maxSteps"] == 0
    unchecked = results["every_answer_is_checked"].witness
    assert unchecked is not None and unchecked.params["finalAnswerChecks"] == 1
    assert unchecked.trace.terminal == "max_steps_answer"
    unbounded = results["no_limit_is_bounded"].witness
    assert unbounded is not None and unbounded.params["limited"] == 0


def test_a_missing_package_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(DefinitionError, match=r"smolagents is not installed; install it with: pip install"):
        adapter.scheduler()


def test_another_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "1.27.0")
    with pytest.raises(DefinitionError, match=r"smolagents 1\.27\.0 is installed, but this adapter"):
        adapter.scheduler()


def test_the_pin_in_pyproject_is_the_adapters_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert f'smolagents = ["smolagents=={adapter.VERSION}"]' in pyproject.read_text(encoding="utf-8")
