"""deeptutor-scheduler's claims pin what seed 000 states: each realistic bug below (one rule
of the table changed the way an implementer gets it wrong, the claims left as they are)
breaks a claim, found by the explorer and by the prover, not only by a named case."""

from __future__ import annotations

import pytest
from turnbound.properties.explore.explorer import explore
from turnbound.properties.prove.prover import Prover
from turnbound.reference.loader import load_table_text
from turnbound.reference.profiles import table_path
from turnbound.reference.table import Table

SMALL = {"explorationBudget": 1, "settlementBudget": 1, "emptyRecoveryBudget": 1}


BUGS = [
    pytest.param(
        'args = { mode = "settlement", recovery = "true" }',
        'args = { mode = "settlement", recovery = "false" }',
        "round_arguments",
        id="recovery round sent with recovery=false",
    ),
    pytest.param(
        'args = { reason = "error" }',
        'args = { reason = "budget" }',
        "forced_finish_reason",
        id="error salvage sent as reason=budget",
    ),
    pytest.param(
        'to = "forced_finish"\n\n# -- claims',
        'to = "forced_finish"\n\n# -- claims',
        None,
        id="the unchanged table",
    ),
    pytest.param(
        'op = "forced_finish"\nargs = { reason = "error" }\nupdate = { rounds = "rounds + extraRounds", extra_rounds = "extraRounds" }',
        'op = "forced_finish"\nargs = { reason = "error" }',
        "forced_finish_accounting",
        id="salvage forgets extraRounds in both paired updates",
    ),
    pytest.param(
        'guard = "rounds == 0 or partial"\nto = "error"',
        'guard = "partial"\nto = "error"',
        "first_round_failure_propagates",
        id="first-round failure salvaged",
    ),
    pytest.param(
        'guard = "rounds == 0 or partial"\nto = "error"',
        'guard = "true"\nto = "error"',
        "later_clean_failure_salvaged",
        id="later clean failure propagated",
    ),
    pytest.param(
        'empty_recoveries < emptyRecoveryBudget"\nupdate',
        'empty_recoveries < emptyRecoveryBudget - 1"\nupdate',
        "empty_finish_after_budget",
        id="empty-recovery budget one short",
    ),
    pytest.param(
        'update = { tool_steps = "tool_steps + 1" }',
        'update = { tool_steps = "tool_steps + 1 + (1 if recovery_used else 0)" }',
        "tool_steps_are_dispatches",
        id="tool_steps counted per tool in the recovery batch",
    ),
]


@pytest.mark.parametrize(("old", "new", "claim"), BUGS)
def test_a_realistic_bug_breaks_a_claim_in_the_explorer(old: str, new: str, claim: str | None) -> None:
    table = _patched(old, new)
    summary = explore(table, SMALL).summary
    broken = {c.name for c in summary.claims if c.verdict != "holds" and c.expect == "holds"}
    if claim is None:
        assert broken == set()
    else:
        assert claim in broken, broken


def _patched(old: str, new: str) -> Table:
    """The bug, with the complementary guard adjusted so the loader still finds the guards exclusive."""
    text = table_path("deeptutor-scheduler").read_text()
    assert text.count(old) == 1, old
    text = text.replace(old, new)
    for a, b in _COMPLEMENTS.get(new, ()):
        assert text.count(a) == 1, a
        text = text.replace(a, b)
    return load_table_text(text, "deeptutor-scheduler-bug.toml")


_COMPLEMENTS = {
    'guard = "partial"\nto = "error"': (('guard = "rounds > 0 and not partial"', 'guard = "not partial"'),),
    'guard = "true"\nto = "error"': (('guard = "rounds > 0 and not partial"', 'guard = "false"'),),
    'empty_recoveries < emptyRecoveryBudget - 1"\nupdate': (
        (
            "empty_recoveries >= emptyRecoveryBudget and not recovery_used",
            "empty_recoveries >= emptyRecoveryBudget - 1 and not recovery_used",
        ),
        (
            "empty_recoveries >= emptyRecoveryBudget and recovery_used",
            "empty_recoveries >= emptyRecoveryBudget - 1 and recovery_used",
        ),
    ),
}


def test_the_prover_refutes_a_paired_update_bug_with_a_replayed_witness() -> None:
    table = _patched(
        'op = "forced_finish"\nargs = { reason = "error" }\nupdate = { rounds = "rounds + extraRounds", extra_rounds = "extraRounds" }',
        'op = "forced_finish"\nargs = { reason = "error" }',
    )
    (result,) = Prover(table).prove_all(["forced_finish_accounting"])
    assert result.verdict == "refuted"
    assert result.witness is not None
    assert [s.op for s in result.witness.trace.steps][-1] == "forced_finish"
