"""The real deeptutor 1.6.15 `AgentLoop`, driven by turnbound as its host (profile deeptutor-agentloop).

The loop under test is the installed class, unchanged and unpatched in its logic. Around
it sit scripted collaborators, and every effect the loop performs becomes one host call on
the table's wire vocabulary:

* the model client: `client.chat.completions.create` asks `call_round` (or `forced_round`
  for the tool-less final call) and returns a provider stream built from the answer —
  tool calls, visible text, reasoning, finish_reason "length", usage at the token cap —
  or fails as the answer says (transient or not, before or after visible output);
* the pipeline, the loop's host in deeptutor's own design: tool dispatch, the ask_user
  wait and the capability hooks ask `dispatch_tools`, `await_user`, `prepare_recovery`,
  `finish_guard` and `final_override`;
* the stream is deeptutor's own `StreamBus`; the adapter reads its call_status events to
  learn which kind of model call the loop is making, and which attempt of it.

Arguments and the terminal are read off what the loop did (its requests, its events, the
notices it asked its pipeline for, its return value or exception), never computed from
the table; the counters are the loop's own `AgentLoopState`.

Run it: `turnbound conform deeptutor-agentloop --fuzz 2000 --adapter
turnbound.properties.adapters.deeptutor_agentloop:scheduler`.

Why this module is long: an adapter is one module (`--adapter module:scheduler` names it,
and the bundled adapters are the examples docs/frameworks/ADDING.md points to), and
deeptutor's AgentLoop needs several scripted collaborators where another framework needs
one scripted model: the model client and its provider stream, the pipeline (tool dispatch,
ask_user, the capability hooks), the stream bus's call_status events and the retry delays,
tied together by one turn. Split apart, a turn's wiring would be spread over files that are
only ever read together.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import Any

from turnbound.properties.adapters import pinned
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Host
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import CONTRACT_VIOLATION, Table
from turnbound.reference.types import Value

PROFILE = "deeptutor-agentloop"
VERSION = "1.6.15"
INSTALL_HINT = f"pip install --no-deps deeptutor=={VERSION} && pip install -e '.[deeptutor]'"

MAX_TOKENS = 1000
"""The pipeline's per-round output budget; an answer `atTokenCap` reports exactly this many tokens."""
FULL_SURFACE = ("search_notes", "ask_user", "deliver_card")
RECOVERY_SURFACE = ("deliver_card",)
OFF_SURFACE_TOOL = "unlisted_tool"
"""A tool the model names although no request offered it (the `offSurface` fact)."""
ANSWER = "Scripted answer."
PARTIAL = "Partial answer, then the stream broke."
REASONING = "Planning the next step."
OVERRIDE = "Capability-owned answer."
TERMINATOR = "Terminator tool answer."
REDIRECT = "Complete the required tool step before finishing."

# Notices the loop asks its pipeline for (`_t(key)`): how the adapter tells endings apart.
REJECT_NOTICE = "notices.capability_finish_rejected"
FORCED_NOTICES = {"notices.loop_budget_exhausted": "budget", "notices.loop_error_finish": "error"}

COUNTERS = ("rounds", "exploration_rounds", "settlement_rounds", "tool_steps", "reasoning_budget_recoveries")


class ScriptedProviderFailure(RuntimeError):
    """A provider error the loop does not classify as transient (an HTTP status, a bad response)."""


class ScriptedConnectionReset(ConnectionError):
    """A transport failure the loop classifies as transient (`is_transient_transport_error`)."""


class _Stop(BaseException):
    """Ends the turn from inside the loop without letting its `except Exception` salvage it."""

    def __init__(self, terminal: str) -> None:
        super().__init__(terminal)
        self.terminal = terminal


class _AdapterBug(BaseException):
    """An error in this adapter, kept out of the loop's own failure handling."""


# -- the installed package -----------------------------------------------------------


