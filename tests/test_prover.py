"""The z3 prover: claims proved for every parameter value, bounds shown tight, false claims
refuted by runs that replay on the interpreter, and counterexamples to induction."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import explore
from turnbound.properties.explore.sweep import configurations
from turnbound.properties.prove.encoding import Encoding, SymbolicRun
from turnbound.properties.prove.goals import table_goals
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.properties.prove.witness import WitnessDoesNotReplay, admitted, replay_symbolic_run, search
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.monitors import check_trace
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.table import Table

BOUNDS = ("rounds_bound", "settlement_bound", "exploration_bound")


@pytest.fixture(scope="module")
def results(deeptutor: Table) -> dict[str, ProofResult]:
    return {r.goal.name: r for r in Prover(deeptutor).prove_all()}


def _rerun(table: Table, result: ProofResult, tight: bool = False):  # type: ignore[no-untyped-def]
    witness = result.tight_witness if tight else result.witness
    assert witness is not None
    trace = run(table, ScriptHost(Script(witness.script)), witness.params)
    assert trace.path == witness.trace.path
    return witness, trace


def test_every_verdict_matches_its_expectation(results: dict[str, ProofResult]) -> None:
    assert {n: (r.verdict, r.ok) for n, r in results.items() if not r.ok} == {}
    assert len(results) == len(table_goals(load_profile("deeptutor-scheduler")))


@pytest.mark.parametrize(
    "name", [*BOUNDS, "recovery_at_most_once", "extra_round_zero_or_one", "rounds_accounted"]
)
def test_claims_are_proved_for_every_parameter_value(results: dict[str, ProofResult], name: str) -> None:
    r = results[name]
    assert r.verdict == "proved", r.reason
    assert r.method.endswith("induction") or r.method.startswith("PDR")
    assert r.witness is None


@pytest.mark.parametrize("name", BOUNDS)
def test_each_bound_is_tight_on_a_run_that_replays(
    deeptutor: Table, results: dict[str, ProofResult], name: str
) -> None:
    r = results[name]
    assert r.tight is True
    witness, trace = _rerun(deeptutor, r, tight=True)
    assert trace.terminal in deeptutor.terminals
    bound = deeptutor.bounds[[b.name for b in deeptutor.bounds].index(name)].expr
    env = {**trace.params, **trace.variables}
    assert compile_expr(bound.left)(env) == compile_expr(bound.right)(env)  # type: ignore[attr-defined]
    assert witness.params == deeptutor.defaults()


def test_the_naive_bound_is_refuted_by_a_run_that_replays(
    deeptutor: Table, results: dict[str, ProofResult]
) -> None:
    r = results["naive_rounds_bound"]
    assert r.verdict == "refuted" and r.ok
    witness, trace = _rerun(deeptutor, r)
    p = trace.params
    assert trace.terminal in deeptutor.terminals
    assert trace.counters["rounds"] == p["explorationBudget"] + p["settlementBudget"] + 1
    assert witness.to_json()["script"] == {op: [o.to_json() for o in q] for op, q in witness.script.items()}


def test_a_claim_true_only_within_the_explore_range_is_refuted_beyond_it(tiny_text: str) -> None:
    # steps <= 3 holds for budget 0..3 (the range an explorer sweeps), not for every budget.
    table = load_table_text(tiny_text + '\n[[bounds]]\nname = "small"\nexpr = "steps <= 3"\n')
    r = Prover(table, timeout=30).prove(Prover(table).goal("small"))
    assert r.verdict == "refuted" and not r.ok
    assert r.witness is not None and r.witness.params["budget"] >= 4
    assert r.witness.trace.counters["steps"] >= 4


DOUBLE = """
[variables.double]
type = "int"
init = "0"

