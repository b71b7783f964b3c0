"""The same seed draws the same runs wherever turnbound is installed, and fuzzing writes nothing unasked."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from turnbound.properties.cli.main import main
from turnbound.properties.fuzz.coverage import Coverage
from turnbound.properties.fuzz.report import counted, fuzz_counts
from turnbound.properties.fuzz.session import fuzz
from turnbound.properties.fuzz.stateful import machine_for
from turnbound.properties.fuzz.swarm import OutcomeDomains
from turnbound.reference.profiles import load_profile, table_path

DEEPTUTOR = load_profile("deeptutor-scheduler")
REFERENCE = "turnbound.properties.scheduler:ReferenceScheduler"

# Integers Hypothesis would mine from a "local" module (it skips those between -100 and 100).
_CONSTANTS = ", ".join(str(n) for n in (*range(100, 400), *range(-400, -100)))


@pytest.fixture
def local_module(tmp_path: Path) -> Iterator[None]:
    """A module outside site-packages, as an adapter in the caller's directory or an editable install is."""
    (tmp_path / "caller_constants.py").write_text(f"VALUES = ({_CONSTANTS})\nNAMES = ('alpha', 'beta')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("caller_constants")
        yield
    finally:
        sys.modules.pop("caller_constants", None)
        sys.path.remove(str(tmp_path))


def _fuzzed() -> str:
    return json.dumps(fuzz(DEEPTUTOR, examples=40, seed=5).to_json(), sort_keys=True)


def test_local_modules_do_not_change_the_draws(request: pytest.FixtureRequest) -> None:
    """Hypothesis mixes constants from the source of local modules into its draws; turnbound's must not."""
    before = _fuzzed()
    request.getfixturevalue("local_module")
    assert "caller_constants" in sys.modules
    assert _fuzzed() == before


def _machine_counts() -> tuple[int, int, int]:
    """The machine's own `TestCase`, as pytest runs it, on 20 examples."""
    coverage = Coverage(OutcomeDomains(DEEPTUTOR))
    case = machine_for(DEEPTUTOR, coverage=coverage).TestCase
    case.settings = settings(case.settings, max_examples=20)
    result = unittest.TestResult()
    case("runTest").run(result)
    assert result.wasSuccessful(), result.errors + result.failures
    return coverage.examples, coverage.turns, coverage.steps


def test_the_machines_test_case_draws_the_same(request: pytest.FixtureRequest) -> None:
    before = _machine_counts()
    request.getfixturevalue("local_module")
    assert _machine_counts() == before


@pytest.mark.parametrize(
    "command",
    [
        ["fuzz", "deeptutor-scheduler", "--examples", "5"],
        ["conform", "deeptutor-scheduler", "--adapter", REFERENCE, "--fuzz", "5"],
    ],
    ids=["fuzz", "conform"],
)
def test_no_hypothesis_directory_is_left_behind(tmp_path: Path, command: list[str]) -> None:
    """A fresh process, as a user runs it: Hypothesis picks its storage folder once per process."""
    done = subprocess.run(
        [sys.executable, "-m", "turnbound.properties", *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_database_is_written_only_where_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failing example is saved in the directory named, and nowhere else."""
    monkeypatch.chdir(tmp_path)
    _overrun(tmp_path)
    assert main(["fuzz", "overrun.toml", "--examples", "30"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["overrun.toml"]
    assert main(["fuzz", "overrun.toml", "--examples", "30", "--database", "examples"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "overrun.toml"]
    assert any(p.is_file() for p in (tmp_path / "examples").rglob("*"))
    assert "VIOLATION" in capsys.readouterr().out


def test_counts_agree_with_the_run_and_their_nouns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The overrun is broken by the very first host call of the first (simplest) example."""
    monkeypatch.chdir(tmp_path)
    _overrun(tmp_path)
    assert main(["fuzz", "overrun.toml", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["examples"], report["turns"], report["steps"]) == (1, 1, 1)
    assert report["counterexample"]["violation"]["step"] == 1
    assert main(["fuzz", "overrun.toml"]) == 1
    assert capsys.readouterr().out.splitlines()[1] == "1 example, 1 turn, 1 host call answered"


def test_counted() -> None:
    assert [counted(n, "turn") for n in (0, 1, 2, 1948)] == ["0 turns", "1 turn", "2 turns", "1,948 turns"]
    assert fuzz_counts(1, 1, 0) == "1 example, 1 turn, 0 host calls answered"


def _overrun(where: Path) -> Path:
    """deeptutor-scheduler with exploration allowed one round beyond its budget."""
    text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")
    overrun = text.replace("exploration_rounds < explorationBudget", "exploration_rounds <= explorationBudget")
    overrun = overrun.replace("exploration_rounds >= explorationBudget", "exploration_rounds > explorationBudget")
    assert overrun != text
    path = where / "overrun.toml"
    path.write_text(overrun, encoding="utf-8")
    return path
