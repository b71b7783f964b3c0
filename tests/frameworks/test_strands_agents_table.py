"""The strands-agents profile: its table, its claims for every limits['turns'], its cases and findings.

No strands import here: the real Agent is driven in test_strands_agents_real.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from turnbound.properties.adapters import pinned
from turnbound.properties.adapters import strands_agents as adapter
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

PROFILE = "strands-agents"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")
DEFAULTS = {"turns": 1, "limited": 0, "maxAttempts": 6}


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


def _always_tool(turns: int, calls: int = 1, throttles: int = 0, **params: int) -> Trace:
    """The reference against a model that is throttled `throttles` times per cycle, then calls `calls` tools."""
    cycle = [Outcome.of_raise("throttled")] * throttles + [Outcome(facts={"calls": calls})]
    script = {"model_request": cycle * 12, "run_tool": [Outcome(facts={"ok": True})] * 40}
    limited = {**DEFAULTS, "limited": 1, "turns": turns, **params}
    return run(load_profile(PROFILE), ScriptHost(Script(script)), limited, max_steps=200)


def test_every_transition_cites_the_installed_source(table: Table) -> None:
    uncited = [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)]
    assert uncited == []
    profile = tomllib.loads(table_path(PROFILE).read_text(encoding="utf-8"))["profile"]
    assert profile["source"].startswith(f"strands-agents=={adapter.VERSION}, strands/event_loop/event_loop.py")


def test_the_knob_and_its_modes_have_the_real_defaults(table: Table) -> None:
    params = {p.name: p for p in table.parameters}
    assert table.parameters[0].name == "turns"
    assert params["turns"].min < 0 and params["turns"].range[0] < 0 <= params["turns"].range[1]
    assert params["turns"].doc.startswith("limits['turns'] counts event-loop cycles")
    # limits=None is the default of every entry point: no cap
    assert (params["limited"].min, params["limited"].max, params["limited"].default) == (0, 1, 0)
    assert params["maxAttempts"].default == 6  # MAX_ATTEMPTS, event_loop.py:65


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_every_claim_is_settled_by_the_prover_as_expected(proofs: dict[str, ProofResult]) -> None:
    assert {name: r.verdict for name, r in proofs.items() if not r.ok} == {}
    for name in ("model_requests_bound", "tool_executions_bound"):
        assert proofs[name].verdict == "proved" and proofs[name].tight is True, name


@pytest.mark.parametrize("turns", [-3, -1, 0, 1, 2, 3, 4, 5, 10])
def test_both_bounds_are_met_exactly_at_every_knob_value(turns: int) -> None:
    """Tight for each value: max(0, N) requests without throttling, max_attempts x that with it; 2 x N tools."""
    allowed = max(0, turns)
    one = _always_tool(turns)
    two = _always_tool(turns, calls=2)
    throttled = _always_tool(turns, throttles=5)
    expected = "limit_turns" if turns > 0 else "invalid_limits"
    assert one.terminal == two.terminal == throttled.terminal == expected
    assert (one.counters["model_requests"], one.counters["tool_executions"]) == (allowed, allowed)
    assert (two.counters["model_requests"], two.counters["tool_executions"]) == (allowed, 2 * allowed)
    assert (throttled.counters["model_requests"], throttled.counters["tool_executions"]) == (6 * allowed, allowed)


def test_the_cap_returns_after_the_last_cycles_tools_with_no_extra_request(table: Table) -> None:
    trace = _case(table, "cap_reached")
    assert trace.ops == ["model_request", "run_tool"] * 3
    assert trace.terminal == "limit_turns"
    assert [s.args["cycle"] for s in trace.steps if s.op == "model_request"] == [1, 2, 3]


def test_zero_and_negative_are_refused_before_any_request(table: Table) -> None:
    for name in ("turns_zero", "turns_negative"):
        trace = _case(table, name)
        assert trace.ops == [] and trace.terminal == "invalid_limits"


def test_the_default_call_has_no_cap(table: Table) -> None:
    trace = _case(table, "no_limit_keeps_calling_tools")
    assert trace.terminal == "horizon"
    assert trace.counters["model_requests"] == 20
    assert _case(table, "no_limit_past_ten").counters["model_requests"] == 12


def test_throttled_retries_are_inside_one_cycle(table: Table) -> None:
    trace = _case(table, "throttled_retries_stay_in_the_cycle")
    assert [s.args["cycle"] for s in trace.steps if s.op == "model_request"] == [1] * 6
    assert trace.terminal == "limit_turns"


def test_failures_after_the_first_cycle_are_wrapped(table: Table) -> None:
    assert _case(table, "model_failure_propagates").terminal == "model_error"
    assert _case(table, "model_failure_in_a_later_cycle_is_wrapped").terminal == "model_error_wrapped"
    assert _case(table, "throttled_out_after_six").terminal == "throttled_out"
    assert _case(table, "throttled_out_in_a_later_cycle_is_wrapped").terminal == "throttled_out_wrapped"


def _with_claims(extra: str) -> Table:
    return load_table_text(table_path(PROFILE).read_text(encoding="utf-8") + extra, "extended")


PROMISES = """
[[bounds]]
name = "one_model_call_per_turn"
expr = "model_requests <= cycles"
expect = "violated"

[[bounds]]
name = "no_limit_is_bounded_by_the_knob"
expr = "model_requests <= (maxAttempts * turns if turns > 0 else 0)"
expect = "violated"

[[bounds]]
name = "the_models_exception_reaches_the_caller"
expr = "not wrapped"
expect = "violated"
"""


@pytest.mark.slow
def test_the_prover_refutes_the_readings_the_profile_corrects() -> None:
    """types/agent.py:166-167 ('one turn is one model call'), turns read as a bound of the default call,
    and agent.py's 'any exceptions ... will be propagated to the caller': each refuted, with a replayed witness."""
    extended = _with_claims(PROMISES)
    results = {
        r.goal.name: r
        for r in Prover(extended).prove_all(
            ["one_model_call_per_turn", "no_limit_is_bounded_by_the_knob", "the_models_exception_reaches_the_caller"]
        )
    }
    one = results["one_model_call_per_turn"]
    assert one.verdict == "refuted" and one.witness is not None
    assert one.witness.params["maxAttempts"] >= 2 and "throttle_retried" in one.witness.trace.path
    unbounded = results["no_limit_is_bounded_by_the_knob"]
    assert unbounded.verdict == "refuted" and unbounded.witness is not None
    assert unbounded.witness.params["limited"] == 0
    wrapped = results["the_models_exception_reaches_the_caller"]
    assert wrapped.verdict == "refuted" and wrapped.witness is not None
    assert wrapped.witness.trace.terminal in ("model_error_wrapped", "throttled_out_wrapped")
    assert wrapped.witness.trace.counters["tool_executions"] >= 1


def test_a_missing_sdk_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(DefinitionError, match=r"strands-agents is not installed; install it with: pip install"):
        adapter.scheduler()


def test_another_sdk_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "1.63.0")
    with pytest.raises(DefinitionError, match=r"strands-agents 1\.63\.0 is installed, but this adapter"):
        adapter.scheduler()


def test_the_pin_in_pyproject_is_the_adapters_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert f'strands-agents = ["strands-agents=={adapter.VERSION}"]' in pyproject.read_text(encoding="utf-8")
