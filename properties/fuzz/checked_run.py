"""A reference run stepped one host call at a time that checks the table's claims at every state.

The Hypothesis machine feeds it outcomes; it is both the system checked against the
table's invariants, bounds and trace properties and, when a user plugs in their own
scheduler, the oracle that scheduler is compared with. Unlike `ReferenceScheduler`,
it sees every state, internal transitions included, so an invariant broken by an
internal update is caught where it breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from turnbound.properties.fuzz.swarm import OutcomeDomains
from turnbound.reference.errors import LimitReached, Livelock, RunError
from turnbound.reference.judge import Judge, fmt_value, ordered_refs
from turnbound.reference.machine import Machine
from turnbound.reference.monitors import MonitorState
from turnbound.reference.stepping import Turn, step_limit
from turnbound.reference.table import Claim, Table
from turnbound.reference.trace import Step
from turnbound.reference.types import Value

__all__ = ["COMPLETION_LIMIT", "CheckedRun", "Finding", "TableChecks", "fmt_value", "ordered_refs"]

COMPLETION_LIMIT = 1_000
"""Host calls allowed when a cut-off run is finished with simple outcomes so its script replays."""


@dataclass(frozen=True)
class Finding:
    """Why a run is a counterexample. `step`: host calls completed when it was found."""

    kind: str
    name: str
    message: str
    step: int


class TableChecks:
    """Everything compiled once per table: the judge, outcome domains, machines per parameters."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.judge = Judge(table)
        self.invariants = self.judge.invariants
        self.bounds = self.judge.bounds
        self.counter_bounds = self.judge.counter_bounds
        self.monitors = self.judge.monitors
        self.domains = OutcomeDomains(table)
        self.horizon = step_limit(table)
        self._machines: dict[tuple[tuple[str, int], ...], Machine] = {}

    def machine(self, params: Mapping[str, int]) -> Machine:
        key = tuple(sorted(params.items()))
        machine = self._machines.get(key)
        if machine is None:
            machine = self._machines[key] = Machine(self.table, params)
        return machine

    def claim_message(self, claim: Claim, env: Mapping[str, Value], where: str) -> str:
        return self.judge.claim_message(claim, env, where)


class CheckedRun(Turn[Finding]):
    """One turn of the reference (`stepping.Turn`), judged as it goes: each step returns the first
    claim broken, or why the turn cannot go on."""

    def __init__(self, checks: TableChecks, machine: Machine) -> None:
        super().__init__(machine)
        self.checks = checks
        self.monitor: MonitorState = checks.monitors.initial()
        self.witnessed: set[str] = set()
        """Claims and trace properties expected to be violated that this run refuted."""
        self.stopped = False
        """The turn cannot go on (stuck, nondeterministic, livelock, a limit)."""

    @classmethod
    def begin_run(cls, checks: TableChecks, params: Mapping[str, int]) -> tuple[CheckedRun, Finding | None]:
        run = cls(checks, checks.machine(params))
        return run, run.begin()

    @property
    def params(self) -> dict[str, int]:
        return dict(self.machine.params)

    # -- the judge, at each point the turn reaches -------------------------------

    def on_state(self) -> Finding | None:
        env = self.machine.env(self.state)
        return self._first(self.checks.judge.broken_invariants(env), env, "invariant", None)

    def on_terminal(self) -> Finding | None:
        env = self.machine.env(self.state)
        broken = self.checks.judge.broken_bounds(self.state.location, env)
        return self._first(broken, env, "bound", f"at terminal {self.terminal}")

    def on_call(self, step: Step) -> Finding | None:
        self.monitor = self.checks.monitors.step(self.monitor, step.op, step.args, step.outcome)
        for p in self.checks.judge.broken_properties(self.monitor):
            if p.expect == "violated":
                self.witnessed.add(p.name)
                continue
            return Finding(
                "trace property",
                p.name,
                f"trace property {p.name} is broken at step {len(self.steps)} ({step.op})",
                len(self.steps),
            )
        return None

    def on_error(self, error: RunError) -> Finding | None:
        self.pending, self.stopped = None, True
        if isinstance(error, Livelock):
            return Finding("livelock", self.path[-1] if self.path else "", str(error), len(self.steps))
        if isinstance(error, LimitReached):
            return Finding("limit", error.limit, str(error), len(self.steps))
        return Finding("stuck", type(error).__name__, str(error), len(self.steps))

    def _first(
        self, broken: list[Claim], env: Mapping[str, Value], kind: str, where: str | None
    ) -> Finding | None:
        for claim in broken:
            if claim.expect == "violated":
                self.witnessed.add(claim.name)
                continue
            message = self.checks.claim_message(claim, env, where or self.where())
            return Finding(kind, claim.name, message, len(self.steps))
        return None

    def cut(self, calls: int | None = None) -> None:
        """Stop a turn that is still asking for host calls (an unbounded turn)."""
        super().cut()

    def complete(self) -> bool:
        """Finish a cut-off run with each operation's simplest outcome, so its script replays to the end.

        Findings after the first do not matter: the first one is reported.
        """
        if self.stopped:
            return False
        for _ in range(COMPLETION_LIMIT):
            if self.pending is None and self.terminal is None:
                self.advance()
            if self.stopped:
                return False
            if self.pending is None:
                return self.terminal is not None
            self.answer(self.checks.domains.first(self.pending[0].op or ""))
        return self.ended
