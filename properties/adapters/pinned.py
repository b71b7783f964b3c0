"""The one check every real-code adapter makes before importing its framework: the installed
distribution is the version its table models (a different one is a different loop)."""

from __future__ import annotations

from importlib import metadata

from turnbound.reference.errors import DefinitionError


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def require_pinned(profile: str, pins: dict[str, str], install_hint: str) -> None:
    """One clear line if a pinned distribution is missing or at another version."""
    for distribution, wanted in pins.items():
        version = installed_version(distribution)
        if version is None:
            raise DefinitionError(
                f"{profile}: {distribution} is not installed; install it with: {install_hint}"
            )
        if version != wanted:
            raise DefinitionError(
                f"{profile}: {distribution} {version} is installed, but this adapter and its table model "
                f"{wanted}; install it with: {install_hint}"
            )
