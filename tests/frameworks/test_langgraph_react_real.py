"""The real langgraph 1.2.24 ReAct agent (both entry points), driven through the adapter,
against the langgraph-react table.

Skipped unless the framework is installed: `pip install -e '.[langgraph-react]'` (the nox
session `conform-langgraph-react` does it in an environment of its own).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langgraph.prebuilt")
pytest.importorskip("langchain.agents")

from turnbound.properties.adapters import langgraph_react as adapter
from turnbound.properties.conformance.cases import bundled_cases, make_case, run_case
from turnbound.properties.scheduler import ThreadedScheduler, drive, first_divergence
from turnbound.reference.host import ScriptHost, parse_script
from turnbound.reference.interpreter import run
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON

PROFILE = "langgraph-react"
NO_LIMIT = "no limit"
LIMITS: tuple[int | str, ...] = (0, 1, 2, 3, 4, 5, NO_LIMIT)


def test_the_pinned_versions_are_installed() -> None:
    assert adapter.installed_versions() == adapter.VERSIONS


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) >= 16
    assert {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence} == {}


def _params(limit: int | str, prebuilt: int) -> dict[str, int]:
    if limit == NO_LIMIT:
        return {"recursion_limit": 1, "limited": 0, "prebuilt": prebuilt}
    assert isinstance(limit, int)
    return {"recursion_limit": limit, "limited": 1, "prebuilt": prebuilt}


SCRIPTS = {
    "always_tool": {"model_request": [{"facts": {"toolCall": True}}] * 80, "run_tool": [{"facts": {}}] * 80},
    "answer_at_2": {
        "model_request": [{"facts": {"toolCall": True}}, {"facts": {"toolCall": False}}],
        "run_tool": [{"facts": {}}],
    },
}


@pytest.mark.parametrize("prebuilt", [0, 1])
@pytest.mark.parametrize("model", sorted(SCRIPTS))
@pytest.mark.parametrize("limit", LIMITS)
def test_requests_and_tool_executions_equal_the_tables_prediction(
    table: Table, real: ThreadedScheduler, limit: int | str, model: str, prebuilt: int
) -> None:
    """The docs page's 0..5 + no-limit table: the real code's counts are the reference's."""
    params = _params(limit, prebuilt)
    script = parse_script(SCRIPTS[model], model)
    predicted = run(table, ScriptHost(script), params)
    case = make_case(table, f"{model}-{limit}-{prebuilt}", "case", params, script)
    assert case is not None
    # a turn the reference cuts at its step horizon (no limit) is driven to the same horizon
    horizon = len(case.expected.steps) if case.expected.terminal == HORIZON else None
    observed = drive(real, params, ScriptHost(script), horizon=horizon)
    assert first_divergence(case.expected, observed) is None
    if observed.end is not None and observed.end.terminal != HORIZON:  # a bounded run: the real counters
        got = (observed.end.counters["model_requests"], observed.end.counters["tool_executions"])
        assert got == (predicted.counters["model_requests"], predicted.counters["tool_executions"])
        assert observed.end.terminal == predicted.terminal


# -- beyond the table: parallel calls, and the knob's own corners ------------------------------


def _direct_run(prebuilt: bool, config: dict[str, Any], calls_per_reply: int) -> tuple[str, int, int]:
    """The installed agent with langchain-core's fake model and no turnbound in the loop."""
    lg = adapter.load_langgraph()
    counts = {"model": 0, "tool": 0}

    def replies() -> Iterator[Any]:
        while True:
            counts["model"] += 1
            n = counts["model"]
            yield lg.ai_message(
                content="",
                tool_calls=[
                    {"name": "lookup", "args": {"query": "q"}, "id": f"c{n}_{k}"}
                    for k in range(calls_per_reply)
                ],
            )

    def lookup(query: str) -> str:
        """Look something up."""
        counts["tool"] += 1
        return "ok"

    model = lg.fake_model(messages=replies())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = (lg.create_react_agent if prebuilt else lg.create_agent)(model, [lg.tool(lookup)])
    try:
        agent.invoke({"messages": [("user", "Explain.")]}, config)
        ending = "returned"
    except lg.recursion_error:
        ending = "recursion_error"
    return ending, counts["model"], counts["tool"]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_parallel_calls_multiply_tool_executions_not_steps(limit: int) -> None:
    """Two calls per reply run in one super-step: 2 * floor(N/2) executions (create_agent)."""
    ending, requests, tools = _direct_run(False, {"recursion_limit": limit}, 2)
    assert (ending, requests, tools) == ("recursion_error", math.ceil(limit / 2), 2 * (limit // 2))


def test_recursion_limit_none_means_the_default() -> None:
    lg = adapter.load_langgraph()
    model = lg.fake_model(messages=iter([lg.ai_message(content="done")]))
    agent = lg.create_agent(model, [])
    out = agent.invoke({"messages": [("user", "Explain.")]}, {"recursion_limit": None})
    assert out["messages"][-1].content == "done"
