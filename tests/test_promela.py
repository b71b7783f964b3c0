"""`turnbound export promela`: SPIN, searching the exported model, stores exactly the states
the explorer stores with every state stored (`all_states=True`: the export has one d_step per
transition), agrees on every claim, and finds the counterexample of a false one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import explore
from turnbound.properties.export.promela import export_promela
from turnbound.properties.export.spin import run_spin, spin_available
from turnbound.reference.profiles import load_profile

if not spin_available():  # CI installs spin and gcc (.ci/run); elsewhere the SPIN tests need them
    if os.environ.get("CI"):
        pytest.fail("CI must have spin and gcc: .ci/run installs them", pytrace=False)
    pytestmark = pytest.mark.skip(reason="spin or gcc is not installed (apt-get install spin gcc)")

SMALL = [
    ("dsh-turn-guard", {"maxSteps": 3, "gracefulSteps": 2, "maxFires": 1}),
    ("tool-call-budget", {"max_rounds": 2}),
    ("deeptutor-scheduler", {"explorationBudget": 1, "settlementBudget": 1}),
    # facts a host call gives that nothing at its target reads: both forget them
    ("openai-agents", {"maxTurns": 2}),
    ("google-adk", {"maxLlmCalls": 2, "agentTool": 1}),
    ("smolagents", {"maxSteps": 2}),
]
LARGER = [
    ("dsh-turn-guard-refire", {}),
    ("dsh-turn-guard", {}),
    ("deeptutor-scheduler", {"explorationBudget": 2, "settlementBudget": 2}),
    ("tool-call-budget", {"max_rounds": 4}),
    ("deeptutor-agentloop", {"maxRounds": 1}),
]


def _same_states(name: str, params: dict[str, int]) -> None:
    table = load_profile(name)
    summary = explore(table, params, all_states=True).summary  # one d_step per transition
    assert summary.complete and summary.ok and summary.stored == "all"
    result = run_spin(export_promela(table, params))
    assert result.errors == 0, result.output
    assert result.states == summary.states


@pytest.mark.parametrize(("name", "params"), SMALL, ids=[n for n, _ in SMALL])
def test_spin_stores_the_explorers_states(name: str, params: dict[str, int]) -> None:
    _same_states(name, params)


ATOMIC = [
    ("dsh-turn-guard", {"maxSteps": 3, "gracefulSteps": 2, "maxFires": 1}),
    ("tool-call-budget", {"max_rounds": 2}),
    pytest.param(  # its internal chains, copied into every d_step, take gcc minutes
        "deeptutor-scheduler", {"explorationBudget": 1, "settlementBudget": 1}, marks=pytest.mark.slow
    ),
]


@pytest.mark.parametrize(("name", "params"), ATOMIC, ids=["dsh-turn-guard", "tool-call-budget", "deeptutor"])
def test_spin_on_the_atomic_export_stores_the_atomic_explorers_states(
    name: str, params: dict[str, int]
) -> None:
    """`export_promela(atomic=True)` runs the internal transitions after each step inside its d_step,
    as the default explorer walks them inside one edge: both store the same states, fewer than all."""
    table = load_profile(name)
    atomic = explore(table, params).summary
    assert atomic.complete and atomic.ok and atomic.stored == "atomic"
    result = run_spin(export_promela(table, params, atomic=True))
    assert result.errors == 0, result.output
    assert result.states == atomic.states < explore(table, params, all_states=True).summary.states


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), LARGER, ids=[f"{n}-{p}" for n, p in LARGER])
def test_spin_stores_the_explorers_states_on_larger_configurations(name: str, params: dict[str, int]) -> None:
    _same_states(name, params)


def test_spin_finds_the_counterexample_of_a_false_bound() -> None:
    table = load_profile("deeptutor-scheduler")
    params = {"explorationBudget": 1, "settlementBudget": 1}
    assert explore(table, params).summary.claim("naive_rounds_bound").verdict == "violated"
    result = run_spin(export_promela(table, params, claim="naive_rounds_bound"))
    assert result.errors == 1
    assert "assertion violated (v_rounds<=(1+1))" in result.output


def test_the_export_is_byte_stable(tmp_path: Path) -> None:
    first, second = tmp_path / "a.pml", tmp_path / "b.pml"
    for out in (first, second):
        assert main(["export", "promela", "tool-call-budget", "-p", "max_rounds=2", "--out", str(out)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert "#define P_max_rounds 2" in first.read_text()


def test_an_unknown_claim_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "promela", "tool-call-budget", "--claim", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("turnbound: error: tool-call-budget: no claim 'nope'") and err.count("\n") == 1


def test_counts_past_a_byte_get_an_int(tmp_path: Path) -> None:
    """A monitor that counts to 300 would wrap in a Promela byte and miss the violation."""
    text = Path(load_profile("tool-call-budget").source).read_text()
    many = tmp_path / "many.toml"
    many.write_text(
        text.replace('name = "tool-call-budget"', 'name = "many"', 1)
        + ('\n[[trace_properties]]\nname = "routes_bounded"\nop = "route"\nat_most = 300\n')
    )
    model = export_promela(load_profile(str(many)))
    assert "int tp_" in model and "assert(tp_" in model
