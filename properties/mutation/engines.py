"""Each engine as a mutant detector: one function per engine, each returning a `Kill` or nothing.

A mutant is compared with its original through what the original is known to do:
its bundled cases and conformance vectors (expected traces), its claims (which the
original meets: `Baseline` checks that before any mutant is judged, so a kill is
never an artefact of a failing original), and its reachable graphs over the mutation
parameter range (for equivalence). Everything the workers need is in one `Baseline`,
built once in the parent process and inherited by forked workers.
"""

from __future__ import annotations

import hashlib
import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import networkx as nx
from turnbound.properties.conformance.cases import ConformCase, run_case
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.explore.explorer import Summary, explore
from turnbound.properties.explore.sweep import configurations
from turnbound.properties.fuzz.session import FuzzResult, fuzz
from turnbound.properties.fuzz.settings import fuzz_settings
from turnbound.properties.fuzz.stateful import SchedulerFactory
from turnbound.properties.fuzz.swarm import ParamChoice
from turnbound.properties.mutation.mutants import Document, Mutant
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.properties.scheduler import ReferenceScheduler
from turnbound.reference.cases import Case, check_case
from turnbound.reference.errors import DefinitionError, RunError, TurnboundError
from turnbound.reference.ghosts import ghost_names
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON

Engine = Literal["loader", "cases", "explore", "vectors", "conform", "fuzz", "prove"]
ENGINES: tuple[Engine, ...] = ("loader", "cases", "explore", "vectors", "conform", "fuzz", "prove")
"""In the order they run: cheap and decisive first (the explorer also decides equivalence),
then the Hypothesis machine, as a conformance check and on the mutant's own claims, then z3."""

ENGINE_DOCS: dict[Engine, str] = {
    "loader": "the loader's rules (names, types, reachability; z3-proved determinism and coverage)",
    "cases": "the profile's bundled cases (the seed's figures) run on the mutant",
    "explore": "the explorer over the mutation range: claims, termination, determinism",
    "vectors": "the mutant, as an implementation, against the profile's conformance vectors",
    "conform": "the mutant, as an implementation, against the original under the Hypothesis machine",
    "fuzz": "the Hypothesis machine on the mutant's own claims",
    "prove": "the z3 prover, for all parameter values",
}

MUTATION_SPAN = 3
"""Distinct behaviours per parameter in the default mutation range (see `mutation_ranges`)."""

STATE_LIMIT_FACTOR = 20
"""A mutant's exploration stops at this many times the original's largest graph (plus a floor):
a mutant that loses a counter update has an infinite graph, and the claims it breaks show
long before a full-size state limit would be reached."""
STATE_LIMIT_FLOOR = 10_000

RUN_TIMEOUT = 60.0
"""Seconds allowed for the interpreter-driven engines (cases, vectors) on one mutant: a mutant
whose internal transitions loop hangs the interpreter, and a hang counts as detected."""

DEFAULT_PROVE_TIMEOUT = 20.0
DEFAULT_FUZZ_SETTINGS = "thorough"
"""Hypothesis stops at the first failing example, so only a mutant it can not kill pays for
all the examples; the quick settings miss faults that need a rare run (several empty replies
in a row at one budget value)."""


def mutation_ranges(table: Table, span: int = MUTATION_SPAN) -> dict[str, list[int]]:
    """Each parameter's values from the start of its table `range` up to the `span`-th that
    changes the original's reachable graph (the other parameters at the start of theirs).

    Why three behaviours per parameter are enough to look for kills: a guard compares a
    counter with a budget (or a constant) and a counter starts at its initial value, so
    a flipped, shifted or dropped comparison changes what happens where a budget is
    spent at once (the first value), where a counter reaches it after one step (the
    second), or where a step is neither the first nor the last (the third: a lost reset
    or a lost increment shows only the second time round, e.g. a second empty reply or
    a second wrap-up request). Values that behave alike (a table that reads
    `max(1, budget)`) are skipped over, not counted. Equivalence is not decided on this
    range alone: see `confirm_equivalence`.
    """
    start = {p.name: p.range[0] for p in table.parameters}
    out: dict[str, list[int]] = {}
    for p in table.parameters:
        values: list[int] = []
        seen: set[str] = set()
        for value in range(p.range[0], p.range[1] + 1):
            values.append(value)
            seen.add(behaviour_digest(table, {**start, p.name: value}))
            if len(seen) >= span:
                break
        out[p.name] = values
    return out


