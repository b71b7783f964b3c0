"""The loader's rules for declarations: names, types, the profile, enums, parameters,
variables, failures, operations and their facts, and the clashes between their names.

Each rule is one small function; its message names the item, the field, and what to change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from turnbound.reference.expr_parse import Scope
from turnbound.reference.limits import (
    MAX_FACT_VALUES,
    MAX_OUTCOMES,
    MAX_PARAMETER_RANGE,
    MAX_PARAMETER_VALUE,
    MAX_STEP_HORIZON,
    MAX_SWEEP,
    PROFILE_NAME,
)
from turnbound.reference.model import ValueSpecDoc
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.table import Failure, Operation, Parameter, ValueSpec, Variable
from turnbound.reference.types import BOOL, INT, Domain, EnumType, IntType, Type

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset({"true", "false", "and", "or", "not", "if", "else", "terminal"})

# -- names and types -------------------------------------------------------


def check_ident(ctx: LoadContext, where: str, name: str) -> None:
    if not _IDENT.fullmatch(name) or name in _RESERVED:
        raise ctx.fail(where, f"{name!r} is not a usable name (ASCII letters, digits, _; not a keyword)")


def resolve_type(ctx: LoadContext, where: str, name: str) -> Type:
    if name == "int":
        return INT
    if name == "bool":
        return BOOL
    if name in ctx.enums:
        return ctx.enums[name]
    known = ", ".join(["int", "bool", *ctx.enums])
    raise ctx.fail(where, f"unknown type {name!r}; use one of: {known}")


def build_enums(ctx: LoadContext) -> None:
    for name, members in ctx.doc.enums.items():
        where = f"enums.{name}"
        check_ident(ctx, where, name)
        if not members:
            raise ctx.fail(where, "an enum needs at least one member")
        dupes = sorted({m for m in members if members.count(m) > 1})
        if dupes:
            raise ctx.fail(where, f"members listed twice: {dupes}")
        for m in members:
            check_ident(ctx, where, m)
        ctx.enums[name] = EnumType(name, tuple(members))


def build_parameters(ctx: LoadContext) -> tuple[Parameter, ...]:
    out = []
    for name, p in ctx.doc.parameters.items():
        where = f"parameters.{name}"
        check_ident(ctx, where, name)
        check_parameter_sizes(ctx, where, p.min, p.max, p.default, p.range)
        if p.max is not None and p.max < p.min:
            raise ctx.fail(where, f"max {p.max} is below min {p.min}")
        param = Parameter(
            name,
            p.min,
            p.max,
            p.default,
            (p.range[0], p.range[1]) if p.range else (p.default, p.default),
            p.doc,
        )
        if not param.admits(p.default):
            raise ctx.fail(f"{where}.default", f"default {p.default} is outside min..max")
        lo, hi = param.range
        if lo > hi or not param.admits(lo) or not param.admits(hi):
            raise ctx.fail(f"{where}.range", f"range {lo}..{hi} is empty or outside min..max")
        out.append(param)
    sweep = 1
    for param in out:
        sweep *= param.range[1] - param.range[0] + 1
    if sweep > MAX_SWEEP:
        raise ctx.fail(
            "parameters",
            f"the explore ranges make {sweep} configurations; the limit is {MAX_SWEEP} (narrow a range)",
        )
    return tuple(out)


def check_parameter_sizes(
    ctx: LoadContext, where: str, lo: int, hi: int | None, default: int, rng: list[int] | None
) -> None:
    for field, value in (("min", lo), ("max", hi), ("default", default)):
        if value is not None and abs(value) > MAX_PARAMETER_VALUE:
            raise ctx.fail(f"{where}.{field}", f"{value} is beyond the limit of ±{MAX_PARAMETER_VALUE}")
    if rng is None:
        return
    for value in rng:
        if abs(value) > MAX_PARAMETER_VALUE:
            raise ctx.fail(f"{where}.range", f"{value} is beyond the limit of ±{MAX_PARAMETER_VALUE}")
    size = rng[1] - rng[0] + 1
    if size > MAX_PARAMETER_RANGE:
        raise ctx.fail(
            f"{where}.range",
            f"range {rng[0]}..{rng[1]} has {size} values; the limit is {MAX_PARAMETER_RANGE}",
        )


def value_spec(ctx: LoadContext, where: str, name: str, spec: ValueSpecDoc) -> ValueSpec:
    check_ident(ctx, where, name)
    type_ = resolve_type(ctx, f"{where}.type", spec.type)
    if isinstance(type_, IntType):
        if spec.min is None or spec.max is None or spec.min > spec.max:
            raise ctx.fail(where, "an int fact needs a finite domain: set min and max (min <= max)")
        if spec.max - spec.min + 1 > MAX_FACT_VALUES:
            raise ctx.fail(
                where,
                f"domain {spec.min}..{spec.max} has {spec.max - spec.min + 1} values; "
                f"the limit is {MAX_FACT_VALUES} (engines enumerate every value)",
            )
        domain = Domain(type_, spec.min, spec.max)
    else:
        if spec.min is not None or spec.max is not None:
            raise ctx.fail(where, f"min/max only apply to int facts, not {type_}")
        domain = Domain(type_)
    if spec.default is not None and spec.default not in domain:
        raise ctx.fail(
            f"{where}.default", f"default {spec.default!r} is outside the domain ({domain.describe()})"
        )
    return ValueSpec(name, domain, spec.default, spec.doc)


# -- the profile and what the host offers ------------------------------------


def check_profile_section(ctx: LoadContext) -> None:
    """The name names directories (cases, vectors): an identifier, so it can never leave them."""
    p = ctx.doc.profile
    if not PROFILE_NAME.fullmatch(p.name):
        raise ctx.fail(
            "profile.name",
            f"{p.name!r} is not a profile name: lowercase ASCII letters, digits and '-', "
            "starting with a letter, at most 64 characters",
        )
    if p.step_horizon is not None and p.step_horizon > MAX_STEP_HORIZON:
        raise ctx.fail("profile.step_horizon", f"{p.step_horizon} is beyond the limit of {MAX_STEP_HORIZON}")


def check_outcomes(
    ctx: LoadContext, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> None:
    """Engines enumerate every outcome of an operation: their number is bounded."""
    for op in operations.values():
        count = 1
        for f in op.facts:
            count *= f.domain.size()
        for err in op.raises:
            size = 1
            for f in failures[err].fields:
                size *= f.domain.size()
            count += size
        if count > MAX_OUTCOMES:
            raise ctx.fail(
                f"operations.{op.name}",
                f"its facts and raises make {count} distinct outcomes; the limit is {MAX_OUTCOMES}",
            )


def build_variables(ctx: LoadContext, param_scope: Scope) -> tuple[Variable, ...]:
    out = []
    for name, v in ctx.doc.variables.items():
        where = f"variables.{name}"
        check_ident(ctx, where, name)
        if name in param_scope:
            raise ctx.fail(where, f"{name!r} is already a parameter; names must be unique")
        type_ = resolve_type(ctx, f"{where}.type", v.type)
        if v.counter and not isinstance(type_, IntType):
            raise ctx.fail(f"{where}.counter", f"only int variables can be counters, not {type_}")
        if v.counter and v.ghost:
            raise ctx.fail(f"{where}.ghost", "a counter is on the wire, so it can not be a ghost")
        init = ctx.expr(f"{where}.init", v.init, param_scope, type_)
        out.append(Variable(name, type_, init, v.counter, v.doc, v.ghost))
    return tuple(out)


def build_failures(ctx: LoadContext) -> dict[str, Failure]:
    out = {}
    for name, f in ctx.doc.failures.items():
        where = f"failures.{name}"
        check_ident(ctx, where, name)
        fields = tuple(
            value_spec(ctx, f"{where}.fields.{fname}", fname, spec) for fname, spec in f.fields.items()
        )
        out[name] = Failure(name, fields, f.to, f.doc)
    return out


def build_operations(ctx: LoadContext, failures: Mapping[str, Failure]) -> dict[str, Operation]:
    out = {}
    for name, op in ctx.doc.operations.items():
        where = f"operations.{name}"
        check_ident(ctx, where, name)
        args = []
        for aname, tname in op.args.items():
            check_ident(ctx, f"{where}.args.{aname}", aname)
            args.append((aname, resolve_type(ctx, f"{where}.args.{aname}", tname)))
        facts = tuple(
            value_spec(ctx, f"{where}.facts.{fname}", fname, spec) for fname, spec in op.facts.items()
        )
        unknown = [r for r in op.raises if r not in failures]
        if unknown:
            raise ctx.fail(f"{where}.raises", f"unknown failures {unknown}; declare them under [failures]")
        out[name] = Operation(name, tuple(args), facts, tuple(op.raises), op.doc)
    return out


def check_state_names(
    ctx: LoadContext, scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> None:
    specs = [(f"operations.{o.name}.facts.{f.name}", f) for o in operations.values() for f in o.facts]
    specs += [(f"failures.{x.name}.fields.{f.name}", f) for x in failures.values() for f in x.fields]
    for where, spec in specs:
        if spec.name in scope:
            raise ctx.fail(where, f"{spec.name!r} is already a parameter or variable; rename the fact")


def check_enum_members(
    ctx: LoadContext, scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> None:
    names = set(scope) | {f.name for o in operations.values() for f in o.facts}
    names |= {f.name for x in failures.values() for f in x.fields}
    for enum in ctx.enums.values():
        clash = sorted(names & set(enum.members))
        if clash:
            raise ctx.fail(
                f"enums.{enum.name}", f"members {clash} are also names of parameters, variables or facts"
            )
