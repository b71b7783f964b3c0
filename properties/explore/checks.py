"""Judging every claim over a finished search, with a replayed witness for each violation.

The judge's compiled claims (bounds with their two sides, for tightness), evaluated on
every reachable state; trace properties read the monitor state; termination looks for
a cycle (a lasso) or the step horizon; determinism reports the first stuck or
nondeterministic state. Each violation's witness is replayed on the interpreter, and a
witness that does not reproduce it is reported (`Violation.replay_problem`).
"""

from __future__ import annotations

import itertools
from operator import itemgetter

from turnbound.properties.explore.claims import (
    Judged,
    Pick,
    StateClaim,
    StateClaimMemo,
    describe_property,
    picker,
    state_claim,
)
from turnbound.properties.explore.replay import Replay, _run_error, replay
from turnbound.properties.explore.results import (
    DETERMINISTIC,
    TERMINATES,
    ClaimKind,
    ClaimResult,
    Expect,
    PathStep,
    Summary,
    Verdict,
    Violation,
    Witness,
)
from turnbound.properties.explore.search import _Search
from turnbound.reference.expr import Expr, refs, render
from turnbound.reference.interpreter import outcome_script
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors, MonitorState, check_trace
from turnbound.reference.table import Table, TraceProperty
from turnbound.reference.trace import HORIZON, probe_line
from turnbound.reference.types import Value
from turnbound.reference.update_step import value_picker

_first = itemgetter(0)
_second = itemgetter(1)