@dataclass(frozen=True)
class Kill:
    """How one engine told the mutant from its original: a one-line summary and the evidence."""

    engine: Engine
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    """JSON-ready: the loader message, failing case, witness trace, counterexample or refutation."""
    seconds_to_failure: float | None = field(default=None, compare=False)
    """Hypothesis only: wall time until the first failing example (not in JSON: it varies)."""

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "summary": self.summary, "evidence": self.evidence}


# -- guards ------------------------------------------------------------------------


class _TimedOut(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt pure-Python work after `seconds` (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- the original: what every mutant is compared with -----------------------------


def graph_digest(g: nx.DiGraph, hidden: frozenset[str] = frozenset()) -> str:
    """An explorer graph up to node numbering: states by location, variables, facts and
    monitors; edges by their two states and their label (transition id and outcome).

    `hidden` (a table's ghost variables) are projected out and states that differ only
    in them merge: the loader's ghost rule keeps every behaviour independent of them.
    """
    key = {
        n: repr(
            (
                d["location"],
                tuple((k, v) for k, v in d["values"].items() if k not in hidden),
                tuple(sorted(d["facts"].items())),
                d["monitors"],
            )
        )
        for n, d in g.nodes(data=True)
    }
    lines = sorted(set(key.values()))
    lines += sorted({f"{key[a]} -> {key[b]} : {d['label']}" for a, b, d in g.edges(data=True)})
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def behaviour_digest(table: Table, params: Mapping[str, int]) -> str:
    """`graph_digest` of the table's reachable graph at `params`, its ghosts projected out."""
    return graph_digest(explore(table, params).graph, ghost_names(table))


@dataclass
class Baseline:
    """The original table, checked green by every engine it is compared through."""

    table: Table
    document: Document
    ranges: dict[str, list[int]]
    configs: list[dict[str, int]]
    cases: list[Case]
    vectors: list[ConformCase]
    digests: list[str]
    """Per configuration: `graph_digest` of the original's graph, its ghosts projected out."""
    state_limit: int
    longest_turn: int | None
    """The most host calls any run of the original makes over the range (None: unbounded)."""
    fuzz_settings: str = DEFAULT_FUZZ_SETTINGS
    fuzz_seed: int = 0
    fuzz_shrink: bool = True
    prove_timeout: float = DEFAULT_PROVE_TIMEOUT
    _fuzz_refutes: dict[tuple[int, ...], frozenset[str]] = field(default_factory=dict)
    _proved_as_expected: frozenset[str] | None = None
    _beyond: list[tuple[dict[str, int], str]] | None = None

    @property
    def source(self) -> str:
        return Path(self.table.source).name

    @property
    def fuzz_params(self) -> dict[str, ParamChoice]:
        return {name: list(values) for name, values in self.ranges.items()}

    @classmethod
    def of(
        cls,
        table: Table,
        document: Document,
        ranges: Mapping[str, list[int]] | None = None,
        vectors: bool = True,
    ) -> Baseline:
        """Check the original against the cheap engines and record what mutants are compared with.

        `vectors=False`: the conformance vectors are not loaded (they may be out of date).
        """
        chosen = mutation_ranges(table) if ranges is None else {k: list(v) for k, v in ranges.items()}
        configs = configurations(table, chosen)
        cases = profile_cases(table)
        for case in cases:
            result = check_case(table, case)
            if not result.passed:
                raise DefinitionError(
                    f"{table.name}: the original fails its case {case.name} "
                    f"({'; '.join(result.mismatches)}); "
                    "mutation testing needs a table that passes its own checks"
                )
        try:
            conformance = bundled_vector_cases(table) if vectors else []
        except DefinitionError as exc:
            raise DefinitionError(f"{exc} (or leave `vectors` out of the engines)") from None
        digests = []
        largest = 0
        longest: int | None = 0
        for params in configs:
            exploration = explore(table, params)
            if not exploration.summary.ok:
                at = f"at {_fmt(params)}" if params else "at its defaults"
                why = "is not decided" if not exploration.summary.complete else "fails"
                raise DefinitionError(
                    f"{table.name}: the original's exploration {why} {at}; "
                    "mutation testing needs a table whose claims hold (run `turnbound explore`)"
                )
            largest = max(largest, exploration.summary.states)
            digests.append(graph_digest(exploration.graph, ghost_names(table)))
            nodes = [d for _, d in exploration.graph.nodes(data=True)]
            if longest is not None and not any(d["horizon"] for d in nodes):
                longest = max(longest, *(d["calls"] for d in nodes))
            else:
                longest = None
        limit = max(STATE_LIMIT_FLOOR, STATE_LIMIT_FACTOR * largest)
        return cls(table, document, chosen, configs, cases, conformance, digests, limit, longest)

    def beyond_the_range(self) -> list[tuple[dict[str, int], str]]:
        """The configurations of the table's own explore ranges outside the mutation range,
        each with the digest of the original's graph there (computed on first use)."""
        if self._beyond is None:
            inside = [tuple(c.values()) for c in self.configs]
            self._beyond = [
                (c, behaviour_digest(self.table, c))
                for c in configurations(self.table)
                if tuple(c.values()) not in inside
            ]
        return self._beyond

    def fuzz(
        self,
        table: Table,
        params: Mapping[str, ParamChoice] | None = None,
        scheduler: SchedulerFactory | None = None,
        examples: int | None = None,
    ) -> FuzzResult:
        return fuzz(
            table,
            examples,
            seed=self.fuzz_seed,
            settings_name=self.fuzz_settings,
            params=self.fuzz_params if params is None else params,
            scheduler=scheduler,
            shrink=self.fuzz_shrink,
        )

    @property
    def examples_per_config(self) -> int:
        """The settings' examples, shared equally by the configurations of the range."""
        return max(1, fuzz_settings(self.fuzz_settings).examples // len(self.configs))

    def fuzz_refutes(self, params: Mapping[str, int]) -> frozenset[str]:
        """The claims expected to be violated that the Hypothesis machine refutes in the original
        at these parameter values.

        Needed only when a mutant's run leaves such a claim unrefuted, so computed then (once
        per process and configuration): the original's run costs as much as a mutant
        Hypothesis can not kill.
        """
        key = tuple(params.values())
        if key not in self._fuzz_refutes:
            result = self.fuzz(self.table, params, examples=self.examples_per_config)
            self._fuzz_refutes[key] = frozenset(n for n, k in result.coverage.refuted.items() if k > 0)
        return self._fuzz_refutes[key]

    def proved_as_expected(self) -> frozenset[str]:
        """The claims the prover decides as the original expects: only those can kill a mutant."""
        if self._proved_as_expected is None:
            results = Prover(self.table, timeout=self.prove_timeout).prove_all()
            self._proved_as_expected = frozenset(r.goal.name for r in results if r.ok)
        return self._proved_as_expected


def _fmt(params: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


# -- the engines ---------------------------------------------------------------------


def check_loader(base: Baseline, mutant: Mutant) -> Table | Kill:
    try:
        return mutant.load(base.source)
    except DefinitionError as exc:
        return Kill("loader", str(exc), {"message": str(exc)})


def check_cases(base: Baseline, table: Table) -> Kill | None:
    try:
        with _time_limit(RUN_TIMEOUT):
            for case in base.cases:
                result = check_case(table, case)
                if not result.passed:
                    return Kill(
                        "cases",
                        f"case {case.name}: {'; '.join(result.mismatches)}",
                        {"case": case.name, "mismatches": list(result.mismatches), "line": result.line},
                    )
    except _TimedOut:
        return Kill("cases", f"the interpreter did not finish the cases within {RUN_TIMEOUT:g} s", {})
    return None


def check_vectors(base: Baseline, table: Table) -> Kill | None:
    try:
        with _time_limit(RUN_TIMEOUT):
            scheduler = ReferenceScheduler(table)
            for vector in base.vectors:
                result = run_case(scheduler, vector)
                if not result.passed:
                    return Kill(
                        "vectors",
                        f"vector {vector.id}: {result.divergence}",
                        {"vector": vector.id, "params": vector.params, "divergence": result.divergence},
                    )
    except _TimedOut:
        return Kill("vectors", f"the interpreter did not finish the vectors within {RUN_TIMEOUT:g} s", {})
    return None


@dataclass(frozen=True)
class Explored:
    """The explorer's word on a mutant: a kill, or whether its graphs equal the original's."""

    kill: Kill | None
    equivalent: bool


def check_explore(base: Baseline, table: Table) -> Explored:
    """Explore each configuration (smallest first) until one shows a difference in a claim."""
    same = True
    hidden = ghost_names(table)
    for params, digest in zip(base.configs, base.digests, strict=True):
        try:
            exploration = explore(table, params, max_states=base.state_limit)
        except RunError as exc:  # the mutant's own steps can not go on (a livelock): its behaviour differs
            kill = Kill("explore", f"at {_fmt(params)}: {exc}", {"params": dict(params), "message": str(exc)})
            return Explored(kill, False)
        summary = exploration.summary
        if not summary.ok:
            return Explored(_explorer_kill(summary, base.state_limit), False)
        if same and graph_digest(exploration.graph, hidden) != digest:
            same = False
    return Explored(None, same)


def confirm_equivalence(base: Baseline, table: Table) -> str | None:
    """None if the mutant's graphs also equal the original's over the rest of the table's
    explore ranges; otherwise where they differ (and what the claims say there).

    A mutant that looks equivalent over the mutation range is explored again over every
    configuration of the table's own ranges, so `equivalent` never rests on the small
    range alone; a difference found there makes the mutant a survivor, with this note.
    """
    for params, digest in base.beyond_the_range():
        exploration = explore(table, params, max_states=base.state_limit)
        if not exploration.summary.ok:
            kill = _explorer_kill(exploration.summary, base.state_limit)
            return f"beyond the mutation range (widen it with --param) the explorer kills it: {kill.summary}"
        if graph_digest(exploration.graph, ghost_names(table)) != digest:
            return (
                f"its reachable graph differs from the original's at {_fmt(params)}, beyond the mutation "
                "range, where every claim still holds (widen the range with --param)"
            )
    return None


def _explorer_kill(summary: Summary, limit: int) -> Kill:
    where = _fmt(summary.params)
    unexpected = [c for c in summary.claims if not c.as_expected]
    for v in summary.violations:
        if any(c.name == v.claim for c in unexpected):
            w = v.witness
            return Kill(
                "explore",
                f"{v.claim} ({v.kind}) at {where}: {v.message}; witness: {w.line}",
                {
                    "params": dict(summary.params),
                    "claim": v.claim,
                    "kind": v.kind,
                    "message": v.message,
                    "line": w.line,
                    "path": [s.transition for s in w.path],
                    "replayed": v.replay_problem is None,
                    "trace": w.trace.to_json(),
                },
            )
    for c in unexpected:
        return Kill(
            "explore",
            f"{c.name} ({c.kind}) at {where}: expected {c.expect}, but it {c.verdict}",
            {"params": dict(summary.params), "claim": c.name, "kind": c.kind, "verdict": c.verdict},
        )
    if not summary.complete:
        return Kill(
            "explore",
            f"at {where} the graph outgrows {limit:,} states: a counter grows without bound",
            {"params": dict(summary.params), "states": summary.states},
        )
    problem = next(v for v in summary.violations if v.replay_problem is not None)
    return Kill("explore", f"{problem.claim}: its witness does not replay: {problem.replay_problem}", {})


def check_conform(base: Baseline, table: Table) -> Kill | None:
    """The Hypothesis machine drives the original and the mutant side by side: the first divergence.

    The original's own claims are checked on the reference side too, but the explorer
    found them holding over the same range (`Baseline.of`), so a finding is the mutant's.
    """
    result = base.fuzz(base.table, scheduler=lambda: ReferenceScheduler(table))
    cx = result.counterexample
    if cx is None:
        return None
    what = cx["divergence"] or cx["violation"]["message"]
    return Kill(
        "conform",
        f"{what} ({_where(cx, result)})",
        cx,
        seconds_to_failure=result.seconds_to_failure,
    )


def _where(cx: Mapping[str, Any], result: FuzzResult) -> str:
    steps = len(cx["trace"]["steps"])
    return f"params {_fmt(cx['params'])}, {steps} host calls, found in example {result.examples_run}"


def check_fuzz(base: Baseline, table: Table) -> Kill | None:
    """The Hypothesis machine on the mutant's own claims.

    First one run over the whole range, parameters drawn per turn: a counterexample, or
    a turn cut off at the machine's call limit where no run of the original comes near
    it (a turn that may never end). Then, if the table has claims expected to be
    violated, one run per configuration with an equal share of the examples: the
    explorer requires such a claim to be refuted at each configuration, and so does
    this engine, where the original's run refutes it.
    """
    limit = fuzz_settings(base.fuzz_settings).max_calls
    result = base.fuzz(table)
    cx = result.counterexample
    if cx is not None:
        found = result.seconds_to_failure or result.seconds
        return Kill("fuzz", f"{cx['violation']['message']} ({_where(cx, result)})", cx, found)
    spent = result.seconds
    cut = result.coverage.terminals.get(HORIZON, 0)
    if cut and base.longest_turn is not None and base.longest_turn < limit:
        return Kill(
            "fuzz",
            f"{cut} turns were still asking for host calls after {limit}; "
            f"no run of the original over the range makes more than {base.longest_turn}",
            {"cut_off": cut, "limit": limit, "longest": base.longest_turn},
            spent,
        )
    if not result.coverage.refuted:
        return None
    for params in base.configs:
        result = base.fuzz(table, params, examples=base.examples_per_config)
        spent += result.seconds
        cx = result.counterexample
        if cx is not None:
            return Kill("fuzz", f"{cx['violation']['message']} ({_where(cx, result)})", cx, spent)
        missed = [name for name, n in result.coverage.refuted.items() if n == 0]
        missed = [name for name in missed if name in base.fuzz_refutes(params)] if missed else []
        if missed:
            return Kill(
                "fuzz",
                f"{', '.join(missed)} at {_fmt(params)}: expected to be violated and refuted in the "
                f"original, but no run of {result.examples_run} examples refutes it in the mutant",
                {"params": dict(params), "unrefuted": missed, "examples": result.examples_run},
                spent,
            )
    return None


def check_prove(base: Baseline, table: Table) -> Kill | None:
    """A claim the prover decides against its `expect` (one it decides as expected on the original)."""
    decided = base.proved_as_expected()
    try:
        results = Prover(table, timeout=base.prove_timeout).prove_all()
    except TurnboundError as exc:
        return Kill("prove", f"the prover rejects the mutant: {exc}", {"message": str(exc)})
    for r in results:
        if r.goal.name in decided and not r.ok and r.verdict != "unknown":
            return _prover_kill(r)
    return None


def _prover_kill(r: ProofResult) -> Kill:
    name = r.goal.name
    if r.verdict == "proved":
        return Kill(
            "prove",
            f"{name}: PROVED for all parameter values ({r.method}), but it is expected to be violated",
            {"claim": name, "verdict": "proved", "method": r.method},
        )
    w = r.witness
    detail = w.detail if w is not None else r.reason
    return Kill(
        "prove",
        f"{name}: REFUTED ({r.method}): {detail}",
        {"claim": name, "verdict": r.verdict, "method": r.method, "witness": w.to_json() if w else None},
    )
