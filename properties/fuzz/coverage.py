"""What a fuzzing session reached: outcome kinds per operation, terminals, transitions, refuted claims.

Each example counts into its own tally, added to the session when the example
finishes; examples Hypothesis cuts short (it ran out of choices) are dropped, and
counting stops at the first failure, so the figures describe the generated runs
up to the first counterexample, not Hypothesis's discarded or shrinking replays.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from turnbound.properties.fuzz.checked_run import CheckedRun
from turnbound.properties.fuzz.swarm import CONTRACT, FACTS, OutcomeDomains
from turnbound.reference.table import BUILTIN_TERMINALS
from turnbound.reference.trace import HORIZON


@dataclass
class Tally:
    """One example's counts."""

    turns: int = 0
    steps: int = 0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    terminals: Counter[str] = field(default_factory=Counter)
    transitions: Counter[str] = field(default_factory=Counter)
    refuted: Counter[str] = field(default_factory=Counter)

    def outcome(self, op: str, kind: str) -> None:
        self.steps += 1
        self.outcomes[(op, kind)] += 1

    def turn_over(self, run: CheckedRun) -> None:
        """Count a turn's transitions; its terminal too if it reached one (the example may end first)."""
        if run.ended:
            self.terminals[run.terminal or HORIZON] += 1
        self.transitions.update(run.path)
        self.refuted.update(run.witnessed)


class Coverage:
    def __init__(self, domains: OutcomeDomains) -> None:
        table = domains.table
        self.examples = 0
        self.turns = 0
        self.steps = 0
        self.frozen = False
        self.failed_at: float | None = None
        self.outcomes: dict[str, dict[str, int]] = {}
        for name, d in domains.ops.items():
            kinds = [FACTS, *d.raises] + ([CONTRACT] if d.probes else [])
            self.outcomes[name] = dict.fromkeys(kinds, 0)
        own = [t for t in table.terminals if t not in BUILTIN_TERMINALS]
        self.terminals: dict[str, int] = dict.fromkeys([*own, *BUILTIN_TERMINALS], 0)
        self.transitions: dict[str, int] = {t.id: 0 for t in table.transitions}
        self.refuted: dict[str, int] = {}
        for claim in (*table.invariants, *table.lemmas, *table.bounds):
            if claim.expect == "violated":
                self.refuted[claim.name] = 0
        for prop in table.trace_properties:
            if prop.expect == "violated":
                self.refuted[prop.name] = 0

    def commit(self, tally: Tally) -> None:
        if self.frozen:
            return
        self.examples += 1
        self.turns += tally.turns
        self.steps += tally.steps
        for (op, kind), n in tally.outcomes.items():
            self.outcomes[op][kind] += n
        for terminal, n in tally.terminals.items():
            self.terminals[terminal] = self.terminals.get(terminal, 0) + n
        for tid, n in tally.transitions.items():
            self.transitions[tid] += n
        for name, n in tally.refuted.items():
            self.refuted[name] += n

    def freeze(self) -> None:
        """Stop counting: the first counterexample was found; what follows is shrinking."""
        if not self.frozen:
            self.frozen = True
            self.failed_at = perf_counter()

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": self.outcomes,
            "terminals": self.terminals,
            "transitions": self.transitions,
            "refuted": self.refuted,
        }
