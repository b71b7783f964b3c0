"""One table with fixed parameter values, compiled once for stepping.

The small-step semantics every engine shares: the interpreter walks one path,
the explorer every path, the Hypothesis machine a generated path. A state is a
location, the variables' values and the facts readable there: a plain tuple, so
building, hashing and comparing one costs what a tuple costs.

Compiling binds the parameters into every guard, argument and update (closures over
the typed tree, never eval), reads variables by slot and facts from one mapping per
distinct fact tuple, and checks each operation's contract with precomputed sets. A
table the loader proved deterministic (`turnbound.reference.proved`) takes the first
enabled guard; any other table evaluates every guard, so a broken one is still named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from operator import itemgetter
from typing import Any, NamedTuple

from turnbound.reference.errors import DefinitionError, Nondeterminism, StuckState, ValueTooLarge
from turnbound.reference.expr import refs
from turnbound.reference.expr_compile import Slotted, compile_expr, compile_slotted
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.proved import guards_proved
from turnbound.reference.table import CONTRACT_VIOLATION, Operation, Table, Transition, ValueSpec
from turnbound.reference.types import IntType, Value

INT_LIMIT = 2**63
"""No variable ever holds an integer beyond +-INT_LIMIT: an update that leaves it grows
without a bound (a square each step reaches a million digits in twenty steps), so the
step stops with `ValueTooLarge` instead of printing it or running out of memory."""
_INT_LIMIT_TEXT = "+-2**63"

_OUTCOME_MEMO = 4096
"""Outcomes whose contract verdict and completed facts are remembered (by identity) per machine."""


class State(NamedTuple):
    location: str
    values: tuple[Value, ...]
    facts: tuple[tuple[str, Value], ...] = ()


Facts = tuple[tuple[str, Value], ...]

_new_state = tuple.__new__
"""`State` built from one tuple without the named tuple's Python-level constructor."""


def _too_large(name: str, tid: str, v: int) -> ValueTooLarge:
    digits = len(str(abs(v))) if v.bit_length() < 10_000 else int(v.bit_length() * 0.30103) + 1
    return ValueTooLarge(name, tid, digits, _INT_LIMIT_TEXT)


@dataclass(frozen=True)
class _CompiledTransition:
    t: Transition
    guard: Slotted
    args: tuple[tuple[str, Slotted], ...]
    updates: tuple[tuple[int, Slotted], ...]
    reads_earlier_facts: bool
    int_slots: tuple[int, ...]
    """The updated variables of type int: each is checked against INT_LIMIT."""
    """A host transition whose updates read facts other than its own call's (those the
    state it leaves could read): its updates see both, the call's own facts on top."""


class _Contract:
    """One operation's contract, checked with precomputed sets; the message comes from
    `contract_violation` only when the fast check fails."""

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


def _picker(slots: tuple[int, ...]) -> Callable[[tuple[Value, ...]], tuple[Any, ...]]:
    """The values at these slots, always as a tuple."""
    if len(slots) == 1:
        only = slots[0]
        return lambda values: (values[only],)
    if not slots:
        return lambda values: ()
    return itemgetter(*slots)


