"""The real pydantic-ai 2.68.0 agent run, driven by turnbound as its host (profile pydantic-ai).

The agent graph under test is the installed package, unchanged. The model is pydantic-ai's
own test facility `pydantic_ai.models.function.FunctionModel`, whose function asks the host
for every response; the agent's one function tool asks the host for every execution:

* `model_request`: the FunctionModel function is called by the graph for a model request;
  the answer becomes a `ModelResponse` with that many `ToolCallPart`s and, if the answer
  says so, a `TextPart` (the accepted answer, or a text the output validator rejects with
  `ModelRetry`); an empty response has no part at all; `model_error` raises from the model;
* `run_tool`: the tool body runs; it returns, raises `ModelRetry` (`retry`), or raises an
  ordinary exception (`tool_error`).

The knobs go in as the framework takes them: `UsageLimits(request_limit=..., tool_calls_limit=...)`
(None for "no limit") and `retries={'output': ..., 'tools': ...}`. The terminal is read off how
`Agent.iter` ended (its result, or the exception and the message the real code raised); the
counters are the run's own `RunUsage.requests`, `RunUsage.tool_calls` and
`output_retries_used`, plus the number of times the graph executed the tool body.

Run it: `turnbound conform pydantic-ai --fuzz 500 --adapter
turnbound.properties.adapters.pydantic_ai:scheduler`.
"""

from __future__ import annotations

import asyncio
import importlib
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

PROFILE = "pydantic-ai"
DISTRIBUTION = "pydantic-ai-slim"
VERSION = "2.68.0"
INSTALL_HINT = "pip install -e '.[pydantic-ai]'"

COUNTERS = ("model_requests", "tool_executions", "tool_calls", "output_retries")
TOOL = "probe"
PROMPT = "Look it up."
ANSWER = "Scripted answer."
REJECTED = "Scripted answer the output validator rejects."

# The messages the real code raises with (usage.py:637, 723; _agent_graph.py:866; tool_manager.py:530).
ENDINGS = (
    ("UsageLimitExceeded", "The next request would exceed the request_limit", "request_limit_exceeded"),
    (
        "UsageLimitExceeded",
        "The next tool call(s) would exceed the tool_calls_limit",
        "tool_calls_limit_exceeded",
    ),
    ("UnexpectedModelBehavior", "Exceeded maximum output retries", "output_retries_exceeded"),
    ("UnexpectedModelBehavior", f"Tool {TOOL!r} exceeded max retries count", "tool_retries_exceeded"),
)


class ScriptedModelError(RuntimeError):
    """The model request failed (a provider error the agent has no fallback for)."""


class ScriptedToolError(RuntimeError):
    """The tool failed with an ordinary exception."""


class _Stop(BaseException):
    """Ends the run from inside the graph: a host answer outside its contract."""


# -- the installed package -----------------------------------------------------------


@dataclass(frozen=True)
class _PydanticAI:
    agent: type[Any]
    function_model: type[Any]
    messages: ModuleType
    usage_limits: type[Any]
    model_retry: type[BaseException]
    usage_limit_exceeded: type[BaseException]
    unexpected_model_behavior: type[BaseException]


_loaded: _PydanticAI | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version(DISTRIBUTION)


