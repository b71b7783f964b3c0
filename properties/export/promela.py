"""A table at fixed parameter values as a Promela model, for SPIN.

SPIN is the reference explicit-state model checker; an exported model lets it search the
same state space as `turnbound explore` (and, past what Python holds, search it with
SPIN's multi-core or bitstate modes). The model is the table's small-step semantics, one
transition one atomic step, so SPIN stores exactly the states of `explore(...,
all_states=True)`: the location, the variables, the facts of the last host outcome that
something at the location reads (the rest are zeroed, as the explorer's machine forgets
them), and the trace-property monitors. With `atomic=True` each step also takes the internal
transitions that follow it (a deterministic loop inside the same `d_step`), so SPIN stores
the states the default, atomic, explorer stores: the initial state, host-call points and
terminals (and none where a claim the table expects to be violated breaks between them).

- A host call is a nondeterministic choice over every outcome of its operation's finite
  domain (facts first, then failures), in the explorer's order.
- Updates are simultaneous: every right side is computed into a temporary first. The
  temporaries and the call's arguments are locals reset to 0 before the atomic step ends,
  so they never tell two states apart.
- Invariants and lemmas are asserted after every step, bounds on entering a terminal,
  trace properties after every host call; claims the table expects to be violated are
  asserted only when named (`claim=`), so SPIN then shows their counterexample.
- Terminals are valid end states (the loop head carries an `end` label).

Names are prefixed (`v_` variables, `f_` facts, `P_` parameters, `L_` locations, `E_`
enum members, `tp_` monitors), so no table name can collide with a Promela keyword.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.machine import Machine
from turnbound.reference.outcomes import Outcome, complete
from turnbound.reference.readable import facts_read
from turnbound.reference.table import (
    ANY_OP,
    CONTRACT_VIOLATION,
    Claim,
    Table,
    TraceProperty,
    Transition,
    ValueSpec,
)
from turnbound.reference.types import BoolType, EnumType, IntType, Type, Value

_IDLE, _ARMED, _VIOLATED = 0, 1, 2
"""The explorer's encoding of an `after ... forbid` monitor (turnbound.reference.monitors)."""


class _Names:
    """Promela spellings of the table's names."""

    @staticmethod
    def ref(node: Ref) -> str:
        prefix = {"param": "P_", "var": "v_", "fact": "f_", "meta": "m_"}[node.kind]
        return prefix + node.name

    @staticmethod
    def member(enum: EnumType, member: str) -> str:
        return f"E_{enum.name}_{member}"


def _value(value: Value, type_: Type) -> str:
    if isinstance(type_, EnumType):
        return _Names.member(type_, str(value))
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def expr(node: Expr, args: frozenset[str] = frozenset()) -> str:
    """Promela text of an expression (C-like operators; `(c -> a : b)` for a conditional).

    `args` are names a trace property's `when` reads as the call's arguments (locals `a_`).
    """

    def go(n: Expr) -> str:
        if isinstance(n, Lit):
            return _value(n.value, n.type)
        if isinstance(n, Ref):
            return f"a_{n.name}" if n.name in args else _Names.ref(n)
        if isinstance(n, Not):
            return f"!({go(n.operand)})"
        if isinstance(n, Neg):
            return f"-({go(n.operand)})"
        if isinstance(n, Arith | Compare):
            return f"({go(n.left)} {n.op} {go(n.right)})"
        if isinstance(n, Logic):
            glue = " && " if n.op == "and" else " || "
            return "(" + glue.join(go(o) for o in n.operands) + ")"
        if isinstance(n, Cond):
            return f"({go(n.test)} -> {go(n.then)} : {go(n.orelse)})"
        raise DefinitionError(f"no Promela form for {n!r}")

    return go(node)


def _holding(largest: int) -> str:
    """The smallest Promela type for 0..largest: a byte wraps past 255."""
    return "byte" if largest <= 255 else "int"


def _ptype(type_: Type) -> str:
    if isinstance(type_, BoolType):
        return "bool"
    if isinstance(type_, EnumType):
        return _holding(len(type_.members) - 1)
    assert isinstance(type_, IntType)
    return "int"


