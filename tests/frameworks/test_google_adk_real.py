"""The real google-adk 2.13.0 Runner, driven through the adapter, against the google-adk table.

Skipped unless the framework is installed: `pip install -e '.[google-adk]'` (the nox
session `conform-google-adk` does it in an environment of its own).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from turnbound.properties.adapters import google_adk as adapter
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.scheduler import Observed, ThreadedScheduler, drive
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

PROFILE = "google-adk"
KNOBS: list[int | None] = [0, 1, 2, 3, 4, 5, None]
"""max_llm_calls values of the docs page's table; None stands for "no limit", which the ADK
spells as any value <= 0: measured at -1, so 0 and a negative value are both covered."""
NO_LIMIT = -1
CUT = 24
"""Host calls after which an unbounded run is reported as such."""
DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks" / "google-adk.md"


def test_the_installed_version_is_the_pinned_one() -> None:
    assert adapter.installed_version() == adapter.VERSION


def test_the_default_is_500_unless_the_environment_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    run_config = adapter.load_adk().agents.RunConfig
    monkeypatch.delenv("ADK_MAX_LLM_CALLS", raising=False)
    assert run_config().max_llm_calls == 500
    monkeypatch.setenv("ADK_MAX_LLM_CALLS", "7")
    assert run_config().max_llm_calls == 7


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) == len(profile_cases(table)) >= 25
    assert {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence} == {}


def test_every_bundled_vector_conforms(table: Table, real: ThreadedScheduler) -> None:
    vectors = bundled_vector_cases(table)
    assert len(vectors) >= 90
    assert {c.id: r.divergence for c in vectors if (r := run_case(real, c)).divergence} == {}


def _script(model: str) -> Script:
    """always_tool: every reply calls the tool once; answer_at_2: one tool call, then an answer."""
    tool = Outcome(facts={"calls": 1})
    replies = [tool] * CUT if model == "always_tool" else [tool, Outcome(facts={"calls": 0})]
    return Script({"model_request": replies, "run_tool": [Outcome(facts={"ok": True})] * CUT})


def _params(knob: int | None) -> dict[str, int]:
    return {"maxLlmCalls": NO_LIMIT if knob is None else knob, "agentTool": 0}


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
        f"| {'-1 (no limit)' if knob is None else knob} | {cell('always_tool', knob)} | {cell('answer_at_2', knob)} |"
        for knob in KNOBS
    ]


def test_requests_and_tool_executions_for_knobs_0_to_5_and_no_limit_match_the_table(
    table: Table, real: ThreadedScheduler
) -> None:
    """The issue's table: measured on the installed Runner, predicted by the reference, and in the docs."""
    measured = real_table(real)
    predicted = {key: _predicted(table, *key) for key in measured}
    assert measured == predicted
    for knob in range(1, 6):
        assert measured[("always_tool", knob)] == (knob, knob, "llm_calls_limit_exceeded")
    assert measured[("always_tool", 0)][2] == measured[("always_tool", None)][2] == "unbounded"
    assert measured[("answer_at_2", 1)] == (1, 1, "llm_calls_limit_exceeded")
    assert all(measured[("answer_at_2", k)] == (2, 1, "final_response") for k in (0, 2, 3, 4, 5, None))
    page = DOCS.read_text(encoding="utf-8")
    assert [row for row in docs_rows(measured) if row not in page] == []


def test_two_parallel_calls_double_the_tool_bound_on_the_real_runner(real: ThreadedScheduler) -> None:
    script = Script(
        {"model_request": [Outcome(facts={"calls": 2})] * 8, "run_tool": [Outcome(facts={"ok": True})] * 16}
    )
    observed = drive(real, {"maxLlmCalls": 3, "agentTool": 0}, ScriptHost(script))
    assert observed.end is not None and observed.end.terminal == "llm_calls_limit_exceeded"
    assert observed.end.counters == {"model_requests": 3, "tool_executions": 6, "agent_tool_runs": 0}
    assert [args["index"] for op, args, _ in observed.calls if op == "run_tool"] == [0, 1] * 3