def load_pydantic_ai() -> _PydanticAI:
    """Import the framework once; a missing or different version is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {DISTRIBUTION: VERSION}, INSTALL_HINT)
        try:
            root = importlib.import_module("pydantic_ai")
            function = importlib.import_module("pydantic_ai.models.function")
            messages = importlib.import_module("pydantic_ai.messages")
            usage = importlib.import_module("pydantic_ai.usage")
            exceptions = importlib.import_module("pydantic_ai.exceptions")
        except ImportError as exc:
            raise DefinitionError(f"{PROFILE}: {DISTRIBUTION} {VERSION} does not import ({exc})") from None
        _loaded = _PydanticAI(
            root.Agent,
            function.FunctionModel,
            messages,
            usage.UsageLimits,
            exceptions.ModelRetry,
            exceptions.UsageLimitExceeded,
            exceptions.UnexpectedModelBehavior,
        )
        return _loaded


# -- one run ---------------------------------------------------------------------------


class _Run:
    """The host side of one agent run."""

    def __init__(self, table: Table, host: Host, pa: _PydanticAI) -> None:
        self.table = table
        self.host = host
        self.pa = pa
        self.stopped = False
        self.tool_executions = 0
        self.calls = 0

    def ask(self, op: str) -> Outcome:
        """One host call; an answer outside the op's contract ends the run at contract_violation."""
        if self.stopped:  # a call of the same batch after the violation: never reaches the host
            raise _Stop(CONTRACT_VIOLATION)
        outcome = self.host.call(op, {})
        if contract_violation(self.table, self.table.operations[op], outcome):
            self.stopped = True
            raise _Stop(CONTRACT_VIOLATION)
        return outcome

    async def respond(self, messages: list[Any], info: Any) -> Any:
        """The FunctionModel's function: one model request."""
        outcome = self.ask("model_request")
        if outcome.raise_ is not None:
            raise ScriptedModelError("scripted model failure")
        facts = complete(self.table.operations["model_request"].facts, outcome.facts or {})
        m = self.pa.messages
        parts: list[Any] = []
        if facts["hasText"]:
            parts.append(m.TextPart(ANSWER if facts["valid"] else REJECTED))
        for _ in range(int(facts["calls"])):
            self.calls += 1
            parts.append(m.ToolCallPart(TOOL, {}, tool_call_id=f"call_{self.calls}"))
        return m.ModelResponse(parts=parts)

    async def probe(self) -> str:
        """The function tool's body: one execution."""
        outcome = self.ask("run_tool")
        self.tool_executions += 1
        if outcome.raise_ is not None:
            raise ScriptedToolError("scripted tool failure")
        if complete(self.table.operations["run_tool"].facts, outcome.facts or {})["retry"]:
            raise self.pa.model_retry("Scripted: call the tool again.")
        return "ok"

    def validate(self, output: str) -> str:
        if output == REJECTED:
            raise self.pa.model_retry("Scripted: the answer is rejected.")
        return output


def _limit(params: Mapping[str, int], value: str, mode: str) -> int | None:
    return int(params[value]) if params[mode] else None


def _agent(run: _Run, params: Mapping[str, int]) -> Any:
    agent = run.pa.agent(
        run.pa.function_model(run.respond),
        output_type=str,
        retries={"output": int(params["outputRetries"]), "tools": int(params["toolRetries"])},
    )
    agent.tool_plain(name=TOOL)(run.probe)
    agent.output_validator(run.validate)
    return agent


def run_turn(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One run of the real agent against `host`: (terminal, the run's counters)."""
    pa = load_pydantic_ai()
    params = {**table.defaults(), **params}  # the table's defaults are the framework's
    run = _Run(table, host, pa)
    agent = _agent(run, params)
    limits = pa.usage_limits(
        request_limit=_limit(params, "requestLimit", "requestLimited"),
        tool_calls_limit=_limit(params, "toolCallsLimit", "toolCallsLimited"),
    )
    runs: list[Any] = []

    async def drive() -> Any:
        async with agent.iter(PROMPT, usage_limits=limits) as agent_run:
            runs.append(agent_run)
            async for _node in agent_run:
                pass
        return agent_run.result

    terminal = _ending(pa, drive)
    if not runs:
        raise RuntimeError(f"{PROFILE} adapter: the run ended before Agent.iter opened ({terminal})")
    usage = runs[0].usage
    counters = {
        "model_requests": int(usage.requests),
        "tool_executions": run.tool_executions,
        "tool_calls": int(usage.tool_calls),
        "output_retries": int(runs[0].ctx.state.output_retries_used),
    }
    return terminal, counters


def _ending(pa: _PydanticAI, drive: Any) -> str:
    """How the run ended, read off its result or the exception the real code raised."""
    try:
        result = asyncio.run(drive())
    except _Stop:
        return CONTRACT_VIOLATION
    except (ScriptedModelError, ScriptedToolError):
        return "error"
    except (pa.usage_limit_exceeded, pa.unexpected_model_behavior) as exc:
        for kind, prefix, terminal in ENDINGS:
            if type(exc).__name__ == kind and str(exc).startswith(prefix):
                return terminal
        raise RuntimeError(f"{PROFILE} adapter: unexpected {type(exc).__name__}: {exc}") from None
    if result is None or result.output != ANSWER:
        raise RuntimeError(f"{PROFILE} adapter: the run returned an unexpected output {result!r}")
    return "output"


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...pydantic_ai:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_pydantic_ai()
    return ThreadedScheduler(lambda params, host: run_turn(bound, params, host), timeout=timeout)
