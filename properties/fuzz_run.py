"""A reference run stepped one host call at a time that checks the table's claims at every state.

The Hypothesis machine feeds it outcomes; it is both the system checked against the
table's invariants, bounds and trace properties and, when a user plugs in their own
scheduler, the oracle that scheduler is compared with. Unlike `ReferenceScheduler`,
it sees every state, internal transitions included, so an invariant broken by an
internal update is caught where it breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from turnbound.properties.fuzz_swarm import OutcomeDomains
from turnbound.properties.scheduler import End, OpRequest
from turnbound.reference.errors import RunError
from turnbound.reference.expr import Expr, Ref, render, walk
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.interpreter import DEFAULT_MAX_STEPS
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors, MonitorState
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import CONTRACT_VIOLATION, Claim, Table, Transition
from turnbound.reference.trace import HORIZON, Step, Trace
from turnbound.reference.types import Value

COMPLETION_LIMIT = 1_000
"""Host calls allowed when a cut-off run is finished with simple outcomes so its script replays."""


@dataclass(frozen=True)
class Finding:
    """Why a run is a counterexample. `step`: host calls completed when it was found."""

    kind: str
    name: str
    message: str
    step: int


def ordered_refs(expr: Expr) -> list[str]:
    """The names an expression reads, in reading order (for stable messages)."""
    seen: dict[str, None] = {}
    for node in walk(expr):
        if isinstance(node, Ref):
            seen.setdefault(node.name, None)
    return list(seen)


def fmt_value(value: Value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


class TableChecks:
    """Everything compiled once per table: claims, monitors, outcome domains, machines per parameters."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.invariants: tuple[tuple[Claim, Compiled], ...] = tuple(
            (c, compile_expr(c.expr)) for c in (*table.invariants, *table.lemmas)
        )
        self.bounds: tuple[tuple[Claim, Compiled], ...] = tuple(
            (c, compile_expr(c.expr)) for c in table.bounds
        )
        visible = {p.name for p in table.parameters} | set(table.counters)
        self.counter_bounds = tuple((c, fn) for c, fn in self.bounds if set(ordered_refs(c.expr)) <= visible)
        """Bounds over parameters and counters only: checkable on what an implementation reports."""
        self.monitors = Monitors(table)
        self.domains = OutcomeDomains(table)
        self.horizon = table.step_horizon or DEFAULT_MAX_STEPS
        self._machines: dict[tuple[tuple[str, int], ...], Machine] = {}

    def machine(self, params: Mapping[str, int]) -> Machine:
        key = tuple(sorted(params.items()))
        machine = self._machines.get(key)
        if machine is None:
            machine = self._machines[key] = Machine(self.table, params)
        return machine

    def claim_message(self, claim: Claim, env: Mapping[str, Value], where: str) -> str:
        values = ", ".join(f"{n}={fmt_value(env[n])}" for n in ordered_refs(claim.expr) if n in env)
        return f"{claim.kind} {claim.name} is false {where}: {render(claim.expr)} with {values}"


