"""The shared CLI application object, its console and small parsing helpers for commands."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import MAX_PARAMETER_RANGE, MAX_PARAMETER_VALUE, MAX_SECONDS


@click.group(name="turnbound", context_settings={"help_option_names": ["-h", "--help"]})
def app() -> None:
    """Model checking, property tests and a reference implementation for agent turn budgets."""


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output on stdout.")
param_option = click.option(
    "--param", "-p", "param", multiple=True, metavar="NAME=VALUE", help="A parameter value (repeatable)."
)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


class CommandFailed(Exception):
    """Ends a command with an exit code after its report was printed."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def finish(ok: bool) -> None:
    if not ok:
        raise CommandFailed(1)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def usage_error(message: str) -> NoReturn:
    raise DefinitionError(message)


_F = TypeVar("_F", bound=Callable[..., Any])


def seconds_option(*decls: str, minimum: float = 0.0, default: float, help: str) -> Callable[[_F], _F]:
    """A duration option: a finite number of seconds above zero (nan, inf, 0 and -1 are refused)."""

    def check(ctx: click.Context, param: click.Parameter, value: float) -> float:
        if not math.isfinite(value) or value <= 0 or value < minimum or value > MAX_SECONDS:
            low = f"at least {minimum:g}" if minimum else "above 0"
            raise click.BadParameter(
                f"{value!r} is not a duration: give seconds {low}, at most {MAX_SECONDS:g}"
            )
        return value

    return click.option(*decls, type=float, default=default, show_default=True, callback=check, help=help)


def parse_param_values(items: tuple[str, ...] | list[str] | None) -> dict[str, int]:
    """`name=value` pairs as integers."""
    out: dict[str, int] = {}
    for name, values in parse_param_ranges(items).items():
        if len(values) != 1:
            usage_error(f"--param {name}: a range is not allowed here; give one value")
        out[name] = values[0]
    return out


def parse_param_ranges(items: tuple[str, ...] | list[str] | None) -> dict[str, list[int]]:
    """`name=value` or `name=lo..hi` pairs, each as the list of values it stands for."""
    out: dict[str, list[int]] = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            usage_error(f"--param {item!r}: expected name=value or name=lo..hi")
        if name.strip() in out:
            usage_error(f"--param {name.strip()} is given twice; give each parameter once")
        lo_text, dots, hi_text = text.partition("..")
        if len(lo_text.strip()) > 20 or len(hi_text.strip()) > 20:
            usage_error(f"--param {name.strip()}: values are limited to ±{MAX_PARAMETER_VALUE}")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if dots else lo
        except ValueError:
            usage_error(f"--param {item!r}: values must be integers")
        if max(abs(lo), abs(hi)) > MAX_PARAMETER_VALUE:
            usage_error(f"--param {item!r}: values are limited to ±{MAX_PARAMETER_VALUE}")
        if hi < lo:
            usage_error(f"--param {item!r}: the range is empty")
        if hi - lo + 1 > MAX_PARAMETER_RANGE:
            usage_error(
                f"--param {item!r}: the range has {hi - lo + 1} values; the limit is {MAX_PARAMETER_RANGE}"
            )
        out[name.strip()] = list(range(lo, hi + 1))
    return out
