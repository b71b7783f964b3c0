"""Step claims, past-time monitors, terminal-filtered bounds, exact counts and lower bounds:
loaded, compiled into ghosts, and judged alike by every engine (explore, prove, fuzz,
validate, the judge conformance asks, the Promela export)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turnbound.properties.conformance.messages import trace_messages
from turnbound.properties.conformance.validate import validate
from turnbound.properties.explore.explorer import explore
from turnbound.properties.export.promela import export_promela
from turnbound.properties.export.spin import run_spin, spin_available
from turnbound.properties.fuzz.session import fuzz
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.judge import Judge
from turnbound.reference.loader import load_table_text
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table

BASE = """
[profile]
name = "pasttime"
initial = "loop"

[parameters.budget]
min = 0
default = 2
range = [0, 3]

[variables.steps]
type = "int"
init = "0"
counter = true

[failures.boom]
fields.loud = { type = "bool" }
to = "failed"

[operations.step]
args = { last = "bool" }
raises = ["boom"]
facts.more = { type = "bool" }

[operations.finish]
args = { sent = "int" }

[locations]
loop = "top of the loop"
stepped = "a step answered"

[terminals]
done = "finished"
failed = "a step failed"

[[transitions]]
id = "work"
from = "loop"
guard = "steps < budget"
op = "step"
args = { last = "steps + 1 == budget" }
update = { steps = "steps + 1" }
to = "stepped"

[[transitions]]
id = "stop"
from = "loop"
guard = "steps >= budget"
op = "finish"
args = { sent = "steps" }
to = "done"

[[transitions]]
id = "again"
from = "stepped"
guard = "more"
to = "loop"

[[transitions]]
id = "enough"
from = "stepped"
guard = "not more"
op = "finish"
args = { sent = "steps" }
to = "done"

[[monitors]]
name = "steps_taken"
kind = "count"
op = "step"

[[monitors]]
name = "finishes"
kind = "count"
op = "finish"

[[monitors]]
name = "finished_last"
kind = "previous"
op = "finish"

[[monitors]]
name = "ever_loud"
kind = "once"
op = "step"
raise = "boom"
when = "fact.loud"

[[monitors]]
name = "all_quiet"
kind = "so_far"
op = "step"
raise = "boom"
when = "not fact.loud"

[[step_claims]]
name = "last_flag"
op = "step"
expr = "arg.last == (next.steps == budget)"

[[step_claims]]
name = "finish_sends_steps"
op = "finish"
expr = "arg.sent == steps and next.finishes == finishes + 1"

[[step_claims]]
name = "boom_counts_nothing"
op = "step"
raise = "boom"
expr = "next.steps == steps"

[[invariants]]
name = "steps_are_completed_calls"
expr = "steps == steps_taken"

[[bounds]]
name = "finish_is_last"
expr = "finished_last"
at = ["done"]

[[bounds]]
name = "one_finish"
expr = "finishes == 1"
at = ["done"]

[[bounds]]
name = "no_finish_after_failure"
expr = "finishes == 0"
at = ["failed"]

[[bounds]]
name = "a_step_before_finishing"
expr = "steps >= (1 if budget >= 1 else 0)"
at = ["done"]

[[bounds]]
name = "quiet_finish"
expr = "all_quiet and not ever_loud"
at = ["done"]
"""

FALSE_CLAIMS = """
[[step_claims]]
name = "last_flag_before"
op = "step"
expr = "arg.last == (steps == budget)"
expect = "violated"

[[step_claims]]
name = "boom_grows"
op = "step"
raise = "boom"
expr = "next.steps > steps"
expect = "violated"

[[bounds]]
name = "finish_after_failure"
expr = "finished_last"
at = ["failed"]
expect = "violated"

[[bounds]]
name = "every_step_taken"
expr = "steps >= budget"
at = ["done"]
expect = "violated"

