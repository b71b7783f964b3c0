"""Conformance by the table's Hypothesis machine (`turnbound.properties.fuzz.session`).

The machine answers the implementation's host calls with outcomes Hypothesis draws,
many turns per example, and runs the reference alongside on the same outcomes; the
first disagreement fails the example, which Hypothesis then shrinks. The shrunk
counterexample's turn is replayed on the implementation as an ordinary case, so it
is reported like every other failing case (first divergence, steps side by side).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from turnbound.properties.conformance.cases import ConformCaseResult, run_case, try_case
from turnbound.properties.fuzz.session import fuzz
from turnbound.properties.scheduler import (
    BREAKER,
    PROCESS_FAULTS,
    End,
    Request,
    Scheduler,
    SchedulerFault,
)
from turnbound.reference.host import Script
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table


@dataclass(frozen=True)
class MachineResult:
    examples: int
    turns: int
    steps: int
    seed: int
    message: str | None
    """What the machine found (its finding, then the first divergence), or None."""
    failure: ConformCaseResult | None
    """The counterexample replayed on the implementation as a case, when it replays."""

    @property
    def passed(self) -> bool:
        return self.message is None

    @property
    def id(self) -> str:
        return f"hypothesis-seed-{self.seed}"


class _KeepOpen:
    """One implementation for every example: the machine closes its scheduler after each one,
    but restarting a process per example would cost more than the example itself.

    Once BREAKER runs in a row failed with the same process fault (a hang, say), every later
    start fails at once with that fault: Hypothesis then shrinks without paying a timeout per step.
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.streak: list[SchedulerFault] = []

    def start(self, params: Mapping[str, int]) -> Request:
        if len(self.streak) >= BREAKER:
            last = self.streak[-1]
            raise SchedulerFault(f"not started: {BREAKER} runs in a row failed: {last}", last.kind)
        return self._watch(lambda: self.scheduler.start(params))

    def send(self, outcome: Outcome) -> Request:
        return self._watch(lambda: self.scheduler.send(outcome))

    def _watch(self, call: Callable[[], Request]) -> Request:
        try:
            request = call()
        except SchedulerFault as exc:
            same = not self.streak or self.streak[-1].kind == exc.kind
            if exc.kind in PROCESS_FAULTS:
                self.streak = [*self.streak, exc] if same else [exc]
            raise
        if isinstance(request, End):
            self.streak = []
        return request

    def close(self) -> None:
        """Nothing: an unfinished case is ended when the next one starts."""


def run_machine(table: Table, scheduler: Scheduler, examples: int, seed: int) -> MachineResult:
    kept = _KeepOpen(scheduler)
    result = fuzz(table, examples=examples, seed=seed, scheduler=lambda: kept)
    cx = result.counterexample
    if cx is None:
        return MachineResult(result.examples_run, result.turns, result.steps, seed, None, None)
    message = cx["violation"]["message"]
    if cx.get("divergence"):
        message += f"; first divergence: {cx['divergence']}"
    case = try_case(
        table, f"hypothesis-seed-{seed}", "fuzz", dict(cx["params"]), Script.model_validate(cx["script"])
    )
    failure = run_case(scheduler, case) if case is not None else None
    return MachineResult(result.examples_run, result.turns, result.steps, seed, message, failure)
