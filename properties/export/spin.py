"""Run SPIN on an exported Promela model: generate the verifier, compile it, search.

Used by the tests (SPIN stores exactly the explorer's states) and by the benchmark
(the explorer beside pan on identical work). SPIN and a C compiler are Debian packages
(`apt-get install spin gcc`); nothing here is needed by any other command.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from turnbound.reference.errors import DefinitionError

TIMEOUT = 600.0
"""Seconds for each of spin, gcc and pan before the run is abandoned."""


@dataclass(frozen=True)
class SpinResult:
    states: int
    """`states, stored`: one per distinct state vector."""
    transitions: int
    errors: int
    compile_seconds: float
    """spin -a and gcc together."""
    search_seconds: float
    """pan's own search, as pan measures it (`pan: elapsed time`)."""
    output: str


def spin_available() -> bool:
    return shutil.which("spin") is not None and shutil.which("gcc") is not None


def run_spin(
    model: str, *, flags: tuple[str, ...] = ("-O0", "-DNOREDUCE"), max_depth: int = 10_000_000
) -> SpinResult:
    """Verify `model` with an exhaustive search (stopping at the first error).

    `flags` go to gcc: -O0 compiles the verifier of a large table several times faster, which
    pays on small searches; a benchmark passes -O2.
    """
    if not spin_available():
        raise DefinitionError("SPIN needs the spin and gcc commands (apt-get install spin gcc)")
    with tempfile.TemporaryDirectory(prefix="turnbound-spin-") as tmp:
        work = Path(tmp)
        (work / "model.pml").write_text(model, encoding="utf-8")
        start = time.perf_counter()
        _run(["spin", "-a", "model.pml"], work)
        _run(["gcc", *flags, "-DVECTORSZ=4096", "-o", "pan", "pan.c"], work)
        compiled = time.perf_counter() - start
        out = _run(["./pan", f"-m{max_depth}", "-c1"], work)
    stored = re.search(r"(\d+) states, stored", out)
    transitions = re.search(r"(\d+) transitions \(= stored\+matched\)", out)
    errors = re.search(r"errors: (\d+)", out)
    elapsed = re.search(r"pan: elapsed time ([0-9.e+-]+) seconds", out)
    if stored is None or transitions is None or errors is None:
        raise DefinitionError(f"pan printed no search summary: {out.strip()[-300:]}")
    return SpinResult(
        states=int(stored.group(1)),
        transitions=int(transitions.group(1)),
        errors=int(errors.group(1)),
        compile_seconds=compiled,
        search_seconds=float(elapsed.group(1)) if elapsed else 0.0,
        output=out,
    )


def _run(argv: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise DefinitionError(f"{argv[0]} did not finish within {TIMEOUT:g}s") from None
    if done.returncode != 0 and argv[0] != "./pan":
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DefinitionError(f"{argv[0]} failed: {tail[0]}")
    return done.stdout
