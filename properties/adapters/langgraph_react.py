"""The real langgraph 1.2.24 ReAct agent, driven by turnbound as its host (profile langgraph-react).

The agent graph under test is built by the installed, unchanged entry point — parameter
`prebuilt` picks `langchain.agents.create_agent` (0) or the deprecated
`langgraph.prebuilt.create_react_agent` (1) — and run with `invoke`'s own machinery
(`stream`, which `invoke` wraps) under the run config's `recursion_limit`
(`float("inf")` when `limited` is 0). Its collaborators are scripted, one host call per
effect:

* the chat model is langchain-core's own `GenericFakeChatModel` (the fake the langchain
  and langgraph test suites use), fed by an iterator that asks `model_request` for each
  reply: a tool call or a final answer, or a raised error;
* the one tool is a real `@tool` function whose execution asks `run_tool`.

The terminal is read off how `stream` ended (the returned messages, GraphRecursionError,
ValueError, the scripted errors); the counters are what the real code did: `steps` the
super-steps it began by its debug stream, `model_requests` the replies the model was
asked for, `tool_executions` the tool function's runs. An answer outside its operation's
contract ends the run at contract_violation, where neither it nor its super-step counts.

Run it: `turnbound conform langgraph-react --fuzz 500 --adapter
turnbound.properties.adapters.langgraph_react:scheduler`.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from turnbound.properties.adapters import pinned
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.host import Host
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import CONTRACT_VIOLATION, Table

PROFILE = "langgraph-react"
VERSIONS = {
    "langgraph": "1.2.24",
    "langgraph-prebuilt": "1.1.3",
    "langchain": "1.5.2",
    "langchain-core": "1.8.3",
}
INSTALL_HINT = "pip install -e '.[langgraph-react]'"

ANSWER = "Scripted answer."
NEED_MORE_STEPS = "Sorry, need more steps to process this request."
"""create_react_agent's replacement reply (chat_agent_executor.py:689)."""
INVALID_LIMIT = "recursion_limit must be at least 1"
"""pregel/main.py:2685."""
TOOL = "lookup"


class ScriptedModelError(RuntimeError):
    """The chat model failed (the host raised model_error)."""


class ScriptedToolError(RuntimeError):
    """The tool failed (the host raised tool_error)."""


class _Stop(BaseException):
    """Ends the run from inside the graph without any handler of the framework catching it."""


@dataclass(frozen=True)
class _Langgraph:
    create_agent: Any
    create_react_agent: Any
    recursion_error: type[BaseException]
    fake_model: type[Any]
    ai_message: type[Any]
    tool: Any


_loaded: _Langgraph | None = None
_load_lock = threading.Lock()


def installed_versions() -> dict[str, str | None]:
    return {dist: pinned.installed_version(dist) for dist in VERSIONS}


def load_langgraph() -> _Langgraph:
    """Import the entry points once; a missing or different version is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, dict(VERSIONS), INSTALL_HINT)
        agents = importlib.import_module("langchain.agents")
        prebuilt = importlib.import_module("langgraph.prebuilt")
        errors = importlib.import_module("langgraph.errors")
        fakes = importlib.import_module("langchain_core.language_models.fake_chat_models")
        messages = importlib.import_module("langchain_core.messages")
        tools = importlib.import_module("langchain_core.tools")

        class ScriptedChatModel(fakes.GenericFakeChatModel):  # type: ignore[misc, name-defined]
            """GenericFakeChatModel plus the `bind_tools` both agents call; the replies are unchanged."""

            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                return self

        _loaded = _Langgraph(
            agents.create_agent,
            prebuilt.create_react_agent,
            errors.GraphRecursionError,
            ScriptedChatModel,
            messages.AIMessage,
            tools.tool,
        )
        return _loaded


class _Run:
    """The host side of one run: asks turnbound, counts what the real code asked for."""

    def __init__(self, table: Table, host: Host, lg: _Langgraph) -> None:
        self.table = table
        self.host = host
        self.lg = lg
        self.model_requests = 0
        self.tool_executions = 0

    def ask(self, op: str) -> Outcome:
        outcome = self.host.call(op, {})
        if contract_violation(self.table, self.table.operations[op], outcome):
            raise _Stop(CONTRACT_VIOLATION)
        return outcome

    def replies(self) -> Iterator[Any]:
        """The model's replies, one host call each, as GenericFakeChatModel consumes them."""
        while True:
            outcome = self.ask("model_request")
            self.model_requests += 1
            if outcome.raise_ is not None:
                raise ScriptedModelError("scripted model failure")
            facts = complete(self.table.operations["model_request"].facts, outcome.facts or {})
            if facts["toolCall"]:
                call = {"name": TOOL, "args": {"query": "q"}, "id": f"call_{self.model_requests}"}
                yield self.lg.ai_message(content="", tool_calls=[call])
            else:
                yield self.lg.ai_message(content=ANSWER)

    def execute_tool(self) -> str:
        outcome = self.ask("run_tool")
        self.tool_executions += 1
        if outcome.raise_ is not None:
            raise ScriptedToolError("scripted tool failure")
        return "tool result"


def build_agent(lg: _Langgraph, run: _Run, prebuilt: bool) -> Any:
    """The agent graph from the installed entry point, with the scripted model and a real @tool."""

    def lookup(query: str) -> str:
        """Look something up."""
        return run.execute_tool()

    tool = lg.tool(lookup)
    model = lg.fake_model(messages=run.replies())
    if prebuilt:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the entry point's own deprecation notice
            return lg.create_react_agent(model, [tool])
    return lg.create_agent(model, [tool])


def run_config(params: Mapping[str, int]) -> dict[str, Any]:
    limit: float = int(params["recursion_limit"]) if params["limited"] else float("inf")
    return {"recursion_limit": limit}


def run_agent(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One `invoke` of the real agent against `host`: (terminal, the counters it showed)."""
    lg = load_langgraph()
    run = _Run(table, host, lg)
    agent = build_agent(lg, run, bool(params["prebuilt"]))
    started = finished = 0
    last: Any = None
    terminal: str
    try:
        for mode, data in agent.stream(
            {"messages": [("user", "Explain.")]}, run_config(params), stream_mode=["debug", "values"]
        ):
            if mode == "debug" and data.get("type") == "task":
                started = max(started, int(data["step"]))
            elif mode == "debug" and data.get("type") == "task_result":
                finished = max(finished, int(data["step"]))
            elif mode == "values":
                last = data["messages"][-1]
    except _Stop as stop:
        terminal = str(stop)
        started = finished  # the rejected answer's super-step never happened, as in the reference
    except lg.recursion_error:
        terminal = "recursion_error"
    except (ScriptedModelError, ScriptedToolError):
        terminal = "error"
    except ValueError as exc:
        if str(exc) != INVALID_LIMIT:
            raise
        terminal = "invalid_limit"
    else:
        terminal = _returned(last)
    return terminal, {
        "steps": started,
        "model_requests": run.model_requests,
        "tool_executions": run.tool_executions,
    }


def _returned(last: Any) -> str:
    content = getattr(last, "content", None)
    if content == NEED_MORE_STEPS:
        return "need_more_steps"
    if content == ANSWER:
        return "answer"
    raise RuntimeError(f"{PROFILE} adapter: the agent returned an unexpected last message {last!r}")


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...langgraph_react:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_langgraph()
    return ThreadedScheduler(lambda params, host: run_agent(bound, params, host), timeout=timeout)
