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

    def behaviour_only() -> int:
        return run(table, host, params, ghosts=False).counters["rounds"]

    def handwritten() -> int:
        return handwritten_deeptutor.run(params, host)[1]["rounds"]

    ghosts = sum(v.ghost for v in table.variables)
    rows = [
        _rate(f"reference, with the claims' {ghosts} ghosts", reference, seconds),
        _rate("reference, ghosts=False (conformance)", behaviour_only, seconds),
        _rate("hand-written Python scheduler", handwritten, seconds),
    ]
    print("\n== interpreter: rounds per second, deeptutor-scheduler, 1001 rounds per turn")
    for label, rate in rows:
        print(f"{label:<42} {rate:>12,.0f} rounds/s")
    for label, rate in rows[:2]:
        print(f"{'hand-written / ' + label.split(',', 1)[1].strip():<42} {rows[2][1] / rate:>12.1f}x")


def _explore_once(args: tuple[int, bool]) -> tuple[int, int, int, float, float, int]:
    """One configuration in a fresh worker: stored states, intermediate, edges, wall and CPU
    seconds, and the worker's peak resident memory (KiB)."""
    import resource

    from turnbound.properties.explore.explorer import explore

    k, all_states = args
    table = load_profile("deeptutor-scheduler")
    wall, cpu = time.perf_counter(), time.process_time()
    s = explore(table, {"explorationBudget": k, "settlementBudget": k}, all_states=all_states).summary
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return s.states, s.intermediate, s.edges, wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def bench_explorer(quick: bool) -> None:
    import multiprocessing

    from turnbound.properties.explore.sweep import timed_sweep

    table = load_profile("deeptutor-scheduler")
    top = 3 if quick else 6
    ranges = {"explorationBudget": list(range(top + 1)), "settlementBudget": list(range(top + 1))}
    atomic, t_atomic = timed_sweep(table, ranges, progress=False)
    full, t_full = timed_sweep(table, ranges, progress=False, all_states=True)
    same = [[c.verdict for c in a.claims] for a in atomic] == [[c.verdict for c in f.claims] for f in full]
    worst_ok = all(s.claim("rounds_bound").tight for s in atomic)
    print(
        f"\n== explorer: deeptutor-scheduler, explorationBudget and settlementBudget in 0..{top}, "
        "emptyRecoveryBudget=2, 2 worker processes"
    )
    print(f"{'':<40} {'atomic':>12} {'all states':>12}")
    print(f"{'configurations':<40} {t_atomic.configurations:>12,} {t_full.configurations:>12,}")
    print(f"{'states stored':<40} {t_atomic.states:>12,} {t_full.states:>12,}")
    walked = sum(s.intermediate for s in atomic)
    print(f"{'intermediate states walked, not stored':<40} {walked:>12,} {0:>12,}")
    print(f"{'edges':<40} {t_atomic.edges:>12,} {t_full.edges:>12,}")
    print(f"{'wall time':<40} {t_atomic.seconds:>11.1f}s {t_full.seconds:>11.1f}s")
    print(
        f"{'stored states per second (wall)':<40} {t_atomic.states_per_second:>12,.0f} {t_full.states_per_second:>12,.0f}"
    )
    print(f"{'every verdict the same':<40} {same!s:>12}")
    print(f"{'rounds_bound tight everywhere':<40} {worst_ok!s:>12}")
    k = 6 if quick else 12
    context = multiprocessing.get_context("fork")
    rows = []
    for all_states in (False, True):
        with context.Pool(1) as pool:  # a fresh process each, so each peak memory is its own
            rows.append(pool.apply(_explore_once, ((k, all_states),)))
    print(f"\n== explorer: deeptutor-scheduler at explorationBudget = settlementBudget = {k}, one process")
    print(f"{'':<40} {'atomic':>12} {'all states':>12}")
    labels = ["states stored", "intermediate states walked", "edges"]
    for n, label in enumerate(labels):
        print(f"{label:<40} {rows[0][n]:>12,} {rows[1][n]:>12,}")
    print(f"{'wall time':<40} {rows[0][3]:>11.2f}s {rows[1][3]:>11.2f}s")
    print(f"{'CPU time':<40} {rows[0][4]:>11.2f}s {rows[1][4]:>11.2f}s")
    print(f"{'peak resident memory (MiB)':<40} {rows[0][5] / 1024:>12,.0f} {rows[1][5] / 1024:>12,.0f}")


