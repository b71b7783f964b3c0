"""Load a TOML transition table and reject it, eagerly and in one line, if it is not well formed.

Each rule is one small method; its message names the file, the item (transition,
variable, …), the field, and what to change.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import turnbound.spec
from pydantic import ValidationError
from turnbound.reference.errors import DefinitionError, ExpressionError, TableError
from turnbound.reference.expr import Expr, Lit, Ref
from turnbound.reference.expr_parse import Scope, Symbol, parse_expr
from turnbound.reference.ghosts import check_ghosts
from turnbound.reference.inherit import resolve
from turnbound.reference.jsonfile import read_text
from turnbound.reference.limits import (
    MAX_FACT_VALUES,
    MAX_OUTCOMES,
    MAX_PARAMETER_RANGE,
    MAX_PARAMETER_VALUE,
    MAX_STEP_HORIZON,
    MAX_SWEEP,
    MAX_TABLE_BYTES,
    PROFILE_NAME,
)
from turnbound.reference.model import (
    ClaimDoc,
    MonitorDoc,
    StepClaimDoc,
    StepPatternDoc,
    TableDoc,
    ValueSpecDoc,
)
from turnbound.reference.pasttime import compile_pasttime
from turnbound.reference.readable import Entering, readable_facts
from turnbound.reference.table import (
    ANY_OP,
    BUILTIN_TERMINALS,
    Claim,
    Failure,
    Monitor,
    Operation,
    Parameter,
    ReportRule,
    StepClaim,
    StepPattern,
    Table,
    TraceProperty,
    Transition,
    ValueSpec,
    Variable,
)
from turnbound.reference.types import BOOL, INT, Domain, EnumType, IntType, Type, conforms
from turnbound.reference.wellformed import check_wellformed

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_RESERVED = frozenset({"true", "false", "and", "or", "not", "if", "else", "terminal"})
TERMINAL_ENUM = "terminal"


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
    return _Loader(doc, source, digest).build()


def op_calls_name(op: str) -> str:
    """The meta name report rules use for how often an operation was invoked."""
    return f"{op}_calls"


class _Loader:
    def __init__(self, doc: TableDoc, source: str, digest: str) -> None:
        self.doc = doc
        self.source = source
        self.digest = digest
        self.enums: dict[str, EnumType] = {}

    def fail(self, where: str, message: str) -> TableError:
        return TableError(self.source, where, message)

    def expr(self, where: str, text: str, scope: Scope, expected: Type | None) -> Expr:
        try:
            return parse_expr(text, scope, expected)
        except ExpressionError as exc:
            raise self.fail(where, str(exc)) from None

    # -- names and types -------------------------------------------------

    def check_ident(self, where: str, name: str) -> None:
        if not _IDENT.fullmatch(name) or name in _RESERVED:
            raise self.fail(where, f"{name!r} is not a usable name (ASCII letters, digits, _; not a keyword)")

    def resolve_type(self, where: str, name: str) -> Type:
        if name == "int":
            return INT
        if name == "bool":
            return BOOL
        if name in self.enums:
            return self.enums[name]
        known = ", ".join(["int", "bool", *self.enums])
        raise self.fail(where, f"unknown type {name!r}; use one of: {known}")

    def build_enums(self) -> None:
        for name, members in self.doc.enums.items():
            where = f"enums.{name}"
            self.check_ident(where, name)
            if not members:
                raise self.fail(where, "an enum needs at least one member")
            dupes = sorted({m for m in members if members.count(m) > 1})
            if dupes:
                raise self.fail(where, f"members listed twice: {dupes}")
            for m in members:
                self.check_ident(where, m)
            self.enums[name] = EnumType(name, tuple(members))

    def build_parameters(self) -> tuple[Parameter, ...]:
        out = []
        for name, p in self.doc.parameters.items():
            where = f"parameters.{name}"
            self.check_ident(where, name)
            self.check_parameter_sizes(where, p.min, p.max, p.default, p.range)
            if p.max is not None and p.max < p.min:
                raise self.fail(where, f"max {p.max} is below min {p.min}")
            param = Parameter(
                name,
                p.min,
                p.max,
                p.default,
                (p.range[0], p.range[1]) if p.range else (p.default, p.default),
                p.doc,
            )
            if not param.admits(p.default):
                raise self.fail(f"{where}.default", f"default {p.default} is outside min..max")
            lo, hi = param.range
            if lo > hi or not param.admits(lo) or not param.admits(hi):
                raise self.fail(f"{where}.range", f"range {lo}..{hi} is empty or outside min..max")
            out.append(param)
        sweep = 1
        for param in out:
            sweep *= param.range[1] - param.range[0] + 1
        if sweep > MAX_SWEEP:
            raise self.fail(
                "parameters",
                f"the explore ranges make {sweep} configurations; the limit is {MAX_SWEEP} (narrow a range)",
            )
        return tuple(out)

    def check_parameter_sizes(
        self, where: str, lo: int, hi: int | None, default: int, rng: list[int] | None
    ) -> None:
        for field, value in (("min", lo), ("max", hi), ("default", default)):
            if value is not None and abs(value) > MAX_PARAMETER_VALUE:
                raise self.fail(f"{where}.{field}", f"{value} is beyond the limit of ±{MAX_PARAMETER_VALUE}")
        if rng is None:
            return
        for value in rng:
            if abs(value) > MAX_PARAMETER_VALUE:
                raise self.fail(f"{where}.range", f"{value} is beyond the limit of ±{MAX_PARAMETER_VALUE}")
        size = rng[1] - rng[0] + 1
        if size > MAX_PARAMETER_RANGE:
            raise self.fail(
                f"{where}.range",
                f"range {rng[0]}..{rng[1]} has {size} values; the limit is {MAX_PARAMETER_RANGE}",
            )

    def value_spec(self, where: str, name: str, spec: ValueSpecDoc) -> ValueSpec:
        self.check_ident(where, name)
        type_ = self.resolve_type(f"{where}.type", spec.type)
        if isinstance(type_, IntType):
            if spec.min is None or spec.max is None or spec.min > spec.max:
                raise self.fail(where, "an int fact needs a finite domain: set min and max (min <= max)")
            if spec.max - spec.min + 1 > MAX_FACT_VALUES:
                raise self.fail(
                    where,
                    f"domain {spec.min}..{spec.max} has {spec.max - spec.min + 1} values; "
                    f"the limit is {MAX_FACT_VALUES} (engines enumerate every value)",
                )
            domain = Domain(type_, spec.min, spec.max)
        else:
            if spec.min is not None or spec.max is not None:
                raise self.fail(where, f"min/max only apply to int facts, not {type_}")
            domain = Domain(type_)
        if spec.default is not None and spec.default not in domain:
            raise self.fail(
                f"{where}.default", f"default {spec.default!r} is outside the domain ({domain.describe()})"
            )
        return ValueSpec(name, domain, spec.default, spec.doc)

    # -- the build -------------------------------------------------------

    def check_profile(self) -> None:
        """The name names directories (cases, vectors): an identifier, so it can never leave them."""
        p = self.doc.profile
        if not PROFILE_NAME.fullmatch(p.name):
            raise self.fail(
                "profile.name",
                f"{p.name!r} is not a profile name: lowercase ASCII letters, digits and '-', "
                "starting with a letter, at most 64 characters",
            )
        if p.step_horizon is not None and p.step_horizon > MAX_STEP_HORIZON:
            raise self.fail(
                "profile.step_horizon", f"{p.step_horizon} is beyond the limit of {MAX_STEP_HORIZON}"
            )

    def check_outcomes(self, operations: Mapping[str, Operation], failures: Mapping[str, Failure]) -> None:
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
                raise self.fail(
                    f"operations.{op.name}",
                    f"its facts and raises make {count} distinct outcomes; the limit is {MAX_OUTCOMES}",
                )

    def build(self) -> Table:
        d = self.doc
        self.check_profile()
        self.build_enums()
        params = self.build_parameters()
        param_scope = {p.name: Symbol(p.name, "param", INT) for p in params}
        variables = self.build_variables(param_scope)
        failures = self.build_failures()
        operations = self.build_operations(failures)
        variables += self.pasttime_variables(param_scope, {v.name for v in variables}, operations, failures)
        state_scope = {**param_scope, **{v.name: Symbol(v.name, "var", v.type) for v in variables}}
        self.check_outcomes(operations, failures)
        self.check_state_names(state_scope, operations, failures)
        self.check_enum_members(state_scope, operations, failures)
        locations, terminals = self.build_places()
        for fname, failure in failures.items():
            if failure.to is not None:
                self.check_place(f"failures.{fname}.to", failure.to, locations, terminals)
        self.check_transition_refs(operations, failures, locations, terminals)
        edges = self.edges(operations, failures)
        self.check_reachable(edges, locations)
        self.check_way_out(locations)
        available = self.available_facts(operations, failures)
        transitions = tuple(
            self.build_transition(i, state_scope, operations, failures, available)
            for i, _ in enumerate(d.transitions)
        )
        monitors = self.build_monitors(state_scope, operations, failures)
        step_claims = self.build_step_claims(state_scope, operations, failures)
        transitions = compile_pasttime(
            self.source,
            transitions,
            {name: op.raises for name, op in operations.items()},
            {v.name: v.type for v in variables},
            monitors,
            tuple(c for c, _ in step_claims),
        )
        invariants = self.claims("invariants", d.invariants, state_scope, "invariant")
        invariants += tuple(
            Claim(c.name, "invariant", Ref(c.name, "var", BOOL), expect, doc, step=c)
            for c, (expect, doc) in step_claims
        )
        bounds = self.claims("bounds", d.bounds, state_scope, "bound", terminals)
        lemmas = self.claims("lemmas", d.lemmas, state_scope, "lemma")
        trace_properties = self.build_trace_properties(operations, failures)
        report = self.build_report(state_scope, operations, terminals, variables, params)
        outgoing = {loc: tuple(t for t in transitions if t.source == loc) for loc in locations}
        table = Table(
            name=d.profile.name,
            title=d.profile.title,
            source=self.source,
            digest=self.digest,
            initial=d.profile.initial,
            parameters=params,
            enums=MappingProxyType(dict(self.enums)),
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

    def build_variables(self, param_scope: Scope) -> tuple[Variable, ...]:
        out = []
        for name, v in self.doc.variables.items():
            where = f"variables.{name}"
            self.check_ident(where, name)
            if name in param_scope:
                raise self.fail(where, f"{name!r} is already a parameter; names must be unique")
            type_ = self.resolve_type(f"{where}.type", v.type)
            if v.counter and not isinstance(type_, IntType):
                raise self.fail(f"{where}.counter", f"only int variables can be counters, not {type_}")
            if v.counter and v.ghost:
                raise self.fail(f"{where}.ghost", "a counter is on the wire, so it can not be a ghost")
            init = self.expr(f"{where}.init", v.init, param_scope, type_)
            out.append(Variable(name, type_, init, v.counter, v.doc, v.ghost))
        return tuple(out)

    def build_failures(self) -> dict[str, Failure]:
        out = {}
        for name, f in self.doc.failures.items():
            where = f"failures.{name}"
            self.check_ident(where, name)
            fields = tuple(
                self.value_spec(f"{where}.fields.{fname}", fname, spec) for fname, spec in f.fields.items()
            )
            out[name] = Failure(name, fields, f.to, f.doc)
        return out

    def build_operations(self, failures: Mapping[str, Failure]) -> dict[str, Operation]:
        out = {}
        for name, op in self.doc.operations.items():
            where = f"operations.{name}"
            self.check_ident(where, name)
            args = []
            for aname, tname in op.args.items():
                self.check_ident(f"{where}.args.{aname}", aname)
                args.append((aname, self.resolve_type(f"{where}.args.{aname}", tname)))
            facts = tuple(
                self.value_spec(f"{where}.facts.{fname}", fname, spec) for fname, spec in op.facts.items()
            )
            unknown = [r for r in op.raises if r not in failures]
            if unknown:
                raise self.fail(
                    f"{where}.raises", f"unknown failures {unknown}; declare them under [failures]"
                )
            out[name] = Operation(name, tuple(args), facts, tuple(op.raises), op.doc)
        return out

    def check_state_names(
        self, scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> None:
        specs = [(f"operations.{o.name}.facts.{f.name}", f) for o in operations.values() for f in o.facts]
        specs += [(f"failures.{x.name}.fields.{f.name}", f) for x in failures.values() for f in x.fields]
        for where, spec in specs:
            if spec.name in scope:
                raise self.fail(where, f"{spec.name!r} is already a parameter or variable; rename the fact")

    def check_enum_members(
        self, scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> None:
        names = set(scope) | {f.name for o in operations.values() for f in o.facts}
        names |= {f.name for x in failures.values() for f in x.fields}
        for enum in self.enums.values():
            clash = sorted(names & set(enum.members))
            if clash:
                raise self.fail(
                    f"enums.{enum.name}", f"members {clash} are also names of parameters, variables or facts"
                )

    def build_places(self) -> tuple[dict[str, str], dict[str, str]]:
        locations = dict(self.doc.locations)
        terminals = {**BUILTIN_TERMINALS, **self.doc.terminals}
        for name in [*locations, *terminals]:
            self.check_ident(f"locations.{name}" if name in locations else f"terminals.{name}", name)
        both = sorted(set(locations) & set(terminals))
        if both:
            raise self.fail("terminals", f"these names are both locations and terminals: {both}")
        if not self.doc.profile.initial:
            raise self.fail("profile.initial", "missing: name the location a run starts in")
        if self.doc.profile.initial not in locations:
            raise self.fail(
                "profile.initial", f"initial location {self.doc.profile.initial!r} is not under [locations]"
            )
        return locations, terminals

    def check_place(
        self, where: str, name: str, locations: Mapping[str, str], terminals: Mapping[str, str]
    ) -> None:
        if name not in locations and name not in terminals:
            raise self.fail(where, f"unknown location {name!r}; declare it under [locations] or [terminals]")

    def check_transition_refs(
        self,
        operations: Mapping[str, Operation],
        failures: Mapping[str, Failure],
        locations: Mapping[str, str],
        terminals: Mapping[str, str],
    ) -> None:
        seen: set[str] = set()
        for t in self.doc.transitions:
            where = f"transition {t.id!r}"
            self.check_ident(where, t.id)
            if t.id in seen:
                raise self.fail(where, "two transitions have this id; ids must be unique")
            seen.add(t.id)
            if t.source in terminals:
                raise self.fail(f"{where}.from", f"{t.source!r} is a terminal; a terminal has no way out")
            self.check_place(f"{where}.from", t.source, locations, terminals)
            self.check_place(f"{where}.to", t.to, locations, terminals)
            for var in t.update:
                if var not in self.doc.variables:
                    raise self.fail(f"{where}.update.{var}", f"{var!r} is not a declared variable")
            if t.op is None:
                for fieldname, value in (
                    ("args", t.args),
                    ("on_raise", t.on_raise),
                    ("raise_update", t.raise_update),
                ):
                    if value:
                        raise self.fail(f"{where}.{fieldname}", "only a transition with an op can have this")
                continue
            op = operations.get(t.op)
            if op is None:
                raise self.fail(f"{where}.op", f"unknown operation {t.op!r}; declare it under [operations]")
            want = {a for a, _ in op.args}
            if set(t.args) != want:
                raise self.fail(
                    f"{where}.args",
                    f"{t.op} takes arguments {sorted(want)}, the transition gives {sorted(t.args)}",
                )
            for err, target in t.on_raise.items():
                if err not in op.raises:
                    raise self.fail(f"{where}.on_raise.{err}", f"{t.op} does not raise {err!r}")
                self.check_place(f"{where}.on_raise.{err}", target, locations, terminals)
            for err in op.raises:
                if err not in t.on_raise and failures[err].to is None:
                    raise self.fail(
                        f"{where}.on_raise",
                        f"{t.op} may raise {err!r} but neither the transition nor failures.{err}.to "
                        "says where it goes",
                    )

    def raise_target(
        self, t_op_raises: Iterable[str], on_raise: Mapping[str, str], failures: Mapping[str, Failure]
    ) -> dict[str, str]:
        out = {}
        for err in t_op_raises:
            target = on_raise.get(err) or failures[err].to
            assert target is not None
            out[err] = target
        return out

    def available_facts(
        self, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> dict[str, dict[str, Symbol]]:
        """Facts readable at each location (`turnbound.reference.readable`: one rule for every engine)."""
        entering: list[Entering] = []
        for t in self.doc.transitions:
            if t.op is None:
                entering.append((t.to, ()))
                continue
            op = operations[t.op]
            entering.append((t.to, op.facts))
            for err, target in self.raise_target(op.raises, t.on_raise, failures).items():
                entering.append((target, failures[err].fields))
        readable = readable_facts(self.doc.profile.initial, entering)
        return {
            loc: {name: Symbol(name, "fact", specs[0].domain.type) for name, specs in facts.items()}
            for loc, facts in readable.items()
        }

    def build_transition(
        self,
        index: int,
        state_scope: Scope,
        operations: Mapping[str, Operation],
        failures: Mapping[str, Failure],
        available: Mapping[str, Mapping[str, Symbol]],
    ) -> Transition:
        t = self.doc.transitions[index]
        where = f"transition {t.id!r}"
        here = {**state_scope, **available.get(t.source, {})}
        guard = self.expr(f"{where}.guard", t.guard, here, BOOL)
        args: list[tuple[str, Expr]] = []
        update_scope: Scope = here
        on_raise: dict[str, str] = {}
        if t.op is not None:
            op = operations[t.op]
            for aname, atype in op.args:
                args.append((aname, self.expr(f"{where}.args.{aname}", t.args[aname], here, atype)))
            update_scope = {
                **state_scope,
                **{f.name: Symbol(f.name, "fact", f.domain.type) for f in op.facts},
            }
            on_raise = self.raise_target(op.raises, t.on_raise, failures)
        updates = []
        types = {name: self.resolve_type("", v.type) for name, v in self.doc.variables.items()}
        for var, text in t.update.items():
            updates.append((var, self.expr(f"{where}.update.{var}", text, update_scope, types[var])))
        raise_updates = self.raise_updates(where, t.raise_update, on_raise, state_scope, failures, types)
        return Transition(
            id=t.id,
            source=t.source,
            target=t.to,
            guard=guard,
            op=t.op,
            args=tuple(args),
            updates=tuple(updates),
            on_raise=MappingProxyType(on_raise),
            doc=t.doc,
            raise_updates=MappingProxyType(raise_updates),
        )

    def raise_updates(
        self,
        where: str,
        given: Mapping[str, Mapping[str, str]],
        on_raise: Mapping[str, str],
        state_scope: Scope,
        failures: Mapping[str, Failure],
        types: Mapping[str, Type],
    ) -> dict[str, tuple[tuple[str, Expr], ...]]:
        """Ghost updates on a raise: the call failed, so behaviour keeps its state; claims may count it."""
        out = {}
        for err, updates in given.items():
            here = f"{where}.raise_update.{err}"
            if err not in on_raise:
                raise self.fail(here, "the transition's operation does not raise this failure")
            scope = {
                **state_scope,
                **{f.name: Symbol(f.name, "fact", f.domain.type) for f in failures[err].fields},
            }
            parsed = []
            for var, text in updates.items():
                doc = self.doc.variables.get(var)
                if doc is None:
                    raise self.fail(f"{here}.{var}", f"{var!r} is not a declared variable")
                if not doc.ghost:
                    raise self.fail(
                        f"{here}.{var}",
                        f"{var!r} is not a ghost; a raise keeps the state, only ghosts may be updated",
                    )
                parsed.append((var, self.expr(f"{here}.{var}", text, scope, types[var])))
            out[err] = tuple(parsed)
        return out

    def edges(
        self, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> dict[str, set[str]]:
        """Where each location can go next, raise targets included."""
        out: dict[str, set[str]] = {}
        for t in self.doc.transitions:
            nexts = out.setdefault(t.source, set())
            nexts.add(t.to)
            if t.op is not None:
                nexts.update(self.raise_target(operations[t.op].raises, t.on_raise, failures).values())
        return out

    def check_reachable(self, edges: Mapping[str, set[str]], locations: Mapping[str, str]) -> None:
        seen = {self.doc.profile.initial}
        frontier = [self.doc.profile.initial]
        while frontier:
            for nxt in edges.get(frontier.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        unreachable = sorted(set(locations) - seen)
        if unreachable:
            raise self.fail(
                "locations", f"these locations are unreachable from the initial one: {unreachable}"
            )
        dead = sorted(set(self.doc.terminals) - set(BUILTIN_TERMINALS) - seen)
        if dead:
            raise self.fail("terminals", f"these terminals are unreachable from the initial location: {dead}")

    def check_way_out(self, locations: Mapping[str, str]) -> None:
        sources = {t.source for t in self.doc.transitions}
        stuck = sorted(set(locations) - sources)
        if stuck:
            raise self.fail(
                "locations", f"these locations have no outgoing transition and are not terminals: {stuck}"
            )

    def claims(
        self,
        section: str,
        docs: list[ClaimDoc],
        scope: Scope,
        kind: str,
        terminals: Mapping[str, str] | None = None,
    ) -> tuple[Claim, ...]:
        """Invariants, bounds or lemmas; only a bound (`terminals` given) may name where it is judged."""
        out = []
        names: set[str] = set()
        for i, c in enumerate(docs):
            where = f"{section}[{i}] {c.name!r}"
            self.check_ident(where, c.name)
            if c.name in names:
                raise self.fail(where, "two claims have this name")
            names.add(c.name)
            expr = self.expr(f"{where}.expr", c.expr, scope, BOOL)
            at = None if c.at is None else self.claim_terminals(f"{where}.at", c.at, terminals)
            out.append(Claim(c.name, kind, expr, c.expect, c.doc, at=at))  # type: ignore[arg-type]
        return tuple(out)

    def claim_terminals(
        self, where: str, names: list[str], terminals: Mapping[str, str] | None
    ) -> tuple[str, ...]:
        if terminals is None:
            raise self.fail(
                where, "only a bound is judged at terminals; an invariant or lemma holds everywhere"
            )
        own = [t for t in terminals if t not in BUILTIN_TERMINALS]
        if not names:
            raise self.fail(where, f"name at least one terminal: {', '.join(own)}")
        for name in names:
            if name not in own:
                raise self.fail(where, f"{name!r} is not one of the table's terminals: {', '.join(own)}")
        if len(set(names)) != len(names):
            raise self.fail(where, "a terminal is listed twice")
        return tuple(names)

    # -- monitors and step claims (compiled by `turnbound.reference.pasttime`) ----

    def pasttime_variables(
        self,
        param_scope: Scope,
        variables: set[str],
        operations: Mapping[str, Operation],
        failures: Mapping[str, Failure],
    ) -> tuple[Variable, ...]:
        """The ghost variable of each monitor and step claim, named after it."""
        taken = set(param_scope) | variables
        taken |= {f.name for o in operations.values() for f in o.facts}
        taken |= {f.name for x in failures.values() for f in x.fields}
        taken |= {m for e in self.enums.values() for m in e.members}
        claims = {c.name for c in (*self.doc.invariants, *self.doc.bounds, *self.doc.lemmas)}
        claims |= {p.name for p in self.doc.trace_properties}
        out = []
        entries: list[tuple[str, MonitorDoc | StepClaimDoc]] = [
            *((f"monitors[{i}] {m.name!r}", m) for i, m in enumerate(self.doc.monitors)),
            *((f"step_claims[{i}] {c.name!r}", c) for i, c in enumerate(self.doc.step_claims)),
        ]
        for where, e in entries:
            self.check_ident(where, e.name)
            if e.name in taken or e.name in claims:
                raise self.fail(
                    where,
                    f"{e.name!r} is already the name of a parameter, variable, fact, enum member or claim",
                )
            taken.add(e.name)
            if isinstance(e, MonitorDoc) and e.op == ANY_OP:
                if e.raise_ is not None and e.raise_ not in failures:
                    raise self.fail(f"{where}.raise", f"unknown failure {e.raise_!r}")
            else:
                op = operations.get(e.op)
                if op is None:
                    raise self.fail(
                        f"{where}.op", f"unknown operation {e.op!r}; declare it under [operations]"
                    )
                if e.raise_ is not None and e.raise_ not in op.raises:
                    raise self.fail(f"{where}.raise", f"{e.op} does not raise {e.raise_!r}")
            if isinstance(e, MonitorDoc) and e.kind == "count":
                out.append(Variable(e.name, INT, Lit(0, INT), doc=e.doc, ghost=True))
            else:
                init = not (isinstance(e, MonitorDoc) and e.kind in ("once", "previous"))
                out.append(Variable(e.name, BOOL, Lit(init, BOOL), doc=e.doc, ghost=True))
        return tuple(out)

    def step_scope(
        self, state_scope: Scope, op: Operation | None, raise_: str | None, failures: Mapping[str, Failure]
    ) -> dict[str, Symbol]:
        """Plain names: the state before the call; `next.x` after; `arg.a` sent; `fact.f` returned
        (for a monitor of any operation: the state, and a failure's fields)."""
        scope: dict[str, Symbol] = dict(state_scope)
        if op is None:
            specs = () if raise_ is None else failures[raise_].fields
            for f in specs:
                scope[f"fact.{f.name}"] = Symbol(f"fact.{f.name}", "fact", f.domain.type)
            return scope
        for name, sym in state_scope.items():
            if sym.kind == "var":
                scope[f"next.{name}"] = Symbol(f"next.{name}", "var", sym.type)
        for aname, atype in op.args:
            scope[f"arg.{aname}"] = Symbol(f"arg.{aname}", "var", atype)
        specs = op.facts if raise_ is None else failures[raise_].fields
        for f in specs:
            scope[f"fact.{f.name}"] = Symbol(f"fact.{f.name}", "fact", f.domain.type)
        return scope

    def build_monitors(
        self, state_scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> tuple[Monitor, ...]:
        out = []
        for i, m in enumerate(self.doc.monitors):
            where = f"monitors[{i}] {m.name!r}"
            scope = self.step_scope(state_scope, operations.get(m.op), m.raise_, failures)
            when = self.expr(f"{where}.when", m.when, scope, BOOL)
            out.append(Monitor(m.name, m.kind, m.op, m.raise_, when, m.doc))
        return tuple(out)

    def build_step_claims(
        self, state_scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> tuple[tuple[StepClaim, tuple[Literal["holds", "violated"], str]], ...]:
        out = []
        for i, c in enumerate(self.doc.step_claims):
            where = f"step_claims[{i}] {c.name!r}"
            scope = self.step_scope(state_scope, operations[c.op], c.raise_, failures)
            when = self.expr(f"{where}.when", c.when, scope, BOOL)
            expr = self.expr(f"{where}.expr", c.expr, scope, BOOL)
            out.append((StepClaim(c.name, c.op, c.raise_, when, expr), (c.expect, c.doc)))
        return tuple(out)

    def build_trace_properties(
        self, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
    ) -> tuple[TraceProperty, ...]:
        out = []
        names = {c.name for c in (*self.doc.invariants, *self.doc.bounds, *self.doc.lemmas)}
        names |= {m.name for m in self.doc.monitors} | {c.name for c in self.doc.step_claims}
        for i, p in enumerate(self.doc.trace_properties):
            where = f"trace_properties[{i}] {p.name!r}"
            self.check_ident(where, p.name)
            if p.name in names:
                raise self.fail(where, "another claim or trace property has this name")
            names.add(p.name)
            if p.at_most is not None:
                if p.op not in operations or p.after is not None or p.forbid is not None:
                    raise self.fail(where, "an at_most property names a declared op and nothing else")
                out.append(
                    TraceProperty(p.name, "at_most", op=p.op, limit=p.at_most, expect=p.expect, doc=p.doc)
                )
                continue
            if p.after is None or p.forbid is None:
                raise self.fail(where, "give either op + at_most, or after + forbid")
            if p.forbid != ANY_OP and p.forbid not in operations:
                raise self.fail(f"{where}.forbid", f"unknown operation {p.forbid!r} (or use {ANY_OP!r})")
            pattern = self.step_pattern(f"{where}.after", p.after, operations, failures)
            out.append(
                TraceProperty(
                    p.name,
                    "never_after",
                    after=pattern,
                    forbid=p.forbid,
                    within=p.within,
                    expect=p.expect,
                    doc=p.doc,
                )
            )
        return tuple(out)

    def step_pattern(
        self,
        where: str,
        doc: StepPatternDoc,
        operations: Mapping[str, Operation],
        failures: Mapping[str, Failure],
    ) -> StepPattern:
        scope: dict[str, Symbol] = {}
        if doc.op is not None:
            op = operations.get(doc.op)
            if op is None:
                raise self.fail(f"{where}.op", f"unknown operation {doc.op!r}")
            scope.update({a: Symbol(a, "fact", t) for a, t in op.args})
            if doc.raise_ is None:
                scope.update({f.name: Symbol(f.name, "fact", f.domain.type) for f in op.facts})
            elif doc.raise_ not in op.raises:
                raise self.fail(f"{where}.raise", f"{doc.op} does not raise {doc.raise_!r}")
        if doc.raise_ is not None:
            failure = failures.get(doc.raise_)
            if failure is None:
                raise self.fail(f"{where}.raise", f"unknown failure {doc.raise_!r}")
            scope.update({f.name: Symbol(f.name, "fact", f.domain.type) for f in failure.fields})
        when = self.expr(f"{where}.when", doc.when, scope, BOOL)
        return StepPattern(doc.op, doc.raise_, when)

    def build_report(
        self,
        state_scope: Scope,
        operations: Mapping[str, Operation],
        terminals: Mapping[str, str],
        variables: tuple[Variable, ...],
        params: tuple[Parameter, ...],
    ) -> tuple[ReportRule, ...]:
        scope = dict(report_scope(state_scope, operations, terminals))
        out = []
        for i, r in enumerate(self.doc.report):
            where = f"report[{i}]"
            when = self.expr(f"{where}.when", r.when, scope, BOOL)
            for name in _PLACEHOLDER.findall(r.line):
                if name not in scope:
                    raise self.fail(
                        f"{where}.line", f"placeholder {{{name}}} names nothing; known: {sorted(scope)}"
                    )
            out.append(ReportRule(when, r.line))
        return tuple(out)


def report_scope(
    state_scope: Scope, operations: Mapping[str, Operation], terminals: Mapping[str, str]
) -> dict[str, Symbol]:
    """Names a report rule may read: state, `terminal`, and `<op>_calls` counts."""
    scope = dict(state_scope)
    scope[TERMINAL_ENUM] = Symbol(TERMINAL_ENUM, "meta", EnumType(TERMINAL_ENUM, tuple(terminals)))
    for op in operations:
        name = op_calls_name(op)
        scope[name] = Symbol(name, "meta", INT)
    return scope


def check_conforms(value: object, type_: Type) -> bool:
    return conforms(value, type_)