@dataclass(frozen=True)
class _Deeptutor:
    agent_loop: ModuleType
    stream_bus: type[Any]
    context: type[Any]
    dispatch_outcome: type[Any]
    reasoning_exhausted: type[BaseException]
    transport_error: type[BaseException]


_loaded: _Deeptutor | None = None
_load_lock = threading.Lock()


def installed_version() -> str | None:
    return pinned.installed_version("deeptutor")


def load_deeptutor() -> _Deeptutor:
    """Import the loop's modules once; a missing or different deeptutor is one clear error."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        pinned.require_pinned(PROFILE, {"deeptutor": VERSION}, INSTALL_HINT)
        try:
            agent_loop = importlib.import_module("deeptutor.agents.loop.agent_loop")
            bus = importlib.import_module("deeptutor.runtime.stream_bus")
            context = importlib.import_module("deeptutor.core.context")
            dispatch = importlib.import_module("deeptutor.runtime.agentic.tool_dispatch")
            llm = importlib.import_module("deeptutor.services.llm")
        except ImportError as exc:
            raise DefinitionError(
                f"{PROFILE}: deeptutor {VERSION} does not import ({exc}); install its loop's "
                f"dependencies with: {INSTALL_HINT}"
            ) from None
        # The loop logs a warning on every salvaged round; with no handler configured
        # Python would print each one to stderr. Records still propagate to the root.
        logging.getLogger("deeptutor").addHandler(logging.NullHandler())
        _loaded = _Deeptutor(
            agent_loop,
            bus.StreamBus,
            context.UnifiedContext,
            dispatch.DispatchOutcome,
            llm.LLMReasoningBudgetExhausted,
            llm.LLMProviderTransportError,
        )
        return _loaded


RETRY_DELAYS = "_PROVIDER_RETRY_DELAYS"
_retry_lock = threading.Lock()
_retry_users = 0
_retry_saved: tuple[float, ...] = ()


@contextmanager
def _instant_retries(agent_loop: ModuleType) -> Iterator[None]:
    """Zero the provider retry *delays* (0.5 s, 1.5 s) while turns run.

    Timing only: the number of retries is `len(_PROVIDER_RETRY_DELAYS)` and stays the
    real one. The installed files are untouched; the value is restored afterwards.
    """
    global _retry_users, _retry_saved
    with _retry_lock:
        if _retry_users == 0:
            _retry_saved = tuple(getattr(agent_loop, RETRY_DELAYS))
            setattr(agent_loop, RETRY_DELAYS, tuple(0.0 for _ in _retry_saved))
        _retry_users += 1
    try:
        yield
    finally:
        with _retry_lock:
            _retry_users -= 1
            if _retry_users == 0:
                setattr(agent_loop, RETRY_DELAYS, _retry_saved)


# -- one turn ------------------------------------------------------------------------


class _Turn:
    """The host side of one turn: asks turnbound, remembers what the loop has done so far."""

    def __init__(self, table: Table, host: Host, dt: _Deeptutor) -> None:
        self.table = table
        self.host = host
        self.dt = dt
        self.notices: list[str] = []
        self.call_kind = ""
        self.trace_role = ""
        self.attempt = 0
        self.replies = 0

    def ask(self, op: str, args: dict[str, Value]) -> Outcome:
        """One host call; an answer outside the op's contract ends the turn at contract_violation."""
        outcome = self.host.call(op, args)
        if contract_violation(self.table, self.table.operations[op], outcome):
            raise _Stop(CONTRACT_VIOLATION)
        if outcome.raise_ == "abort":
            raise asyncio.CancelledError  # what an aborted turn's task sees at this await
        return outcome

    def facts(self, op: str, outcome: Outcome) -> dict[str, Value]:
        return complete(self.table.operations[op].facts, outcome.facts or {})

    # -- what the loop tells its stream and its pipeline

    def see_event(self, event: Any) -> None:
        meta = getattr(event, "metadata", None) or {}
        if meta.get("trace_kind") == "call_status" and meta.get("call_state") == "running":
            self.call_kind = str(meta.get("call_kind") or "")
            self.trace_role = str(meta.get("trace_role") or "")
            self.attempt = 0

    def forced_reason(self) -> str:
        reasons = [FORCED_NOTICES[k] for k in self.notices if k in FORCED_NOTICES]
        if not reasons:
            raise _AdapterBug("a tool-less final call without the forced-finish notice before it")
        return reasons[-1]

    # -- the model

    async def create(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        tools = tuple(str((s.get("function") or {}).get("name") or "") for s in kwargs.get("tools") or [])
        if self.call_kind == "llm_final_response":
            op = "forced_round"
            args: dict[str, Value] = {"reason": self.forced_reason(), "attempt": self.attempt}
        elif self.call_kind == "agent_loop_round":
            mode = "exploration" if self.trace_role == "explore" else "settlement"
            args = {"mode": mode, "recovery": tools == RECOVERY_SURFACE, "attempt": self.attempt}
            op = "call_round"
        else:
            raise _AdapterBug(f"a model call of unknown kind {self.call_kind!r}")
        self.attempt += 1
        outcome = self.ask(op, args)
        if outcome.raise_ is not None:
            fields = complete(self.table.failures[outcome.raise_].fields, outcome.fields)
            exc: Exception = (
                ScriptedConnectionReset("scripted connection reset")
                if fields.get("transient")
                else ScriptedProviderFailure("scripted provider failure")
            )
            if not fields.get("partial"):
                raise exc
            return _stream([_delta(content=PARTIAL)], exc)
        facts = self.facts(op, outcome)
        self.replies += 1
        name = OFF_SURFACE_TOOL if facts.get("offSurface") else (tools or FULL_SURFACE)[0]
        return _stream(_reply(facts, name, f"call_{self.replies}"), None)

    # -- the pipeline's hooks

    def settlement_recovery(self) -> tuple[str, tuple[str, ...]] | None:
        facts = self.facts("prepare_recovery", self.ask("prepare_recovery", {}))
        if not facts["available"]:
            return None
        names = ("tool_not_offered",) if facts["emptySurface"] else RECOVERY_SURFACE
        return ("Use this single final delivery round.", names)

    def finish_instruction(self, final_text: str) -> str:
        facts = self.facts("finish_guard", self.ask("finish_guard", {"answer": bool(final_text)}))
        return REDIRECT if facts["redirect"] else ""

    def final_text_override(self, final_text: str) -> str | None:
        facts = self.facts("final_override", self.ask("final_override", {"answer": bool(final_text)}))
        return OVERRIDE if facts["override"] else None

    def dispatch(self, tool_calls: list[dict[str, Any]]) -> Any:
        facts = self.facts("dispatch_tools", self.ask("dispatch_tools", {}))
        ids = [str(c.get("id") or "") for c in tool_calls]
        return self.dt.dispatch_outcome(
            tool_messages=[{"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids],
            pause=bool(facts["paused"]),
            pause_payload={"ask_user": {"questions": []}} if facts["paused"] else None,
            pause_tool_call_id=ids[0] if facts["paused"] and ids else None,
            terminate=bool(facts["terminate"]),
            terminate_payload={"content": TERMINATOR} if facts["terminate"] else None,
        )

    def await_user(self) -> bool:
        return bool(self.facts("await_user", self.ask("await_user", {}))["resumed"])


def _delta(**fields: Any) -> Any:
    return SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(**fields), finish_reason=None)])


