"""The explorer: every reachable state, claims checked on all of them, witnesses that replay."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from types import MappingProxyType
from typing import Any

import networkx as nx
import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import DETERMINISTIC, TERMINATES, Exploration, explore, replay
from turnbound.properties.explore.sweep import configurations, default_ranges, explore_all, sweep, tally
from turnbound.properties.graph.files import exploration_dot, write_dot, write_graphml
from turnbound.reference.errors import DefinitionError, ScriptExhausted
from turnbound.reference.expr import Compare, Ref
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table_text
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, probe_line
from turnbound.reference.types import INT

from tests.conftest import REPO, TINY

DEEPTUTOR_TEXT = (REPO / "spec" / "deeptutor-scheduler.toml").read_text()
SEED_ROWS = {
    "ordinary_cap": "rounds=3; exploration=1; settlement=1; tool_steps=2; terminal=forced_finish",
    "recovery_answer": "rounds=3; exploration=1; settlement=2; tool_steps=2; terminal=finish",
    "recovery_tools": "rounds=3; exploration=1; settlement=2; tool_steps=3; terminal=reject_finish",
    "recovery_rejected": "rounds=3; exploration=1; settlement=2; tool_steps=2; terminal=reject_finish",
}


def edited(text: str, old: str, new: str) -> Table:
    changed = text.replace(old, new, 1)
    assert changed != text, f"edit did not apply: {old!r}"
    return load_table_text(changed)


def plain_run(table: Table, params: dict[str, int], script: Any) -> Any:
    """The unmodified interpreter on a witness's host script."""
    return run(table, ScriptHost(Script.model_validate(script)), params)


def claim_holds(table: Table, name: str, env: dict[str, Any]) -> bool:
    claim = next(c for c in (*table.invariants, *table.bounds) if c.name == name)
    return bool(compile_expr(claim.expr)(env))


