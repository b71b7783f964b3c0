"""The conformance runner: an implementation under test against the reference, case by case.

Each case's host script answers the implementation's host calls; what it asked for,
in what order, with which arguments, and how it ended (terminal, counters) is compared
with the reference's trace of the same script. A failing generated case is shrunk to
the smallest script that still fails before it is reported.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turnbound.properties.conform_cases import CaseResult, ConformCase, run_case
from turnbound.properties.conform_fuzz import shrink
from turnbound.properties.conform_machine import MachineResult, run_machine
from turnbound.properties.scheduler import Scheduler
from turnbound.reference.outcomes import Outcome, outcome_text
from turnbound.reference.table import Table
from turnbound.reference.types import Value

CONTEXT_STEPS = 3
"""Steps shown before the first divergence in a failure's details."""


@dataclass(frozen=True)
class ConformReport:
    profile: str
    implementation: str
    results: tuple[CaseResult, ...]
    seconds: float
    restarts: int = 0
    machine: MachineResult | None = None
    """The Hypothesis machine's run, counted as one case."""

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    @property
    def passed(self) -> bool:
        return not self.failures and (self.machine is None or self.machine.passed)

    @property
    def summary(self) -> str:
        n = len(self.results) + (self.machine is not None)
        f = len(self.failures) + (self.machine is not None and not self.machine.passed)
        return f"{n} cases: {n - f} passed, {f} failed"


def conform(
    table: Table,
    scheduler: Scheduler,
    cases: Sequence[ConformCase],
    *,
    implementation: str = "",
    shrink_budget: int = 400,
    machine_examples: int = 0,
    seed: int = 0,
    restarts: Callable[[], int] | None = None,
) -> ConformReport:
    """Run every case through one scheduler, shrinking failing generated ones; then the Hypothesis
    machine for `machine_examples` examples, if asked."""
    began = time.perf_counter()
    results: list[CaseResult] = []
    machine = None
    try:
        for case in cases:
            result = run_case(scheduler, case)
            if not result.passed and case.kind == "fuzz" and shrink_budget > 0:
                result = _shrunk(table, scheduler, result, shrink_budget)
            results.append(result)
        if machine_examples > 0:
            machine = run_machine(table, scheduler, machine_examples, seed)
    finally:
        scheduler.close()
    seconds = time.perf_counter() - began
    return ConformReport(
        table.name, implementation, tuple(results), seconds, restarts() if restarts else 0, machine
    )


def _shrunk(table: Table, scheduler: Scheduler, failed: CaseResult, budget: int) -> CaseResult:
    smallest, runs = shrink(table, failed.case, lambda c: not run_case(scheduler, c).passed, budget)
    if smallest is failed.case:
        return CaseResult(failed.case, failed.observed, failed.divergence, failed.seconds, failed.case, runs)
    final = run_case(scheduler, smallest)
    if final.passed:  # a flaky implementation: report the original failure
        return CaseResult(failed.case, failed.observed, failed.divergence, failed.seconds, failed.case, runs)
    return CaseResult(smallest, final.observed, final.divergence, final.seconds, failed.case, runs)


# -- reporting ----------------------------------------------------------------------------


def fmt_values(values: dict[str, Value]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


def fmt_call(op: str, args: dict[str, Value], outcome: Outcome | None) -> str:
    call = f"{op}({fmt_values(args)})"
    if outcome is None:
        return call
    return f"{call} -> {outcome_text(outcome)}"


def failure_details(result: CaseResult) -> list[str]:
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
        lines.append(f"implementation stopped: {observed.fault}")
    return lines


def result_json(result: CaseResult, details: bool) -> dict[str, object]:
    out: dict[str, object] = {"id": result.case.id, "kind": result.case.kind, "passed": result.passed}
    if not details:
        return out
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
                "fault": observed.fault,
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
        "cases": len(report.results),
        "passed": len(report.results) - len(report.failures),
        "failed": len(report.failures),
        "restarts": report.restarts,
        "results": [result_json(r, details=not r.passed) for r in report.results],
        "machine": machine,
    }


def junit_xml(report: ConformReport) -> str:
    """JUnit XML for CI: one testcase per case, its divergence as the failure message."""
    m = report.machine
    failures = len(report.failures) + (m is not None and not m.passed)
    tests = len(report.results) + (m is not None)
    suites = ET.Element("testsuites", name="turnbound conform", tests=str(tests))
    suites.set("failures", str(failures))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"conform.{report.profile}",
        tests=str(tests),
        failures=str(failures),
        errors="0",
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
    if m is not None:
        tc = ET.SubElement(suite, "testcase", classname=f"conform.{report.profile}.hypothesis", name=m.id)
        tc.set("time", "0.000")
        if not m.passed:
            failure = ET.SubElement(tc, "failure", message=m.message or "", type="divergence")
            if m.failure is not None and not m.failure.passed:
                failure.text = "\n".join(failure_details(m.failure))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