def _reply(facts: Mapping[str, Value], tool: str, call_id: str) -> list[Any]:
    """The provider chunks of one answer, in the OpenAI-compatible streaming shape."""
    chunks = []
    if facts.get("reasoning"):
        chunks.append(_delta(reasoning_content=REASONING))
    if facts.get("hasText"):
        chunks.append(_delta(content=ANSWER))
    if facts.get("hasTools"):
        call = SimpleNamespace(index=0, id=call_id, function=SimpleNamespace(name=tool, arguments="{}"))
        chunks.append(_delta(tool_calls=[call]))
    finish = "length" if facts.get("truncated") else ("tool_calls" if facts.get("hasTools") else "stop")
    completion = MAX_TOKENS if facts.get("atTokenCap") else 10
    usage = {"prompt_tokens": 100, "completion_tokens": completion, "total_tokens": 100 + completion}
    chunks.append(SimpleNamespace(choices=[SimpleNamespace(delta=None, finish_reason=finish)], usage=usage))
    return chunks


async def _stream(chunks: list[Any], failure: Exception | None) -> AsyncIterator[Any]:
    for chunk in chunks:
        yield chunk
    if failure is not None:
        raise failure


class _Completions:
    def __init__(self, turn: _Turn) -> None:
        self.turn = turn

    async def create(self, **kwargs: Any) -> AsyncIterator[Any]:
        stream: AsyncIterator[Any] = await _guarded(self.turn.create(kwargs))
        return stream


