"""Deterministic, total guards: proved with z3 for every parameter value.

At every location the guards of the outgoing transitions must exclude each other
(else the table is nondeterministic) and cover every case (else a run gets stuck).
The runtime catches both only on the states a run happens to visit; this check
covers all of them, so the loader rejects such a table before anything runs.

The cases checked are every valuation of the parameters within their declared
domains, of the facts readable at the location within their declared domains, and
of the variables within their types, restricted by one assumption, proved here: an
int variable is >= 0 if that is provably kept by the table (its initial value is >= 0
and every update keeps it so) -- counters, typically. The table's lemmas are not
assumed: they are the table's own word until `turnbound prove` proves them, and a
false lemma (`false`, say) would otherwise make every guard pass this check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

import z3
from turnbound.reference.errors import TableError
from turnbound.reference.expr import Expr, refs, render
from turnbound.reference.expr_z3 import const, decode, domain_constraint, to_z3, type_constraint
from turnbound.reference.proved import mark_guards_proved
from turnbound.reference.readable import readable_facts, table_entering
from turnbound.reference.table import Table, Transition, ValueSpec
from turnbound.reference.types import INT, IntType, Value

QUERY_TIMEOUT_MS = 10_000

FactSpecs = Mapping[str, tuple[ValueSpec, ...]]
"""A readable fact's name to its specs, one per kind of entering edge (their domains may differ)."""


def available_facts(table: Table) -> dict[str, dict[str, tuple[ValueSpec, ...]]]:
    """The facts readable at each place (`turnbound.reference.readable`, the loader's rule)."""
    return readable_facts(table.initial, table_entering(table))


def in_some_domain(term: z3.ExprRef, specs: tuple[ValueSpec, ...]) -> z3.BoolRef:
    return z3.Or(*[domain_constraint(term, s.domain) for s in specs])


@dataclass(frozen=True)
class GuardProblem:
    """Two transitions enabled at once, or none, at a location: with a valuation where it happens."""

    location: str
    kind: Literal["overlap", "uncovered"]
    transitions: tuple[str, ...]
    guards: tuple[str, ...]
    witness: tuple[tuple[str, Value], ...]

    def message(self) -> str:
        at = ", ".join(f"{k}={_text(v)}" for k, v in self.witness) or "every state"
        if self.kind == "overlap":
            a, b = self.transitions
            return (
                f"guards of transitions {a!r} and {b!r} overlap: both `{self.guards[0]}` and "
                f"`{self.guards[1]}` hold at {at}; make them exclusive (the table must be deterministic)"
            )
        listed = "; ".join(f"{t}: `{g}`" for t, g in zip(self.transitions, self.guards, strict=True))
        return (
            f"no outgoing transition is enabled at {at} (guards: {listed}); "
            "add a transition or widen a guard so every case is covered"
        )


def _text(v: Value) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class _Names:
    """z3 constants for one location's view: parameters, variables and its readable facts."""

    def __init__(self, table: Table, facts: FactSpecs, prefix: str = "") -> None:
        self.params = {p.name: z3.Int(f"{prefix}{p.name}") for p in table.parameters}
        self.vars = {v.name: const(f"{prefix}{v.name}", v.type) for v in table.variables}
        self.facts = {n: const(f"{prefix}fact:{n}", s[0].domain.type) for n, s in facts.items()}

    def env(self) -> dict[str, z3.ExprRef]:
        return {**self.params, **self.vars, **self.facts}


def parameter_domains(table: Table, params: Mapping[str, z3.ExprRef]) -> list[z3.BoolRef]:
    out = []
    for p in table.parameters:
        out.append(params[p.name] >= p.min)
        if p.max is not None:
            out.append(params[p.name] <= p.max)
    return out


def _solver() -> z3.Solver:
    s = z3.SimpleSolver()
    s.set("timeout", QUERY_TIMEOUT_MS)
    return s


def nonnegative_variables(table: Table) -> tuple[str, ...]:
    """Int variables that provably never go below zero (the greatest set that keeps itself so)."""
    facts = available_facts(table)
    kept = {v.name for v in table.variables if isinstance(v.type, IntType)}
    while kept:
        broken = _broken_nonnegative(table, kept, facts)
        if not broken:
            break
        kept -= broken
    return tuple(v.name for v in table.variables if v.name in kept)


