"""The real smolagents 1.26.0 `ToolCallingAgent.run`, driven by turnbound as its host (profile smolagents).

The loop under test is the installed `ToolCallingAgent`, unchanged. Around it sit one
function tool, the agent's built-in final_answer tool and, when the run configures one, a
final_answer_checks function; every effect the run performs becomes one host call on the
table's vocabulary:

* the model is a subclass of `smolagents.models.Model` implementing `generate`, the way the
  package's own docstring (models.py:476-481) and its test suite fake a model. The call's
  own arguments say which request it is: tools offered (an action step, agents.py:1309-1313)
  is `model_request`, answered with the package's `ChatMessage` / `ChatMessageToolCall`
  (function tool calls, then a final_answer call, or plain text without a tool call);
  `stop_sequences=["<end_plan>"]` (agents.py:672, 730) is `plan_request`; neither (agents.py:847)
  is `final_answer_request`. A scripted failure raises from `generate`;
* the function tool `probe` (a `smolagents.Tool`) asks `run_tool` and returns, or raises;
* the final_answer_checks function asks `final_answer_check` and returns its verdict.

Several calls of one reply run in the agent's own ThreadPoolExecutor (agents.py:1424-1433);
each waits until the call before it has been answered, so they reach the host in the
reply's order. The terminal is read off what `run()` returned or raised; the counters are
the calls the model and the tool actually received. Nothing is computed from the table.

Run it: `turnbound conform smolagents --fuzz 500 --adapter
turnbound.properties.adapters.smolagents:scheduler`.
"""

from __future__ import annotations

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
from turnbound.reference.types import Value

PROFILE = "smolagents"
DISTRIBUTION = "smolagents"
VERSION = "1.26.0"
INSTALL_HINT = "pip install -e '.[smolagents]'"

TOOL = "probe"
AGENT_DEFAULT_MAX_STEPS = 20
"""MultiStepAgent's max_steps default (agents.py:300): what run(max_steps=0) falls back to."""
THINKING = "Still thinking, no tool call yet."
FINAL_ANSWER = "Scripted final answer."
CAP_ANSWER = "Scripted answer after the last step."
PLAN = "Scripted plan."
CAP_ERROR_PREFIX = "Error in generating final LLM output:"
"""What provide_final_answer answers when its model call raises (agents.py:849-853)."""
PLAN_STOP = ["<end_plan>"]
TURNSTILE_WAIT = 10.0

COUNTERS = ("model_requests", "tool_executions")


class ScriptedModelFailure(RuntimeError):
    """A provider error raised by the scripted model."""


class ScriptedToolFailure(RuntimeError):
    """The function tool's own failure."""


class _Stop(BaseException):
    """Ends the run from inside the agent without its `except Exception` handlers seeing it."""

    def __init__(self, terminal: str) -> None:
        super().__init__(terminal)
        self.terminal = terminal


class _AdapterBug(RuntimeError):
    pass


# -- the installed package -----------------------------------------------------------


@dataclass(frozen=True)
class _Sdk:
    agents: ModuleType
    models: ModuleType
    tools: ModuleType
    utils: ModuleType
    monitoring: ModuleType


_loaded: _Sdk | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version(DISTRIBUTION)


