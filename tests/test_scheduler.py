"""The stepping interface: the reference and a threaded Python scheduler, driven alike."""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.properties.scheduler import (
    End,
    OpRequest,
    ReferenceScheduler,
    ThreadedScheduler,
    drive,
    first_divergence,
)
from turnbound.reference.cases import check_case
from turnbound.reference.host import Host, ScriptHost
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table


def test_reference_scheduler_agrees_with_the_interpreter_on_every_case(deeptutor: Table) -> None:
    for case in profile_cases(deeptutor):
        expected = check_case(deeptutor, case).trace
        assert expected is not None
        observed = drive(
            ReferenceScheduler(deeptutor), {**deeptutor.defaults(), **case.params}, ScriptHost(case.script)
        )
        assert first_divergence(expected, observed) is None, case.name


def _hand_written(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """A deliberately naive scheduler: never asks for recovery, finishes as soon as budgets run out."""
    rounds = 0
    while rounds < params["explorationBudget"] + params["settlementBudget"]:
        mode = "exploration" if rounds < params["explorationBudget"] else "settlement"
        out = host.call("call_round", {"mode": mode, "recovery": False})
        rounds += 1
        if not (out.facts or {}).get("hasTools"):
            host.call("finish", {})
            return "finish", {"rounds": rounds}
        host.call("dispatch_tools", {})
    host.call("reject_finish", {})
    return "reject_finish", {"rounds": rounds}


def test_threaded_scheduler_divergence_is_named(deeptutor: Table) -> None:
    case = next(c for c in profile_cases(deeptutor) if c.name == "ordinary_cap")
    expected = check_case(deeptutor, case).trace
    assert expected is not None
    scheduler = ThreadedScheduler(_hand_written)
    observed = drive(scheduler, {**deeptutor.defaults(), **case.params}, ScriptHost(case.script))
    scheduler.close()
    assert first_divergence(expected, observed) == (
        "step 5: the implementation called reject_finish() where the reference calls prepare_recovery()"
    )


def test_threaded_scheduler_crash_is_a_fault(deeptutor: Table) -> None:
    def crash(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
        host.call("call_round", {"mode": "exploration", "recovery": False})
        raise ValueError("boom")

    scheduler = ThreadedScheduler(crash)
    case = next(c for c in profile_cases(deeptutor) if c.name == "ordinary_cap")
    observed = drive(scheduler, deeptutor.defaults(), ScriptHost(case.script))
    assert observed.fault == "the implementation raised ValueError: boom"
    expected = check_case(deeptutor, case).trace
    assert expected is not None
    assert first_divergence(expected, observed) == (
        "step 2: expected dispatch_tools(), observed a fault (the implementation raised ValueError: boom)"
    )


def test_reference_scheduler_requests(deeptutor: Table) -> None:
    s = ReferenceScheduler(deeptutor)
    first = s.start(deeptutor.defaults())
    assert first == OpRequest("call_round", {"mode": "exploration", "recovery": False})
    from turnbound.reference.outcomes import Outcome

    end = s.send(Outcome(facts={"hasTools": False, "hasText": True}))
    assert end == End(
        "contract_violation", {"rounds": 0, "exploration_rounds": 0, "settlement_rounds": 0, "tool_steps": 0}
    )
