"""Hosts: what answers the scheduler's host calls. A script, or a Python object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import RootModel, ValidationError
from turnbound.reference.errors import DefinitionError, ScriptExhausted
from turnbound.reference.limits import MAX_SCRIPT_OUTCOMES
from turnbound.reference.outcomes import Outcome, contract_violation
from turnbound.reference.table import Table
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


def check_script(table: Table, script: Script, source: str, violations_expected: bool = False) -> None:
    """Refuse a script the table can not mean: an operation it does not have, too many outcomes,
    or (unless `violations_expected`) an outcome that breaks the operation's contract.

    A case may feed a contract violation on purpose (its expected terminal says so); a
    script given on its own that does so is far more often a typo, so it is named here.
    """
    total = sum(len(q) for q in script.root.values())
    if total > MAX_SCRIPT_OUTCOMES:
        raise DefinitionError(f"{source}: script has {total} outcomes; the limit is {MAX_SCRIPT_OUTCOMES}")
    for op, queue in script.root.items():
        operation = table.operations.get(op)
        if operation is None:
            known = ", ".join(table.operations) or "none"
            raise DefinitionError(
                f"{source}: script.{op}: {table.name} has no operation {op!r}; operations: {known}"
            )
        if violations_expected:
            continue
        for i, outcome in enumerate(queue):
            problem = contract_violation(table, operation, outcome)
            if problem is not None:
                raise DefinitionError(
                    f"{source}: script.{op}[{i}]: {problem} (a run would end at its contract_violation "
                    "terminal; to feed that on purpose, use a case that expects it)"
                )


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
