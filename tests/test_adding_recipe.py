"""docs/frameworks/ADDING.md stays true: its worked example (a loop, its table, its adapter)
passes every step of the recipe, and the recipe catches a bug in the loop."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from turnbound.properties.cli.main import main

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "frameworks" / "example"
TABLE = str(EXAMPLE / "my-loop.toml")
ADAPTER = "adapter:scheduler"


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The example's adapter module, importable as the recipe's PYTHONPATH makes it."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in ("adapter", "my_loop"):
        sys.modules.pop(name, None)
    yield importlib.import_module("adapter")
    for name in ("adapter", "my_loop"):
        sys.modules.pop(name, None)


def test_step_1_every_engine_agrees_with_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", TABLE]) == 0
    out = capsys.readouterr().out
    assert "model_requests <= maxSteps" in out and "REFUTED (as expected)" in out


def test_step_2_the_cases_and_vectors_are_current() -> None:
    assert main(["run", TABLE, "--all-cases"]) == 0
    assert main(["vectors", "check", TABLE]) == 0


def test_step_3_the_real_loop_conforms(example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", TABLE, "--adapter", ADAPTER, "--fuzz", "50"]) == 0
    assert "0 failed" in capsys.readouterr().out


def test_the_recipe_catches_a_loop_that_takes_one_step_too_many(
    example: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    honest = example.run_agent

    def one_step_too_many(model: object, tool: object, max_steps: int = 5) -> str:
        return str(honest(model, tool, max_steps + 1))

    monkeypatch.setattr(example, "run_agent", one_step_too_many)
    assert main(["conform", TABLE, "--adapter", ADAPTER]) == 1
    assert "FAIL case cap_after_two_steps" in capsys.readouterr().out
