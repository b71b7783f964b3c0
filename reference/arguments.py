"""Argument checks at the Python API's boundary: a wrong type is a TypeError that says what was
expected and how to get it, raised where the caller made the mistake, not an AttributeError
from deep inside an engine or a Hypothesis run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnbound.reference.table import Table


def require_table(value: object, where: str) -> None:
    """A loaded `Table` (a profile name is not one: load it first)."""
    if isinstance(value, Table):
        return
    hint = (
        f"; load it first: load_profile({value!r})"
        if isinstance(value, str)
        else " (load one with load_profile or load_table)"
    )
    raise TypeError(f"{where}: expected a Table, got {type(value).__name__}{hint}")


def require_host(value: object, where: str) -> None:
    """An object with a `call(op, args)` method (ScriptHost, ObjectHost or your own)."""
    if callable(getattr(value, "call", None)):
        return
    hint = "; wrap a script in ScriptHost(Script(...))" if isinstance(value, Mapping) else ""
    raise TypeError(
        f"{where}: expected a host with a call(op, args) method, got {type(value).__name__}{hint}"
    )


def require_params(value: object, where: str) -> None:
    """None or a mapping of parameter names to integers."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: params must be a mapping of name to int, got {type(value).__name__}")
    for name, v in value.items():
        if not isinstance(name, str):
            raise TypeError(f"{where}: parameter names are str, got {type(name).__name__}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{where}: parameter {name} must be an int, got {type(v).__name__}")


def require_count(value: object, where: str, name: str, minimum: int = 1) -> None:
    """A whole number at least `minimum` (a limit of 0 states or steps would silently mean nothing)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value}")


def require_factory(value: Any, where: str, name: str) -> None:
    """A callable that makes a fresh object per example (not an instance shared by all of them)."""
    if callable(value) and (isinstance(value, type) or not hasattr(value, "start")):
        return
    kind = type(value).__name__
    raise TypeError(
        f"{where}: {name} must be a factory that returns a fresh scheduler for each example, got a {kind} "
        f"instance; pass `lambda: {kind}(...)` instead"
    )
