"""A table's transition relation in z3, with the parameters left symbolic.

A frame is one copy of the state: the control place (a location or a terminal, as an
Int index), the variables, the last host facts and one ghost monitor per trace
property. Facts are state because guards read them at the place a host call leads
to; an edge that does not provide a fact leaves it arbitrary within the union of its
declared domains (nothing reads it there). Every transition contributes one edge
per outcome kind: internal, success (facts in their domains, updates applied
simultaneously, reading the new facts) and each failure its operation may raise
(the raise target, variables unchanged). Terminals have no edges. Contract
violations are not encoded: they end a run at `contract_violation` with the
variables a reachable state already had.

Ghost monitors follow `turnbound.reference.monitors` step for step: an `at_most`
property counts its operation's calls, a `never_after` property is idle (0), armed
(1) or violated (2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import z3
from turnbound.reference.expr import Expr, refs
from turnbound.reference.expr_z3 import const, decode, domain_constraint, to_z3, type_constraint
from turnbound.reference.monitors import ARMED, IDLE, VIOLATED
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import ANY_OP, Table, TraceProperty, Transition, ValueSpec
from turnbound.reference.types import INT, Type, Value
from turnbound.reference.wellformed import available_facts

FactKey = tuple[str, str]
"""A fact or failure field by name and type (two operations may share a fact name)."""


def fact_key(name: str, type_: Type) -> FactKey:
    return (name, str(type_))


@dataclass(frozen=True)
class SymbolicEdge:
    """One way a transition can fire: internally, with facts, or with one failure."""

    index: int
    transition: Transition
    kind: Literal["internal", "success", "raise"]
    error: str | None
    target: str

    def describe(self) -> str:
        t = self.transition
        if self.kind == "internal":
            return f"{t.id} (internal) -> {self.target}"
        if self.kind == "success":
            return f"{t.id} ({t.op} answers) -> {self.target}"
        return f"{t.id} ({t.op} raises {self.error}) -> {self.target}"


@dataclass(frozen=True)
class Frame:
    """z3 constants for one state, and for the edge that leaves it (if a step follows)."""

    place: z3.ArithRef
    vars: Mapping[str, z3.ExprRef]
    facts: Mapping[FactKey, z3.ExprRef]
    ghosts: tuple[z3.ArithRef, ...]
    choice: z3.ArithRef


@dataclass(frozen=True)
class _Effects:
    """What one edge requires of f and the facts it returns, and the values it changes."""

    enabled: z3.BoolRef
    facts_ok: z3.BoolRef
    values: dict[str, z3.ExprRef]
    ghosts: dict[int, z3.ExprRef]


@dataclass(frozen=True)
class StateValues:
    """A frame read from a model."""

    place: str
    vars: dict[str, Value]
    facts: dict[str, Value]
    ghosts: tuple[int, ...]


@dataclass(frozen=True)
class SymbolicRun:
    """A run in the encoding's terms: parameters, states and the edges between them (read from a z3
    model, or found by the explicit search), with what the host returned on each edge; the
    interpreter's replay of it is a `witness.ConcreteRun`."""

    params: dict[str, int]
    states: list[StateValues]
    edges: list[SymbolicEdge]
    outcomes: list[dict[str, Value]]

    def script(self) -> dict[str, list[Outcome]]:
        queues: dict[str, list[Outcome]] = {}
        for e, values in zip(self.edges, self.outcomes, strict=True):
            op = e.transition.op
            if e.kind == "internal" or op is None:
                continue
            if e.kind == "success":
                outcome = Outcome(facts=dict(values))
            else:
                outcome = Outcome.of_raise(e.error or "", **values)
            queues.setdefault(op, []).append(outcome)
        return queues


