"""The bundled profiles: the tables in `spec/` and their cases."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import turnbound.spec
from turnbound.reference.cases import Case, load_cases
from turnbound.reference.errors import DefinitionError
from turnbound.reference.loader import load_table
from turnbound.reference.table import Table


def spec_dir() -> Path:
    return Path(turnbound.spec.__file__).parent


def profile_names() -> list[str]:
    return sorted(p.stem for p in spec_dir().glob("*.toml"))


def table_path(name_or_path: str) -> Path:
    """A bundled profile by name, or a table file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" and candidate.exists():
        return candidate
    path = spec_dir() / f"{name_or_path}.toml"
    if not path.exists():
        known = ", ".join(profile_names())
        raise DefinitionError(f"unknown profile {name_or_path!r}; bundled profiles: {known}")
    return path


@cache
def _load(path: Path, mtime: float) -> Table:
    return load_table(path)


def load_profile(name_or_path: str) -> Table:
    path = table_path(name_or_path)
    return _load(path, path.stat().st_mtime)


def cases_dir(table: Table) -> Path:
    """Cases live beside their table: `<table dir>/cases/<profile name>/*.json`."""
    return Path(table.source).parent / "cases" / table.name


def profile_cases(table: Table) -> list[Case]:
    return load_cases(cases_dir(table))
