"""The real strands-agents 1.62.0 agent event loop, driven by turnbound as its host (profile strands-agents).

The loop under test is the installed `strands.Agent`, unchanged, called once per run through
`invoke_async(prompt, limits=...)`. Around it sit one model and one tool, and every effect the
run performs becomes one host call on the table's vocabulary:

* the model is a `strands.models.Model` whose `stream` answers with the SDK's own stream
  events (messageStart, contentBlockStart/Delta/Stop, messageStop: the shape the SDK's test
  model provider streams). Each call asks `model_request`, its `cycle` read off the agent's
  own metrics (`len(latest_agent_invocation.cycles)`), and streams a reply with that many
  tool uses, or raises ModelThrottledException / a provider error as the answer says;
* the async `@tool` `probe` asks `run_tool` (its index is the input the SDK parsed from the
  tool use) and returns, or raises for strands to turn into an error result.

The retry strategy is the SDK's ModelRetryStrategy with the table's max_attempts and no
back-off delay (initial_delay=0, max_delay=0), so a throttled run does not sleep.

The terminal is read off the AgentResult's stop_reason or the exception the call raised (the
model's own, or an EventLoopException whose original_exception is it); the
counters are the calls the model and the tool actually received. Nothing is computed from
the table.

Run it: `turnbound conform strands-agents --fuzz 500 --adapter
turnbound.properties.adapters.strands_agents:scheduler`.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from collections.abc import AsyncIterator, Mapping
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

PROFILE = "strands-agents"
DISTRIBUTION = "strands-agents"
VERSION = "1.62.0"
INSTALL_HINT = "pip install -e '.[strands-agents]'"

TOOL = "probe"
ANSWER = "Scripted answer."
PROMPT = "Look it up."
COUNTERS = ("model_requests", "tool_executions")


class ScriptedModelFailure(RuntimeError):
    """A provider error raised by the scripted model (not retryable)."""


class ScriptedToolFailure(RuntimeError):
    """The tool's own failure, which strands turns into an error tool result."""


class _Stop(BaseException):
    """Ends the run from inside the SDK without its `except Exception` handlers seeing it."""

    def __init__(self, terminal: str) -> None:
        super().__init__(terminal)
        self.terminal = terminal


class _AdapterBug(RuntimeError):
    pass


# -- the installed package -----------------------------------------------------------


@dataclass(frozen=True)
class _Sdk:
    strands: ModuleType
    exceptions: ModuleType
    model_base: type[Any]


_loaded: _Sdk | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version(DISTRIBUTION)