def _broken_nonnegative(table: Table, assumed: set[str], facts: Mapping[str, FactSpecs]) -> set[str]:
    """The assumed-nonnegative variables that an initial value or one update can make negative.

    One query covers every update: each transition reads its own copy of the facts, and
    the model names the (transition, variable) pairs that went negative.
    """
    names = _Names(table, {})
    s = _solver()
    s.add(*parameter_domains(table, names.params))
    inits = {v.name: to_z3(v.init, names.params) for v in table.variables if v.name in assumed}
    broken = _negative_in_model(s, inits)
    pre = _Names(table, {}, "pre:")
    s = _solver()
    s.add(*parameter_domains(table, pre.params))
    s.add(*[pre.vars[v] >= 0 for v in assumed])
    s.add(*[type_constraint(pre.vars[v.name], v.type) for v in table.variables])
    negative: dict[str, z3.BoolRef] = {}
    for i, t in enumerate(table.transitions):
        updates = [(v, e) for v, e in t.updates if v in assumed and v not in broken]
        if not updates:
            continue
        env: dict[str, z3.ExprRef] = {**pre.params, **pre.vars}
        taken = [z3.Bool(f"taken:{i}")]
        for n, specs in facts.get(t.source, {}).items():
            env[n] = const(f"pre:{i}:{n}", specs[0].domain.type)
            taken.append(in_some_domain(env[n], specs))
        taken.append(to_z3(t.guard, env))
        if t.op is not None:
            for f in table.operations[t.op].facts:
                env[f.name] = const(f"post:{i}:{f.name}", f.domain.type)
                taken.append(domain_constraint(env[f.name], f.domain))
        s.add(z3.Implies(taken[0], z3.And(*taken[1:])))
        for v, e in updates:
            negative[f"{i}:{v}"] = z3.And(taken[0], to_z3(e, env) < 0)
    return broken | {key.split(":", 1)[1] for key in _true_in_model(s, negative)}


def _true_in_model(s: z3.Solver, conditions: Mapping[str, z3.BoolRef]) -> set[str]:
    """The names whose condition a model of `s` plus any one of them satisfies (all if undecided)."""
    if not conditions:
        return set()
    s.add(z3.Or(*conditions.values()))
    verdict = s.check()
    if verdict == z3.unsat:
        return set()
    if verdict != z3.sat:
        return set(conditions)
    model = s.model()
    return {n for n, c in conditions.items() if z3.is_true(model.eval(c, model_completion=True))}


def _negative_in_model(s: z3.Solver, terms: Mapping[str, z3.ExprRef]) -> set[str]:
    """The names whose term can be negative (an undecided query counts as negative: no assumption)."""
    if not terms:
        return set()
    s.add(z3.Or(*[t < 0 for t in terms.values()]))
    verdict = s.check()
    if verdict == z3.unsat:
        return set()
    if verdict != z3.sat:
        return set(terms)
    model = s.model()
    return {n for n, t in terms.items() if z3.is_true(model.eval(t < 0, model_completion=True))}


def _witness(
    model: z3.ModelRef, names: _Names, table: Table, read: set[str], facts: FactSpecs
) -> tuple[tuple[str, Value], ...]:
    out: list[tuple[str, Value]] = []
    for p in table.parameters:
        if p.name in read:
            out.append((p.name, decode(model.eval(names.params[p.name], model_completion=True), INT)))
    for v in table.variables:
        if v.name in read:
            out.append((v.name, decode(model.eval(names.vars[v.name], model_completion=True), v.type)))
    for n, specs in facts.items():
        if n in read:
            out.append((n, decode(model.eval(names.facts[n], model_completion=True), specs[0].domain.type)))
    return tuple(out)


def _undecided(table: Table, location: str, what: str, reason: str) -> TableError:
    return TableError(
        table.source,
        f"location {location!r}",
        f"z3 could not decide whether {what} ({reason}); simplify the guards (linear integer arithmetic)",
    )


