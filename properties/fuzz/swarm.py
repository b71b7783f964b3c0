"""Swarm-style host outcomes: each Hypothesis example draws which outcome kinds it will use.

Drawing every fact independently at every call makes rare paths vanishingly rare
(six rounds in a row with tools is 1 in 64; an abort among 67 call_round outcomes
is 1 in 67). A swarm (Groce et al., "Swarm Testing", ISSTA 2012) pins some facts
for a whole example and gives each failure its own rate, so some examples always
have tools, some abort often, some never fail. Everything shrinks toward "nothing
pinned, no failures": a shrunk counterexample uses only the features it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from math import prod

from hypothesis import strategies as st
from turnbound.reference.errors import DefinitionError
from turnbound.reference.machine import Machine, check_params
from turnbound.reference.outcomes import Outcome, contract_violation
from turnbound.reference.table import Table
from turnbound.reference.types import IntType, Value

FACTS = "facts"
"""The outcome kind of a normal reply; the other kinds are failure names and `contract`."""
CONTRACT = "contract"
"""The outcome kind of a deliberately out-of-contract reply (the implementation must reject it)."""

KIND_SLOTS = 64
SLOTS_PER_WEIGHT = 4
FAILURE_WEIGHTS = (0, 1, 3)
"""A failure's weight for one example: off, 4 in 64 calls, or 12 in 64 calls that may raise it."""
CONTRACT_WEIGHTS = (0, 0, 0, 1)

ParamChoice = int | Sequence[int]


@dataclass(frozen=True)
class Swarm:
    """One example's outcome plan: pinned fact values, failure and contract-probe weights."""

    pinned: tuple[tuple[str, str, Value], ...]
    """(operation, fact, value) held for the whole example."""
    failures: tuple[tuple[str, int], ...]
    """Each failure's weight (FAILURE_WEIGHTS); 0 disables it."""
    field_pins: tuple[tuple[str, str, Value], ...]
    """(failure, field, value) held for the whole example."""
    contract: int

    def __repr__(self) -> str:
        pins = ", ".join(f"{op}.{f}={_text(v)}" for op, f, v in self.pinned) or "none"
        fails = ", ".join(f"{n}={w}" for n, w in self.failures) or "none"
        fields = "".join(f", {n}.{f}={_text(v)}" for n, f, v in self.field_pins)
        return f"Swarm(pinned: {pins}; failures: {fails}{fields}; contract={self.contract})"


