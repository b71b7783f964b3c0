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

Why this module is long: the step and the caches that make it cheap (compiled transitions per
location, an outcome's verdict and completed facts by identity and by content, one mapping per
fact tuple) share the machine's state; apart, each would reach into the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import product
from typing import NamedTuple

from turnbound.reference.compiled import (
    CompiledTransition,
    arg_maker,
    compiled_expr,
    counter_dict,
    derived,
    reads_of,
    shared_compilations,
)
from turnbound.reference.contract_check import FastContract
from turnbound.reference.errors import DefinitionError, Nondeterminism, StuckState, ValueTooLarge
from turnbound.reference.expr import Expr, refs
from turnbound.reference.expr_compile import Slotted, compile_expr
from turnbound.reference.expr_fold import fold
from turnbound.reference.fanout import Fanout, GroupedUpdates
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.proved import guards_proved
from turnbound.reference.readable import facts_read
from turnbound.reference.table import CONTRACT_VIOLATION, Operation, Table, Transition
from turnbound.reference.types import IntType, Value
from turnbound.reference.update_memo import MEMO_LIMIT, Plan
from turnbound.reference.update_step import Updater, update_step

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
_Meaning = tuple[str | None, Facts, dict[str, Value]]
"""An outcome's contract verdict (None: accepted) and its completed facts (empty if rejected)."""
_Answer = tuple[Outcome, str, str | None, Facts, dict[str, Value]]
"""The outcome, the operation it answered, and its meaning."""

_NO_FACTS: Mapping[str, Value] = {}
"""The facts of a state entered by an internal transition (read-only)."""

_new_state = tuple.__new__
"""`State` built from one tuple without the named tuple's Python-level constructor."""


def _same_values(values: tuple[Value, ...]) -> tuple[Value, ...]:
    return values