[[bounds]]
name = "never_loud"
expr = "not ever_loud"
at = ["failed"]
expect = "violated"
"""

HOLDING = (
    "last_flag",
    "finish_sends_steps",
    "boom_counts_nothing",
    "steps_are_completed_calls",
    "finish_is_last",
    "one_finish",
    "no_finish_after_failure",
    "a_step_before_finishing",
    "quiet_finish",
)
REFUTED = ("last_flag_before", "boom_grows", "finish_after_failure", "every_step_taken", "never_loud")


def _table(extra: str = "") -> Table:
    return load_table_text(BASE + FALSE_CLAIMS + extra, "pasttime.toml")


@pytest.fixture(scope="module")
def table() -> Table:
    return _table()


@pytest.fixture(scope="module")
def proofs(table: Table) -> dict[str, ProofResult]:
    return {r.goal.name: r for r in Prover(table).prove_all()}


# -- compiling --------------------------------------------------------------------


def test_monitors_and_step_claims_become_ghost_variables(table: Table) -> None:
    ghosts = {v.name: v for v in table.variables if v.ghost}
    assert {"steps_taken", "finishes", "finished_last", "ever_loud", "all_quiet"} <= set(ghosts)
    assert {"last_flag", "boom_counts_nothing"} <= set(ghosts)
    assert str(ghosts["steps_taken"].type) == "int" and str(ghosts["ever_loud"].type) == "bool"
    work = table.transition("work")
    assert {"steps_taken", "finished_last", "last_flag"} <= {v for v, _ in work.updates}
    assert {v for v, _ in work.raise_updates["boom"]} >= {"ever_loud", "all_quiet", "boom_counts_nothing"}
    step = next(c for c in table.invariants if c.name == "last_flag")
    assert step.text == "every step: arg.last == (next.steps == budget)"


def test_the_machine_applies_ghost_updates_on_a_raise(table: Table) -> None:
    script = Script({"step": [Outcome.of_raise("boom", loud=True)]})
    trace = run(table, ScriptHost(script), {"budget": 2})
    assert trace.terminal == "failed"
    assert trace.variables["ever_loud"] is True and trace.variables["all_quiet"] is False
    assert trace.variables["boom_grows"] is False  # the raise broke it
    assert trace.variables["boom_counts_nothing"] is True
    assert trace.variables["steps_taken"] == 0  # a raise is not a returned step


def test_previous_is_reset_by_any_later_call(table: Table) -> None:
    script = Script({"step": [Outcome(facts={"more": False})], "finish": [Outcome(facts={})]})
    trace = run(table, ScriptHost(script), {"budget": 2})
    assert trace.terminal == "done" and trace.variables["finished_last"] is True
    assert trace.variables["finishes"] == 1 and trace.variables["steps_taken"] == 1


# -- every engine -----------------------------------------------------------------


def test_the_explorer_judges_every_construct(table: Table) -> None:
    for budget in range(4):
        summary = explore(table, {"budget": budget}).summary
        assert summary.complete, budget
        for name in HOLDING:
            assert summary.claim(name).verdict == "holds", (budget, name)
    refuted = {
        name
        for budget in range(4)
        for name in REFUTED
        if explore(table, {"budget": budget}).summary.claim(name).verdict == "violated"
    }
    assert refuted == set(REFUTED)


def test_the_explorer_names_a_broken_step_claim_and_replays_it() -> None:
    bad = _table(
        """
