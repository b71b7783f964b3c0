"""The pytest plugin as a team would use it: their scheduler, our cases, ordinary pytest failures."""

from __future__ import annotations

import pytest

# Imported here, so that pytester's in-process runs find them loaded instead of importing
# (and assertion-rewriting) them again for every run.
import turnbound.properties.conformance.machine
import turnbound.properties.pytest_plugin  # noqa: F401

pytest_plugins = ["pytester"]

SCHEDULERS = '''
from turnbound.properties.scheduler import ReferenceScheduler, ThreadedScheduler
from turnbound.reference.profiles import load_profile


def reference():
    return ReferenceScheduler(load_profile("deeptutor-scheduler"))


def forgetful(params, host):
    """Forgets the forced finish's extra round; otherwise the reference."""
    from turnbound.reference.interpreter import run

    class Forget:
        def call(self, op, args):
            out = host.call(op, args)
            self.extra = (out.facts or {}).get("extraRounds", 0) if op == "forced_finish" else 0
            return out

    h = Forget()
    trace = run(load_profile("deeptutor-scheduler"), h, params)
    counters = dict(trace.counters)
    if trace.terminal == "forced_finish":
        counters["rounds"] -= trace.variables["extra_rounds"]
    return trace.terminal, counters
'''


def test_a_marked_test_runs_once_per_case_and_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        schedulers=SCHEDULERS,
        test_mine="""
import pytest
from schedulers import reference

@pytest.mark.turnbound("deeptutor-scheduler", scripts=5)
def test_reference(turnbound_case):
    turnbound_case.check(reference())
""",
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0
    assert outcomes["passed"] >= 11 + 5
    result.stdout.no_fnmatch_line("*error*")


def test_a_divergence_is_an_ordinary_failure_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        schedulers=SCHEDULERS,
        test_mine="""
import pytest
from turnbound.properties.scheduler import ThreadedScheduler
from schedulers import forgetful

@pytest.mark.turnbound("deeptutor-scheduler", vectors=False)
def test_forgetful(turnbound_case):
    turnbound_case.check(ThreadedScheduler(forgetful))
""",
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rf")
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["passed"]) == (2, 9)
    result.stdout.fnmatch_lines(
        [
            "*case ordinary_cap: end: expected counters rounds=3, exploration_rounds=1, settlement_rounds=1, "
            "tool_steps=2, observed rounds=2*",
            "*reference ends forced_finish (rounds=3*",
            "FAILED test_mine.py::test_forgetful[[]ordinary_cap[]]*",
            "FAILED test_mine.py::test_forgetful[[]later_failure_forced_finish[]]*",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_the_hypothesis_machine_and_the_one_test_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        schedulers=SCHEDULERS,
        test_mine="""
import pytest
from turnbound.properties.scheduler import ThreadedScheduler
from schedulers import forgetful, reference

@pytest.mark.turnbound("deeptutor-scheduler", cases=False, vectors=False, machine=3)
def test_machine(turnbound_case):
    turnbound_case.check(reference())

def test_everything_at_once(turnbound_conform):
    turnbound_conform(ThreadedScheduler(forgetful), "deeptutor-scheduler")
""",
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_machine*hypothesis-seed-0*PASSED*"] if False else ["*cases: * passed, * failed*"]
    )


def test_a_marker_without_a_profile_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mine="""
def test_unmarked(turnbound_case):
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ['*test_unmarked: a test taking turnbound_case needs @pytest.mark.turnbound("PROFILE")*']
    )
    result.stdout.no_fnmatch_line("*pluggy*")
