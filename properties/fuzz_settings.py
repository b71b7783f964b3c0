"""Named settings profiles for the Hypothesis machine: `quick` for CI, `thorough` and `nightly` for long runs.

Every profile is reproducible (a fixed seed or `derandomize`) and never writes an
example database, so a test run leaves no `.hypothesis/` folder behind and the same
seed always explores the same runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings
from turnbound.reference.errors import DefinitionError


@dataclass(frozen=True)
class FuzzSettings:
    name: str
    examples: int
    """Hypothesis examples (machine runs); each runs several turns."""
    steps: int
    """Turns per example (`stateful_step_count`: one rule invocation plays one turn)."""
    max_calls: int
    """Host calls after which a turn is cut off (reported as terminal `horizon`)."""
    doc: str

    def hypothesis(
        self, examples: int | None = None, *, quiet: bool = False, shrink: bool = True
    ) -> settings:
        """Hypothesis settings: no database, no deadline, one bug reported, shrinking unless told not to."""
        return settings(
            max_examples=examples if examples is not None else self.examples,
            stateful_step_count=self.steps,
            derandomize=True,
            database=None,
            deadline=None,
            print_blob=False,
            report_multiple_bugs=False,
            phases=(Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ())),
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet if quiet else Verbosity.normal,
        )


PROFILES: dict[str, FuzzSettings] = {
    p.name: p
    for p in (
        FuzzSettings("quick", 60, 10, 100, "CI: a few seconds per profile."),
        FuzzSettings("thorough", 500, 20, 200, "Nightly and mutation agreement: a minute per profile."),
        FuzzSettings("nightly", 5_000, 20, 500, "A long soak: minutes per profile."),
    )
}


def fuzz_settings(name: str) -> FuzzSettings:
    try:
        return PROFILES[name]
    except KeyError:
        raise DefinitionError(f"unknown fuzz settings {name!r}; settings: {', '.join(PROFILES)}") from None
