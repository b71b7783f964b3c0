"""The Hypothesis state machine generated from a table.

The scheduler decides which host operation comes next, so the machine does not
choose operations: its rule plays one turn, answering each host call the
scheduler asks for with an outcome drawn from that operation's finite domain
(swarm-style, `fuzz_swarm`). The reference run checks the table's invariants at
every state, its bounds at every terminal and its trace properties after every
call. A plugged-in scheduler runs alongside the reference on the same outcomes:
its every request and its end must equal the reference's, or the machine fails
with the first divergence (`fuzz_implementation`).

    TestMyLoop = machine_for(load_profile("deeptutor-scheduler"),
                             scheduler=lambda: ThreadedScheduler(my_run)).TestCase
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import StopTest
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from turnbound.properties.fuzz.checked_run import CheckedRun, Finding, TableChecks
from turnbound.properties.fuzz.coverage import Coverage, Tally
from turnbound.properties.fuzz.implementation import Implementation
from turnbound.properties.fuzz.report import counterexample, render_counterexample
from turnbound.properties.fuzz.settings import fuzz_settings, same_draws
from turnbound.properties.fuzz.swarm import (
    ParamChoice,
    Swarm,
    outcomes,
    parameter_values,
    parameters,
    plan,
    swarms,
)
from turnbound.properties.scheduler import Scheduler
from turnbound.reference.arguments import require_factory, require_table
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table

SchedulerFactory = Callable[[], Scheduler]


class FuzzFailure(AssertionError):
    """A counterexample: the message is the replayable text, `counterexample` the same as JSON."""

    def __init__(self, cx: dict[str, Any]) -> None:
        super().__init__(render_counterexample(cx))
        self.counterexample = cx


def machine_for(
    table: Table,
    params: Mapping[str, ParamChoice] | None = None,
    scheduler: SchedulerFactory | None = None,
    *,
    settings: str = "quick",
    coverage: Coverage | None = None,
) -> type[RuleBasedStateMachine]:
    """A `RuleBasedStateMachine` for `table`; its `.TestCase` runs under pytest with the named settings.

    `params` fixes a parameter (an int) or narrows the values it is drawn from (a
    sequence); the others are drawn from their declared `range`. `scheduler` makes a
    fresh implementation under test for each example; without one the reference
    alone is checked against the table's claims.
    """
    require_table(table, "machine_for")
    if scheduler is not None:
        require_factory(scheduler, "machine_for", "scheduler")
    checks = TableChecks(table)
    max_calls = fuzz_settings(settings).max_calls
    param_strategy = parameters(parameter_values(table, params))
    swarm_strategy = swarms(checks.domains)

    class TableMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.swarm: Swarm | None = None
            self.run: CheckedRun | None = None
            self.tally = Tally()
            self.impl = Implementation(scheduler(), checks) if scheduler is not None else None
            self.strategies: dict[str, st.SearchStrategy[tuple[str, Outcome]]] = {}

        @initialize(swarm=swarm_strategy)
        def setup(self, swarm: Swarm) -> None:
            """Choose this example's swarm: which facts stay pinned, how often each failure is raised."""
            self.swarm = swarm

        @rule(params=param_strategy, data=st.data())
        def turn(self, params: dict[str, int], data: st.DataObject) -> None:
            """One turn with `params`: answer each host call the scheduler asks for, until it ends.

            A whole turn per rule, not one host call per rule: the shrinker deletes a rule's
            draws as a unit, so the failing turn moves to the front of the example in one
            step instead of fighting turns of varying length. Within the turn each answer
            is its own draw (a span the shrinker can simplify or drop).
            """
            self._begin(params)
            run = self.run
            assert run is not None
            while run.pending is not None and len(run.steps) < max_calls:
                self._answer(run, data)
            if run.pending is not None:
                run.cut(max_calls)
            self.tally.turn_over(run)

        def _answer(self, run: CheckedRun, data: st.DataObject) -> None:
            assert run.pending is not None and self.swarm is not None
            op = run.pending[0].op or ""
            strategy = self.strategies.get(op)
            if strategy is None:
                strategy = outcomes(checks.domains, plan(checks.domains, self.swarm, op))
                self.strategies[op] = strategy
            kind, outcome = data.draw(strategy, label=op)
            self.tally.outcome(op, kind)
            finding = run.answer(outcome)
            if self.impl is not None:
                self.impl.send(outcome, rejected=run.violation is not None)
            self._settle(finding)

        def teardown(self) -> None:
            if self.impl is not None:
                self.impl.scheduler.close()
            if coverage is not None and not _cut_short():
                coverage.commit(self.tally)

        def _begin(self, params: dict[str, int]) -> None:
            self.run, finding = CheckedRun.begin_run(checks, params)
            self.tally.turns += 1
            if self.impl is not None:
                self.impl.start(self.run.params)
            self._settle(finding)

        def _settle(self, finding: Finding | None) -> None:
            """Fail on the reference's finding, else on a divergence of the implementation."""
            run = self.run
            assert run is not None
            observed = None
            if finding is None and self.impl is not None and not self.impl.agrees(run.request):
                finding = self.impl.finding(len(run.steps), run.params)
                observed = self.impl.observed()
            if finding is None:
                return
            self.tally.turn_over(run)
            if coverage is not None:
                coverage.commit(self.tally)
                coverage.freeze()
            raise FuzzFailure(counterexample(table, run, finding, observed))

    TableMachine.__name__ = TableMachine.__qualname__ = _class_name(table.name)
    case = TableMachine.TestCase  # one class per machine: Hypothesis caches it
    case.settings = fuzz_settings(settings).hypothesis()
    hypothesis_run = case.runTest

    def run_test(self: Any) -> None:
        """Under pytest too, the draws depend on the settings alone (see `same_draws`)."""
        with same_draws():
            hypothesis_run(self)

    run_test.__dict__.update(hypothesis_run.__dict__)  # Hypothesis's pytest plugin reads these marks
    case.runTest = run_test  # type: ignore[method-assign]
    return TableMachine


def _cut_short() -> bool:
    """Whether Hypothesis is unwinding this example because it ran out of choices (not a real run)."""
    return isinstance(sys.exc_info()[1], StopTest)


def _class_name(profile: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", profile)
    name = "".join(w[:1].upper() + w[1:] for w in words if w)
    return (name if name[:1].isalpha() else f"T{name}") + "Machine"


__all__ = ["FuzzFailure", "SchedulerFactory", "machine_for"]
