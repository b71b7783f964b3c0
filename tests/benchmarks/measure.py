"""One measurement of the engines, printed as JSON: run by `bench_compare` once per source tree
(this checkout, and an earlier one given with `--baseline`), so both sets of figures are taken
side by side in one run on the same machine. Uses only APIs both trees have."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.types import Value

TOOLS = Outcome(
    facts={"hasTools": True, "hasText": False, "truncated": False, "reasoningBudgetExhausted": False}
)


class ToolsForever:
    """A host whose model always calls tools: every round is spent, then a forced finish."""

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        if op == "call_round":
            return TOOLS
        if op == "prepare_recovery":
            return Outcome(facts={"available": False})
        if op == "forced_finish":
            return Outcome(facts={"extraRounds": 1})
        return Outcome(facts={})


def _rate(fn: Callable[[], int], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += fn()
    return done / (time.perf_counter() - start)


def interpreter(seconds: float) -> dict[str, float]:
    """The interpreter and the hand-written scheduler on the same turns, measured in
    alternating windows so a shared machine's load falls on both alike."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import handwritten_deeptutor  # type: ignore[import-not-found]
    from turnbound.reference.interpreter import run

    table = load_profile("deeptutor-scheduler")
    params = {"explorationBudget": 500, "settlementBudget": 500, "emptyRecoveryBudget": 2}
    host = ToolsForever()
    lean_run = "ghosts" in inspect.signature(run).parameters  # the tree can skip the claims' ghosts
    ours: list[float] = []
    lean: list[float] = []
    theirs: list[float] = []
    for _ in range(5):
        ours.append(_rate(lambda: run(table, host, params).counters["rounds"], seconds / 5))
        if lean_run:
            lean.append(_rate(lambda: run(table, host, params, ghosts=False).counters["rounds"], seconds / 5))
        theirs.append(_rate(lambda: handwritten_deeptutor.run(params, host)[1]["rounds"], seconds / 5))
    return {
        "rounds_per_s": sum(ours) / 5,
        "lean_rounds_per_s": sum(lean) / 5 if lean else None,
        "handwritten_per_s": sum(theirs) / 5,
    }


def _explore() -> Callable[..., Any]:
    """The tree's `explore`, from where its layout keeps it (before 613753e: one module)."""
    try:
        from turnbound.properties.explore.explorer import explore
    except ImportError:
        from turnbound.properties.explorer import explore  # type: ignore[import-not-found,no-redef]
    return explore  # type: ignore[no-any-return]


def _every_state(explore: Callable[..., Any]) -> dict[str, bool]:
    """`all_states=True` where the tree's explorer has atomic steps (an earlier tree stores every
    state anyway), so both trees store and count the same states."""
    return {"all_states": True} if "all_states" in inspect.signature(explore).parameters else {}


def _sweep_args(arg: int | dict[str, Any]) -> tuple[int, str]:
    """The sweep's top budget and the table: a bundled name, or a file (`bench_compare --table`:
    the baseline's own table, for a tree that cannot read this one's format)."""
    if isinstance(arg, int):
        return arg, "deeptutor-scheduler"
    return int(arg["top"]), str(arg.get("table") or "deeptutor-scheduler")


def explorer(arg: int | dict[str, Any]) -> dict[str, float]:
    """The deeptutor-scheduler sweep, one process (no pool: both trees measured alike)."""
    top, name = _sweep_args(arg)
    explore = _explore()
    table = load_profile(name)
    states = 0
    every = _every_state(explore)
    start = time.perf_counter()
    for e in range(top + 1):
        for s in range(top + 1):
            states += explore(table, {"explorationBudget": e, "settlementBudget": s}, **every).summary.states
    seconds = time.perf_counter() - start
    return {"states": states, "seconds": seconds, "states_per_s": states / seconds}


def explorer_at(arg: int | dict[str, Any]) -> dict[str, float]:
    k, name = _sweep_args(arg)
    explore = _explore()
    table = load_profile(name)
    every = _every_state(explore)
    start = time.perf_counter()
    summary = explore(table, {"explorationBudget": k, "settlementBudget": k}, **every).summary
    seconds = time.perf_counter() - start
    return {
        "states": summary.states,
        "complete": summary.complete,
        "seconds": seconds,
        "us_per_state": seconds / summary.states * 1e6,
    }


def prover() -> dict[str, Any]:
    from turnbound.properties.prove.prover import Prover

    out: dict[str, Any] = {}
    for name in profile_names():
        table = load_profile(name)
        start = time.perf_counter()
        results = Prover(table).prove_all()
        out[name] = {
            "claims": len(results),
            "total": time.perf_counter() - start,
            "slowest": max(r.seconds for r in results),
            "ok": all(r.ok for r in results),
        }
    return out


def conformance(n: int) -> dict[str, float]:
    from turnbound.properties.conformance.cases import bundled_cases
    from turnbound.properties.conformance.generated import fuzz_cases
    from turnbound.properties.conformance.runner import conform
    from turnbound.properties.conformance.wire import WireScheduler
    from turnbound.properties.scheduler import ReferenceScheduler

    table = load_profile("deeptutor-scheduler")
    cases = bundled_cases(table) + fuzz_cases(table, n, 0)
    out: dict[str, float] = {}
    runs = {
        "in_process": ReferenceScheduler(table),
        "subprocess": WireScheduler(
            [sys.executable, "-m", "turnbound.properties.conformance.wire", table.name], table
        ),
    }
    for name, scheduler in runs.items():
        start = time.perf_counter()
        report = conform(table, scheduler, cases)
        out[name] = len(cases) / (time.perf_counter() - start)
        out[name + "_passed"] = float(report.passed)
    out["cases"] = float(len(cases))
    return out


def cli_help(repeat: int) -> dict[str, float]:
    """`turnbound --help` in a fresh interpreter: the best wall time and its CPU time."""
    import resource

    code = "from turnbound.properties.cli.main import main; main(['--help'])"
    best, cpu = float("inf"), 0.0
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if wall < best:
            best = wall
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": best, "cpu": cpu}


def main() -> None:
    what, *rest = sys.argv[1:]
    arg = json.loads(rest[0]) if rest else None
    fn: Callable[..., Any] = globals()[what]
    result = fn(arg) if arg is not None else fn()
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
