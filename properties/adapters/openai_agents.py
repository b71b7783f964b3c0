"""The real openai-agents 0.24.0 `Runner.run`, driven by turnbound as its host (profile openai-agents).

The loop under test is the installed `Runner`, unchanged. Around it sit two agents (triage
and specialist, each able to hand off to the other) that share one function tool and one
model, and every effect the run performs becomes one host call on the table's vocabulary:

* the model is the SDK's own test double, `agents.testing.ScriptedModel`, whose every step
  is a responder: it asks `model_request` (the agent is read off the call's instructions)
  and answers with the SDK's own output items (`assistant_message`, `function_call`, the
  agent's handoff tool named by the call itself), or raises as the answer says;
* the function tool `probe` asks `run_tool` (its index is the argument the SDK parsed from
  the call) and returns, or raises for the tool's failure_error_function to answer;
* the `error_handlers={"max_turns": ...}` callback, when the run has one, asks
  `max_turns_handler`.

The terminal is read off what `Runner.run` returned or raised; the counters are the calls
the model and the tool actually received. Nothing is computed from the table.

Run it: `turnbound conform openai-agents --fuzz 500 --adapter
turnbound.properties.adapters.openai_agents:scheduler`.
"""

from __future__ import annotations

import asyncio
import importlib
import json
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

PROFILE = "openai-agents"
DISTRIBUTION = "openai-agents"
VERSION = "0.24.0"
INSTALL_HINT = "pip install -e '.[openai-agents]'"

AGENTS = ("triage", "specialist")
TOOL = "probe"
ANSWER = "Scripted answer."
INVALID_TEXT = "not the structured output"
TOOL_RESULT = "tool result"
HANDLER_ANSWER = "Handler answer at the turn limit."
DEFAULT_TOOL_ERROR = "An error occurred while running the tool. Please try again."
"""What the SDK's default failure_error_function gives the model for a raising tool (tool.py:1997-2002)."""

COUNTERS = ("model_requests", "tool_executions")


class ScriptedModelFailure(RuntimeError):
    """A provider error raised by the scripted model."""


class ScriptedToolFailure(RuntimeError):
    """The tool's own failure, answered by the SDK's default failure_error_function."""


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
    agents: ModuleType
    testing: ModuleType
    verdict: type[Any]


_loaded: _Sdk | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version(DISTRIBUTION)


