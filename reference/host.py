"""Hosts: what answers the scheduler's host calls. A script, or a Python object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import RootModel, ValidationError
from turnbound.reference.errors import DefinitionError, ScriptExhausted
from turnbound.reference.outcomes import Outcome
from turnbound.reference.types import Value


class Host(Protocol):
    def call(self, op: str, args: Mapping[str, Value]) -> Outcome: ...


class Script(RootModel[dict[str, list[Outcome]]]):
    """Per-operation queues of outcomes, consumed in order: the host of a test case."""

    def queue(self, op: str) -> list[Outcome]:
        return self.root.get(op, [])


def parse_script(data: object, source: str) -> Script:
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        path = ".".join(str(p) for p in err["loc"] if p not in ("function-after[_one_kind()]",))
        raise DefinitionError(f"{source}: script.{path}: {err['msg']}") from None


class ScriptHost:
    """Answers each call from the script's queue for that operation."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.used: dict[str, int] = {}

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        n = self.used.get(op, 0)
        queue = self.script.queue(op)
        if n >= len(queue):
            raise ScriptExhausted(op, n + 1)
        self.used[op] = n + 1
        return queue[n]


class HostRaise(Exception):
    """Raised by a Python host method to return a failure outcome."""

    def __init__(self, error: str, **fields: Value) -> None:
        super().__init__(error)
        self.error = error
        self.fields = fields


class ObjectHost:
    """Adapts an object with one method per operation: `call_round(mode=..., recovery=...) -> dict`."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        method = getattr(self.target, op, None)
        if method is None:
            raise DefinitionError(f"host object {type(self.target).__name__} has no method {op!r}")
        try:
            facts = method(**args)
        except HostRaise as exc:
            return Outcome.of_raise(exc.error, **exc.fields)
        return Outcome(facts=dict(facts or {}))
