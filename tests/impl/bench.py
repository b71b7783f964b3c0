"""Conformance throughput: cases per second through each kind of implementation under test.

    .venv/bin/python tests/impl/bench.py [N]

Runs the bundled cases and vectors plus N generated scripts (default 2000) of
deeptutor-scheduler through: the node implementation (one subprocess), the reference
served over the wire (one Python subprocess), the reference in-process through a
thread bridge (ThreadedScheduler), and the reference stepped directly (ReferenceScheduler).
Prints wall and CPU time per case; timing is measured here, never asserted in tests.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.generated import fuzz_cases
from turnbound.properties.conformance.runner import conform
from turnbound.properties.conformance.serve import reference_run
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.properties.scheduler import ReferenceScheduler, Scheduler, ThreadedScheduler
from turnbound.reference.profiles import load_profile

HERE = Path(__file__).resolve().parent


def main(n: int) -> None:
    table = load_profile("deeptutor-scheduler")
    cases = bundled_cases(table) + bundled_vector_cases(table) + fuzz_cases(table, n, 0)
    runs: list[tuple[str, Scheduler]] = [
        (
            "node subprocess (wire v1)",
            WireScheduler(["node", str(HERE / "node" / "deeptutor-scheduler.js")], table),
        ),
        (
            "reference, Python subprocess (wire v1)",
            WireScheduler([sys.executable, "-m", "turnbound.properties.conformance.serve", table.name], table),
        ),
        ("reference in-process, ThreadedScheduler", ThreadedScheduler(reference_run(table))),
        ("reference in-process, ReferenceScheduler", ReferenceScheduler(table)),
    ]
    print(f"{len(cases)} cases ({n} generated) of {table.name}")
    for name, scheduler in runs:
        wall, cpu = time.perf_counter(), time.process_time()
        report = conform(table, scheduler, cases)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert report.passed, report.summary
        print(
            f"{name:45} {len(cases) / wall:8.0f} cases/s wall  ({wall:.2f} s wall, {cpu:.2f} s turnbound CPU)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