[[step_claims]]
name = "sends_zero"
op = "finish"
expr = "arg.sent == 0"
"""
    )
    summary = explore(bad, {"budget": 1}).summary
    assert not summary.ok
    violation = next(v for v in summary.violations if v.claim == "sends_zero")
    assert "every finish: arg.sent == 0" in violation.message
    assert [s.op for s in violation.witness.trace.steps][-1] == "finish"


def test_the_prover_proves_and_refutes_for_every_budget(proofs: dict[str, ProofResult]) -> None:
    for name in HOLDING:
        assert proofs[name].verdict == "proved", (name, proofs[name].verdict, proofs[name].reason)
    for name in REFUTED:
        assert proofs[name].verdict == "refuted", name
        assert proofs[name].ok


def test_lower_bounds_and_exact_counts_are_shown_tight(table: Table, proofs: dict[str, ProofResult]) -> None:
    for name in ("a_step_before_finishing", "one_finish", "no_finish_after_failure"):
        result = proofs[name]
        assert result.tight is True, name
        witness = result.tight_witness
        assert witness is not None
        trace = run(table, ScriptHost(Script(witness.script)), witness.params)
        assert trace.path == witness.trace.path
    low = proofs["a_step_before_finishing"].tight_witness
    assert low is not None and low.trace.terminal == "done"
    assert low.trace.variables["steps"] == (1 if low.params["budget"] >= 1 else 0)


def test_a_refuted_terminal_bound_ends_at_its_terminal(table: Table, proofs: dict[str, ProofResult]) -> None:
    witness = proofs["finish_after_failure"].witness
    assert witness is not None and witness.trace.terminal == "failed"
    trace = run(table, ScriptHost(Script(witness.script)), witness.params)
    assert trace.path == witness.trace.path


def test_hypothesis_finds_a_broken_step_claim_on_a_raise() -> None:
    bad = load_table_text(
        BASE
        + """
[[step_claims]]
name = "booms_are_quiet"
op = "step"
raise = "boom"
expr = "not fact.loud"
""",
        "pasttime.toml",
    )
    result = fuzz(bad, examples=200, seed=1)
    assert result.counterexample is not None
    violation = result.counterexample["violation"]
    assert violation["name"] == "booms_are_quiet"
    assert "every step raising boom: not fact.loud" in violation["message"]


def test_validate_names_a_step_claim_a_logged_run_breaks(tmp_path: Path) -> None:
    bad = load_table_text(
        BASE
        + """
[[step_claims]]
name = "never_the_last_step"
op = "step"
expr = "not arg.last"
""",
        "pasttime.toml",
    )
    script = Script({"step": [Outcome(facts={"more": True})] * 2, "finish": [Outcome(facts={})]})
    trace = run(bad, ScriptHost(script), {"budget": 2})
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(m) + "\n" for m in trace_messages(trace)))
    result = validate(bad, log)
    assert result.rejection is None
    assert [b.name for b in result.broken] == ["never_the_last_step"]


def test_conformance_judges_a_reported_end_only_at_the_bounds_terminals() -> None:
    table = _table(
        """