@pytest.fixture(scope="module")
def default_sweep_json() -> tuple[int, dict[str, Any]]:
    """`turnbound explore deeptutor-scheduler --json`: the table's default sweep, once per module."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["explore", "deeptutor-scheduler", "--json"])
    return code, json.loads(out.getvalue())


# -- the done criteria on deeptutor-scheduler ------------------------------------------


def test_default_sweep_every_invariant_and_trace_property_holds(
    deeptutor: Table, default_sweep_json: tuple[int, dict[str, Any]]
) -> None:
    code, data = default_sweep_json
    assert code == 0 and data["ok"] is True
    ranges = default_ranges(deeptutor)
    expected = 1
    for values in ranges.values():
        expected *= len(values)
    assert data["configurations"] == len(data["results"]) == expected
    must_hold = {c.name for c in deeptutor.invariants} | {p.name for p in deeptutor.trace_properties}
    must_hold |= {TERMINATES, DETERMINISTIC}
    for result in data["results"]:
        assert result["states"] > 0 and result["edges"] >= result["states"] - 1
        assert sum(result["terminals"].values()) > 0
        verdicts = {c["name"]: c["verdict"] for c in result["claims"]}
        assert {verdicts[n] for n in must_hold} == {"holds"}, result["params"]
    assert data["states"] == sum(r["states"] for r in data["results"])


def test_default_sweep_worst_case_rounds_is_both_budgets_plus_one(
    default_sweep_json: tuple[int, dict[str, Any]],
) -> None:
    _, data = default_sweep_json
    for result in data["results"]:
        p = result["params"]
        assert result["max"]["rounds"] == p["explorationBudget"] + p["settlementBudget"] + 1, p
        bound = next(c for c in result["claims"] if c["name"] == "rounds_bound")
        assert bound["verdict"] == "holds" and bound["tight"] is True
        assert bound["lhs_max"] == bound["rhs"] == result["max"]["rounds"]
    rounds_bound = next(c for c in data["claims"] if c["name"] == "rounds_bound")
    assert rounds_bound["tight"] == data["configurations"]


def test_default_sweep_refutes_the_naive_bound_everywhere(
    deeptutor: Table, default_sweep_json: tuple[int, dict[str, Any]]
) -> None:
    _, data = default_sweep_json
    naive = next(c for c in data["claims"] if c["name"] == "naive_rounds_bound")
    assert naive["expect"] == "violated" and naive["violated"] == data["configurations"]
    for result in data["results"]:
        [v] = [v for v in result["violations"] if v["claim"] == "naive_rounds_bound"]
        assert v["kind"] == "bound" and v["replayed"] is True
        trace = v["trace"]
        p = result["params"]
        assert trace["counters"]["rounds"] > p["explorationBudget"] + p["settlementBudget"]
        assert v["line"].startswith(f"rounds={trace['counters']['rounds']};")
        # the witness is a complete run: the plain interpreter replays its script to the same trace
        replayed = plain_run(deeptutor, p, v["script"])
        assert replayed.to_json() == trace


def test_naive_bound_refuted_at_one_one_with_three_round_seed_rows(deeptutor: Table) -> None:
    params = {"explorationBudget": 1, "settlementBudget": 1}
    ex = explore(deeptutor, params, exits=True)
    v = ex.summary.violation("naive_rounds_bound")
    assert v is not None and v.replay_problem is None
    assert ex.summary.claim("naive_rounds_bound").as_expected
    assert v.witness.trace.counters["rounds"] == 3
    assert v.witness.line == probe_line(deeptutor, v.witness.trace)
    assert all(e.replay_problem is None for e in v.exits)
    by_case = {e.case: e for e in v.exits if e.case}
    assert set(SEED_ROWS) <= set(by_case)
    for case, line in SEED_ROWS.items():
        e = by_case[case]
        assert e.line == line
        again = plain_run(deeptutor, ex.params, e.witness.script)
        assert probe_line(deeptutor, again) == line
        assert again.counters["rounds"] == 3
    lengths = [len(e.witness.path) for e in v.exits]
    assert lengths == sorted(lengths) and lengths[0] == len(v.witness.path)


def test_cli_single_configuration_prints_the_refutation_and_seed_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["explore", "deeptutor-scheduler", "-p", "explorationBudget=1", "-p", "settlementBudget=1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "naive_rounds_bound (bound) refuted as expected" in out
    for case, line in SEED_ROWS.items():
        assert re.search(rf"{re.escape(line)}\s+\[case {case}\]", out)
    assert re.search(r"rounds_bound\s+bound\s+holds\s+3 = 3", out)
    assert out.rstrip().splitlines()[-1].startswith("OK: ")


# -- broken tables ---------------------------------------------------------------------------


def test_broken_table_invariant_violation_replays_to_a_full_run() -> None:
    table = edited(DEEPTUTOR_TEXT, 'rounds = "rounds + extraRounds", ', "")
    ex = explore(table, {"explorationBudget": 1, "settlementBudget": 1})
    assert not ex.ok
    v = ex.summary.violation("rounds_accounted")
    assert v is not None and v.kind == "invariant" and v.replay_problem is None
    trace = plain_run(table, ex.params, v.witness.script)
    assert trace == v.witness.trace
    assert not claim_holds(table, "rounds_accounted", {**trace.params, **trace.variables})
    assert ex.summary.claim("rounds_accounted").verdict == "violated"


def test_mid_run_invariant_violation_replays_to_exactly_its_state() -> None:
    table = edited(
        DEEPTUTOR_TEXT,
        'exploration_rounds = "exploration_rounds + 1"',
        'exploration_rounds = "exploration_rounds + 2"',
    )
    ex = explore(table, {})
    v = ex.summary.violation("exploration_within_budget")
    assert v is not None and v.replay_problem is None
    assert v.witness.trace.terminal == HORIZON  # cut off where the invariant first fails
    assert [s.transition for s in v.witness.path] == ["explore_round"]
    r = replay(table, ex.params, v.witness.path)
    assert not claim_holds(
        table,
        "exploration_within_budget",
        {**ex.params, **dict(zip([x.name for x in table.variables], r.visited[-1].values, strict=True))},
    )
    with pytest.raises(ScriptExhausted):  # the plain interpreter wants the next host outcome
        plain_run(table, ex.params, v.witness.script)


def test_tiny_bound_violation_and_cli_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TINY.replace('steps = "steps + 1"', 'steps = "steps + 2"')
    table = load_table_text(text)
    ex = explore(table, {"budget": 3})
    v = ex.summary.violation("steps_bound")
    assert v is not None and v.replay_problem is None
    assert plain_run(table, ex.params, v.witness.script).counters["steps"] == 4
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    assert main(["explore", str(path), "-p", "budget=3"]) == 1
    out = capsys.readouterr().out
    assert "steps_bound (bound) VIOLATED" in out
    assert "FAIL: verdict differs from expect: steps_bound" in out


def test_cycle_is_non_termination_with_a_lasso(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TINY.replace('update = { steps = "steps + 1" }', 'update = { steps = "1" }')
    table = load_table_text(text)
    ex = explore(table, {"budget": 2})
    assert ex.summary.claim(TERMINATES).verdict == "violated"
    v = ex.summary.violation(TERMINATES)
    assert v is not None and v.replay_problem is None and v.kind == "termination"
    w = v.witness
    assert w.loop_start is not None and 0 < w.loop_start < len(w.path)
    r = replay(table, ex.params, w.path)
    assert r.visited[w.loop_start] == r.visited[-1]  # the interpreter comes back to where the loop starts
    loop = ex.graph.subgraph(nx.find_cycle(ex.graph)[0])
    assert loop.number_of_nodes() >= 1
    path = tmp_path / "loop.toml"
    path.write_text(text)
    assert main(["explore", str(path), "-p", "budget=2"]) == 1
    out = capsys.readouterr().out
    assert "terminates (termination) VIOLATED" in out and "[loop:]" in out


def test_step_horizon_reports_horizon_reached_instead_of_hanging() -> None:
    text = (
        TINY.replace('initial = "loop"', 'initial = "loop"\nstep_horizon = 6')
        .replace('guard = "steps < budget"', 'guard = "true"')
        .replace('guard = "steps >= budget"', 'guard = "false"')
    )
    table = load_table_text(text)
    ex = explore(table, {})
    claim = ex.summary.claim(TERMINATES)
    assert claim.verdict == "violated" and claim.expect == "either" and claim.as_expected
    v = ex.summary.violation(TERMINATES)
    assert v is not None and v.replay_problem is None and "horizon reached" in v.message
    trace = plain_run(table, ex.params, v.witness.script)  # the interpreter stops at the same horizon
    assert trace.terminal == HORIZON and len(trace.steps) == 6
    assert any(d["horizon"] for _, d in ex.graph.nodes(data=True))


def test_stuck_state_is_a_determinism_violation_that_replays(tiny_text: str) -> None:
    table = load_table_text(tiny_text)
    stop = table.transition("stop")
    narrowed = dataclasses.replace(
        stop, guard=Compare(">", Ref("steps", "var", INT), Ref("budget", "param", INT))
    )
    transitions = tuple(narrowed if t.id == "stop" else t for t in table.transitions)
    outgoing = {
        loc: tuple(narrowed if t.id == "stop" else t for t in ts) for loc, ts in table.outgoing.items()
    }
    broken = dataclasses.replace(table, transitions=transitions, outgoing=MappingProxyType(outgoing))
    ex = explore(broken, {"budget": 1})
    v = ex.summary.violation(DETERMINISTIC)
    assert v is not None and v.replay_problem is None
    assert "no transition is enabled at location 'loop'" in v.message
    assert not ex.ok


# -- the graph, its files, and the summary ------------------------------------------------------


def test_graph_matches_summary_and_documents_its_attributes(deeptutor: Table) -> None:
    ex = explore(deeptutor, {}, all_states=True)
    g = ex.graph
    s = ex.summary
    assert (g.number_of_nodes(), g.number_of_edges()) == (s.states, s.edges)
    atomic = explore(deeptutor, {})  # stores fewer states; its graph still has every state
    assert atomic.summary.states < s.states
    assert (atomic.graph.number_of_nodes(), atomic.graph.number_of_edges()) == (s.states, s.edges)
    assert g.nodes[0]["depth"] == 0 and g.nodes[0]["location"] == deeptutor.initial
    terminals: dict[str, int] = {}
    for _, d in g.nodes(data=True):
        if d["terminal"]:
            terminals[d["location"]] = terminals.get(d["location"], 0) + 1
            assert g.out_degree(_) == 0
    assert terminals == s.terminals
    taken = {d["transition"] for _, _, d in g.edges(data=True)}
    assert taken == set(s.covered) and set(s.covered).isdisjoint(s.uncovered)
    assert set(s.covered) | set(s.uncovered) == {t.id for t in deeptutor.transitions}
    for a, b, d in g.edges(data=True):
        assert g.nodes[b]["depth"] <= g.nodes[a]["depth"] + 1
        assert (d["op"] is None) == (d["outcome"] is None)
    # the shortest path to any node replays on the interpreter to that node's state
    far = max(g.nodes, key=lambda n: (g.nodes[n]["depth"], n))
    r = replay(deeptutor, ex.params, ex.path_to(far))
    assert r.visited[-1].location == g.nodes[far]["location"]
    assert (
        dict(zip([v.name for v in deeptutor.variables], r.visited[-1].values, strict=True))
        == g.nodes[far]["values"]
    )


def test_dot_and_graphml_are_written_and_parse_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dot, graphml = tmp_path / "g.dot", tmp_path / "g.graphml"
    args = ["explore", "deeptutor-scheduler", "-p", "explorationBudget=0", "-p", "settlementBudget=0"]
    assert main([*args, "--dot", str(dot), "--graphml", str(graphml), "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["results"]
    g = nx.read_graphml(graphml)
    assert (g.number_of_nodes(), g.number_of_edges()) == (result["states"], result["edges"])
    attrs = g.nodes["n0"]
    assert attrs["location"] == "loop" and attrs["depth"] == 0 and attrs["terminal"] is False
    assert all(isinstance(v, str | int | bool) for _, d in g.nodes(data=True) for v in d.values())
    text = dot.read_text()
    assert text.startswith('digraph "deeptutor-scheduler" {') and text.rstrip().endswith("}")
    assert len(re.findall(r"^  n\d+ \[label=", text, re.M)) == result["states"]
    assert len(re.findall(r"^  n\d+ -> n\d+ ", text, re.M)) == result["edges"]
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tcanon", str(dot), "-o", str(tmp_path / "canon.dot")], check=True)


def test_exports_are_byte_stable(deeptutor: Table, tmp_path: Path) -> None:
    a = explore(deeptutor, {"explorationBudget": 0})
    b = explore(deeptutor, {"explorationBudget": 0})
    assert exploration_dot(a) == exploration_dot(b)
    write_graphml(a, tmp_path / "a.graphml")
    write_graphml(b, tmp_path / "b.graphml")
    assert (tmp_path / "a.graphml").read_bytes() == (tmp_path / "b.graphml").read_bytes()
    write_dot(a, tmp_path / "a.dot")
    assert (tmp_path / "a.dot").read_text() == exploration_dot(a)
    assert json.dumps(a.summary.to_json()) == json.dumps(b.summary.to_json())


def test_graph_files_need_a_single_configuration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(
        ["explore", "deeptutor-scheduler", "-p", "explorationBudget=0..1", "--dot", str(tmp_path / "g")]
    )
    assert code == 2
    assert "give each parameter one value" in capsys.readouterr().err


# -- sweeps ------------------------------------------------------------------------------------


def test_configurations_are_the_product_in_table_order(deeptutor: Table) -> None:
    configs = configurations(deeptutor, {"settlementBudget": [1, 0], "explorationBudget": [2]})
    assert configs == [
        {"explorationBudget": 2, "settlementBudget": 0, "emptyRecoveryBudget": 2},
        {"explorationBudget": 2, "settlementBudget": 1, "emptyRecoveryBudget": 2},
    ]
    assert len(configurations(deeptutor)) == 4 * 4 * 3
    with pytest.raises(DefinitionError, match="unknown parameter 'budget'"):
        configurations(deeptutor, {"budget": [1]})
    with pytest.raises(DefinitionError, match="explorationBudget=-1 is outside"):
        configurations(deeptutor, {"explorationBudget": [-1, 0]})


def test_parallel_sweep_equals_sequential_in_order(deeptutor: Table) -> None:
    ranges = {"explorationBudget": [0, 1], "settlementBudget": [0, 1], "emptyRecoveryBudget": [0]}
    parallel = sweep(deeptutor, ranges, jobs=2, progress=False)
    sequential = explore_all(deeptutor, configurations(deeptutor, ranges), jobs=1, progress=False)
    assert [s.to_json() for s in parallel] == [s.to_json() for s in sequential]
    assert [s.params for s in parallel] == configurations(deeptutor, ranges)
    [rounds] = [t for t in tally(parallel) if t.name == "rounds_bound"]
    assert (rounds.holds, rounds.tight, rounds.witness) == (4, 4, None)


def test_default_sweep_takes_every_transition(default_sweep_json: tuple[int, dict[str, Any]]) -> None:
    """A transition no configuration of the default range takes would be dead table text."""
    _, data = default_sweep_json
    never = set.intersection(*(set(r["transitions_uncovered"]) for r in data["results"]))
    assert never == set()


def test_state_limit_makes_the_exploration_incomplete(deeptutor: Table) -> None:
    """A limit reached is not a verdict: nothing is refuted or held by a search cut short,
    and no witness is made of the path the search happened to stop on."""
    ex = explore(deeptutor, {}, max_states=50)
    assert not ex.summary.complete and not ex.ok
    assert ex.summary.limit == "max_states=50"
    assert ex.summary.to_json()["limit"] == "max_states=50"
    assert ex.summary.claim(TERMINATES).verdict == "unknown"
    assert ex.summary.violation(TERMINATES) is None
    assert {c.verdict for c in ex.summary.claims} == {"unknown"}


def test_max_states_must_be_positive(deeptutor: Table) -> None:
    with pytest.raises(ValueError, match="max_states must be at least 1, got 0"):
        explore(deeptutor, {}, max_states=0)


def _exploration_json(ex: Exploration) -> str:
    return json.dumps(ex.summary.to_json(), sort_keys=True)


def test_trace_property_violation_is_found_on_a_path() -> None:
    """Let the salvage path ignore `partial`: a partial failure is then followed by forced_finish."""
    text = DEEPTUTOR_TEXT.replace('guard = "rounds == 0 or partial"', 'guard = "rounds == 0"', 1)
    table = edited(text, 'guard = "rounds > 0 and not partial"', 'guard = "rounds > 0"')
    ex = explore(table, {})
    v = ex.summary.violation("partial_failure_not_salvaged")
    assert v is not None and v.kind == "trace_property" and v.replay_problem is None
    assert v.witness.trace.ops[-1] == "forced_finish"
    assert _exploration_json(ex) == _exploration_json(explore(table, {}))


def test_a_walk_through_the_graph_replays_as_a_host_script(deeptutor: Table) -> None:
    ex = explore(deeptutor, {"explorationBudget": 0, "settlementBudget": 0})
    g = ex.graph
    target = next(n for n, d in g.nodes(data=True) if d["location"] == "finish")
    walk = nx.shortest_path(g, 0, target)
    steps = ex.steps(walk)
    r = replay(deeptutor, ex.params, steps)
    assert r.trace.terminal == "finish"
    assert r.trace.path == [s.transition for s in steps]
    assert sum(len(q) for q in r.script.values()) == len(r.trace.steps)
    with pytest.raises(ValueError, match="no edge"):
        ex.steps([0, target])
