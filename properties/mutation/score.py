"""Mutation testing: does some engine tell each mutant of a table from the table itself?

`mutate(table)` makes every mutant (`turnbound.properties.mutation.mutants`) and runs the
engines on it in order (`engines.ENGINES`: loader, bundled cases, explorer,
conformance vectors, the Hypothesis machine as a conformance check against the
original, the Hypothesis machine on the mutant's claims, the prover), stopping at the
first that kills it. A mutant no engine kills is *equivalent* if its reachable graphs
equal the original's (same states and labelled edges up to numbering, the table's
ghost variables projected out: nothing could tell them apart) over the mutation range
and then over the rest of the table's own explore ranges, otherwise it *survived*: a
fault the table's claims, cases and vectors let through. Score = killed / (mutants -
equivalent). The mutation range (`baseline.mutation_ranges`) keeps the search
for kills fast; the second look keeps `equivalent` from resting on it.

Two scores tell what kind of check kills a mutant. The *claims score* counts the mutants
killed by an engine that judges the mutant on its own: the loader's rules, and the
explorer, the Hypothesis machine and the prover judging the table's own claims (which
the mutant carries unchanged). The *differential score* counts the mutants killed by
comparing the mutant with the original: the bundled cases, the conformance vectors and
the Hypothesis conformance run. A table whose claims score is below its differential
score has behaviour its claims do not pin: a mutant the original's traces tell apart but
the claims accept. The engines of each family run until one of that family kills
(the loader, which decides whether the mutant is a table at all, counts for both);
equivalent mutants are left out of both.

Two passes on a pool of worker processes, results in mutant order whatever order
they finish in: first the cheap engines on every mutant, then Hypothesis and the
prover on what is left. `every_engine=True` runs each chosen engine on every mutant
the loader accepts, for the cross-checks between engines.

Cross-check with the prover: every mutant the explorer kills is
also killed by the prover, except for four classes of explorer verdict the prover
does not decide (`tests/test_mutation_crosscheck_slow.py` asserts this, kill by kill,
for deeptutor-scheduler and the three dsh tables):

- termination: a mutant whose runs may never end (a lasso in the explorer's graph,
  e.g. `reject_after_recovery` going back to `loop`) breaks no invariant, bound or
  trace property, and those are the claims the prover proves;
- a claim expected to be violated that holds at one configuration: the explorer
  requires such a claim (the naive `rounds <= explorationBudget + settlementBudget`)
  to be refuted at every configuration it explores, the prover decides it once for
  all parameter values together, so a mutant that ends every turn after its first
  exploration round (`explore_round` going to a terminal) still has a refutation
  elsewhere (budgets 0, 0 and the forced finish's extra round) and the prover
  rightly reports the claim refuted, as expected;
- the explorer's state limit: a mutant whose counter grows without bound is killed
  when the graph outgrows the limit; the prover sees an infinite state space only
  through the claims it breaks, so it kills it when (and only when) it breaks one;
- a claim broken only on runs that never end: the explorer's witness stops at its step
  horizon, the prover's witnesses are completed runs it replays on the interpreter, so
  it reports such a claim unknown (dsh-turn-unguarded's `beyond_scenario` sent back to
  `loop`: once past the scenario, every step loops there again).

Why this module is long: about fifty lines are this docstring (the two scores and the
cross-check with the prover, which the tests cite), and the rest is one pipeline read top
to bottom: the report, judging one mutant, the worker pool, the two passes.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from turnbound.properties.mutation.baseline import DEFAULT_FUZZ_SETTINGS, DEFAULT_PROVE_TIMEOUT, Baseline
from turnbound.properties.mutation.engines import (
    ENGINES,
    Engine,
    Kill,
    check_cases,
    check_conform,
    check_explore,
    check_fuzz,
    check_loader,
    check_prove,
    check_vectors,
    confirm_equivalence,
)
from turnbound.properties.mutation.mutants import OPERATORS, Document, Mutant, mutants
from turnbound.properties.workers import fork_context, ordered_map
from turnbound.reference.errors import DefinitionError
from turnbound.reference.loader import resolved_document
from turnbound.reference.table import Table

Status = Literal["killed", "survived", "equivalent"]
Family = Literal["claims", "differential"]

FAMILIES: dict[Family, frozenset[Engine]] = {
    "claims": frozenset({"loader", "explore", "fuzz", "prove"}),
    "differential": frozenset({"loader", "cases", "vectors", "conform"}),
}
"""Which engines each score counts: judging the mutant's own claims, or comparing it with the original."""

