"""The real strands-agents 1.62.0 Agent, driven through the adapter, against the strands-agents table.

Skipped unless the framework is installed: `pip install -e '.[strands-agents]'` (the nox
session `conform-strands-agents` does it in an environment of its own).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("strands")

from turnbound.properties.adapters import strands_agents as adapter
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.scheduler import Observed, ThreadedScheduler, drive
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

PROFILE = "strands-agents"
DEFAULTS = {"turns": 1, "limited": 0, "maxAttempts": 6}
KNOBS: list[int | None] = [0, 1, 2, 3, 4, 5, None]
"""limits['turns'] values of the docs page's table; None is limits=None (the default: no cap)."""
CUT = 24
"""Host calls after which an unbounded run is reported as such."""
DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks" / "strands-agents.md"


@pytest.fixture(autouse=True)
def _quiet_strands() -> Iterator[None]:
    """strands logs every failing cycle and tool at ERROR; the runs here fail on purpose."""
    logger = logging.getLogger("strands")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


def test_the_installed_version_is_the_pinned_one() -> None:
    assert adapter.installed_version() == adapter.VERSION


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) == len(profile_cases(table)) >= 20
    assert {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence} == {}


def test_every_bundled_vector_conforms(table: Table, real: ThreadedScheduler) -> None:
    vectors = bundled_vector_cases(table)
    assert len(vectors) >= 20
    assert {c.id: r.divergence for c in vectors if (r := run_case(real, c)).divergence} == {}


def _script(model: str) -> Script:
    """always_tool: every reply calls the tool once; answer_at_2: one tool call, then an answer."""
    tool = Outcome(facts={"calls": 1})
    replies = [tool] * CUT if model == "always_tool" else [tool, Outcome(facts={"calls": 0})]
    return Script({"model_request": replies, "run_tool": [Outcome(facts={"ok": True})] * CUT})


def _params(knob: int | None) -> dict[str, int]:
    return {**DEFAULTS, "turns": 1 if knob is None else knob, "limited": 0 if knob is None else 1}


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
    """The issue's table: measured on the installed Agent, predicted by the reference, and in the docs."""
    measured = real_table(real)
    predicted = {key: _predicted(table, *key) for key in measured}
    assert measured == predicted
    assert measured[("always_tool", 0)] == (0, 0, "invalid_limits")
    for knob in range(1, 6):
        assert measured[("always_tool", knob)] == (knob, knob, "limit_turns")
    assert measured[("answer_at_2", 1)] == (1, 1, "limit_turns")
    assert all(measured[("answer_at_2", k)] == (2, 1, "end_turn") for k in (2, 3, 4, 5, None))
    assert measured[("always_tool", None)][2] == "unbounded"
    page = DOCS.read_text(encoding="utf-8")
    assert [row for row in docs_rows(measured) if row not in page] == []


def test_throttling_multiplies_the_requests_a_turn_allows(real: ThreadedScheduler) -> None:
    """turns=2 at the default max_attempts=6: five throttled calls and a tool use per cycle, 12 model calls."""
    cycle = [Outcome.of_raise("throttled")] * 5 + [Outcome(facts={"calls": 1})]
    script = Script({"model_request": cycle * 3, "run_tool": [Outcome(facts={"ok": True})] * 3})
    observed = drive(real, {**DEFAULTS, "turns": 2, "limited": 1}, ScriptHost(script))
    assert observed.end is not None and observed.end.terminal == "limit_turns"
    assert observed.end.counters == {"model_requests": 12, "tool_executions": 2}
    cycles = [args["cycle"] for op, args, _ in observed.calls if op == "model_request"]
    assert cycles == [1] * 6 + [2] * 6


def test_two_tool_uses_per_reply_double_the_tool_bound(real: ThreadedScheduler) -> None:
    script = Script(
        {"model_request": [Outcome(facts={"calls": 2})] * 8, "run_tool": [Outcome(facts={"ok": True})] * 16}
    )
    observed = drive(real, {**DEFAULTS, "turns": 3, "limited": 1}, ScriptHost(script))
    assert observed.end is not None and observed.end.terminal == "limit_turns"
    assert observed.end.counters == {"model_requests": 3, "tool_executions": 6}
    assert [args["index"] for op, args, _ in observed.calls if op == "run_tool"] == [0, 1] * 3


STACK_CYCLES = (100, 1000)
"""Where CPython's recursion limit (1000 by default) may stop an unlimited run: the docs give the measured figure."""


def test_without_limits_only_cpythons_recursion_limit_stops_the_loop(real: ThreadedScheduler) -> None:
    """Nothing in strands bounds the default call: a model that keeps calling tools is stopped by a
    RecursionError, surfaced as EventLoopException, after some hundreds of nested cycles."""
    budget = 2 * STACK_CYCLES[1]
    script = Script(
        {
            "model_request": [Outcome(facts={"calls": 1})] * budget,
            "run_tool": [Outcome(facts={"ok": True})] * budget,
        }
    )
    observed = drive(real, _params(None), ScriptHost(script), max_calls=2 * budget)
    assert observed.end is None
    assert observed.fault is not None and "EventLoopException: maximum recursion depth exceeded" in observed.fault
    ops = [op for op, _, _ in observed.calls]
    requests = ops.count("model_request")
    assert STACK_CYCLES[0] <= requests <= STACK_CYCLES[1] and ops.count("run_tool") == requests
