"""The explorer beside SPIN on identical work: the exported model of the same table at the
same parameters, where SPIN stores exactly the explorer's states (tests/test_promela.py)."""

from __future__ import annotations

import time

from turnbound.properties.explore.explorer import explore
from turnbound.properties.export.promela import export_promela
from turnbound.properties.export.spin import run_spin, spin_available
from turnbound.reference.profiles import load_profile


def bench_spin(quick: bool) -> None:
    if not spin_available():
        print("\n== spin: skipped (apt-get install spin gcc)")
        return
    table = load_profile("deeptutor-scheduler")
    budgets = [2, 4] if quick else [2, 4, 8]
    print("\n== explorer beside SPIN (pan -O2, no partial-order reduction): deeptutor-scheduler, E = S = k")
    print(
        f"{'k':>3} {'states':>10} {'explorer':>10} {'pan search':>11} {'pan build':>10} "
        f"{'ratio (search)':>15} {'same states':>12}"
    )
    for k in budgets:
        params = {"explorationBudget": k, "settlementBudget": k}
        start = time.perf_counter()
        summary = explore(table, params, all_states=True).summary  # the export's states: every one
        ours = time.perf_counter() - start
        result = run_spin(export_promela(table, params), flags=("-O2", "-DNOREDUCE"))
        same = "=" if result.states == summary.states else "!="
        pan = max(result.search_seconds, 1e-3)
        print(
            f"{k:>3} {summary.states:>10,} {ours:>9.2f}s {pan:>10.3f}s {result.compile_seconds:>9.1f}s "
            f"{ours / pan:>14.1f}x {same:>12}"
        )
