"""Parameter sweeps: the explorer over the cartesian product of parameter ranges.

A sweep keeps summaries only (never a graph), so memory stays flat over thousands of
configurations; it runs on a pool of worker processes and returns the summaries in
configuration order whatever order they finish in, so its output is deterministic.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import product

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from turnbound.properties.explore.explorer import DEFAULT_MAX_STATES, ClaimResult, Summary, Violation, explore
from turnbound.properties.workers import fork_context, ordered_map
from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import MAX_SWEEP
from turnbound.reference.machine import check_params
from turnbound.reference.table import Table

DEFAULT_JOBS = 2


def default_ranges(table: Table) -> dict[str, list[int]]:
    """Each parameter's declared `range` (the table's default explore range)."""
    return {p.name: list(range(p.range[0], p.range[1] + 1)) for p in table.parameters}


def configurations(table: Table, ranges: Mapping[str, Sequence[int]] | None = None) -> list[dict[str, int]]:
    """The cartesian product in the table's parameter order, each parameter's values ascending.

    `ranges=None` sweeps every parameter's default range; otherwise a parameter not
    named in `ranges` stays at its default value.
    """
    chosen = default_ranges(table) if ranges is None else {k: list(v) for k, v in ranges.items()}
    names = [p.name for p in table.parameters]
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        raise DefinitionError(
            f"{table.name}: unknown parameter {unknown[0]!r}; parameters: {', '.join(names) or 'none'}"
        )
    axes: list[list[int]] = []
    for p in table.parameters:
        values = sorted(set(chosen.get(p.name, [p.default])))
        if not values:
            raise DefinitionError(f"{table.name}: parameter {p.name}: the range is empty")
        for v in (values[0], values[-1]):
            check_params(table, {p.name: v})
        axes.append(values)
    size = 1
    for axis in axes:
        size *= len(axis)
    if size > MAX_SWEEP:
        raise DefinitionError(
            f"{table.name}: the parameter ranges make {size} configurations; the limit is {MAX_SWEEP} "
            "(narrow a --param range)"
        )
    return [dict(zip(names, combo, strict=True)) for combo in product(*axes)]


# -- workers --------------------------------------------------------------------

_WORKER: dict[str, object] = {}


def _init_worker(table: Table, max_states: int, all_states: bool) -> None:
    _WORKER["table"] = table
    _WORKER["max_states"] = max_states
    _WORKER["all_states"] = all_states


def _explore_one(params: dict[str, int]) -> Summary:
    table = _WORKER["table"]
    max_states = _WORKER["max_states"]
    all_states = _WORKER["all_states"]
    assert isinstance(table, Table) and isinstance(max_states, int) and isinstance(all_states, bool)
    return explore(table, params, max_states=max_states, all_states=all_states).summary


@contextmanager
def _progress(total: int, label: str, show: bool) -> Iterator[Callable[[], None]]:
    if not show:
        yield lambda: None
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("configurations"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


def sweep(
    table: Table,
    ranges: Mapping[str, Sequence[int]] | None = None,
    *,
    jobs: int = DEFAULT_JOBS,
    max_states: int = DEFAULT_MAX_STATES,
    progress: bool | None = None,
    all_states: bool = False,
) -> list[Summary]:
    """Explore every configuration; summaries in configuration order.

    `progress=None` shows a progress bar on stderr only when stderr is a terminal and
    there is more than one configuration; `all_states` as for `explore`.
    """
    return explore_all(
        table,
        configurations(table, ranges),
        jobs=jobs,
        max_states=max_states,
        progress=progress,
        all_states=all_states,
    )


def explore_all(
    table: Table,
    configs: Sequence[Mapping[str, int]],
    *,
    jobs: int = DEFAULT_JOBS,
    max_states: int = DEFAULT_MAX_STATES,
    progress: bool | None = None,
    all_states: bool = False,
) -> list[Summary]:
    """Explore the given configurations; summaries in the same order."""
    todo = [dict(c) for c in configs]
    show = (sys.stderr.isatty() and len(todo) > 1) if progress is None else progress
    context = fork_context()
    workers = max(1, min(jobs, len(todo)))
    results: list[Summary] = []
    with _progress(len(todo), f"explore {table.name}", show) as advance:
        if workers == 1 or context is None:
            for params in todo:
                results.append(explore(table, params, max_states=max_states, all_states=all_states).summary)
                advance()
            return results
        chunk = max(1, len(todo) // (workers * 16))
        init = (table, max_states, all_states)
        for summary in ordered_map(_explore_one, todo, workers, _init_worker, init, chunk):
            results.append(summary)
            advance()
    return results


# -- what a sweep shows, claim by claim --------------------------------------------


@dataclass
class ClaimTally:
    """One claim over a sweep: in how many configurations each verdict, and the best witness."""

    name: str
    kind: str
    text: str
    expect: str
    holds: int = 0
    violated: int = 0
    unknown: int = 0
    unexpected: int = 0
    tight: int = 0
    tight_known: int = 0
    witness: Violation | None = None
    witness_params: dict[str, int] = field(default_factory=dict)

    @property
    def configurations(self) -> int:
        return self.holds + self.violated + self.unknown

    def add(self, result: ClaimResult, summary: Summary) -> None:
        setattr(self, result.verdict, getattr(self, result.verdict) + 1)
        self.unexpected += 0 if result.as_expected else 1
        if result.tight is not None and result.verdict == "holds":
            self.tight_known += 1
            self.tight += 1 if result.tight else 0
        v = summary.violation(result.name)
        if v is not None and (self.witness is None or len(v.witness.path) < len(self.witness.witness.path)):
            self.witness = v
            self.witness_params = dict(summary.params)

    @property
    def verdict(self) -> str:
        """`holds`, `violated`, or `mixed` when the configurations disagree."""
        if self.configurations == self.holds:
            return "holds"
        if self.configurations == self.violated:
            return "violated"
        return "mixed" if not self.unknown else "unknown"


def tally(summaries: Sequence[Summary]) -> list[ClaimTally]:
    """Per claim (in the table's order): verdict counts, tightness, the shortest witness."""
    out: dict[str, ClaimTally] = {}
    for s in summaries:
        for c in s.claims:
            t = out.get(c.name)
            if t is None:
                t = out[c.name] = ClaimTally(c.name, c.kind, c.text, c.expect)
            t.add(c, s)
    return list(out.values())


@dataclass(frozen=True)
class Timing:
    configurations: int
    states: int
    edges: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0


def timed_sweep(
    table: Table,
    ranges: Mapping[str, Sequence[int]] | None = None,
    *,
    jobs: int = DEFAULT_JOBS,
    max_states: int = DEFAULT_MAX_STATES,
    progress: bool | None = None,
    all_states: bool = False,
) -> tuple[list[Summary], Timing]:
    """A sweep with its wall-clock time (for reports and the benchmark, never for asserts)."""
    started = time.perf_counter()
    summaries = sweep(
        table, ranges, jobs=jobs, max_states=max_states, progress=progress, all_states=all_states
    )
    seconds = time.perf_counter() - started
    states = sum(s.states for s in summaries)
    edges = sum(s.edges for s in summaries)
    return summaries, Timing(len(summaries), states, edges, seconds)
