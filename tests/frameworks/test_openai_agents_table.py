"""The openai-agents profile: its table, its claims for every max_turns, its cases and findings.

No openai-agents import here: the real Runner is driven in test_openai_agents_real.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from turnbound.properties.adapters import openai_agents as adapter
from turnbound.properties.adapters import pinned
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

PROFILE = "openai-agents"
SOURCE_LINE = re.compile(r"\b[a-z_/]+\.py:\d+(-\d+)?\b")
DEFAULTS = {"maxTurns": 10, "limited": 1, "structured": 0, "stopOnFirstTool": 0, "maxTurnsHandler": 0}


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


def _always_tool(max_turns: int, calls: int = 1, **params: int) -> Trace:
    """The reference against a model that calls `calls` tools in every reply."""
    script = {
        "model_request": [Outcome(facts={"calls": calls})] * 40,
        "run_tool": [Outcome(facts={"ok": True})] * 80,
    }
    return run(
        load_profile(PROFILE), ScriptHost(Script(script)), {**DEFAULTS, "maxTurns": max_turns, **params}
    )


def test_every_transition_cites_the_installed_source(table: Table) -> None:
    uncited = [t.id for t in table.transitions if not SOURCE_LINE.search(t.doc)]
    assert uncited == []
    profile = tomllib.loads(table_path(PROFILE).read_text(encoding="utf-8"))["profile"]
    assert profile["source"].startswith(f"openai-agents=={adapter.VERSION}, agents/run.py")


def test_the_knob_and_its_modes_have_the_real_defaults(table: Table) -> None:
    params = {p.name: p for p in table.parameters}
    assert params["maxTurns"].default == 10  # DEFAULT_MAX_TURNS, run_config.py:45
    assert params["maxTurns"].min < 0 and params["maxTurns"].range[0] < 0 <= params["maxTurns"].range[1]
    assert params["maxTurns"].doc.startswith("Runner.run's max_turns: counts turns = model invocations")
    assert (params["limited"].min, params["limited"].max, params["limited"].default) == (0, 1, 1)
    assert all(params[n].default == 0 for n in ("structured", "stopOnFirstTool", "maxTurnsHandler"))


def test_the_adapter_reports_exactly_the_tables_counters(table: Table) -> None:
    assert tuple(table.counters) == adapter.COUNTERS


def test_every_claim_is_settled_by_the_prover_as_expected(proofs: dict[str, ProofResult]) -> None:
    assert {name: r.verdict for name, r in proofs.items() if not r.ok} == {}
    for name in ("model_requests_bound", "tool_executions_bound"):
        assert proofs[name].verdict == "proved" and proofs[name].tight is True, name


@pytest.mark.parametrize("max_turns", [-3, -1, 0, 1, 2, 3, 4, 5, 10])
def test_both_bounds_are_met_exactly_at_every_knob_value(max_turns: int) -> None:
    """Tight for each value, not only somewhere: max(0, N) requests, 2 x max(0, N) tools."""
    allowed = max(0, max_turns)
    one = _always_tool(max_turns)
    two = _always_tool(max_turns, calls=2)
    assert one.terminal == two.terminal == "max_turns_exceeded"
    assert (one.counters["model_requests"], one.counters["tool_executions"]) == (allowed, allowed)
    assert (two.counters["model_requests"], two.counters["tool_executions"]) == (allowed, 2 * allowed)


def test_the_cap_raises_after_the_last_turns_tools_with_no_extra_request(table: Table) -> None:
    trace = _case(table, "cap_reached")
    assert trace.ops == ["model_request", "run_tool"] * 3
    assert trace.terminal == "max_turns_exceeded"


def test_zero_and_negative_make_no_model_request(table: Table) -> None:
    for name in ("zero_turns", "negative_turns"):
        trace = _case(table, name)
        assert trace.ops == [] and trace.terminal == "max_turns_exceeded"
    handled = _case(table, "handler_at_zero")
    assert handled.ops == ["max_turns_handler"] and handled.terminal == "handler_output"


def test_no_limit_is_unbounded(table: Table) -> None:
    trace = _case(table, "no_limit_keeps_calling_tools")
    assert trace.terminal == "horizon"
    assert trace.counters["model_requests"] == 16 > 10
    assert _case(table, "structured_empty_replies_loop").counters["model_requests"] == 32


def test_handoffs_are_turns(table: Table) -> None:
    trace = _case(table, "handoffs_count_as_turns")
    assert [s.args["agent"] for s in trace.steps] == ["triage", "specialist"]
    assert trace.terminal == "max_turns_exceeded"


def _with_claims(extra: str) -> Table:
    return load_table_text(table_path(PROFILE).read_text(encoding="utf-8") + extra, "extended")


PROMISES = """
[[bounds]]
name = "stop_on_first_tool_output_is_final"
expr = "stopOnFirstTool == 0 or tool_executions <= reply_calls"

[[bounds]]
name = "no_limit_is_bounded_by_the_knob"
expr = "model_requests <= (maxTurns if maxTurns > 0 else 0)"

[[bounds]]
name = "every_turn_acts"
expr = "handed_off or model_requests <= 1 + tool_executions"
"""


@pytest.mark.slow
def test_the_prover_refutes_the_readings_the_profile_corrects() -> None:
    """agent.py:403-405 read literally, max_turns read as a bound whatever the mode, and 'a turn that does
    nothing ends the run': each refuted for some configuration, with a replayed witness."""
    extended = _with_claims(PROMISES)
    results = {
        r.goal.name: r
        for r in Prover(extended).prove_all(
            ["stop_on_first_tool_output_is_final", "no_limit_is_bounded_by_the_knob", "every_turn_acts"]
        )
    }
    stop = results["stop_on_first_tool_output_is_final"]
    assert stop.verdict == "refuted" and stop.witness is not None
    assert stop.witness.params["stopOnFirstTool"] == 1
    assert "hand_off" in stop.witness.trace.path and stop.witness.trace.counters["tool_executions"] >= 1
    unbounded = results["no_limit_is_bounded_by_the_knob"]
    assert unbounded.verdict == "refuted" and unbounded.witness is not None
    assert unbounded.witness.params["limited"] == 0
    acts = results["every_turn_acts"]
    assert acts.verdict == "refuted" and acts.witness is not None
    assert acts.witness.params["structured"] == 1
    assert "structured_no_text_runs_again" in acts.witness.trace.path


def test_a_missing_sdk_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: None)
    with pytest.raises(
        DefinitionError, match=r"openai-agents is not installed; install it with: pip install"
    ):
        adapter.scheduler()


def test_another_sdk_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "_loaded", None)
    monkeypatch.setattr(pinned, "installed_version", lambda d: "0.25.0")
    with pytest.raises(DefinitionError, match=r"openai-agents 0\.25\.0 is installed, but this adapter"):
        adapter.scheduler()


def test_the_pin_in_pyproject_is_the_adapters_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert f'openai-agents = ["openai-agents=={adapter.VERSION}"]' in pyproject.read_text(encoding="utf-8")
