"""Exhaustive sweeps beyond the default ranges (marker `slow`: CI runs them as a separate step)."""

from __future__ import annotations

import pytest
from turnbound.properties.explore.explorer import explore
from turnbound.properties.explore.sweep import sweep, tally
from turnbound.reference.table import Table

pytestmark = pytest.mark.slow

BUDGETS = list(range(7))


def test_sweep_zero_to_six_keeps_every_claim_and_the_tight_rounds_bound(deeptutor: Table) -> None:
    """explorationBudget, settlementBudget in 0..6 (emptyRecoveryBudget at its default)."""
    ranges = {"explorationBudget": BUDGETS, "settlementBudget": BUDGETS}
    summaries = sweep(deeptutor, ranges, jobs=2, progress=False)
    assert len(summaries) == len(BUDGETS) ** 2
    for s in summaries:
        assert s.ok, s.params
        assert s.max["rounds"] == s.params["explorationBudget"] + s.params["settlementBudget"] + 1
        assert all(v.replay_problem is None for v in s.violations)
    tight = set()
    for t in tally(summaries):
        assert t.unexpected == 0, t.name
        if t.kind == "bound" and t.expect == "holds" and t.tight_known:  # a bound with a side to meet
            assert t.tight == t.tight_known == len(summaries), t.name
            tight.add(t.name)
    assert {"rounds_bound", "settlement_bound", "exploration_bound"} <= tight


@pytest.mark.parametrize("budgets", [(1, 1), (2, 3)])
def test_every_violating_exit_of_the_naive_bound_replays(deeptutor: Table, budgets: tuple[int, int]) -> None:
    e, s = budgets
    ex = explore(deeptutor, {"explorationBudget": e, "settlementBudget": s}, exits=True)
    v = ex.summary.violation("naive_rounds_bound")
    assert v is not None and v.exits
    for x in v.exits:
        assert x.witness.trace.terminal in deeptutor.terminals
        assert x.witness.trace.counters["rounds"] == e + s + 1
