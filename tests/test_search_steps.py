"""The explorer's shortcuts at a host call agree with the machine's and monitors' own steps:
the monitors once per call (without the arguments when no pattern reads one)."""

from __future__ import annotations

import pytest
from turnbound.properties.explore.search import _Search
from turnbound.reference.machine import Machine
from turnbound.reference.monitors import Monitors
from turnbound.reference.profiles import load_profile, profile_names


@pytest.mark.parametrize("name", profile_names())
def test_the_monitor_row_of_a_call_is_each_outcomes_step(name: str) -> None:
    table = load_profile(name)
    machine, monitors = Machine(table, memo=True, forget=True), Monitors(table)
    search = _Search(machine, monitors, 3_000)
    search.run()
    checked = 0
    for state, mon in search.nodes:
        if machine.is_terminal(state) or not mon:
            continue
        try:
            t = machine.select(state)
        except Exception:
            continue
        if t.op is None:
            continue
        args = machine.args(state, t)
        expected = tuple(monitors.step(mon, t.op, args, o) for o in machine.outcomes(t.op))
        assert search._monitor_row(mon, t, state) == expected, (t.id, state)
        checked += 1
    if table.trace_properties:
        assert checked > 0


def test_a_call_reads_its_arguments_only_for_a_pattern_that_reads_one() -> None:
    """deeptutor-scheduler's `no_dispatch_of_rejected_batch` reads `call_round`'s argument
    `recovery`; its other patterns read facts or nothing."""
    monitors = Monitors(load_profile("deeptutor-scheduler"))
    assert monitors.reads_args("call_round")
    assert not monitors.reads_args("finish") and not monitors.reads_args("dispatch_tools")
    assert not Monitors(load_profile("openai-agents")).reads_args("model_request")  # `calls` is a fact
