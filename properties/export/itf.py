"""Traces in the Informal Trace Format (ITF), the JSON trace format of Apalache and Quint.

A trace becomes one ITF state per transition taken (internal ones included), so the
location and every variable of the table are visible at each point, as a TLA+ or
Quint reader expects. Integers are written as `{"#bigint": "N"}`; the outcome of a
host call is a variant `{"tag": ..., "value": ...}` as Quint writes sum types.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnbound.reference.errors import DefinitionError, RunError
from turnbound.reference.jsonfile import read_json
from turnbound.reference.limits import MAX_INT_DIGITS
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.stepping import retrace
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value

_BIGINT = re.compile(rf"-?[0-9]{{1,{MAX_INT_DIGITS}}}")
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
LOCATION = "location"
ACTION = "action"
"""The transition that led into a state (`init` for the first)."""
HOST_VARS = ("op", "args", "outcome")
"""What the host call of that transition asked and got (empty for an internal transition)."""


def encode_itf_value(value: Any) -> Any:
    """A Python value as ITF JSON: integers as #bigint, lists as ITF lists, dicts as records."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, list | tuple):
        return [encode_itf_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode_itf_value(v) for k, v in value.items()}
    raise TypeError(f"no ITF encoding for {type(value).__name__}")


def decode_itf_value(value: Any) -> Any:
    """ITF JSON back to Python values (#bigint to int, records to dicts); ValueError if malformed."""
    if isinstance(value, list):
        return [decode_itf_value(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"#bigint"}:
            digits = value["#bigint"]
            if not isinstance(digits, str) or not _BIGINT.fullmatch(digits):
                raise ValueError(
                    f"#bigint {digits!r} is not a decimal integer of at most {MAX_INT_DIGITS} digits"
                )
            return int(digits)
        if set(value) & {"#tup", "#set", "#map"} and len(value) == 1:
            (tag, items), *_ = value.items()
            if not isinstance(items, list):
                raise ValueError(f"{tag} holds {type(items).__name__}, not a list")
            if tag == "#tup":
                return tuple(decode_itf_value(v) for v in items)
            if tag == "#set":
                return [decode_itf_value(v) for v in items]
            out = {}
            for pair in items:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ValueError("#map holds an entry that is not a [key, value] pair")
                key = decode_itf_value(pair[0])
                if not isinstance(key, str | int | bool):
                    raise ValueError(f"#map key {pair[0]!r} is not a string, integer or boolean")
                out[key] = decode_itf_value(pair[1])
            return out
        return {k: decode_itf_value(v) for k, v in value.items() if k != "#meta"}
    return value


def _outcome_variant(outcome: Outcome | None) -> dict[str, Any]:
    if outcome is None:
        return {"tag": "None", "value": {"#tup": []}}
    if outcome.raise_ is not None:
        return {"tag": "Raise", "value": {"error": outcome.raise_, **encode_itf_value(dict(outcome.fields))}}
    return {"tag": "Facts", "value": encode_itf_value(dict(outcome.facts or {}))}


def to_itf(table: Table, trace: Trace, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The trace as an ITF document: one state per transition, replayed on the table."""
    machine = Machine(table, trace.params)
    params = [p.name for p in table.parameters]
    variables = [LOCATION, *machine.var_names, ACTION, *HOST_VARS]

    def state(
        index: int, s: State, action: str, op: str, args: Mapping[str, Value], out: Outcome | None
    ) -> dict[str, Any]:
        doc: dict[str, Any] = {"#meta": {"index": index}}
        doc.update({name: encode_itf_value(machine.params[name]) for name in params})
        doc[LOCATION] = s.location
        doc.update({name: encode_itf_value(v) for name, v in machine.variables(s).items()})
        doc[ACTION] = action
        doc.update({"op": op, "args": encode_itf_value(dict(args)), "outcome": _outcome_variant(out)})
        return doc

    try:
        visited = retrace(machine, trace).visited
    except RunError as exc:
        raise DefinitionError(str(exc)) from None
    steps = iter(trace.steps)
    states: list[dict[str, Any]] = []
    for action, s in visited:
        t = None if action == "init" else table.transition(action)
        if t is None or t.op is None:
            states.append(state(len(states), s, action, "", {}, None))
        else:
            step = next(steps)
            states.append(state(len(states), s, action, step.op, step.args, step.outcome))
    head: dict[str, Any] = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": table.source,
        "profile": table.name,
        "table_sha256": table.digest,
        "terminal": trace.terminal,
    }
    head.update(meta or {})
    return {"#meta": head, "params": params, "vars": variables, "states": states}


def write_itf(path: Path, table: Table, trace: Trace, meta: Mapping[str, Any] | None = None) -> None:
    try:
        path.write_text(json.dumps(to_itf(table, trace, meta), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot write the ITF trace: {exc.strerror}") from None


def read_itf(path: Path) -> list[dict[str, Any]]:
    """The states of an ITF file as plain values (each without its #meta)."""
    doc = read_json(path, "the ITF trace")
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list):
        raise DefinitionError(f'{path}: not an ITF trace (no "states" list)')
    try:
        return [decode_itf_value(s) for s in doc["states"]]
    except ValueError as exc:
        raise DefinitionError(f"{path}: not an ITF trace: {exc}") from None
