"""Load a TOML transition table and reject it, eagerly and in one line, if it is not well formed.

This module reads the file, lays out its `extends` chain, checks the document's structure
(pydantic) and then runs the rules in order (`assemble`); the first rule broken is the
error. The rules are small functions in the `rules_*` modules beside it, by what they
check: `rules_declarations` (names, types, parameters, variables, failures, operations),
`rules_places` (locations, terminals, transition references, reachability),
`rules_transitions` (guards, arguments, updates), `rules_monitors` (monitors and step
claims), `rules_claims` (invariants, bounds, lemmas, trace properties) and `rules_report`
(report rules). Each rule's message names the file, the item (transition, variable, …),
the field, and what to change; `ghosts` and `wellformed` check the built table.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import turnbound.spec
from pydantic import ValidationError
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import Ref
from turnbound.reference.expr_parse import Symbol
from turnbound.reference.ghosts import check_ghosts
from turnbound.reference.inherit import resolve
from turnbound.reference.jsonfile import read_text
from turnbound.reference.limits import MAX_TABLE_BYTES
from turnbound.reference.model import TableDoc
from turnbound.reference.pasttime import compile_pasttime
from turnbound.reference.rules_claims import build_claims, build_trace_properties
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.rules_declarations import (
    build_enums,
    build_failures,
    build_operations,
    build_parameters,
    build_variables,
    check_enum_members,
    check_outcomes,
    check_profile_section,
    check_state_names,
)
from turnbound.reference.rules_monitors import build_monitors, build_step_claims, pasttime_variables
from turnbound.reference.rules_places import (
    build_places,
    check_place,
    check_reachable,
    check_transition_refs,
    check_way_out,
    location_edges,
)
from turnbound.reference.rules_report import TERMINAL_ENUM, build_report, op_calls_name, report_scope
from turnbound.reference.rules_transitions import build_transition, readable_fact_symbols
from turnbound.reference.table import Claim, Table
from turnbound.reference.types import BOOL, INT, Type, conforms
from turnbound.reference.wellformed import check_wellformed


def pydantic_message(source: str, exc: ValidationError) -> str:
    """The first structural error as one line: `file: a.b[2].c: message`."""
    err = exc.errors()[0]
    path = ""
    for part in err["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"{source}: {path or 'document'}: {err['msg']}"


def read_table_text(path: Path) -> str:
    """A table file's text: bounded in size, and strictly UTF-8 (a bad byte is named, not replaced)."""
    return read_text(path, "table", MAX_TABLE_BYTES)


def load_table(path: str | Path) -> Table:
    if not isinstance(path, (str, Path)):
        raise TypeError(f"load_table: expected a path (str or Path), got {type(path).__name__}")
    path = Path(path)
    return load_table_text(read_table_text(path), source=str(path), base=path.parent)


