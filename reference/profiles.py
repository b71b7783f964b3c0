"""The bundled profiles: the tables in `spec/` and their cases."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import turnbound.spec
from turnbound.reference.cases import Case, load_cases
from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import PROFILE_NAME
from turnbound.reference.loader import load_table
from turnbound.reference.table import Table


def spec_dir() -> Path:
    return Path(turnbound.spec.__file__).parent


def profile_names() -> list[str]:
    return sorted(p.stem for p in spec_dir().glob("*.toml"))


def looks_like_path(name_or_path: str) -> bool:
    """A table path ends in `.toml` (any case); a profile name is one of `profile_names()`."""
    return name_or_path.lower().endswith(".toml")


def table_path(name_or_path: str) -> Path:
    """A bundled profile by name, or a table file by path (never a name that walks out of `spec/`)."""
    if not isinstance(name_or_path, str):
        raise TypeError(f"expected a profile name or a table path (str), got {type(name_or_path).__name__}")
    if looks_like_path(name_or_path):
        candidate = Path(name_or_path)
        if not candidate.is_file():
            what = "is not a file" if candidate.exists() else "does not exist"
            raise DefinitionError(f"{name_or_path}: the table file {what}")
        return candidate
    known = profile_names()
    if not PROFILE_NAME.fullmatch(name_or_path) or name_or_path not in known:
        raise DefinitionError(
            f"unknown profile {name_or_path!r}; bundled profiles: {', '.join(known)} "
            "(a table file is named by a path ending in .toml)"
        )
    return spec_dir() / f"{name_or_path}.toml"


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
