"""An operation's contract checked with precomputed sets: the check every host call pays.
The message comes from `outcomes.contract_violation` only when this fast check fails."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Operation, Table, ValueSpec


class FastContract:
    """One operation's contract: its facts, or the fields of each failure it may raise."""

    def __init__(self, table: Table, op: Operation) -> None:
        self.table = table
        self.op = op
        self.facts = _FastSpecs(op.facts)
        self.raises = {err: _FastSpecs(table.failures[err].fields) for err in op.raises}

    def accepts(self, outcome: Outcome) -> bool:
        if outcome.raise_ is None:
            return self.facts.accepts(outcome.facts or {})
        fields = self.raises.get(outcome.raise_)
        return fields is not None and fields.accepts(outcome.fields)


class _FastSpecs:
    def __init__(self, specs: tuple[ValueSpec, ...]) -> None:
        self.names = frozenset(s.name for s in specs)
        self.required = frozenset(s.name for s in specs if s.required)
        self.checks = tuple((s.name, s.domain.__contains__) for s in specs)

    def accepts(self, given: Mapping[str, Any]) -> bool:
        keys = given.keys()
        if not keys <= self.names or not self.required <= keys:
            return False
        return all(check(given[name]) for name, check in self.checks if name in given)