FIRST_PASS: tuple[Engine, ...] = ("loader", "cases", "explore", "vectors")
DEFAULT_JOBS = 2


@dataclass(frozen=True)
class MutantResult:
    id: str
    operator: str
    description: str
    status: Status
    kills: tuple[Kill, ...]
    note: str | None
    """For a mutant equivalent over the mutation range but not over the table's whole range:
    where it differs (it is then a survivor unless a later engine kills it)."""
    """Every engine that killed it, in engine order (only the first, unless every engine ran)."""
    ran: tuple[Engine, ...]
    seconds: Mapping[str, float] = field(default_factory=dict, compare=False)
    """Wall time per engine (not in JSON: it varies)."""

    def killed_by(self, engine: Engine) -> Kill | None:
        return next((k for k in self.kills if k.engine == engine), None)

    def first_kill(self, family: Family) -> Kill | None:
        """The first kill by an engine of `family` (None: that family let it through)."""
        return next((k for k in self.kills if k.engine in FAMILIES[family]), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "operator": self.operator,
            "description": self.description,
            "status": self.status,
            "killed_by": self.kills[0].engine if self.kills else None,
            "killed_by_claims": _engine_of(self.first_kill("claims")),
            "killed_by_differential": _engine_of(self.first_kill("differential")),
            "kills": [k.to_json() for k in self.kills],
            "note": self.note,
            "engines_run": list(self.ran),
        }


@dataclass(frozen=True)
class MutationReport:
    profile: str
    ranges: dict[str, list[int]]
    engines: tuple[Engine, ...]
    operators: tuple[str, ...]
    every_engine: bool
    results: tuple[MutantResult, ...]
    seconds: float = field(default=0.0, compare=False)

    def count(self, status: Status) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def killed(self) -> int:
        return self.count("killed")

    @property
    def survived(self) -> int:
        return self.count("survived")

    @property
    def equivalent(self) -> int:
        return self.count("equivalent")

    @property
    def score(self) -> float:
        judged = len(self.results) - self.equivalent
        return self.killed / judged if judged else 1.0

    def measured(self, family: Family) -> bool:
        """Whether an engine of `family` other than the loader ran (else its score is not measured)."""
        return any(e in FAMILIES[family] and e != "loader" for e in self.engines)

    def killed_in(self, family: Family) -> int:
        return sum(r.first_kill(family) is not None for r in self.results if r.status != "equivalent")

    def family_score(self, family: Family) -> float | None:
        """Killed by `family` / non-equivalent mutants; None if no engine of the family ran."""
        if not self.measured(family):
            return None
        judged = len(self.results) - self.equivalent
        return self.killed_in(family) / judged if judged else 1.0

    @property
    def claims_score(self) -> float | None:
        return self.family_score("claims")

    @property
    def differential_score(self) -> float | None:
        return self.family_score("differential")

    def escapes(self, family: Family) -> list[MutantResult]:
        """Non-equivalent mutants that `family` let through (killed, if at all, only by the other)."""
        return [r for r in self.results if r.status != "equivalent" and r.first_kill(family) is None]

    @property
    def ok(self) -> bool:
        return self.survived == 0

    def by_operator(self) -> dict[str, dict[Status, int]]:
        out: dict[str, dict[Status, int]] = {}
        for r in self.results:
            row = out.setdefault(r.operator, {"killed": 0, "survived": 0, "equivalent": 0})
            row[r.status] += 1
        return out

    def by_engine(self) -> dict[Engine, int]:
        """Mutants each engine killed (the first kill only, unless every engine ran)."""
        counts: Counter[Engine] = Counter()
        for r in self.results:
            counts.update(k.engine for k in (r.kills if self.every_engine else r.kills[:1]))
        return {e: counts[e] for e in self.engines}

    def engine_seconds(self) -> dict[Engine, float]:
        return {e: sum(r.seconds.get(e, 0.0) for r in self.results) for e in self.engines}

    def to_json(self) -> dict[str, Any]:
        """Byte-stable: no timings."""
        return {
            "profile": self.profile,
            "ranges": self.ranges,
            "engines": list(self.engines),
            "operators": list(self.operators),
            "every_engine": self.every_engine,
            "mutants": len(self.results),
            "killed": self.killed,
            "survived": self.survived,
            "equivalent": self.equivalent,
            "score": round(self.score, 6),
            "claims_killed": self.killed_in("claims") if self.measured("claims") else None,
            "claims_score": _rounded(self.claims_score),
            "differential_killed": self.killed_in("differential") if self.measured("differential") else None,
            "differential_score": _rounded(self.differential_score),
            "by_operator": self.by_operator(),
            "by_engine": self.by_engine(),
            "results": [r.to_json() for r in self.results],
        }


