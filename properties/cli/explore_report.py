"""The report of `turnbound explore`: its JSON document and its human text.

One configuration prints its summary and each violation's replayed witness; a sweep
prints one row per configuration (up to MAX_ROWS), then each claim's tally over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table as RichTable
from turnbound.properties.cli.app import console
from turnbound.properties.cli.interpret import print_trace
from turnbound.properties.conformance.runner import fmt_call
from turnbound.properties.explore.explorer import ClaimResult, Summary, Violation, Witness, bound_sides
from turnbound.properties.explore.sweep import ClaimTally
from turnbound.properties.scheduler import fmt_values
from turnbound.reference.expr import Ref
from turnbound.reference.table import Table

MAX_ROWS = 64
"""Sweeps larger than this print aggregates instead of one row per configuration."""


def _axes(table: Table, configs: Sequence[dict[str, int]]) -> dict[str, list[int]]:
    """The values each parameter takes over the configurations."""
    return {p.name: sorted({c[p.name] for c in configs}) for p in table.parameters}


def _span(values: Sequence[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}"


# -- JSON ------------------------------------------------------------------------


def _tally_json(t: ClaimTally) -> dict[str, Any]:
    return {
        "name": t.name,
        "kind": t.kind,
        "expr": t.text,
        "expect": t.expect,
        "verdict": t.verdict,
        "holds": t.holds,
        "violated": t.violated,
        "unknown": t.unknown,
        "unexpected": t.unexpected,
        "tight": t.tight if t.tight_known else None,
    }


def exploration_json(
    table: Table,
    configs: Sequence[dict[str, int]],
    summaries: Sequence[Summary],
    tallies: Sequence[ClaimTally],
    files: dict[str, str],
    ok: bool,
) -> dict[str, Any]:
    return {
        "profile": table.name,
        "configurations": len(configs),
        "parameters": _axes(table, configs),
        "states": sum(s.states for s in summaries),
        "stored": summaries[0].stored if summaries else "atomic",
        "intermediate": sum(s.intermediate for s in summaries),
        "edges": sum(s.edges for s in summaries),
        "claims": [_tally_json(t) for t in tallies],
        "results": [s.to_json() for s in summaries],
        "files": files,
        "ok": ok,
    }


# -- the human report ----------------------------------------------------------------


def _verdict_text(c: ClaimResult) -> str:
    if c.verdict == "unknown":
        return "not decided (a limit was reached)"
    if c.expect == "violated":
        return (
            "refuted as expected" if c.verdict == "violated" else f"{c.verdict.upper()} (expected violated)"
        )
    if c.verdict == "holds":
        return "holds"
    if c.expect == "either":
        return f"{c.verdict} (allowed: the table declares a step horizon)"
    return f"{c.verdict.upper()} (expected holds)"


def _bound_cell(c: ClaimResult) -> str:
    """`3 = 3` tight, `2 < 3` slack, `3 > 2` broken (worst case, then the bound); words for
    bounds of another shape or whose right side reads variables."""
    if c.verdict == "unknown":
        return ""
    if c.lhs_max is None or c.rhs is None:
        if c.verdict != "holds" or c.tight is None:
            return {"violated": "broken"}.get(c.verdict, c.verdict)
        return "tight" if c.tight else "slack"
    sign = ">" if c.lhs_max > c.rhs else ("=" if c.lhs_max == c.rhs else "<")
    return f"{c.lhs_max} {sign} {c.rhs}"


def _tally_text(t: ClaimTally) -> str:
    n = t.configurations
    if t.unknown == n:
        return f"not decided in {n}/{n} (a limit was reached)"
    if t.expect == "violated":
        text = f"refuted as expected in {t.violated}/{n}"
        return text if t.violated == n else text + f"; HOLDS in {t.holds}/{n}"
    if t.violated == 0 and t.unknown == 0:
        return f"holds in {n}/{n}"
    text = f"violated in {t.violated}/{n}" + (f", unknown in {t.unknown}/{n}" if t.unknown else "")
    return text if t.expect == "either" else text.upper() + " (expected holds)"


def _print_header(table: Table, configs: Sequence[dict[str, int]], summaries: Sequence[Summary]) -> None:
    if len(configs) == 1:
        params = ", ".join(f"{k}={v}" for k, v in configs[0].items())
        console.print(f"{table.name} at {params}", markup=False)
        return
    axes = ", ".join(f"{k} {_span(v)}" for k, v in _axes(table, configs).items())
    states = sum(s.states for s in summaries)
    edges = sum(s.edges for s in summaries)
    console.print(f"{table.name}: {len(configs)} configurations ({axes})", markup=False)
    counted = summaries[0].counted if summaries else "states"
    console.print(f"{states:,} {counted} and {edges:,} edges in all", markup=False)


def _print_single(s: Summary) -> None:
    terminals = ", ".join(f"{k} {v}" for k, v in s.terminals.items())
    console.print(
        f"{s.states:,} {s.counted}, {s.edges:,} edges; terminal states: {terminals or 'none'}", markup=False
    )
    worst = ", ".join(f"{k}={v}" for k, v in s.max.items())
    console.print(f"worst case at a terminal: {worst or 'no terminal reached'}", markup=False)
    total = len(s.covered) + len(s.uncovered)
    line = f"transitions: {len(s.covered)} of {total} taken"
    console.print(line + (f"; never taken: {', '.join(s.uncovered)}" if s.uncovered else ""), markup=False)
    console.print()
    grid = RichTable("claim", "kind", "verdict", "worst case", "claim text", box=None, pad_edge=False)
    for c in s.claims:
        grid.add_row(c.name, c.kind, _verdict_text(c), _bound_cell(c) if c.kind == "bound" else "", c.text)
    console.print(grid)


def _two_lines(name: str) -> str:
    """A long camelCase or snake_case header split once, near its middle, so columns stay narrow."""
    if len(name) <= 10:
        return name
    cuts = [i for i in range(1, len(name)) if name[i].isupper() or name[i - 1] == "_"]
    if not cuts:
        return name
    cut = min(cuts, key=lambda i: abs(i - len(name) / 2))
    return name[:cut] + "\n" + name[cut:]


def _bounded_counters(table: Table) -> set[str]:
    """Counters that are the left side of some bound (their worst case shows in its column)."""
    out = set()
    for b in table.bounds:
        sides = bound_sides(b.expr)
        if sides is not None and isinstance(sides[0], Ref):
            out.add(sides[0].name)
    return out


def _print_rows(table: Table, summaries: Sequence[Summary]) -> None:
    bounds = [b.name for b in table.bounds]
    names = [p.name for p in table.parameters]
    counters = [c for c in table.counters if c not in _bounded_counters(table)]
    headers = [*names, "states", "edges", *counters, *bounds, "claims"]
    grid = RichTable(*(_two_lines(h) for h in headers), box=None, pad_edge=False)
    for s in summaries:
        unexpected = [c.name for c in s.claims if not c.as_expected]
        grid.add_row(
            *(str(s.params[n]) for n in names),
            f"{s.states:,}",
            f"{s.edges:,}",
            *(str(s.max.get(c, "-")) for c in counters),
            *(_bound_cell(s.claim(b)) for b in bounds),
            "as expected" if not unexpected else "UNEXPECTED: " + ", ".join(unexpected),
        )
    console.print(grid)
    console.print(
        "bound columns: the worst case of the left side over terminal states, then the right side "
        "(= tight, < slack, > broken); other counters: their worst case",
        markup=False,
    )
    if summaries:
        console.print(f"states column: {summaries[0].counted}", markup=False)


def _print_tallies(summaries: Sequence[Summary], tallies: Sequence[ClaimTally]) -> None:
    if len(summaries) > MAX_ROWS:
        lo = min(s.states for s in summaries)
        hi = max(s.states for s in summaries)
        console.print(
            f"{summaries[0].counted} per configuration: {lo:,}..{hi:,} (rows omitted; --json has them)",
            markup=False,
        )
    grid = RichTable("claim", "kind", "verdict", "tight", "claim text", box=None, pad_edge=False)
    for t in tallies:
        tight = f"{t.tight}/{t.tight_known}" if t.tight_known else ""
        grid.add_row(t.name, t.kind, _tally_text(t), tight, t.text)
    console.print(grid)


SHOWN_STEPS = 12
"""A witness longer than twice this shows its first and last SHOWN_STEPS host calls."""


def count_text(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _elide(items: list[str], keep: int) -> list[str]:
    if len(items) <= keep + 1:
        return items
    head, tail = items[: keep // 2], items[-(keep // 2) :]
    return [*head, f"... {len(items) - len(head) - len(tail)} more ...", *tail]


def print_witness(w: Witness) -> None:
    """A witness as a replayable trace (`print_trace`), long ones with their middle elided."""
    trace = w.trace
    header = f"witness: {count_text(len(trace.steps), 'host call')}, {count_text(len(w.path), 'transition')}"
    if len(trace.steps) <= 2 * SHOWN_STEPS:
        print_trace(header, trace, w.line)  # prints the parameters after the header
        return
    console.print(f"{header} ({fmt_values(dict(trace.params))})", markup=False)
    grid = RichTable("#", "transition", "call", *trace.counters, box=None, pad_edge=False)
    n = len(trace.steps)
    for i, step in enumerate(trace.steps, 1):
        if i == SHOWN_STEPS + 1:
            grid.add_row("...", f"{n - 2 * SHOWN_STEPS} host calls not shown", "")
        if SHOWN_STEPS < i <= n - SHOWN_STEPS:
            continue
        call = fmt_call(step.op, step.args, step.outcome)
        grid.add_row(str(i), step.transition, call, *(str(c) for c in step.counters.values()))
    console.print(grid)
    console.print(f"terminal: {trace.terminal}", markup=False)
    console.print(w.line, markup=False)


def _print_violation(table: Table, v: Violation, expected: bool, params: dict[str, int] | None) -> None:
    where = "" if params is None else " at " + ", ".join(f"{k}={val}" for k, val in params.items())
    status = "refuted as expected" if expected else "VIOLATED"
    console.print()
    console.print(f"{v.claim} ({v.kind}) {status}{where}: {v.message}", markup=False)
    w = v.witness
    print_witness(w)
    path = [s.transition for s in w.path]
    if w.loop_start is not None:
        path.insert(w.loop_start, "[loop:]")
    console.print("path: " + " ".join(_elide(path, SHOWN_STEPS * 2)), markup=False)
    if v.replay_problem is not None:
        console.print(f"WITNESS DOES NOT REPLAY on the interpreter: {v.replay_problem}", markup=False)
    if v.exits:
        console.print(f"distinct probe lines that break {v.claim} (shortest witness each):", markup=False)
        for e in v.exits:
            case = f"   [case {e.case}]" if e.case else ""
            console.print(
                f"  {count_text(len(e.witness.path), 'transition'):>15}  {e.line}{case}", markup=False
            )
            if e.replay_problem is not None:
                console.print(
                    f"  WITNESS DOES NOT REPLAY on the interpreter: {e.replay_problem}", markup=False
                )


def print_exploration(
    table: Table,
    configs: Sequence[dict[str, int]],
    summaries: Sequence[Summary],
    tallies: Sequence[ClaimTally],
    files: dict[str, str],
    ok: bool,
) -> None:
    _print_header(table, configs, summaries)
    if len(summaries) == 1:
        s = summaries[0]
        _print_single(s)
        for v in s.violations:
            _print_violation(table, v, s.claim(v.claim).as_expected, None)
    else:
        console.print()
        if len(summaries) <= MAX_ROWS:
            _print_rows(table, summaries)
            console.print()
        _print_tallies(summaries, tallies)
        for t in tallies:
            if t.witness is not None:
                _print_violation(table, t.witness, t.unexpected == 0, t.witness_params)
    for kind, path in files.items():
        console.print(f"wrote {kind.upper() if kind == 'dot' else 'GraphML'}: {path}", markup=False)
    console.print()
    bad = [t.name for t in tallies if t.unexpected > t.unknown]
    unreplayed = sorted(
        {
            v.claim
            for s in summaries
            for v in s.violations
            if v.replay_problem is not None or any(e.replay_problem for e in v.exits)
        }
    )
    incomplete = sum(1 for s in summaries if not s.complete)
    if ok:
        refuted = sum(1 for t in tallies if t.expect == "violated")
        console.print(
            f"OK: {len(tallies)} claims as expected in {count_text(len(summaries), 'configuration')}"
            + (f" ({refuted} refuted as expected)" if refuted else ""),
            markup=False,
        )
        return
    problems = []
    if bad:
        problems.append("verdict differs from expect: " + ", ".join(bad))
    if unreplayed:
        problems.append("witness does not replay: " + ", ".join(unreplayed))
    limits = sorted({s.limit or "" for s in summaries if not s.complete})
    undecided = (
        f"not decided: limit {', '.join(limits)} reached in {count_text(incomplete, 'configuration')}"
        if incomplete
        else ""
    )
    if problems:
        console.print("FAIL: " + "; ".join([*problems, *([undecided] if undecided else [])]), markup=False)
    else:
        console.print(undecided[:1].upper() + undecided[1:], markup=False)
