"""The conformance runner: an implementation under test against the reference, case by case.

Each case's host script answers the implementation's host calls; what it asked for,
in what order, with which arguments, and how it ended (terminal, counters) is compared
with the reference's trace of the same script. A failing generated case is shrunk to
the smallest script that still fails before it is reported.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from turnbound.properties.conformance.cases import ConformCase, ConformCaseResult, run_case
from turnbound.properties.conformance.generated import shrink
from turnbound.properties.conformance.machine import MachineResult, run_machine
from turnbound.properties.scheduler import (
    BREAKER,
    FAULT_EXIT,
    FAULT_HANG,
    PROCESS_FAULTS,
    SCRIPT_EXHAUSTED,
    Observed,
    Scheduler,
    fmt_values,
)
from turnbound.reference.outcomes import Outcome, outcome_text
from turnbound.reference.table import Table
from turnbound.reference.types import Value

CONTEXT_STEPS = 3
"""Steps shown before the first divergence in a failure's details."""


SHRINK_TOTAL = 1000
"""Shrink runs for a whole conformance run, shared by every failure that is shrunk."""


@dataclass(frozen=True)
class ConformReport:
    profile: str
    implementation: str
    results: tuple[ConformCaseResult, ...]
    seconds: float
    restarts: int = 0
    machine: MachineResult | None = None
    """The Hypothesis machine's run, counted as one case."""
    not_run: tuple[ConformCase, ...] = ()
    """Cases left out after the run stopped early (`stopped` says why)."""
    stopped: str | None = None
    duplicates: Mapping[str, str] = field(default_factory=dict)
    """A generated failing case's id -> the case with the same first divergence that was shrunk instead."""

    @property
    def failures(self) -> list[ConformCaseResult]:
        return [r for r in self.results if not r.passed]

    @property
    def passed(self) -> bool:
        return not self.failures and not self.stopped and (self.machine is None or self.machine.passed)

    @property
    def summary(self) -> str:
        n = len(self.results) + len(self.not_run) + (self.machine is not None)
        f = len(self.failures) + (self.machine is not None and not self.machine.passed)
        text = f"{n} cases: {n - f - len(self.not_run)} passed, {f} failed"
        if self.stopped:
            text += f", {len(self.not_run)} not run"
        return text


Progress = Callable[[int, int], None]
"""Told (cases done, cases in all) as the run goes."""


def conform(
    table: Table,
    scheduler: Scheduler,
    cases: Sequence[ConformCase],
    *,
    implementation: str = "",
    shrink_budget: int = 400,
    shrink_total: int = SHRINK_TOTAL,
    machine_examples: int = 0,
    seed: int = 0,
    restarts: Callable[[], int] | None = None,
    keep_going: bool = False,
    progress: Progress | None = None,
) -> ConformReport:
    """Run every case through one scheduler, shrinking failing generated ones; then the Hypothesis
    machine for `machine_examples` examples, if asked.

    After BREAKER cases in a row fail for the same process-level reason (the implementation
    hangs, exits or breaks the protocol), the rest are not run unless `keep_going`: such an
    implementation would fail them all, each at the cost of a timeout or a restart. Generated
    failures are shrunk once per first divergence, within `shrink_total` runs in all.
    """
    began = time.perf_counter()
    results: list[ConformCaseResult] = []
    duplicates: dict[str, str] = {}
    shrunk: dict[tuple[str, ...], str] = {}
    shrink_left = shrink_total
    streak: list[ConformCaseResult] = []
    machine = None
    stopped: str | None = None
    not_run: tuple[ConformCase, ...] = ()
    total = len(cases) + (machine_examples > 0)
    try:
        for index, case in enumerate(cases):
            if progress is not None:
                progress(index, total)
            result = run_case(scheduler, case)
            if not result.passed and case.kind == "fuzz" and shrink_budget > 0:
                key = divergence_key(result)
                if key in shrunk:
                    duplicates[case.id] = shrunk[key]
                elif result.observed.fault_kind != FAULT_HANG and shrink_left > 0:
                    shrunk[key] = case.id
                    result = _shrunk(table, scheduler, result, min(shrink_budget, shrink_left))
                    shrink_left -= result.shrink_runs
            results.append(result)
            streak = _streak(streak, result)
            if len(streak) >= BREAKER and not keep_going:
                stopped = f"{len(streak)} cases in a row: {_reason(streak[-1])}"
                not_run = tuple(cases[index + 1 :])
                break
        if machine_examples > 0 and stopped is None:
            if progress is not None:
                progress(len(cases), total)
            machine = run_machine(table, scheduler, machine_examples, seed)
        if progress is not None:
            progress(total, total)
    finally:
        scheduler.close()
    seconds = time.perf_counter() - began
    return ConformReport(
        table.name,
        implementation,
        tuple(results),
        seconds,
        max(0, restarts()) if restarts else 0,
        machine,
        not_run,
        stopped,
        duplicates,
    )


