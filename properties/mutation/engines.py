"""Each engine as a mutant detector: one function per engine, each returning a `Kill` or nothing.

A mutant is compared with its original through what the original is known to do
(`turnbound.properties.mutation.baseline`): its bundled cases and conformance vectors
(expected traces), its claims (which the original meets), and its reachable graphs over
the mutation parameter range (for equivalence).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from turnbound.properties.conformance.cases import run_case
from turnbound.properties.explore.explorer import Summary, explore
from turnbound.properties.fuzz.session import FuzzResult
from turnbound.properties.fuzz.settings import fuzz_settings
from turnbound.properties.mutation.baseline import Baseline
from turnbound.properties.mutation.mutants import Mutant
from turnbound.properties.mutation.observable import first_difference, observable_digest
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.properties.scheduler import ReferenceScheduler
from turnbound.reference.cases import check_case
from turnbound.reference.errors import DefinitionError, RunError, TurnboundError
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

RUN_TIMEOUT = 60.0
"""Seconds allowed for the interpreter-driven engines (cases, vectors) on one mutant: a mutant
whose internal transitions loop hangs the interpreter, and a hang counts as detected."""


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
    """The explorer's word on a mutant: a kill, or whether a host could tell it from the original."""

    kill: Kill | None
    equivalent: bool
    difference: str | None = None
    """Where a host can first tell the mutant from the original (its graphs differ)."""


def check_explore(base: Baseline, table: Table) -> Explored:
    """Explore each configuration (smallest first) until one shows a difference in a claim."""
    difference: str | None = None
    for params, digest in zip(base.configs, base.digests, strict=True):
        try:
            exploration = explore(table, params, max_states=base.state_limit, all_states=True)
        except RunError as exc:  # the mutant's own steps can not go on (a livelock): its behaviour differs
            kill = Kill("explore", f"at {_fmt(params)}: {exc}", {"params": dict(params), "message": str(exc)})
            return Explored(kill, False)
        summary = exploration.summary
        if not summary.ok:
            return Explored(_explorer_kill(summary, base.state_limit), False)
        if difference is None and observable_digest(exploration.graph, table) != digest:
            original = explore(base.table, params, all_states=True).graph
            run = first_difference(original, base.table, exploration.graph, table)
            difference = f"a host tells it from the original at {_fmt(params)}: {run}"
    return Explored(None, difference is None, difference)


def confirm_equivalence(base: Baseline, table: Table) -> Kill | str | None:
    """None if the mutant also shows a host what the original does over the rest of the
    table's explore ranges; otherwise the explorer's kill there, or where a host tells them
    apart while every claim still holds (a survivor's note).

    A mutant that looks equivalent over the mutation range is explored again over every
    configuration of the table's own ranges, so `equivalent` never rests on the small
    range alone.
    """
    for params, digest in base.beyond_the_range():
        exploration = explore(table, params, max_states=base.state_limit, all_states=True)
        if not exploration.summary.ok:
            kill = _explorer_kill(exploration.summary, base.state_limit)
            return Kill(kill.engine, f"beyond the mutation range: {kill.summary}", kill.evidence)
        if observable_digest(exploration.graph, table) != digest:
            run = first_difference(
                explore(base.table, params, all_states=True).graph, base.table, exploration.graph, table
            )
            return (
                f"a host tells it from the original at {_fmt(params)}, beyond the mutation range, where "
                f"every claim still holds (widen the range with --param): {run}"
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
