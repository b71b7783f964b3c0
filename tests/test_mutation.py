"""Mutation testing on a small table of its own, and on a few chosen deeptutor-scheduler mutants."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import networkx as nx
import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import explore, replay
from turnbound.properties.mutation.baseline import mutation_ranges
from turnbound.properties.mutation.engines import _time_limit, _TimedOut
from turnbound.properties.mutation.mutants import mutants
from turnbound.properties.mutation.observable import observable_digest
from turnbound.properties.mutation.score import MutantResult, MutationReport, mutate, read_document
from turnbound.reference.loader import load_table
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table

# A loop of steps within a budget. `steps >= 0` in the guard of `work` is implied by the
# rest, so dropping or shifting it changes nothing (equivalent mutants); `again` may go
# to `done` without the finish call and no claim says otherwise (a survivor).
SMALL = """
[profile]
name = "small"
initial = "loop"

[parameters.budget]
min = 0
default = 2
range = [0, 3]

[variables.steps]
type = "int"
init = "0"
counter = true

[variables.calls]
type = "int"
init = "0"

[operations.step]
facts.more = { type = "bool" }

[operations.finish]

[locations]
loop = "top of the loop"
stepped = "a step answered"

[terminals]
done = "finished"

[[transitions]]
id = "work"
from = "loop"
guard = "steps < budget and steps >= 0"
op = "step"
update = { steps = "steps + 1", calls = "calls + 1" }
to = "stepped"

[[transitions]]
id = "stop"
from = "loop"
guard = "steps >= budget"
op = "finish"
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
to = "done"

[[invariants]]
name = "steps_within_budget"
expr = "steps <= budget"

[[invariants]]
name = "calls_are_steps"
expr = "calls == steps"
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Table:
    path = tmp_path_factory.mktemp("mutation") / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    return load_table(path)


@pytest.fixture(scope="module")
def small_report(small: Table) -> MutationReport:
    return mutate(small, engines=("loader", "explore"), jobs=1, progress=False)


def results(report: MutationReport) -> dict[str, MutantResult]:
    return {r.id: r for r in report.results}


def test_mutation_range_is_the_first_three_behaviours_of_each_table_range(small: Table) -> None:
    assert mutation_ranges(small) == {"budget": [0, 1, 2]}
    assert mutation_ranges(small, span=2) == {"budget": [0, 1]}


def test_values_that_behave_alike_do_not_count_towards_the_range(tmp_path: Path) -> None:
    """A table that reads max(1, budget): budgets 0 and 1 are one behaviour, so 2 is taken too."""
    clamped = "(1 if budget < 1 else budget)"
    text = SMALL.replace('"steps < budget and', f'"steps < {clamped} and')
    text = text.replace('guard = "steps >= budget"', f'guard = "steps >= {clamped}"')
    path = tmp_path / "clamped.toml"
    path.write_text(text, "utf-8")
    assert mutation_ranges(load_table(path), span=2) == {"budget": [0, 1, 2]}


def test_an_equivalence_seen_only_in_a_small_range_is_checked_over_the_whole_range(small: Table) -> None:
    report = mutate(
        small,
        only=["again.to.done", "work.update.calls.remove", "work.guard.drop1"],
        engines=("loader", "explore"),
        ranges={"budget": [0]},  # too small: at budget 0 no step is ever taken
        progress=False,
    )
    got = results(report)
    assert got["work.guard.drop1"].status == "equivalent" and got["work.guard.drop1"].note is None
    differs = got["again.to.done"]
    assert differs.status == "survived" and differs.note is not None and "budget=1" in differs.note
    broken = got["work.update.calls.remove"]
    assert broken.status == "killed" and broken.note is None  # the explorer's kill, found beyond the range
    assert broken.kills[0].summary.startswith("beyond the mutation range: calls_are_steps")