def _text(value: Value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class _OpDomain:
    facts: tuple[tuple[str, tuple[Value, ...]], ...]
    raises: tuple[str, ...]
    by_facts: Mapping[tuple[Value, ...], Outcome]
    by_raise: Mapping[tuple[str, tuple[Value, ...]], Outcome]
    probes: tuple[Outcome, ...]


class OutcomeDomains:
    """Every operation's finite outcome domain (`Machine.outcomes`), indexed for cheap drawing."""

    def __init__(self, table: Table) -> None:
        self.table = table
        machine = Machine(table)
        self.fields = {
            name: tuple((f.name, tuple(f.domain.values())) for f in failure.fields)
            for name, failure in table.failures.items()
        }
        self.ops: dict[str, _OpDomain] = {}
        for name, op in table.operations.items():
            facts = tuple((f.name, tuple(f.domain.values())) for f in op.facts)
            by_facts: dict[tuple[Value, ...], Outcome] = {}
            by_raise: dict[tuple[str, tuple[Value, ...]], Outcome] = {}
            for outcome in machine.outcomes(name):
                if outcome.raise_ is None:
                    assert outcome.facts is not None
                    by_facts[tuple(outcome.facts[f] for f, _ in facts)] = outcome
                else:
                    key = tuple(outcome.fields[f] for f, _ in self.fields[outcome.raise_])
                    by_raise[(outcome.raise_, key)] = outcome
            self.ops[name] = _OpDomain(facts, op.raises, by_facts, by_raise, self._probes(name, facts))
        sizes = [len(d.by_facts) for d in self.ops.values()] + [len(d.probes) for d in self.ops.values()]
        sizes += [prod(len(values) for _, values in fields) for fields in self.fields.values()]
        self.uniform = max(64 * KIND_SLOTS, *sizes)
        """Every draw of a reply is an integer in this one range, reduced modulo what it picks
        from: when a shrink changes the path, later replies still read valid choices."""

    def _probes(self, op: str, facts: tuple[tuple[str, tuple[Value, ...]], ...]) -> tuple[Outcome, ...]:
        """Replies just outside the contract: an integer one past its range, a required fact left out."""
        base = {f: values[0] for f, values in facts}
        candidates: list[Outcome] = []
        for spec in self.table.operations[op].facts:
            if isinstance(spec.domain.type, IntType):
                candidates.append(Outcome(facts={**base, spec.name: spec.domain.hi + 1}))
            if spec.required:
                candidates.append(Outcome(facts={k: v for k, v in base.items() if k != spec.name}))
        operation = self.table.operations[op]
        return tuple(o for o in candidates if contract_violation(self.table, operation, o))

    def first(self, op: str) -> Outcome:
        """The simplest outcome (every fact at its first value), used to finish a cut-off run."""
        d = self.ops[op]
        return d.by_facts[tuple(values[0] for _, values in d.facts)]


def swarms(domains: OutcomeDomains) -> st.SearchStrategy[Swarm]:
    """One draw per operation (pin one of its facts, or none), per failure (its weight, one pinned
    field) and for contract probes: few choices, so the shrinker has little to minimise."""
    table = domains.table
    fact_pins = [_pin_options(op, d.facts) for op, d in domains.ops.items()]
    field_pins = [_pin_options(name, fields) for name, fields in domains.fields.items()]

    @st.composite
    def draw_swarm(draw: st.DrawFn) -> Swarm:
        pinned = tuple(pin for options in fact_pins if (pin := _pin(draw, options)) is not None)
        failures = tuple((name, draw(st.sampled_from(FAILURE_WEIGHTS))) for name in table.failures)
        fields = tuple(pin for options in field_pins if (pin := _pin(draw, options)) is not None)
        return Swarm(pinned, failures, fields, draw(st.sampled_from(CONTRACT_WEIGHTS)))

    return draw_swarm()


Pin = tuple[str, str, Value]


def _pin_options(owner: str, specs: tuple[tuple[str, tuple[Value, ...]], ...]) -> tuple[Pin, ...]:
    return tuple((owner, name, v) for name, values in specs if len(values) > 1 for v in values)


def _pin(draw: st.DrawFn, options: tuple[Pin, ...]) -> Pin | None:
    """None (about half the time) or one of the options; the draw's shape depends on the table only."""
    if not options:
        return None
    free = max(2, len(options))
    code = draw(_index(free + len(options)))
    return None if code < free else options[code - free]


@dataclass(frozen=True)
class OutcomePlan:
    """How one operation's replies are drawn under a swarm."""

    op: str
    kinds: tuple[tuple[str, int], ...]
    """Failure kinds (and `contract`) with the slots of KIND_SLOTS they take, from the top down."""
    fact_pins: tuple[tuple[int, Value], ...]
    field_pins: Mapping[str, tuple[tuple[int, Value], ...]]


def plan(domains: OutcomeDomains, swarm: Swarm, op: str) -> OutcomePlan:
    d = domains.ops[op]
    weights = dict(swarm.failures)
    kinds = [(name, weights.get(name, 0) * SLOTS_PER_WEIGHT) for name in d.raises if weights.get(name, 0)]
    if d.probes and swarm.contract:
        kinds.append((CONTRACT, swarm.contract * SLOTS_PER_WEIGHT))
    return OutcomePlan(
        op,
        tuple(kinds),
        _positions(d.facts, [(f, v) for o, f, v in swarm.pinned if o == op]),
        {
            name: _positions(domains.fields[name], [(f, v) for n, f, v in swarm.field_pins if n == name])
            for name in d.raises
        },
    )


def _positions(
    specs: tuple[tuple[str, tuple[Value, ...]], ...], pins: list[tuple[str, Value]]
) -> tuple[tuple[int, Value], ...]:
    names = [name for name, _ in specs]
    return tuple((names.index(name), value) for name, value in pins)


@st.composite
def outcomes(draw: st.DrawFn, domains: OutcomeDomains, p: OutcomePlan) -> tuple[str, Outcome]:
    """One host reply under the plan, with its kind (`facts`, a failure name or `contract`).

    The shape of the draws depends on the table only, never on the swarm (a kind point,
    then one index into the full facts product, pins applied afterwards; a failure adds
    its fields' index), and every draw reads the same integer range, so when the shrinker
    unpins a fact, lowers a weight or changes the path, the rest of the example still
    lines up. Every draw shrinks toward 0: a normal reply with each fact at its first value.
    """
    d = domains.ops[p.op]
    kind = FACTS
    if d.raises or d.probes:
        point = KIND_SLOTS - 1 - draw(_index(domains.uniform)) % KIND_SLOTS
        for name, slots in p.kinds:
            if point < slots:
                kind = name
                break
            point -= slots
    facts = _pick(draw, domains.uniform, [values for _, values in d.facts], p.fact_pins)
    if kind == FACTS:
        return kind, d.by_facts[facts]
    if kind == CONTRACT:
        return kind, d.probes[draw(_index(domains.uniform)) % len(d.probes)]
    fields = _pick(draw, domains.uniform, [values for _, values in domains.fields[kind]], p.field_pins[kind])
    return kind, d.by_raise[(kind, fields)]


def _pick(
    draw: st.DrawFn, uniform: int, choices: Sequence[tuple[Value, ...]], pins: tuple[tuple[int, Value], ...]
) -> tuple[Value, ...]:
    """One value from each choice list, all from a single drawn index (mixed radix, first list slowest),
    then the pinned positions overridden."""
    size = 1
    for c in choices:
        size *= len(c)
    index = draw(_index(uniform)) % size if size > 1 else 0
    picked: list[Value] = []
    for c in reversed(choices):
        index, digit = divmod(index, len(c))
        picked.append(c[digit])
    picked.reverse()
    for i, value in pins:
        picked[i] = value
    return tuple(picked)


@cache
def _index(size: int) -> st.SearchStrategy[int]:
    return st.integers(0, size - 1)


def parameter_values(table: Table, given: Mapping[str, ParamChoice] | None) -> dict[str, tuple[int, ...]]:
    """The values each parameter is drawn from: its declared `range`, unless fixed or narrowed."""
    given = dict(given or {})
    out: dict[str, tuple[int, ...]] = {}
    for p in table.parameters:
        choice = given.pop(p.name, None)
        if choice is None:
            out[p.name] = tuple(range(p.range[0], p.range[1] + 1))
        elif isinstance(choice, int):
            out[p.name] = (choice,)
        else:
            out[p.name] = tuple(choice)
            if not out[p.name]:
                raise DefinitionError(f"{table.name}: parameter {p.name}: no values to draw from")
        for value in out[p.name]:
            check_params(table, {p.name: value})
    if given:
        unknown = sorted(given)[0]
        known = ", ".join(p.name for p in table.parameters) or "none"
        raise DefinitionError(f"{table.name}: unknown parameter {unknown!r}; parameters: {known}")
    return out


def parameters(values: Mapping[str, tuple[int, ...]]) -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries(
        {name: st.just(vs[0]) if len(vs) == 1 else st.sampled_from(vs) for name, vs in values.items()}
    )