class _Writer:
    def __init__(self, table: Table, params: Mapping[str, int], claim: str | None, atomic: bool) -> None:
        self.table = table
        self.machine = Machine(table, params)
        self.claim = claim
        self.atomic = atomic
        self.lines: list[str] = []
        self.places = [*table.locations, *table.terminals]
        self.read = facts_read(table)
        self.fact_types = self._fact_types()
        self.fact_sets = self._fact_sets()
        self.args = sorted({a for op in table.operations.values() for a, _ in op.args})

    # -- declarations ----------------------------------------------------------

    def _fact_types(self) -> dict[str, Type]:
        out: dict[str, Type] = {}
        specs = [f for op in self.table.operations.values() for f in op.facts]
        specs += [f for x in self.table.failures.values() for f in x.fields]
        for spec in specs:
            known = out.get(spec.name)
            out[spec.name] = spec.domain.type if known in (None, spec.domain.type) else IntType()
        return out

    def _fact_sets(self) -> dict[tuple[str, ...], int]:
        """An id per set of fact names: which facts a state holds is part of its identity."""
        sets: dict[tuple[str, ...], int] = {(): 0}
        names = [tuple(f.name for f in op.facts) for op in self.table.operations.values()]
        names += [tuple(f.name for f in x.fields) for x in self.table.failures.values()]
        for t in self.table.transitions:  # what a state keeps of them (`forget_facts`)
            if t.op is not None:
                names.append(
                    tuple(f.name for f in self.table.operations[t.op].facts if f.name in self.read[t.target])
                )
                for err, target in t.on_raise.items():
                    fields = self.table.failures[err].fields
                    names.append(tuple(f.name for f in fields if f.name in self.read[target]))
        for n in names:
            sets.setdefault(tuple(sorted(n)), len(sets))
        return sets

    def emit(self, line: str = "", indent: int = 0) -> None:
        self.lines.append("  " * indent + line if line else "")

    def header(self) -> None:
        t = self.table
        self.emit(f"/* {t.name}: {t.title} */")
        self.emit(f"/* generated by turnbound export promela; parameters: {self._params_text()} */")
        self.emit()
        for p in t.parameters:
            self.emit(f"#define P_{p.name} {self.machine.params[p.name]}")
        for enum in t.enums.values():
            for i, m in enumerate(enum.members):
                self.emit(f"#define {_Names.member(enum, m)} {i}")
        for i, place in enumerate(self.places):
            self.emit(f"#define L_{place} {i}")
        self.emit()
        initial = self.machine.initial()
        self.emit(f"{_holding(len(self.places) - 1)} loc = L_{t.initial};")
        for v, value in zip(t.variables, initial.values, strict=True):
            self.emit(f"{_ptype(v.type)} v_{v.name} = {_value(value, v.type)};")
        for name, type_ in self.fact_types.items():
            self.emit(f"{_ptype(type_)} f_{name} = 0;")
        held = _holding(len(self.fact_sets) - 1)
        self.emit(f"{held} facts_held = 0;  /* which facts the last host outcome gave (0: none) */")
        for i, prop in enumerate(t.trace_properties):
            largest = prop.limit + 1 if prop.kind == "at_most" else _VIOLATED
            self.emit(f"{_holding(largest)} tp_{i} = 0;")
        self.emit()

    def _params_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.machine.params.items()) or "none"

    # -- claims ----------------------------------------------------------------

    def _wanted(self, name: str, expect: str) -> bool:
        return name == self.claim if self.claim is not None else expect == "holds"

    def state_asserts(self, indent: int) -> None:
        for c in (*self.table.invariants, *self.table.lemmas):
            if self._wanted(c.name, c.expect):
                self.emit(f"assert({expr(c.expr)});  /* {c.kind} {c.name} */", indent)

    def initial_asserts(self, indent: int) -> None:
        """The initial state is concrete here: its claims are judged now, so SPIN stores no extra state."""
        env = self.machine.env(self.machine.initial())
        for c in (*self.table.invariants, *self.table.lemmas):
            if self._wanted(c.name, c.expect) and not compile_expr(c.expr)(env):
                self.emit(f"assert(false);  /* {c.kind} {c.name} fails in the initial state */", indent)

    def bound_asserts(self, target: str, indent: int) -> None:
        if target not in self.table.terminals or target == CONTRACT_VIOLATION:
            return
        for c in self.table.bounds:
            if c.judged_at(target) and self._wanted(c.name, c.expect):
                self.emit(f"assert({expr(c.expr)});  /* bound {c.name} */", indent)

    def monitor_steps(self, op: str, outcome: Outcome, indent: int) -> None:
        for i, p in enumerate(self.table.trace_properties):
            self._monitor(i, p, op, outcome, indent)
            if self._wanted(p.name, p.expect):
                bad = f"tp_{i} <= {p.limit}" if p.kind == "at_most" else f"tp_{i} != {_VIOLATED}"
                self.emit(f"assert({bad});  /* trace property {p.name} */", indent)

    def _monitor(self, i: int, p: TraceProperty, op: str, outcome: Outcome, indent: int) -> None:
        v = f"tp_{i}"
        if p.kind == "at_most":
            if op == p.op:
                self.emit(f"{v} = ({v} < {p.limit + 1} -> {v} + 1 : {v});", indent)
            return
        assert p.after is not None
        forbidden = p.forbid in (ANY_OP, op)
        armed = self._pattern(p, op, outcome)
        keep = " || " + f"{v} == {_ARMED}" if p.within == "rest" else ""
        arm = f"((({armed}){keep}) -> {_ARMED} : {_IDLE})"
        if forbidden:
            after = f"({v} == {_ARMED} -> {_VIOLATED} : {arm})"
            self.emit(f"{v} = ({v} == {_VIOLATED} -> {_VIOLATED} : {after});", indent)
        else:
            self.emit(f"{v} = ({v} == {_VIOLATED} -> {_VIOLATED} : {arm});", indent)

    def _pattern(self, p: TraceProperty, op: str, outcome: Outcome) -> str:
        """Whether this call matches `after`: its op and failure are static, `when` reads args and facts."""
        assert p.after is not None
        pattern = p.after
        if pattern.op is not None and pattern.op != op:
            return "0"
        if (outcome.raise_ or None) != pattern.raise_:
            return "0"
        return expr(pattern.when, frozenset(a for a, _ in self.table.operations[op].args))

    # -- transitions -----------------------------------------------------------

    def body(self) -> None:
        self.emit("active proctype turn() {")
        for a in self.args:
            self.emit(f"int a_{a} = 0;", 1)
        for v in self.table.variables:
            self.emit(f"{_ptype(v.type)} t_{v.name} = 0;", 1)
        self.initial_asserts(1)
        self.emit("end_turn:", 1)
        self.emit("do", 1)
        for t in self.table.transitions:
            self.transition(t)
        self.emit("od", 1)
        self.emit("}")

    def transition(self, t: Transition) -> None:
        """One `d_step` per edge: its first statement, the guard, decides whether it can run,
        so SPIN makes one indivisible step of it and stores no state inside."""
        guard = f"(loc == L_{t.source} && {expr(t.guard)})"
        if t.op is None:
            self.emit(f":: d_step {{ {guard};  /* {t.id} */", 1)
            self.internal_step(t, 2)
            self.internal_chain(2)
            self.emit("}", 1)
            return
        for outcome in self.machine.outcomes(t.op):
            self.outcome(t, guard, outcome)

    def outcome(self, t: Transition, guard: str, outcome: Outcome) -> None:
        assert t.op is not None
        if outcome.raise_ is not None:
            specs = self.table.failures[outcome.raise_].fields
            values = complete(specs, outcome.fields)
            target = t.on_raise[outcome.raise_]
            label = f"raise {outcome.raise_}"
        else:
            specs = self.table.operations[t.op].facts
            values = complete(specs, outcome.facts or {})
            target = t.target
            label = "result"
        shown = ", ".join(f"{k}={str(v).lower()}" for k, v in values.items())
        self.emit(f":: d_step {{ {guard};  /* {t.id}: {t.op} -> {label}{' ' + shown if shown else ''} */", 1)
        for name, e in t.args:
            self.emit(f"a_{name} = {expr(e)};", 2)
        self.clear_facts(2)
        for spec in specs:
            self.emit(f"f_{spec.name} = {_value(values[spec.name], spec.domain.type)};", 2)
        self.emit(f"facts_held = {self.fact_sets[tuple(sorted(values))]};", 2)
        if outcome.raise_ is None:
            self.updates(t, 2)
        else:
            self.updates(t, 2, t.raise_updates.get(outcome.raise_, ()))
        self.monitor_steps(t.op, outcome, 2)
        self.forget_facts(specs, target, 2)
        for name, _ in t.args:
            self.emit(f"a_{name} = 0;", 2)
        self.emit(f"loc = L_{target};", 2)
        self.state_asserts(2)
        self.bound_asserts(target, 2)
        self.internal_chain(2)
        self.emit("}", 1)

    def internal_step(self, t: Transition, indent: int) -> None:
        self.updates(t, indent)
        self.clear_facts(indent)
        self.emit(f"loc = L_{t.target};", indent)
        self.state_asserts(indent)
        self.bound_asserts(t.target, indent)

    def internal_chain(self, indent: int) -> None:
        """Atomic: the internal transitions after a step, inside its `d_step` (their guards are
        exclusive, so the loop is deterministic), until none is enabled."""
        internal = [t for t in self.table.transitions if t.op is None]
        if not self.atomic or not internal:
            return
        self.emit("do", indent)
        for t in internal:
            self.emit(f":: (loc == L_{t.source} && {expr(t.guard)}) ->  /* {t.id} */", indent)
            self.internal_step(t, indent + 1)
        self.emit(":: else -> break", indent)
        self.emit("od", indent)

    def updates(self, t: Transition, indent: int, pairs: tuple[tuple[str, Expr], ...] | None = None) -> None:
        """Simultaneous updates (the transition's own, or the ghost updates of a raise)."""
        made = t.updates if pairs is None else pairs
        for var, e in made:
            self.emit(f"t_{var} = {expr(e)};", indent)
        for var, _ in made:
            self.emit(f"v_{var} = t_{var};", indent)
            self.emit(f"t_{var} = 0;", indent)

    def forget_facts(self, specs: tuple[ValueSpec, ...], target: str, indent: int) -> None:
        """The facts nothing at `target` reads, zeroed once the call's updates and monitors have
        read them: the explorer's machine forgets them too (`Machine(forget=True)`)."""
        kept = tuple(sorted(s.name for s in specs if s.name in self.read[target]))
        if len(kept) == len(specs):
            return
        for spec in specs:
            if spec.name not in self.read[target]:
                self.emit(f"f_{spec.name} = 0;", indent)
        self.emit(f"facts_held = {self.fact_sets[kept]};", indent)

    def clear_facts(self, indent: int) -> None:
        for name in self.fact_types:
            self.emit(f"f_{name} = 0;", indent)
        self.emit("facts_held = 0;", indent)

    def text(self) -> str:
        self.header()
        self.body()
        return "\n".join(self.lines) + "\n"


def export_promela(
    table: Table, params: Mapping[str, int] | None = None, claim: str | None = None, *, atomic: bool = False
) -> str:
    """The Promela model of `table` at these parameter values (defaults for the rest); `atomic`
    as in the module docstring."""
    if claim is not None and claim not in _claim_names(table):
        known = ", ".join(_claim_names(table))
        raise DefinitionError(f"{table.name}: no claim {claim!r}; claims: {known}")
    return _Writer(table, params or {}, claim, atomic).text()


def _claim_names(table: Table) -> list[str]:
    claims: list[Claim] = [*table.invariants, *table.lemmas, *table.bounds]
    return [c.name for c in claims] + [p.name for p in table.trace_properties]
