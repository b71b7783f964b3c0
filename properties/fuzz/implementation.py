"""The implementation under test as the Hypothesis machine sees it: its requests, its end, its faults.

It runs beside the reference on the same outcomes. When they part, the report leads
with the most telling name for the difference: a trace property the implementation
is about to break, a bound its reported counters break, or else the plain divergence;
the first-divergence line itself comes from `scheduler.first_divergence`, so it is
the same line a replay with `scheduler.drive` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from turnbound.properties.fuzz.checked_run import Finding, TableChecks
from turnbound.properties.scheduler import End, Observed, OpRequest, Request, Scheduler
from turnbound.reference.outcomes import Outcome
from turnbound.reference.trace import HORIZON
from turnbound.reference.types import Value


class Implementation:
    """What the plugged-in scheduler did in the current turn."""

    def __init__(self, scheduler: Scheduler, checks: TableChecks) -> None:
        self.scheduler = scheduler
        self.checks = checks
        self.calls: list[tuple[str, dict[str, Value], Outcome | None]] = []
        self.request: Request | None = None
        self.fault: str | None = None
        self.monitor = checks.monitors.initial()

    def start(self, params: Mapping[str, int]) -> None:
        self.calls, self.request, self.fault = [], None, None
        self.monitor = self.checks.monitors.initial()
        self._call(lambda: self.scheduler.start(params), "start")

    def send(self, outcome: Outcome, rejected: bool) -> None:
        assert isinstance(self.request, OpRequest)
        op, args = self.request.op, self.request.args
        self.calls.append((op, args, outcome))
        if not rejected:
            self.monitor = self.checks.monitors.step(self.monitor, op, args, outcome)
        self._call(lambda: self.scheduler.send(outcome), "send")

    def _call(self, step: Callable[[], Request], what: str) -> None:
        try:
            self.request = step()
        except Exception as exc:  # whatever the implementation raises is its fault, reported as one line
            self.request, self.fault = None, str(exc) or f"{what} raised {type(exc).__name__}"

    def observed(self) -> Observed:
        calls = list(self.calls)
        if isinstance(self.request, OpRequest):
            calls.append((self.request.op, self.request.args, None))
        end = self.request if isinstance(self.request, End) else None
        return Observed(tuple(calls), end, self.fault)

    def agrees(self, expected: OpRequest | End) -> bool:
        if self.fault is not None:
            return False
        if isinstance(expected, End) and expected.terminal == HORIZON:
            # the reference was cut off at its step horizon: an implementation still asking
            # for host calls there agrees (the driver's horizon policy, `scheduler.drive`)
            return isinstance(self.request, OpRequest) or (
                isinstance(self.request, End) and self.request.terminal == HORIZON
            )
        return self.request == expected

    def finding(self, step: int, params: Mapping[str, int]) -> Finding:
        """The most telling name for a divergence: a broken trace property or bound, else the divergence."""
        req = self.request
        if self.fault is not None:
            return Finding("implementation", "fault", f"the implementation failed: {self.fault}", step)
        if isinstance(req, OpRequest):
            if req.op not in self.checks.table.operations:
                return Finding(
                    "implementation", "unknown operation", f"the implementation asked for {req.op!r}", step
                )
            probe = self.checks.monitors.step(
                self.monitor, req.op, req.args, self.checks.domains.first(req.op)
            )
            for p in self.checks.monitors.violated(probe):
                if p.expect == "holds":
                    return Finding(
                        "implementation",
                        p.name,
                        f"the implementation breaks trace property {p.name} at step {step + 1} ({req.op})",
                        step,
                    )
        if isinstance(req, End):
            env: dict[str, Value] = {**params, **req.counters}
            for claim in self.checks.judge.broken_counter_bounds(req.terminal, env):
                if claim.expect == "holds":
                    where = f"on the counters it reported at {req.terminal}"
                    message = self.checks.claim_message(claim, env, where)
                    return Finding("implementation", claim.name, f"the implementation's {message}", step)
        return Finding("implementation", "divergence", "the implementation diverges from the reference", step)
