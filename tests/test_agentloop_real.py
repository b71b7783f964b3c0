"""The real deeptutor 1.6.15 AgentLoop, driven through the adapter, against the deeptutor-agentloop table.

Skipped unless deeptutor and its loop's dependencies are installed:
`pip install --no-deps deeptutor==1.6.15 && pip install -e '.[deeptutor]'`. With
TURNBOUND_REQUIRE_DEEPTUTOR=1 (CI's deeptutor step sets it) a loop that does not import is an
error, not a skip: that step must never pass by testing nothing.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from collections import deque
from collections.abc import Iterator

import pytest

if os.environ.get("TURNBOUND_REQUIRE_DEEPTUTOR") == "1":
    importlib.import_module("deeptutor.agents.loop.agent_loop")
else:
    pytest.importorskip("deeptutor.agents.loop.agent_loop")

from turnbound.properties.adapters import deeptutor_agentloop as adapter
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases, make_case
from turnbound.properties.conformance.generated import fuzz_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.explore.explorer import Exploration, explore
from turnbound.properties.scheduler import OpRequest, ThreadedScheduler, drive, first_divergence
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_cases, table_path
from turnbound.reference.table import Table

PROFILE = "deeptutor-agentloop"
ADAPTER = "turnbound.properties.adapters.deeptutor_agentloop:scheduler"
EXPLORED = {"maxRounds": 2}
"""The smallest budget at which every transition is reachable (an exploration round after a first one)."""


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


@pytest.fixture(scope="module")
def real(table: Table) -> Iterator[ThreadedScheduler]:
    scheduler = adapter.scheduler(table)
    yield scheduler
    scheduler.close()


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) == len(profile_cases(table)) >= 30
    divergences = {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence}
    assert divergences == {}


def test_the_documented_bound_breaks_in_the_real_loop(table: Table, real: ThreadedScheduler) -> None:
    """Not only in the table: the installed AgentLoop itself reports six rounds at a budget of one."""
    case = next(c for c in bundled_cases(table) if c.id == "documented_bound_exceeded")
    observed = drive(real, case.params, ScriptHost(case.script))
    assert observed.end is not None and observed.fault is None
    assert observed.end.terminal == "forced_finish"
    assert observed.end.counters["rounds"] == max(1, case.params["maxRounds"]) + 5


@pytest.fixture(scope="module")
def explored(table: Table) -> Exploration:
    return explore(table, EXPLORED)


def test_the_explorers_shortest_witness_replays_on_the_real_loop(
    explored: Exploration, real: ThreadedScheduler
) -> None:
    """The engines' counterexample to 'exploration + 4' is not an artefact of the table."""
    violation = explored.summary.violation("documented_bound")
    assert violation is not None
    observed = drive(real, EXPLORED, ScriptHost(Script(dict(violation.witness.script))))
    assert first_divergence(violation.witness.trace, observed) is None
    assert observed.end is not None
    assert observed.end.counters["rounds"] == EXPLORED["maxRounds"] + 5


def _transition_scripts(e: Exploration) -> Iterator[tuple[str, Script]]:
    """For every transition the explorer reached: a script whose run takes it, then ends."""
    g = e.graph
    terminals = [n for n, d in g.nodes(data=True) if d["terminal"]]
    to_end: dict[int, int] = dict.fromkeys(terminals, -1)  # node -> next node on a shortest way out
    queue = deque(terminals)
    while queue:
        v = queue.popleft()
        for u in g.predecessors(v):
            if u not in to_end:
                to_end[u] = v
                queue.append(u)
    seen: set[str] = set()
    for u, v, data in sorted(g.edges(data=True), key=lambda edge: (edge[1], edge[0])):
        if data["transition"] in seen or v not in to_end:
            continue
        seen.add(data["transition"])
        steps = [(s.op, s.outcome) for s in e.path_to(u)] + [(data["op"], data["outcome"])]
        node = v
        while to_end[node] != -1:
            nxt = to_end[node]
            edge = g.edges[node, nxt]
            steps.append((edge["op"], edge["outcome"]))
            node = nxt
        script: dict[str, list[Outcome]] = {}
        for op, outcome in steps:
            if op is not None and outcome is not None:
                script.setdefault(op, []).append(outcome)
        yield data["transition"], Script(script)