class Encoding:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.places: tuple[str, ...] = (*table.locations, *table.terminals)
        self.place_index = {p: i for i, p in enumerate(self.places)}
        self.params: dict[str, z3.ArithRef] = {p.name: z3.Int(f"param:{p.name}") for p in table.parameters}
        self.fact_specs: dict[FactKey, list[ValueSpec]] = {}
        for spec in [f for o in table.operations.values() for f in o.facts] + [
            f for x in table.failures.values() for f in x.fields
        ]:
            self.fact_specs.setdefault(fact_key(spec.name, spec.domain.type), []).append(spec)
        self.readable: dict[str, dict[str, FactKey]] = {
            place: {n: fact_key(n, specs[0].domain.type) for n, specs in facts.items()}
            for place, facts in available_facts(table).items()
        }
        self.properties: tuple[TraceProperty, ...] = table.trace_properties
        self.var_types: dict[str, Type] = {v.name: v.type for v in table.variables}
        self.edges = tuple(self._edges())
        self._frames = 0
        self.pattern = (self.frame("pattern:a"), self.frame("pattern:b"))
        """Two frames that templates are built on once, then renamed onto fresh frames (much faster)."""
        self._step = self._step_on(*self.pattern)
        self._typing = self._typing_on(self.pattern[0])

    def _edges(self) -> list[SymbolicEdge]:
        out: list[SymbolicEdge] = []
        for t in self.table.transitions:
            if t.op is None:
                out.append(SymbolicEdge(len(out), t, "internal", None, t.target))
                continue
            out.append(SymbolicEdge(len(out), t, "success", None, t.target))
            for err in self.table.operations[t.op].raises:
                out.append(SymbolicEdge(len(out), t, "raise", err, t.on_raise[err]))
        return out

    # -- frames ------------------------------------------------------------

    def frame(self, tag: str | None = None) -> Frame:
        """Fresh constants for one state (names carry the tag, for readable models)."""
        if tag is None:
            tag = f"s{self._frames}"
            self._frames += 1
        return Frame(
            place=z3.Int(f"{tag}:place"),
            vars={v.name: const(f"{tag}:{v.name}", v.type) for v in self.table.variables},
            facts={
                k: const(f"{tag}:fact:{k[0]}:{k[1]}", specs[0].domain.type)
                for k, specs in self.fact_specs.items()
            },
            ghosts=tuple(z3.Int(f"{tag}:ghost:{p.name}") for p in self.properties),
            choice=z3.Int(f"{tag}:edge"),
        )

    @staticmethod
    def constants(f: Frame) -> list[z3.ExprRef]:
        return [f.place, *f.vars.values(), *f.facts.values(), *f.ghosts, f.choice]

    def rename(self, template: z3.ExprRef, *frames: Frame) -> z3.ExprRef:
        """A term built on the pattern frames, moved onto the given frames."""
        pairs = [
            (a, b)
            for pattern, f in zip(self.pattern, frames, strict=False)
            for a, b in zip(self.constants(pattern), self.constants(f), strict=True)
        ]
        return z3.substitute(template, *pairs)

    def typing(self, f: Frame) -> z3.BoolRef:
        """What every frame satisfies by construction: a known place, typed values, monitors in range."""
        return self.rename(self._typing, f)

    def _typing_on(self, f: Frame) -> z3.BoolRef:
        parts = [f.place >= 0, f.place < len(self.places)]
        parts += [type_constraint(f.vars[v.name], v.type) for v in self.table.variables]
        for key, specs in self.fact_specs.items():
            parts.append(z3.Or(*[domain_constraint(f.facts[key], s.domain) for s in specs]))
        for p, g in zip(self.properties, f.ghosts, strict=True):
            parts.append(g >= 0 if p.kind == "at_most" else z3.And(g >= IDLE, g <= VIOLATED))
        return z3.And(*parts)

    # -- parameters ----------------------------------------------------------

    def parameter_domain(self) -> z3.BoolRef:
        """The declared domains only: a proof under this covers every budget value."""
        parts = []
        for p in self.table.parameters:
            parts.append(self.params[p.name] >= p.min)
            if p.max is not None:
                parts.append(self.params[p.name] <= p.max)
        return z3.And(*parts)

    def parameter_ranges(self) -> z3.BoolRef:
        """The default explore ranges (where the explorer looks)."""
        return z3.And(
            *[
                z3.And(self.params[p.name] >= p.range[0], self.params[p.name] <= p.range[1])
                for p in self.table.parameters
            ]
        )

    def parameter_values(self, values: Mapping[str, int]) -> z3.BoolRef:
        return z3.And(*[self.params[n] == v for n, v in values.items()])

    # -- places and expressions ----------------------------------------------

    def at(self, f: Frame, place: str) -> z3.BoolRef:
        return f.place == self.place_index[place]

    def terminal(self, f: Frame, only: tuple[str, ...] | None = None) -> z3.BoolRef:
        """At a terminal (one of `only`, if given: a bound's `at`)."""
        return z3.Or(*[self.at(f, t) for t in (self.table.terminals if only is None else only)])

    def term(self, expr: Expr, f: Frame, facts: Mapping[FactKey, z3.ExprRef] | None = None) -> z3.ExprRef:
        """An expression over parameters, variables and facts, read in a frame (or with given facts)."""
        env: dict[str, z3.ExprRef] = {**self.params, **f.vars}
        source = f.facts if facts is None else facts
        for r in refs(expr):
            if r.kind == "fact":
                env[r.name] = source[fact_key(r.name, r.type)]
        return to_z3(expr, env)

    # -- the initial state and the steps ---------------------------------------

    def initial(self, f: Frame) -> z3.BoolRef:
        parts = [self.at(f, self.table.initial)]
        parts += [f.vars[v.name] == to_z3(v.init, self.params) for v in self.table.variables]
        parts += [g == 0 for g in f.ghosts]
        return z3.And(*parts)

    def step(self, f: Frame, g: Frame) -> z3.BoolRef:
        """One edge from f to g, the one `f.choice` names."""
        return self.rename(self._step, f, g)

    def _step_on(self, f: Frame, g: Frame) -> z3.BoolRef:
        """Next-state functions of the chosen edge: each variable is an if-then-else over the
        edges that change it, which solves far faster than a disjunction of whole frames."""
        effects = [self._effects(e, f, g) for e in self.edges]
        parts = [f.choice >= 0, f.choice < len(self.edges)]
        for e, x in zip(self.edges, effects, strict=True):
            parts.append(z3.Implies(f.choice == e.index, z3.And(x.enabled, x.facts_ok)))
        parts.append(
            g.place == self._chain(f, [(e, z3.IntVal(self.place_index[e.target])) for e in self.edges])
        )
        for name in f.vars:
            changes = [
                (e, x.values[name]) for e, x in zip(self.edges, effects, strict=True) if name in x.values
            ]
            parts.append(g.vars[name] == self._chain(f, changes, f.vars[name]))
        for i, before in enumerate(f.ghosts):
            changes = [(e, x.ghosts[i]) for e, x in zip(self.edges, effects, strict=True) if i in x.ghosts]
            parts.append(g.ghosts[i] == self._chain(f, changes, before))
        return z3.And(*parts)

    @staticmethod
    def _chain(
        f: Frame, cases: list[tuple[SymbolicEdge, z3.ExprRef]], default: z3.ExprRef | None = None
    ) -> z3.ExprRef:
        if default is None:  # every edge has a case: the last one needs no test
            *cases, (_, term) = cases
        else:
            term = default
        for e, value in reversed(cases):
            term = z3.If(f.choice == e.index, value, term)
        return term

    def edge(self, e: SymbolicEdge, f: Frame, g: Frame) -> z3.BoolRef:
        """Exactly this edge from f to g (the step relation is the choice among them)."""
        x = self._effects(e, f, g)
        parts = [x.enabled, x.facts_ok, self.at(g, e.target)]
        parts += [g.vars[n] == x.values.get(n, f.vars[n]) for n in f.vars]
        parts += [g.ghosts[i] == x.ghosts.get(i, f.ghosts[i]) for i in range(len(f.ghosts))]
        return z3.And(*parts)

    def _effects(self, e: SymbolicEdge, f: Frame, g: Frame) -> _Effects:
        t = e.transition
        enabled = z3.And(self.at(f, t.source), self.term(t.guard, f))
        if e.kind == "internal":
            return _Effects(enabled, z3.BoolVal(True), self._assign(t, f, f.facts), {})
        assert t.op is not None
        specs = (
            self.table.operations[t.op].facts
            if e.kind == "success"
            else self.table.failures[e.error or ""].fields
        )
        facts_ok = z3.And(
            *[domain_constraint(g.facts[fact_key(s.name, s.domain.type)], s.domain) for s in specs]
        )
        if e.kind == "success":
            values = self._assign(t, f, g.facts)
        else:  # a raise keeps the state but for the ghost updates it names
            ups = t.raise_updates.get(e.error or "", ())
            values = {name: self.term(expr, f, g.facts) for name, expr in ups}
        args = {name: self.term(expr, f) for name, expr in t.args}
        outcome = {s.name: g.facts[fact_key(s.name, s.domain.type)] for s in specs}
        ghosts = {}
        for i, (p, before) in enumerate(zip(self.properties, f.ghosts, strict=True)):
            after = self._monitor(p, before, t.op, e.error, args, outcome)
            if not after.eq(before):
                ghosts[i] = after
        return _Effects(enabled, facts_ok, values, ghosts)

    def _assign(self, t: Transition, f: Frame, facts: Mapping[FactKey, z3.ExprRef]) -> dict[str, z3.ExprRef]:
        """Simultaneous updates: every right side reads the pre-state (and the facts given)."""
        return {name: self.term(expr, f, facts) for name, expr in t.updates}

    def _monitor(
        self,
        p: TraceProperty,
        state: z3.ArithRef,
        op: str,
        error: str | None,
        args: Mapping[str, z3.ExprRef],
        outcome: Mapping[str, z3.ExprRef],
    ) -> z3.ArithRef:
        """The monitor after one host call (as `Monitors.step`)."""
        if p.kind == "at_most":
            return state + 1 if op == p.op else state
        assert p.after is not None
        pattern = p.after
        if (pattern.op is not None and pattern.op != op) or pattern.raise_ != error:
            matched: z3.BoolRef = z3.BoolVal(False)
        else:
            matched = to_z3(pattern.when, {**args, **outcome})
        forbidden = p.forbid == ANY_OP or p.forbid == op
        keep = z3.BoolVal(p.within == "rest")
        armed = z3.If(z3.Or(matched, z3.And(state == ARMED, keep)), ARMED, IDLE)
        if forbidden:
            armed = z3.If(state == ARMED, VIOLATED, armed)
        return z3.If(state == VIOLATED, VIOLATED, armed)

    def property_ok(self, index: int, f: Frame) -> z3.BoolRef:
        p = self.properties[index]
        g = f.ghosts[index]
        return g <= p.limit if p.kind == "at_most" else g != VIOLATED

    def outcome_specs(self, e: SymbolicEdge) -> tuple[ValueSpec, ...]:
        """The facts (or failure fields) the host returns on this edge."""
        op = e.transition.op
        if e.kind == "internal" or op is None:
            return ()
        return (
            self.table.operations[op].facts
            if e.kind == "success"
            else self.table.failures[e.error or ""].fields
        )

    def fact_type(self, e: SymbolicEdge, name: str) -> Type:
        return next(s.domain.type for s in self.outcome_specs(e) if s.name == name)

    def fact_term(self, g: Frame, e: SymbolicEdge, name: str) -> z3.ExprRef:
        """The frame's constant for a fact the edge into it returned."""
        return g.facts[fact_key(name, self.fact_type(e, name))]

    # -- reading models -----------------------------------------------------------

    def read(self, model: z3.ModelRef, f: Frame) -> StateValues:
        place = self.places[_int(model, f.place)]
        values = {
            v.name: decode(model.eval(f.vars[v.name], model_completion=True), v.type)
            for v in self.table.variables
        }
        facts = {
            name: decode(model.eval(f.facts[key], model_completion=True), self.fact_specs[key][0].domain.type)
            for name, key in self.readable.get(place, {}).items()
        }
        ghosts = tuple(_int(model, g) for g in f.ghosts)
        return StateValues(place, values, facts, ghosts)

    def read_params(self, model: z3.ModelRef) -> dict[str, int]:
        return {n: int(decode(model.eval(t, model_completion=True), INT)) for n, t in self.params.items()}

    def read_edge(self, model: z3.ModelRef, f: Frame) -> SymbolicEdge:
        return self.edges[_int(model, f.choice)]

    def read_outcome(self, model: z3.ModelRef, e: SymbolicEdge, g: Frame) -> dict[str, Value]:
        """The facts (or failure fields) the host returned on edge e, read in the frame it led to."""
        return {
            s.name: decode(model.eval(self.fact_term(g, e, s.name), model_completion=True), s.domain.type)
            for s in self.outcome_specs(e)
        }


def _int(model: z3.ModelRef, term: z3.ExprRef) -> int:
    return int(model.eval(term, model_completion=True).as_long())