def _engine_of(kill: Kill | None) -> Engine | None:
    return kill.engine if kill is not None else None


def _rounded(score: float | None) -> float | None:
    return None if score is None else round(score, 6)


# -- one mutant --------------------------------------------------------------------


@dataclass
class _Partial:
    kills: list[Kill] = field(default_factory=list)
    ran: list[Engine] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    equivalent: bool | None = None
    """The explorer's verdict on the graphs (None: not explored)."""
    note: str | None = None
    difference: str | None = None
    """Where a host first tells the mutant from the original: the evidence a survivor shows."""


def _judge(base: Baseline, mutant: Mutant, engines: Sequence[Engine], every: bool, p: _Partial) -> _Partial:
    """Run `engines` (in ENGINES order) on one mutant, adding to what an earlier pass found.

    The loader runs in the first pass; a later pass loads the mutant again (it was accepted).
    """
    started = time.perf_counter()
    loaded = check_loader(base, mutant)
    if "loader" in engines:
        p.seconds["loader"] = time.perf_counter() - started
        p.ran.append("loader")
    if isinstance(loaded, Kill):
        p.kills.append(loaded)
        return p
    if "loader" not in engines and p.equivalent and not p.kills:
        started = time.perf_counter()
        verdict = confirm_equivalence(base, loaded)
        p.seconds["explore"] = p.seconds.get("explore", 0.0) + time.perf_counter() - started
        p.equivalent = verdict is None
        if isinstance(verdict, Kill):
            p.kills.append(verdict)
        else:
            p.note = verdict
        if p.equivalent and not every:
            return p
    for engine in ENGINES:
        if engine == "loader" or engine not in engines or (not every and _decided(p, engine)):
            continue
        started = time.perf_counter()
        kill = _run_engine(base, engine, loaded, p)
        p.seconds[engine] = time.perf_counter() - started
        p.ran.append(engine)
        if kill is not None:
            p.kills.append(kill)
    return p


def _decided(p: _Partial, engine: Engine) -> bool:
    """Whether an engine of `engine`'s family already killed the mutant (each score needs one kill)."""
    family: Family = "claims" if engine in FAMILIES["claims"] else "differential"
    return any(k.engine in FAMILIES[family] for k in p.kills)


def _run_engine(base: Baseline, engine: Engine, table: Table, p: _Partial) -> Kill | None:
    if engine == "cases":
        return check_cases(base, table)
    if engine == "explore":
        explored = check_explore(base, table)
        p.equivalent = explored.equivalent
        p.difference = explored.difference
        return explored.kill
    if engine == "vectors":
        return check_vectors(base, table)
    if engine == "conform":
        return check_conform(base, table)
    if engine == "fuzz":
        return check_fuzz(base, table)
    return check_prove(base, table)


# -- the pool ----------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(base: Baseline, found: list[Mutant], engines: Sequence[Engine], every: bool) -> None:
    _WORKER.update(base=base, mutants=found, engines=engines, every=every)


def _work(job: tuple[int, _Partial]) -> _Partial:
    i, partial = job
    return _judge(_WORKER["base"], _WORKER["mutants"][i], _WORKER["engines"], _WORKER["every"], partial)


def _run_pass(
    base: Baseline,
    found: list[Mutant],
    jobs: list[tuple[int, _Partial]],
    engines: Sequence[Engine],
    every: bool,
    workers: int,
    advance: Callable[[], None],
) -> list[_Partial]:
    context = fork_context()
    if workers <= 1 or len(jobs) <= 1 or context is None:
        _init_worker(base, found, engines, every)
        out = []
        for job in jobs:
            out.append(_work(job))
            advance()
        return out
    out = []
    for partial in ordered_map(_work, jobs, workers, _init_worker, (base, found, engines, every)):
        out.append(partial)
        advance()
    return out