def test_every_transition_of_the_table_against_the_real_loop(
    table: Table, explored: Exploration, real: ThreadedScheduler
) -> None:
    covered: dict[str, str | None] = {}
    for transition, script in _transition_scripts(explored):
        expected = run(table, ScriptHost(script), EXPLORED)
        assert transition in expected.path
        covered[transition] = first_divergence(expected, drive(real, expected.params, ScriptHost(script)))
    assert set(covered) == {t.id for t in table.transitions}
    assert {t: d for t, d in covered.items() if d} == {}


def test_a_seeded_batch_of_generated_scripts_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = fuzz_cases(table, 300, seed=6)
    assert len(cases) == 300
    failed = {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence}
    assert failed == {}
    assert {c.expected.terminal for c in cases} >= {"finish", "forced_finish", "error", "aborted", "paused"}


def _misread(*replacements: tuple[str, str]) -> Table:
    text = table_path(PROFILE).read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    return load_table_text(text, source=f"<{PROFILE} misread>")


def test_a_table_that_misreads_the_settlement_cap_diverges(table: Table) -> None:
    """The differential check has teeth: read MAX_SETTLEMENT_ROUNDS as 2 and the real loop disagrees."""
    wrong = _misread(
        ("settlement_rounds < 3", "settlement_rounds < 2"),
        ("settlement_rounds >= 3", "settlement_rounds >= 2"),
    )
    case = next(c for c in profile_cases(table) if c.name == "ordinary_cap")
    expected = make_case(wrong, case.name, "case", dict(case.params), case.script).expected
    scheduler = adapter.scheduler(wrong)
    try:
        divergence = first_divergence(expected, drive(scheduler, expected.params, ScriptHost(case.script)))
    finally:
        scheduler.close()
    assert divergence == (
        "step 10: the implementation called call_round(mode=settlement, recovery=false, attempt=0) "
        "where the reference calls prepare_recovery()"
    )


def test_a_table_that_does_not_count_the_forced_round_diverges(table: Table, real: ThreadedScheduler) -> None:
    """_forced_finish counts its round (L968): a table without that update disagrees at the end."""
    wrong = _misread(
        (
            'update = { rounds = "rounds + 1", forced_rounds = "forced_rounds + 1", attempt = "0" }\n'
            'on_raise = { host_failure = "forced_failed" }\nto = "forced_done"\ndoc = "L918',
            'update = { forced_rounds = "forced_rounds + 1", attempt = "0" }\n'
            'on_raise = { host_failure = "forced_failed" }\nto = "forced_done"\ndoc = "L918',
        )
    )
    case = next(c for c in profile_cases(table) if c.name == "ordinary_cap")
    expected = make_case(wrong, case.name, "case", dict(case.params), case.script).expected
    divergence = first_divergence(expected, drive(real, expected.params, ScriptHost(case.script)))
    assert divergence is not None and divergence.startswith("end: expected counters rounds=4")
    assert "observed rounds=5" in divergence


def test_conform_command_runs_the_real_loop(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["conform", PROFILE, "--adapter", ADAPTER, "--fuzz", "40", "--fuzzer", "scripts", "--seed", "3"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    header = f"conform {PROFILE}: {len(profile_cases(load_profile(PROFILE)))} cases, "
    assert header in out and "40 generated" in out
    assert re.search(r"^(\d+) cases: \1 passed, 0 failed$", out, re.MULTILINE), out


def test_an_abandoned_turn_leaves_no_thread_behind(table: Table) -> None:
    scheduler = adapter.scheduler(table)
    before = set(threading.enumerate())
    request = scheduler.start({"maxRounds": 1})
    assert request == OpRequest("call_round", {"mode": "exploration", "recovery": False, "attempt": 0})
    started = set(threading.enumerate()) - before
    scheduler.close()
    assert started and not any(t.is_alive() for t in started)
