"""The conformance runner against the JavaScript implementation (tests/impl/node) and its broken variants."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.generated import fuzz_cases
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.reference.host import Host
from turnbound.reference.table import Table

NODE = ["node", str(Path(__file__).resolve().parent / "impl" / "node" / "deeptutor-scheduler.js")]


def _conform(capsys: pytest.CaptureFixture[str], *args: str, bug: str | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    command = [*NODE, f"--bug={bug}"] if bug else NODE
    code = main(["conform", "deeptutor-scheduler", *args, "--json", "--", *command])
    return code, json.loads(capsys.readouterr().out)


def test_the_node_implementation_passes_every_case_vector_and_generated_script(
    deeptutor: Table, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _conform(capsys, "--fuzzer", "scripts", "--fuzz", "300", "--seed", "7")
    expected = len(bundled_cases(deeptutor)) + len(bundled_vector_cases(deeptutor)) + 300
    assert (code, report["cases"], report["failed"], report["restarts"]) == (0, expected, 0, 0)


@pytest.mark.parametrize(
    ("bug", "case", "divergence"),
    [
        (
            "no-extra-round",
            "ordinary_cap",
            "end: expected counters rounds=3, exploration_rounds=1, settlement_rounds=1, tool_steps=2, "
            "observed rounds=2, exploration_rounds=1, settlement_rounds=1, tool_steps=2",
        ),
        (
            "recovery-twice",
            "recovery_tools",
            "step 8: the implementation called prepare_recovery() where the reference calls reject_finish()",
        ),
        (
            "dispatch-rejected",
            "recovery_rejected",
            "step 7: the implementation called dispatch_tools() where the reference calls reject_finish()",
        ),
        (
            "partial-salvaged",
            "partial_error",
            "step 4: the implementation called forced_finish(reason=error) where the reference ends at error",
        ),
        (
            "wrong-counters",
            "recovery_answer",
            "end: expected counters rounds=3, exploration_rounds=1, settlement_rounds=2, tool_steps=2, "
            "observed rounds=3, exploration_rounds=2, settlement_rounds=1, tool_steps=2",
        ),
    ],
)
def test_each_broken_variant_fails_with_its_first_divergence(
    capsys: pytest.CaptureFixture[str], bug: str, case: str, divergence: str
) -> None:
    code, report = _conform(capsys, bug=bug)
    failed = {r["id"]: r for r in report["results"] if not r["passed"]}
    assert code == 1
    assert failed[case]["divergence"] == divergence
    assert report["failed"] == len(failed) > 0


def test_a_bug_no_case_shows_is_found_by_vectors_and_by_generated_scripts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, report = _conform(capsys, bug="empty-after-recovery")
    failed = [r for r in report["results"] if not r["passed"]]
    assert code == 1 and {r["kind"] for r in failed} == {
        "vector"
    }  # the seed's cases miss it; the edges do not
    assert all("the implementation called forced_finish(reason=budget)" in r["divergence"] for r in failed)
    code, report = _conform(
        capsys, "--vectors", str(tmp_path), "--fuzzer", "scripts", "--fuzz", "300", bug="empty-after-recovery"
    )
    [first, *_] = [r for r in report["results"] if not r["passed"]]
    assert code == 1
    assert first["divergence"] == (
        "step 3: the implementation called forced_finish(reason=budget) where the reference calls reject_finish()"
    )
    assert first["params"] == {"explorationBudget": 0, "settlementBudget": 0, "emptyRecoveryBudget": 0}
    assert [s["op"] for s in first["expected"]["ops"]] == ["prepare_recovery", "call_round", "reject_finish"]
    assert first["shrunk_from_size"] > 3


def test_the_hypothesis_machine_runs_against_a_subprocess(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _conform(capsys, "--fuzz", "4")
    machine = report["machine"]
    assert (code, machine["passed"], machine["examples"]) == (0, True, 4)
    assert machine["turns"] >= 4 and report["restarts"] == 0


@pytest.mark.slow
def test_the_hypothesis_machine_finds_and_shrinks_the_same_bug(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _conform(capsys, "--fuzz", "30", bug="empty-after-recovery")
    machine = report["machine"]
    assert code == 1 and not machine["passed"]
    assert machine["message"].endswith(
        "first divergence: step 3: the implementation called forced_finish(reason=budget) "
        "where the reference calls reject_finish()"
    )
    assert machine["replayed"]["params"] == {
        "explorationBudget": 0,
        "settlementBudget": 0,
        "emptyRecoveryBudget": 0,
    }


def test_the_text_report_names_the_case_and_ends_with_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "deeptutor-scheduler", "--", *NODE, "--bug=dispatch-rejected"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        "FAIL case recovery_rejected: step 7: the implementation called dispatch_tools() "
        "where the reference calls reject_finish()"
    ) in out
    assert any(line.split() == ["7", "reject_finish()", "->", "ok", "dispatch_tools()"] for line in out)
    failed = sum(1 for line in out if line.startswith("FAIL "))
    total = int(out[-1].split()[0])
    assert out[-1] == f"{total} cases: {total - failed} passed, {failed} failed"


def test_junit_xml_has_a_testcase_per_case_and_the_divergence(
    tmp_path: Path, deeptutor: Table, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "conform.xml"
    assert (
        main(["conform", "deeptutor-scheduler", "--junit", str(junit), "--", *NODE, "--bug=recovery-twice"])
        == 1
    )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert (
        len(cases)
        == int(suite.get("tests", ""))
        == len(bundled_cases(deeptutor)) + len(bundled_vector_cases(deeptutor))
    )
    failed = {tc.get("name"): tc.find("failure") for tc in cases if tc.find("failure") is not None}
    assert int(suite.get("failures", "")) == len(failed)
    failure = failed["recovery_tools"]
    assert failure is not None
    assert (
        failure.get("message")
        == "step 8: the implementation called prepare_recovery() where the reference calls reject_finish()"
    )
    assert (
        "implementation stopped: it called prepare_recovery(), a call the reference does not make there"
        in (failure.text or "")
    )


def test_itf_holds_the_first_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    itf = tmp_path / "cx.itf.json"
    assert (
        main(["conform", "deeptutor-scheduler", "--itf", str(itf), "--", *NODE, "--bug=partial-salvaged"])
        == 1
    )
    doc = json.loads(itf.read_text())
    assert doc["#meta"]["case"] == "partial_error"
    assert (
        doc["#meta"]["divergence"]
        == "step 4: the implementation called forced_finish(reason=error) where the reference ends at error"
    )
    assert [o["op"] for o in doc["#meta"]["observed"]][-1] == "forced_finish"
    assert doc["states"][-1]["location"] == "error"


def naive_run(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    """An in-process scheduler that ignores every budget: one round, then finish."""
    host.call("call_round", {"mode": "exploration", "recovery": False})
    host.call("finish", {})
    return "finish", {"rounds": 1, "exploration_rounds": 1, "settlement_rounds": 0, "tool_steps": 0}


def test_in_process_adapters(capsys: pytest.CaptureFixture[str]) -> None:
    ref = "turnbound.properties.scheduler:ReferenceScheduler"
    assert (
        main(["conform", "deeptutor-scheduler", "--adapter", ref, "--fuzzer", "scripts", "--fuzz", "50"]) == 0
    )
    assert capsys.readouterr().out.splitlines()[-1].endswith(" passed, 0 failed")
    assert (
        main(["conform", "deeptutor-scheduler", "--adapter", "tests.test_conform:naive_run", "--json"]) == 1
    )
    report = json.loads(capsys.readouterr().out)
    first = next(r for r in report["results"] if r["id"] == "ordinary_cap")
    assert (
        first["divergence"]
        == "step 2: the implementation called finish() where the reference calls dispatch_tools()"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "name the implementation: -- COMMAND [ARGS...], or --adapter MODULE:NAME"),
        (["--adapter", "nope"], "--adapter 'nope': expected MODULE:NAME"),
        (
            ["--adapter", "turnbound.properties.scheduler:Nothing"],
            "turnbound.properties.scheduler has no 'Nothing'",
        ),
        (["--vectors", "/nonexistent", "--", "true"], "/nonexistent: no such vector directory"),
    ],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["conform", "deeptutor-scheduler", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("turnbound: error: ") and message in err and err.count("\n") == 1


def test_generated_scripts_are_deterministic_and_seeded(deeptutor: Table) -> None:
    def scripts(seed: int) -> list[str]:
        return [c.script.model_dump_json() + json.dumps(c.params) for c in fuzz_cases(deeptutor, 40, seed)]

    assert scripts(3) == scripts(3)
    assert scripts(3) != scripts(4)
    terminals = {c.expected.terminal for c in fuzz_cases(deeptutor, 200, 0)}
    assert {"finish", "forced_finish", "reject_finish", "error", "aborted", "contract_violation"} <= terminals