def _streak(streak: list[ConformCaseResult], result: ConformCaseResult) -> list[ConformCaseResult]:
    kind = result.observed.fault_kind
    if result.passed or kind not in PROCESS_FAULTS:
        return []
    if streak and streak[-1].observed.fault_kind != kind:
        return [result]
    return [*streak, result]


def _reason(result: ConformCaseResult) -> str:
    kind = result.observed.fault_kind
    what = {FAULT_HANG: "the implementation hangs", FAULT_EXIT: "the implementation exits"}.get(
        kind or "", "the implementation breaks the protocol"
    )
    return f"{what}: {result.observed.fault}"


def divergence_key(result: ConformCaseResult) -> tuple[str, ...]:
    """What two failures have in common when they are the same bug: the operations (or terminal,
    or counters) at the first divergence, without the step number or the values around it."""
    expected, observed = result.case.expected, result.observed
    for i, step in enumerate(expected.steps):
        if i >= len(observed.calls):
            got = observed.fault_kind or "fault" if observed.fault else "end"
            return ("missing", step.op, got)
        op, args, _ = observed.calls[i]
        if op != step.op or args != step.args:
            return (
                "call",
                step.op,
                op,
                *sorted(k for k in {*args, *step.args} if args.get(k) != step.args.get(k)),
            )
    if len(observed.calls) > len(expected.steps):
        return ("extra", expected.terminal, observed.calls[len(expected.steps)][0])
    if observed.fault or observed.end is None:
        return ("fault", expected.terminal, observed.fault_kind or "fault")
    if observed.end.terminal != expected.terminal:
        return ("terminal", expected.terminal, observed.end.terminal)
    differ = sorted(
        k
        for k in {*expected.counters, *observed.end.counters}
        if expected.counters.get(k) != observed.end.counters.get(k)
    )
    return ("counters", expected.terminal, *differ)


def _shrunk(table: Table, scheduler: Scheduler, failed: ConformCaseResult, budget: int) -> ConformCaseResult:
    smallest, runs = shrink(table, failed.case, lambda c: not run_case(scheduler, c).passed, budget)
    if smallest is failed.case:
        return ConformCaseResult(
            failed.case, failed.observed, failed.divergence, failed.seconds, failed.case, runs
        )
    final = run_case(scheduler, smallest)
    if final.passed:  # a flaky implementation: report the original failure
        return ConformCaseResult(
            failed.case, failed.observed, failed.divergence, failed.seconds, failed.case, runs
        )
    return ConformCaseResult(smallest, final.observed, final.divergence, final.seconds, failed.case, runs)


# -- reporting ----------------------------------------------------------------------------


def fmt_call(op: str, args: dict[str, Value], outcome: Outcome | None) -> str:
    call = f"{op}({fmt_values(args)})"
    if outcome is None:
        return call
    return f"{call} -> {outcome_text(outcome)}"


def failure_details(result: ConformCaseResult) -> list[str]:
    """The failing case's parameters and its steps next to the reference's, up to the divergence."""
    case, observed = result.case, result.observed
    lines = [f"params: {fmt_values(dict(case.params))}"]
    if result.original is not None and result.original is not case:
        lines.append(
            f"shrunk in {result.shrink_runs} runs from {result.original.size} host outcomes to {case.size}"
        )
    expected = case.expected.steps
    diverged = next(
        (
            i
            for i, step in enumerate(expected)
            if i >= len(observed.calls) or (step.op, step.args) != observed.calls[i][:2]
        ),
        min(len(expected), len(observed.calls)),
    )
    first = max(0, diverged - CONTEXT_STEPS)
    rows = [("#", "reference", "implementation")]
    for i in range(first, max(len(expected), len(observed.calls))):
        if i > diverged:
            break
        ref = fmt_call(expected[i].op, expected[i].args, expected[i].outcome) if i < len(expected) else "end"
        got = fmt_call(*observed.calls[i]) if i < len(observed.calls) else "end"
        rows.append((str(i + 1), ref, "same" if got == ref else got))
    width = max(len(r[1]) for r in rows)
    lines.extend(f"{n:>3}  {ref:<{width}}  {got}" for n, ref, got in rows)
    end = case.expected
    cause = f" (contract violation: {end.violation})" if end.violation else ""
    lines.append(f"reference ends {end.terminal} ({fmt_values(dict(end.counters))}){cause}")
    if observed.end is not None:
        lines.append(
            f"implementation ends {observed.end.terminal} ({fmt_values(dict(observed.end.counters))})"
        )
    elif observed.fault:
        lines.append(f"implementation stopped: {fault_text(observed)}")
    return lines


