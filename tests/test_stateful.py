"""The Hypothesis machine generated from a table: it passes the reference, kills broken tables,
catches a buggy hand-written scheduler, reaches rare outcomes, and replays its counterexamples."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis.stateful import run_state_machine_as_test
from turnbound.properties.cli.main import main
from turnbound.properties.fuzz.report import render_counterexample
from turnbound.properties.fuzz.session import fuzz
from turnbound.properties.fuzz.settings import fuzz_settings
from turnbound.properties.fuzz.stateful import FuzzFailure, machine_for
from turnbound.properties.scheduler import RunFunction, ThreadedScheduler, drive, first_divergence
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.host import Host, ScriptHost, parse_script
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, table_path
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace, probe_line

from tests.conftest import TINY

DEEPTUTOR = load_profile("deeptutor-scheduler")

# -- a hand-written scheduler: plain Python, no table ------------------------------------

_REQUIRED = {
    "call_round": ("hasTools", "hasText", "truncated", "reasoningBudgetExhausted"),
    "await_user": ("resumed",),
    "prepare_recovery": ("available",),
    "forced_finish": ("extraRounds",),
}


class _Ended(Exception):
    def __init__(self, terminal: str) -> None:
        self.terminal = terminal


def hand_written(bug: str | None = None) -> RunFunction:
    """The DeepTutor scheduler as an engineer would write it; `bug` plants one deliberate mistake.

    `salvage_partial`: a failure after visible output is salvaged by a forced finish anyway.
    `extra_twice`: the forced finish's extra round is counted twice.
    """

    def run_turn(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
        c = {"rounds": 0, "exploration_rounds": 0, "settlement_rounds": 0, "tool_steps": 0}

        def call(op: str, **args: Any) -> Outcome:
            out = host.call(op, args)
            if out.raise_ == "abort":
                raise _Ended("aborted")
            facts = out.facts or {}
            if out.raise_ is None and any(k not in facts for k in _REQUIRED.get(op, ())):
                raise _Ended("contract_violation")
            if op == "forced_finish" and out.raise_ is None and facts["extraRounds"] not in (0, 1):
                raise _Ended("contract_violation")
            return out

        def forced_finish(reason: str) -> str:
            extra = int((call("forced_finish", reason=reason).facts or {})["extraRounds"])
            c["rounds"] += 2 * extra if bug == "extra_twice" else extra
            return "forced_finish"

        def reject() -> str:
            call("reject_finish")
            return "reject_finish"

        def turn() -> str:
            recovery = redirected = False
            empties = reasoning = 0
            while True:
                if c["exploration_rounds"] < params["explorationBudget"]:
                    mode = "exploration"
                elif c["settlement_rounds"] < params["settlementBudget"]:
                    mode = "settlement"
                elif recovery:
                    return reject()
                else:
                    recovery, mode = True, "settlement"
                    if not (call("prepare_recovery").facts or {})["available"]:
                        return forced_finish("budget")
                out = call("call_round", mode=mode, recovery=recovery)
                if out.raise_ == "host_failure":
                    partial = bool(out.fields.get("partial")) and bug != "salvage_partial"
                    return "error" if c["rounds"] == 0 or partial else forced_finish("error")
                c["rounds"] += 1
                c[f"{mode}_rounds"] += 1
                f = out.facts or {}
                if f["hasTools"]:
                    if recovery and f.get("recoveryRejected"):
                        return reject()
                    paused = (call("dispatch_tools").facts or {}).get("paused")
                    c["tool_steps"] += 1
                    if paused and not (call("await_user").facts or {})["resumed"]:
                        return "paused"
                elif f["reasoningBudgetExhausted"]:
                    if reasoning >= 1:
                        return "error"
                    reasoning += 1
                elif f["truncated"]:
                    continue
                elif not f["hasText"]:
                    if empties < params["emptyRecoveryBudget"]:
                        empties += 1
                    else:
                        return reject() if recovery else forced_finish("budget")
                elif f.get("finishRedirect"):
                    if redirected:
                        return reject()
                    redirected = True
                else:
                    call("finish")
                    return "finish"

        try:
            terminal = turn()
        except _Ended as end:
            terminal = end.terminal
        return terminal, dict(c)

    return run_turn


# -- what a user writes in their own test file: the machine as a pytest test case ---------

TestReferenceQuick = machine_for(DEEPTUTOR).TestCase
"""The reference itself under the quick profile: every invariant, bound and trace property holds."""

TestHandWrittenAgrees = machine_for(DEEPTUTOR, scheduler=lambda: ThreadedScheduler(hand_written())).TestCase
"""A correct hand-written scheduler, driven beside the reference, never diverges."""


def test_a_users_test_case_fails_with_a_replayable_counterexample() -> None:
    buggy = machine_for(DEEPTUTOR, scheduler=lambda: ThreadedScheduler(hand_written("extra_twice")))
    with pytest.raises(FuzzFailure) as info:
        run_state_machine_as_test(buggy, settings=fuzz_settings("quick").hypothesis(quiet=True))
    cx = info.value.counterexample
    text = str(info.value)
    assert text.splitlines()[0].startswith(
        "deeptutor-scheduler: the implementation's bound rounds_bound is false on the counters it reported"
    )
    assert "params: " + json.dumps(cx["params"]) in text
    assert "script: " + json.dumps(cx["script"]) in text
    assert f"probe: {cx['probe']}" in text
    assert "first divergence from the reference: end: expected counters rounds=" in text


# -- a buggy hand-written scheduler is caught, and its counterexample replays -------------


@pytest.fixture(scope="module")
def salvaging() -> dict[str, Any]:
    """Found, not shrunk (shrinking through a threaded scheduler costs seconds; the slow tests do it)."""
    result = fuzz(
        DEEPTUTOR,
        seed=0,
        scheduler=lambda: ThreadedScheduler(hand_written("salvage_partial")),
        shrink=False,
    )
    assert not result.ok and result.counterexample is not None
    return result.counterexample


def test_buggy_scheduler_is_named_by_the_trace_property_it_breaks(salvaging: dict[str, Any]) -> None:
    assert salvaging["violation"]["kind"] == "implementation"
    assert salvaging["violation"]["name"] == "partial_failure_not_salvaged"
    assert salvaging["divergence"].endswith(
        "the implementation called forced_finish(reason=error) where the reference ends at error"
    )
    text = render_counterexample(salvaging)
    assert f"first divergence from the reference: {salvaging['divergence']}" in text


def test_buggy_scheduler_counterexample_replays(salvaging: dict[str, Any]) -> None:
    script, params = parse_script(salvaging["script"], "counterexample"), salvaging["params"]
    expected = run(DEEPTUTOR, ScriptHost(script), params)
    assert expected.to_json() == salvaging["trace"]
    buggy = ThreadedScheduler(hand_written("salvage_partial"))
    observed = drive(buggy, params, ScriptHost(script))
    buggy.close()
    assert first_divergence(expected, observed) == salvaging["divergence"]
    fixed = ThreadedScheduler(hand_written())
    assert first_divergence(expected, drive(fixed, params, ScriptHost(script))) is None
    fixed.close()


# -- broken tables are killed; their counterexamples replay on the interpreter ------------


def _mutant(old: str, new: str, name: str) -> Table:
    text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")
    changed = text.replace(old, new)
    assert changed != text
    return load_table_text(changed, name)


def _replay(table: Table, cx: dict[str, Any]) -> Trace:
    trace = run(table, ScriptHost(parse_script(cx["script"], "counterexample")), cx["params"])
    assert trace.to_json() == cx["trace"]
    return trace


def _holds(table: Table, claim: str, trace: Trace) -> bool:
    expr = next(c.expr for c in table.claims if c.name == claim)
    return bool(compile_expr(expr)({**trace.params, **trace.variables}))


def test_forgotten_extra_round_is_killed_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI: the JSON counterexample is a case file that `turnbound run` replays."""
    text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")
    table_file = tmp_path / "forgetful.toml"
    table_file.write_text(text.replace('rounds = "rounds + extraRounds", ', ""), encoding="utf-8")
    forgetful = load_table_text(table_file.read_text(encoding="utf-8"), str(table_file))
    assert main(["fuzz", str(table_file), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    cx = data["counterexample"]
    assert data["ok"] is False
    assert (cx["violation"]["kind"], cx["violation"]["name"]) == ("invariant", "rounds_accounted")
    trace = _replay(forgetful, cx)
    assert trace.steps[-1].outcome.facts == {"extraRounds": 1}
    assert not _holds(forgetful, "rounds_accounted", trace)
    on_reference = run(DEEPTUTOR, ScriptHost(parse_script(cx["script"], "cx")), cx["params"])
    assert _holds(DEEPTUTOR, "rounds_accounted", on_reference)
    cx_file = tmp_path / "cx.json"
    cx_file.write_text(json.dumps(cx), encoding="utf-8")
    assert main(["run", str(table_file), "--script", str(cx_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == cx["trace"]
    rendered = render_counterexample(cx)
    assert rendered.splitlines()[0].startswith(
        "deeptutor-scheduler: invariant rounds_accounted is false after step"
    )
    assert f"probe: {probe_line(forgetful, trace)}" in rendered
    assert "  <- here" in rendered


def test_shifted_exploration_guard_is_killed_and_replays() -> None:
    shifted = _shifted()
    result = fuzz(shifted, seed=0)
    cx = result.counterexample
    assert cx is not None
    assert cx["violation"]["name"] == "exploration_within_budget"
    trace = _replay(shifted, cx)
    budget = trace.params["explorationBudget"]
    assert any(s.counters["exploration_rounds"] > budget for s in trace.steps)
    assert trace.steps[cx["violation"]["step"] - 1].transition == "explore_round"


def test_human_report_of_a_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table_file = tmp_path / "shifted.toml"
    table_file.write_text(_shifted_text(), encoding="utf-8")
    assert main(["fuzz", str(table_file), "--seed", "1"]) == 1
    out = capsys.readouterr().out
    head, _, report = out.partition("VIOLATION (shrunk counterexample):\n")
    assert head.startswith("fuzz deeptutor-scheduler: settings quick, seed 1\n")
    lines = report.splitlines()
    assert lines[0].startswith(
        "deeptutor-scheduler: invariant exploration_within_budget is false after step "
    )
    assert lines[1].startswith('params: {"explorationBudget": ')
    assert lines[2].startswith('script: {"call_round": [')
    assert lines[-1].startswith("replay: ")
    assert any(line.startswith("probe: ") for line in lines)


def _shifted() -> Table:
    return load_table_text(_shifted_text(), "shifted.toml")


def _shifted_text() -> str:
    """Exploration allowed one round beyond its budget (both guards moved, so the table stays deterministic)."""
    text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")
    changed = text.replace(
        "exploration_rounds < explorationBudget", "exploration_rounds <= explorationBudget"
    )
    changed = changed.replace(
        "exploration_rounds >= explorationBudget", "exploration_rounds > explorationBudget"
    )
    assert changed != text
    return changed


def test_internal_livelock_is_a_counterexample() -> None:
    spinning = TINY.replace(
        'id = "stop"\nfrom = "loop"\nguard = "steps >= budget"\nop = "finish"\nto = "done"',
        'id = "spin"\nfrom = "loop"\nguard = "steps >= budget"\nto = "loop"',
    )
    assert spinning != TINY
    cx = fuzz(load_table_text(spinning, "spinning.toml"), examples=20).counterexample
    assert cx is not None
    assert cx["violation"]["kind"] == "livelock"
    assert cx["complete"] is False
    assert "internal transitions loop at location 'loop' without a host call" in render_counterexample(cx)


# -- swarm coverage, parameters, determinism ------------------------------------------------


def test_swarm_reaches_aborts_failures_and_every_terminal() -> None:
    result = fuzz(DEEPTUTOR, examples=30, seed=3)
    assert result.ok and result.examples_run == 30
    outcomes = result.coverage.outcomes
    assert outcomes["call_round"]["abort"] > 0
    assert outcomes["call_round"]["host_failure"] > 0
    assert sum(counts["abort"] for op, counts in outcomes.items() if op != "call_round") > 0
    own = [t for t in DEEPTUTOR.terminals if t != "contract_violation"]
    assert all(result.coverage.terminals[t] > 0 for t in own), result.coverage.terminals
    assert result.coverage.refuted["naive_rounds_bound"] > 0
    assert result.steps == sum(n for counts in outcomes.values() for n in counts.values())


def test_fixed_parameters_are_respected() -> None:
    result = fuzz(DEEPTUTOR, examples=10, params={"explorationBudget": 0, "settlementBudget": [0]})
    assert result.ok
    assert result.coverage.transitions["explore_round"] == 0
    assert result.coverage.transitions["settle_round"] == 0
    assert result.coverage.transitions["offer_recovery"] > 0


def test_unknown_names_are_one_line_errors() -> None:
    with pytest.raises(DefinitionError, match="unknown fuzz settings 'fast'; settings: quick, thorough"):
        fuzz_settings("fast")
    with pytest.raises(DefinitionError, match="unknown parameter 'budget'"):
        fuzz(DEEPTUTOR, examples=1, params={"budget": 1})
    with pytest.raises(DefinitionError, match="outside its domain"):
        fuzz(DEEPTUTOR, examples=1, params={"explorationBudget": [-1, 0]})


def test_same_seed_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for seed in (7, 7, 8):
        assert main(["fuzz", "deeptutor-scheduler", "--examples", "8", "--seed", str(seed), "--json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert outputs[0] != outputs[2]
    data = json.loads(outputs[0])
    assert (data["ok"], data["examples"], data["seed"], data["counterexample"]) == (True, 8, 7, None)
    assert set(data["terminals"]) >= set(DEEPTUTOR.terminals)


def test_human_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "deeptutor-scheduler", "--examples", "12", "--param", "emptyRecoveryBudget=0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "fuzz deeptutor-scheduler: settings quick, seed 0"
    assert out[1].startswith("12 examples, ")
    assert out[2].split() == ["operation", "facts", "host_failure", "abort", "contract"]
    assert any(line.startswith("terminals: finish ") for line in out)
    assert out[-1] == "no violation"


def test_cli_bad_input_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "deeptutor-scheduler", "--param", "nope=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("turnbound: error: deeptutor-scheduler: unknown parameter 'nope'")
    assert len(err.splitlines()) == 1
    assert main(["fuzz", "deeptutor-scheduler", "--settings", "fast"]) == 2
    assert "turnbound: error:" in capsys.readouterr().err


def test_bounds_are_not_judged_where_the_host_broke_its_contract() -> None:
    """A bound speaks of the table's own terminals, as in the explorer and the prover: a turn
    the runtime contract rejected (a step reply without its `more` fact) is not one of them."""
    finishing = TINY.replace('raises = ["abort"]\n', "").replace('aborted = "aborted"\n', "")
    finishing = finishing.replace('[failures.abort]\nto = "aborted"\n', "")
    finishing = finishing.replace(
        "[operations.step]", '[variables.finished]\ntype = "bool"\ninit = "false"\n\n[operations.step]'
    )
    finishing = finishing.replace(
        'op = "finish"\nto = "done"', 'op = "finish"\nupdate = { finished = "true" }\nto = "done"'
    )
    finishing += '\n[[bounds]]\nname = "ends_with_finish"\nexpr = "finished"\n'
    table = load_table_text(finishing, "finishing.toml")
    result = fuzz(table, examples=200, seed=1)
    assert result.coverage.terminals.get("contract_violation", 0) > 0
    assert result.ok, result.counterexample