@dataclass
class CheckedRun:
    """One turn of the reference, advanced by `answer`; each method returns the first claim broken."""

    checks: TableChecks
    machine: Machine
    state: State
    steps: list[Step] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    pending: tuple[Transition, dict[str, Value]] | None = None
    terminal: str | None = None
    violation: str | None = None
    monitor: MonitorState = ()
    witnessed: set[str] = field(default_factory=set)
    """Claims and trace properties expected to be violated that this run refuted."""

    @classmethod
    def begin(cls, checks: TableChecks, params: Mapping[str, int]) -> tuple[CheckedRun, Finding | None]:
        machine = checks.machine(params)
        run = cls(checks, machine, machine.initial(), monitor=checks.monitors.initial())
        return run, run._check_state("in the initial state") or run._advance()

    @property
    def params(self) -> dict[str, int]:
        return dict(self.machine.params)

    @property
    def request(self) -> OpRequest | End:
        if self.pending is not None:
            return OpRequest(self.pending[0].op or "", dict(self.pending[1]))
        return End(self.terminal or self.state.location, self.machine.counters(self.state))

    def answer(self, outcome: Outcome) -> Finding | None:
        assert self.pending is not None, "no host call is pending"
        t, args = self.pending
        op = t.op or ""
        self.pending = None
        violation = self.machine.violation(t, outcome)
        if violation is None:
            self.monitor = self.checks.monitors.step(self.monitor, op, args, outcome)
            self.state = self.machine.take_outcome(self.state, t, outcome)
        else:
            self.state = self.machine.contract_state(self.state)
        self.steps.append(
            Step.model_construct(
                op=op, args=args, outcome=outcome, counters=self.machine.counters(self.state), transition=t.id
            )
        )
        if violation is not None:
            # The host broke its contract and the turn was rejected: bounds speak of the
            # table's own terminals (the explorer and the prover never reach this one).
            self.violation, self.terminal = violation, CONTRACT_VIOLATION
            return self._check_state(self._after())
        return self._check_monitors() or self._check_state(self._after()) or self._advance()

    def _after(self) -> str:
        return f"after step {len(self.steps)} ({self.steps[-1].transition})"

    def _advance(self) -> Finding | None:
        seen: set[State] = set()
        while not self.machine.is_terminal(self.state):
            if len(self.steps) >= self.checks.horizon:
                self.terminal = HORIZON
                return None
            try:
                t = self.machine.select(self.state)
            except RunError as exc:
                return Finding("stuck", type(exc).__name__, str(exc), len(self.steps))
            self.path.append(t.id)
            if t.op is not None:
                self.pending = (t, self.machine.args(self.state, t))
                return None
            if self.state in seen:
                return Finding(
                    "livelock",
                    t.id,
                    f"internal transitions loop at location {self.state.location!r} without a host call "
                    f"({' -> '.join(self.path[-len(seen) - 1 :])})",
                    len(self.steps),
                )
            seen.add(self.state)
            self.state = self.machine.take_internal(self.state, t)
            broken = self._check_state(f"after internal transition {t.id} (following step {len(self.steps)})")
            if broken:
                return broken
        self.terminal = self.state.location
        return self._check_terminal()

    def _check_state(self, where: str) -> Finding | None:
        env = self.machine.env(self.state)
        return self._check(self.checks.invariants, env, "invariant", where)

    def _check_terminal(self) -> Finding | None:
        env = self.machine.env(self.state)
        return self._check(self.checks.bounds, env, "bound", f"at terminal {self.terminal}")

    def _check(
        self, claims: tuple[tuple[Claim, Compiled], ...], env: Mapping[str, Value], kind: str, where: str
    ) -> Finding | None:
        for claim, holds in claims:
            if holds(env):
                continue
            if claim.expect == "violated":
                self.witnessed.add(claim.name)
                continue
            return Finding(kind, claim.name, self.checks.claim_message(claim, env, where), len(self.steps))
        return None

    def _check_monitors(self) -> Finding | None:
        for p in self.checks.monitors.violated(self.monitor):
            if p.expect == "violated":
                self.witnessed.add(p.name)
                continue
            step = self.steps[-1]
            return Finding(
                "trace property",
                p.name,
                f"trace property {p.name} is broken at step {len(self.steps)} ({step.op})",
                len(self.steps),
            )
        return None

    def cut(self, calls: int) -> None:
        """Stop a turn that is still asking for host calls after `calls` of them (an unbounded turn)."""
        self.pending = None
        self.terminal = HORIZON

    @property
    def ended(self) -> bool:
        return self.pending is None and self.terminal is not None

    def complete(self) -> bool:
        """Finish a cut-off run with each operation's simplest outcome, so its script replays to the end.

        Findings after the first do not matter: the first one is reported.
        """
        for _ in range(COMPLETION_LIMIT):
            if self.pending is None and self.terminal is None:
                self._advance()
            if self.pending is None:
                return self.terminal is not None
            self.answer(self.checks.domains.first(self.pending[0].op or ""))
        return self.ended

    def trace(self) -> Trace:
        return Trace(
            profile=self.checks.table.name,
            params=self.params,
            steps=list(self.steps),
            terminal=self.terminal or self.state.location,
            counters=self.machine.counters(self.state),
            variables=self.machine.variables(self.state),
            path=list(self.path),
            violation=self.violation,
        )
