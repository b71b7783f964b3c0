"""Trace validation: logs of real runs (protocol v1 messages) checked against the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.messages import trace_messages
from turnbound.properties.conformance.validate import validate
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.table import Table


def _log(deeptutor: Table, tmp_path: Path, edit: dict[int, dict] | None = None) -> Path:  # type: ignore[type-arg]
    """Every bundled case's reference run as one log; `edit` replaces messages by line number."""
    lines = [m for c in bundled_cases(deeptutor) for m in trace_messages(c.expected)]
    for n, msg in (edit or {}).items():
        lines[n - 1] = msg
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in lines))
    return path


def test_the_reference_runs_are_accepted(deeptutor: Table, tmp_path: Path) -> None:
    result = validate(deeptutor, _log(deeptutor, tmp_path))
    cases = bundled_cases(deeptutor)
    assert result.accepted
    assert len(result.runs) == len(cases)
    assert [r.counters for r in result.runs] == [c.expected.counters for c in cases]
    assert result.operations == sum(len(c.expected.steps) for c in cases)


def test_the_first_unexplained_step_is_named_with_what_was_expected(deeptutor: Table, tmp_path: Path) -> None:
    # line 12 is the first case's forced_finish: make the scheduler ask for recovery a second time
    log = _log(deeptutor, tmp_path, {12: {"type": "op", "op": "prepare_recovery", "args": {}}})
    lines = log.read_text().splitlines()
    result = validate(deeptutor, log)
    assert result.rejection is not None
    assert result.rejection.line == 12
    assert result.rejection.message == (
        "expected forced_finish(reason=budget) (transition budget_forced_finish, after rounds=2, "
        "exploration_rounds=1, settlement_rounds=1, tool_steps=2), the log has prepare_recovery()"
    )
    assert json.loads(lines[11])["op"] == "prepare_recovery"
    assert len(result.runs) == 1 and result.runs[0].terminal == "recovery_offer"


def test_wrong_counters_at_the_end_are_rejected(deeptutor: Table, tmp_path: Path) -> None:
    end = {
        "type": "end",
        "terminal": "forced_finish",
        "counters": {"rounds": 2, "exploration_rounds": 1, "settlement_rounds": 1, "tool_steps": 2},
    }
    result = validate(deeptutor, _log(deeptutor, tmp_path, {14: end}))
    assert result.rejection is not None and result.rejection.line == 14
    assert result.rejection.message == (
        "the table ends the run at forced_finish (rounds=3, exploration_rounds=1, settlement_rounds=1, "
        "tool_steps=2), the log ends at forced_finish (rounds=2, exploration_rounds=1, settlement_rounds=1, tool_steps=2)"
    )


def test_a_log_that_stops_mid_run_is_rejected_at_its_end(deeptutor: Table, tmp_path: Path) -> None:
    path = _log(deeptutor, tmp_path)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:4]))  # start, op, result, op
    result = validate(deeptutor, path)
    assert result.rejection is not None and result.rejection.line == 5
    assert result.rejection.message.startswith("the log ends before the run does; expected the host's answer")


def test_a_contract_violation_must_end_the_run(deeptutor: Table, tmp_path: Path) -> None:
    log = tmp_path / "violation.jsonl"
    msgs = [
        {"type": "start", "protocol": 1, "profile": "deeptutor-scheduler", "params": {}},
        {"type": "op", "op": "call_round", "args": {"mode": "exploration", "recovery": False}},
        {"type": "result", "facts": {"hasTools": False}},
        {
            "type": "end",
            "terminal": "contract_violation",
            "counters": {"rounds": 0, "exploration_rounds": 0, "settlement_rounds": 0, "tool_steps": 0},
        },
    ]
    log.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    assert validate(deeptutor, log).accepted
    msgs[3]["terminal"] = "finish"
    log.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    rejection = validate(deeptutor, log).rejection
    assert rejection is not None and rejection.line == 4
    # the cause is named as `run` names it (one wording of a contract violation everywhere)
    script = Script.model_validate({"call_round": [{"facts": {"hasTools": False}}]})
    cause = run(deeptutor, ScriptHost(script)).violation
    assert cause is not None and "hasText" in cause
    assert f"(contract violation: {cause})" in rejection.message


def test_params_missing_from_the_log_come_from_the_command_line(deeptutor: Table, tmp_path: Path) -> None:
    case = next(c for c in bundled_cases(deeptutor) if c.id == "ordinary_cap")
    msgs = trace_messages(case.expected)
    msgs[0]["params"] = {}
    log = tmp_path / "p.jsonl"
    log.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    assert validate(deeptutor, log).accepted  # the defaults are the case's parameters
    assert not validate(deeptutor, log, {"settlementBudget": 2}).accepted


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "run.jsonl:3: not valid JSON: Expecting value (column 1)"),
        ("[1, 2]", 'run.jsonl:3: expected a JSON object with a "type"'),
        ('{"type": "result", "facts": 3}', 'run.jsonl:3: "facts" must be an object'),
        ('{"type": "op", "args": {}}', 'run.jsonl:2: an op message needs "op", a string'),
    ],
)
def test_a_malformed_line_is_one_error_naming_it(
    deeptutor: Table, tmp_path: Path, line: str, message: str
) -> None:
    path = _log(deeptutor, tmp_path)
    lines = path.read_text().splitlines()
    lines[2 if "type" not in line or "facts" in line else 1] = line
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DefinitionError) as exc:
        validate(deeptutor, path)
    assert str(exc.value).endswith(message)


def test_the_command(deeptutor: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(deeptutor, tmp_path)
    assert main(["validate", "deeptutor-scheduler", str(log)]) == 0
    n = sum(len(c.expected.steps) for c in bundled_cases(deeptutor))
    first, *judged = capsys.readouterr().out.strip().splitlines()
    assert first == f"accepted: {len(bundled_cases(deeptutor))} runs, {n} host operations ({log})"
    assert judged and all(line.startswith("run ") and line.endswith("(as expected)") for line in judged)
    bad = _log(deeptutor, tmp_path, {12: {"type": "op", "op": "finish", "args": {}}})
    assert main(["validate", "deeptutor-scheduler", str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["accepted"], data["rejection"]["line"]) == (False, 12)
    (tmp_path / "broken.jsonl").write_text("{\n")
    assert main(["validate", "deeptutor-scheduler", str(tmp_path / "broken.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("turnbound: error: ")


def test_the_judge_names_the_claims_a_followed_run_breaks(deeptutor: Table, tmp_path: Path) -> None:
    """ordinary_cap ends with rounds = 3 > explorationBudget + settlementBudget: the naive bound
    the table expects to be violated; the log is accepted all the same (it did what the table says)."""
    case = next(c for c in bundled_cases(deeptutor) if c.id == "ordinary_cap")
    log = tmp_path / "cap.jsonl"
    log.write_text("\n".join(json.dumps(m) for m in trace_messages(case.expected)) + "\n")
    result = validate(deeptutor, log)
    assert result.accepted
    assert [(b.run, b.name, b.kind, b.expect) for b in result.broken] == [
        (1, "naive_rounds_bound", "bound", "violated")
    ]
