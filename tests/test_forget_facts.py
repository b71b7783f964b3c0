"""The explorer forgets the facts of a host call that nothing at its target reads
(`Machine(forget=True)`): states that differ only in them are stored once, and every verdict,
maximum, terminal and covered transition stays what a search keeping every fact finds."""

from __future__ import annotations

import pytest
from turnbound.properties.explore.checks import _Checker
from turnbound.properties.explore.claims import StateClaimMemo
from turnbound.properties.explore.explorer import explore
from turnbound.properties.explore.search import _Search
from turnbound.reference.expr import refs
from turnbound.reference.machine import Machine
from turnbound.reference.monitors import Monitors
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.readable import facts_read
from turnbound.reference.table import Table

CAP = 200_000


def _corner(table: Table) -> dict[str, int]:
    """The upper corner of the explore ranges: every bundled profile's search there is complete."""
    return {p.name: p.range[1] for p in table.parameters}


def _summary(table: Table, forget: bool, all_states: bool) -> tuple[object, ...]:
    machine = Machine(table, _corner(table), memo=True, forget=forget)
    monitors = Monitors(table)
    memo = StateClaimMemo(table, machine)
    search = _Search(
        machine, monitors, CAP, all_states=all_states, breaks=None if all_states else memo.breaks
    )
    search.run()
    checker = _Checker(table, machine, monitors, search, memo)
    checker.check()
    s = checker.summary(0.0)
    verdicts = [(c.name, c.verdict, c.tight) for c in s.claims]
    return (
        len(search.nodes),
        s.complete,
        verdicts,
        s.terminals.keys(),
        s.max,
        s.terminal_max,
        s.covered.keys(),
    )


@pytest.mark.parametrize("name", profile_names())
def test_forgetting_unread_facts_changes_no_verdict(name: str) -> None:
    table = load_profile(name)
    for all_states in (True, False):
        kept, forgot = _summary(table, False, all_states), _summary(table, True, all_states)
        assert kept[1] and forgot[1], "both searches complete"
        assert forgot[0] <= kept[0]
        assert forgot[2:] == kept[2:]


def test_forgetting_stores_fewer_states_where_a_fact_is_not_read() -> None:
    """openai-agents: the request's own updates copy a reply's `calls`, `handoff`, `hasText`
    and `valid` into variables, and nothing at `replied` reads the facts again."""
    table = load_profile("openai-agents")
    kept, forgot = _summary(table, False, True), _summary(table, True, True)
    assert forgot[0] < kept[0]
    assert explore(table, _corner(table), all_states=True).summary.states == forgot[0]


@pytest.mark.parametrize("name", profile_names())
def test_a_state_keeps_exactly_the_facts_read_where_it_is(name: str) -> None:
    """A state keeps the facts a guard or an argument leaving its location reads, and those an
    update reads that are not the call's own (a call's updates read its own facts first)."""
    table = load_profile(name)
    read = facts_read(table)
    for place, names in read.items():
        for t in table.outgoing.get(place, ()):
            facts = {r.name for e in (t.guard, *(e for _, e in t.args)) for r in refs(e) if r.kind == "fact"}
            assert facts <= names, (place, t.id)
            if t.op is None:  # an internal transition's updates read the state's facts alone
                assert {r.name for _, e in t.updates for r in refs(e) if r.kind == "fact"} <= names
    exploration = explore(table, _corner(table), all_states=True)
    for state, _ in exploration._search.nodes:
        # what is read here is readable here (the loader's scopes): every call entering gives it
        assert {name for name, _ in state.facts} == read[state.location], state
