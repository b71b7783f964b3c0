"""One table with fixed parameter values, compiled for stepping.

The small-step semantics every engine shares: the interpreter walks one path,
the explorer every path, the Hypothesis machine a generated path. A state is a
location, the variables' values and the facts readable there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product

from turnbound.reference.errors import DefinitionError, Nondeterminism, StuckState, ValueTooLarge
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.table import CONTRACT_VIOLATION, Operation, Table, Transition
from turnbound.reference.types import Value

INT_LIMIT = 2**63
"""No variable ever holds an integer beyond +-INT_LIMIT: an update that leaves it grows
without a bound (a square each step reaches a million digits in twenty steps), so the
step stops with `ValueTooLarge` instead of printing it or running out of memory."""
_INT_LIMIT_TEXT = "+-2**63"


@dataclass(frozen=True)
class State:
    location: str
    values: tuple[Value, ...]
    facts: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class _CompiledTransition:
    t: Transition
    guard: Compiled
    args: tuple[tuple[str, Compiled], ...]
    updates: tuple[tuple[int, Compiled], ...]


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
        self._out: dict[str, tuple[_CompiledTransition, ...]] = {
            loc: tuple(self._compile(t) for t in ts) for loc, ts in table.outgoing.items()
        }
        self._by_id = {c.t.id: c for cs in self._out.values() for c in cs}
        self._raises: dict[str, dict[str, _CompiledTransition]] = {}
        self._outcomes: dict[str, tuple[Outcome, ...]] = {}
        self._env: tuple[State, dict[str, Value]] | None = None

    def _compile(self, t: Transition) -> _CompiledTransition:
        return _CompiledTransition(
            t,
            compile_expr(t.guard),
            tuple((a, compile_expr(e)) for a, e in t.args),
            tuple((self._index[v], compile_expr(e)) for v, e in t.updates),
        )

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
        return {name: int(state.values[i]) for name, i in self._counters}

    def describe(self, state: State) -> str:
        parts = [f"{k}={v}" for k, v in self.variables(state).items()] + [f"{k}={v}" for k, v in state.facts]
        return "{" + ", ".join(parts) + "}"

    # -- choosing a transition ------------------------------------------

    def select(self, state: State) -> Transition:
        """The one enabled transition; a stuck or nondeterministic state is an error naming all candidates."""
        env = self.env(state)
        candidates = self._out.get(state.location, ())
        enabled = [c.t for c in candidates if c.guard(env)]
        if len(enabled) == 1:
            return enabled[0]
        if not enabled:
            raise StuckState(state.location, self.describe(state), [c.t.id for c in candidates])
        raise Nondeterminism(state.location, self.describe(state), [t.id for t in enabled])

    def args(self, state: State, t: Transition) -> dict[str, Value]:
        env = self.env(state)
        compiled = self._find(t)
        return {name: fn(env) for name, fn in compiled.args}

    def _find(self, t: Transition) -> _CompiledTransition:
        return self._by_id[t.id]

    def _raise_updates(self, t: Transition) -> dict[str, _CompiledTransition]:
        """Per failure, the ghost updates a raise makes (compiled once, as a transition of their own)."""
        cached = self._raises.get(t.id)
        if cached is None:
            cached = {
                err: _CompiledTransition(
                    t, compile_expr(t.guard), (), tuple((self._index[v], compile_expr(e)) for v, e in ups)
                )
                for err, ups in t.raise_updates.items()
                if ups
            }
            self._raises[t.id] = cached
        return cached

    # -- taking a transition ---------------------------------------------

    def _updated(self, c: _CompiledTransition, state: State, env: Mapping[str, Value]) -> tuple[Value, ...]:
        if not c.updates:
            return state.values
        values = list(state.values)
        for i, fn in c.updates:  # simultaneous: every right side reads the pre-state
            v = fn(env)
            if type(v) is int and not -INT_LIMIT <= v <= INT_LIMIT:
                digits = len(str(abs(v))) if v.bit_length() < 10_000 else int(v.bit_length() * 0.30103) + 1
                raise ValueTooLarge(self.var_names[i], c.t.id, digits, _INT_LIMIT_TEXT)
            values[i] = v
        return tuple(values)

    def take_internal(self, state: State, t: Transition) -> State:
        c = self._find(t)
        return State(t.target, self._updated(c, state, self.env(state)))

    def violation(self, t: Transition, outcome: Outcome) -> str | None:
        assert t.op is not None
        return contract_violation(self.table, self.table.operations[t.op], outcome)

    def take_outcome(self, state: State, t: Transition, outcome: Outcome) -> State:
        """The state after `t`'s host call returned `outcome` (contract already checked)."""
        op = self.table.operations[t.op or ""]
        if outcome.raise_ is not None:
            fields = complete(self.table.failures[outcome.raise_].fields, outcome.fields)
            values = state.values
            ghost = self._raise_updates(t).get(outcome.raise_)
            if ghost:
                values = self._updated(ghost, state, {**self.env(state), **fields})
            return State(t.on_raise[outcome.raise_], values, tuple(sorted(fields.items())))
        facts = complete(op.facts, outcome.facts or {})
        env = {**self.env(state), **facts}
        c = self._find(t)
        return State(t.target, self._updated(c, state, env), tuple(sorted(facts.items())))

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
