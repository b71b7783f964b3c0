"""The real google-adk 2.13.0 `Runner.run_async`, driven by turnbound as its host (profile google-adk).

The loop under test is the installed `InMemoryRunner` and `LlmAgent`, unchanged. Around it
sit two agents (root, and specialist, its sub-agent: each may transfer to the other) that
share one function tool, one model and, when the run has one, an AgentTool wrapping a third
agent (helper, no tools). Every effect the run performs becomes one host call on the
table's vocabulary:

* the model is a `BaseLlm` subclass, the way the ADK's own tests fake one (their
  `MockModel`): each `generate_content_async` asks `model_request` (the agent is read off
  the request's `adk_agent_name` label, which the flow sets, _model_call.py:224-225) and
  answers with an `LlmResponse` of google.genai parts (text, calls of the function tool,
  a `transfer_to_agent` call, a call of the AgentTool), or raises as the answer says;
* the function tool `probe` asks `run_tool` (the agent is read off its ToolContext, the
  index is the argument the ADK parsed from the call) and returns, or raises.

The terminal is read off what `Runner.run_async` yielded and raised; the counters are the
calls the model and the tool actually received, and the helper agent's runs as its
before_agent_callback saw them. Nothing is computed from the table.

Run it: `turnbound conform google-adk --fuzz 500 --adapter
turnbound.properties.adapters.google_adk:scheduler`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from turnbound.properties.adapters import pinned
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Host
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import CONTRACT_VIOLATION, Table
from turnbound.reference.types import Value

PROFILE = "google-adk"
DISTRIBUTION = "google-adk"
VERSION = "2.13.0"
INSTALL_HINT = "pip install -e '.[google-adk]'"

AGENTS = ("root", "specialist")
HELPER = "helper"
TOOL = "probe"
TRANSFER = "transfer_to_agent"
ANSWER = "Scripted answer."
NO_CONTENT = "MODEL_RETURNED_NO_CONTENT"
"""The error code the flow gives a reply without content (_model_call.py:49, 96)."""
LIMIT_ERROR = "LlmCallsLimitExceededError"
APP = "turnbound"
USER = "turnbound"

COUNTERS = ("model_requests", "tool_executions", "agent_tool_runs")


class ScriptedModelFailure(RuntimeError):
    """A provider error raised by the scripted model."""


class ScriptedToolFailure(RuntimeError):
    """The tool's own failure."""


class _Stop(BaseException):
    """Ends the run from inside the ADK without its `except Exception` handlers seeing it."""

    def __init__(self, terminal: str) -> None:
        super().__init__(terminal)
        self.terminal = terminal


class _AdapterBug(RuntimeError):
    pass


# -- the installed package -----------------------------------------------------------


@dataclass(frozen=True)
class _Adk:
    agents: ModuleType
    runners: ModuleType
    tools: ModuleType
    agent_tool: ModuleType
    base_llm: ModuleType
    llm_response: ModuleType
    invocation_context: ModuleType
    types: ModuleType
    scripted_model: type[Any]


_loaded: _Adk | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version(DISTRIBUTION)


