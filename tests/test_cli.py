"""The command line as a user meets it: reports, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from turnbound.properties.cli.app import COMMANDS, app, load_all_commands, short_help
from turnbound.properties.cli.main import main

CASES = Path(__file__).resolve().parent.parent / "spec" / "cases" / "deeptutor-scheduler"


def test_all_cases_print_probe_lines_then_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "deeptutor-scheduler", "--all-cases"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "ordinary_cap: rounds=3; exploration=1; settlement=1; tool_steps=2; terminal=forced_finish"
    )
    assert "abort_during_dispatch: synthetic_dispatches=1; no later host operation" in out
    assert out[-1] == "PASS: 11 cases"


def test_one_case_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "deeptutor-scheduler", "--case", "recovery_tools", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [result] = data["results"]
    assert result["passed"] is True
    assert result["trace"]["terminal"] == "reject_finish"
    assert [s["op"] for s in result["trace"]["steps"]].count("dispatch_tools") == 3


def test_failing_case_exits_one_and_names_the_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table that forgets to add the forced finish's extra round fails the seed's first row."""
    repo = Path(__file__).resolve().parent.parent / "spec"
    text = (repo / "deeptutor-scheduler.toml").read_text()
    forgetful = text.replace('rounds = "rounds + extraRounds", ', "", 1)
    assert forgetful != text
    (tmp_path / "deeptutor-scheduler.toml").write_text(forgetful)
    shutil.copytree(CASES, tmp_path / "cases" / "deeptutor-scheduler")
    assert main(["run", str(tmp_path / "deeptutor-scheduler.toml"), "--case", "ordinary_cap"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "ordinary_cap: rounds=2; exploration=1; settlement=1; tool_steps=2; terminal=forced_finish"
    )
    assert out[1] == "FAIL: 1 of 1 cases"
    assert "rounds=2, expected 3" in out[2]


def test_script_prints_a_readable_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "deeptutor-scheduler", "--script", str(CASES / "recovery_rejected.json")]) == 0
    out = capsys.readouterr().out
    assert "reject_rogue_batch" in out
    assert "hasTools, recoveryRejected" in out
    assert out.strip().endswith("rounds=3; exploration=1; settlement=2; tool_steps=2; terminal=reject_finish")


def test_script_param_overrides_the_case(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "deeptutor-scheduler",
            "--script",
            str(CASES / "ordinary_cap.json"),
            "--param",
            "settlementBudget=0",
            "--json",
        ]
    )
    assert code == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["params"]["settlementBudget"] == 0
    assert trace["counters"]["rounds"] == 2  # one exploration round, then the forced finish's extra one


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "nope", "--all-cases"], "unknown profile 'nope'"),
        (["run", "deeptutor-scheduler"], "say what to run"),
        (["run", "deeptutor-scheduler", "--case", "nope"], "no case named 'nope'"),
        (["run", "deeptutor-scheduler", "--script", "/nonexistent.json"], "cannot read script"),
        (["run", "deeptutor-scheduler", "--bogus"], "No such option"),
        (["run", "deeptutor-scheduler", "--all-cases", "--param", "x"], "--param"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"call_round": [{"facts": {}, "raise": "abort"}]}', "either"),
        ('{"call_round": {"facts": {}}}', "script.call_round"),
        ('{"params": [1], "script": {}}', "params"),
    ],
)
def test_malformed_script_is_one_line(
    tmp_path: Path, content: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    assert main(["run", "deeptutor-scheduler", "--script", str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


def test_profiles_lists_the_bundled_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert "deeptutor-scheduler" in [r["name"] for r in rows]


def test_console_script_runs_as_a_module() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "turnbound.properties",
            "run",
            "deeptutor-scheduler",
            "--case",
            "ordinary_cap",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1] == "PASS: 1 cases"


def test_help_lists_every_command_without_importing_it() -> None:
    """The lazy registry names each command's module and help as the command itself does."""
    code = (
        "import sys; from turnbound.properties.cli.main import main; main(['--help']); "
        "print(sorted(m for m in sys.modules if m.startswith(('turnbound.properties.explore', "
        "'turnbound.properties.prove', 'hypothesis', 'z3', 'networkx'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.rstrip().endswith("[]"), out
    load_all_commands()
    assert set(app.commands) == set(COMMANDS)
    for name, (module, text) in COMMANDS.items():
        command = app.commands[name]
        assert command.callback is not None
        assert command.callback.__module__ == f"turnbound.properties.cli.{module}", name
        for limit in (30, 45, 60, 74, 200):
            assert short_help(text, limit) == command.get_short_help_str(limit), (name, limit)
