"""An independent hand-written implementation agrees with the table on every case and path."""

from __future__ import annotations

from turnbound.properties.scheduler import ReferenceScheduler, ThreadedScheduler, drive, first_divergence
from turnbound.reference.cases import check_case
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import outcome_script, run
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

from tests.benchmarks import handwritten_deeptutor


def test_handwritten_agrees_on_every_case(deeptutor: Table) -> None:
    scheduler = ThreadedScheduler(handwritten_deeptutor.run)
    try:
        for case in profile_cases(deeptutor):
            expected = check_case(deeptutor, case).trace
            assert expected is not None
            params = {**deeptutor.defaults(), **case.params}
            observed = drive(scheduler, params, ScriptHost(case.script))
            assert first_divergence(expected, observed) is None, case.name
    finally:
        scheduler.close()


def test_reference_scheduler_replays_its_own_traces(deeptutor: Table) -> None:
    for case in profile_cases(deeptutor):
        trace = check_case(deeptutor, case).trace
        assert trace is not None
        again = run(deeptutor, ScriptHost(Script.model_validate(outcome_script(trace))), trace.params)
        observed = drive(
            ReferenceScheduler(deeptutor),
            trace.params,
            ScriptHost(Script.model_validate(outcome_script(trace))),
        )
        assert again == trace
        assert first_divergence(trace, observed) is None