[[invariants]]
name = "double_within"
expr = "double <= 2 * budget"
"""


def _doubling(tiny_text: str, extra: str = "") -> Table:
    text = tiny_text.replace(
        'update = { steps = "steps + 1" }', 'update = { steps = "steps + 1", double = "double + 2" }'
    )
    return load_table_text(text + DOUBLE + extra)


def test_a_failed_induction_names_the_state_and_the_step(tiny_text: str) -> None:
    table = _doubling(tiny_text)
    prover = Prover(table, use_pdr=False, timeout=30, depth=6)
    r = prover.prove(prover.goal("double_within"))
    assert r.verdict == "unknown"
    assert r.cti is not None
    cti = r.cti
    assert (cti.before.place, cti.edge.transition.id, cti.after.place) == ("loop", "work", "stepped")
    claim = compile_expr(table.invariants[0].expr)
    assert claim({**cti.params, **cti.before.vars}) and not claim({**cti.params, **cti.after.vars})
    assert "step work (step answers) -> stepped" in cti.describe()
    assert "no counterexample" in r.reason


def test_pdr_finds_the_invariant_induction_misses(tiny_text: str) -> None:
    prover = Prover(_doubling(tiny_text), timeout=30)
    r = prover.prove(prover.goal("double_within"))
    assert (r.verdict, r.method) == ("proved", "PDR (z3 Spacer)")


def test_a_lemma_makes_the_induction_go_through(tiny_text: str) -> None:
    table = _doubling(tiny_text, '\n[[lemmas]]\nname = "double_is_twice"\nexpr = "double == 2 * steps"\n')
    prover = Prover(table, use_pdr=False, timeout=30)
    got = {r.goal.name: (r.verdict, r.method) for r in prover.prove_all()}
    assert got["double_is_twice"] == ("proved", "induction")
    assert got["double_within"] == ("proved", "induction")


def test_k_induction_proves_what_one_step_can_not(deeptutor: Table) -> None:
    prover = Prover(deeptutor, strengthen=False, use_pdr=False)
    goal = prover.goal("settlement_overrun_only_by_recovery")
    deadline = time.monotonic() + 60
    cti = prover.step_case(goal, 1, deadline)
    assert cti is not None and cti.edge.transition.id == "recovery_round"
    assert prover.base_case(goal, 2, deadline)
    assert prover.step_case(goal, 2, deadline) is None


def test_trace_properties_are_refuted_with_the_broken_run(tiny_text: str) -> None:
    table = load_table_text(
        tiny_text + '\n[[trace_properties]]\nname = "one_step"\nop = "step"\nat_most = 1\n'
    )
    prover = Prover(table, timeout=30)
    r = prover.prove(prover.goal("one_step"))
    assert r.verdict == "refuted"
    assert r.witness is not None
    assert [p.name for p in check_trace(table, r.witness.trace)] == ["one_step"]


def test_an_invariant_broken_midway_is_shown_on_a_completed_run(tiny_text: str) -> None:
    table = load_table_text(tiny_text + '\n[[invariants]]\nname = "at_most_one"\nexpr = "steps <= 1"\n')
    prover = Prover(table, timeout=30)
    r = prover.prove(prover.goal("at_most_one"))
    assert r.verdict == "refuted" and r.witness is not None
    assert r.witness.trace.terminal in table.terminals
    assert max(s.counters["steps"] for s in r.witness.trace.steps) == 2
    assert r.witness.detail.startswith("false at ")


def _shortest_run(deeptutor: Table) -> tuple[Encoding, SymbolicRun]:
    enc = Encoding(deeptutor)
    found = search(
        enc,
        enc.parameter_values(deeptutor.defaults()),
        lambda fs: enc.terminal(fs[-1]),
        4,
        time.monotonic() + 60,
    )
    assert found is not None and found.edges
    return enc, found


def test_a_witness_that_does_not_replay_fails_loudly(deeptutor: Table) -> None:
    enc, found = _shortest_run(deeptutor)
    replay_symbolic_run(enc, found)  # the untouched run replays
    wrong_end = SymbolicRun(
        found.params,
        [*found.states[:-1], type(found.states[-1])("finish", {}, {}, ())],
        found.edges,
        found.outcomes,
    )
    with pytest.raises(WitnessDoesNotReplay, match="does not replay"):
        replay_symbolic_run(enc, wrong_end)


def test_the_encoding_must_admit_what_the_machine_did(deeptutor: Table) -> None:
    enc, found = _shortest_run(deeptutor)
    admitted(enc, found)
    last = found.states[-1]
    changed = type(last)(last.place, {**last.vars, "rounds": 99}, last.facts, last.ghosts)
    with pytest.raises(WitnessDoesNotReplay, match="does not admit"):
        admitted(enc, SymbolicRun(found.params, [*found.states[:-1], changed], found.edges, found.outcomes))


# -- the command line ------------------------------------------------------------------


def test_cli_json_reports_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = ["rounds_bound", "naive_rounds_bound", "recovery_at_most_once"]
    assert main(["prove", "deeptutor-scheduler", "--json", *[x for n in chosen for x in ("--claim", n)]]) == 0
    data = json.loads(capsys.readouterr().out)
    claims = {c["name"]: c for c in data["claims"]}
    assert list(claims) == chosen
    assert data["ok"] is True
    for c in claims.values():
        assert set(c) >= {"name", "expr", "verdict", "tight", "witness", "seconds", "expected", "ok"}
    assert claims["rounds_bound"]["verdict"] == "proved" and claims["rounds_bound"]["tight"] is True
    naive = claims["naive_rounds_bound"]
    assert (naive["verdict"], naive["expected"], naive["ok"], naive["tight"]) == (
        "refuted",
        "violated",
        True,
        None,
    )
    assert set(naive["witness"]) >= {"params", "script", "trace"}
    assert claims["recovery_at_most_once"]["witness"] is None


def test_cli_prints_one_line_per_claim_and_the_witness_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["prove", "deeptutor-scheduler", "--claim", "rounds_bound", "--claim", "naive_rounds_bound"])
        == 0
    )
    out = capsys.readouterr().out
    assert "rounds_bound: PROVED for all parameter values (" in out
    assert "tight: reached 3 at explorationBudget=1, settlementBudget=1, emptyRecoveryBudget=2" in out
    assert "naive_rounds_bound: REFUTED (bounded model checking" in out
    assert "terminal: " in out and "rounds=" in out
    assert "2 claims: 1 proved, 1 refuted, 0 unknown; all as expected" in out


def test_cli_exits_1_when_a_verdict_is_unexpected(
    tiny_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_text + '\n[[bounds]]\nname = "wrong"\nexpr = "steps < budget"\n')
    assert main(["prove", str(path)]) == 1
    out = capsys.readouterr().out
    assert "wrong: REFUTED" in out and "EXPECTED holds" in out
    assert "steps_bound: PROVED for all parameter values" in out


def test_cli_rejects_an_unknown_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "deeptutor-scheduler", "--claim", "nope"]) == 2
    assert "no claim named 'nope'" in capsys.readouterr().err


# -- cross-check with the explorer -----------------------------------------------------


def _agree(table: Table, configs: list[dict[str, int]], proved: dict[str, ProofResult]) -> None:
    """Proved: the explorer finds it holds everywhere; violated somewhere: the prover refutes it;
    a prover witness within the configurations: the explorer finds that configuration violates it."""
    summaries = [explore(table, params).summary for params in configs]
    for name, r in proved.items():
        verdicts = {json.dumps(s.params): s.claim(name).verdict for s in summaries}
        if r.verdict == "proved":
            assert set(verdicts.values()) == {"holds"}, (name, verdicts)
        elif "violated" in verdicts.values():
            assert r.verdict == "refuted", (name, r.verdict, r.reason)
        if r.verdict == "refuted" and r.witness is not None and r.witness.params in configs:
            assert verdicts[json.dumps(r.witness.params)] == "violated", name


def _corners(table: Table) -> list[dict[str, int]]:
    out = [table.defaults()]
    for corner in (
        {p.name: p.range[0] for p in table.parameters},
        {p.name: p.range[1] for p in table.parameters},
    ):
        if corner not in out:
            out.append(corner)
    return out


def test_prover_and_explorer_agree_at_the_range_corners(
    deeptutor: Table, results: dict[str, ProofResult]
) -> None:
    _agree(deeptutor, _corners(deeptutor), results)


@pytest.mark.slow
@pytest.mark.parametrize("name", profile_names())
def test_prover_and_explorer_agree_over_the_default_ranges(name: str) -> None:
    table = load_profile(name)
    _agree(table, configurations(table), {r.goal.name: r for r in Prover(table).prove_all()})