def load_sdk() -> _Sdk:
    """Import the SDK once; a missing or different openai-agents is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {DISTRIBUTION: VERSION}, INSTALL_HINT)
        try:
            agents = importlib.import_module("agents")
            testing = importlib.import_module("agents.testing")
            pydantic = importlib.import_module("pydantic")
        except ImportError as exc:
            raise DefinitionError(f"{PROFILE}: openai-agents {VERSION} does not import ({exc})") from None
        agents.set_tracing_disabled(True)
        verdict = pydantic.create_model("Verdict", answer=(str, ...))
        _loaded = _Sdk(agents, testing, verdict)
        return _loaded


# -- one run -------------------------------------------------------------------------


class _Run:
    """The host side of one run: asks turnbound, counts what the SDK really called."""

    def __init__(self, table: Table, host: Host, sdk: _Sdk, structured: bool) -> None:
        self.table = table
        self.host = host
        self.sdk = sdk
        self.structured = structured
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

    # -- the model: one ScriptedModel responder step per call

    def respond(self, call: Any) -> Any:
        testing = self.sdk.testing
        agent = str(call.system_instructions or "")
        if agent not in AGENTS:
            raise _AdapterBug(f"a model call for an unknown agent {agent!r}")
        outcome = self.ask("model_request", {"agent": agent})
        self.model_requests += 1  # a call answered within its contract, a failure included
        if outcome.raise_ is not None:
            return ScriptedModelFailure("scripted provider failure")
        facts = self.facts("model_request", outcome)
        self.replies += 1
        items: list[Any] = []
        if facts["hasText"]:
            items.append(testing.assistant_message(self._text(bool(facts["valid"]))))
        for i in range(int(facts["calls"])):
            items.append(testing.function_call(TOOL, {"index": i}, call_id=f"call_{self.replies}_{i}"))
        if facts["handoff"]:
            if len(call.handoffs) != 1:
                raise _AdapterBug(f"agent {agent} offers {len(call.handoffs)} handoffs, not 1")
            name = call.handoffs[0].tool_name
            items.append(testing.function_call(name, {}, call_id=f"handoff_{self.replies}"))
        return items

    def _text(self, valid: bool) -> str:
        if not self.structured:
            return ANSWER
        return json.dumps({"answer": ANSWER}) if valid else INVALID_TEXT

    # -- the tool and the handler

    def tool(self, index: int) -> str:
        facts = self.facts("run_tool", self.ask("run_tool", {"index": index}))
        self.tool_executions += 1
        if not facts["ok"]:
            raise ScriptedToolFailure("scripted tool failure")
        return f"{TOOL_RESULT} {index}"

    def handler(self) -> Any:
        facts = self.facts("max_turns_handler", self.ask("max_turns_handler", {}))
        if not facts["output"]:
            return None
        return self.sdk.verdict(answer=HANDLER_ANSWER) if self.structured else HANDLER_ANSWER


def run_agents(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One `Runner.run` of the real SDK against `host`: (terminal, what the SDK called)."""
    sdk = load_sdk()
    agents, testing = sdk.agents, sdk.testing
    structured = bool(params["structured"])
    run = _Run(table, host, sdk, structured)
    model = testing.ScriptedModel()

    def step(call: Any) -> Any:
        model.enqueue(testing.ModelStep.respond(step))  # one more step for the next call
        return run.respond(call)

    model.enqueue(testing.ModelStep.respond(step))

    async def probe(index: int) -> str:
        """Look something up."""
        return run.tool(index)

    tool = agents.function_tool(probe)
    behavior = "stop_on_first_tool" if params["stopOnFirstTool"] else "run_llm_again"
    output_type = sdk.verdict if structured else None
    triage, specialist = (
        agents.Agent(
            name=name,
            instructions=name,
            model=model,
            tools=[tool],
            tool_use_behavior=behavior,
            output_type=output_type,
        )
        for name in AGENTS
    )
    triage.handoffs = [specialist]
    specialist.handoffs = [triage]
    options: dict[str, Any] = {
        "max_turns": int(params["maxTurns"]) if params["limited"] else None,
        "run_config": agents.RunConfig(tracing_disabled=True),
    }
    if params["maxTurnsHandler"]:
        options["error_handlers"] = {"max_turns": lambda data: run.handler()}
    terminal = _ending(sdk, run, triage, options)
    return terminal, {"model_requests": run.model_requests, "tool_executions": run.tool_executions}


def _ending(sdk: _Sdk, run: _Run, agent: Any, options: dict[str, Any]) -> str:
    """How the run ended, read off Runner.run's return value or exception."""
    agents = sdk.agents
    try:
        result = asyncio.run(agents.Runner.run(agent, "Look it up.", **options))
    except _Stop as stop:
        return stop.terminal
    except agents.MaxTurnsExceeded:
        return "max_turns_exceeded"
    except ScriptedModelFailure:
        return "model_error"
    except agents.ModelBehaviorError as exc:
        if run.structured:
            return "behavior_error"
        raise _AdapterBug(f"ModelBehaviorError without a structured output type: {exc}") from None
    output = result.final_output
    if isinstance(output, sdk.verdict):
        return "handler_output" if output.answer == HANDLER_ANSWER else "final_output"
    if output == HANDLER_ANSWER:
        return "handler_output"
    if isinstance(output, str) and (output.startswith(TOOL_RESULT) or output == DEFAULT_TOOL_ERROR):
        return "tool_output"
    if output in (ANSWER, ""):
        return "final_output"
    raise _AdapterBug(f"Runner.run returned an unexpected final output {output!r}")


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...openai_agents:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_sdk()
    return ThreadedScheduler(lambda params, host: run_agents(bound, params, host), timeout=timeout)