def load_sdk() -> _Sdk:
    """Import the SDK once; a missing or different strands-agents is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {DISTRIBUTION: VERSION}, INSTALL_HINT)
        try:
            strands = importlib.import_module("strands")
            models = importlib.import_module("strands.models")
            exceptions = importlib.import_module("strands.types.exceptions")
        except ImportError as exc:
            raise DefinitionError(f"{PROFILE}: strands-agents {VERSION} does not import ({exc})") from None
        _loaded = _Sdk(strands, exceptions, models.Model)
        return _loaded


# -- one run -------------------------------------------------------------------------


class _Run:
    """The host side of one run: asks turnbound, counts what the SDK really called."""

    def __init__(self, table: Table, host: Host, sdk: _Sdk) -> None:
        self.table = table
        self.host = host
        self.sdk = sdk
        self.agent: Any = None
        self.model_requests = 0
        self.tool_executions = 0
        self.replies = 0

    def ask(self, op: str, args: dict[str, Value]) -> Outcome:
        """One host call; an answer outside the op's contract ends the run at contract_violation."""
        outcome = self.host.call(op, args)
        if contract_violation(self.table, self.table.operations[op], outcome):
            raise _Stop(CONTRACT_VIOLATION)
        return outcome

    def facts(self, op: str, outcome: Outcome) -> dict[str, Value]:
        return complete(self.table.operations[op].facts, outcome.facts or {})

    def cycle(self) -> int:
        """The cycles this invocation has started, as strands itself counts them for the cap."""
        invocation = self.agent.event_loop_metrics.latest_agent_invocation
        if invocation is None:
            raise _AdapterBug("a model call outside an agent invocation")
        return len(invocation.cycles)

    def reply(self) -> list[dict[str, Any]]:
        """One model call: the stream events of the reply the host describes, or its raise."""
        outcome = self.ask("model_request", {"cycle": self.cycle()})
        self.model_requests += 1  # a call answered within its contract, a failure included
        if outcome.raise_ == "throttled":
            raise self.sdk.exceptions.ModelThrottledException("scripted throttle")
        if outcome.raise_ is not None:
            raise ScriptedModelFailure("scripted provider failure")
        facts = self.facts("model_request", outcome)
        self.replies += 1
        calls = int(facts["calls"])
        events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
        if calls == 0:
            events += [
                {"contentBlockStart": {"start": {}}},
                {"contentBlockDelta": {"delta": {"text": ANSWER}}},
                {"contentBlockStop": {}},
            ]
        for i in range(calls):
            use = {"name": TOOL, "toolUseId": f"use_{self.replies}_{i}"}
            events += [
                {"contentBlockStart": {"start": {"toolUse": use}}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"index": i})}}}},
                {"contentBlockStop": {}},
            ]
        stop = "max_tokens" if facts["maxTokens"] else ("tool_use" if calls else "end_turn")
        events.append({"messageStop": {"stopReason": stop}})
        return events

    def tool(self, index: int) -> str:
        facts = self.facts("run_tool", self.ask("run_tool", {"index": index}))
        self.tool_executions += 1
        if not facts["ok"]:
            raise ScriptedToolFailure("scripted tool failure")
        return f"tool result {index}"


def _model(sdk: _Sdk, run: _Run) -> Any:
    """A strands Model whose every `stream` call is one host call (the SDK's Model interface)."""

    class ScriptedModel(sdk.model_base):  # type: ignore[misc, name-defined]
        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> dict[str, Any]:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise _AdapterBug("structured output is not part of the table")
            yield  # an async generator, as the interface declares

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            for event in run.reply():
                yield event

    return ScriptedModel()


def run_agent(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One invocation of the real Agent against `host`: (terminal, what the SDK called)."""
    sdk = load_sdk()
    strands = sdk.strands
    run = _Run(table, host, sdk)

    async def probe(index: int) -> str:
        """Look something up."""
        return run.tool(index)

    agent = strands.Agent(
        model=_model(sdk, run),
        tools=[strands.tool(probe)],
        callback_handler=None,
        retry_strategy=strands.ModelRetryStrategy(
            max_attempts=int(params["maxAttempts"]), initial_delay=0, max_delay=0
        ),
    )
    run.agent = agent
    limits = {"turns": int(params["turns"])} if params["limited"] else None
    terminal = _ending(sdk, agent, limits)
    return terminal, {"model_requests": run.model_requests, "tool_executions": run.tool_executions}


def _ending(sdk: _Sdk, agent: Any, limits: dict[str, int] | None) -> str:
    """How the run ended, read off the AgentResult or the exception the call raised."""
    exceptions = sdk.exceptions
    try:
        result = asyncio.run(agent.invoke_async(PROMPT, limits=limits))
    except _Stop as stop:
        return stop.terminal
    except TypeError as exc:
        if "must be a positive int" in str(exc):
            return "invalid_limits"
        raise
    except exceptions.ModelThrottledException:
        return "throttled_out"
    except ScriptedModelFailure:
        return "model_error"
    except exceptions.MaxTokensReachedException:
        return "max_tokens_error"
    except exceptions.EventLoopException as exc:
        original = exc.original_exception
        if isinstance(original, exceptions.ModelThrottledException):
            return "throttled_out_wrapped"
        if isinstance(original, ScriptedModelFailure):
            return "model_error_wrapped"
        raise
    if result.stop_reason in ("end_turn", "limit_turns"):
        return str(result.stop_reason)
    raise _AdapterBug(f"the agent stopped with an unexpected stop_reason {result.stop_reason!r}")


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...strands_agents:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_sdk()
    return ThreadedScheduler(lambda params, host: run_agent(bound, params, host), timeout=timeout)