[[bounds]]
name = "steps_at_done"
expr = "steps >= 1"
at = ["done"]
"""
    )
    judge = Judge(table)
    env = {"budget": 2, "steps": 0}
    assert "steps_at_done" in [c.name for c in judge.broken_counter_bounds("done", env)]
    assert "steps_at_done" not in [c.name for c in judge.broken_counter_bounds("failed", env)]


@pytest.mark.skipif(not spin_available(), reason="spin or gcc is not installed")
def test_spin_finds_a_broken_step_claim_and_stores_the_explorers_states(table: Table) -> None:
    plain = load_table_text(BASE, "pasttime.toml")
    result = run_spin(export_promela(plain, {"budget": 2}))
    assert result.errors == 0, result.output
    assert result.states == explore(plain, {"budget": 2}, all_states=True).summary.states
    broken = run_spin(export_promela(table, {"budget": 2}, claim="boom_grows"))
    assert broken.errors == 1
    assert "v_boom_grows" in broken.output


# -- the loader's messages ----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            '[[step_claims]]\nname = "x"\nop = "nope"\nexpr = "true"\n',
            "step_claims[3] 'x'.op: unknown operation 'nope'",
        ),
        (
            '[[step_claims]]\nname = "x"\nop = "finish"\nraise = "boom"\nexpr = "true"\n',
            "step_claims[3] 'x'.raise: finish does not raise 'boom'",
        ),
        (
            '[[step_claims]]\nname = "x"\nop = "step"\nexpr = "next.nope == 1"\n',
            "unknown name 'next.nope'",
        ),
        (
            '[[step_claims]]\nname = "x"\nop = "step"\nexpr = "fact.loud"\n',
            "unknown name 'fact.loud'",
        ),
        (
            '[[monitors]]\nname = "steps"\nkind = "once"\nop = "step"\n',
            "monitors[5] 'steps': 'steps' is already the name of a parameter, variable",
        ),
        (
            '[[invariants]]\nname = "x"\nexpr = "next.steps == 1"\n',
            "invariants[1] 'x'.expr: in 'next.steps == 1': attribute access are not allowed",
        ),
        (
            '[[invariants]]\nname = "x"\nexpr = "true"\nat = ["done"]\n',
            "invariants[1] 'x'.at: only a bound is judged at terminals",
        ),
        (
            '[[bounds]]\nname = "x"\nexpr = "true"\nat = ["loop"]\n',
            "bounds[5] 'x'.at: 'loop' is not one of the table's terminals: done, failed",
        ),
        (
            '[[monitors]]\nname = "m"\nkind = "sometimes"\nop = "step"\n',
            "monitors[5].kind",
        ),
    ],
    ids=[
        "unknown op",
        "op does not raise",
        "unknown next",
        "fact of the failure on return",
        "name clash",
        "dotted name outside a step claim",
        "at on an invariant",
        "at names a location",
        "unknown kind",
    ],
)
def test_a_malformed_claim_is_one_line_naming_it(extra: str, message: str) -> None:
    with pytest.raises(DefinitionError) as exc:
        load_table_text(BASE + extra, "pasttime.toml")
    text = str(exc.value)
    assert message in text and "\n" not in text


def test_raise_update_takes_ghosts_only() -> None:
    text = BASE.replace(
        'update = { steps = "steps + 1" }\nto = "stepped"',
        'update = { steps = "steps + 1" }\nraise_update = { boom = { steps = "steps + 1" } }\nto = "stepped"',
    )
    with pytest.raises(
        DefinitionError, match=r"transition 'work'.raise_update.boom.steps: 'steps' is not a ghost"
    ):
        load_table_text(text, "pasttime.toml")


def test_raise_update_counts_failures_in_a_hand_written_ghost() -> None:
    text = (
        BASE.replace(
            'update = { steps = "steps + 1" }\nto = "stepped"',
            'update = { steps = "steps + 1" }\nraise_update = { boom = { booms = "booms + 1" } }\nto = "stepped"',
        )
        + '\n[variables.booms]\ntype = "int"\ninit = "0"\nghost = true\n'
    )
    table = load_table_text(text + '\n[[bounds]]\nname = "one_boom"\nexpr = "booms == 1"\nat = ["failed"]\n')
    summary = explore(table, {"budget": 2}).summary
    assert summary.ok and summary.claim("one_boom").verdict == "holds"


def test_a_claim_can_not_read_an_argument_computed_from_an_earlier_fact() -> None:
    text = BASE.replace(
        'args = { sent = "steps" }\nto = "done"\n\n[[monitors]]',
        'args = { sent = "1 if more else 0" }\nto = "done"\n\n[[monitors]]',
    )
    with pytest.raises(
        DefinitionError, match=r"reads arg.sent, which transition 'enough' computes from the fact 'more'"
    ):
        load_table_text(text, "pasttime.toml")


def test_a_monitor_of_any_operation_sees_every_call() -> None:
    table = load_table_text(
        BASE
        + """
[[monitors]]
name = "calls"
kind = "count"
op = "any"

[[monitors]]
name = "boom_last"
kind = "previous"
op = "any"
raise = "boom"
when = "fact.loud or not fact.loud"

[[bounds]]
name = "failed_by_the_last_call"
expr = "boom_last and calls == steps"
at = ["failed"]

[[bounds]]
name = "every_call_counted"
expr = "calls == steps + 1"
at = ["done"]
""",
        "pasttime.toml",
    )
    summary = explore(table, {"budget": 2}).summary
    assert summary.claim("failed_by_the_last_call").verdict == "holds"
    assert summary.claim("every_call_counted").verdict == "holds"
    with pytest.raises(DefinitionError, match=r"monitors\[5\] 'm'.raise: unknown failure 'nope'"):
        load_table_text(BASE + '[[monitors]]\nname = "m"\nkind = "once"\nop = "any"\nraise = "nope"\n')
