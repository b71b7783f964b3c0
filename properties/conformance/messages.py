"""Wire protocol v1 messages: their bounds, how each is written, and how a line is read.

Both sides of the wire share these: the runner (`wire`) that drives an implementation,
and `serve`, the implementation side for a Python scheduler.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from turnbound.properties.scheduler import (
    End,
    OpRequest,
    Request,
)
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace
from turnbound.reference.types import conforms

PROTOCOL = 1
MAX_LINE = 1 << 20
"""Bytes in one message line before the implementation counts as flooding."""
MAX_MESSAGES = 10_000
"""Messages in one case before the implementation counts as flooding."""
STDERR_LINES = 5
"""How many of the implementation's last stderr lines a failure reason shows."""
STDERR_LINE = 300
"""Characters kept of one stderr line."""
READ_BLOCK = 1 << 16
"""Bytes asked for by one read of the implementation's output."""
CANCEL = "turnbound-cancel"
"""A failure no table can declare (not an identifier): raised to end a case turnbound has decided.

A conforming implementation rejects it by its runtime contract and ends the case at
`contract_violation`, so the same process can take the next case without a restart.
"""



class ProtocolError(ValueError):
    """A message that protocol v1 does not allow; the text says what is wrong with it."""


# -- messages -------------------------------------------------------------------------


def start_message(profile: str, params: Mapping[str, int]) -> dict[str, Any]:
    return {"type": "start", "protocol": PROTOCOL, "profile": profile, "params": dict(params)}


def outcome_message(outcome: Outcome) -> dict[str, Any]:
    """A host answer on the wire: `result` with facts, or `raise` with the failure's fields inline."""
    if outcome.raise_ is None:
        return {"type": "result", "facts": dict(outcome.facts or {})}
    return {"type": "raise", "error": outcome.raise_, **outcome.fields}


def message_outcome(msg: Mapping[str, Any]) -> Outcome:
    """The outcome a `result` or `raise` message carries."""
    kind = msg.get("type")
    if kind == "result":
        facts = msg.get("facts", {})
        if not isinstance(facts, dict):
            raise ProtocolError('"facts" must be an object')
        _check_scalars("facts", facts)
        return Outcome(facts=dict(facts))
    if kind == "raise":
        error = msg.get("error")
        if not isinstance(error, str):
            raise ProtocolError('a raise message needs "error", a string')
        _check_text("error", error)
        fields = {k: v for k, v in msg.items() if k not in ("type", "error")}
        _check_scalars("fields", fields)
        return Outcome.of_raise(error, **fields)
    raise ProtocolError(f"expected a result or raise message, got type {kind!r}")


def parse_request(msg: object, table: Table) -> Request:
    """An `op` or `end` message as a request, checked against the table's vocabulary."""
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message must be a JSON object, got {type(msg).__name__}")
    kind = msg.get("type")
    if kind == "op":
        op = msg.get("op")
        if not isinstance(op, str):
            raise ProtocolError('an op message needs "op", a string')
        if op not in table.operations:
            raise ProtocolError(f"unknown op {op!r}; operations: {', '.join(table.operations)}")
        args = msg.get("args", {})
        if not isinstance(args, dict):
            raise ProtocolError(f'op {op}: "args" must be an object')
        _check_scalars(f"op {op}: args", args)
        for name, type_ in table.operations[op].args:
            if name in args and not conforms(args[name], type_):
                raise ProtocolError(f"op {op}: arg {name}={json.dumps(args[name])} is not a {type_}")
        return OpRequest(op, dict(args))
    if kind == "end":
        terminal = msg.get("terminal")
        if not isinstance(terminal, str):
            raise ProtocolError('an end message needs "terminal", a string')
        _check_text("end: terminal", terminal)
        counters = msg.get("counters")
        if not isinstance(counters, dict):
            raise ProtocolError('an end message needs "counters", an object')
        for name, value in counters.items():
            _check_text("end: counters", name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProtocolError(f"end: counter {name}={json.dumps(value)} is not an integer")
        return End(terminal, dict(counters))
    if kind is None:
        raise ProtocolError('the message has no "type"')
    raise ProtocolError(f"expected an op or end message, got type {kind!r}")


def trace_messages(trace: Trace) -> list[dict[str, Any]]:
    """A reference trace as the protocol transcript of its run: what a recorded log looks like."""
    out = [start_message(trace.profile, trace.params)]
    for step in trace.steps:
        out.append({"type": "op", "op": step.op, "args": dict(step.args)})
        out.append(outcome_message(step.outcome))
    out.append({"type": "end", "terminal": trace.terminal, "counters": dict(trace.counters)})
    return out


def _check_scalars(what: str, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        _check_text(what, name)
        if not isinstance(value, bool | int | str):
            raise ProtocolError(f"{what}: {name} must be a boolean, integer or string")
        if isinstance(value, str):
            _check_text(f"{what}: {name}", value)


def _check_text(what: str, text: str) -> None:
    """JSON can carry a lone surrogate (`\\ud800`); no report could print it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(f"{what}: a string with a lone surrogate ({text!r})") from None


def dump(msg: Mapping[str, Any]) -> str:
    return json.dumps(msg, separators=(",", ":"))


# -- the host side: a subprocess behind the Scheduler interface -----------------------


def decode_message(line: bytes) -> object:
    """One line as JSON, within the protocol's bounds; `ProtocolError` names what is wrong with it.

    Strict UTF-8, no NaN or Infinity, integers within 64 bits, and no nesting deeper than
    Python's parser allows — all reported, never raised as anything else.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"invalid JSON (not UTF-8 at byte {exc.start})") from None
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise ProtocolError("invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer too long for int()
        raise ProtocolError(f"invalid JSON ({clip(str(exc), 80)})") from None


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 19 or not -(1 << 63) <= int(text) < 1 << 63:
        raise ProtocolError(f"protocol error: an integer of {digits} digits, outside the 64-bit range")
    return int(text)


def _no_constant(text: str) -> object:
    raise ProtocolError(f"invalid JSON ({text} is not a JSON number)")


def dump_line(msg: Mapping[str, Any]) -> bytes:
    return (dump(msg) + "\n").encode()


def clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def shown(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").strip()


# -- the implementation side: a Python scheduler as a protocol v1 command -------------