def bench_prover() -> None:
    from turnbound.properties.prove.prover import Prover
    from turnbound.reference.profiles import profile_names

    print("\n== prover: every claim of every bundled profile, for all parameter values")
    print(
        f"{'profile':<24} {'claims':>6} {'proved':>6} {'refuted':>7} {'ok':>4} {'slowest claim':>14} {'total':>8}"
    )
    for name in profile_names():
        table = load_profile(name)
        start = time.perf_counter()
        results = Prover(table).prove_all()
        total = time.perf_counter() - start
        proved = sum(r.verdict == "proved" for r in results)
        refuted = sum(r.verdict == "refuted" for r in results)
        slowest = max(r.seconds for r in results)
        ok = all(r.ok for r in results)
        print(
            f"{name:<24} {len(results):>6} {proved:>6} {refuted:>7} {ok!s:>4} {slowest:>13.2f}s {total:>7.1f}s"
        )


def bench_fuzz() -> None:
    from turnbound.properties.fuzz.session import fuzz

    table = load_profile("deeptutor-scheduler")
    print("\n== Hypothesis machine: deeptutor-scheduler, seed 0")
    for settings in ("quick", "thorough"):
        result = fuzz(table, seed=0, settings_name=settings)
        print(
            f"{settings:<10} {result.examples_run:>6} examples {result.turns:>7,} turns "
            f"{result.steps:>8,} host calls {result.seconds:>8.1f}s  ok={result.ok}"
        )


def bench_conformance(quick: bool) -> None:
    import sys
    from pathlib import Path

    from turnbound.properties.conformance.cases import bundled_cases
    from turnbound.properties.conformance.generated import fuzz_cases
    from turnbound.properties.conformance.runner import conform
    from turnbound.properties.conformance.serve import reference_run
    from turnbound.properties.conformance.vectors import bundled_vector_cases
    from turnbound.properties.conformance.wire import WireScheduler
    from turnbound.properties.scheduler import ReferenceScheduler, Scheduler, ThreadedScheduler

    table = load_profile("deeptutor-scheduler")
    n = 200 if quick else 1000
    cases = bundled_cases(table) + bundled_vector_cases(table) + fuzz_cases(table, n, 0)
    node = Path(__file__).resolve().parent.parent / "impl" / "node" / "deeptutor-scheduler.js"
    runs: list[tuple[str, Scheduler]] = [
        ("node subprocess (wire v1)", WireScheduler(["node", str(node)], table)),
        (
            "reference, Python subprocess (wire v1)",
            WireScheduler(
                [sys.executable, "-m", "turnbound.properties.conformance.serve", table.name], table
            ),
        ),
        ("reference in-process, ThreadedScheduler", ThreadedScheduler(reference_run(table))),
        ("reference in-process, ReferenceScheduler", ReferenceScheduler(table)),
    ]
    print(f"\n== conformance: {len(cases)} cases of deeptutor-scheduler (cases + vectors + {n} generated)")
    for name, scheduler in runs:
        start = time.perf_counter()
        report = conform(table, scheduler, cases)
        wall = time.perf_counter() - start
        print(f"{name:<45} {len(cases) / wall:>8,.0f} cases/s  passed={report.passed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter measurement windows")
    parser.add_argument("--only", action="append", help="run only this section (repeatable)")
    args = parser.parse_args()
    seconds = 1.0 if args.quick else 3.0
    parser_sections = args.only or [
        "interpreter",
        "explorer",
        "prover",
        "fuzz",
        "conformance",
        "mutation",
        "spin",
    ]
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    if "interpreter" in parser_sections:
        bench_interpreter(seconds)
    if "explorer" in parser_sections:
        bench_explorer(args.quick)
    if "prover" in parser_sections:
        bench_prover()
    if "fuzz" in parser_sections:
        bench_fuzz()
    if "conformance" in parser_sections:
        bench_conformance(args.quick)
    if "mutation" in parser_sections:
        from tests.benchmarks.bench_mutation import bench_mutation

        bench_mutation(args.quick)
    if "spin" in parser_sections:
        from tests.benchmarks.bench_spin import bench_spin

        bench_spin(args.quick)


if __name__ == "__main__":
    main()
