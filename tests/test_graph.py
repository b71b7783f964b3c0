"""`turnbound graph`: the pictures are valid images of the expected graph.

Counts come from the table or the explorer, never from the picture code: the DOT text is
parsed here (and by Graphviz itself), the SVG as XML, the PNG by its header.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.explore.explorer import explore
from turnbound.properties.graph.model import control_flow, exit_shares, trace_edges
from turnbound.properties.graph.render import HIGHLIGHT
from turnbound.reference.cases import check_case
from turnbound.reference.errors import RunError
from turnbound.reference.expr import render
from turnbound.reference.loader import load_table
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

from tests.conftest import TINY

requires_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot is not installed (.ci/run installs it)"
)
SVG = "{http://www.w3.org/2000/svg}"
NODE_LINE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[(.*)\];$')
EDGE_LINE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)"(?: \[(.*)\])?;$')
LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"')
SMALL = ["-p", "explorationBudget=0", "-p", "settlementBudget=0", "-p", "emptyRecoveryBudget=0"]


def parse_dot(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Nodes (id -> attributes) and edges (source, target, attributes), one statement a line."""
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        if m := EDGE_LINE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3) or ""))
        elif (m := NODE_LINE.match(line)) and m.group(1) not in ("graph", "node", "edge"):
            nodes[m.group(1)] = m.group(2)
    return nodes, edges


def label_lines(attrs: str) -> list[str]:
    m = LABEL.search(attrs)
    return m.group(1).replace('\\"', '"').split("\\n") if m else []