def _fmt(value: Value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


# -- the checker ----------------------------------------------------------------


class _Checker:
    """Evaluates every claim over a finished search and builds the replayed witnesses."""

    def __init__(
        self,
        table: Table,
        machine: Machine,
        monitors: Monitors,
        search: _Search,
        claim_memo: StateClaimMemo | None = None,
    ) -> None:
        self.table = table
        self.claim_memo = claim_memo or StateClaimMemo(table, machine)
        self.machine = machine
        self.monitors = monitors
        self.search = search
        self.judge = self.claim_memo.judge  # one judge, compiled once, for the search and the checks
        self.state_claims = [state_claim(c, fn) for c, fn in self.judge.invariants]
        self.bounds = [state_claim(c, fn) for c, fn in self.judge.bounds]
        self.first: dict[str, int] = {}
        self.bound_nodes: dict[str, list[int]] = {b.claim.name: [] for b in self.bounds}
        self.terminals: dict[str, int] = {}
        self.terminal_max: dict[str, dict[str, int]] = {}
        self.max: dict[str, int] = {}
        self.lhs_max: dict[str, int] = {}
        self.tight: dict[str, bool] = {b.claim.name: False for b in self.bounds}
        self.broken: dict[int, tuple[str, ...]] = {}
        slots = {name: k for k, name in enumerate(machine.var_names)}
        self._bound_memos: list[tuple[StateClaim, Pick, dict[object, Judged]]]
        self._bound_memos = [(b, picker(b.claim.expr, slots), {}) for b in self.bounds]
        """Per bound, its verdict and sides by the values of the variables it reads."""

    def check(self) -> None:
        """Judge every node: its variables against the invariants and lemmas, its monitors against
        the trace properties, and at a terminal the bounds. A search stores many nodes but few
        distinct valuations and monitor states, so each is judged once and a node only looked up."""
        search, machine = self.search, self.machine
        invariants = self.claim_memo.broken
        bad_monitors: dict[MonitorState, tuple[str, ...]] = {}
        for mon in search.monitor_states():
            bad = tuple(p.name for p in self.judge.broken_properties(mon)) if mon else ()
            if bad:
                bad_monitors[mon] = bad
        broken: dict[int, tuple[str, ...]] = {}
        if self.claim_memo.claims:
            last: tuple[Value, ...] | None = None
            held: tuple[str, ...] = ()
            judged: dict[int, tuple[str, ...]] = {}
            """By the identity of a values tuple: every node is alive, so no other takes its id."""
            for i, (state, _) in enumerate(search.nodes):
                values = state[1]
                if values is not last:  # a call's outcomes share their values: one after another
                    last = values
                    found = judged.get(id(values))
                    held = judged[id(values)] = invariants(values) if found is None else found
                if held:
                    broken[i] = held
        if bad_monitors:
            for i, mon in enumerate(map(_second, search.nodes)):
                found = bad_monitors.get(mon)
                if found:
                    broken[i] = broken.get(i, ()) + found
        counters = [(n, machine.var_names.index(n)) for n in self.table.counters]
        terminal_memo: dict[tuple[str, object], tuple[str, ...]] = {}
        """The bounds a terminal breaks, by its location and the variables they and the maxima read:
        terminals that differ only in other variables, facts or monitors are judged once."""
        read = {r.name for b in self.bounds for r in refs(b.claim.expr) if r.kind == "var"}
        read.update(self.table.counters)
        pick = value_picker(tuple(k for k, name in enumerate(machine.var_names) if name in read))
        for i in search.terminal_nodes:
            state = search.nodes[i][0]
            location = state.location
            self.terminals[location] = self.terminals.get(location, 0) + 1
            key = (location, pick(state.values))
            bounds = terminal_memo.get(key)
            if bounds is None:
                bounds = terminal_memo[key] = self._terminal(state, counters)
            if bounds:
                for name in bounds:
                    self.bound_nodes[name].append(i)
                broken[i] = broken.get(i, ()) + bounds
        for i in sorted(broken):
            self.broken[i] = broken[i]
            for name in broken[i]:
                self.first.setdefault(name, i)

    def _terminal(self, state: State, counters: list[tuple[str, int]]) -> tuple[str, ...]:
        """Raise the counters' maxima and the bounds' tightness by a terminal's values, and return
        the bounds they break. Each bound is judged once per valuation of what it reads."""
        at = self.terminal_max.setdefault(state.location, {})
        values = state.values
        for name, k in counters:
            v = int(values[k])
            if name not in self.max or v > self.max[name]:
                self.max[name] = v
            if name not in at or v > at[name]:
                at[name] = v
        broken = []
        env: dict[str, Value] | None = None
        for b, pick, memo in self._bound_memos:
            name = b.claim.name
            if not b.claim.judged_at(state.location):
                continue
            key = pick(values)
            judged = memo.get(key)
            if judged is None:
                if env is None:
                    env = dict(self.machine.params)
                    env.update(zip(self.machine.var_names, values, strict=True))
                sides = None
                if b.lhs is not None and b.rhs is not None:
                    sides = (int(b.lhs(env)), int(b.rhs(env)))
                judged = memo[key] = (bool(b.check(env)), sides)
            holds, sides = judged
            if not holds:
                broken.append(name)
            if sides is not None:
                lhs, rhs = sides
                if name not in self.lhs_max or lhs > self.lhs_max[name]:
                    self.lhs_max[name] = lhs
                if lhs == rhs:
                    self.tight[name] = True
        return tuple(broken)

    # -- verdicts ------------------------------------------------------------

    def summary(self, seconds: float) -> Summary:
        table, search = self.table, self.search
        violations: list[Violation] = []
        claims: list[ClaimResult] = []
        for c in (*self.state_claims, *self.bounds):
            claim = c.claim
            kind: ClaimKind = claim.kind
            node = self.first.get(claim.name)
            claims.append(self._claim_result(c, node))
            if node is not None:
                violations.append(self._state_violation(claim.name, kind, node, c))
        for p in table.trace_properties:
            node = self.first.get(p.name)
            verdict: Verdict = self._undecided() if node is None else "violated"
            claims.append(ClaimResult(p.name, "trace_property", describe_property(p), p.expect, verdict))
            if node is not None:
                violations.append(self._property_violation(p, node))
        claims.append(self._termination(violations))
        claims.append(self._determinism(violations))
        ids = [t.id for t in table.transitions]
        covered = {tid: search.coverage[tid] for tid in ids if tid in search.coverage}
        return Summary(
            profile=table.name,
            params=dict(self.machine.params),
            states=len(search.nodes),
            edges=len(search.dst),
            stored="all" if search.all_states else "atomic",
            intermediate=search.intermediate,
            terminals={name: self.terminals[name] for name in table.terminals if name in self.terminals},
            max={name: self.max[name] for name in table.counters if name in self.max},
            claims=tuple(claims),
            violations=tuple(violations),
            covered=covered,
            uncovered=tuple(tid for tid in ids if tid not in covered),
            complete=search.complete,
            seconds=seconds,
            limit=search.limit,
            terminal_max={t: dict(self.terminal_max[t]) for t in table.terminals if t in self.terminal_max},
        )

    def _undecided(self) -> Verdict:
        """What a claim not refuted is: `holds` after a complete search, else not decided."""
        return "holds" if self.search.complete else "unknown"

    def _claim_result(self, c: StateClaim, node: int | None) -> ClaimResult:
        claim = c.claim
        verdict: Verdict = self._undecided() if node is None else "violated"
        if claim.kind != "bound" or c.lhs is None or c.rhs is None:
            return ClaimResult(claim.name, claim.kind, claim.text, claim.expect, verdict)
        rhs = int(c.rhs(dict(self.machine.params))) if c.rhs_params_only else None
        return ClaimResult(
            claim.name,
            "bound",
            claim.text,
            claim.expect,
            verdict,
            tight=self.tight[claim.name],
            lhs_max=self.lhs_max.get(claim.name),
            rhs=rhs,
        )

    def _witness(self, path: list[PathStep], loop_start: int | None = None) -> tuple[Witness, Replay]:
        r = replay(self.machine, None, path)
        w = Witness(tuple(path), r.script, r.trace, probe_line(self.table, r.trace), loop_start)
        return w, r

    def _replay_problem(self, path: list[PathStep], r: Replay) -> str | None:
        taken = [s.transition for s in path]
        if r.trace.path != taken:
            return f"the interpreter took {r.trace.path}, the explorer's path is {taken}"
        if outcome_script(r.trace) != r.script:
            return "the interpreter consumed a different host script than the witness's"
        return None

    def _reading(self, expr: Expr, state: State) -> str:
        """The values an expression reads in a state, in the order the table declares them."""
        names = {r.name for r in refs(expr)}
        env = self.machine.env(state)
        order = [*self.machine.var_names, *self.machine.params]
        return ", ".join(f"{n}={_fmt(env[n])}" for n in order if n in names)

    def _describe(self, state: State) -> str:
        return f"at {state.location} {self.machine.describe(state)}"

    def _state_violation(self, name: str, kind: ClaimKind, node: int, c: StateClaim) -> Violation:
        path = self.search.path_to(node)
        w, r = self._witness(path)
        state = self.search.nodes[node][0]
        if c.claim.step is not None:
            message = f"a call broke it ({c.claim.text}), at {state.location}"
        else:
            message = (
                f"{render(c.claim.expr)} fails at {state.location} with {self._reading(c.claim.expr, state)}"
            )
        problem = self._replay_problem(path, r)
        if problem is None:
            last = r.visited[-1]
            env = self.machine.env(last)
            if kind == "bound" and not self.table.is_terminal(r.trace.terminal):
                problem = f"the replay ended at {r.trace.terminal}, not at a terminal"
            elif c.check(env):
                problem = f"the claim holds in the replayed state {self.machine.describe(last)}"
        return Violation(name, kind, message, w, problem)

    def _property_violation(self, p: TraceProperty, node: int) -> Violation:
        path = self.search.path_to(node)
        w, r = self._witness(path)
        message = f"{describe_property(p)}: broken by the path's last call"
        problem = self._replay_problem(path, r)
        if problem is None and p.name not in {q.name for q in check_trace(self.table, r.trace)}:
            problem = "the replayed trace satisfies the property"
        return Violation(p.name, "trace_property", message, w, problem)

    def _termination(self, violations: list[Violation]) -> ClaimResult:
        search, table = self.search, self.table
        expect: Expect = "holds" if table.step_horizon is None else "either"
        text = "every run reaches a terminal"
        if table.step_horizon is not None:
            text += f" (explored to {table.step_horizon} host calls)"
        cyclic = search.cyclic_nodes()
        if cyclic:
            start, loop = search.lasso(cyclic)
            prefix = search.path_to(start)
            path = prefix + [
                s for a, b in itertools.pairwise(loop) for s in search.steps_of(search.edge_label(a, b))
            ]
            w, r = self._witness(path, len(prefix))
            problem = self._replay_problem(path, r)
            if problem is None and r.visited[len(prefix)] != r.visited[-1]:
                problem = "the interpreter did not come back to the state the loop starts from"
            state = search.nodes[start][0]
            message = (
                f"a run may loop forever: {len(loop) - 1} transitions lead back to {self._describe(state)}"
            )
            violations.append(Violation(TERMINATES, "termination", message, w, problem))
            return ClaimResult(TERMINATES, "termination", text, expect, "violated")
        if search.horizon_leaves:
            node = search.horizon_leaves[0]
            path = search.path_to(node)
            w, r = self._witness(path)
            problem = self._replay_problem(path, r)
            if problem is None and r.trace.terminal != HORIZON:
                problem = f"the replay ended at {r.trace.terminal}, not at the horizon"
            message = f"horizon reached: {table.step_horizon} host calls without a terminal"
            violations.append(Violation(TERMINATES, "termination", message, w, problem))
            return ClaimResult(TERMINATES, "termination", text, expect, "violated")
        if not search.complete:
            return ClaimResult(TERMINATES, "termination", text, expect, "unknown")
        return ClaimResult(TERMINATES, "termination", text, expect, "holds")

    def _determinism(self, violations: list[Violation]) -> ClaimResult:
        text = "exactly one transition enabled in every reachable state"
        if not self.search.run_errors:
            return ClaimResult(DETERMINISTIC, "determinism", text, "holds", self._undecided())
        node = min(self.search.run_errors)
        error = self.search.run_errors[node]
        path = self.search.path_to(node)
        w, r = self._witness(path)
        problem = self._replay_problem(path, r)
        if problem is None:
            again = _run_error(self.machine, path)
            if type(again) is not type(error) or str(again) != str(error):
                problem = f"the interpreter raised {again!r} instead of {error!r}"
        violations.append(Violation(DETERMINISTIC, "determinism", str(error), w, problem))
        return ClaimResult(DETERMINISTIC, "determinism", text, "holds", "violated")