def test_every_mutant_is_classified_and_the_score_counts_the_non_equivalent(
    small: Table, small_report: MutationReport
) -> None:
    r = small_report
    assert len(r.results) == len(mutants(small, read_document(small)))
    assert len(r.results) == r.killed + r.survived + r.equivalent
    assert r.equivalent > 0 and r.survived > 0 and r.killed > 0
    assert r.score == pytest.approx(r.killed / (len(r.results) - r.equivalent))
    assert not r.ok


def test_an_implied_conjunct_dropped_or_shifted_is_equivalent(small_report: MutationReport) -> None:
    got = results(small_report)
    assert got["work.guard.drop1"].status == "equivalent"
    assert got["work.guard.cmp1.shift-1"].status == "equivalent"  # steps >= 0 - 1


def test_a_behaviour_change_no_claim_sees_survives(small_report: MutationReport) -> None:
    survivor = results(small_report)["again.to.done"]
    assert survivor.status == "survived" and survivor.kills == ()
    assert survivor.ran == ("loader", "explore")


def test_a_broken_invariant_is_killed_by_the_explorer_with_a_replayed_witness(
    small: Table, small_report: MutationReport
) -> None:
    kill = results(small_report)["work.update.calls.remove"].killed_by("explore")
    assert kill is not None
    ev = kill.evidence
    assert ev["claim"] == "calls_are_steps" and ev["replayed"]
    assert ev["params"] == {"budget": 1} and ev["path"] == ["work"]
    assert "calls_are_steps" in kill.summary and "budget=1" in kill.summary


def test_a_turn_that_never_ends_is_killed_by_the_explorer(small_report: MutationReport) -> None:
    kill = results(small_report)["stop.to.loop"].killed_by("explore")
    assert kill is not None and kill.evidence["claim"] == "terminates"


def test_a_mutant_the_loader_rejects_is_killed_by_it_with_its_message(small_report: MutationReport) -> None:
    rejected = results(small_report)["stop.guard.cmp0.flip"]  # steps > budget: steps == budget uncovered
    assert rejected.kills[0].engine == "loader" and rejected.ran == ("loader",)
    assert "small.toml#mutant:stop.guard.cmp0.flip" in rejected.kills[0].summary


def test_hypothesis_kills_a_broken_invariant(small: Table) -> None:
    report = mutate(
        small,
        only=["work.update.calls.remove"],
        engines=("loader", "fuzz"),
        fuzz_settings="quick",
        fuzz_shrink=False,
        progress=False,
    )
    kill = report.results[0].killed_by("fuzz")
    assert kill is not None and "calls_are_steps" in kill.summary
    assert kill.seconds_to_failure is not None and kill.evidence["violation"]["name"] == "calls_are_steps"


def test_the_prover_refutes_a_broken_invariant(small: Table) -> None:
    report = mutate(small, only=["work.update.calls.remove"], engines=("loader", "prove"), progress=False)
    kill = report.results[0].killed_by("prove")
    assert kill is not None and kill.evidence["claim"] == "calls_are_steps"
    assert kill.evidence["verdict"] == "refuted" and kill.evidence["witness"] is not None


def test_the_hypothesis_conformance_engine_kills_the_survivor(small: Table) -> None:
    """The survivor ends without the finish call: the mutant, as an implementation, diverges."""
    report = mutate(
        small,
        only=["again.to.done"],
        engines=("loader", "explore", "conform"),
        fuzz_settings="quick",
        progress=False,
    )
    (result,) = report.results
    kill = result.killed_by("conform")
    assert result.status == "killed" and kill is not None
    assert "finish" in kill.evidence["divergence"]
    assert report.ok and report.score == 1.0


def test_the_observable_digest_ignores_node_numbering_but_not_behaviour(small: Table) -> None:
    graph = explore(small, {"budget": 1}).graph
    digest = observable_digest(graph, small)
    shuffled = nx.relabel_nodes(graph, {n: n + 1000 for n in graph.nodes})
    shuffled = nx.relabel_nodes(shuffled, {1000: 0})  # the explorer's root is node 0
    assert observable_digest(shuffled, small) == digest
    assert digest != observable_digest(explore(small, {"budget": 2}).graph, small)


