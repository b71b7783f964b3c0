"""The real openai-agents 0.24.0 Runner, driven through the adapter, against the openai-agents table.

Skipped unless the framework is installed: `pip install -e '.[openai-agents]'` (the nox
session `conform-openai-agents` does it in an environment of its own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agents")

from turnbound.properties.adapters import openai_agents as adapter
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.scheduler import Observed, ThreadedScheduler, drive
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

PROFILE = "openai-agents"
DEFAULTS = {"maxTurns": 10, "limited": 1, "structured": 0, "stopOnFirstTool": 0, "maxTurnsHandler": 0}
KNOBS: list[int | None] = [0, 1, 2, 3, 4, 5, None]
"""max_turns values of the docs page's table; None is max_turns=None (no limit)."""
CUT = 24
"""Host calls after which an unbounded run is reported as such."""
DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks" / "openai-agents.md"


def test_the_installed_version_is_the_pinned_one() -> None:
    assert adapter.installed_version() == adapter.VERSION


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) == len(profile_cases(table)) >= 25
    assert {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence} == {}


def test_every_bundled_vector_conforms(table: Table, real: ThreadedScheduler) -> None:
    vectors = bundled_vector_cases(table)
    assert len(vectors) >= 40
    assert {c.id: r.divergence for c in vectors if (r := run_case(real, c)).divergence} == {}


def _script(model: str) -> Script:
    """always_tool: every reply calls the tool once; answer_at_2: one tool call, then an answer."""
    tool = Outcome(facts={"calls": 1})
    replies = [tool] * CUT if model == "always_tool" else [tool, Outcome(facts={"calls": 0})]
    return Script({"model_request": replies, "run_tool": [Outcome(facts={"ok": True})] * CUT})


def _params(knob: int | None) -> dict[str, int]:
    return {**DEFAULTS, "maxTurns": 0 if knob is None else knob, "limited": 0 if knob is None else 1}


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
        f"| {'None' if knob is None else knob} | {cell('always_tool', knob)} | {cell('answer_at_2', knob)} |"
        for knob in KNOBS
    ]


def test_requests_and_tool_executions_for_knobs_0_to_5_and_no_limit_match_the_table(
    table: Table, real: ThreadedScheduler
) -> None:
    """The issue's table: measured on the installed Runner, predicted by the reference, and in the docs."""
    measured = real_table(real)
    predicted = {key: _predicted(table, *key) for key in measured}
    assert measured == predicted
    for knob in range(6):
        assert measured[("always_tool", knob)] == (knob, knob, "max_turns_exceeded")
    assert measured[("answer_at_2", 1)] == (1, 1, "max_turns_exceeded")
    assert all(measured[("answer_at_2", k)] == (2, 1, "final_output") for k in (2, 3, 4, 5, None))
    assert measured[("always_tool", None)][2] == "unbounded"
    page = DOCS.read_text(encoding="utf-8")
    assert [row for row in docs_rows(measured) if row not in page] == []


def test_two_parallel_calls_double_the_tool_bound_on_the_real_runner(real: ThreadedScheduler) -> None:
    script = Script(
        {"model_request": [Outcome(facts={"calls": 2})] * 8, "run_tool": [Outcome(facts={"ok": True})] * 16}
    )
    observed = drive(real, {**DEFAULTS, "maxTurns": 3}, ScriptHost(script))
    assert observed.end is not None and observed.end.terminal == "max_turns_exceeded"
    assert observed.end.counters == {"model_requests": 3, "tool_executions": 6}
    assert [args["index"] for op, args, _ in observed.calls if op == "run_tool"] == [0, 1] * 3


def test_stop_on_first_tool_is_not_final_when_the_reply_hands_off(
    table: Table, real: ThreadedScheduler
) -> None:
    """The finding on the real code: the tool ran, and the specialist's model was called after it."""
    case = next(c for c in bundled_cases(table) if c.id == "stop_on_first_tool_handoff_continues")
    observed = drive(real, case.params, ScriptHost(case.script))
    assert [(op, args) for op, args, _ in observed.calls] == [
        ("model_request", {"agent": "triage"}),
        ("run_tool", {"index": 0}),
        ("model_request", {"agent": "specialist"}),
    ]
    assert observed.end is not None and observed.end.terminal == "final_output"
