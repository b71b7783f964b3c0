"""Witness runs by bounded model checking, replayed on the interpreter.

A run found in the z3 encoding becomes a host script (per operation, the queue of
outcomes the run consumed) and is run again through `turnbound.reference.interpreter`
with the same parameters. The replay must take the same transitions, end at the
same terminal with the same variables, and show the same fact about the claim
(violated, or its bound met exactly); otherwise the encoding and the interpreter
disagree, which is a bug, and `WitnessDoesNotReplay` says where.

Every witness ends at a terminal, so the interpreter can run it to completion.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import z3
from turnbound.properties.prove.encoding import Encoding, Frame, SymbolicRun
from turnbound.properties.prove.explicit import StateCheck, configurations_smallest_first, search_state
from turnbound.properties.prove.goals import Goal
from turnbound.properties.prove.z3fast import Undecided, check, disj, limit
from turnbound.reference.errors import TurnboundError
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.expr_z3 import value
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import VIOLATED, MonitorState, check_trace
from turnbound.reference.outcomes import Outcome
from turnbound.reference.stepping import retrace, step_limit
from turnbound.reference.trace import HORIZON, Trace
from turnbound.reference.types import Value


class WitnessDoesNotReplay(RuntimeError):
    """The encoding found a run the interpreter does not reproduce: a bug in one of them."""


class BeyondHorizon(Undecided):
    """The run found needs more host calls than the table's step horizon lets a turn make:
    the interpreter cuts it off, so the claim is not decided by it."""


@dataclass(frozen=True)
class ConcreteRun:
    """A `SymbolicRun` replayed on the interpreter: its parameters, host script and the interpreter's
    trace, and what it shows of the claim (`detail`)."""

    params: dict[str, int]
    script: dict[str, list[Outcome]]
    trace: Trace
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "script": {op: [o.to_json() for o in queue] for op, queue in self.script.items()},
            "detail": self.detail,
            "trace": self.trace.to_json(),
        }


Target = Callable[[list[Frame]], z3.BoolRef]

SAT_DEPTH = 8
"""Runs this short are searched symbolically first; longer ones state by state at fixed parameters."""


Background = Callable[[Frame], z3.BoolRef]
"""Facts proved of every reachable state: they prune the search without losing a run."""


def search(
    enc: Encoding,
    params: z3.BoolRef,
    target: Target,
    depth: int,
    deadline: float,
    background: Background | None = None,
) -> SymbolicRun | None:
    """The shortest run (at most `depth` steps) from the initial state that meets the target."""
    s = z3.SimpleSolver()
    frames = [enc.frame()]
    s.add(params, enc.parameter_domain(), enc.typing(frames[0]), enc.initial(frames[0]))
    for _ in range(depth + 1):
        limit(s, deadline)
        s.push()
        s.add(target(frames))
        if check(s) == z3.sat:
            return _read_run(enc, s.model(), frames)
        s.pop()
        nxt = enc.frame()
        s.add(enc.typing(nxt), enc.step(frames[-1], nxt))
        if background is not None:
            s.add(background(nxt))
        frames.append(nxt)
    return None


def _read_run(enc: Encoding, model: z3.ModelRef, frames: list[Frame]) -> SymbolicRun:
    edges = [enc.read_edge(model, f) for f in frames[:-1]]
    outcomes = [enc.read_outcome(model, e, g) for e, g in zip(edges, frames[1:], strict=True)]
    return SymbolicRun(enc.read_params(model), [enc.read(model, f) for f in frames], edges, outcomes)


def find_violation(
    enc: Encoding,
    goal: Goal,
    depth: int,
    deadline: float,
    background: Background | None = None,
    anywhere: bool = True,
) -> ConcreteRun | None:
    """A completed run on which the claim fails.

    In order: short runs for every parameter value in the explore ranges at once (SAT);
    each configuration of the ranges, defaults first, state by state (explicit); then,
    with `anywhere`, runs up to `depth` steps for any parameter value (SAT).
    """
    bad: list[z3.BoolRef] = []

    def target(frames: list[Frame]) -> z3.BoolRef:
        while len(bad) < len(frames):
            bad.append(z3.Not(goal.holds(enc, frames[len(bad)])))
        return z3.And(disj(bad), enc.terminal(frames[-1]))

    found = search(enc, enc.parameter_ranges(), target, min(depth, SAT_DEPTH), deadline, background)
    if found is None:
        found = _explicit(enc, configurations_smallest_first(enc.table), _violated(enc, goal), deadline)
    if found is None and anywhere:
        bad.clear()
        found = search(enc, enc.parameter_domain(), target, depth, deadline, background)
    return None if found is None else replay_violation(enc, goal, found)


def find_tight(
    enc: Encoding, goal: Goal, depth: int, deadline: float, background: Background | None = None
) -> ConcreteRun | None:
    """A completed run that meets the bound exactly: at the default parameters if there is
    one, else at the first configuration of the explore ranges that has one."""
    sides = goal.edge()
    assert sides is not None
    lhs, rhs, offset = sides

    def target(frames: list[Frame]) -> z3.BoolRef:
        last = frames[-1]
        return z3.And(enc.terminal(last, goal.at), enc.term(lhs, last) == enc.term(rhs, last) + offset)

    defaults = enc.table.defaults()
    found = search(enc, enc.parameter_values(defaults), target, min(depth, SAT_DEPTH), deadline, background)
    if found is None:
        left, right = compile_expr(lhs), compile_expr(rhs)

        def meets(place: str, env: Mapping[str, Value], monitors: MonitorState) -> bool:
            return goal.judged_at(place, enc.table.terminals) and left(env) == right(env) + offset  # type: ignore[operator]

        found = _explicit(enc, configurations_smallest_first(enc.table), meets, deadline)
    return None if found is None else replay_tight(enc, goal, found)


def _violated(enc: Encoding, goal: Goal) -> StateCheck:
    """The claim's negation on a concrete state (the monitors' verdict for a trace property)."""
    if goal.kind == "trace":
        assert goal.prop_index is not None
        i, p = goal.prop_index, enc.properties[goal.prop_index]
        if p.kind == "at_most":
            return lambda place, env, m: m[i] > p.limit
        return lambda place, env, m: m[i] == VIOLATED
    assert goal.expr is not None
    claim = compile_expr(goal.expr)
    if goal.kind == "bound":
        return lambda place, env, m: goal.judged_at(place, enc.table.terminals) and not claim(env)
    return lambda place, env, m: not claim(env)


def _explicit(
    enc: Encoding, configs: list[dict[str, int]], target: StateCheck, deadline: float
) -> SymbolicRun | None:
    for params in configs:
        found, _ = search_state(enc, params, target, deadline)
        if found is not None:
            admitted(enc, found)
            return found
        if time.monotonic() > deadline:
            raise Undecided("timeout")
    return None


def admitted(enc: Encoding, found: SymbolicRun) -> None:
    """The z3 encoding must allow a run the machine took: the other half of the cross-check."""
    frames = [enc.frame() for _ in found.states]
    s = z3.SimpleSolver()
    s.add(enc.parameter_values(found.params), enc.parameter_domain(), enc.initial(frames[0]))
    for f, state in zip(frames, found.states, strict=True):
        s.add(enc.typing(f), enc.at(f, state.place))
        s.add(*[f.vars[n] == value(v, enc.var_types[n]) for n, v in state.vars.items()])
    for f, g, e, values in zip(frames, frames[1:], found.edges, found.outcomes, strict=False):
        s.add(f.choice == e.index, enc.step(f, g))
        s.add(*[enc.fact_term(g, e, name) == value(v, enc.fact_type(e, name)) for name, v in values.items()])
    if s.check() != z3.sat:
        raise WitnessDoesNotReplay(
            f"{enc.table.name}: the z3 encoding does not admit the run {_path(found)} the machine took"
        )


# -- replay on the interpreter ------------------------------------------------------


def replay_symbolic_run(enc: Encoding, found: SymbolicRun) -> tuple[Trace, list[State], Machine]:
    """Run the interpreter on the run's host script; fail loudly unless it takes the same path."""
    table = enc.table
    script = found.script()
    host = ScriptHost(Script(script))
    try:
        trace = run(table, host, found.params)
    except TurnboundError as exc:
        raise WitnessDoesNotReplay(f"{table.name}: witness {_path(found)} does not replay: {exc}") from exc
    if trace.terminal == HORIZON:
        calls = sum(len(q) for q in script.values())
        raise BeyondHorizon(
            f"limit step_horizon reached: the run found makes {calls} host calls, a turn of "
            f"{table.name} is cut off after {step_limit(table)}"
        )
    want_path = [e.transition.id for e in found.edges]
    last = found.states[-1]
    problems = []
    if trace.path != want_path:
        problems.append(f"the interpreter took {trace.path}")
    if trace.terminal != last.place:
        problems.append(f"it ended at {trace.terminal}, not {last.place}")
    if trace.variables != last.vars:
        problems.append(f"it ended with {trace.variables}, not {last.vars}")
    unused = {op: len(q) - host.used.get(op, 0) for op, q in script.items() if len(q) != host.used.get(op, 0)}
    if unused:
        problems.append(f"it left outcomes unused: {unused}")
    if problems:
        raise WitnessDoesNotReplay(
            f"{table.name}: witness {_path(found)} does not replay: " + "; ".join(problems)
        )
    machine = Machine(table, found.params)
    return trace, _states(machine, trace), machine


