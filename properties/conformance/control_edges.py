"""Control edges: the steps of a table's control flow a run walks, each with its guard valuation.

An edge is `(transition, outcome, next)`: a transition that calls the host, one outcome of
that call, and the transition (or terminal) that follows; it also carries the valuation of
the guards taken after the call (`Valuations`). Vector generation
(`turnbound.properties.conformance.vector_gen`) covers them; `trace_edge_keys` and
`vector_edges` read them off a finished run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from turnbound.properties.conformance.vectors import Vector
from turnbound.reference.expr import Expr, Lit, Logic, Not, refs, render
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value

EDGE_DEFINITION = (
    "(transition, outcome, next, valuation): a transition that calls the host, one outcome of that call "
    "from its finite domain, the transition taken next (or `end:TERMINAL`), and the truth of each atom "
    "reading a variable or parameter in the guards taken from there up to the next call "
    "(`TRANSITION(atom, not atom)`, joined by ` ; `), reachable at some parameter assignment of the "
    "profile's default range (edges into a state cut off at the step horizon excluded)"
)


def edge_key(transition: str, outcome: Outcome, after: str) -> str:
    return f"{transition} | {json.dumps(outcome.to_json(), sort_keys=True, separators=(',', ':'))} -> {after}"


class Valuations:
    """The atoms of each transition's guard that read a variable or parameter, compiled once."""

    def __init__(self, table: Table) -> None:
        self.atoms: dict[str, tuple[tuple[str, Compiled], ...]] = {}
        for t in table.transitions:
            found: dict[str, Compiled] = {}
            for atom in _atoms(t.guard):
                text = render(atom)
                if text not in found and any(r.kind in ("var", "param") for r in refs(atom)):
                    found[text] = compile_expr(atom)
            self.atoms[t.id] = tuple(found.items())

    def at(self, transition: str, env: Mapping[str, Value]) -> str:
        """`TRANSITION(atom, not atom, ...)`, or '' where its guard reads no variable or parameter."""
        atoms = self.atoms[transition]
        if not atoms:
            return ""
        return f"{transition}(" + ", ".join(text if fn(env) else f"not {text}" for text, fn in atoms) + ")"


def _atoms(node: Expr) -> Iterator[Expr]:
    """The atoms of a guard: what `and`, `or` and `not` combine."""
    if isinstance(node, Logic):
        for part in node.operands:
            yield from _atoms(part)
    elif isinstance(node, Not):
        yield from _atoms(node.operand)
    elif not isinstance(node, Lit):
        yield node


def given_clause(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    return " given " + " ; ".join(parts) if parts else ""


def trace_edge_keys(table: Table, trace: Trace) -> list[str]:
    """The control edges a finished reference trace walks through."""
    return _walked(table, trace.params, trace.path, [s.outcome for s in trace.steps], trace.terminal)


def vector_edges(table: Table, vector: Vector) -> list[str]:
    """The control edges a vector's expected run walks through."""
    e = vector.expected
    return _walked(table, vector.params, e.path, [s.outcome for s in e.steps], e.terminal)


def _walked(
    table: Table, params: Mapping[str, int], path: list[str], outcomes: list[Outcome], terminal: str
) -> list[str]:
    """The run stepped again on the machine, for the valuation after each call."""
    machine = Machine(table, params)
    valuations = Valuations(table)
    answers = iter(outcomes)
    state = machine.initial()
    before: list[State] = []  # the state before each transition of the path
    calls: list[tuple[int, Outcome]] = []
    for k, tid in enumerate(path):
        t = table.transition(tid)
        before.append(state)
        if t.op is None:
            state = machine.take_internal(state, t)
            continue
        outcome = next(answers)
        calls.append((k, outcome))
        if machine.violation(t, outcome) is not None:
            break
        state = machine.take_outcome(state, t, outcome)
    before.append(state)
    edges = []
    for k, outcome in calls:
        after = path[k + 1] if k + 1 < len(path) else f"end:{terminal}"
        parts = []
        for m in range(k + 1, len(path)):
            parts.append(valuations.at(path[m], machine.env(before[m])))
            if table.transition(path[m]).op is not None:
                break
        edges.append(edge_key(path[k], outcome, after) + given_clause(parts))
    return edges