@contextmanager
def _progress(total: int, show: bool) -> Iterator[Callable[[str, int], Callable[[], None]]]:
    if not show:
        yield lambda label, n: lambda: None
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("mutants"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:

        def task(label: str, n: int) -> Callable[[], None]:
            t = bar.add_task(label, total=n)
            return lambda: bar.advance(t)

        yield task


def read_document(table: Table) -> Document:
    """The table's parsed TOML with any `extends` resolved: the document mutants are made from."""
    return resolved_document(Path(table.source))


def mutate(
    table: Table,
    *,
    document: Document | None = None,
    operators: Sequence[str] | None = None,
    only: Sequence[str] | None = None,
    engines: Sequence[Engine] = ENGINES,
    ranges: Mapping[str, list[int]] | None = None,
    every_engine: bool = False,
    fuzz_settings: str = DEFAULT_FUZZ_SETTINGS,
    fuzz_seed: int = 0,
    fuzz_shrink: bool = True,
    prove_timeout: float = DEFAULT_PROVE_TIMEOUT,
    jobs: int = DEFAULT_JOBS,
    progress: bool | None = None,
) -> MutationReport:
    """Make every mutant of `table` and judge it; `only` keeps the mutants with these ids."""
    started = time.perf_counter()
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        raise DefinitionError(f"unknown engines {unknown}; engines: {', '.join(ENGINES)}")
    chosen = tuple(e for e in ENGINES if e in engines or e == "loader")
    doc = read_document(table) if document is None else document
    found = mutants(table, doc, list(operators) if operators else None)
    if only is not None:
        missing = sorted(set(only) - {m.id for m in found})
        if missing:
            raise DefinitionError(f"{table.name}: no mutant {missing[0]!r}")
        found = [m for m in found if m.id in set(only)]
    base = Baseline.of(table, doc, ranges, vectors="vectors" in chosen)
    base.fuzz_settings, base.fuzz_seed, base.fuzz_shrink = fuzz_settings, fuzz_seed, fuzz_shrink
    base.prove_timeout = prove_timeout
    show = (sys.stderr.isatty() and len(found) > 1) if progress is None else progress
    workers = max(1, jobs)
    with _progress(len(found), show) as task:
        first = [e for e in chosen if e in FIRST_PASS]
        partials = _run_pass(
            base,
            found,
            [(i, _Partial()) for i in range(len(found))],
            first,
            every_engine,
            workers,
            task("cheap engines", len(found)),
        )
        later = [e for e in chosen if e not in FIRST_PASS]
        todo = [i for i, p in enumerate(partials) if _needs_more(p, every_engine, later)]
        todo = [i for i in todo if later or partials[i].equivalent]
        if todo:
            if any(partials[i].equivalent for i in todo):
                base.beyond_the_range()  # once, before the workers fork
            if "prove" in later:
                base.proved_as_expected()  # once, before the workers fork
            done = _run_pass(
                base,
                found,
                [(i, partials[i]) for i in todo],
                later,
                every_engine,
                workers,
                task("whole range, Hypothesis, prover", len(todo)),
            )
            for i, p in zip(todo, done, strict=True):
                partials[i] = p
    results = tuple(_result(m, p) for m, p in zip(found, partials, strict=True))
    return MutationReport(
        table.name,
        dict(base.ranges),
        chosen,
        tuple(o for o in OPERATORS if not operators or o in operators),
        every_engine,
        results,
        time.perf_counter() - started,
    )


def _needs_more(p: _Partial, every: bool, later: Sequence[Engine]) -> bool:
    """Whether the second pass has anything to add (never for a mutant that is not a table):
    a later engine of a family that has not killed it yet, or the confirmation over the
    whole range of an apparent equivalence."""
    if p.kills and p.kills[0].engine == "loader":
        return False
    if every or not p.kills:
        return True
    return any(not _decided(p, e) for e in later)


def _result(m: Mutant, p: _Partial) -> MutantResult:
    status: Status = "killed" if p.kills else "equivalent" if p.equivalent else "survived"
    note = p.note or (p.difference if status == "survived" else None)
    return MutantResult(
        m.id, m.operator, m.description, status, tuple(p.kills), note, tuple(p.ran), dict(p.seconds)
    )