def _path(found: SymbolicRun) -> str:
    return f"(parameters {found.params}, path {[e.transition.id for e in found.edges]})"


def _states(machine: Machine, trace: Trace) -> list[State]:
    """Every state the traced run passed through, taken again by the one run loop."""
    return [state for _, state in retrace(machine, trace).visited]


def replay_violation(enc: Encoding, goal: Goal, found: SymbolicRun) -> ConcreteRun:
    trace, states, machine = replay_symbolic_run(enc, found)
    detail = _violation_detail(enc, goal, trace, states, machine)
    if detail is None:
        raise WitnessDoesNotReplay(
            f"{enc.table.name}: witness {_path(found)} for {goal.name} replays, but the interpreter's run "
            "does not break the claim"
        )
    return ConcreteRun(found.params, found.script(), trace, detail)


def _violation_detail(
    enc: Encoding, goal: Goal, trace: Trace, states: list[State], machine: Machine
) -> str | None:
    if goal.kind == "trace":
        broken = [p.name for p in check_trace(enc.table, trace)]
        return "the run breaks it" if goal.name in broken else None
    assert goal.expr is not None
    check = compile_expr(goal.expr)
    candidates = states[-1:] if goal.kind == "bound" else states
    for i, state in enumerate(candidates):
        env = machine.env(state)
        if not check(env):
            where = (
                f"at terminal {state.location}" if goal.kind == "bound" else f"at {state.location}, step {i}"
            )
            return f"false {where}" + _sides(goal, env)
    return None


def _sides(goal: Goal, env: dict[str, Value]) -> str:
    sides = goal.edge()
    if sides is None:
        return ""
    lhs, rhs, _ = sides
    return f": {compile_expr(lhs)(env)} vs {compile_expr(rhs)(env)}"


def replay_tight(enc: Encoding, goal: Goal, found: SymbolicRun) -> ConcreteRun:
    trace, states, machine = replay_symbolic_run(enc, found)
    sides = goal.edge()
    assert sides is not None
    lhs, rhs, offset = sides
    env = machine.env(states[-1])
    left, right = compile_expr(lhs)(env), compile_expr(rhs)(env)
    if not (isinstance(left, int) and isinstance(right, int) and left == right + offset):
        raise WitnessDoesNotReplay(
            f"{enc.table.name}: tightness witness {_path(found)} for {goal.name} "
            f"replays with {left} vs {right}"
        )
    params = ", ".join(f"{k}={v}" for k, v in found.params.items())
    return ConcreteRun(found.params, found.script(), trace, f"reached {left} at {params}")
