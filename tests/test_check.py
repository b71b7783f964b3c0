"""`turnbound check`: one report over every engine; a failing engine makes it fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turnbound.properties.all_engines import check_profile
from turnbound.properties.cli.main import main
from turnbound.reference.loader import load_table_text


def test_every_engine_on_a_small_table(tiny_text: str, tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text)
    table = load_table_text(tiny_text, str(path))
    result = check_profile(table, examples=20)
    assert result.ok
    assert result.explore_ok is True and result.configurations == 4  # budget 0..3
    assert result.fuzzed is not None and result.fuzzed.ok
    [bound] = [p for p in result.proofs if p.goal.name == "steps_bound"]
    assert bound.verdict == "proved" and bound.tight is True


def test_a_false_bound_fails_every_engine_that_sees_it(tiny_text: str, tmp_path: Path) -> None:
    text = tiny_text.replace('expr = "steps <= budget"', 'expr = "steps < budget"')
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    result = check_profile(load_table_text(text, str(path)), examples=30)
    assert not result.ok
    assert result.explore_ok is False
    assert result.prove_ok is False
    assert result.fuzzed is not None and not result.fuzzed.ok


def test_check_cli_reports_and_exits(
    tiny_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text)
    assert main(["check", str(path), "--examples", "10"]) == 0
    out = capsys.readouterr().out
    assert "steps <= budget" in out and "PROVED, tight" in out
    assert out.strip().splitlines()[-1] == "OK: 1 profile; every engine's verdict as expected"
    assert main(["check", str(path), "--engines", "cases,explore", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["profiles"][0]["fuzz"] is None


def test_check_rejects_an_unknown_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--engines", "cases,magic"]) == 2
    assert "unknown engines ['magic']" in capsys.readouterr().err


def test_deeptutor_cases_and_fuzzing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "deeptutor-scheduler", "--engines", "cases,fuzz", "--examples", "25"]) == 0
    out = capsys.readouterr().out
    assert "cases    11/11 pass" in out


def test_profiles_side_by_side_report_what_one_worker_reports(capsys: pytest.CaptureFixture[str]) -> None:
    """`--jobs 2` checks two profiles at once; the report is the one `--jobs 1` prints, in order."""
    reports = []
    for jobs in ("1", "2"):
        args = ["check", "dsh-turn-unguarded", "strands-agents", "--examples", "10", "--jobs", jobs, "--json"]
        assert main(args) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert [p["profile"] for p in reports[1]["profiles"]] == ["dsh-turn-unguarded", "strands-agents"]
    assert all(p["prove"] for p in reports[1]["profiles"])  # the proofs came back from the workers
