"""The knob's curve, point by point: the engines' exact maxima, each replayed on the real code.

For a knob value N, the explorer finds every run of the table; the run with the most model
requests (and the one with the most tool executions) is a host script. Replaying that script
on the installed framework, through its adapter, must give the same counts and the same exit:
the proved formula is then drawn over points measured from the real code, and a framework
that drifts from its table shows up as a point off the curve. The points are written as JSON
(`turnbound knobs PROFILE --adapter ... --points FILE`, run by each framework's nox session)
and read back by the comparison notebook, which recomputes the engines' side itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from turnbound.properties.explore.explorer import Exploration, explore
from turnbound.properties.scheduler import Scheduler, drive
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import refs
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.jsonfile import read_json
from turnbound.reference.table import Table
from turnbound.reference.types import Value

N_VALUES = tuple(range(9))
"""The knob values of a curve: past every bundled default's interesting edge (0, 1, small N)."""
FORMAT = 1
FORMULA_CAP = 1000
"""Counts past this are drawn as unbounded."""


@dataclass(frozen=True)
class Point:
    """One counter's largest value at one knob value: by the engines, and by the real code."""

    n: int
    counter: str
    engines: int
    exit: str
    """The terminal of the engines' longest run (the one replayed)."""
    formula: int | None
    """The bound's right-hand side at this N (None: the table states no bound on the counter)."""
    real: int | None = None
    real_exit: str | None = None

    @property
    def agrees(self) -> bool:
        return self.real == self.engines and self.real_exit == self.exit


def _formula(table: Table, counter: str) -> Callable[[Mapping[str, int]], int | None] | None:
    """The largest value of `counter` that the table's bound on it allows, as a function of the
    parameters (None where the bound allows any value, or up to FORMULA_CAP).

    The bound is `<counter>_bound` if the table has it, else the first bound that reads only the
    parameters and `counter`; any shape (`k * c <= f(N)`, a guard on `limited`) is read the same
    way, by asking the bound itself, so no bound is rewritten by hand.
    """
    params = {p.name for p in table.parameters}
    named = [b for b in table.bounds if b.name == f"{counter}_bound"]
    others = [b for b in table.bounds if b.expect == "holds"]
    for b in named + others:
        names = {r.name for r in refs(b.expr)}
        if counter in names and names <= params | {counter}:
            holds = compile_expr(b.expr)

            def largest(values: Mapping[str, int], holds: Compiled = holds) -> int | None:
                env: dict[str, Value] = dict(values)
                for c in range(FORMULA_CAP + 1):
                    env[counter] = c
                    if not holds(env):
                        return c - 1 if c > 0 else None
                return None

            return largest
    return None


def _longest(exploration: Exploration, counter: str) -> int | None:
    """A terminal node where `counter` is largest: of those, the one deepest in the search
    (the run that did the most on the way, e.g. its tools ran before the cap), first in BFS order."""
    best: tuple[int, int, int] | None = None
    for node, data in exploration.graph.nodes(data=True):
        value = data["values"].get(counter)
        if data["terminal"] and isinstance(value, int):
            key = (value, data["depth"], -node)
            if best is None or key > best:
                best = key
    return None if best is None else -best[2]


def curve(
    table: Table,
    counters: Sequence[str],
    scheduler: Scheduler | None = None,
    ns: Sequence[int] = N_VALUES,
) -> list[Point]:
    """Each counter's maximum at each N (the knob is the table's first parameter), replayed on
    `scheduler` when one is given."""
    knob = table.parameters[0].name
    points = []
    for n in ns:
        exploration = explore(table, {knob: n}, all_states=True)  # its graph: every state
        if not exploration.summary.complete:
            raise DefinitionError(f"{table.name}: {knob}={n}: the search did not finish, no exact maximum")
        params = exploration.params
        for counter in counters:
            node = _longest(exploration, counter)
            if node is None:
                raise DefinitionError(f"{table.name}: no terminal state has a counter {counter!r}")
            witness = exploration.witness(node)
            engines = int(witness.trace.variables.get(counter, witness.trace.counters.get(counter, 0)))
            rhs = _formula(table, counter)
            point = Point(n, counter, engines, witness.trace.terminal, None if rhs is None else rhs(params))
            if scheduler is not None:
                host = ScriptHost(Script({op: list(q) for op, q in witness.script.items()}))
                observed = drive(scheduler, params, host, max_calls=len(witness.path) + 8)
                end = observed.end
                point = Point(
                    **{
                        **asdict(point),
                        "real": None if end is None else end.counters.get(counter),
                        "real_exit": end.terminal if end is not None else f"no end: {observed.fault}",
                    }
                )
            points.append(point)
    return points


def write_points(path: Path, table: Table, implementation: str, points: Sequence[Point]) -> None:
    doc = {
        "format": FORMAT,
        "profile": table.name,
        "title": table.title,
        "knob": table.parameters[0].name,
        "implementation": implementation,
        "points": [asdict(p) for p in points],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_points(path: Path) -> tuple[str, list[Point]]:
    """A points file written by `write_points`: (profile, points); one clear error if it is not one."""
    doc: Any = read_json(path, "knob points file")
    try:
        if doc["format"] != FORMAT:
            raise DefinitionError(f"{path}: format {doc['format']!r}, expected {FORMAT}")
        return str(doc["profile"]), [Point(**p) for p in doc["points"]]
    except (KeyError, TypeError) as exc:
        raise DefinitionError(f"{path}: not a knob points file ({exc})") from None
