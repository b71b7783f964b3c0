"""The explorer's shortcuts that reuse work between states and between searches are invisible:
an internal step taken again for the same values, what a sweep's searches share per table,
and a call's edges given to a node that makes the same call."""

from __future__ import annotations

import gc

import pytest
from turnbound.properties.explore import search as search_module
from turnbound.properties.explore.explorer import explore
from turnbound.reference import compiled
from turnbound.reference.compiled import derived, shared_compilations
from turnbound.reference.errors import ValueTooLarge
from turnbound.reference.loader import load_table, load_table_text
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors
from turnbound.reference.profiles import load_profile, profile_names, table_path
from turnbound.reference.table import Table

from tests.conftest import REPO, TINY


def _fresh(name: str = "deeptutor-scheduler") -> Table:
    """A bundled table loaded anew (`load_profile` hands out one object per file)."""
    return load_table(table_path(name))


def _graph(table: Table, params: dict[str, int], all_states: bool) -> tuple[object, ...]:
    x = explore(table, params, all_states=all_states)
    s = x._search
    verdicts = tuple((c.name, c.verdict, c.tight, c.lhs_max) for c in x.summary.claims)
    return (s.nodes, s.dst, s.label, s.parent, s.parent_label, s.calls, s.alternatives, s.coverage, verdicts)


@pytest.mark.parametrize("name", ["pydantic-ai", "deeptutor-scheduler", "google-adk"])
def test_an_internal_step_taken_again_reads_the_facts_it_reads(name: str) -> None:
    """`Machine.internal_step` remembers its last step by the values object; a state with the
    same values object and other facts must get its own successor when the updates read facts
    (pydantic-ai's `run_batch`), the remembered one otherwise."""
    table = load_profile(name)
    machine, fresh = Machine(table, memo=True), Machine(table)
    search = explore(table, {}, all_states=True, max_states=20_000)._search
    facts_at: dict[str, set[tuple[tuple[str, object], ...]]] = {}
    for state, _ in search.nodes:
        facts_at.setdefault(state.location, set()).add(state.facts)
    checked = 0
    for state, _ in search.nodes:
        if machine.is_terminal(state):
            continue
        t = fresh.select(state)
        if t.op is not None:
            continue
        for facts in sorted(facts_at[state.location], key=repr)[:4]:
            twin = State(state.location, state.values, facts)  # the very same values object
            try:
                expected = fresh.take_internal(twin, t)
            except Exception:
                continue
            step = machine.internal_step(t)
            step(state)
            assert step(twin) == expected, (t.id, state, facts)
            checked += 1
    assert checked > 10


def test_searches_of_one_table_share_what_no_parameter_changes() -> None:
    """A sweep's searches after the first reuse the table's derived facts and monitor rows; each
    finds what a search of a fresh copy of the table (nothing shared yet) finds."""
    table = load_profile("deeptutor-scheduler")
    for e, s in [(0, 0), (2, 1), (1, 3), (3, 3)]:
        explore(table, {"explorationBudget": e, "settlementBudget": s})
    assert shared_compilations(table).derived["explore.rows"]
    for all_states in (True, False):
        for e, s in [(2, 2), (3, 1)]:
            params = {"explorationBudget": e, "settlementBudget": s}
            assert _graph(table, params, all_states) == _graph(_fresh(), params, all_states)


@pytest.mark.parametrize(
    ("name", "before", "params"),
    [
        ("deeptutor-scheduler", {"explorationBudget": 1, "settlementBudget": 1}, {"explorationBudget": 2}),
        ("tool-call-budget", {"max_rounds": 2}, {}),  # breaks a trace property at its defaults
    ],
)
def test_monitor_rows_past_their_limit_change_nothing(
    monkeypatch: pytest.MonkeyPatch, name: str, before: dict[str, int], params: dict[str, int]
) -> None:
    """The rows shared between searches are dropped at SHARED_ROWS_LIMIT; each search keeps the
    rows it used, so the checker still sees every monitor state its nodes hold."""
    expected = _graph(_fresh(name), params, True)
    monkeypatch.setattr(search_module, "SHARED_ROWS_LIMIT", 1)
    table = _fresh(name)
    explore(table, before)
    assert _graph(table, params, True) == expected
    if name == "tool-call-budget":  # the property broken at its defaults is found broken
        claims = explore(table, params, all_states=True).summary.claims
        assert {c.name: c.verdict for c in claims}["empty_reply_never_answers"] == "violated"
    rows = shared_compilations(table).derived["explore.rows"]
    assert isinstance(rows, dict) and len(rows) <= 1


def test_what_a_table_derives_is_made_once_and_dropped_with_the_table() -> None:
    made: list[int] = []

    def make() -> int:
        made.append(1)
        return len(made)

    table = load_table_text(TINY)
    assert derived(table, "test.count", make) == 1
    assert derived(table, "test.count", make) == 1
    assert made == [1]
    key = id(table)
    del table
    gc.collect()
    assert key not in compiled._SHARED


@pytest.mark.parametrize("name", profile_names())
def test_shared_edges_are_the_edges_the_call_makes(name: str) -> None:
    """Every node whose call's edges were given from another node's (same call, values and
    monitors) has exactly the edges its own call makes: its successors, states and monitors,
    in the outcomes' order (an outcome that leads to a node already reached is an alternative)."""
    table = load_profile(name)
    search = explore(table, {}, all_states=True, max_states=20_000)._search
    machine, monitors = Machine(table, memo=True, forget=True), Monitors(table)
    checked = 0
    for i, (state, mon) in enumerate(search.nodes[:3_000]):
        first, last = search.first_edge[i], search.first_edge[i + 1]
        if first == last or machine.is_terminal(state):
            continue
        t = machine.select(state)
        if t.op is None:
            continue
        args = machine.args(state, t)
        made = [
            (after, monitors.step(mon, t.op, args, o))
            for after, o in zip(machine.take_outcomes(state, t), machine.outcomes(t.op), strict=True)
        ]
        targets = [search.nodes[j] for j in search.dst[first:last]]
        assert targets == list(dict.fromkeys(made)), (t.id, state)
        alternatives = sum(len(search.alternatives.get(e, ())) for e in range(first, last))
        assert len(targets) + alternatives == len(made)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize(
    "update",
    [
        "steps * steps + 2",  # reads no fact: made once per state
        "steps * steps + (2 if more else 3)",  # reads both: made per group
    ],
)
def test_a_call_whose_update_grows_too_large_stops_as_one_outcome_does(update: str) -> None:
    """The all-outcome step checks every value it makes against the machine's limit and names
    the same transition and variable as the one-outcome step."""
    text = (REPO / "tests" / "pathological" / "growth.toml").read_text()
    table = load_table_text(text.replace('"steps * steps + 2"', f'"{update}"'))
    t = next(tr for tr in table.transitions if tr.id == "work")
    state = State("loop", (10**10,), ())
    plain, memo = Machine(table), Machine(table, memo=True, forget=True)
    with pytest.raises(ValueTooLarge) as one:
        plain.take_outcome(state, t, plain.outcomes("step")[0])
    with pytest.raises(ValueTooLarge) as every:
        memo.take_outcomes(state, t)
    assert str(every.value) == str(one.value)
    assert memo.take_outcomes(State("loop", (3,), ()), t) == tuple(
        plain.take_outcome(State("loop", (3,), ()), t, o) for o in plain.outcomes("step")
    )
