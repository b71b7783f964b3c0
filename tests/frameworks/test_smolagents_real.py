"""The real smolagents 1.26.0 ToolCallingAgent, driven through the adapter, against the smolagents table.

Skipped unless the framework is installed: `pip install -e '.[smolagents]'` (the nox
session `conform-smolagents` does it in an environment of its own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("smolagents")

from turnbound.properties.adapters import smolagents as adapter
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.scheduler import Observed, ThreadedScheduler, drive
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

PROFILE = "smolagents"
DEFAULTS = {
    "maxSteps": 20,
    "limited": 1,
    "viaRun": 0,
    "planning": 0,
    "planningInterval": 1,
    "finalAnswerChecks": 0,
}
KNOBS: list[int | None] = [0, 1, 2, 3, 4, 5, None]
"""max_steps values of the docs page's table; None is max_steps=float('inf') (no limit)."""
CUT = 24
"""Host calls after which an unbounded run is reported as such."""
DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks" / "smolagents.md"


def test_the_installed_version_is_the_pinned_one() -> None:
    assert adapter.installed_version() == adapter.VERSION


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) == len(profile_cases(table)) >= 25
    assert {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence} == {}


def test_every_bundled_vector_conforms(table: Table, real: ThreadedScheduler) -> None:
    vectors = bundled_vector_cases(table)
    assert len(vectors) >= 30
    assert {c.id: r.divergence for c in vectors if (r := run_case(real, c)).divergence} == {}


def _script(model: str) -> Script:
    """always_tool: every reply calls the tool once; answer_at_2: one tool call, then final_answer."""
    tool = Outcome(facts={"calls": 1})
    replies = [tool] * CUT if model == "always_tool" else [tool, Outcome(facts={"answers": True})]
    return Script(
        {
            "model_request": replies,
            "run_tool": [Outcome(facts={"ok": True})] * CUT,
            "final_answer_request": [Outcome(facts={})],
        }
    )


def _params(knob: int | None) -> dict[str, int]:
    return {**DEFAULTS, "maxSteps": 0 if knob is None else knob, "limited": 0 if knob is None else 1}


def _measured(observed: Observed) -> tuple[int, int, str]:
    """(model requests, tool executions, ending) of one real run; an unbounded run is cut at CUT calls."""
    if observed.end is None:
        assert observed.fault == f"more than {CUT} host calls", observed.fault
        ops = [op for op, _, _ in observed.calls]
        return ops.count("model_request"), ops.count("run_tool"), "unbounded"
    counters = observed.end.counters
    return counters["model_requests"], counters["tool_executions"], observed.end.terminal


def real_table(real: ThreadedScheduler) -> dict[tuple[str, int | None], tuple[int, int, str]]:
    return {
        (model, knob): _measured(drive(real, _params(knob), ScriptHost(_script(model)), max_calls=CUT))
        for model in ("always_tool", "answer_at_2")
        for knob in KNOBS
    }


def _predicted(table: Table, model: str, knob: int | None) -> tuple[int, int, str]:
    trace = run(table, ScriptHost(_script(model)), _params(knob), max_steps=CUT)
    ending = "unbounded" if trace.terminal == "horizon" else trace.terminal
    return trace.counters["model_requests"], trace.counters["tool_executions"], ending


def docs_rows(measured: dict[tuple[str, int | None], tuple[int, int, str]]) -> list[str]:
    def cell(model: str, knob: int | None) -> str:
        requests, tools, ending = measured[(model, knob)]
        if ending == "unbounded":
            return f"≥ {requests} | ≥ {tools} | never ends (cut at {CUT} host calls)"
        return f"{requests} | {tools} | {ending}"

    return [
        f"| {'inf' if knob is None else knob} | {cell('always_tool', knob)} | {cell('answer_at_2', knob)} |"
        for knob in KNOBS
    ]