def _variant(tmp_path: Path, *edits: tuple[str, str]) -> Table:
    text = SMALL
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "variant.toml"
    path.write_text(text, encoding="utf-8")
    return load_table(path)


def test_state_no_run_can_read_is_not_behaviour(small: Table, tmp_path: Path) -> None:
    """`calls` is read by no guard, argument or counter: forgetting its update changes every
    reachable state and nothing a host sees, so the mutant is equivalent, not a survivor."""
    unread = _variant(
        tmp_path,
        ('update = { steps = "steps + 1", calls = "calls + 1" }', 'update = { steps = "steps + 1" }'),
    )
    for budget in range(4):
        original, mutant = explore(small, {"budget": budget}).graph, explore(unread, {"budget": budget}).graph
        values = [{repr(sorted(g.nodes[n]["values"].items())) for n in g.nodes} for g in (original, mutant)]
        assert budget == 0 or values[0] != values[1]  # the mutant walks other states
        assert observable_digest(mutant, unread) == observable_digest(original, small)
    # Without the claim that reads it, the mutant is equivalent, not a survivor.
    unclaimed = _variant(tmp_path, ('[[invariants]]\nname = "calls_are_steps"\nexpr = "calls == steps"', ""))
    report = mutate(
        unclaimed, only=["work.update.calls.remove"], engines=("loader", "explore"), jobs=1, progress=False
    )
    assert [r.status for r in report.results] == ["equivalent"]


def test_a_counter_and_an_internal_step_are_judged_by_what_the_host_sees(
    small: Table, tmp_path: Path
) -> None:
    # `steps` is a counter: its final value is on the wire in `end`, so losing its update shows.
    lost = _variant(
        tmp_path,
        ('update = { steps = "steps + 1", calls = "calls + 1" }', 'update = { calls = "calls + 1" }'),
    )
    explored = explore(lost, {"budget": 1}, max_states=200)
    assert observable_digest(explored.graph, lost) != observable_digest(
        explore(small, {"budget": 1}).graph, small
    )
    # One more internal step on the way back to the loop is invisible to the host.
    detour = _variant(
        tmp_path,
        (
            'guard = "more"\nto = "loop"',
            'guard = "more"\nto = "turning"\n\n[[transitions]]\nid = "turn"\nfrom = "turning"\nto = "loop"',
        ),
        ('stepped = "a step answered"', 'stepped = "a step answered"\nturning = "on the way back"'),
    )
    assert observable_digest(explore(detour, {"budget": 2}).graph, detour) == observable_digest(
        explore(small, {"budget": 2}).graph, small
    )


def test_a_run_that_does_not_stop_is_interrupted() -> None:
    started = time.monotonic()
    with pytest.raises(_TimedOut), _time_limit(0.2):
        while True:
            pass
    assert time.monotonic() - started < 5


def test_report_json_is_the_same_with_one_or_two_workers(small: Table) -> None:
    first = mutate(small, engines=("loader", "explore"), jobs=2, progress=False).to_json()
    second = mutate(small, engines=("loader", "explore"), jobs=1, progress=False).to_json()
    assert json.dumps(first) == json.dumps(second)
    assert {"killed", "survived", "equivalent", "score"} <= set(first)
    assert first["mutants"] == len(first["results"])


