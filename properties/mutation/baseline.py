"""The original table as every mutant is compared with it: its cases, vectors, claims and graphs.

`Baseline.of` checks the original green by every engine it is compared through (its
cases pass, its claims hold over the mutation range), so a kill is never an artefact of
a failing original, and records what the engines compare a mutant with. It is built
once in the parent process and inherited by forked workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from turnbound.properties.conformance.cases import ConformCase
from turnbound.properties.conformance.vectors import bundled_vector_cases
from turnbound.properties.explore.explorer import explore
from turnbound.properties.explore.sweep import configurations
from turnbound.properties.fuzz.session import FuzzResult, fuzz
from turnbound.properties.fuzz.settings import fuzz_settings
from turnbound.properties.fuzz.stateful import SchedulerFactory
from turnbound.properties.fuzz.swarm import ParamChoice
from turnbound.properties.mutation.mutants import Document
from turnbound.properties.mutation.observable import observable_digest
from turnbound.properties.prove.prover import Prover
from turnbound.reference.cases import Case, check_case
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import profile_cases
from turnbound.reference.table import Table

MUTATION_SPAN = 3
"""Distinct behaviours per parameter in the default mutation range (see `mutation_ranges`)."""

STATE_LIMIT_FACTOR = 20
"""A mutant's exploration stops at this many times the original's largest graph (plus a floor):
a mutant that loses a counter update has an infinite graph, and the claims it breaks show
long before a full-size state limit would be reached."""
STATE_LIMIT_FLOOR = 10_000

DEFAULT_PROVE_TIMEOUT = 20.0
DEFAULT_FUZZ_SETTINGS = "thorough"
"""Hypothesis stops at the first failing example, so only a mutant it can not kill pays for
all the examples; the quick settings miss faults that need a rare run (several empty replies
in a row at one budget value)."""


def mutation_ranges(table: Table, span: int = MUTATION_SPAN) -> dict[str, list[int]]:
    """Each parameter's values from the start of its table `range` up to the `span`-th that
    changes what the original shows a host, and at least up to `span - 1` (the other
    parameters at the start of theirs).

    Why three behaviours per parameter are enough to look for kills: a guard compares a
    counter with a budget (or a constant) and a counter starts at its initial value, so
    a flipped, shifted or dropped comparison changes what happens where a budget is
    spent at once (the first value), where a counter reaches it after one step (the
    second), or where a step is neither the first nor the last (the third: a lost reset
    or a lost increment shows only the second time round, e.g. a second empty reply or
    a second wrap-up request). Values that behave alike (a table that reads
    `max(1, budget)`) are skipped over, not counted; and since counters start at 0, the
    range reaches 2 even when values below 0 already behave three ways (smolagents'
    max_steps -1 and 0 differ, and a lost step increment shows only at 2). Equivalence is not decided on this
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
            if len(seen) >= span and value >= span - 1:
                break
        out[p.name] = values
    return out


def behaviour_digest(table: Table, params: Mapping[str, int]) -> str:
    """`observable_digest` of the table's reachable graph at `params`."""
    return observable_digest(explore(table, params, all_states=True).graph, table)


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
    """Per configuration: `observable_digest` of the original's graph."""
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
            exploration = explore(table, params, all_states=True)  # its graph: every state
            if not exploration.summary.ok:
                at = f"at {_fmt(params)}" if params else "at its defaults"
                why = "is not decided" if not exploration.summary.complete else "fails"
                raise DefinitionError(
                    f"{table.name}: the original's exploration {why} {at}; "
                    "mutation testing needs a table whose claims hold (run `turnbound explore`)"
                )
            largest = max(largest, exploration.summary.states)
            digests.append(observable_digest(exploration.graph, table))
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
