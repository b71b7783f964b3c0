"""pytest plugin: check your own scheduler against a profile, inside your own test suite.

Registered as the `pytest11` entry point `turnbound`, so installing turnbound is enough.
Mark a test with the profile and take the `turnbound_case` argument: the test runs once
per bundled case and vector (and, if asked, per generated script and for the Hypothesis
machine); hand it your scheduler, and a divergence fails that test with the first
divergence and the steps side by side::

    @pytest.mark.turnbound("deeptutor-scheduler", scripts=200, machine=100)
    def test_my_loop(turnbound_case):
        turnbound_case.check(ThreadedScheduler(my_run))

`turnbound_conform` is the one-test form: `turnbound_conform(scheduler, "deeptutor-scheduler")`
runs everything and fails once, listing every failing case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

# The plugin is loaded into every pytest session of a project that installs turnbound, so it
# imports the engines only when a test asks for them: an unused plugin costs nothing.
if TYPE_CHECKING:
    from turnbound.properties.conformance.cases import ConformCase
    from turnbound.properties.conformance.runner import ConformReport
    from turnbound.properties.scheduler import Scheduler
    from turnbound.reference.table import Table

MARKER = "turnbound"


@dataclass(frozen=True)
class TurnboundCase:
    """One bundled case, vector or generated script (or the Hypothesis machine) to check a scheduler on."""

    table: Table
    case: ConformCase | None
    machine_examples: int = 0
    seed: int = 0

    @property
    def id(self) -> str:
        return self.case.id if self.case is not None else f"hypothesis-seed-{self.seed}"

    def check(self, scheduler: Scheduler) -> None:
        """Run this case on `scheduler` (then close it); a divergence fails the test."""
        from turnbound.properties.conformance.cases import run_case
        from turnbound.properties.conformance.generated import shrink
        from turnbound.properties.conformance.machine import run_machine
        from turnbound.properties.conformance.runner import failure_details

        try:
            if self.case is None:
                machine = run_machine(self.table, scheduler, self.machine_examples, self.seed)
                if not machine.passed:
                    details = failure_details(machine.failure) if machine.failure else []
                    pytest.fail("\n".join([f"{self.id}: {machine.message}", *details]), pytrace=False)
                return
            result = run_case(scheduler, self.case)
            if not result.passed and self.case.kind == "fuzz":
                smallest, _ = shrink(self.table, self.case, lambda c: not run_case(scheduler, c).passed)
                result = run_case(scheduler, smallest) if smallest is not self.case else result
            if not result.passed:
                lines = [f"{self.case.kind} {self.case.id}: {result.divergence}", *failure_details(result)]
                pytest.fail("\n".join(lines), pytrace=False)
        finally:
            scheduler.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(profile, cases=True, vectors=True, scripts=0, machine=0, seed=0): run the test once per "
        "case, vector and generated script of the turnbound profile, and once for its Hypothesis machine "
        "(`machine` examples); the test takes `turnbound_case` and calls `turnbound_case.check(scheduler)`.",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "turnbound_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or not marker.args:
        pytest.fail(
            f"{metafunc.definition.nodeid}: a test taking turnbound_case needs "
            f'@pytest.mark.{MARKER}("PROFILE")',
            pytrace=False,
        )
    from turnbound.reference.errors import TurnboundError

    options = dict(marker.kwargs)
    try:
        items = turnbound_cases(str(marker.args[0]), **options)
    except TypeError as exc:
        pytest.fail(f"{metafunc.definition.nodeid}: @pytest.mark.{MARKER}: {exc}", pytrace=False)
    except TurnboundError as exc:
        pytest.fail(f"{metafunc.definition.nodeid}: {exc}", pytrace=False)
    metafunc.parametrize("turnbound_case", items, ids=[i.id for i in items])


def turnbound_cases(
    profile: str,
    *,
    cases: bool = True,
    vectors: bool = True,
    scripts: int = 0,
    machine: int = 0,
    seed: int = 0,
) -> list[TurnboundCase]:
    """What a marked test is run on, in order: cases, vectors, generated scripts, the machine."""
    from turnbound.properties.conformance.cases import bundled_cases
    from turnbound.properties.conformance.generated import fuzz_cases
    from turnbound.properties.conformance.vectors import bundled_vector_cases
    from turnbound.reference.profiles import load_profile

    table = load_profile(profile)
    chosen: list[ConformCase] = []
    if cases:
        chosen += bundled_cases(table)
    if vectors:
        chosen += bundled_vector_cases(table)
    chosen += fuzz_cases(table, scripts, seed)
    items = [TurnboundCase(table, c) for c in chosen]
    if machine > 0:
        items.append(TurnboundCase(table, None, machine, seed))
    return items


@pytest.fixture
def turnbound_conform() -> Callable[..., ConformReport]:
    """`turnbound_conform(scheduler, profile, scripts=0, machine=0, seed=0)`: everything in one test."""

    def check(
        scheduler: Scheduler, profile: str, *, scripts: int = 0, machine: int = 0, seed: int = 0
    ) -> ConformReport:
        from turnbound.properties.conformance.cases import bundled_cases
        from turnbound.properties.conformance.generated import fuzz_cases
        from turnbound.properties.conformance.runner import conform, failure_details
        from turnbound.properties.conformance.vectors import bundled_vector_cases
        from turnbound.reference.profiles import load_profile

        table = load_profile(profile)
        cases = bundled_cases(table) + bundled_vector_cases(table) + fuzz_cases(table, scripts, seed)
        report = conform(table, scheduler, cases, machine_examples=machine, seed=seed)
        if not report.passed:
            lines = [report.summary]
            for r in report.failures:
                lines += [
                    f"{r.case.kind} {r.case.id}: {r.divergence}",
                    *(f"    {x}" for x in failure_details(r)),
                ]
            if report.machine is not None and not report.machine.passed:
                lines.append(f"{report.machine.id}: {report.machine.message}")
            pytest.fail("\n".join(lines), pytrace=False)
        return report

    return check
