"""Conformance cases: parameters, a host script, and the trace the reference makes of them.

Bundled cases, vectors and generated scripts all become `ConformCase`s, so the runner
compares an implementation with the reference the same way whatever the source.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from turnbound.properties.scheduler import FAULT_RAISED, Observed, Scheduler, drive, first_divergence
from turnbound.reference.errors import DefinitionError, TurnboundError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import outcome_script, run
from turnbound.reference.machine import Machine, check_params
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, Trace

Kind = Literal["case", "vector", "fuzz"]


@dataclass(frozen=True)
class ConformCase:
    """One run to compare: what the host answers (`script`) and what the reference did with it."""

    id: str
    kind: Kind
    params: dict[str, int]
    script: Script
    expected: Trace
    description: str = ""

    @property
    def size(self) -> int:
        """Host outcomes in the script: what shrinking makes small."""
        return sum(len(q) for q in self.script.root.values())


class Machines:
    """One compiled `Machine` per parameter assignment: compiling a table costs more than a run."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._made: dict[tuple[tuple[str, int], ...], Machine] = {}

    def __call__(self, params: dict[str, int]) -> Machine:
        key = tuple(sorted(params.items()))
        machine = self._made.get(key)
        if machine is None:
            machine = self._made[key] = Machine(self.table, params)
        return machine


def make_case(
    table: Table,
    id: str,
    kind: Kind,
    params: dict[str, int],
    script: Script,
    description: str = "",
    machines: Machines | None = None,
) -> ConformCase:
    """A case whose expected trace is the reference's; a script the reference cannot finish is an error."""
    full = check_params(table, params)
    machine = machines(full) if machines is not None else Machine(table, full)
    try:
        expected = run(machine, ScriptHost(script))
    except TurnboundError as exc:
        raise DefinitionError(f"{kind} {id}: the reference cannot run it: {exc}") from None
    if expected.terminal == HORIZON and kind == "fuzz":
        raise DefinitionError(f"{kind} {id}: the reference does not end within its step limit")
    return ConformCase(id, kind, full, script, expected, description)


def try_case(
    table: Table,
    id: str,
    kind: Kind,
    params: dict[str, int],
    script: Script,
    machines: Machines | None = None,
) -> ConformCase | None:
    """Like `make_case`, with the script cut to what the reference consumed; None if it cannot run."""
    try:
        case = make_case(table, id, kind, params, script, machines=machines)
    except DefinitionError:
        return None
    trimmed = Script(outcome_script(case.expected))
    return ConformCase(id, kind, case.params, trimmed, case.expected, case.description)


def bundled_cases(table: Table) -> list[ConformCase]:
    """The profile's named cases (the seed's figures), in their listing order."""
    return [
        make_case(table, c.name, "case", dict(c.params), c.script, c.description)
        for c in profile_cases(table)
    ]


@dataclass(frozen=True)
class ConformCaseResult:
    case: ConformCase
    observed: Observed
    divergence: str | None
    seconds: float
    original: ConformCase | None = None
    """A generated case before it was shrunk to `case`."""
    shrink_runs: int = 0

    @property
    def passed(self) -> bool:
        return self.divergence is None


def run_case(scheduler: Scheduler, case: ConformCase) -> ConformCaseResult:
    """Drive one case; an in-process implementation that raises instead of reporting a fault fails
    the case too (a wire implementation cannot raise: everything it writes is read as a message)."""
    began = time.perf_counter()
    try:
        horizon = len(case.expected.steps) if case.expected.terminal == HORIZON else None
        observed = drive(scheduler, case.params, ScriptHost(case.script), horizon=horizon)
    except Exception as exc:  # an in-process implementation's bug: a failed case, not a crash of turnbound
        observed = Observed((), None, f"the implementation raised {type(exc).__name__}: {exc}", FAULT_RAISED)
    return ConformCaseResult(
        case, observed, first_divergence(case.expected, observed), time.perf_counter() - began
    )
