"""`turnbound check` as a function: every engine over one profile, summarised for a person.

Cases on the interpreter, exhaustive exploration over the table's default ranges,
Hypothesis fuzzing under the quick settings, and z3 proofs for all parameter
values. Each engine's verdict is kept with the figures a report needs, so the CLI
and the tests read the same result.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from turnbound.properties.explore.sweep import DEFAULT_JOBS, ClaimTally, sweep, tally
from turnbound.properties.fuzz.session import FuzzResult, fuzz
from turnbound.properties.prove.prover import ProofResult, Prover
from turnbound.properties.workers import fork_context, ordered_map
from turnbound.reference.cases import CaseResult, check_case
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

ENGINES = ("cases", "explore", "fuzz", "prove")


@dataclass
class ProfileCheck:
    table: Table
    cases: list[CaseResult] = field(default_factory=list)
    configurations: int = 0
    states: int = 0
    edges: int = 0
    explore_ok: bool | None = None
    claims: list[ClaimTally] = field(default_factory=list)
    fuzzed: FuzzResult | None = None
    proofs: list[ProofResult] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def cases_ok(self) -> bool:
        return all(r.passed for r in self.cases)

    @property
    def fuzz_ok(self) -> bool | None:
        return None if self.fuzzed is None else self.fuzzed.ok

    @property
    def prove_ok(self) -> bool | None:
        return None if not self.proofs else all(p.ok for p in self.proofs)

    @property
    def ok(self) -> bool:
        return self.cases_ok and all(v is not False for v in (self.explore_ok, self.fuzz_ok, self.prove_ok))

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.table.name,
            "ok": self.ok,
            "cases": {
                "passed": sum(r.passed for r in self.cases),
                "total": len(self.cases),
                "failed": [
                    {"case": r.case.name, "mismatches": list(r.mismatches)}
                    for r in self.cases
                    if not r.passed
                ],
            },
            "explore": None
            if self.explore_ok is None
            else {
                "ok": self.explore_ok,
                "configurations": self.configurations,
                "states": self.states,
                "edges": self.edges,
                "claims": {
                    t.name: {
                        "verdict": t.verdict,
                        "expect": t.expect,
                        "unexpected": t.unexpected,
                        "tight": f"{t.tight}/{t.tight_known}" if t.tight_known else None,
                    }
                    for t in self.claims
                },
            },
            "fuzz": None if self.fuzzed is None else self.fuzzed.to_json(),
            "prove": [
                {
                    "name": p.goal.name,
                    "kind": p.goal.kind,
                    "expr": p.goal.text,
                    "verdict": p.verdict,
                    "expected": p.expected,
                    "ok": p.ok,
                    "tight": p.tight,
                }
                for p in self.proofs
            ],
        }


def check_profile(
    table: Table,
    engines: Sequence[str] = ENGINES,
    *,
    examples: int | None = None,
    seed: int = 0,
    prove_timeout: float = 60.0,
    jobs: int = DEFAULT_JOBS,
) -> ProfileCheck:
    """Run the chosen engines on one table; nothing here is specific to a profile."""
    result = ProfileCheck(table)
    started = time.perf_counter()
    if "cases" in engines:
        result.cases = [check_case(table, c) for c in profile_cases(table)]
        result.seconds["cases"] = time.perf_counter() - started
    if "explore" in engines:
        t0 = time.perf_counter()
        summaries = sweep(table, jobs=jobs, progress=False)
        result.configurations = len(summaries)
        result.states = sum(s.states for s in summaries)
        result.edges = sum(s.edges for s in summaries)
        result.explore_ok = all(s.ok for s in summaries)
        result.claims = tally(summaries)
        result.seconds["explore"] = time.perf_counter() - t0
    if "fuzz" in engines:
        t0 = time.perf_counter()
        result.fuzzed = fuzz(table, examples=examples, seed=seed, settings_name="quick")
        result.seconds["fuzz"] = time.perf_counter() - t0
    if "prove" in engines:
        t0 = time.perf_counter()
        result.proofs = Prover(table, timeout=prove_timeout).prove_all()
        result.seconds["prove"] = time.perf_counter() - t0
    return result


# -- several profiles on a pool of workers -----------------------------------------

_JOB: dict[str, Any] = {}


def _init_check_worker(
    tables: Sequence[Table], engines: Sequence[str], examples: int | None, seed: int
) -> None:
    _JOB.update(tables=tables, engines=engines, examples=examples, seed=seed)


def _check_one(i: int) -> dict[str, Any]:
    """One profile in a worker. What refers to the table stays behind (a Table does not
    pickle): the table itself, and the proofs' counterexamples to induction, which hold
    symbolic edges and which the check's report does not show (`turnbound prove` does)."""
    job = _JOB
    r = check_profile(job["tables"][i], job["engines"], examples=job["examples"], seed=job["seed"], jobs=1)
    r.proofs = [dataclasses.replace(p, cti=None) for p in r.proofs]
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name != "table"}


def check_profiles(
    tables: Sequence[Table],
    engines: Sequence[str] = ENGINES,
    *,
    examples: int | None = None,
    seed: int = 0,
    jobs: int = DEFAULT_JOBS,
) -> Iterator[ProfileCheck]:
    """Each table's check, in the order given, whatever order the workers finish in.

    One profile per worker at a time (each explores its sweep in that worker), so the
    engines' results are the ones `check_profile` gives: only the wall time changes.
    """
    context = fork_context()
    workers = max(1, min(jobs, len(tables)))
    if workers == 1 or context is None:
        for table in tables:
            yield check_profile(table, engines, examples=examples, seed=seed, jobs=jobs)
        return
    init = (list(tables), list(engines), examples, seed)
    checked = ordered_map(_check_one, range(len(tables)), workers, _init_check_worker, init)
    for table, fields in zip(tables, checked, strict=True):
        yield ProfileCheck(table, **fields)