def graph(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["graph", *args, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def raise_edges(table: Table) -> Counter[tuple[str, str]]:
    """One edge per location, failure and target."""
    keys = {(t.source, failure, target) for t in table.transitions for failure, target in t.on_raise.items()}
    return Counter((src, dst) for src, _, dst in keys)


@pytest.fixture
def tiny_path(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


# -- the control flow -------------------------------------------------------------------


def test_control_flow_has_every_place_and_transition(
    deeptutor: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "flow.dot"
    report = graph(["deeptutor-scheduler", "--out", str(out)], capsys)
    nodes, edges = parse_dot(out.read_text())
    assert set(nodes) == set(deeptutor.locations) | set(deeptutor.terminals)
    assert len(nodes) == len(deeptutor.locations) + len(deeptutor.terminals) == report["nodes"]
    solid = Counter((s, d) for s, d, attrs in edges if "dashed" not in attrs)
    dashed = Counter((s, d) for s, d, attrs in edges if "dashed" in attrs)
    assert solid == Counter((t.source, t.target) for t in deeptutor.transitions)
    assert dashed == raise_edges(deeptutor)
    assert report["edges"] == len(edges) == len(deeptutor.transitions) + sum(dashed.values())


def test_transition_labels_show_id_guard_and_operation(deeptutor: Table, tmp_path: Path) -> None:
    out = tmp_path / "flow.dot"
    assert main(["graph", "deeptutor-scheduler", "--out", str(out)]) == 0
    _, edges = parse_dot(out.read_text())
    labels = {lines[0]: lines for _, _, attrs in edges if (lines := label_lines(attrs))}
    for t in deeptutor.transitions:
        lines = labels[t.id]
        guard = " ".join(lines[1:-1])
        assert guard == f"[{render(t.guard)}]"
        assert lines[-1].startswith(t.op) if t.op else lines[-1] == "(internal)"


def test_dot_output_is_byte_stable_and_sorted(tmp_path: Path) -> None:
    a, b = tmp_path / "a.dot", tmp_path / "b.dot"
    for out in (a, b):
        assert main(["graph", "deeptutor-scheduler", "--states", *SMALL, "--out", str(out)]) == 0
    assert a.read_bytes() == b.read_bytes()
    nodes, edges = parse_dot(a.read_text())
    assert list(nodes) == sorted(nodes)
    assert [(s, d) for s, d, _ in edges] == sorted((s, d) for s, d, _ in edges)


@requires_dot
def test_graphviz_reads_the_dot_with_the_same_counts(tmp_path: Path) -> None:
    out = tmp_path / "flow.dot"
    assert main(["graph", "deeptutor-scheduler", "--out", str(out)]) == 0
    nodes, edges = parse_dot(out.read_text())
    plain = subprocess.run(["dot", "-Tplain", str(out)], capture_output=True, text=True, check=True).stdout
    kinds = Counter(line.split(" ", 1)[0] for line in plain.splitlines())
    assert kinds["node"] == len(nodes)
    assert kinds["edge"] == len(edges)


@requires_dot
def test_svg_is_xml_with_one_group_per_node_and_edge(
    deeptutor: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "flow.svg"
    report = graph(["deeptutor-scheduler", "--out", str(out)], capsys)
    assert report["format"] == "svg"
    root = ET.parse(out).getroot()
    groups = list(root.iter(f"{SVG}g"))
    node_titles = {g.findtext(f"{SVG}title") for g in groups if g.get("class") == "node"}
    assert node_titles == set(deeptutor.locations) | set(deeptutor.terminals)
    assert sum(1 for g in groups if g.get("class") == "edge") == report["edges"]


@requires_dot
def test_png_has_a_png_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "flow.png"
    report = graph(["deeptutor-scheduler", "--out", str(out)], capsys)
    data = out.read_bytes()
    assert report["format"] == "png"
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 1000


# -- the reachable state graph ----------------------------------------------------------


def test_state_graph_has_the_explorers_states_and_edges(
    tiny_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "states.dot"
    report = graph([str(tiny_path), "--states", "-p", "budget=2", "--out", str(out)], capsys)
    x = explore(load_table(tiny_path), {"budget": 2}, all_states=True)  # the graph has every state
    nodes, edges = parse_dot(out.read_text())
    assert len(nodes) == report["nodes"] == x.summary.states == x.graph.number_of_nodes()
    assert len(edges) == report["edges"] == x.summary.edges == x.graph.number_of_edges()
    filled = [attrs for attrs in nodes.values() if "filled" in attrs]
    assert len(filled) == sum(x.summary.terminals.values())


@requires_dot
def test_state_graph_svg_has_a_group_per_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "states.svg"
    report = graph(["deeptutor-scheduler", "--states", *SMALL, "--out", str(out)], capsys)
    groups = list(ET.parse(out).getroot().iter(f"{SVG}g"))
    assert sum(1 for g in groups if g.get("class") == "node") == report["nodes"]
    assert sum(1 for g in groups if g.get("class") == "edge") == report["edges"]


def test_highlight_marks_the_counterexample_among_the_states(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "states.dot"
    report = graph(
        ["deeptutor-scheduler", "--states", *SMALL, "--highlight", "naive_rounds_bound", "--out", str(out)],
        capsys,
    )
    nodes, edges = parse_dot(out.read_text())
    marked = [(s, d) for s, d, attrs in edges if HIGHLIGHT in attrs]
    path = report["highlight"]["path"]
    assert len(marked) == len(path) == report["highlight"]["highlighted_edges"] > 0
    # The marked edges form one chain from the initial state to a highlighted terminal.
    chain = [marked[0][0]]
    successors = dict(marked)
    while chain[-1] in successors:
        chain.append(successors[chain[-1]])
    assert len(chain) == len(path) + 1
    assert chain[0] == min(nodes)
    last = nodes[chain[-1]]
    assert HIGHLIGHT in last and "filled" in last and "breaks naive_rounds_bound" in last


def test_highlight_marks_the_counterexample_in_the_control_flow(
    deeptutor: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "flow.dot"
    params = ["-p", "explorationBudget=1", "-p", "settlementBudget=1"]
    report = graph(
        ["deeptutor-scheduler", *params, "--highlight", "naive_rounds_bound", "--out", str(out)], capsys
    )
    _, edges = parse_dot(out.read_text())
    marked = {label_lines(attrs)[0] for _, _, attrs in edges if HIGHLIGHT in attrs}
    assert marked == set(report["highlight"]["path"])
    assert report["highlight"]["line"].endswith("terminal=forced_finish")


def test_a_raised_failure_walks_its_raise_edge(deeptutor: Table) -> None:
    [case] = [c for c in profile_cases(deeptutor) if c.name == "first_round_failure"]
    trace = check_case(deeptutor, case).trace
    assert trace is not None
    walked = trace_edges(deeptutor, trace)
    assert ("loop", "round_failed", "raise:host_failure") in walked
    assert walked[-1][1] == trace.terminal


# -- errors: one line, exit 2 ---------------------------------------------------------


def test_missing_graphviz_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    assert main(["graph", "deeptutor-scheduler", "--out", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "install Graphviz: apt-get install graphviz" in err
    assert not (tmp_path / "x.svg").exists()
    assert main(["graph", "deeptutor-scheduler", "--out", str(tmp_path / "x.dot")]) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "x.jpg"], "unknown picture format 'jpg'"),
        (["--out", "x.dot", "--highlight", "nope"], "no claim named 'nope'"),
        (["--out", "x.dot", "--highlight", "rounds_bound"], "claim rounds_bound holds at"),
        (["--out", "x.dot", "--states", "--max-states", "10"], "more than 10 reachable states"),
        (["--out", "x.dot", "-p", "nosuch=1"], "unknown parameter 'nosuch'"),
    ],
)
def test_bad_requests_are_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    assert main(["graph", "deeptutor-scheduler", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


# -- the README's figure ---------------------------------------------------------------

FIGURE = Path(__file__).resolve().parent.parent / "docs" / "figures" / "deeptutor-control-flow.svg"


def test_readme_figure_shows_the_current_table(deeptutor: Table) -> None:
    """The committed picture has every place, edge and label line of the table as it is now.
    Regenerate: turnbound graph deeptutor-scheduler --out docs/figures/deeptutor-control-flow.svg"""
    picture = control_flow(deeptutor)
    root = ET.parse(FIGURE).getroot()
    groups = list(root.iter(f"{SVG}g"))
    titles = {g.findtext(f"{SVG}title") for g in groups if g.get("class") == "node"}
    assert titles == {n.id for n in picture.nodes}
    assert sum(1 for g in groups if g.get("class") == "edge") == len(picture.edges)
    texts = {t.text for t in root.iter(f"{SVG}text")}
    wanted = {line for e in picture.edges for line in e.label} | {
        line for n in picture.nodes for line in n.label
    }
    assert wanted <= texts


# -- exits over every host behaviour ------------------------------------------------------


def test_exit_shares_count_behaviours_and_random_host_chances(tiny_path: Path) -> None:
    """Budget 2: `step` answers more / not more / abort. Ends at done: (more, more), (more, not
    more), (not more); aborted: (abort), (more, abort). A random host: done 1/3 + 1/3 * 2/3."""
    shares = exit_shares(explore(load_table(tiny_path), {"budget": 2}))
    assert {k: v.paths for k, v in shares.items()} == {"done": 3, "aborted": 2}
    assert shares["done"].probability == pytest.approx(5 / 9)
    assert shares["aborted"].probability == pytest.approx(4 / 9)


def test_exit_shares_refuse_a_graph_with_a_cycle(tmp_path: Path) -> None:
    looping = tmp_path / "looping.toml"
    looping.write_text(TINY.replace('update = { steps = "steps + 1" }\n', ""), encoding="utf-8")
    x = explore(load_table(looping), {"budget": 1})
    with pytest.raises(RunError, match="has a cycle"):
        exit_shares(x)