def test_requests_and_tool_executions_for_knobs_0_to_5_and_no_limit_match_the_table(
    table: Table, real: ThreadedScheduler
) -> None:
    """The issue's table: measured on the installed agent, predicted by the reference, and in the docs."""
    measured = real_table(real)
    predicted = {key: _predicted(table, *key) for key in measured}
    assert measured == predicted
    assert measured[("always_tool", 0)] == (1, 0, "unbound_action_step")  # the one request is the final answer's
    for knob in range(1, 6):
        assert measured[("always_tool", knob)] == (knob + 1, knob, "max_steps_answer")
    assert measured[("answer_at_2", 1)] == (2, 1, "max_steps_answer")
    assert all(measured[("answer_at_2", k)] == (2, 1, "final_answer") for k in (2, 3, 4, 5, None))
    assert measured[("always_tool", None)][2] == "unbounded"
    page = DOCS.read_text(encoding="utf-8")
    assert [row for row in docs_rows(measured) if row not in page] == []


def test_the_final_answer_request_is_the_extra_model_request(real: ThreadedScheduler) -> None:
    """model_request counts the action steps; with the final-answer request the run makes N + 1 calls."""
    for knob in (0, 1, 3):
        observed = drive(real, _params(knob), ScriptHost(_script("always_tool")), max_calls=CUT)
        ops = [op for op, _, _ in observed.calls]
        assert ops.count("model_request") == knob and ops[-1] == "final_answer_request"
        assert observed.end is not None and observed.end.counters["model_requests"] == knob + 1


def test_two_parallel_calls_double_the_tool_bound_on_the_real_agent(real: ThreadedScheduler) -> None:
    script = Script(
        {
            "model_request": [Outcome(facts={"calls": 2})] * 8,
            "run_tool": [Outcome(facts={"ok": False}), Outcome(facts={"ok": True})] * 8,
            "final_answer_request": [Outcome(facts={})],
        }
    )
    observed = drive(real, {**DEFAULTS, "maxSteps": 3}, ScriptHost(script))
    assert observed.end is not None and observed.end.terminal == "max_steps_answer"
    assert observed.end.counters == {"model_requests": 4, "tool_executions": 6}
    assert [args["index"] for op, args, _ in observed.calls if op == "run_tool"] == [0, 1] * 3


def test_none_is_a_type_error_before_any_request() -> None:
    """max_steps=None is not 'no limit': the first comparison (agents.py:545) raises TypeError."""
    sdk = adapter.load_sdk()
    calls: list[str] = []

    class Model(sdk.models.Model):  # type: ignore[misc, name-defined]
        def generate(self, *args: object, **kwargs: object) -> object:
            calls.append("generate")
            raise AssertionError("no model call expected")

    agent = sdk.agents.ToolCallingAgent(
        tools=[], model=Model(), max_steps=None, verbosity_level=sdk.monitoring.LogLevel.OFF
    )
    with pytest.raises(TypeError, match="'<=' not supported"):
        agent.run("Look it up.")
    assert calls == []


def test_planning_requests_on_the_real_agent_match_the_table(table: Table, real: ThreadedScheduler) -> None:
    """Plans before steps 1, 1 + I, 1 + 2I, ... and never counted as steps: N + 2 + floor((N - 1) / |I|)."""
    script = Script(
        {
            "model_request": [Outcome(facts={"calls": 1})] * 8,
            "run_tool": [Outcome(facts={"ok": True})] * 8,
            "plan_request": [Outcome(facts={})] * 8,
            "final_answer_request": [Outcome(facts={})],
        }
    )
    for interval in (-3, -2, -1, 1, 2, 3):
        for steps in range(1, 8):
            params = {**DEFAULTS, "maxSteps": steps, "planning": 1, "planningInterval": interval}
            observed = drive(real, params, ScriptHost(script))
            expected = run(table, ScriptHost(script), params)
            assert observed.end is not None, (interval, steps, observed.fault)
            assert [op for op, _, _ in observed.calls] == expected.ops, (interval, steps)
            plans = 1 + (steps - 1) // abs(interval)
            assert observed.end.counters["model_requests"] == steps + plans + 1, (interval, steps)
