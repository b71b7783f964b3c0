"""Conformance vectors: language-neutral JSON runs of the reference, and their loading.

A vector is one run: parameters, the host script that answers it, and the trace the
reference made of it (each host call with its arguments, the outcome it received and
the counters after it, then the terminal and final counters). It records the sha256 of
the table it came from, so a vector can not silently outlive a change of its table.
Vectors live in `<table dir>/vectors/<profile>/`, beside a `manifest.json` that
records what they cover (`turnbound.properties.conformance.vector_gen` writes both).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from turnbound.properties.conformance.cases import ConformCase, make_case
from turnbound.properties.conformance.wire_schema import WireMessage
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script
from turnbound.reference.jsonfile import read_json
from turnbound.reference.loader import pydantic_message
from turnbound.reference.model import TableDoc
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value

FORMAT = 1
MANIFEST = "manifest.json"


class VectorStep(BaseModel):
    """One host call: what the scheduler asked, what the host answered, the counters after it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: str
    args: dict[str, Value]
    outcome: Outcome
    counters: dict[str, int]


class ExpectedTrace(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: list[VectorStep]
    terminal: str
    counters: dict[str, int]
    path: list[str] = Field(description="The reference's transitions, internal ones included (informative).")
    line: str = Field(description="The run summarised as the profile's probe line (informative).")


class Vector(BaseModel):
    """One conformance vector: run `script` with `params`; the implementation must produce `expected`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT
    id: str
    profile: str
    table_sha256: str = Field(description="sha256 of the table text the vector was generated from.")
    description: str = ""
    params: dict[str, int]
    script: Script
    expected: ExpectedTrace


class VectorCoverage(BaseModel):
    # What the vectors cover of one kind of item. No docstring: pydantic would publish it in the schema.
    model_config = ConfigDict(extra="forbid", frozen=True, title="Coverage")

    items: dict[str, str] = Field(description="Each covered item -> the first vector that covers it.")
    uncovered: list[str] = Field(default_factory=list)


class Manifest(BaseModel):
    """What a profile's vectors cover: bundled cases, transitions, and control-graph edges."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT
    profile: str
    table_sha256: str
    parameter_range: dict[str, list[int]]
    parameter_assignments: int
    edge_definition: str
    vectors: list[str]
    cases: VectorCoverage
    transitions: VectorCoverage
    edges: VectorCoverage


def vectors_dir(table: Table) -> Path:
    """Vectors live beside their table: `<table dir>/vectors/<profile name>/`."""
    return Path(table.source).parent / "vectors" / table.name


def load_vector(path: Path) -> Vector:
    data = read_json(path, "vector")
    try:
        vector = Vector.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(pydantic_message(str(path), exc)) from None
    if vector.id != path.stem:
        raise DefinitionError(f"{path}: id {vector.id!r} differs from the file name {path.stem!r}")
    return vector


def load_vectors(directory: Path) -> list[Vector]:
    if not directory.is_dir():
        return []
    return [load_vector(p) for p in sorted(directory.glob("*.json")) if p.name != MANIFEST]


def expected_of(trace: Trace, line: str) -> ExpectedTrace:
    return ExpectedTrace(
        steps=[VectorStep(op=s.op, args=s.args, outcome=s.outcome, counters=s.counters) for s in trace.steps],
        terminal=trace.terminal,
        counters=trace.counters,
        path=trace.path,
        line=line,
    )


def vector_case(table: Table, vector: Vector, source: str) -> ConformCase:
    """A vector as a conformance case, after checking it still is what the reference does."""
    if vector.profile != table.name:
        raise DefinitionError(f"{source}: the vector is for profile {vector.profile!r}, not {table.name!r}")
    if vector.table_sha256 != table.digest:
        raise DefinitionError(
            f"{source}: generated from another version of {table.source} "
            f"(sha256 {vector.table_sha256[:12]}…, now {table.digest[:12]}…); "
            "regenerate with `turnbound vectors generate`"
        )
    case = make_case(table, vector.id, "vector", dict(vector.params), vector.script, vector.description)
    got = expected_of(case.expected, vector.expected.line)
    if got.model_dump(exclude={"line"}) != vector.expected.model_dump(exclude={"line"}):
        raise DefinitionError(f"{source}: its expected trace is not what the reference does with its script")
    return case


def vector_cases(table: Table, directory: Path) -> list[ConformCase]:
    if not directory.is_dir():
        raise DefinitionError(f"{directory}: no such vector directory")
    return [vector_case(table, v, str(directory / f"{v.id}.json")) for v in load_vectors(directory)]


def bundled_vector_cases(table: Table) -> list[ConformCase]:
    """The profile's checked-in vectors (none before `turnbound vectors generate` ran)."""
    directory = vectors_dir(table)
    return vector_cases(table, directory) if directory.is_dir() else []


SCHEMAS: dict[str, type[BaseModel]] = {
    "vector.schema.json": Vector,
    "manifest.schema.json": Manifest,
    "trace.schema.json": Trace,
    "wire-message.schema.json": WireMessage,
    "table.schema.json": TableDoc,
}
"""The checked-in JSON Schemas (spec/schema/), each generated from its pydantic model.
The table's schema describes what a TOML table may hold (an editor completes and checks
a table with it); the others describe what turnbound writes or exchanges."""

_READ_BY_TURNBOUND = frozenset({"table.schema.json"})

SCHEMA_NAMES = {"VectorCoverage": "Coverage", "EndMessage": "End"}
"""Classes named apart from a namesake elsewhere in turnbound keep the name the schemas
published them under (their `title` says the same)."""


class _SchemaNames(GenerateJsonSchema):
    def normalize_name(self, name: str) -> str:
        name = super().normalize_name(name)
        return SCHEMA_NAMES.get(name, name)


def schema_texts() -> dict[str, str]:
    out = {}
    for name, model in SCHEMAS.items():
        read = name in _READ_BY_TURNBOUND
        schema = model.model_json_schema(
            by_alias=True, mode="validation" if read else "serialization", schema_generator=_SchemaNames
        )
        # An editor resolves the table's schema from a file path: a relative `$id` would break it.
        ident = {} if read else {"$id": name}
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **ident, **schema}
        out[name] = json.dumps(schema, indent=2) + "\n"
    return out
