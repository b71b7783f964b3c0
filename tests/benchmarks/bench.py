"""Benchmarks that print figures side by side in one run (never asserted in tests).

    python -m tests.benchmarks.bench [--quick]

Each section prints a small table; the README's benchmark table quotes them.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable, Mapping

from turnbound.reference.host import Host
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile
from turnbound.reference.types import Value

from tests.benchmarks import handwritten_deeptutor

TOOLS = Outcome(
    facts={"hasTools": True, "hasText": False, "truncated": False, "reasoningBudgetExhausted": False}
)
DONE = Outcome(facts={})


class ToolsForever:
    """A host whose model always calls tools: every round is spent, then a forced finish."""

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        if op == "call_round":
            return TOOLS
        if op == "prepare_recovery":
            return Outcome(facts={"available": False})
        if op == "forced_finish":
            return Outcome(facts={"extraRounds": 1})
        return DONE


def _rate(label: str, fn: Callable[[], int], seconds: float) -> tuple[str, float]:
    rounds = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        rounds += fn()
    return label, rounds / (time.perf_counter() - start)


def bench_interpreter(seconds: float) -> None:
    table = load_profile("deeptutor-scheduler")
    params = {"explorationBudget": 500, "settlementBudget": 500, "emptyRecoveryBudget": 2}
    host: Host = ToolsForever()

    def reference() -> int:
        return run(table, host, params).counters["rounds"]

    def handwritten() -> int:
        return handwritten_deeptutor.run(params, host)[1]["rounds"]

    rows = [
        _rate("reference interpreter (table-driven)", reference, seconds),
        _rate("hand-written Python scheduler", handwritten, seconds),
    ]
    print("\n== interpreter: rounds per second, deeptutor-scheduler, 1001 rounds per turn")
    for label, rate in rows:
        print(f"{label:<40} {rate:>12,.0f} rounds/s")
    print(f"{'ratio (hand-written / reference)':<40} {rows[1][1] / rows[0][1]:>12.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter measurement windows")
    args = parser.parse_args()
    seconds = 1.0 if args.quick else 3.0
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    bench_interpreter(seconds)


if __name__ == "__main__":
    main()
