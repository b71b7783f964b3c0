"""Named settings profiles for the Hypothesis machine: `quick` for CI, `thorough` and `nightly` for long runs.

Every profile is reproducible (a fixed seed or `derandomize`) and writes no example
database unless one is named, and every setting is given explicitly, so a settings
profile loaded by a plugin or by `CI=1` changes nothing. `same_draws` removes the
last thing that made the draws depend on the machine: the constants Hypothesis mines
from the source of "local" modules (see its docstring).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import DirectoryBasedExampleDatabase
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
        self,
        examples: int | None = None,
        *,
        quiet: bool = False,
        shrink: bool = True,
        database: Path | None = None,
    ) -> settings:
        """Hypothesis settings: no deadline, one bug reported, shrinking unless told not to.

        No example database unless `database` names a directory: failing examples are
        saved there and replayed first on the next run, which is why the default has
        none (a report must not depend on what earlier runs left behind).
        """
        return settings(
            max_examples=examples if examples is not None else self.examples,
            stateful_step_count=self.steps,
            # Hypothesis refuses a database with `derandomize`; `fuzz` seeds explicitly anyway.
            derandomize=database is None,
            database=None if database is None else DirectoryBasedExampleDatabase(database),
            backend="hypothesis",
            deadline=None,
            print_blob=False,
            report_multiple_bugs=False,
            phases=(Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ())),
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet if quiet else Verbosity.normal,
        )


_lock = threading.Lock()
_active = 0
_saved: object = None


@contextmanager
def same_draws() -> Iterator[None]:
    """Hypothesis draws that depend on the seed alone, not on where turnbound is installed.

    Hypothesis (since 6.131.1) mixes into its draws, with a small probability each,
    literal constants it reads from the source of every imported module it deems
    "local": any file outside site-packages and the standard library. In an editable
    install all of turnbound's modules are local, in `pip install .` none are, and an
    adapter module or script in the caller's directory is too; so the same seed drew
    different examples on different machines (and the mined constants were cached in
    `.hypothesis/constants/` in the working directory). Inside this context the pool of
    local constants is empty; Hypothesis's own built-in constants are still drawn.
    """
    global _active, _saved
    providers = _providers()
    if providers is None:
        yield
        return
    with _lock:
        if _active == 0:
            _saved = providers._get_local_constants
            empty = providers.Constants()
            providers._get_local_constants = lambda: empty
            providers.CONSTANTS_CACHE.cache.clear()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                providers._get_local_constants = _saved
                providers.CONSTANTS_CACHE.cache.clear()


def _providers() -> Any:
    """Hypothesis's provider module if it mines local constants (it is private: checked by a test)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the provider layer
        return None
    needed = ("_get_local_constants", "Constants", "CONSTANTS_CACHE")
    return providers if all(hasattr(providers, n) for n in needed) else None


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