def _too_large(name: str, tid: str, v: int) -> ValueTooLarge:
    digits = len(str(abs(v))) if v.bit_length() < 10_000 else int(v.bit_length() * 0.30103) + 1
    return ValueTooLarge(name, tid, digits, _INT_LIMIT_TEXT)


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

    def __init__(
        self,
        table: Table,
        params: Mapping[str, int] | None = None,
        ghosts: bool = True,
        memo: bool = False,
        forget: bool = False,
    ) -> None:
        self.table = table
        self.params = check_params(table, params or {})
        self.ghosts = ghosts
        """False: ghost updates are not made and `variables` leaves ghosts out. A ghost is read by
        nothing that decides behaviour (the loader's rule), so a run that judges no claim (an
        implementation's reference in conformance) skips the monitors' bookkeeping."""
        self._made = {v.name for v in table.variables if ghosts or not v.ghost}
        self.var_names = tuple(v.name for v in table.variables)
        self._index = {name: i for i, name in enumerate(self.var_names)}
        self._int_slots = frozenset(i for i, v in enumerate(table.variables) if isinstance(v.type, IntType))
        self._finite_vars = frozenset(v.name for v in table.variables if not isinstance(v.type, IntType))
        self._counter_dict = counter_dict(tuple((n, self._index[n]) for n in table.counters))
        self.counters_of = self._counter_dict
        """`counters` from a state's values alone (what a turn's step calls, one call fewer)."""
        self._out: dict[str, tuple[CompiledTransition, ...]] = {}
        """Each location's transitions, compiled when a run first reaches it (a conformance run
        builds a machine per parameter assignment and visits few locations)."""
        self._first_enabled = guards_proved(table)
        self._by_id: dict[str, CompiledTransition] = {}
        self._raises: dict[str, dict[str, CompiledTransition]] = {}
        self._outcomes: dict[str, tuple[Outcome, ...]] = {}
        self._env: tuple[State, dict[str, Value]] | None = None
        self._fact_maps: dict[Facts, dict[str, Value]] = {(): {}}
        self._contracts = {name: FastContract(table, op) for name, op in table.operations.items()}
        self._answers: dict[int, _Answer] = {}
        """What each outcome (by identity) means as the answer to an operation."""
        self._last_answer: _Answer = (Outcome(facts={}), "", None, (), {})
        """The entry `violation` looked up last, for `take_outcome` right after it."""
        self._by_content: dict[tuple[object, ...], _Meaning] = {}
        """The same by the operation and the outcome's content (a host that builds a new outcome
        per call returns few distinct ones)."""
        self._guards: dict[str, tuple[tuple[Slotted, Transition], ...]] = {}
        self._arg_makers: dict[str, Callable[[tuple[Value, ...], Mapping[str, Value]], dict[str, Value]]] = {}
        self._last_facts: Facts = ()
        self._last_f: Mapping[str, Value] = {}
        """The mapping of the fact tuple last read or made (a run reads each state's facts twice)."""
        self._initial: State | None = None
        self._memo = memo
        """True: each transition's updates are remembered by the values they read (`_remembered`):
        the explorer meets the same few inputs in many states; one run rarely does."""
        self._plans: dict[int, Plan] = {}
        self.forgets = forget
        self._keep = derived(table, "facts_read", lambda: facts_read(table)) if forget else None
        """Per location, the facts kept in a state there: with `forget`, a host call's facts that
        nothing at its target reads are left out of the state (a search's states that differ
        only in them are one state; `readable.facts_read`)."""
        self._kept_items: dict[tuple[str, Facts], Facts] = {}
        self._fanouts: dict[str, Fanout | None] = {}

    def _compile(self, t: Transition) -> CompiledTransition:
        """`t` compiled with this machine's parameters, shared with every machine of the table
        that gives the parameters `t` reads the same values (a conformance run builds a machine
        per parameter assignment, and most transitions read no parameter at all)."""
        shared = shared_compilations(self.table)
        key = (t.id, self.ghosts, tuple(self.params[name] for name in shared.reads(t)))
        found = shared.compiled.get(key)
        if found is None:
            found = shared.store(key, self._compile_fresh(t))
        return found

    def _compile_fresh(self, t: Transition) -> CompiledTransition:
        slots, params = self._index, self.params
        own = {f.name for f in self.table.operations[t.op].facts} if t.op is not None else set()
        updates = [(v, e) for v, e in t.updates if v in self._made]
        read = {r.name for _, e in updates for r in refs(e) if r.kind not in ("param", "var")}
        return CompiledTransition(
            t,
            compiled_expr(t.guard, slots, params),
            tuple((a, compiled_expr(e, slots, params)) for a, e in t.args),
            tuple((slots[v], compiled_expr(e, slots, params)) for v, e in updates),
            t.op is not None and not read <= own,
            tuple(slots[v] for v, _ in updates if slots[v] in self._int_slots),
            *reads_of([e for _, e in updates], slots),
            apply=self._update_step(t, updates),
        )

    def _update_step(self, t: Transition, updates: list[tuple[str, Expr]]) -> Updater | None:
        def too_large(slot: int, v: int) -> ValueTooLarge:
            return _too_large(self.var_names[slot], t.id, v)

        slots, params = self._index, self.params
        folded = [(slots[v], fold(e, params)) for v, e in updates]
        return update_step(folded, slots, params, self._finite_vars, self._int_slots, INT_LIMIT, too_large)

    def _at(self, location: str) -> tuple[CompiledTransition, ...]:
        compiled = tuple(self._compile(t) for t in self.table.outgoing.get(location, ()))
        self._out[location] = compiled
        self._guards[location] = tuple((c.guard, c.t) for c in compiled)
        self._by_id.update((c.t.id, c) for c in compiled)
        return compiled

    def _transition(self, t: Transition) -> CompiledTransition:
        self._at(t.source)
        return self._by_id[t.id]

    def _facts(self, facts: Facts) -> Mapping[str, Value]:
        """One shared mapping per distinct fact tuple (read-only)."""
        if facts is self._last_facts:
            return self._last_f
        found = self._fact_maps.get(facts)
        if found is None:
            if len(self._fact_maps) > _OUTCOME_MEMO:
                self._fact_maps = {(): {}}
            found = self._fact_maps[facts] = dict(facts)
        self._last_facts, self._last_f = facts, found
        return found

    # -- states ----------------------------------------------------------

    def initial(self) -> State:
        if self._initial is None:
            env = dict(self.params)
            values = tuple(compile_expr(v.init)(env) for v in self.table.variables)
            self._initial = State(self.table.initial, values)
        return self._initial

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
        named = zip(self.var_names, state.values, strict=True)
        return dict(named) if self.ghosts else {k: v for k, v in named if k in self._made}

    def counters(self, state: State) -> dict[str, int]:
        return self._counter_dict(state.values)

    def describe(self, state: State) -> str:
        parts = [f"{k}={v}" for k, v in self.variables(state).items()] + [f"{k}={v}" for k, v in state.facts]
        return "{" + ", ".join(parts) + "}"

    # -- choosing a transition ------------------------------------------

    def select(self, state: State) -> Transition:
        """The one enabled transition; a stuck or nondeterministic state is an error naming all candidates."""
        location, values, facts = state
        guards = self._guards.get(location)
        if guards is None:
            self._at(location)
            guards = self._guards[location]
        f = self._last_f if facts is self._last_facts else self._facts(facts)
        if self._first_enabled:
            for guard, t in guards:
                if guard(values, f):
                    return t
            raise StuckState(location, self.describe(state), [t.id for _, t in guards])
        enabled = [t for guard, t in guards if guard(values, f)]
        if len(enabled) == 1:
            return enabled[0]
        if not enabled:
            raise StuckState(location, self.describe(state), [t.id for _, t in guards])
        raise Nondeterminism(location, self.describe(state), [t.id for t in enabled])

    def args(self, state: State, t: Transition) -> dict[str, Value]:
        make = self._arg_makers.get(t.id)
        if make is None:
            c = self._by_id.get(t.id) or self._transition(t)
            make = self._arg_makers[t.id] = arg_maker(c.args, [fold(e, self.params) for _, e in t.args])
        facts = state.facts
        return make(state.values, self._last_f if facts is self._last_facts else self._facts(facts))

    def raise_step(
        self, t: Transition, err: str, fields: Mapping[str, Value]
    ) -> Callable[[tuple[Value, ...]], tuple[Value, ...]] | None:
        """The values after `t`'s call raised `err` with these (completed) fields, as a function
        of the values before: what `take_outcome` makes them, when the raise's ghost updates read
        no earlier fact (None: they do, the state's facts are needed)."""
        ghost = self._raise_updates(t).get(err)
        if not ghost:
            return _same_values
        own = {f.name for f in self.table.failures[err].fields}
        if not set(ghost.read_facts) <= own:
            return None
        updated = self._updated
        return lambda values: updated(ghost, values, fields)

    def raise_ghosts(self, t: Transition) -> Mapping[str, CompiledTransition]:
        """Per failure of `t`'s call, the ghost updates its raise makes (none: not a key)."""
        return self._raise_updates(t)

    def _raise_updates(self, t: Transition) -> dict[str, CompiledTransition]:
        """Per failure, the ghost updates a raise makes (compiled once, as a transition of their own)."""
        cached = self._raises.get(t.id)
        if cached is None:
            slots, params = self._index, self.params
            cached = {}
            for err, ups in t.raise_updates.items():
                made = [(v, e) for v, e in ups if v in self._made]
                if not made:
                    continue
                cached[err] = CompiledTransition(
                    t,
                    compiled_expr(t.guard, slots, params),
                    (),
                    tuple((slots[v], compiled_expr(e, slots, params)) for v, e in made),
                    True,
                    tuple(slots[v] for v, _ in made if slots[v] in self._int_slots),
                    *reads_of([e for _, e in made], slots),
                    apply=self._update_step(t, made),
                )
            self._raises[t.id] = cached
        return cached

    # -- taking a transition ---------------------------------------------

    def _updated(
        self, c: CompiledTransition, values: tuple[Value, ...], f: Mapping[str, Value]
    ) -> tuple[Value, ...]:
        if c.apply is None:
            return values
        if self._memo:
            return self._remembered(c, values, f)
        return c.apply(values, f)

    def _plan(self, c: CompiledTransition, n: int) -> Plan:
        plan = self._plans.get(id(c))
        if plan is None or plan.c is not c:
            plan = self._plans[id(c)] = Plan.of(c, n)
        return plan

    def _remembered(
        self, c: CompiledTransition, values: tuple[Value, ...], f: Mapping[str, Value]
    ) -> tuple[Value, ...]:
        """`_updated`, with what the updates make looked up by the values and facts they read
        (every expression is pure), and merged into the state in one step."""
        plan = self._plan(c, len(values))
        key = (plan.pick_vars(values), plan.pick_facts(f))
        made = plan.memo.get(key)
        if made is None:
            made = self._make(plan, values, f)
            if len(plan.memo) >= MEMO_LIMIT:
                plan.memo.clear()
            plan.memo[key] = made
        return plan.merge(values + made)

    def _make(self, plan: Plan, values: tuple[Value, ...], f: Mapping[str, Value]) -> tuple[Value, ...]:
        """What the updates make, in their order, each checked against INT_LIMIT."""
        c = plan.c
        made = tuple(fn(values, f) for _, fn in c.updates)  # simultaneous: each reads the pre-state
        for k in plan.int_positions:
            v = made[k]
            if not -INT_LIMIT <= v <= INT_LIMIT:  # type: ignore[operator]
                raise _too_large(self.var_names[c.updates[k][0]], c.t.id, v)  # type: ignore[arg-type]
        return made

    def take_internal(self, state: State, t: Transition) -> State:
        c = self._by_id.get(t.id) or self._transition(t)
        values = state.values
        if c.apply is not None:
            facts = state.facts
            f = self._last_f if facts is self._last_facts else self._facts(facts)
            values = self._remembered(c, values, f) if self._memo else c.apply(values, f)
        self._last_facts, self._last_f = (), _NO_FACTS  # the next select reads the state entered
        return _new_state(State, (t.target, values, ()))

    def internal_step(self, t: Transition) -> Callable[[State], State]:
        """`take_internal` of `t` as a function of the state alone (a search's step). When the
        updates read no fact it gives the state it entered last again for the same values
        tuple: a search takes `t` from states with the same values one after another (the
        outcomes of one call that differ only in facts)."""
        c = self._by_id.get(t.id) or self._transition(t)
        take = self.take_internal
        if c.read_facts:
            return lambda state: take(state, t)
        last: list[tuple[tuple[Value, ...], State]] = []

        def step(state: State) -> State:
            if last and last[0][0] is state.values:
                return last[0][1]
            entered = take(state, t)
            last[:] = [(state.values, entered)]
            return entered

        return step

    def answered(self, state: State, t: Transition, outcome: Outcome) -> tuple[str | None, State]:
        """`violation` and the state it leads to (`take_outcome`, or `contract_state` if the
        contract rejects the outcome) in one call: a turn's step."""
        found = self._answers.get(id(outcome))
        if found is None or found[0] is not outcome or found[1] != t.op:
            found = self._answer(t.op or "", outcome)
        self._last_answer = found
        violation = found[2]
        if violation:
            return violation, self.contract_state(state)
        return None, self.take_outcome(state, t, outcome)

    def violation(self, t: Transition, outcome: Outcome) -> str | None:
        assert t.op is not None
        found = self._answers.get(id(outcome))
        if found is None or found[0] is not outcome or found[1] != t.op:
            found = self._answer(t.op, outcome)
        self._last_answer = found
        return found[2]

    def _answer(self, op: str, outcome: Outcome) -> _Answer:
        """The contract's verdict on `outcome` and, if it holds, the outcome's facts (or failure
        fields) with defaults filled in, sorted and as a mapping; remembered by identity and
        content."""
        given = outcome.facts if outcome.raise_ is None else outcome.fields
        key: tuple[object, ...] | None = (op, outcome.raise_)
        if given:
            key = (op, outcome.raise_, tuple(given.items()), tuple(map(type, given.values())))
        try:
            meaning = self._by_content.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable value (the contract rejects it)
            key, meaning = None, None
        if meaning is None:
            contract = self._contracts[op]
            if contract.accepts(outcome):
                meaning = (None, *self._completed_facts(contract.op, outcome))
            else:
                meaning = (contract_violation(self.table, contract.op, outcome), (), {})
            if key is not None:
                if len(self._by_content) > _OUTCOME_MEMO:
                    self._by_content.clear()
                self._by_content[key] = meaning
        if len(self._answers) > _OUTCOME_MEMO:
            self._answers.clear()
        found = self._answers[id(outcome)] = (outcome, op, *meaning)
        return found

    def _completed_facts(self, op: Operation, outcome: Outcome) -> tuple[Facts, dict[str, Value]]:
        """The outcome's facts (or failure fields) with defaults filled in, sorted, and as a mapping."""
        if outcome.raise_ is not None:
            filled = complete(self.table.failures[outcome.raise_].fields, outcome.fields)
        else:
            filled = complete(op.facts, outcome.facts or {})
        return tuple(sorted(filled.items())), filled

    def take_outcome(self, state: State, t: Transition, outcome: Outcome) -> State:
        """The state after `t`'s host call returned `outcome` (contract already checked)."""
        found = self._last_answer  # the turn asked for the verdict first
        if found[0] is not outcome or found[1] != t.op:
            found = self._answers.get(id(outcome)) or self._answer(t.op or "", outcome)
            if found[0] is not outcome or found[1] != t.op:
                found = self._answer(t.op or "", outcome)
        if found[2] is not None:  # not checked, and broken: its facts as given, defaults filled in
            items, filled = self._completed_facts(self.table.operations[t.op or ""], outcome)
        else:
            items, filled = found[3], found[4]
        if outcome.raise_ is not None:
            return self._take_raise(state, t, outcome.raise_, items, filled)
        c = self._by_id.get(t.id) or self._transition(t)
        values = state.values
        if c.apply is not None:
            f: Mapping[str, Value] = filled
            if c.reads_earlier_facts:
                f = {**self._facts(state.facts), **filled}
            values = self._remembered(c, values, f) if self._memo else c.apply(values, f)
        if self._keep is not None:
            items = self.kept(t.target, items)
            self._facts(items)
        else:
            self._last_facts, self._last_f = items, filled
        return _new_state(State, (t.target, values, items))

    def kept(self, target: str, items: Facts) -> Facts:
        """The facts of a state entering `target`, as this machine keeps them."""
        if self._keep is None:
            return items
        key = (target, items)
        found = self._kept_items.get(key)
        if found is None:
            keep = self._keep.get(target, frozenset())
            found = tuple(item for item in items if item[0] in keep)
            if len(found) == len(items):
                found = items
            if len(self._kept_items) > _OUTCOME_MEMO:
                self._kept_items.clear()
            self._kept_items[key] = found
        return found

    def take_outcomes(self, state: State, t: Transition) -> tuple[State, ...]:
        """The state after each of `outcomes(t.op)` (a search's step at a host call): one
        `take_outcome` per outcome, with the shared work done once (`fanout`)."""
        return self.outcomes_step(t)(state)

    def outcomes_step(self, t: Transition) -> Callable[[State], tuple[State, ...]]:
        """`take_outcomes` of `t` as a function of the state alone: what a search calls at every
        node that makes `t`'s call."""
        assert t.op is not None
        if t.id in self._fanouts:
            fanout = self._fanouts[t.id]
        else:
            fanout = self._fanouts[t.id] = self._fanout(t)
        if fanout is not None:
            return fanout.after
        take, outcomes = self.take_outcome, self.outcomes(t.op)
        return lambda state: tuple(take(state, t, o) for o in outcomes)

    def _fanout(self, t: Transition) -> Fanout | None:
        c = self._by_id.get(t.id) or self._transition(t)
        if c.reads_earlier_facts:
            return None
        if c.apply is None or not self._memo:
            return Fanout(self, t, c.read_facts, c.apply)
        plan = self._plan(c, len(self.var_names))
        memo: dict[tuple[Value, ...], tuple[tuple[Value, ...], ...]] = {}
        fanout = Fanout(self, t, c.read_facts, None)
        merge, firsts = plan.merge, fanout.firsts
        limit = max(1, MEMO_LIMIT // max(1, len(firsts)))  # rows kept: as many as one update memo's
        exprs = [e for v, e in t.updates if v in self._made]  # as compiled: c.updates, in order

        def too_large(k: int, v: int) -> ValueTooLarge:
            return _too_large(self.var_names[c.updates[k][0]], t.id, v)

        fns = [fn for _, fn in c.updates]
        made = GroupedUpdates(fns, exprs, firsts, plan.int_positions, INT_LIMIT, too_large)

        def update_all(values: tuple[Value, ...]) -> list[tuple[Value, ...]]:
            key = plan.pick_vars(values)
            rows = memo.get(key)
            if rows is None:
                if len(memo) >= limit:
                    memo.clear()
                rows = memo[key] = made.rows(values)
            return list(map(merge, map(values.__add__, rows)))

        fanout.update_all = update_all
        return fanout

    def _take_raise(
        self, state: State, t: Transition, err: str, items: Facts, filled: dict[str, Value]
    ) -> State:
        values = state.values
        ghost = self._raise_updates(t).get(err)
        if ghost:
            values = self._updated(ghost, values, {**self._facts(state.facts), **filled})
        target = t.on_raise[err]
        if self._keep is not None:
            items = self.kept(target, items)
            self._facts(items)
        else:
            self._last_facts, self._last_f = items, filled
        return _new_state(State, (target, values, items))

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
