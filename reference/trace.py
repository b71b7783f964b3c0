"""Traces: what a run did, in the order it did it, serialisable and printable as a probe line."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.outcomes import Outcome
from turnbound.reference.rules_report import TERMINAL_ENUM, op_calls_name
from turnbound.reference.table import Table
from turnbound.reference.types import Value

HORIZON = "horizon"
"""Not a terminal: the run was cut off at its step limit (an unbounded turn)."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Step(BaseModel):
    """One host call: the operation, its arguments, what it returned, counters afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: str
    args: dict[str, Value] = Field(default_factory=dict)
    outcome: Outcome
    counters: dict[str, int]
    transition: str


class Trace(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: str
    params: dict[str, int]
    steps: list[Step]
    terminal: str
    counters: dict[str, int]
    variables: dict[str, Value]
    path: list[str] = Field(description="Every transition taken, internal ones included.")
    violation: str | None = Field(default=None, description="Why the runtime contract rejected a fact.")

    @property
    def ops(self) -> list[str]:
        return [s.op for s in self.steps]

    def calls(self, op: str) -> int:
        return sum(1 for s in self.steps if s.op == op)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def report_env(table: Table, trace: Trace) -> dict[str, Value]:
    env: dict[str, Value] = {**trace.params, **trace.variables, TERMINAL_ENUM: trace.terminal}
    for op in table.operations:
        env[op_calls_name(op)] = trace.calls(op)
    return env


def probe_line(table: Table, trace: Trace) -> str:
    """The trace summarised by the first report rule that applies (the seed's probe-line format)."""
    env = report_env(table, trace)
    for rule in table.report:
        if trace.terminal != HORIZON and compile_expr(rule.when)(env):
            return _PLACEHOLDER.sub(lambda m: _text(env[m.group(1)]), rule.line)
    counters = "; ".join(f"{k}={v}" for k, v in trace.counters.items())
    return f"{counters}; terminal={trace.terminal}" if counters else f"terminal={trace.terminal}"


def _text(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