async def _guarded(call: Any) -> Any:
    try:
        return await call
    except (ScriptedProviderFailure, ScriptedConnectionReset, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise _AdapterBug(f"{type(exc).__name__}: {exc}") from exc


def _sync_guarded(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:
        raise _AdapterBug(f"{type(exc).__name__}: {exc}") from exc


class _Pipeline:
    """The loop's pipeline: fixed answers where the loop only reads, a host call where it decides."""

    binding = "openai"
    model = "scripted-model"
    base_url = None
    llm_config = SimpleNamespace(base_url=None, wire_api=None)
    usage = None
    initial_tool_choice = None
    emit_result = True
    event_source = "chat"
    event_stage = "responding"
    loop_max_tokens = MAX_TOKENS
    _model_turn_start = 1

    def __init__(self, turn: _Turn, max_rounds: int) -> None:
        self.turn = turn
        self.max_rounds = max_rounds

    def effective_max_rounds(self, context: Any) -> int:
        return self.max_rounds  # unclamped: the loop's own max(1, ...) is under test

    def _t(self, key: str, default: str = "", **kwargs: Any) -> str:
        self.turn.notices.append(key)
        return default or key

    async def _capability_pre_loop_briefings(self, context: Any, stream: Any) -> str:
        return ""

    async def _retrieve_kb_seed_block(self, context: Any, stream: Any) -> str:
        return ""

    def _capability_pre_loop_seed(self, context: Any) -> str:
        return ""

    def _build_loop_messages(self, **kwargs: Any) -> list[dict[str, Any]]:
        return [{"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "Explain."}]

    def _settle_exhausted_instruction(self) -> str:
        return "Exploration budget reached: finish the started follow-up."

    def _finish_exhausted_instruction(self) -> str:
        return "Answer now with what has been gathered."

    def _capability_buffers_visible_output(self, context: Any) -> bool:
        return False

    def _capability_tool_round_output_policy(self, context: Any, final_text: str, tool_names: Any) -> str:
        return ""

    def _completion_kwargs(self, max_tokens: int) -> dict[str, Any]:
        return {"max_tokens": max_tokens}

    async def _guard_context_window(self, messages: Any, stream: Any, tool_schemas: Any = None) -> None:
        return None

    def measure_context_budget(self, request: Any) -> None:
        return None

    async def _emit_protocol_fallback_final_response(self, stream: Any, text: str) -> None:
        return None

    async def _emit_terminator_final_response(self, stream: Any, payload: Any) -> None:
        return None

    # -- the decisions the host makes

    def _capability_settlement_recovery(self, context: Any) -> tuple[str, tuple[str, ...]] | None:
        return _sync_guarded(self.turn.settlement_recovery)  # type: ignore[no-any-return]

    def _capability_finish_instruction(self, context: Any, final_text: str) -> str:
        return _sync_guarded(self.turn.finish_instruction, final_text)  # type: ignore[no-any-return]

    def _capability_final_text_override(self, context: Any, final_text: str) -> str | None:
        return _sync_guarded(self.turn.final_text_override, final_text)  # type: ignore[no-any-return]

    async def _dispatch_tool_calls(self, *, tool_calls: list[dict[str, Any]], **kwargs: Any) -> Any:
        return _sync_guarded(self.turn.dispatch, tool_calls)

    async def _await_user_reply_and_resolve(self, **kwargs: Any) -> bool:
        return _sync_guarded(self.turn.await_user)  # type: ignore[no-any-return]


def _schemas(names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
        for n in names
    ]


def run_turn(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """One turn of the real AgentLoop against `host`: (terminal, the loop's counters)."""
    dt = load_deeptutor()
    turn = _Turn(table, host, dt)
    bus = dt.stream_bus()
    emit = bus.emit

    async def recording_emit(event: Any) -> None:
        turn.see_event(event)
        await emit(event)

    bus.emit = recording_emit
    client = SimpleNamespace(chat=SimpleNamespace(completions=_Completions(turn)))
    loop = dt.agent_loop.AgentLoop(
        pipeline=_Pipeline(turn, int(params["maxRounds"])),
        context=dt.context(session_id="turnbound", user_message="Explain."),
        stream=bus,
        client=client,
        enabled_tools=list(FULL_SURFACE),
        tool_schemas=_schemas(FULL_SURFACE),
    )
    # `run()` keeps its AgentLoopState local and reports only part of it (none when the
    # turn raises); the state is caught on its way into `_run_loop`, which runs unchanged.
    states: list[Any] = []
    run_loop = loop._run_loop

    async def observed_run_loop(**kwargs: Any) -> Any:
        states.append(kwargs["state"])
        return await run_loop(**kwargs)

    loop._run_loop = observed_run_loop
    terminal, payload = _ending(dt, loop, turn)
    state = states[0] if states else dt.agent_loop.AgentLoopState()
    counters = {name: int(getattr(state, name)) for name in COUNTERS}
    if payload is not None and payload.get("rounds") != counters["rounds"]:
        raise _AdapterBug(f"run() reported rounds={payload.get('rounds')}, its state {counters['rounds']}")
    return terminal, counters


def _ending(dt: _Deeptutor, loop: Any, turn: _Turn) -> tuple[str, dict[str, Any] | None]:
    """How the turn ended, read off the loop's return value, exception and notices."""
    try:
        with _instant_retries(dt.agent_loop):
            payload: dict[str, Any] = asyncio.run(loop.run())
    except asyncio.CancelledError:
        return "aborted", None
    except _Stop as stop:
        return stop.terminal, None
    except dt.reasoning_exhausted:
        return "reasoning_exhausted", None
    except (dt.transport_error, ScriptedProviderFailure, ScriptedConnectionReset):
        return "error", None
    except _AdapterBug as bug:
        raise RuntimeError(f"deeptutor-agentloop adapter: {bug}") from None
    response = str(payload.get("response") or "")
    if not payload.get("completed"):
        return ("reject_finish" if REJECT_NOTICE in turn.notices else "paused"), payload
    if any(k in FORCED_NOTICES for k in turn.notices):
        return "forced_finish", payload
    if response.endswith(OVERRIDE):
        return "override_finish", payload
    if response.endswith(TERMINATOR):
        return "terminated", payload
    if response.endswith(ANSWER):
        return "finish", payload
    raise RuntimeError(
        f"deeptutor-agentloop adapter: the loop completed with an unexpected answer {response!r}"
    )


def scheduler(table: Table | None = None, timeout: float = 10.0) -> ThreadedScheduler:
    """The conformance runner's entry point (`--adapter ...deeptutor_agentloop:scheduler`)."""
    bound = table if table is not None else load_profile(PROFILE)
    load_deeptutor()
    return ThreadedScheduler(lambda params, host: run_turn(bound, params, host), timeout=timeout)
