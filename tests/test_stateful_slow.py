"""The Hypothesis machine under its thorough settings, and shrinking through a threaded scheduler (slow)."""

from __future__ import annotations

import pytest
from turnbound.properties.fuzz.session import fuzz
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import table_path

from tests.test_stateful import DEEPTUTOR, hand_written

pytestmark = pytest.mark.slow


def test_reference_passes_thorough() -> None:
    result = fuzz(DEEPTUTOR, settings_name="thorough")
    assert result.ok, result.counterexample
    assert all(n > 0 for n in result.coverage.transitions.values()), result.coverage.transitions
    assert all(n > 0 for n in result.coverage.terminals.values()), result.coverage.terminals


def test_hand_written_scheduler_agrees_under_thorough() -> None:
    result = fuzz(DEEPTUTOR, settings_name="thorough", scheduler=lambda: ThreadedScheduler(hand_written()))
    assert result.ok, result.counterexample


def test_buggy_scheduler_counterexample_is_shrunk() -> None:
    """The shortest story: one round that gathered something, then a failure after visible output."""
    result = fuzz(DEEPTUTOR, seed=0, scheduler=lambda: ThreadedScheduler(hand_written("salvage_partial")))
    cx = result.counterexample
    assert cx is not None
    assert cx["violation"]["name"] == "partial_failure_not_salvaged"
    steps = cx["trace"]["steps"]
    assert len(steps) <= 3
    assert Outcome.model_validate(steps[-1]["outcome"]) == Outcome.of_raise("host_failure", partial=True)


MUTANTS = {
    "salvage_partial": [
        ('guard = "rounds == 0 or partial"', 'guard = "rounds == 0"'),
        ('guard = "rounds > 0 and not partial"', 'guard = "rounds > 0"'),
    ],
    "dispatch_rejected_batch": [
        (
            'guard = "hasTools and recovery_used and recoveryRejected"',
            'guard = "hasTools and recovery_used and recoveryRejected and rounds < 0"',
        ),
        (
            'guard = "hasTools and not (recovery_used and recoveryRejected)"',
            'guard = "hasTools and rounds >= 0"',
        ),
    ],
    "recovery_twice": [('update = { recovery_used = "true" }', "")],
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_hand_made_mutants_are_killed_under_thorough(name: str) -> None:
    text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")
    changed = text
    for old, new in MUTANTS[name]:
        changed = changed.replace(old, new)
    assert changed != text
    result = fuzz(load_table_text(changed, f"{name}.toml"), settings_name="thorough", shrink=False)
    assert not result.ok