def _parse_toml(text: str, source: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DefinitionError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise DefinitionError(f"{source}: not valid TOML: nested too deeply") from None


def resolved_document(path: Path) -> dict[str, object]:
    """The table document at `path` with its `extends` chain laid out: what the engines load."""
    text = read_table_text(path)
    return resolve(_parse_toml(text, str(path)), text, str(path), path.parent, read=read_table_text)[0]


def load_table_text(text: str, source: str = "<table>", base: Path | None = None) -> Table:
    """`base` is where the parent of a table that `extends` another lives (default: the bundled tables)."""
    if not isinstance(text, str):
        raise TypeError(f"load_table_text: expected the table's TOML text (str), got {type(text).__name__}")
    if not isinstance(source, str):
        raise TypeError(f"load_table_text: source must be a str, got {type(source).__name__}")
    if len(text) > MAX_TABLE_BYTES:
        raise DefinitionError(f"{source}: the table is larger than {MAX_TABLE_BYTES} characters")
    data = _parse_toml(text, source)
    home = base or Path(turnbound.spec.__file__).parent
    data, digest = resolve(data, text, source, home, read=read_table_text)
    return build_table(data, source, digest)


def build_table(data: Mapping[str, object], source: str, digest: str) -> Table:
    try:
        doc = TableDoc.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(pydantic_message(source, exc)) from None
    except RecursionError:
        raise DefinitionError(f"{source}: the document is nested too deeply") from None
    return assemble(LoadContext(doc, source, digest))


def assemble(ctx: LoadContext) -> Table:
    """The rules in order, each assuming the ones before it hold; the first one broken is the error."""
    d = ctx.doc
    check_profile_section(ctx)
    build_enums(ctx)
    params = build_parameters(ctx)
    param_scope = {p.name: Symbol(p.name, "param", INT) for p in params}
    variables = build_variables(ctx, param_scope)
    failures = build_failures(ctx)
    operations = build_operations(ctx, failures)
    variables += pasttime_variables(ctx, param_scope, {v.name for v in variables}, operations, failures)
    state_scope = {**param_scope, **{v.name: Symbol(v.name, "var", v.type) for v in variables}}
    check_outcomes(ctx, operations, failures)
    check_state_names(ctx, state_scope, operations, failures)
    check_enum_members(ctx, state_scope, operations, failures)
    locations, terminals = build_places(ctx)
    for fname, failure in failures.items():
        if failure.to is not None:
            check_place(ctx, f"failures.{fname}.to", failure.to, locations, terminals)
    check_transition_refs(ctx, operations, failures, locations, terminals)
    edges = location_edges(ctx, operations, failures)
    check_reachable(ctx, edges, locations)
    check_way_out(ctx, locations)
    available = readable_fact_symbols(ctx, operations, failures)
    transitions = tuple(
        build_transition(ctx, i, state_scope, operations, failures, available)
        for i, _ in enumerate(d.transitions)
    )
    monitors = build_monitors(ctx, state_scope, operations, failures)
    step_claims = build_step_claims(ctx, state_scope, operations, failures)
    transitions = compile_pasttime(
        ctx.source,
        transitions,
        {name: op.raises for name, op in operations.items()},
        {v.name: v.type for v in variables},
        monitors,
        tuple(c for c, _ in step_claims),
    )
    invariants = build_claims(ctx, "invariants", d.invariants, state_scope, "invariant")
    invariants += tuple(
        Claim(c.name, "invariant", Ref(c.name, "var", BOOL), expect, doc, step=c)
        for c, (expect, doc) in step_claims
    )
    bounds = build_claims(ctx, "bounds", d.bounds, state_scope, "bound", terminals)
    lemmas = build_claims(ctx, "lemmas", d.lemmas, state_scope, "lemma")
    trace_properties = build_trace_properties(ctx, operations, failures)
    report = build_report(ctx, state_scope, operations, terminals, variables, params)
    outgoing = {loc: tuple(t for t in transitions if t.source == loc) for loc in locations}
    table = Table(
        name=d.profile.name,
        title=d.profile.title,
        source=ctx.source,
        digest=ctx.digest,
        initial=d.profile.initial,
        parameters=params,
        enums=MappingProxyType(dict(ctx.enums)),
        variables=variables,
        operations=MappingProxyType(operations),
        failures=MappingProxyType(failures),
        locations=MappingProxyType(locations),
        terminals=MappingProxyType(terminals),
        transitions=transitions,
        invariants=invariants,
        bounds=bounds,
        lemmas=lemmas,
        trace_properties=trace_properties,
        report=report,
        readings=tuple(d.profile.readings),
        seed=d.profile.seed,
        variant_of=d.profile.variant_of,
        step_horizon=d.profile.step_horizon,
        monitors=monitors,
        step_claims=tuple(c for c, _ in step_claims),
        outgoing=MappingProxyType(outgoing),
    )
    check_ghosts(table)
    check_wellformed(table)  # guards exclusive and covering, for all parameter values (z3)
    return table


def check_conforms(value: object, type_: Type) -> bool:
    return conforms(value, type_)


__all__ = [
    "TERMINAL_ENUM",
    "assemble",
    "build_table",
    "check_conforms",
    "load_table",
    "load_table_text",
    "op_calls_name",
    "pydantic_message",
    "read_table_text",
    "report_scope",
    "resolved_document",
]
