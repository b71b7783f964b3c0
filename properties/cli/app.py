"""The shared CLI application object, its console and small parsing helpers for commands."""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import MAX_PARAMETER_RANGE, MAX_PARAMETER_VALUE, MAX_SECONDS

COMMANDS: dict[str, tuple[str, str]] = {
    "check": (
        "check",
        "Check PROFILES (default: every bundled profile) with cases, exploration, fuzzing and proofs.",
    ),
    "conform": (
        "conform",
        "Check an implementation of PROFILE against the reference: conform PROFILE [options] -- COMMAND...",
    ),
    "explore": ("explore", "Explore every reachable state of PROFILE (a bundled name or a .toml path)."),
    "export": ("export", "A table in another engine's language."),
    "fuzz": ("fuzz", "Fuzz PROFILE with the Hypothesis state machine generated from its table."),
    "graph": ("graph", "Draw PROFILE (a bundled name or a .toml path) as a picture."),
    "knobs": (
        "knobs",
        'The "what max N means" table of the framework PROFILES (default: every bundled one).',
    ),
    "mutate": ("mutate", "Mutate PROFILE's table systematically and report which engine kills each mutant."),
    "profiles": ("interpret", "List the bundled profiles."),
    "prove": (
        "prove",
        "Prove the invariants, bounds and trace properties of PROFILE for all parameter values.",
    ),
    "run": ("interpret", "Run the reference on PROFILE (a bundled name or a .toml path)."),
    "validate": (
        "validate",
        "Check LOG (protocol v1 messages, one JSON object per line) against PROFILE's table.",
    ),
    "vectors": (
        "vectors",
        "Conformance vectors: language-neutral runs of the reference (spec/vectors/<profile>/).",
    ),
}
"""Each command: the module under `turnbound.properties.cli` that defines it, and the first
paragraph of its help, which `--help` shortens as click does (a test checks both against the
commands themselves)."""


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs: `turnbound --help` and
    `turnbound run` do not pay for the explorer, the prover or Hypothesis."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"turnbound.properties.cli.{COMMANDS[cmd_name][0]}")
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        rows = []
        for name in names:
            if name in self.commands:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
            else:
                rows.append((name, short_help(COMMANDS[name][1], limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def short_help(text: str, limit: int) -> str:
    """A help paragraph shortened exactly as click shortens a command's own."""
    return click.Command("_", help=text).get_short_help_str(limit)


@click.group(name="turnbound", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def app() -> None:
    """Model checking, property tests and a reference implementation for agent turn budgets."""


def load_all_commands() -> None:
    """Import every command module (documentation and tests that walk the whole command tree)."""
    for module in sorted({m for m, _ in COMMANDS.values()}):
        importlib.import_module(f"turnbound.properties.cli.{module}")


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
