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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3
from turnbound.properties.encoding import Edge, Encoding, Frame, StateValues
from turnbound.properties.goals import Goal
from turnbound.properties.z3fast import check, disj, limit
from turnbound.reference.errors import TurnboundError
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import check_trace
from turnbound.reference.outcomes import Outcome
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value


class WitnessDoesNotReplay(RuntimeError):
    """The encoding found a run the interpreter does not reproduce: a bug in one of them."""


@dataclass(frozen=True)
class Run:
    """A run read from a model: the parameters, the states and the edges between them."""

    params: dict[str, int]
    states: list[StateValues]
    edges: list[Edge]
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


@dataclass(frozen=True)
class Witness:
    """A replayed run: its parameters, host script and the interpreter's trace."""

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


Background = Callable[[Frame], z3.BoolRef]
"""Facts proved of every reachable state: they prune the search without losing a run."""


def search(
    enc: Encoding,
    params: z3.BoolRef,
    target: Target,
    depth: int,
    deadline: float,
    background: Background | None = None,
) -> Run | None:
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


def _read_run(enc: Encoding, model: z3.ModelRef, frames: list[Frame]) -> Run:
    edges = [enc.read_edge(model, f) for f in frames[:-1]]
    outcomes = [enc.read_outcome(model, e, g) for e, g in zip(edges, frames[1:], strict=True)]
    return Run(enc.read_params(model), [enc.read(model, f) for f in frames], edges, outcomes)


def find_violation(
    enc: Encoding,
    goal: Goal,
    depth: int,
    deadline: float,
    background: Background | None = None,
    anywhere: bool = True,
) -> Witness | None:
    """A completed run on which the claim fails: first within the explore ranges, then anywhere."""
    bad: list[z3.BoolRef] = []

    def target(frames: list[Frame]) -> z3.BoolRef:
        while len(bad) < len(frames):
            bad.append(z3.Not(goal.holds(enc, frames[len(bad)])))
        return z3.And(disj(bad), enc.terminal(frames[-1]))

    for params in (enc.parameter_ranges(), enc.parameter_domain())[: 2 if anywhere else 1]:
        bad.clear()
        found = search(enc, params, target, depth, deadline, background)
        if found is not None:
            return replay_violation(enc, goal, found)
    return None


def find_tight(
    enc: Encoding, goal: Goal, depth: int, deadline: float, background: Background | None = None
) -> Witness | None:
    """A completed run that meets the bound exactly: at the default parameters, else in the ranges."""
    sides = goal.edge()
    assert sides is not None
    lhs, rhs, offset = sides

    def target(frames: list[Frame]) -> z3.BoolRef:
        last = frames[-1]
        return z3.And(enc.terminal(last), enc.term(lhs, last) == enc.term(rhs, last) + offset)

    for params in (enc.parameter_values(enc.table.defaults()), enc.parameter_ranges()):
        found = search(enc, params, target, depth, deadline, background)
        if found is not None:
            return replay_tight(enc, goal, found)
    return None


# -- replay on the interpreter ------------------------------------------------------


def replay(enc: Encoding, found: Run) -> tuple[Trace, list[State], Machine]:
    """Run the interpreter on the run's host script; fail loudly unless it takes the same path."""
    table = enc.table
    script = found.script()
    host = ScriptHost(Script(script))
    try:
        trace = run(table, host, found.params)
    except TurnboundError as exc:
        raise WitnessDoesNotReplay(f"{table.name}: witness {_path(found)} does not replay: {exc}") from exc
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


def _path(found: Run) -> str:
    return f"(parameters {found.params}, path {[e.transition.id for e in found.edges]})"


def _states(machine: Machine, trace: Trace) -> list[State]:
    """Every state the traced run passed through, recomputed with the machine's own steps."""
    state = machine.initial()
    states = [state]
    steps = iter(trace.steps)
    for tid in trace.path:
        t = machine.select(state)
        assert t.id == tid
        state = (
            machine.take_internal(state, t)
            if t.op is None
            else machine.take_outcome(state, t, next(steps).outcome)
        )
        states.append(state)
    return states


def replay_violation(enc: Encoding, goal: Goal, found: Run) -> Witness:
    trace, states, machine = replay(enc, found)
    detail = _violation_detail(enc, goal, trace, states, machine)
    if detail is None:
        raise WitnessDoesNotReplay(
            f"{enc.table.name}: witness {_path(found)} for {goal.name} replays, but the interpreter's run "
            "does not break the claim"
        )
    return Witness(found.params, found.script(), trace, detail)


def _violation_detail(
    enc: Encoding, goal: Goal, trace: Trace, states: list[State], machine: Machine
) -> str | None:
    if goal.kind == "trace":
        broken = [p.name for p in check_trace(enc.table, trace)]
        return f"trace property {goal.name} is broken" if goal.name in broken else None
    assert goal.expr is not None
    check = compile_expr(goal.expr)
    candidates = states[-1:] if goal.kind == "bound" else states
    for i, state in enumerate(candidates):
        env = machine.env(state)
        if not check(env):
            where = (
                f"at terminal {state.location}"
                if goal.kind == "bound"
                else f"after {i} transitions, at {state.location}"
            )
            return f"`{goal.text}` is false {where}" + _sides(goal, env)
    return None


def _sides(goal: Goal, env: dict[str, Value]) -> str:
    sides = goal.edge()
    if sides is None:
        return ""
    lhs, rhs, _ = sides
    return f" ({compile_expr(lhs)(env)} vs {compile_expr(rhs)(env)})"


def replay_tight(enc: Encoding, goal: Goal, found: Run) -> Witness:
    trace, states, machine = replay(enc, found)
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
    return Witness(found.params, found.script(), trace, f"reached {left} at {params}")
