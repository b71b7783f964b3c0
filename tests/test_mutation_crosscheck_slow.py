"""The engines checked against each other on mutants: what the explorer kills, Hypothesis and
the prover kill too, or the prover's miss falls in a documented class (slow).

deeptutor-agentloop (29k-171k states per configuration) and tool-call-budget (about 17 s of
proving per mutant) are left out: their cross-checks do not fit a bounded CI step.
"""

from __future__ import annotations

import pytest
from turnbound.properties.explore.explorer import TERMINATES
from turnbound.properties.mutation.engines import Kill
from turnbound.properties.mutation.score import MutationReport, mutate
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON

pytestmark = pytest.mark.slow

PROFILES = ["deeptutor-scheduler", "dsh-turn-unguarded", "dsh-turn-guard", "dsh-turn-guard-refire"]


@pytest.fixture(
    scope="module",
    # One worker per profile under `pytest -n auto --dist loadgroup`: its mutants are explored once.
    params=[pytest.param(name, marks=pytest.mark.xdist_group(name)) for name in PROFILES],
)
def table(request: pytest.FixtureRequest) -> Table:
    return load_profile(request.param)


@pytest.fixture(scope="module")
def explorer_kills(table: Table) -> dict[str, Kill]:
    """Every mutant the loader accepts, through the explorer (not stopping at an earlier kill)."""
    report: MutationReport = mutate(table, engines=("loader", "explore"), every_engine=True, progress=False)
    out = {}
    for r in report.results:
        kill = r.killed_by("explore")
        if kill is not None:
            out[r.id] = kill
    assert out, "the explorer kills no mutant: nothing to cross-check"
    return _sample(out)


SAMPLE = 24
"""Explorer kills cross-checked per profile. Since the tables' claims came to kill nearly every
mutant, all of them (180 in deeptutor-scheduler) through thorough Hypothesis and the prover ran
past CI's 30-minute step; a fixed spread over every kind of mutation keeps each kind checked."""


def _sample(kills: dict[str, Kill]) -> dict[str, Kill]:
    """Up to SAMPLE kills, the same every run: the first of each kind of mutation (the id's second
    part: guard, update, to, arg, raise, priority, step, ...), then evenly spaced over the rest."""
    ids = sorted(kills)
    first: dict[str, str] = {}
    for i in ids:
        first.setdefault(i.split(".")[1] if "." in i else i, i)
    chosen = sorted(set(first.values()))
    rest = [i for i in ids if i not in chosen]
    room = max(0, SAMPLE - len(chosen))
    if rest and room:
        chosen += rest[:: max(1, len(rest) // room)][:room]
    return {i: kills[i] for i in sorted(chosen)}


def test_explorer_and_hypothesis_agree(table: Table, explorer_kills: dict[str, Kill]) -> None:
    """Every mutant the explorer kills, the Hypothesis machine kills too (thorough, derandomized)."""
    report = mutate(
        table,
        only=list(explorer_kills),
        engines=("loader", "fuzz"),
        every_engine=True,
        fuzz_settings="thorough",
        fuzz_shrink=False,
        progress=False,
    )
    missed = {r.id: explorer_kills[r.id].summary for r in report.results if r.killed_by("fuzz") is None}
    assert missed == {}


def _why_the_prover_does_not_decide(table: Table, kill: Kill) -> str | None:
    """The documented classes of explorer kills the prover can not make (`turnbound.properties.mutation.score`)."""
    ev = kill.evidence
    if ev.get("claim") == TERMINATES:
        return "termination is not a claim the prover proves"
    expect = {c.name: c.expect for c in (*table.claims, *table.lemmas, *table.trace_properties)}
    if ev.get("claim") in expect and expect[ev["claim"]] == "violated" and ev.get("verdict") == "holds":
        return "a claim expected to be violated is judged per configuration by the explorer"
    if "claim" not in ev and "states" in ev:
        return "the explorer's state limit"
    if ev.get("trace", {}).get("terminal") == HORIZON:
        return "broken only on a run that never ends: the prover's witnesses are completed runs"
    return None


def test_every_explorer_kill_is_a_prover_kill_or_a_documented_exception(
    table: Table, explorer_kills: dict[str, Kill]
) -> None:
    report = mutate(
        table, only=list(explorer_kills), engines=("loader", "prove"), every_engine=True, progress=False
    )
    unexplained = {}
    for r in report.results:
        if (
            r.killed_by("prove") is None
            and _why_the_prover_does_not_decide(table, explorer_kills[r.id]) is None
        ):
            unexplained[r.id] = explorer_kills[r.id].summary
    assert unexplained == {}
    assert any(r.killed_by("prove") is not None for r in report.results)
