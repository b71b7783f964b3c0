"""Benchmark section: how long the Hypothesis machine takes to kill each mutant the explorer kills.

    from tests.benchmarks.bench_mutation import bench_mutation
    bench_mutation(quick=False)

The explorer decides in one exhaustive pass; Hypothesis samples, so its time to kill a
mutant is the figure: wall time until the first failing example (`seconds_to_failure`,
before shrinking) under the thorough settings (derandomized, seed 0), over the same
mutation range. `quick` times every third mutant only.
"""

from __future__ import annotations

import statistics
import time

from turnbound.properties.mutation.score import mutate
from turnbound.reference.profiles import load_profile

PROFILE = "deeptutor-scheduler"


def bench_mutation(quick: bool) -> None:
    table = load_profile(PROFILE)
    started = time.perf_counter()
    explored = mutate(table, engines=("loader", "explore"), every_engine=True, progress=False)
    explore_seconds = time.perf_counter() - started
    killed = [r for r in explored.results if r.killed_by("explore") is not None]
    chosen = killed[::3] if quick else killed
    started = time.perf_counter()
    fuzzed = mutate(
        table,
        only=[r.id for r in chosen],
        engines=("loader", "fuzz"),
        every_engine=True,
        fuzz_settings="thorough",
        fuzz_shrink=False,
        progress=False,
    )
    fuzz_seconds = time.perf_counter() - started
    ranges = ", ".join(f"{k}={v[0]}..{v[-1]}" for k, v in explored.ranges.items())
    print(f"\n== mutation: Hypothesis (thorough) time to kill each mutant the explorer kills, {PROFILE}")
    print(f"{len(explored.results)} mutants over {ranges}; the explorer kills {len(killed)}", end="")
    print(
        f" ({explore_seconds:.1f} s with the loader, 2 workers)" + ("; timing every third" if quick else "")
    )
    print(f"{'mutant':<48} {'explorer: claim broken':<36} {'Hypothesis':>11}")
    times: list[float] = []
    for r in fuzzed.results:
        claim = next(x for x in killed if x.id == r.id).killed_by("explore")
        assert claim is not None
        broken = str(claim.evidence.get("claim", "state limit"))
        kill = r.killed_by("fuzz")
        if kill is None or kill.seconds_to_failure is None:
            print(f"{r.id:<48} {broken:<36} {'not killed':>11}")
            continue
        times.append(kill.seconds_to_failure)
        print(f"{r.id:<48} {broken:<36} {kill.seconds_to_failure:>10.2f}s")
    if times:
        print(
            f"killed {len(times)} of {len(fuzzed.results)}; time to kill: median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s, total {sum(times):.1f} s (wall {fuzz_seconds:.1f} s on 2 workers)"
        )
    else:
        print("Hypothesis killed none of them")


if __name__ == "__main__":
    bench_mutation(quick=False)