def _location_problem(s: z3.Solver, table: Table, location: str, facts: FactSpecs) -> GuardProblem | None:
    """Overlap, then gap, at one location; `s` holds what every location assumes."""
    outgoing: tuple[Transition, ...] = table.outgoing.get(location, ())
    if not outgoing:
        return None
    names = _Names(table, facts)
    env = names.env()
    guards = [to_z3(t.guard, env) for t in outgoing]
    read = set().union(*(_names(t.guard) for t in outgoing))
    s.push()
    s.add(*[in_some_domain(names.facts[n], specs) for n, specs in facts.items()])
    try:
        s.push()
        s.add(z3.PbGe([(g, 1) for g in guards], 2))
        verdict = s.check()
        if verdict == z3.sat:
            model = s.model()
            on = [i for i, g in enumerate(guards) if z3.is_true(model.eval(g, model_completion=True))]
            a, b = outgoing[on[0]], outgoing[on[1]]
            witness = _witness(model, names, table, read, facts)
            return GuardProblem(
                location, "overlap", (a.id, b.id), (render(a.guard), render(b.guard)), witness
            )
        if verdict != z3.unsat:
            raise _undecided(table, location, "two guards overlap", s.reason_unknown())
        s.pop()
        s.add(*[z3.Not(g) for g in guards])
        verdict = s.check()
        if verdict == z3.sat:
            ids = tuple(t.id for t in outgoing)
            texts = tuple(render(t.guard) for t in outgoing)
            return GuardProblem(
                location, "uncovered", ids, texts, _witness(s.model(), names, table, read, facts)
            )
        if verdict != z3.unsat:
            raise _undecided(table, location, "the guards cover every case", s.reason_unknown())
        return None
    finally:
        s.pop()


def _names(node: Expr) -> set[str]:
    return {r.name for r in refs(node)}


def guard_problems(table: Table) -> list[GuardProblem]:
    """Every location's first overlap or gap, in declaration order (empty: well formed)."""
    facts = available_facts(table)
    names = _Names(table, {})
    s = _solver()
    s.add(*parameter_domains(table, names.params))
    s.add(*[type_constraint(names.vars[v.name], v.type) for v in table.variables])
    s.add(*[names.vars[v] >= 0 for v in nonnegative_variables(table)])
    out = []
    for location in table.locations:
        problem = _location_problem(s, table, location, facts.get(location, {}))
        if problem is not None:
            out.append(problem)
    return out


_CHECKED: dict[str, tuple[GuardProblem, ...]] = {}
_ENABLED: ContextVar[bool] = ContextVar("turnbound_wellformed_enabled", default=True)


def _key(table: Table) -> str:
    """What the check reads, canonically (a mutant with the same digest text but other guards differs)."""
    parts = (
        table.initial,
        [(p.name, p.min, p.max) for p in table.parameters],
        [(v.name, str(v.type), render(v.init)) for v in table.variables],
        [(o.name, [(f.name, f.domain) for f in o.facts]) for o in table.operations.values()],
        [(f.name, [(x.name, x.domain) for x in f.fields]) for f in table.failures.values()],
        list(table.locations),
        [
            (
                t.id,
                t.source,
                t.target,
                render(t.guard),
                t.op,
                [(v, render(e)) for v, e in t.updates],
                sorted(t.on_raise.items()),
            )
            for t in table.transitions
        ],
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def check_wellformed(table: Table) -> None:
    """Raise a one-line `TableError` for the first location whose guards overlap or leave a gap."""
    if not _ENABLED.get():
        return
    key = _key(table)
    problems = _CHECKED.get(key)
    if problems is None:
        problems = tuple(guard_problems(table))
        _CHECKED[key] = problems
    if problems:
        first = problems[0]
        raise TableError(table.source, f"location {first.location!r}", first.message())
    mark_guards_proved(table)


@contextmanager
def unchecked() -> Iterator[None]:
    """Load tables without this check: for tests of the runtime's own stuck/nondeterminism errors."""
    token = _ENABLED.set(False)
    try:
        yield
    finally:
        _ENABLED.reset(token)
