"""ITF export: the structure Apalache/Quint tooling reads, and counters/locations that round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.export.itf import decode_itf_value, encode_itf_value, read_itf, to_itf, write_itf
from turnbound.reference.table import Table

CASES = Path(__file__).resolve().parent.parent / "spec" / "cases" / "deeptutor-scheduler"


def test_the_document_has_the_itf_structure(deeptutor: Table) -> None:
    case = next(c for c in bundled_cases(deeptutor) if c.id == "ordinary_cap")
    doc = to_itf(deeptutor, case.expected)
    assert set(doc) == {"#meta", "params", "vars", "states"}
    assert doc["#meta"]["format"] == "ITF" and doc["#meta"]["table_sha256"] == deeptutor.digest
    assert doc["params"] == [p.name for p in deeptutor.parameters]
    assert doc["vars"][0] == "location"
    assert [s["#meta"] for s in doc["states"]] == [{"index": i} for i in range(len(doc["states"]))]
    for state in doc["states"]:
        assert set(state) == {"#meta", *doc["params"], *doc["vars"]}
        assert state["rounds"].keys() == {"#bigint"}  # integers are bigints, never JSON numbers
        assert all(not isinstance(v, int) or isinstance(v, bool) for v in state.values())
    first, last = doc["states"][0], doc["states"][-1]
    assert (first["location"], first["action"], first["outcome"]) == (
        "loop",
        "init",
        {"tag": "None", "value": {"#tup": []}},
    )
    assert last["outcome"] == {"tag": "Facts", "value": {"extraRounds": {"#bigint": "1"}}}


@pytest.mark.parametrize("name", [p.stem for p in sorted(CASES.glob("*.json"))])
def test_counters_and_locations_round_trip(deeptutor: Table, tmp_path: Path, name: str) -> None:
    case = next(c for c in bundled_cases(deeptutor) if c.id == name)
    trace = case.expected
    path = tmp_path / "t.itf.json"
    write_itf(path, deeptutor, trace)
    states = read_itf(path)
    assert [s["action"] for s in states[1:]] == trace.path
    assert states[-1]["location"] == trace.terminal
    assert {k: states[-1][k] for k in trace.counters} == trace.counters
    host_states = [s for s in states if s["op"]]
    assert [s["op"] for s in host_states] == trace.ops
    assert [{k: s[k] for k in step.counters} for s, step in zip(host_states, trace.steps, strict=True)] == [
        step.counters for step in trace.steps
    ]


def test_values_encode_and_decode() -> None:
    value = {"n": 3, "b": True, "s": "x", "l": [1, False]}
    assert encode_itf_value(value) == {"n": {"#bigint": "3"}, "b": True, "s": "x", "l": [{"#bigint": "1"}, False]}
    assert decode_itf_value(encode_itf_value(value)) == value
    assert decode_itf_value({"#map": [[{"#bigint": "1"}, "a"]]}) == {1: "a"}
    assert decode_itf_value({"#tup": [{"#bigint": "-2"}]}) == (-2,)


def test_run_script_writes_itf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "trace.itf.json"
    assert (
        main(
            ["run", "deeptutor-scheduler", "--script", str(CASES / "recovery_tools.json"), "--itf", str(out)]
        )
        == 0
    )
    states = read_itf(out)
    assert states[-1]["location"] == "reject_finish" and states[-1]["tool_steps"] == 3
    assert json.loads(out.read_text())["#meta"]["description"].startswith("deeptutor-scheduler on ")
    assert main(["run", "deeptutor-scheduler", "--all-cases", "--itf", str(out)]) == 2
    assert "--itf applies to --script" in capsys.readouterr().err


def test_validate_writes_the_rejected_run(
    deeptutor: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = next(c for c in bundled_cases(deeptutor) if c.id == "recovery_answer")
    msgs = [{"type": "start", "protocol": 1, "profile": deeptutor.name, "params": case.params}]
    for step in case.expected.steps[:2]:
        msgs += [
            {"type": "op", "op": step.op, "args": step.args},
            {"type": "result", **step.outcome.to_json()},
        ]
    msgs.append({"type": "op", "op": "finish", "args": {}})
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    out = tmp_path / "rejected.itf.json"
    assert main(["validate", "deeptutor-scheduler", str(log), "--itf", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["#meta"]["rejection"]["line"] == 6
    assert [s["op"] for s in doc["states"] if s["op"]] == ["call_round", "dispatch_tools"]
