"""Host outcomes (facts or a raised failure) and the runtime contract that checks them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from turnbound.reference.table import Operation, Table, ValueSpec
from turnbound.reference.types import Value


class Outcome(BaseModel):
    """What one host call returned: `{"facts": {...}}` or `{"raise": NAME, "fields": {...}}`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    facts: dict[str, Any] | None = None
    raise_: str | None = Field(default=None, alias="raise")
    fields: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> Outcome:
        if (self.facts is None) == (self.raise_ is None):
            raise ValueError('an outcome is either {"facts": {...}} or {"raise": NAME}')
        if self.facts is not None and self.fields:
            raise ValueError('"fields" belong to a raised failure, not to facts')
        return self

    @classmethod
    def of_facts(cls, **facts: Value) -> Outcome:
        return cls(facts=dict(facts))

    @classmethod
    def of_raise(cls, error: str, **fields: Value) -> Outcome:
        return cls.model_validate({"raise": error, "fields": dict(fields)})

    @property
    def is_raise(self) -> bool:
        return self.raise_ is not None

    def to_json(self) -> dict[str, Any]:
        if self.raise_ is not None:
            out: dict[str, Any] = {"raise": self.raise_}
            if self.fields:
                out["fields"] = dict(self.fields)
            return out
        return {"facts": dict(self.facts or {})}


def _check_values(what: str, specs: tuple[ValueSpec, ...], given: Mapping[str, Any]) -> str | None:
    declared = {s.name for s in specs}
    extra = sorted(set(given) - declared)
    if extra:
        return f"{what} has undeclared fields {extra}"
    for spec in specs:
        if spec.name not in given:
            if spec.required:
                return f"{what} is incomplete: {spec.name!r} is missing"
            continue
        value = given[spec.name]
        if value not in spec.domain:
            return f"{what}: {spec.name}={value!r} is outside its domain ({spec.domain.describe()})"
    return None


def contract_violation(table: Table, op: Operation, outcome: Outcome) -> str | None:
    """Why the outcome breaks the operation's declared contract, or None if it is fine."""
    if outcome.raise_ is not None:
        if outcome.raise_ not in op.raises:
            return f"{op.name} may not raise {outcome.raise_!r} (declared: {list(op.raises) or 'none'})"
        failure = table.failures[outcome.raise_]
        return _check_values(f"{outcome.raise_} from {op.name}", failure.fields, outcome.fields)
    return _check_values(f"{op.name} response", op.facts, outcome.facts or {})


def complete(specs: tuple[ValueSpec, ...], given: Mapping[str, Any]) -> dict[str, Value]:
    """The values with optional fields filled from their defaults (after the contract passed)."""
    out: dict[str, Value] = {}
    for spec in specs:
        value = given.get(spec.name, spec.default)
        assert value is not None
        out[spec.name] = value
    return out


def outcome_text(outcome: Outcome) -> str:
    """An outcome in one line, the same in every report: `ok` for no facts, true booleans by
    name, other values as name=value, false booleans only when every fact is false;
    a failure as `raise error (field=value, ...)`."""
    if outcome.raise_ is not None:
        fields = ", ".join(f"{k}={_value_text(v)}" for k, v in outcome.fields.items())
        return f"raise {outcome.raise_}" + (f" ({fields})" if fields else "")
    facts = outcome.facts or {}
    if not facts:
        return "ok"
    parts = [k if v is True else f"{k}={_value_text(v)}" for k, v in facts.items() if v is not False]
    return ", ".join(parts or [f"{k}=false" for k in facts])


def _value_text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
