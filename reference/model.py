"""The raw table document as pydantic models: the shape a TOML table must have.

This layer checks structure and field types only; cross-references, typing of
expressions and reachability are the loader's rules (`turnbound.reference.rules`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ProfileDoc(_Strict):
    name: str
    title: str = ""
    seed: str = ""
    source: str = ""
    initial: str = Field(default="", description="The location a run starts in (required, or inherited).")
    readings: list[str] = Field(default_factory=list)
    variant_of: str | None = None
    extends: str | None = Field(
        default=None, description="The profile (a table beside this one) whose entries this table inherits."
    )
    remove: list[str] = Field(
        default_factory=list, description="Inherited entries to drop, as 'section.name' (with extends)."
    )
    step_horizon: int | None = Field(default=None, ge=1)


class ParameterDoc(_Strict):
    doc: str = ""
    min: int = 0
    max: int | None = None
    default: int
    range: list[int] | None = Field(default=None, min_length=2, max_length=2)


class VariableDoc(_Strict):
    doc: str = ""
    type: str
    init: str
    counter: bool = False
    ghost: bool = False


class ValueSpecDoc(_Strict):
    """A fact or failure field: a type and, for integers, the finite range allowed."""

    doc: str = ""
    type: str
    min: int | None = None
    max: int | None = None
    default: bool | int | str | None = None


class OperationDoc(_Strict):
    doc: str = ""
    args: dict[str, str] = Field(default_factory=dict)
    facts: dict[str, ValueSpecDoc] = Field(default_factory=dict)
    raises: list[str] = Field(default_factory=list)


class FailureDoc(_Strict):
    doc: str = ""
    fields: dict[str, ValueSpecDoc] = Field(default_factory=dict)
    to: str | None = None


class TransitionDoc(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    id: str
    source: str = Field(alias="from")
    to: str
    guard: str = "true"
    op: str | None = None
    args: dict[str, str] = Field(default_factory=dict)
    update: dict[str, str] = Field(default_factory=dict)
    on_raise: dict[str, str] = Field(default_factory=dict)
    raise_update: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Per failure, updates of ghost variables applied when the call raises it (ghosts only).",
    )
    doc: str = ""


class ClaimDoc(_Strict):
    name: str
    expr: str
    doc: str = ""
    expect: Literal["holds", "violated"] = "holds"
    at: list[str] | None = Field(
        default=None,
        description="Bounds only: the terminals where the bound is judged (default: every terminal).",
    )


class StepClaimDoc(_Strict):
    """A claim about every host call of `op`: `when` and `expr` read the parameters, the
    variables before the call, `next.x` after it, `arg.a` as sent and `fact.f` returned."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    name: str
    op: str
    raise_: str | None = Field(
        default=None,
        alias="raise",
        description="Judge the calls that raise this failure (default: that return).",
    )
    when: str = "true"
    expr: str
    doc: str = ""
    expect: Literal["holds", "violated"] = "holds"


class MonitorDoc(_Strict):
    """A past-time operator over the host calls, kept as a ghost variable named `name`."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    name: str
    kind: Literal["once", "count", "previous", "so_far"]
    op: str = Field(description="The operation whose calls it watches; `any` for every operation.")
    raise_: str | None = Field(
        default=None,
        alias="raise",
        description="Match the calls that raise this failure (default: that return).",
    )
    when: str = "true"
    doc: str = ""


class StepPatternDoc(_Strict):
    """Which host calls a trace property looks at: an operation, an outcome kind, a condition."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    op: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    when: str = "true"


class TracePropertyDoc(_Strict):
    """A claim about the sequence of host calls: `op` at most `at_most` times, or
    after a call matching `after`, no `forbid` call (`any` for every op) next / in the rest."""

    name: str
    doc: str = ""
    op: str | None = None
    at_most: int | None = Field(default=None, ge=0)
    after: StepPatternDoc | None = None
    forbid: str | None = None
    within: Literal["next", "rest"] = "rest"
    expect: Literal["holds", "violated"] = "holds"


class ReportDoc(_Strict):
    when: str = "true"
    line: str


class TableDoc(_Strict):
    profile: ProfileDoc
    parameters: dict[str, ParameterDoc] = Field(default_factory=dict)
    enums: dict[str, list[str]] = Field(default_factory=dict)
    variables: dict[str, VariableDoc] = Field(default_factory=dict)
    operations: dict[str, OperationDoc] = Field(default_factory=dict)
    failures: dict[str, FailureDoc] = Field(default_factory=dict)
    locations: dict[str, str] = Field(default_factory=dict)
    terminals: dict[str, str] = Field(default_factory=dict)
    transitions: list[TransitionDoc] = Field(default_factory=list)
    invariants: list[ClaimDoc] = Field(default_factory=list)
    bounds: list[ClaimDoc] = Field(default_factory=list)
    lemmas: list[ClaimDoc] = Field(default_factory=list)
    monitors: list[MonitorDoc] = Field(default_factory=list)
    step_claims: list[StepClaimDoc] = Field(default_factory=list)
    trace_properties: list[TracePropertyDoc] = Field(default_factory=list)
    report: list[ReportDoc] = Field(default_factory=list)