def check_params(table: Table, given: Mapping[str, int]) -> dict[str, int]:
    """Defaults completed with the given values; unknown names and out-of-domain values rejected."""
    params = table.defaults()
    for name, value in given.items():
        if name not in params:
            raise DefinitionError(
                f"{table.name}: unknown parameter {name!r}; parameters: {', '.join(params) or 'none'}"
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise DefinitionError(f"{table.name}: parameter {name} must be an integer, got {value!r}")
        p = table.parameter(name)
        if not p.admits(value):
            hi = "" if p.max is None else str(p.max)
            raise DefinitionError(
                f"{table.name}: parameter {name}={value} is outside its domain {p.min}..{hi}"
            )
        params[name] = value
    return params


class Machine:
    """A table bound to parameter values, with every expression compiled once."""

    def __init__(self, table: Table, params: Mapping[str, int] | None = None) -> None:
        self.table = table
        self.params = check_params(table, params or {})
        self.var_names = tuple(v.name for v in table.variables)
        self._index = {name: i for i, name in enumerate(self.var_names)}
        self._counters = tuple((n, self._index[n]) for n in table.counters)
        self._counter_names = tuple(table.counters)
        self._counter_values = _picker(tuple(self._index[n] for n in table.counters))
        self._out: dict[str, tuple[_CompiledTransition, ...]] = {}
        """Each location's transitions, compiled when a run first reaches it (a conformance run
        builds a machine per parameter assignment and visits few locations)."""
        self._first_enabled = guards_proved(table)
        self._by_id: dict[str, _CompiledTransition] = {}
        self._raises: dict[str, dict[str, _CompiledTransition]] = {}
        self._outcomes: dict[str, tuple[Outcome, ...]] = {}
        self._env: tuple[State, dict[str, Value]] | None = None
        self._fact_maps: dict[Facts, dict[str, Value]] = {(): {}}
        self._contracts = {name: _Contract(table, op) for name, op in table.operations.items()}
        self._verdicts: dict[tuple[str, int], tuple[Outcome, str | None]] = {}
        self._completed: dict[tuple[str, int], tuple[Outcome, Facts, dict[str, Value]]] = {}

    def _compile(self, t: Transition) -> _CompiledTransition:
        slots, params = self._index, self.params
        own = {f.name for f in self.table.operations[t.op].facts} if t.op is not None else set()
        read = {r.name for _, e in t.updates for r in refs(e) if r.kind not in ("param", "var")}
        return _CompiledTransition(
            t,
            compile_slotted(t.guard, slots, params),
            tuple((a, compile_slotted(e, slots, params)) for a, e in t.args),
            tuple((slots[v], compile_slotted(e, slots, params)) for v, e in t.updates),
            t.op is not None and not read <= own,
            tuple(slots[v] for v, _ in t.updates if isinstance(self.table.variables[slots[v]].type, IntType)),
        )

    def _at(self, location: str) -> tuple[_CompiledTransition, ...]:
        compiled = tuple(self._compile(t) for t in self.table.outgoing.get(location, ()))
        self._out[location] = compiled
        self._by_id.update((c.t.id, c) for c in compiled)
        return compiled

    def _transition(self, t: Transition) -> _CompiledTransition:
        self._at(t.source)
        return self._by_id[t.id]

    def _facts(self, facts: Facts) -> dict[str, Value]:
        """One shared mapping per distinct fact tuple (read-only)."""
        found = self._fact_maps.get(facts)
        if found is None:
            if len(self._fact_maps) > _OUTCOME_MEMO:
                self._fact_maps = {(): {}}
            found = self._fact_maps[facts] = dict(facts)
        return found

    # -- states ----------------------------------------------------------

    def initial(self) -> State:
        env = dict(self.params)
        values = tuple(compile_expr(v.init)(env) for v in self.table.variables)
        return State(self.table.initial, values)

    def env(self, state: State) -> dict[str, Value]:
        """Parameters, variables and readable facts by name (shared: copy it before changing it)."""
        cached = self._env
        if cached is not None and cached[0] is state:
            return cached[1]
        env: dict[str, Value] = dict(self.params)
        env.update(zip(self.var_names, state.values, strict=True))
        env.update(state.facts)
        self._env = (state, env)
        return env

    def is_terminal(self, state: State) -> bool:
        return state.location in self.table.terminals

    def variables(self, state: State) -> dict[str, Value]:
        return dict(zip(self.var_names, state.values, strict=True))

    def counters(self, state: State) -> dict[str, int]:
        return dict(zip(self._counter_names, self._counter_values(state.values), strict=False))

    def describe(self, state: State) -> str:
        parts = [f"{k}={v}" for k, v in self.variables(state).items()] + [f"{k}={v}" for k, v in state.facts]
        return "{" + ", ".join(parts) + "}"

    # -- choosing a transition ------------------------------------------

    def select(self, state: State) -> Transition:
        """The one enabled transition; a stuck or nondeterministic state is an error naming all candidates."""
        location, values, facts = state
        candidates = self._out.get(location)
        if candidates is None:
            candidates = self._at(location)
        f = self._fact_maps.get(facts) or self._facts(facts)
        if self._first_enabled:
            for c in candidates:
                if c.guard(values, f):
                    return c.t
            raise StuckState(location, self.describe(state), [c.t.id for c in candidates])
        enabled = [c.t for c in candidates if c.guard(values, f)]
        if len(enabled) == 1:
            return enabled[0]
        if not enabled:
            raise StuckState(location, self.describe(state), [c.t.id for c in candidates])
        raise Nondeterminism(location, self.describe(state), [t.id for t in enabled])

    def args(self, state: State, t: Transition) -> dict[str, Value]:
        compiled = (self._by_id.get(t.id) or self._transition(t)).args
        if not compiled:
            return {}
        values, facts = state.values, state.facts
        f = self._fact_maps.get(facts) or self._facts(facts)
        return {name: fn(values, f) for name, fn in compiled}

    def _raise_updates(self, t: Transition) -> dict[str, _CompiledTransition]:
        """Per failure, the ghost updates a raise makes (compiled once, as a transition of their own)."""
        cached = self._raises.get(t.id)
        if cached is None:
            slots, params = self._index, self.params
            cached = {
                err: _CompiledTransition(
                    t,
                    compile_slotted(t.guard, slots, params),
                    (),
                    tuple((slots[v], compile_slotted(e, slots, params)) for v, e in ups),
                    True,
                    tuple(s for v, _ in ups if isinstance(self.table.variables[s := slots[v]].type, IntType)),
                )
                for err, ups in t.raise_updates.items()
                if ups
            }
            self._raises[t.id] = cached
        return cached

    # -- taking a transition ---------------------------------------------

    def _updated(
        self, c: _CompiledTransition, values: tuple[Value, ...], f: Mapping[str, Value]
    ) -> tuple[Value, ...]:
        if not c.updates:
            return values
        out = list(values)
        for i, fn in c.updates:  # simultaneous: every right side reads the pre-state
            out[i] = fn(values, f)
        for i in c.int_slots:
            v = out[i]
            if not -INT_LIMIT <= v <= INT_LIMIT:  # type: ignore[operator]
                raise _too_large(self.var_names[i], c.t.id, v)  # type: ignore[arg-type]
        return tuple(out)

    def take_internal(self, state: State, t: Transition) -> State:
        c = self._by_id.get(t.id) or self._transition(t)
        return _new_state(State, (t.target, self._updated(c, state.values, self._facts(state.facts)), ()))

    def violation(self, t: Transition, outcome: Outcome) -> str | None:
        assert t.op is not None
        key = (t.op, id(outcome))
        found = self._verdicts.get(key)
        if found is not None and found[0] is outcome:
            return found[1]
        contract = self._contracts[t.op]
        verdict = None if contract.accepts(outcome) else contract_violation(self.table, contract.op, outcome)
        if len(self._verdicts) > _OUTCOME_MEMO:
            self._verdicts.clear()
        self._verdicts[key] = (outcome, verdict)
        return verdict

    def _completed_facts(self, op: Operation, outcome: Outcome) -> tuple[Facts, dict[str, Value]]:
        """The outcome's facts (or failure fields) with defaults filled in, sorted, and as a mapping."""
        key = (op.name, id(outcome))
        found = self._completed.get(key)
        if found is not None and found[0] is outcome:
            return found[1], found[2]
        if outcome.raise_ is not None:
            filled = complete(self.table.failures[outcome.raise_].fields, outcome.fields)
        else:
            filled = complete(op.facts, outcome.facts or {})
        items = tuple(sorted(filled.items()))
        if len(self._completed) > _OUTCOME_MEMO:
            self._completed.clear()
        self._completed[key] = (outcome, items, filled)
        return items, filled

    def take_outcome(self, state: State, t: Transition, outcome: Outcome) -> State:
        """The state after `t`'s host call returned `outcome` (contract already checked)."""
        found = self._completed.get((t.op or "", id(outcome)))
        if found is not None and found[0] is outcome:
            items, filled = found[1], found[2]
        else:
            items, filled = self._completed_facts(self.table.operations[t.op or ""], outcome)
        if outcome.raise_ is not None:
            values = state.values
            ghost = self._raise_updates(t).get(outcome.raise_)
            if ghost:
                values = self._updated(ghost, values, {**self._facts(state.facts), **filled})
            return _new_state(State, (t.on_raise[outcome.raise_], values, items))
        c = self._by_id.get(t.id) or self._transition(t)
        if c.reads_earlier_facts:
            filled = {**self._facts(state.facts), **filled}
        return _new_state(State, (t.target, self._updated(c, state.values, filled), items))

    def contract_state(self, state: State) -> State:
        return State(CONTRACT_VIOLATION, state.values)

    # -- finite outcome domains (explorer, Hypothesis, vectors) ----------

    def outcomes(self, op_name: str) -> tuple[Outcome, ...]:
        """Every outcome an operation may return, in a fixed order: facts first, then failures."""
        cached = self._outcomes.get(op_name)
        if cached is None:
            cached = tuple(_enumerate(self.table, self.table.operations[op_name]))
            self._outcomes[op_name] = cached
        return cached


def _enumerate(table: Table, op: Operation) -> Iterator[Outcome]:
    names = [f.name for f in op.facts]
    for combo in product(*(list(f.domain.values()) for f in op.facts)):
        yield Outcome(facts=dict(zip(names, combo, strict=True)))
    for err in op.raises:
        fields = table.failures[err].fields
        fnames = [f.name for f in fields]
        for combo in product(*(list(f.domain.values()) for f in fields)):
            yield Outcome.model_validate({"raise": err, "fields": dict(zip(fnames, combo, strict=True))})