def test_cli_mutate_reports_survivors_and_exits_1(small: Table, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mutate", small.source, "--engines", "loader,explore", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert "score:" in out and "SURVIVED" in out and "again.to.done" in out
    assert "swap-target" in out and "killed by engine (first kill): loader" in out


def test_cli_mutate_json_with_an_operator_filter(small: Table, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["mutate", small.source, "--operator", "remove-update", "--engines", "loader,explore", "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert {r["operator"] for r in data["results"]} == {"remove-update"}
    assert data["operators"] == ["remove-update"]
    assert data["killed"] == 2 and data["survived"] == 0 and data["score"] == 1.0
    assert code == 0


def test_cli_mutate_rejects_an_unknown_engine(small: Table, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutate", small.source, "--engines", "loader,telepathy"]) == 2
    err = capsys.readouterr().err
    assert "unknown engine 'telepathy'" in err and err.count("\n") == 1


# -- a few deeptutor-scheduler mutants, each with the engine that kills it first ---------------

CHOSEN = {
    "reject_after_recovery.guard.cmp0.flip": "loader",
    "dispatch.update.tool_steps.remove": "cases",
    "budget_forced_finish.update.extra_rounds.remove": "explore",
    "resume.to.finish": "explore",
}
"""`resume.to.finish` (the loop ends at finish without calling finish) was killed first by the
vectors until the table claimed `finish_is_last`; its vector evidence is checked on its own below."""


@pytest.fixture(scope="module")
def deeptutor_chosen(deeptutor: Table) -> MutationReport:
    return mutate(
        deeptutor, only=list(CHOSEN), engines=("loader", "cases", "explore", "vectors"), progress=False
    )


def test_deeptutor_mutants_are_killed_by_the_engine_that_sees_them(deeptutor_chosen: MutationReport) -> None:
    assert {r.id: r.kills[0].engine for r in deeptutor_chosen.results} == CHOSEN
    assert deeptutor_chosen.score == 1.0


def test_deeptutor_kills_carry_their_evidence(deeptutor: Table, deeptutor_chosen: MutationReport) -> None:
    got = results(deeptutor_chosen)
    case = got["dispatch.update.tool_steps.remove"].kills[0]
    assert any("tool_steps" in m for m in case.evidence["mismatches"])
    assert got["resume.to.finish"].kills[0].evidence["claim"] == "finish_is_last"
    by_vectors = mutate(deeptutor, only=["resume.to.finish"], engines=("loader", "vectors"), progress=False)
    vector = by_vectors.results[0].kills[0]
    assert vector.engine == "vectors"
    assert vector.evidence["vector"] and "expected" in vector.evidence["divergence"]
    explorer = got["budget_forced_finish.update.extra_rounds.remove"].kills[0]
    assert explorer.evidence["claim"] == "rounds_accounted" and explorer.evidence["replayed"]
    mutant = next(
        m
        for m in mutants(deeptutor, read_document(deeptutor))
        if m.id == "budget_forced_finish.update.extra_rounds.remove"
    ).load(Path(deeptutor.source).name)
    exploration = explore(mutant, explorer.evidence["params"])
    v = exploration.summary.violation("rounds_accounted")
    assert v is not None and [s.transition for s in v.witness.path] == explorer.evidence["path"]
    trace = replay(mutant, exploration.params, v.witness.path).trace
    assert (
        trace.variables["rounds"]
        != trace.variables["extra_rounds"]
        + trace.counters["settlement_rounds"]
        + (trace.counters["exploration_rounds"])
    )


def _small_with_bookkeeping(small: Table, tmp_path: Path, flag: str) -> Table:
    """SMALL plus `asked`, kept in step with the steps but read by no claim and no guard."""
    text = Path(small.source).read_text("utf-8")
    text = text.replace(
        "[operations.step]", f'[variables.asked]\ntype = "int"\ninit = "0"\n{flag}\n[operations.step]'
    )
    text = text.replace('calls = "calls + 1" }', 'calls = "calls + 1", asked = "asked + 1" }')
    path = tmp_path / "bookkeeping.toml"
    path.write_text(text, "utf-8")
    return load_table(path)


@pytest.mark.parametrize(
    ("flag", "status"), [("ghost = true", "equivalent"), ("", "equivalent"), ("counter = true", "survived")]
)
def test_a_lost_update_is_judged_by_what_the_wire_shows(
    small: Table, tmp_path: Path, flag: str, status: str
) -> None:
    """A ghost, and plain state nothing reads, never reach the wire: losing their update is
    equivalent. A counter is sent in `end`: losing its update is a survivor the claims miss."""
    table = _small_with_bookkeeping(small, tmp_path, flag)
    report = mutate(table, only=["work.update.asked.remove"], engines=("loader", "explore"), progress=False)
    (r,) = report.results
    assert r.status == status
    if status == "survived":  # with the shortest run that shows it
        assert (
            r.note is not None
            and "step() -> more; finish() -> ok: the original shows end done (steps=1, asked=1)" in r.note
        )


def test_a_mutant_whose_internal_steps_never_end_is_a_kill_not_an_error() -> None:
    """google-adk's model_error_propagates sent back to its own location: the counter it bumps grows
    at every internal step, the explorer stops it as a livelock, and that is the mutant's kill."""
    report = mutate(
        load_profile("google-adk"),
        only=["model_error_propagates.to.model_failed"],
        engines=("loader", "explore"),
        jobs=1,
        progress=False,
    )
    (result,) = report.results
    assert result.status == "killed" and result.killed_by("explore") is not None
    assert "internal transitions in a row without a host call" in result.kills[0].summary


# -- the operators beyond the guards and updates, and the two scores ----------------------------


def _mutant_document(table: Table, mutant_id: str) -> dict[str, object]:
    found = {m.id: m for m in mutants(table, read_document(table))}
    return found[mutant_id].document


def test_the_new_operators_make_the_faults_they_name(deeptutor: Table) -> None:
    ids = {m.id: m.operator for m in mutants(deeptutor, read_document(deeptutor))}
    assert ids["recovery_round.arg.recovery.flip"] == "argument-value"
    assert ids["salvage.arg.reason.budget"] == "argument-value"
    assert ids["explore_round.on_raise.host_failure.error"] == "raise-target"
    assert ids["budget_forced_finish.update.rounds+extra_rounds.remove"] == "remove-update-pair"
    assert ids["round_done.priority.truncated.over.reasoningBudgetExhausted"] == "fact-priority"
    assert ids["accept.step.drop"] == "drop-step"
    # a host call whose facts the next guards read is not bypassed (the mutant would not be a table)
    assert "explore_round.step.drop" not in ids
    doc = _mutant_document(deeptutor, "round_done.priority.truncated.over.reasoningBudgetExhausted")
    guards = {t["id"]: t["guard"] for t in doc["transitions"]}  # type: ignore[attr-defined]
    assert guards["reasoning_retry"].endswith("and not truncated")
    assert (
        guards["continue_truncated"]
        == "not hasTools and (not reasoningBudgetExhausted or truncated) and truncated"
    )
    accept = next(
        t for t in _mutant_document(deeptutor, "accept.step.drop")["transitions"] if t["id"] == "accept"
    )  # type: ignore[attr-defined]
    assert "op" not in accept and accept["to"] == "finish"


def test_every_new_operator_makes_tables_the_loader_accepts(deeptutor: Table) -> None:
    """Each new operator keeps the table deterministic and covered, so its mutants test the checks,
    not the loader."""
    new = ["argument-value", "raise-target", "remove-update-pair", "fact-priority", "drop-step"]
    found = mutants(deeptutor, read_document(deeptutor), new)
    assert {m.operator for m in found} == set(new)
    for m in found:
        m.load("deeptutor-scheduler.toml")


@pytest.fixture(scope="module")
def unclaimed(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """deeptutor-scheduler without the three step claims that read the forced finish's reason as sent:
    the salvage's reason is then a fault only the seed's cases see (as before those claims)."""
    spec = Path(load_profile("deeptutor-scheduler").source).parent
    text = (spec / "deeptutor-scheduler.toml").read_text(encoding="utf-8")
    blocks = text.split("[[step_claims]]")
    kept = blocks[0] + "".join("[[step_claims]]" + b for b in blocks[1:] if "arg.reason" not in b)
    assert kept.count("[[step_claims]]") == text.count("[[step_claims]]") - 3
    root = tmp_path_factory.mktemp("unclaimed")
    shutil.copytree(spec / "cases" / "deeptutor-scheduler", root / "cases" / "deeptutor-scheduler")
    (root / "deeptutor-scheduler.toml").write_text(kept, encoding="utf-8")
    return load_profile(str(root / "deeptutor-scheduler.toml"))


TWO_SCORES = [
    "salvage.arg.reason.budget",  # the salvage's reason as sent: forced_finish_reason (a step claim)
    "budget_forced_finish.update.rounds+extra_rounds.remove",  # both of the pair: forced_finish_accounting
    "budget_forced_finish.update.rounds.remove",  # one of the pair: rounds_accounted
]
"""Three faults of the classes an audit found escaping every claim; the strengthened table's claims
now kill each, and the seed's cases still do too."""


@pytest.fixture(scope="module")
def two_scores(deeptutor: Table) -> MutationReport:
    return mutate(deeptutor, only=TWO_SCORES, engines=("loader", "cases", "explore"), progress=False)


def test_each_family_runs_until_one_of_its_engines_kills(two_scores: MutationReport) -> None:
    got = results(two_scores)
    expected_claim = {
        "salvage.arg.reason.budget": "forced_finish_reason",
        "budget_forced_finish.update.rounds+extra_rounds.remove": "forced_finish_accounting",
        "budget_forced_finish.update.rounds.remove": "rounds_accounted",
    }
    for mutant_id, claim in expected_claim.items():
        r = got[mutant_id]
        assert r.status == "killed" and r.ran == ("loader", "cases", "explore")
        by_claims, by_cases = r.first_kill("claims"), r.first_kill("differential")
        assert by_claims is not None and by_claims.engine == "explore"
        assert by_claims.summary.startswith(f"{claim} (")
        assert by_cases is not None and by_cases.engine == "cases"
    kill = got["salvage.arg.reason.budget"].first_kill("differential")
    assert kill is not None and "forced_finish call 1: reason=budget, expected error" in kill.summary


def test_the_two_scores_count_their_own_families(two_scores: MutationReport) -> None:
    r = two_scores
    assert r.killed == 3 and r.equivalent == 0
    assert r.claims_score == 1.0 and r.differential_score == 1.0
    assert r.escapes("claims") == []
    data = r.to_json()
    assert data["claims_killed"] == 3 and data["differential_killed"] == 3
    reason = next(m for m in data["results"] if m["id"] == "salvage.arg.reason.budget")
    assert reason["killed_by_claims"] == "explore" and reason["killed_by_differential"] == "cases"


def test_a_score_whose_engines_did_not_run_is_not_measured(small_report: MutationReport) -> None:
    assert small_report.differential_score is None and small_report.claims_score is not None
    assert small_report.to_json()["differential_killed"] is None


def test_an_argument_mutant_is_not_equivalent(unclaimed: Table) -> None:
    """It walks the original's states, but sends another value: the digest counts the arguments."""
    report = mutate(
        unclaimed, only=["salvage.arg.reason.budget"], engines=("loader", "explore"), progress=False
    )
    (r,) = report.results
    assert r.status == "survived" and r.kills == ()


def test_cli_mutate_prints_both_scores(small: Table, capsys: pytest.CaptureFixture[str]) -> None:
    report = mutate(small, engines=("loader", "explore"), jobs=1, progress=False)
    code = main(["mutate", small.source, "--engines", "loader,explore", "--jobs", "1"])
    out = capsys.readouterr().out
    judged = len(report.results) - report.equivalent
    assert code == 1 and report.claims_score is not None
    assert f"claims score: {report.claims_score:.1%} ({report.killed_in('claims')} of {judged} killed" in out
    assert "differential score: not measured" in out


def test_cli_mutate_names_the_mutants_no_claim_kills(
    unclaimed: Table, capsys: pytest.CaptureFixture[str]
) -> None:
    only = [a for m in TWO_SCORES for a in ("--mutant", m)]
    code = main(["mutate", str(unclaimed.source), *only, "--engines", "loader,cases,explore"])
    out = capsys.readouterr().out
    assert code == 0
    assert "claims score: 66.7% (2 of 3 killed" in out and "differential score: 100.0% (3 of 3" in out
    assert "NOT KILLED BY A CLAIM (1):" in out
    assert (
        "  salvage.arg.reason.budget: salvage: forced_finish sends reason = budget, not error [cases]" in out
    )
