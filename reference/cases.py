"""Named cases: parameters, a host script and what the reference must do with them.

A case is both a test and a conformance vector: the same JSON file drives the
unit tests, `turnbound run --all-cases` and vector generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from turnbound.reference.errors import DefinitionError, TurnboundError
from turnbound.reference.host import Script, ScriptHost, check_script
from turnbound.reference.interpreter import run
from turnbound.reference.jsonfile import read_json
from turnbound.reference.loader import pydantic_message
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace, probe_line
from turnbound.reference.types import Value, conforms


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    terminal: str
    counters: dict[str, int] = Field(default_factory=dict)
    ops: list[str] | None = None
    args: dict[str, list[dict[str, Value]]] = Field(
        default_factory=dict,
        description="Per operation, one entry per call in call order: the arguments as sent that must "
        "match (the ones not named are not compared).",
    )
    line: str | None = Field(default=None, description="The probe line after 'name: ', verbatim.")


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    order: int = Field(default=0, description="Position in listings (the seed's order); ties by name.")
    description: str = ""
    source: str = ""
    params: dict[str, int] = Field(default_factory=dict)
    script: Script
    expect: Expect


def load_case(path: Path) -> Case:
    data = read_json(path, "case")
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(pydantic_message(str(path), exc)) from None
    if case.name != path.stem:
        raise DefinitionError(f"{path}: name {case.name!r} differs from the file name {path.stem!r}")
    return case


def load_cases(directory: Path) -> list[Case]:
    if not directory.is_dir():
        return []
    cases = [load_case(p) for p in sorted(directory.glob("*.json"))]
    return sorted(cases, key=lambda c: (c.order, c.name))


@dataclass(frozen=True)
class CaseResult:
    case: Case
    trace: Trace | None
    line: str
    mismatches: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches

    @property
    def probe(self) -> str:
        return f"{self.case.name}: {self.line}"


def check_case(table: Table, case: Case) -> CaseResult:
    """Run the case on the reference and list every way the result differs from `expect`."""
    try:
        check_script(table, case.script, f"case {case.name}", violations_expected=True)
        check_expected_args(table, case)
        trace = run(table, ScriptHost(case.script), case.params)
    except TurnboundError as exc:
        return CaseResult(case, None, f"error: {exc}", (str(exc),))
    line = probe_line(table, trace)
    exp = case.expect
    problems = []
    if trace.terminal != exp.terminal:
        problems.append(f"terminal {trace.terminal}, expected {exp.terminal}")
    for name, want in exp.counters.items():
        got = trace.counters.get(name, trace.variables.get(name))
        if got != want:
            problems.append(f"{name}={got}, expected {want}")
    if exp.ops is not None and trace.ops != exp.ops:
        problems.append(f"operations {trace.ops}, expected {exp.ops}")
    problems.extend(argument_mismatches(trace, exp.args))
    if exp.line is not None and line != exp.line:
        problems.append(f"line {line!r}, expected {exp.line!r}")
    return CaseResult(case, trace, line, tuple(problems))


def check_expected_args(table: Table, case: Case) -> None:
    """`expect.args` names operations and arguments the table declares, with values of their types."""
    for op, calls in case.expect.args.items():
        where = f"case {case.name}: expect.args.{op}"
        operation = table.operations.get(op)
        if operation is None:
            raise DefinitionError(f"{where}: no operation {op!r}; operations: {', '.join(table.operations)}")
        declared = dict(operation.args)
        for k, sent in enumerate(calls, start=1):
            for name, value in sent.items():
                if name not in declared:
                    known = ", ".join(declared) or "none"
                    raise DefinitionError(f"{where}[{k}]: {op} has no argument {name!r}; arguments: {known}")
                if not conforms(value, declared[name]):
                    raise DefinitionError(f"{where}[{k}].{name}: {value!r} is not a {declared[name]}")


def argument_mismatches(trace: Trace, expected: dict[str, list[dict[str, Value]]]) -> list[str]:
    """Where the arguments sent differ from `expected` (per operation, one entry per call)."""
    problems = []
    for op, calls in expected.items():
        sent = [s.args for s in trace.steps if s.op == op]
        if len(sent) != len(calls):
            problems.append(f"{op} called {len(sent)} times, expected arguments for {len(calls)}")
        for k, (got, want) in enumerate(zip(sent, calls, strict=False), start=1):
            for name, value in want.items():
                if got.get(name) != value or type(got.get(name)) is not type(value):
                    problems.append(f"{op} call {k}: {name}={_text(got.get(name))}, expected {_text(value)}")
    return problems


def _text(value: Value | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "absent" if value is None else str(value)
