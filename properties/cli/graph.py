"""`turnbound graph`: a picture of a table's control flow, or of its reachable states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    json_option,
    param_option,
    parse_param_values,
    usage_error,
)
from turnbound.properties.explore.explorer import Exploration, Violation, explore
from turnbound.properties.graph.model import (
    Graph,
    control_flow,
    highlight,
    path_nodes,
    state_graph,
    state_id,
    state_path_edges,
    trace_edges,
)
from turnbound.properties.graph.render import GraphvizMissing, dot_available, format_of, write
from turnbound.reference.machine import check_params
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table

MAX_PICTURE_STATES = 2000
"""Beyond this a state graph is unreadable, and Graphviz takes minutes to lay it out."""


@app.command("graph")
@click.argument("profile")
@param_option
@click.option(
    "--out", "out", required=True, type=click.Path(path_type=Path), help="FILE.svg, FILE.png or FILE.dot."
)
@click.option("--states", is_flag=True, help="Draw the reachable state graph at the --param values.")
@click.option("--highlight", "claim", metavar="CLAIM", help="Highlight the shortest counterexample to CLAIM.")
@click.option(
    "--max-states",
    type=click.IntRange(min=1),
    default=MAX_PICTURE_STATES,
    show_default=True,
    help="Refuse to draw a state graph larger than this.",
)
@json_option
def graph_cmd(
    profile: str,
    param: tuple[str, ...],
    out: Path,
    states: bool,
    claim: str | None,
    max_states: int,
    as_json: bool,
) -> None:
    """Draw PROFILE (a bundled name or a .toml path) as a picture.

    Without --states: the control flow (locations, terminals, transitions labelled with id,
    guard and host operation; dashed edges where a host failure leads). With --states: every
    reachable state at the --param values (defaults for the rest), terminals coloured by kind.
    --highlight CLAIM explores at the --param values and marks the shortest counterexample
    to CLAIM. SVG and PNG need Graphviz's `dot`; DOT output needs nothing.
    """
    table = load_profile(profile)
    params = check_params(table, parse_param_values(param))
    fmt = format_of(out)
    if fmt != "dot" and not dot_available():
        raise GraphvizMissing(str(out))
    exploration: Exploration | None = None
    if states:
        exploration = explore(table, params, max_states=max_states + 1, all_states=True)
        n = exploration.summary.states
        if n > max_states or not exploration.summary.complete:
            usage_error(
                f"{table.name}: more than {max_states} reachable states at {_params_text(params)}; "
                "choose smaller --param values (or raise --max-states)"
            )
        picture = state_graph(exploration)
    else:
        picture = control_flow(table)
    violation: Violation | None = None
    if claim is not None:
        exploration = exploration or explore(table, params, all_states=True)
        violation = _violation(table, exploration, claim, params)
        picture = _highlighted(picture, table, exploration, violation, states)
    write(picture, out)
    report = _report(table, params, fmt, out, picture, states, violation)
    if as_json:
        emit_json(report)
        return
    view = "reachable states" if states else "control flow"
    console.print(
        f"wrote {out} ({fmt}): {view} of {table.name}, {report['nodes']} nodes, {report['edges']} edges",
        markup=False,
    )
    if violation is not None:
        console.print(f"highlighted: shortest counterexample to {violation.claim}", markup=False)
        console.print(f"  {violation.message}", markup=False)
        console.print(f"  {violation.witness.line}", markup=False)


def _params_text(params: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "the defaults"


def _violation(table: Table, exploration: Exploration, claim: str, params: dict[str, int]) -> Violation:
    names = [c.name for c in exploration.summary.claims]
    if claim not in names:
        usage_error(f"{table.name}: no claim named {claim!r}; claims: {', '.join(names)}")
    found = exploration.summary.violation(claim)
    if found is None:
        usage_error(
            f"{table.name}: claim {claim} holds at {_params_text(params)}: no counterexample to highlight"
        )
    return found


def _highlighted(picture: Graph, table: Table, exploration: Exploration, v: Violation, states: bool) -> Graph:
    note = f"red: shortest counterexample to {v.claim} ({v.witness.line})"
    if not states:
        return highlight(picture, trace_edges(table, v.witness.trace), note=note)
    nodes = path_nodes(exploration, v.witness.path)
    return highlight(
        picture, state_path_edges(exploration, nodes), nodes=[state_id(exploration, nodes[-1])], note=note
    )


def _report(
    table: Table,
    params: dict[str, int],
    fmt: str,
    out: Path,
    picture: Graph,
    states: bool,
    v: Violation | None,
) -> dict[str, Any]:
    return {
        "profile": table.name,
        "view": "states" if states else "control_flow",
        "params": params,
        "out": str(out),
        "format": fmt,
        "nodes": len(picture.nodes),
        "edges": len(picture.edges),
        "highlight": None
        if v is None
        else {
            "claim": v.claim,
            "message": v.message,
            "line": v.witness.line,
            "path": [s.transition for s in v.witness.path],
            "highlighted_edges": len(picture.highlighted_edges),
        },
    }