def load_sdk() -> _Sdk:
    """Import smolagents once; a missing or different smolagents is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {DISTRIBUTION: VERSION}, INSTALL_HINT)
        try:
            modules = [
                importlib.import_module(f"smolagents.{name}")
                for name in ("agents", "models", "tools", "utils", "monitoring")
            ]
        except ImportError as exc:
            raise DefinitionError(f"{PROFILE}: smolagents {VERSION} does not import ({exc})") from None
        _loaded = _Sdk(*modules)
        return _loaded


# -- one run -------------------------------------------------------------------------


class _Run:
    """The host side of one run: asks turnbound, counts what the agent really called."""

    def __init__(self, table: Table, host: Host, sdk: _Sdk) -> None:
        self.table = table
        self.host = host
        self.sdk = sdk
        self.model_requests = 0
        self.tool_executions = 0
        self.replies = 0
        self._lock = threading.Condition()
        self._asked = 0  # calls of the current reply answered so far
        self._stopped = False

    def ask(self, op: str, args: dict[str, Value]) -> Outcome:
        """One host call; an answer outside the op's contract ends the run at contract_violation."""
        if self._stopped:
            raise _Stop(CONTRACT_VIOLATION)
        try:
            outcome = self.host.call(op, args)
        except BaseException:
            self._stopped = True  # the driver ended the run: no further host call
            raise
        if contract_violation(self.table, self.table.operations[op], outcome):
            self._stopped = True
            raise _Stop(CONTRACT_VIOLATION)
        return outcome

    def facts(self, op: str, outcome: Outcome) -> dict[str, Value]:
        return complete(self.table.operations[op].facts, outcome.facts or {})

    # -- the model: one generate per request

    def generate(self, stop_sequences: list[str] | None, tools_to_call_from: list[Any] | None) -> Any:
        models = self.sdk.models
        if tools_to_call_from:
            op = "model_request"
        elif stop_sequences == PLAN_STOP:
            op = "plan_request"
        elif stop_sequences is None:
            op = "final_answer_request"
        else:
            raise _AdapterBug(f"a model call with stop sequences {stop_sequences!r} and no tools")
        outcome = self.ask(op, {})
        self.model_requests += 1  # a call answered within its contract, a failure included
        if outcome.raise_ is not None:
            raise ScriptedModelFailure("scripted provider failure")
        assistant = models.MessageRole.ASSISTANT
        if op == "plan_request":
            return models.ChatMessage(role=assistant, content=PLAN)
        if op == "final_answer_request":
            return models.ChatMessage(role=assistant, content=CAP_ANSWER)
        facts = self.facts(op, outcome)
        with self._lock:
            self.replies += 1
            self._asked = 0
        reply = self.replies
        calls = [self._call(TOOL, {"index": i}, f"call_{reply}_{i}") for i in range(int(facts["calls"]))]
        if facts["answers"]:
            calls.append(self._call("final_answer", {"answer": FINAL_ANSWER}, f"answer_{self.replies}"))
        if not calls:
            return models.ChatMessage(role=assistant, content=THINKING)
        return models.ChatMessage(role=assistant, content=None, tool_calls=calls)

    def _call(self, name: str, arguments: dict[str, Any], call_id: str) -> Any:
        models = self.sdk.models
        function = models.ChatMessageToolCallFunction(name=name, arguments=arguments)
        return models.ChatMessageToolCall(function=function, id=call_id, type="function")

    # -- the tool and the check

    def tool(self, index: int) -> str:
        """One execution of the function tool, asked of the host after the reply's earlier calls."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._asked == index or self._stopped, TURNSTILE_WAIT):
                raise _AdapterBug(f"tool call {index} waited in vain for call {self._asked}")
        try:
            facts = self.facts("run_tool", self.ask("run_tool", {"index": index}))
            self.tool_executions += 1
        finally:
            with self._lock:
                self._asked = index + 1
                self._lock.notify_all()
        if not facts["ok"]:
            raise ScriptedToolFailure("scripted tool failure")
        return f"tool result {index}"

    def check(self, answer: Any, memory: Any, agent: Any = None) -> bool:
        if answer != FINAL_ANSWER:
            raise _AdapterBug(f"final_answer_checks saw {answer!r}, not the final_answer tool's answer")
        return bool(self.facts("final_answer_check", self.ask("final_answer_check", {}))["ok"])


def _model_class(sdk: _Sdk) -> type[Any]:
    base: type[Any] = sdk.models.Model

    class ScriptedModel(base):  # type: ignore[misc]
        """A smolagents Model whose every generate is one host call."""

        def __init__(self, run: _Run) -> None:
            super().__init__(model_id="turnbound-scripted")
            self.run = run

        def generate(
            self,
            messages: list[Any],
            stop_sequences: list[str] | None = None,
            response_format: Any = None,
            tools_to_call_from: list[Any] | None = None,
            **kwargs: Any,
        ) -> Any:
            return self.run.generate(stop_sequences, tools_to_call_from)

    return ScriptedModel


def _tool_class(sdk: _Sdk) -> type[Any]:
    base: type[Any] = sdk.tools.Tool

    class ProbeTool(base):  # type: ignore[misc]
        name = TOOL
        description = "Look something up."
        inputs = {"index": {"type": "integer", "description": "The call's position in the reply."}}  # noqa: RUF012
        output_type = "string"

        def __init__(self, run: _Run) -> None:
            super().__init__()
            self.run = run

        def forward(self, index: int) -> str:
            return self.run.tool(index)

    return ProbeTool


def run_agent(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One `ToolCallingAgent.run` of the real package against `host`: (terminal, what it called)."""
    sdk = load_sdk()
    run = _Run(table, host, sdk)
    knob: int | float = int(params["maxSteps"]) if params["limited"] else float("inf")
    options: dict[str, Any] = {
        "tools": [_tool_class(sdk)(run)],
        "model": _model_class(sdk)(run),
        "verbosity_level": sdk.monitoring.LogLevel.OFF,
        "planning_interval": int(params["planningInterval"]) if params["planning"] else None,
    }
    if params["finalAnswerChecks"]:
        options["final_answer_checks"] = [run.check]
    run_options: dict[str, Any] = {}
    if params["viaRun"]:
        run_options["max_steps"] = knob  # the agent keeps its default max_steps
    else:
        options["max_steps"] = knob
    agent = sdk.agents.ToolCallingAgent(**options)
    terminal = _ending(sdk, agent, run_options)
    return terminal, {"model_requests": run.model_requests, "tool_executions": run.tool_executions}


def _ending(sdk: _Sdk, agent: Any, run_options: dict[str, Any]) -> str:
    """How the run ended, read off run()'s return value or exception."""
    try:
        output = agent.run("Look it up.", **run_options)
    except _Stop as stop:
        return stop.terminal
    except sdk.utils.AgentGenerationError as exc:
        if isinstance(exc.__cause__, ScriptedModelFailure):
            return "generation_error"
        raise _AdapterBug(f"AgentGenerationError not caused by the scripted model: {exc}") from None
    except ScriptedModelFailure:
        return "planning_error"
    except ZeroDivisionError:
        return "zero_interval_error"
    except UnboundLocalError as exc:
        for name in ("action_step", "final_answer"):
            if f"'{name}'" in str(exc):
                return f"unbound_{name}"
        raise _AdapterBug(f"an unexpected UnboundLocalError: {exc}") from None
    text = _text(output)
    if text == FINAL_ANSWER:
        return "final_answer"
    if text == CAP_ANSWER or text.startswith(CAP_ERROR_PREFIX):
        return "max_steps_answer"
    raise _AdapterBug(f"run() returned an unexpected output {output!r}")


def _text(output: Any) -> str:
    """The run's output as text: provide_final_answer's error answer is a list of content parts."""
    if isinstance(output, list) and len(output) == 1 and isinstance(output[0], dict):
        return str(output[0].get("text"))
    return str(output)


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...smolagents:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_sdk()
    return ThreadedScheduler(lambda params, host: run_agent(bound, params, host), timeout=timeout)
