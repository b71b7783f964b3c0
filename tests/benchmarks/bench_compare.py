"""The issue's target figures, side by side in one run: this checkout against an earlier one.

    git archive <commit> | tar -x -C /tmp/base          # the tree measured against
    python -m tests.benchmarks.bench_compare --baseline /tmp/base [--quick] [--table FILE]

`--table FILE` measures the explorer rows alone, both trees on that table file: a tree too
old to read this one's tables (20fd054, the tree issue 14 measured) is compared on its own.

Each figure is measured by `tests/benchmarks/measure.py` in a fresh interpreter, once per
tree, one tree right after the other, so a shared machine's load falls on both alike (the
explorer sweep: three such pairs, the best run of each tree); the ratios are the figures to
quote. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from turnbound.properties.export.spin import run_spin, spin_available

HERE = Path(__file__).resolve().parent
MEASURE = HERE / "measure.py"


def _shim(tree: Path, into: Path) -> Path:
    """A `turnbound` package made of the tree's `reference/` and `properties/` (as the
    project's own package mapping lays it out), for PYTHONPATH to put first."""
    pkg = into / "turnbound"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for part in ("reference", "properties"):
        (pkg / part).symlink_to(tree.resolve() / part)
    return into


def _measure(path: Path | None, what: str, arg: object = None) -> Any:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    cmd = [sys.executable, str(MEASURE), what] + ([] if arg is None else [json.dumps(arg)])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(
            f"measure {what} failed ({'baseline' if path else 'this tree'}): {out.stderr[-2000:]}"
        )
    return json.loads(out.stdout.splitlines()[-1])


def _pair(base: Path, what: str, arg: object = None) -> tuple[Any, Any]:
    return _measure(base, what, arg), _measure(None, what, arg)


def _best_pair(base: Path, what: str, arg: object, rounds: int, rate: str) -> tuple[Any, Any]:
    """`rounds` alternating measurements of each tree, the best (highest `rate`) of each: a
    moment of load on the machine then slows one run, not the figure."""
    runs = [_pair(base, what, arg) for _ in range(rounds)]
    return max((b for b, _ in runs), key=lambda r: r[rate]), max((a for _, a in runs), key=lambda r: r[rate])


def _row(label: str, before: float, after: float, unit: str, target: str, faster: str = "higher") -> None:
    """A figure before and after, and the speed-up (a rate's ratio, or a time's inverse ratio)."""
    ratio = (
        (after / before if before else float("inf"))
        if faster == "higher"
        else (before / after if after else float("inf"))
    )
    print(f"{label:<44} {before:>12,.2f} {after:>12,.2f} {unit:<10} {ratio:>7.2f}x  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="source tree of the earlier commit")
    parser.add_argument("--quick", action="store_true", help="smaller configurations, shorter windows")
    parser.add_argument(
        "--table",
        type=Path,
        help="the explorer rows alone, both trees on this deeptutor-scheduler table file",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = _shim(args.baseline, Path(tmp))
        print(
            f"{datetime.date.today()} python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} cores"
        )
        print(f"{'figure':<44} {'baseline':>12} {'this tree':>12} {'unit':<10} {'speed-up':>8}  target")
        if args.table is not None:
            print(f"  (the explorer rows alone, on {args.table})")
            _explorer_rows(base, args.quick, str(args.table.resolve()))
            return
        _interpreter_rows(base, args.quick)
        _explorer_rows(base, args.quick, "deeptutor-scheduler")
        _other_rows(base, args.quick)


def _interpreter_rows(base: Path, quick: bool) -> None:
    seconds = 1.0 if quick else 3.0

    b, a = _pair(base, "interpreter", seconds)
    _row("interpreter, rounds/s", b["rounds_per_s"], a["rounds_per_s"], "rounds/s", "")
    print(
        f"{'  hand-written / interpreter (same process)':<44} "
        f"{b['handwritten_per_s'] / b['rounds_per_s']:>11.1f}x {a['handwritten_per_s'] / a['rounds_per_s']:>11.1f}x"
        "              target: 3x or less"
    )
    if a["lean_rounds_per_s"]:
        before = (
            f"{b['handwritten_per_s'] / b['lean_rounds_per_s']:>11.1f}x"
            if b.get("lean_rounds_per_s")
            else " " * 12
        )
        print(
            f"{'  hand-written / interpreter, ghosts=False':<44} {before} "
            f"{a['handwritten_per_s'] / a['lean_rounds_per_s']:>11.1f}x"
            "              (conformance's reference: no claim ghosts)"
        )


def _explorer_rows(base: Path, quick: bool, table_name: str) -> None:
    top = 3 if quick else 6
    b, a = _best_pair(base, "explorer", {"top": top, "table": table_name}, 1 if quick else 3, "states_per_s")
    _row(
        f"explorer sweep E,S in 0..{top}, states/s", b["states_per_s"], a["states_per_s"], "states/s", ">= 5x"
    )
    print(f"{'  states (both trees)':<44} {b['states']:>12,} {a['states']:>12,}")

    k = 4 if quick else 12
    b, a = _pair(base, "explorer_at", {"top": k, "table": table_name})
    _row(
        f"explorer E=S={k}, us per stored state",
        b["us_per_state"],
        a["us_per_state"],
        "us/state",
        "",
        "lower",
    )
    if not (a["complete"] and b["complete"]):
        print(f"  the explorer stopped at its state limit at E=S={k}: no per-state comparison with pan")
    elif spin_available():
        from turnbound.properties.export.promela import export_promela
        from turnbound.reference.profiles import load_profile

        table = load_profile(table_name)
        result = run_spin(
            export_promela(table, {"explorationBudget": k, "settlementBudget": k}),
            flags=("-O2", "-DNOREDUCE"),
        )
        pan = max(result.search_seconds, 1e-3) / max(result.states, 1) * 1e6
        print(
            f"{'  pan (SPIN -O2, no reduction), us/state':<44} {pan:>12,.3f}   explorer/pan: "
            f"{b['us_per_state'] / pan:.1f}x before, {a['us_per_state'] / pan:.1f}x now (target: within 5x); "
            f"pan stored {result.states:,} states, the explorer {a['states']:,}"
        )
    else:
        print("  pan: skipped (apt-get install spin gcc)")


def _other_rows(base: Path, quick: bool) -> None:
    b, a = _pair(base, "prover")
    for name in a:
        if name in b:
            _row(
                f"prover {name}, slowest claim", b[name]["slowest"], a[name]["slowest"], "s", "< 1 s", "lower"
            )
    print(
        f"{'  prover, every profile, total':<44} {sum(v['total'] for v in b.values()):>12,.2f} "
        f"{sum(v['total'] for v in a.values()):>12,.2f} s"
    )

    n = 200 if quick else 1000
    b, a = _pair(base, "conformance", n)
    _row("conformance in-process, cases/s", b["in_process"], a["in_process"], "cases/s", ">= 2,000")
    _row("conformance subprocess (wire v1), cases/s", b["subprocess"], a["subprocess"], "cases/s", ">= 1,000")

    b, a = _pair(base, "cli_help", 5)
    _row("turnbound --help, wall (best of 5)", b["wall"], a["wall"], "s", "< 0.3 s", "lower")
    _row("turnbound --help, CPU", b["cpu"], a["cpu"], "s", "", "lower")


if __name__ == "__main__":
    main()
