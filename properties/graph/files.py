"""The explorer's graph as files: DOT for Graphviz, GraphML for networkx, Gephi, yEd.

Both writers take an `Exploration` and emit nodes in BFS order (ids `n0`, `n1`, …;
`n0` is the initial state) and edges in the order the search found them, so the same
table and parameters give the same bytes. DOT is written here, no pydot needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
from turnbound.properties.explore.explorer import Exploration
from turnbound.reference.errors import DefinitionError
from turnbound.reference.outcomes import Outcome
from turnbound.reference.types import Value


def _text(value: Value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _pairs(values: dict[str, Value]) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in values.items())


def _facts(facts: dict[str, Value]) -> str:
    """True facts by name, other non-false values as name=value."""
    parts = [k if v is True else f"{k}={_text(v)}" for k, v in facts.items() if v is not False]
    return "facts: " + (", ".join(parts) or "all false")


def node_label(data: dict[str, Any]) -> str:
    """Location, then the variables, then the facts readable there."""
    lines = [str(data["location"]), _pairs(data["values"])]
    if data["facts"]:
        lines.append(_facts(data["facts"]))
    return "\n".join(lines)


def _dot_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def exploration_dot(exploration: Exploration) -> str:
    """Terminals have a double border, broken claims are red, horizon leaves dashed."""
    g = exploration.graph
    params = _pairs(dict(exploration.params))
    out = [
        f"digraph {_dot_string(exploration.table.name)} {{",
        f"  label={_dot_string(f'{exploration.table.name} ({params})')};",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n, data in g.nodes(data=True):
        attrs = [f"label={_dot_string(node_label(data))}"]
        if data["terminal"]:
            attrs.append("peripheries=2")
        if data["horizon"]:
            attrs.append("style=dashed")
        if data["violations"]:
            attrs.append("color=red")
            attrs.append(f"tooltip={_dot_string('breaks ' + ', '.join(data['violations']))}")
        out.append(f"  n{n} [{', '.join(attrs)}];")
    for a, b, data in g.edges(data=True):
        style = "" if data["op"] is not None else ", style=dashed"
        out.append(f"  n{a} -> n{b} [label={_dot_string(data['label'])}{style}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _outcome_json(outcome: Outcome | None) -> str:
    return "" if outcome is None else json.dumps(outcome.to_json(), sort_keys=True)


def graphml_graph(exploration: Exploration) -> nx.DiGraph:
    """A copy of the graph whose attribute values are str, int or bool only (GraphML types)."""
    g = exploration.graph
    out = nx.DiGraph(profile=exploration.table.name, params=_pairs(dict(exploration.params)))
    for n, data in g.nodes(data=True):
        out.add_node(
            f"n{n}",
            location=data["location"],
            terminal=bool(data["terminal"]),
            values=json.dumps(data["values"]),
            facts=json.dumps(data["facts"]),
            monitors=",".join(str(m) for m in data["monitors"]),
            depth=int(data["depth"]),
            calls=int(data["calls"]),
            horizon=bool(data["horizon"]),
            violations=",".join(data["violations"]),
            label=node_label(data),
        )
    for a, b, data in g.edges(data=True):
        out.add_edge(
            f"n{a}",
            f"n{b}",
            transition=data["transition"],
            op=data["op"] or "",
            outcome=_outcome_json(data["outcome"]),
            label=data["label"],
        )
    return out


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot write: {exc.strerror}") from None


def write_dot(exploration: Exploration, path: Path) -> None:
    _write(path, exploration_dot(exploration))


def write_graphml(exploration: Exploration, path: Path) -> None:
    _write(path, "\n".join(nx.generate_graphml(graphml_graph(exploration))) + "\n")


__all__ = ["exploration_dot", "graphml_graph", "node_label", "write_dot", "write_graphml"]
