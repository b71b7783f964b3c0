"""The real pydantic-ai 2.68.0 agent graph, driven through the adapter, against the pydantic-ai table.

Skipped unless pydantic-ai-slim is installed: `pip install -e '.[pydantic-ai]'` (the nox session
`conform-pydantic-ai` runs it in an environment of its own).
"""

from __future__ import annotations

import re
import threading

import pytest

pytest.importorskip("pydantic_ai")

from turnbound.properties.adapters import pydantic_ai as adapter
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases, make_case
from turnbound.properties.conformance.generated import fuzz_cases
from turnbound.properties.conformance.runner import run_case
from turnbound.properties.scheduler import OpRequest, ThreadedScheduler, drive, first_divergence
from turnbound.reference.errors import ScriptExhausted
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, profile_cases, table_path
from turnbound.reference.table import Table

PROFILE = "pydantic-ai"
ADAPTER = "turnbound.properties.adapters.pydantic_ai:scheduler"
TOOL_CALL = Outcome(facts={"calls": 1, "hasText": False})
ANSWER = Outcome(facts={"calls": 0, "hasText": True})
SUCCESS = Outcome(facts={})
NO_LIMIT_ROUNDS = 120
"""How long the host keeps an always-calling model going without a request limit before it stops answering."""


def test_the_installed_version_is_the_one_modelled() -> None:
    assert adapter.installed_version() == adapter.VERSION


def test_every_bundled_case_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = bundled_cases(table)
    assert len(cases) >= len(profile_cases(table)) >= 25
    divergences = {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence}
    assert divergences == {}


# -- the 0..5 and no-limit table of docs/frameworks/pydantic-ai.md ------------------------


def _always_tool(n: int) -> Script:
    return Script({"model_request": [TOOL_CALL] * n, "run_tool": [SUCCESS] * n})


def _answers_at_step_2() -> Script:
    return Script({"model_request": [TOOL_CALL, ANSWER], "run_tool": [SUCCESS]})


def _params(limit: int | None) -> dict[str, int]:
    return {"requestLimit": limit or 0, "requestLimited": 0 if limit is None else 1}


def _measure(real: ThreadedScheduler, limit: int | None, script: Script) -> tuple[str, int, int]:
    observed = drive(real, _params(limit), ScriptHost(script))
    assert observed.end is not None and observed.fault is None, observed.fault
    c = observed.end.counters
    return observed.end.terminal, c["model_requests"], c["tool_executions"]


def _predict(table: Table, limit: int | None, script: Script) -> tuple[str, int, int]:
    trace = run(table, ScriptHost(script), _params(limit))
    return trace.terminal, trace.counters["model_requests"], trace.counters["tool_executions"]


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 4, 5])
def test_request_limit_0_to_5_measured_equals_predicted(
    table: Table, real: ThreadedScheduler, limit: int
) -> None:
    for script in (_always_tool(limit), _answers_at_step_2()):
        assert _measure(real, limit, script) == _predict(table, limit, script)
    # What the docs page states, read off the real code: N requests, their N tools, then the raise.
    assert _measure(real, limit, _always_tool(limit)) == ("request_limit_exceeded", limit, limit)


def test_no_request_limit_measured_equals_predicted(table: Table, real: ThreadedScheduler) -> None:
    script = _answers_at_step_2()
    assert _measure(real, None, script) == _predict(table, None, script) == ("output", 2, 1)
    # Always calling a tool, the real run asks for another request after every one the host
    # answers, far past the default limit of 50: it is still asking when the host runs out.
    observed = drive(real, _params(None), ScriptHost(_always_tool(NO_LIMIT_ROUNDS)))
    assert observed.end is None and observed.fault is not None
    assert f"no outcome for call #{NO_LIMIT_ROUNDS + 1} of 'model_request'" in observed.fault
    ops = [op for op, _, _ in observed.calls]
    assert ops.count("model_request") == NO_LIMIT_ROUNDS + 1 and ops.count("run_tool") == NO_LIMIT_ROUNDS
    with pytest.raises(ScriptExhausted):
        _predict(table, None, _always_tool(NO_LIMIT_ROUNDS))


# -- generated scripts and misread tables --------------------------------------------------


def test_a_seeded_batch_of_generated_scripts_conforms(table: Table, real: ThreadedScheduler) -> None:
    cases = fuzz_cases(table, 200, seed=12)
    failed = {c.id: r.divergence for c in cases if (r := run_case(real, c)).divergence}
    assert failed == {}
    assert {c.expected.terminal for c in cases} >= {"output", "request_limit_exceeded", "error"}


def _misread(*replacements: tuple[str, str]) -> Table:
    text = table_path(PROFILE).read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    return load_table_text(text, source=f"<{PROFILE} misread>")


def _diverges(wrong: Table, params: dict[str, int], script: Script) -> str | None:
    expected = make_case(wrong, "misread", "case", params, script).expected
    scheduler = adapter.scheduler(wrong)
    try:
        return first_divergence(expected, drive(scheduler, expected.params, ScriptHost(script)))
    finally:
        scheduler.close()


def test_a_table_that_allows_one_request_more_diverges() -> None:
    """Misreading the check as `requests > request_limit` (N + 1 requests): the real code disagrees."""
    wrong = _misread(
        (
            'guard = "requestLimited == 1 and model_requests >= requestLimit"',
            'guard = "requestLimited == 1 and model_requests > requestLimit"',
        ),
        (
            'guard = "requestLimited == 0 or model_requests < requestLimit"',
            'guard = "requestLimited == 0 or model_requests <= requestLimit"',
        ),
    )
    divergence = _diverges(wrong, {"requestLimit": 3}, _always_tool(4))
    assert divergence == (
        "step 7: expected model_request(), observed end request_limit_exceeded "
        "(model_requests=3, tool_executions=3, tool_calls=3, output_retries=0)"
    )


def test_a_table_that_counts_retried_tool_calls_diverges() -> None:
    """usage.tool_calls counts successes only; a table counting every execution disagrees."""
    wrong = _misread(
        ('tool_calls = "tool_calls if retry else tool_calls + 1"', 'tool_calls = "tool_calls + 1"')
    )
    case = next(c for c in profile_cases(load_profile(PROFILE)) if c.name == "tool_retry_then_success")
    divergence = _diverges(wrong, dict(case.params), case.script)
    assert divergence is not None and "tool_calls=2" in divergence and "tool_calls=1" in divergence


def test_conform_command_runs_the_real_agent(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["conform", PROFILE, "--adapter", ADAPTER, "--fuzz", "40", "--fuzzer", "scripts", "--seed", "3"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert (
        f"conform {PROFILE}: {len(profile_cases(load_profile(PROFILE)))} cases, " in out
        and "40 generated" in out
    )
    assert re.search(r"^(\d+) cases: \1 passed, 0 failed$", out, re.MULTILINE), out


def test_an_abandoned_run_leaves_no_thread_behind(table: Table) -> None:
    scheduler = adapter.scheduler(table)
    before = set(threading.enumerate())
    assert scheduler.start({"requestLimit": 1, "requestLimited": 1}) == OpRequest("model_request", {})
    started = set(threading.enumerate()) - before
    scheduler.close()
    assert started and not any(t.is_alive() for t in started)
