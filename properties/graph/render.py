"""Graph model -> DOT text, and DOT -> SVG/PNG through Graphviz's `dot` program.

The DOT text is written here, not by a library, so it is byte-stable and needs nothing
installed; only SVG and PNG need Graphviz (Debian: `apt-get install graphviz`).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Literal

from turnbound.properties.graph.model import Edge, Graph, Node
from turnbound.reference.errors import DefinitionError, RunError, TurnboundError

Format = Literal["dot", "svg", "png"]
FORMATS: tuple[Format, ...] = ("dot", "svg", "png")
INSTALL_HINT = "install Graphviz: apt-get install graphviz"
DOT_TIMEOUT_S = 120

# Colour-blind-friendly pastel fills (light enough for black text); a terminal kind takes
# the colour at its index in the graph's sorted `terminal_kinds`.
PALETTE = (
    "#a6cee3",
    "#b2df8a",
    "#fdbf6f",
    "#cab2d6",
    "#fb9a99",
    "#ffff99",
    "#8dd3c7",
    "#d9d9d9",
    "#bebada",
    "#80b1d3",
)
HIGHLIGHT = "#d62728"


class GraphvizMissing(TurnboundError):
    """SVG/PNG output needs Graphviz's `dot` program, which is not on PATH."""

    def __init__(self, out: str) -> None:
        super().__init__(f"cannot write {out}: Graphviz's `dot` is not on PATH; {INSTALL_HINT}")


def terminal_colour(graph: Graph, terminal: str) -> str:
    kinds = graph.terminal_kinds
    index = kinds.index(terminal) if terminal in kinds else len(kinds)
    return PALETTE[index % len(PALETTE)]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(lines: tuple[str, ...]) -> str:
    escaped = [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return '"' + "\\n".join(escaped) + '"'


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _node_line(graph: Graph, n: Node) -> str:
    attrs: list[tuple[str, str]] = [("label", _label(n.label))]
    if n.kind == "terminal":
        attrs += [
            ("shape", "doubleoctagon"),
            ("style", '"filled"'),
            ("fillcolor", _quote(terminal_colour(graph, n.terminal or n.id))),
        ]
    else:
        attrs += [("shape", "box"), ("style", '"rounded"')]
        if n.initial:
            attrs += [("peripheries", "2")]
    if n.highlighted:
        attrs += [("color", _quote(HIGHLIGHT)), ("penwidth", "3")]
    if n.tooltip:
        attrs += [("tooltip", _quote(n.tooltip))]
    return f"  {_quote(n.id)} {_attrs(attrs)};"


def _edge_line(e: Edge) -> str:
    attrs: list[tuple[str, str]] = [("label", _label(e.label))] if e.label else []
    if e.kind == "raise":
        attrs += [("style", "dashed"), ("color", '"gray40"'), ("fontcolor", '"gray30"')]
    if e.highlighted:
        attrs += [("color", _quote(HIGHLIGHT)), ("fontcolor", _quote(HIGHLIGHT)), ("penwidth", "3")]
    if e.tooltip:
        attrs += [("tooltip", _quote(e.tooltip))]
    tail = f" {_attrs(attrs)}" if attrs else ""
    return f"  {_quote(e.source)} -> {_quote(e.target)}{tail};"


def to_dot(graph: Graph) -> str:
    """DOT text, one statement per line: nodes then edges, both in the model's (sorted) order."""
    lines = [
        f"digraph {_quote(graph.name)} {{",
        f"  graph [label={_quote(graph.title)}, labelloc=t, fontsize=18, fontname=Helvetica,"
        f" rankdir={graph.direction}];",
        "  node [fontname=Helvetica, fontsize=11];",
        "  edge [fontname=Helvetica, fontsize=9];",
    ]
    lines += [_node_line(graph, n) for n in graph.nodes]
    lines += [_edge_line(e) for e in graph.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def format_of(path: str | Path) -> Format:
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "gv":
        return "dot"
    for fmt in FORMATS:
        if suffix == fmt:
            return fmt
    raise DefinitionError(
        f"--out {path}: unknown picture format {suffix or '(none)'!r}; use .svg, .png or .dot"
    )


def dot_available() -> bool:
    return shutil.which("dot") is not None


def render_dot(dot_text: str, fmt: Format, out: str = "the picture") -> bytes:
    """DOT text laid out by Graphviz into SVG or PNG bytes (DOT itself passes through)."""
    if fmt == "dot":
        return dot_text.encode()
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing(out)
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}"],
            input=dot_text.encode(),
            capture_output=True,
            timeout=DOT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RunError(f"cannot write {out}: Graphviz took longer than {DOT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise RunError(f"cannot write {out}: dot failed: {reason[0] if reason else done.returncode}")
    return done.stdout


def render_graph(graph: Graph, fmt: Format) -> bytes:
    return render_dot(to_dot(graph), fmt)


def write(graph: Graph, path: str | Path) -> Format:
    """Write the picture in the format its suffix names; returns that format."""
    fmt = format_of(path)
    data = render_dot(to_dot(graph), fmt, str(path))
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise DefinitionError(f"--out {path}: cannot write: {exc.strerror}") from None
    return fmt
