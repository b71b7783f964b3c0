"""Wire protocol v1: a subprocess behind the Scheduler interface, and what happens when it misbehaves.

Every hostile implementation (tests/impl/hostile/iut.py) must end as a failed case with
a reason, in seconds, with its whole process group gone.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from turnbound.properties.conformance.cases import bundled_cases, run_case
from turnbound.properties.conformance.messages import (
    CANCEL,
    ProtocolError,
    message_outcome,
    outcome_message,
    parse_request,
    trace_messages,
)
from turnbound.properties.conformance.serve import reference_run, serve
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.properties.scheduler import End, drive
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table

IMPL = Path(__file__).resolve().parent / "impl"
HOSTILE = [sys.executable, str(IMPL / "hostile" / "iut.py")]
NODE = ["node", str(IMPL / "node" / "deeptutor-scheduler.js")]
REFERENCE = [sys.executable, "-m", "turnbound.properties.conformance.serve", "deeptutor-scheduler"]


def _gone(pid: int) -> bool:
    """Whether a process no longer runs (a zombie waiting for init to reap it counts as gone)."""
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _hostile(deeptutor: Table, mode: str, **kwargs: float) -> tuple[WireScheduler, str]:
    wire = WireScheduler([*HOSTILE, mode], deeptutor, timeout=kwargs.pop("timeout", 5.0), **kwargs)  # type: ignore[arg-type]
    case = bundled_cases(deeptutor)[0]
    result = run_case(wire, case)
    assert not result.passed
    assert result.observed.fault is not None
    return wire, result.observed.fault


def test_the_reference_over_the_wire_passes_every_case_in_one_process(deeptutor: Table) -> None:
    wire = WireScheduler(REFERENCE, deeptutor)
    results = [run_case(wire, c) for c in bundled_cases(deeptutor)]
    wire.close()
    assert [r.divergence for r in results] == [None] * len(results)
    assert wire.starts == 1


def test_an_unfinished_case_is_cancelled_not_restarted(deeptutor: Table) -> None:
    """The host script runs out mid-case: the implementation gets a raise it must reject, and goes on."""
    wire = WireScheduler(NODE, deeptutor)
    short = Script.model_validate(
        {
            "call_round": [
                {
                    "facts": {
                        "hasTools": True,
                        "hasText": False,
                        "truncated": False,
                        "reasoningBudgetExhausted": False,
                    }
                }
            ]
        }
    )
    observed = drive(wire, deeptutor.defaults(), ScriptHost(short))
    assert (
        observed.fault
        == "host script has no outcome for call #1 of 'dispatch_tools': add one to script.dispatch_tools"
    )
    assert all(run_case(wire, c).passed for c in bundled_cases(deeptutor))
    wire.close()
    assert wire.starts == 1


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", "no message within 0.5s (the implementation hangs)"),
        ("hang-mid-case", "no message within 0.5s (the implementation hangs)"),
        ("exit-early", "the implementation exited with code 0 before ending the case"),
        ("garbage", "invalid JSON (Expecting value): this is not json"),
        ("wrong-type", "protocol error: expected an op or end message, got type 'result'"),
        (
            "unknown-op",
            "protocol error: unknown op 'launch_missiles'; operations: call_round, dispatch_tools",
        ),
        ("missing-field", 'protocol error: an end message needs "counters", an object'),
        ("bad-arg", "protocol error: op call_round: arg recovery=1 is not a bool"),
    ],
)
def test_a_hostile_implementation_is_a_failed_case_with_the_reason(
    deeptutor: Table, mode: str, reason: str
) -> None:
    wire, fault = _hostile(deeptutor, mode, timeout=0.5)
    assert fault.startswith(reason)
    assert wire._proc is None  # killed, to be restarted for the next case


def test_a_crash_shows_the_exit_code_and_the_last_stderr_lines(deeptutor: Table) -> None:
    _, fault = _hostile(deeptutor, "crash")
    assert fault.startswith("the implementation exited with code 1 before ending the case; stderr: ")
    assert 'raise ValueError("the scheduler crashed on purpose")' in fault
    assert fault.endswith("ValueError: the scheduler crashed on purpose")


def test_an_overlong_line_is_a_flood(deeptutor: Table) -> None:
    _, fault = _hostile(deeptutor, "flood-line", max_line=4096)
    assert fault == "flood: a line longer than 4096 bytes"


def test_too_many_messages_in_one_case_is_a_flood(deeptutor: Table) -> None:
    wire = WireScheduler([*HOSTILE, "flood-messages"], deeptutor, timeout=5, max_messages=50)
    answers = Script.model_validate({"finish": [{"facts": {}}] * 1000})
    observed = drive(wire, deeptutor.defaults(), ScriptHost(answers))
    assert observed.fault == "flood: more than 50 messages in one case"
    assert len(observed.calls) == 50


def test_no_process_is_left_behind_not_even_a_grandchild(deeptutor: Table) -> None:
    _, fault = _hostile(deeptutor, "grandchild", timeout=0.5)
    assert "stderr: grandchild " in fault
    grandchild = int(fault.rsplit("grandchild ", 1)[1])
    assert _gone(grandchild)


def test_after_a_crash_the_next_case_gets_a_new_process(deeptutor: Table, tmp_path: Path) -> None:
    wire = WireScheduler([*HOSTILE, "once", str(tmp_path / "crashed")], deeptutor, timeout=5)
    first, *rest = [run_case(wire, c) for c in bundled_cases(deeptutor)]
    wire.close()
    assert first.observed.fault is not None and "first process crashes" in first.observed.fault
    assert all(r.passed for r in rest)
    assert wire.starts == 2


def test_close_sends_stop_and_the_implementation_exits(deeptutor: Table) -> None:
    wire = WireScheduler(NODE, deeptutor)
    assert run_case(wire, bundled_cases(deeptutor)[0]).passed
    proc = wire._proc
    assert proc is not None
    wire.close()
    assert proc.popen.returncode == 0  # it ended by itself on stop, before the kill


def test_a_command_that_does_not_exist_is_a_fault(deeptutor: Table) -> None:
    wire = WireScheduler(["/nonexistent/iut"], deeptutor)
    result = run_case(wire, bundled_cases(deeptutor)[0])
    assert result.observed.fault == "cannot start '/nonexistent/iut': No such file or directory"


def test_outcomes_on_the_wire_round_trip() -> None:
    failure = Outcome.of_raise("host_failure", partial=True)
    assert outcome_message(failure) == {"type": "raise", "error": "host_failure", "partial": True}
    assert message_outcome(outcome_message(failure)) == failure
    facts = Outcome.of_facts(hasTools=True, extraRounds=1)
    assert outcome_message(facts) == {"type": "result", "facts": {"hasTools": True, "extraRounds": 1}}
    assert message_outcome(outcome_message(facts)) == facts
    with pytest.raises(ProtocolError, match="facts: x must be a boolean, integer or string"):
        message_outcome({"type": "result", "facts": {"x": [1]}})


def test_requests_are_checked_against_the_table(deeptutor: Table) -> None:
    assert parse_request({"type": "end", "terminal": "finish", "counters": {"rounds": 1}}, deeptutor) == End(
        "finish", {"rounds": 1}
    )
    with pytest.raises(ProtocolError, match="counter rounds=true is not an integer"):
        parse_request({"type": "end", "terminal": "finish", "counters": {"rounds": True}}, deeptutor)
    with pytest.raises(ProtocolError, match="a message must be a JSON object, got list"):
        parse_request([], deeptutor)


def test_serve_answers_the_protocol_with_a_python_scheduler(deeptutor: Table) -> None:
    case = next(c for c in bundled_cases(deeptutor) if c.id == "recovery_answer")
    incoming = [
        json.dumps(m) for m in trace_messages(case.expected) if m["type"] in ("start", "result", "raise")
    ]
    incoming.append(json.dumps({"type": "stop"}))
    out = io.StringIO()
    assert serve(reference_run(deeptutor), io.StringIO("\n".join(incoming) + "\n"), out) == 0
    sent = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sent == [m for m in trace_messages(case.expected) if m["type"] in ("op", "end")]


def test_the_cancel_failure_is_not_a_table_name() -> None:
    assert not CANCEL.isidentifier()


def test_the_node_implementation_is_on_the_machine() -> None:
    assert os.access(IMPL / "node" / "deeptutor-scheduler.js", os.R_OK)


def test_every_message_of_a_run_fits_the_wire_schema(deeptutor: Table) -> None:
    schema = json.loads(
        (Path(__file__).resolve().parent.parent / "spec" / "schema" / "wire-message.schema.json").read_text()
    )
    validator = jsonschema.Draft202012Validator(schema)
    for case in bundled_cases(deeptutor):
        for msg in [*trace_messages(case.expected), {"type": "stop"}]:
            validator.validate(msg)
    assert not validator.is_valid({"type": "end", "terminal": "finish"})
    assert not validator.is_valid({"type": "op", "op": "call_round", "args": {"mode": ["x"]}})
    assert validator.is_valid({"type": "raise", "error": "host_failure", "partial": True})