def load_adk() -> _Adk:
    """Import the ADK once; a missing or different google-adk is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {DISTRIBUTION: VERSION}, INSTALL_HINT)
        try:
            modules = [
                importlib.import_module(name)
                for name in (
                    "google.adk.agents",
                    "google.adk.runners",
                    "google.adk.tools",
                    "google.adk.tools.agent_tool",
                    "google.adk.models.base_llm",
                    "google.adk.models.llm_response",
                    "google.adk.agents.invocation_context",
                    "google.genai.types",
                )
            ]
        except ImportError as exc:
            raise DefinitionError(f"{PROFILE}: google-adk {VERSION} does not import ({exc})") from None
        # The flow logs every failure it re-raises with a traceback; the adapter reads the
        # exception itself, so the log would only bury the report.
        logging.getLogger("google_adk").setLevel(logging.CRITICAL)
        base_llm = modules[4]

        class ScriptedModel(base_llm.BaseLlm):  # type: ignore[misc, name-defined]
            """A model whose every reply is a host call (the run's responder is set per run)."""

            model: str = "turnbound-scripted"

            async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
                run: _Run = _current.run
                yield run.respond(llm_request)

        agents, runners, tools, agent_tool, _, llm_response, invocation_context, types = modules
        _loaded = _Adk(
            agents,
            runners,
            tools,
            agent_tool,
            base_llm,
            llm_response,
            invocation_context,
            types,
            ScriptedModel,
        )
        return _loaded


class _Current(threading.local):
    run: Any = None


_current = _Current()
"""The run the scripted model answers for: one per ThreadedScheduler thread."""


# -- one run -------------------------------------------------------------------------


class _Run:
    """The host side of one run: asks turnbound, counts what the ADK really called."""

    def __init__(self, table: Table, host: Host, adk: _Adk, agent_tool: bool) -> None:
        self.table = table
        self.host = host
        self.adk = adk
        self.agent_tool = agent_tool
        self.model_requests = 0
        self.tool_executions = 0
        self.agent_tool_runs = 0
        self.replies = 0
        self.violated = False
        self.halted = False

    def ask(self, op: str, args: dict[str, Value]) -> Outcome:
        """One host call; an answer outside the op's contract ends the run at contract_violation.

        A reply's tool calls run as parallel tasks and the ADK re-raises only the first
        exception of them, so the violation is also kept here: a sibling call already
        scheduled asks nothing more, and the run's ending is read from it. The same holds
        when the driver stops the run inside a host call (the step horizon, a script that
        ran out): a sibling must not wait for an answer that will never come.
        """
        if self.violated or self.halted:
            raise _Stop(CONTRACT_VIOLATION)
        try:
            outcome = self.host.call(op, args)
        except BaseException:
            self.halted = True
            raise
        if contract_violation(self.table, self.table.operations[op], outcome):
            self.violated = True
            raise _Stop(CONTRACT_VIOLATION)
        return outcome

    def facts(self, op: str, outcome: Outcome) -> dict[str, Value]:
        return complete(self.table.operations[op].facts, outcome.facts or {})

    # -- the model

    def respond(self, llm_request: Any) -> Any:
        types = self.adk.types
        labels = (llm_request.config.labels or {}) if llm_request.config else {}
        agent = labels.get("adk_agent_name")
        if agent not in (*AGENTS, HELPER):
            raise _AdapterBug(f"a model call for an unknown agent {agent!r}")
        outcome = self.ask("model_request", {"agent": agent})
        self.model_requests += 1  # a call answered within its contract, a failure included
        if outcome.raise_ is not None:
            raise ScriptedModelFailure("scripted provider failure")
        facts = self.facts("model_request", outcome)
        self.replies += 1
        parts: list[Any] = []
        if facts["hasText"]:
            parts.append(types.Part(text=ANSWER))
        if agent != HELPER:
            parts.extend(self._calls(agent, facts))
        return self.adk.llm_response.LlmResponse(
            content=types.Content(role="model", parts=parts),
            finish_reason=types.FinishReason.STOP,
        )

    def _calls(self, agent: str, facts: Mapping[str, Value]) -> list[Any]:
        types = self.adk.types

        def call(name: str, args: dict[str, Any], tag: str) -> Any:
            function_call = types.FunctionCall(name=name, args=args, id=f"{tag}_{self.replies}")
            return types.Part(function_call=function_call)

        if self.agent_tool and facts["delegate"]:
            return [call(HELPER, {"request": "Look it up."}, "helper")]
        parts = [call(TOOL, {"index": i}, f"call{i}") for i in range(int(facts["calls"]))]
        if facts["transfer"]:
            other = AGENTS[1] if agent == AGENTS[0] else AGENTS[0]
            parts.append(call(TRANSFER, {"agent_name": other}, "transfer"))
        return parts

    # -- the tool

    def tool(self, agent: str, index: int) -> str:
        facts = self.facts("run_tool", self.ask("run_tool", {"agent": agent, "index": index}))
        self.tool_executions += 1
        if not facts["ok"]:
            raise ScriptedToolFailure("scripted tool failure")
        return f"tool result {index}"

    def helper_started(self, callback_context: Any) -> None:
        self.agent_tool_runs += 1


def run_adk(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One `Runner.run_async` of the real ADK against `host`: (terminal, what the ADK called)."""
    adk = load_adk()
    run = _Run(table, host, adk, agent_tool=bool(params["agentTool"]))
    _current.run = run
    try:
        terminal = asyncio.run(_invoke(adk, run, int(params["maxLlmCalls"])))
    except _Stop:
        terminal = CONTRACT_VIOLATION
    finally:
        _current.run = None
    if run.violated:
        terminal = CONTRACT_VIOLATION
    counters = {
        "model_requests": run.model_requests,
        "tool_executions": run.tool_executions,
        "agent_tool_runs": run.agent_tool_runs,
    }
    return terminal, counters


def _build(adk: _Adk, run: _Run) -> Any:
    """root (with specialist as its sub-agent), the function tool, and the AgentTool when asked."""
    model = adk.scripted_model()

    async def probe(index: int, tool_context: Any) -> str:
        """Look something up."""
        return run.tool(str(tool_context.agent_name), index)

    tools: list[Any] = [adk.tools.FunctionTool(probe)]
    if run.agent_tool:
        helper = adk.agents.LlmAgent(
            name=HELPER,
            model=model,
            instruction="Answer the request.",
            description="Answers a request.",
            before_agent_callback=run.helper_started,
        )
        tools.append(adk.agent_tool.AgentTool(helper))
    specialist = adk.agents.LlmAgent(
        name=AGENTS[1], model=model, instruction="specialist", description="The specialist.", tools=tools
    )
    return adk.agents.LlmAgent(
        name=AGENTS[0],
        model=model,
        instruction="root",
        description="The root agent.",
        tools=list(tools),
        sub_agents=[specialist],
    )


async def _invoke(adk: _Adk, run: _Run, max_llm_calls: int) -> str:
    """How the run ended, read off the events Runner.run_async yielded and what it raised."""
    types = adk.types
    runner = adk.runners.InMemoryRunner(agent=_build(adk, run), app_name=APP)
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    last: Any = None
    try:
        async for event in runner.run_async(
            user_id=USER,
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text="Look it up.")]),
            run_config=adk.agents.RunConfig(max_llm_calls=max_llm_calls),
        ):
            last = event
    except adk.invocation_context.LlmCallsLimitExceededError:
        if last is None or last.error_code != LIMIT_ERROR:
            raise _AdapterBug("LlmCallsLimitExceededError without its error event") from None
        return "llm_calls_limit_exceeded"
    except ScriptedModelFailure:
        return "model_error"
    except ScriptedToolFailure:
        return "tool_error"
    finally:
        await runner.close()
    if run.violated:
        return CONTRACT_VIOLATION
    if last is None:
        raise _AdapterBug("Runner.run_async yielded no event")
    if last.error_code == NO_CONTENT:
        return "no_content"
    texts = [p.text for p in (last.content.parts if last.content and last.content.parts else []) if p.text]
    if last.is_final_response() and last.author in AGENTS and texts == [ANSWER]:
        return "final_response"
    raise _AdapterBug(f"Runner.run_async ended on an unexpected event from {last.author!r}: {last!r}")


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...google_adk:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_adk()
    return ThreadedScheduler(lambda params, host: run_adk(bound, params, host), timeout=timeout)
