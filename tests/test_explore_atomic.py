"""Atomic steps (issue 14): storing only the states the host sees changes what is stored,
never what is found. Every claim's verdict, the covered transitions and the witnesses'
replays agree with the search that stores every state, and the atomic nodes are exactly
the all-states nodes of the kinds atomic stores."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import Exploration, explore
from turnbound.properties.explore.search import _Search
from turnbound.reference.errors import RunError
from turnbound.reference.judge import Judge
from turnbound.reference.loader import load_table_text
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.table import Table

PATHOLOGICAL = Path(__file__).resolve().parent / "pathological"
SLOW_DEFAULTS = {"deeptutor-agentloop", "strands-agents"}
"""Bundled profiles whose default parameters take seconds per search."""
UNBOUNDED_DEFAULTS = {"pydantic-ai"}
"""Defaults past max_states: a partial search covers different ground in each way (atomic,
storing fewer states, goes further), so only complete searches are compared."""


def _configurations() -> list[object]:
    out: list[object] = []
    for name in profile_names():
        table = load_profile(name)
        lo = {p.name: p.range[0] for p in table.parameters}
        hi = {p.name: p.range[1] for p in table.parameters}
        marks = [pytest.mark.slow] if name in SLOW_DEFAULTS else []
        if name not in UNBOUNDED_DEFAULTS:
            out.append(pytest.param(name, {}, id=f"{name}-default", marks=marks))
        out.append(pytest.param(name, lo, id=f"{name}-lo"))
        if hi != lo and name != "deeptutor-agentloop":  # its top of range is a slow default
            out.append(pytest.param(name, hi, id=f"{name}-hi"))
    return out


def _verdicts(x: Exploration) -> object:
    s = x.summary
    return (
        [(c.name, c.verdict, c.tight, c.lhs_max, c.rhs) for c in s.claims],
        s.terminals,
        s.max,
        sorted(s.covered),
        s.uncovered,
        s.complete,
        s.limit,
        sorted(v.claim for v in s.violations),
    )


def _stored_kinds(table: Table, search: _Search) -> set[object]:
    """The all-states nodes an atomic search stores: the initial state, terminals, leaves, run
    errors, states whose selected transition calls the host, and states breaking an invariant."""
    keep: set[object] = set()
    env_claims = [fn for _, fn in Judge(table).invariants]
    machine = search.machine
    leaves = set(search.horizon_leaves)
    for i, node in enumerate(search.nodes):
        state = node[0]
        env = {**machine.params, **dict(zip(machine.var_names, state.values, strict=True))}
        stops = i == 0 or state.location in table.terminals or i in leaves or i in search.run_errors
        if stops or search.calls[i] >= search.max_calls or not all(fn(env) for fn in env_claims):
            keep.add(node)
        else:
            try:
                if machine.select(state).op is not None:
                    keep.add(node)
            except RunError:
                keep.add(node)
    return keep


def _compare(table: Table, params: dict[str, int]) -> tuple[Exploration, Exploration]:
    atomic = explore(table, params, exits=True)
    full = explore(table, params, exits=True, all_states=True)
    assert (atomic.summary.stored, full.summary.stored) == ("atomic", "all")
    assert _verdicts(atomic) == _verdicts(full)
    for x in (atomic, full):
        assert all(v.replay_problem is None for v in x.violations), x.violations
        assert all(e.replay_problem is None for v in x.violations for e in v.exits)
    if full.summary.complete:
        assert set(atomic._search.nodes) == _stored_kinds(table, full._search)
        assert atomic.summary.states + _hidden(full) == full.summary.states
    return atomic, full


def _hidden(full: Exploration) -> int:
    return len(full._search.nodes) - len(_stored_kinds(full.table, full._search))


@pytest.mark.parametrize(("name", "params"), _configurations())
def test_atomic_and_all_states_agree_on_every_claim(name: str, params: dict[str, int]) -> None:
    _compare(load_profile(name), params)


@pytest.mark.parametrize("name", ["selfloop", "horizon", "endless"])
def test_atomic_agrees_on_pathological_tables(name: str) -> None:
    """An internal self-loop (a lasso inside one exchange), a step horizon, a host that never ends."""
    table = load_table_text((PATHOLOGICAL / f"{name}.toml").read_text())
    atomic, full = _compare(table, {})
    assert atomic.summary.claim("terminates").verdict == full.summary.claim("terminates").verdict


def test_the_deeptutor_scheduler_stores_fewer_states_atomically() -> None:
    """Atomic: the loop heads and terminals; all: every state inside the loop's iterations too."""
    table = load_profile("deeptutor-scheduler")
    params = {"explorationBudget": 2, "settlementBudget": 2}
    atomic = explore(table, params).summary
    full = explore(table, params, all_states=True).summary
    assert (atomic.states, full.states) == (4278, 6855)
    assert atomic.counted == "states (atomic: host-call points and terminals)"
    assert full.counted == "states (all)" and full.intermediate == 0
    assert atomic.intermediate > 0 and atomic.edges < full.edges


def test_an_invariant_broken_between_host_calls_is_found_and_replays() -> None:
    """An internal step breaks an invariant that the next internal step repairs: atomic stores the
    broken state (as SPIN stops at a failed assertion inside a d_step) and its witness replays."""
    text = """
[profile]
name = "dip"
initial = "ask"

[variables.x]
type = "int"
init = "0"

[operations.call]

[locations]
ask = "before the call"
dip = "x goes up"
back = "x comes back"

[terminals]
done = "finished"

[[transitions]]
id = "ask"
from = "ask"
op = "call"
to = "dip"

[[transitions]]
id = "up"
from = "dip"
update = { x = "x + 1" }
to = "back"

[[transitions]]
id = "down"
from = "back"
update = { x = "x - 1" }
to = "done"

[[invariants]]
name = "x_zero"
expr = "x == 0"
expect = "violated"
"""
    table = load_table_text(text)
    atomic, full = _compare(table, {})
    assert full.summary.states == atomic.summary.states + 1  # "dip" alone is not stored
    v = atomic.summary.violation("x_zero")
    assert v is not None and [s.transition for s in v.witness.path] == ["ask", "up"]


def _explore_json(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["explore", "tool-call-budget", "-p", "max_rounds=0..2", "--json", *args])
    assert code == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_the_json_report_says_which_states_it_counts() -> None:
    atomic, full = _explore_json(), _explore_json("--all-states")
    assert (atomic["stored"], full["stored"]) == ("atomic", "all")
    assert [r["stored"] for r in atomic["results"]] == ["atomic"] * 3
    assert atomic["states"] < full["states"] and full["intermediate"] == 0 < atomic["intermediate"]
    assert atomic["claims"] == full["claims"]
    for a, f in zip(atomic["results"], full["results"], strict=True):
        assert a["transitions_covered"].keys() == f["transitions_covered"].keys()
        assert (a["terminals"], a["max"], a["claims"]) == (f["terminals"], f["max"], f["claims"])
