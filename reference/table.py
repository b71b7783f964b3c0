"""The validated, immutable transition table that every engine takes as input.

Engines never parse TOML or text: they read these records, whose expressions are
already typed trees (`turnbound.reference.expr`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from turnbound.reference.expr import Expr, render
from turnbound.reference.types import Domain, EnumType, Type, Value

CONTRACT_VIOLATION = "contract_violation"
"""Built-in terminal: a host outcome outside its operation's declared domain was rejected."""

BUILTIN_TERMINALS: Mapping[str, str] = MappingProxyType(
    {CONTRACT_VIOLATION: "A host outcome broke the runtime contract and was rejected."}
)


@dataclass(frozen=True)
class Parameter:
    name: str
    min: int
    max: int | None
    default: int
    range: tuple[int, int]
    doc: str = ""

    def admits(self, value: int) -> bool:
        return value >= self.min and (self.max is None or value <= self.max)


@dataclass(frozen=True)
class Variable:
    name: str
    type: Type
    init: Expr
    counter: bool = False
    doc: str = ""
    ghost: bool = False
    """Proof scaffolding: read only by claims, lemmas and other ghosts' updates (`ghosts.py`),
    so no run can tell its values; equivalence of behaviours ignores it."""


@dataclass(frozen=True)
class ValueSpec:
    """A fact of an operation or a field of a failure."""

    name: str
    domain: Domain
    default: Value | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Operation:
    name: str
    args: tuple[tuple[str, Type], ...]
    facts: tuple[ValueSpec, ...]
    raises: tuple[str, ...]
    doc: str = ""


@dataclass(frozen=True)
class Failure:
    name: str
    fields: tuple[ValueSpec, ...]
    to: str | None
    doc: str = ""


@dataclass(frozen=True)
class Transition:
    id: str
    source: str
    target: str
    guard: Expr
    op: str | None
    args: tuple[tuple[str, Expr], ...]
    updates: tuple[tuple[str, Expr], ...]
    on_raise: Mapping[str, str]
    doc: str = ""
    raise_updates: Mapping[str, tuple[tuple[str, Expr], ...]] = field(default_factory=dict)
    """Per failure: ghost updates applied when the call raises it (the state is otherwise kept)."""


@dataclass(frozen=True)
class Claim:
    name: str
    kind: Literal["invariant", "bound", "lemma"]
    expr: Expr
    expect: Literal["holds", "violated"] = "holds"
    doc: str = ""
    at: tuple[str, ...] | None = None
    """A bound's terminals (None: every terminal of the table)."""
    step: StepClaim | None = None
    """Set on the invariant a step claim compiles to: the claim as written, for messages."""

    def judged_at(self, location: str) -> bool:
        """Whether this bound is judged at this terminal."""
        return self.at is None or location in self.at

    @property
    def text(self) -> str:
        """The claim as written: a step claim's condition and operation, a bound's terminals."""
        if self.step is not None:
            s = self.step
            on = f"{s.op} raising {s.raise_}" if s.raise_ else s.op
            cond = "" if render(s.when) == "true" else f" with {render(s.when)}"
            return f"every {on}{cond}: {render(s.expr)}"
        if self.at is not None:
            return f"{render(self.expr)} at {', '.join(self.at)}"
        return render(self.expr)


@dataclass(frozen=True)
class StepClaim:
    """`[[step_claims]]` as written: judged on every call of `op` (that raises `raise_`, if set)."""

    name: str
    op: str
    raise_: str | None
    when: Expr
    expr: Expr


@dataclass(frozen=True)
class Monitor:
    """`[[monitors]]` as written; the loader compiles it into the ghost variable `name`."""

    name: str
    kind: Literal["once", "count", "previous", "so_far"]
    op: str
    raise_: str | None
    when: Expr
    doc: str = ""


@dataclass(frozen=True)
class StepPattern:
    op: str | None
    raise_: str | None
    when: Expr


@dataclass(frozen=True)
class TraceProperty:
    """`at_most`: `op` is called at most `limit` times. `never_after`: after a call matching
    `after`, no `forbid` call (`any`: no call at all) happens next (`within="next"`) or later."""

    name: str
    kind: Literal["at_most", "never_after"]
    op: str | None = None
    limit: int = 0
    after: StepPattern | None = None
    forbid: str | None = None
    within: Literal["next", "rest"] = "rest"
    expect: Literal["holds", "violated"] = "holds"
    doc: str = ""


ANY_OP = "any"


@dataclass(frozen=True)
class ReportRule:
    when: Expr
    line: str


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    source: str
    digest: str
    initial: str
    parameters: tuple[Parameter, ...]
    enums: Mapping[str, EnumType]
    variables: tuple[Variable, ...]
    operations: Mapping[str, Operation]
    failures: Mapping[str, Failure]
    locations: Mapping[str, str]
    terminals: Mapping[str, str]
    transitions: tuple[Transition, ...]
    invariants: tuple[Claim, ...]
    bounds: tuple[Claim, ...]
    lemmas: tuple[Claim, ...]
    trace_properties: tuple[TraceProperty, ...]
    report: tuple[ReportRule, ...]
    readings: tuple[str, ...] = ()
    seed: str = ""
    variant_of: str | None = None
    step_horizon: int | None = None
    monitors: tuple[Monitor, ...] = ()
    step_claims: tuple[StepClaim, ...] = ()
    outgoing: Mapping[str, tuple[Transition, ...]] = field(default_factory=dict)

    @property
    def counters(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variables if v.counter)

    @property
    def claims(self) -> tuple[Claim, ...]:
        return self.invariants + self.bounds

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def transition(self, tid: str) -> Transition:
        for t in self.transitions:
            if t.id == tid:
                return t
        raise KeyError(tid)

    def is_terminal(self, location: str) -> bool:
        return location in self.terminals

    def defaults(self) -> dict[str, int]:
        return {p.name: p.default for p in self.parameters}
