"""What an exploration reports: paths, replayed witnesses, violations, verdicts, summaries.

Plain frozen dataclasses with byte-stable `to_json` (no timings); the explorer
(`turnbound.properties.explore.explorer`) builds them, sweeps pickle them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from turnbound.reference.outcomes import Outcome
from turnbound.reference.trace import Trace

Stored = Literal["atomic", "all"]
"""Which states an exploration stores: `atomic` (the initial state, terminals, host-call
points, leaves and states that break an invariant) or `all` (every state)."""
Verdict = Literal["holds", "violated", "unknown"]
Expect = Literal["holds", "violated", "either"]
ClaimKind = Literal["invariant", "lemma", "bound", "trace_property", "termination", "determinism"]

TERMINATES = "terminates"
"""The implicit claim that every run ends at a terminal."""
DETERMINISTIC = "deterministic"
"""The implicit claim that every reachable state enables exactly one transition."""


@dataclass(frozen=True)
class PathStep:
    """One edge of a path: a transition, with the host outcome if it called the host."""

    transition: str
    op: str | None = None
    outcome: Outcome | None = None


@dataclass(frozen=True)
class Witness:
    """A path from the initial state, as a host script, replayed on the interpreter."""

    path: tuple[PathStep, ...]
    script: Mapping[str, list[Outcome]]
    trace: Trace
    line: str
    loop_start: int | None = None
    """For a lasso: the index in `path` where the repeating part begins."""

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "path": [s.transition for s in self.path],
            "loop_start": self.loop_start,
            "script": {op: [o.to_json() for o in q] for op, q in self.script.items()},
            "trace": self.trace.to_json(),
        }


@dataclass(frozen=True)
class Violation:
    claim: str
    kind: ClaimKind
    message: str
    witness: Witness
    replay_problem: str | None = None
    """None when the interpreter reproduced the violation from the witness's script."""
    exits: tuple[Exit, ...] = ()
    """For a refuted bound, single explorations only: one witness per distinct probe line."""

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "kind": self.kind,
            "message": self.message,
            "replayed": self.replay_problem is None,
            "replay_problem": self.replay_problem,
            **self.witness.to_json(),
            "exits": [e.to_json() for e in self.exits],
        }


@dataclass(frozen=True)
class Exit:
    """A distinct way a claim is broken at a terminal, with its shortest witness."""

    line: str
    case: str | None
    """The bundled case whose expected probe line (and parameters) this is, if any."""
    witness: Witness
    replay_problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "case": self.case,
            "replayed": self.replay_problem is None,
            "trace": self.witness.trace.to_json(),
        }


@dataclass(frozen=True)
class ClaimResult:
    name: str
    kind: ClaimKind
    text: str
    expect: Expect
    verdict: Verdict
    tight: bool | None = None
    """Bounds `lhs <= rhs`: whether some terminal reaches lhs == rhs."""
    lhs_max: int | None = None
    """Bounds `lhs <= rhs`: the largest lhs over terminal states."""
    rhs: int | None = None
    """Bounds `lhs <= rhs` whose right side reads parameters only: its value."""

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.expect or (self.expect == "either" and self.verdict != "unknown")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "expr": self.text,
            "expect": self.expect,
            "verdict": self.verdict,
            "as_expected": self.as_expected,
            "tight": self.tight,
            "lhs_max": self.lhs_max,
            "rhs": self.rhs,
        }


@dataclass(frozen=True)
class Summary:
    """What an exploration found, without its graph: small, picklable, JSON-ready."""

    profile: str
    params: dict[str, int]
    states: int
    """The states stored, as `stored` says: host-call points and terminals (atomic) or all."""
    edges: int
    terminals: dict[str, int]
    max: dict[str, int]
    claims: tuple[ClaimResult, ...]
    violations: tuple[Violation, ...]
    covered: dict[str, int]
    """Transition id -> edges taking it (atomic: an edge counts once per step it takes it)."""
    uncovered: tuple[str, ...]
    complete: bool
    """False when a limit stopped the search: a claim not refuted is then `unknown` (not decided)."""
    seconds: float = field(default=0.0, compare=False)
    limit: str | None = None
    """The limit that stopped the search, by name (`max_states=500000`, `INT_LIMIT`)."""
    terminal_max: dict[str, dict[str, int]] = field(default_factory=dict, compare=False)
    """Per terminal, each counter's largest value there: which exits the longest runs take."""
    stored: Stored = "all"
    intermediate: int = 0
    """Atomic: states walked through inside edges, not stored (one inside two edges counts twice)."""

    @property
    def counted(self) -> str:
        """What `states` counts, in words."""
        return (
            "states (atomic: host-call points and terminals)" if self.stored == "atomic" else "states (all)"
        )

    @property
    def ok(self) -> bool:
        return (
            self.complete
            and all(c.as_expected for c in self.claims)
            and all(v.replay_problem is None for v in self.violations)
            and all(e.replay_problem is None for v in self.violations for e in v.exits)
        )

    def claim(self, name: str) -> ClaimResult:
        for c in self.claims:
            if c.name == name:
                return c
        raise KeyError(name)

    def violation(self, name: str) -> Violation | None:
        return next((v for v in self.violations if v.claim == name), None)

    def to_json(self) -> dict[str, Any]:
        """Byte-stable: no timings."""
        return {
            "params": dict(self.params),
            "states": self.states,
            "stored": self.stored,
            "intermediate": self.intermediate,
            "edges": self.edges,
            "terminals": dict(self.terminals),
            "max": dict(self.max),
            "claims": [c.to_json() for c in self.claims],
            "violations": [v.to_json() for v in self.violations],
            "transitions_covered": dict(self.covered),
            "transitions_uncovered": list(self.uncovered),
            "complete": self.complete,
            **({"limit": self.limit} if self.limit is not None else {}),
            "ok": self.ok,
        }