def test_an_agent_tool_doubles_the_model_requests_under_the_limit(real: ThreadedScheduler) -> None:
    """The finding on the real code: max_llm_calls=N, yet 2N model requests in one run."""
    for limit in (1, 2, 3):
        replies = [Outcome(facts={"calls": 0, "delegate": True}), Outcome(facts={"calls": 0})] * limit
        observed = drive(
            real, {"maxLlmCalls": limit, "agentTool": 1}, ScriptHost(Script({"model_request": replies}))
        )
        assert observed.end is not None and observed.end.terminal == "llm_calls_limit_exceeded"
        assert observed.end.counters == {
            "model_requests": 2 * limit,
            "tool_executions": 0,
            "agent_tool_runs": limit,
        }


class _Looping:
    """A model outside the table: the root always delegates; the helper calls its own tool and
    answers at its N-th call of each run, the most its own limit allows."""

    def __init__(self, adk: Any, limit: int) -> None:
        self.adk = adk
        self.limit = limit
        self.calls: list[str] = []
        self.in_run = 0

    def reply(self, llm_request: Any) -> Any:
        types = self.adk.types
        agent = llm_request.config.labels["adk_agent_name"]
        self.calls.append(agent)
        if agent == "root":
            self.in_run = 0
            call = types.FunctionCall(name=adapter.HELPER, args={"request": "go"}, id=f"c{len(self.calls)}")
            return self.adk.llm_response.LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            )
        self.in_run += 1
        if self.in_run == self.limit:
            part = types.Part(text="done")
        else:
            part = types.Part(
                function_call=types.FunctionCall(
                    name=adapter.TOOL, args={"index": 0}, id=f"c{len(self.calls)}"
                )
            )
        return self.adk.llm_response.LlmResponse(content=types.Content(role="model", parts=[part]))


def _looping_run(adk: Any, limit: int) -> tuple[str, list[str], int]:
    script = _Looping(adk, limit)
    tools_run = []

    class Looping(adk.base_llm.BaseLlm):  # type: ignore[misc, name-defined]
        model: str = "looping"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            yield script.reply(llm_request)

    async def probe(index: int) -> str:
        """Look something up."""
        tools_run.append(index)
        return "ok"

    llm = Looping()
    helper = adk.agents.LlmAgent(
        name=adapter.HELPER, model=llm, instruction="h", tools=[adk.tools.FunctionTool(probe)]
    )
    root = adk.agents.LlmAgent(
        name="root", model=llm, instruction="r", tools=[adk.agent_tool.AgentTool(helper)]
    )

    async def go() -> str:
        runner = adk.runners.InMemoryRunner(agent=root, app_name="t")
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        message = adk.types.Content(role="user", parts=[adk.types.Part(text="go")])
        try:
            async for _ in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=message,
                run_config=adk.agents.RunConfig(max_llm_calls=limit),
            ):
                pass
        except adk.invocation_context.LlmCallsLimitExceededError:
            return "llm_calls_limit_exceeded"
        finally:
            await runner.close()
        return "returned"

    ending = asyncio.run(go())
    return ending, script.calls, len(tools_run)


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_helper_that_loops_makes_n_calls_per_agent_tool_run(limit: int) -> None:
    """agent_tool.py:322-324 on the real code, past the table (whose helper has no tools): every
    one of the root's N calls delegates, each helper run makes its own N calls (N-1 tool steps, then
    the answer), and only the root's (N+1)-th call is refused: N + N·N model requests in one run."""
    ending, calls, tools = _looping_run(adapter.load_adk(), limit)
    assert ending == "llm_calls_limit_exceeded"
    assert calls == (["root"] + ["helper"] * limit) * limit
    assert len(calls) == limit + limit * limit and tools == limit * (limit - 1)
