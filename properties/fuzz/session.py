"""Run the Hypothesis machine as a function: `fuzz(table, ...) -> FuzzResult`.

The CLI and the mutation engine call this; it answers "did Hypothesis find a
counterexample, after how many examples and how long", with the shrunk
counterexample as JSON. Same table, seed and settings: same result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import Any

from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test
from turnbound.properties.fuzz.coverage import Coverage
from turnbound.properties.fuzz.settings import fuzz_settings, same_draws
from turnbound.properties.fuzz.stateful import FuzzFailure, SchedulerFactory, machine_for
from turnbound.properties.fuzz.swarm import OutcomeDomains, ParamChoice
from turnbound.reference.errors import RunError
from turnbound.reference.table import Table


@dataclass(frozen=True)
class FuzzResult:
    profile: str
    settings: str
    seed: int
    examples_run: int
    """Examples generated up to the end, or up to and including the first failing one."""
    turns: int
    steps: int
    """Host calls answered."""
    coverage: Coverage
    counterexample: dict[str, Any] | None
    """The shrunk counterexample (see `fuzz_report.counterexample`), or None."""
    seconds: float
    """Wall time, shrinking included (not in `to_json`, which is byte-stable)."""
    seconds_to_failure: float | None
    """Wall time until the first failing example was found, before shrinking."""

    @property
    def ok(self) -> bool:
        return self.counterexample is None

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "ok": self.ok,
            "settings": self.settings,
            "seed": self.seed,
            "examples": self.examples_run,
            "turns": self.turns,
            "steps": self.steps,
            **self.coverage.to_json(),
            "counterexample": self.counterexample,
        }


def fuzz(
    table: Table,
    examples: int | None = None,
    seed: int = 0,
    settings_name: str = "quick",
    scheduler: SchedulerFactory | None = None,
    params: Mapping[str, ParamChoice] | None = None,
    shrink: bool = True,
    database: Path | None = None,
) -> FuzzResult:
    """Run the machine for `table` (and `scheduler`, if given) under the named settings profile.

    `shrink=False` reports the first counterexample found as it was generated: enough
    to know whether a mutant is killed, and much cheaper than shrinking it. Nothing is
    written unless `database` names a directory for Hypothesis's example database.
    """
    profile = fuzz_settings(settings_name)
    coverage = Coverage(OutcomeDomains(table))
    machine = machine_for(table, params, scheduler, settings=settings_name, coverage=coverage)

    counterexample: dict[str, Any] | None = None
    start = perf_counter()
    hypothesis = profile.hypothesis(examples, quiet=True, shrink=shrink, database=database)
    try:
        with same_draws():
            run_state_machine_as_test(hypothesis_seed(seed)(machine), settings=hypothesis)
    except FuzzFailure as exc:
        counterexample = exc.counterexample
    except Flaky as exc:
        raise RunError(
            f"{table.name}: a failure did not reproduce when replayed; "
            f"is the scheduler deterministic? ({exc})"
        ) from None
    return FuzzResult(
        profile=table.name,
        settings=profile.name,
        seed=seed,
        examples_run=coverage.examples,
        turns=coverage.turns,
        steps=coverage.steps,
        coverage=coverage,
        counterexample=counterexample,
        seconds=perf_counter() - start,
        seconds_to_failure=None if coverage.failed_at is None else coverage.failed_at - start,
    )