def fault_text(observed: Observed) -> str | None:
    """Why the implementation's run stopped, worded for its implementer."""
    if observed.fault_kind == SCRIPT_EXHAUSTED and observed.calls:
        op, args, _ = observed.calls[-1]
        return (
            f"it called {op}({fmt_values(args)}), a call the reference does not make there, "
            "so the case has no answer for it"
        )
    return observed.fault


def result_json(
    result: ConformCaseResult, details: bool, duplicate_of: str | None = None
) -> dict[str, object]:
    out: dict[str, object] = {"id": result.case.id, "kind": result.case.kind, "passed": result.passed}
    if not details:
        return out
    if duplicate_of is not None:
        out["same_divergence_as"] = duplicate_of
    case, observed = result.case, result.observed
    out.update(
        {
            "divergence": result.divergence,
            "params": dict(case.params),
            "script": case.script.model_dump(mode="json", by_alias=True, exclude_defaults=True),
            "expected": {
                "ops": [{"op": s.op, "args": s.args} for s in case.expected.steps],
                "terminal": case.expected.terminal,
                "counters": dict(case.expected.counters),
            },
            "observed": {
                "ops": [{"op": op, "args": args} for op, args, _ in observed.calls],
                "terminal": observed.end.terminal if observed.end else None,
                "counters": dict(observed.end.counters) if observed.end else None,
                "fault": fault_text(observed),
            },
        }
    )
    if result.original is not None:
        out["shrunk_from_size"] = result.original.size
    return out


def report_json(report: ConformReport) -> dict[str, object]:
    m = report.machine
    machine = None
    if m is not None:
        machine = {
            "id": m.id,
            "passed": m.passed,
            "examples": m.examples,
            "turns": m.turns,
            "steps": m.steps,
            "seed": m.seed,
            "message": m.message,
            "replayed": result_json(m.failure, details=True) if m.failure is not None else None,
        }
    return {
        "profile": report.profile,
        "implementation": report.implementation,
        "cases": len(report.results) + len(report.not_run),
        "passed": len(report.results) - len(report.failures),
        "failed": len(report.failures),
        "not_run": len(report.not_run),
        "stopped": report.stopped,
        "restarts": report.restarts,
        "results": [
            *(result_json(r, not r.passed, report.duplicates.get(r.case.id)) for r in report.results),
            *({"id": c.id, "kind": c.kind, "passed": False, "not_run": True} for c in report.not_run),
        ],
        "machine": machine,
    }


def junit_xml(report: ConformReport) -> str:
    """JUnit XML for CI: one testcase per case, its divergence as the failure message."""
    m = report.machine
    failures = len(report.failures) + (m is not None and not m.passed)
    tests = len(report.results) + len(report.not_run) + (m is not None)
    suites = ET.Element("testsuites", name="turnbound conform", tests=str(tests))
    suites.set("failures", str(failures))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"conform.{report.profile}",
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped=str(len(report.not_run)),
        time=f"{report.seconds:.3f}",
    )
    if report.implementation:
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="implementation", value=report.implementation)
    for r in report.results:
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=f"conform.{report.profile}.{r.case.kind}",
            name=r.case.id,
            time=f"{r.seconds:.3f}",
        )
        if not r.passed:
            failure = ET.SubElement(tc, "failure", message=r.divergence or "", type="divergence")
            failure.text = "\n".join(failure_details(r))
    for c in report.not_run:
        tc = ET.SubElement(suite, "testcase", classname=f"conform.{report.profile}.{c.kind}", name=c.id)
        tc.set("time", "0.000")
        ET.SubElement(tc, "skipped", message=f"not run: {report.stopped}")
    if m is not None:
        tc = ET.SubElement(suite, "testcase", classname=f"conform.{report.profile}.hypothesis", name=m.id)
        tc.set("time", "0.000")
        if not m.passed:
            failure = ET.SubElement(tc, "failure", message=m.message or "", type="divergence")
            if m.failure is not None and not m.failure.passed:
                failure.text = "\n".join(failure_details(m.failure))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
