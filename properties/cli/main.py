"""The `turnbound` entry point: `main(argv) -> int`, also runnable as `python -m turnbound.properties`."""

from __future__ import annotations

import sys

import click
from turnbound.properties.cli.app import CommandFailed, app
from turnbound.reference.errors import TurnboundError


def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input is one line on stderr and exit code 2, never a traceback."""
    try:
        app(args=argv, prog_name="turnbound", standalone_mode=False)
    except CommandFailed as exc:
        return exc.code
    except TurnboundError as exc:
        sys.stderr.write(f"turnbound: error: {exc}\n")
        return 2
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.ClickException as exc:
        sys.stderr.write(f"turnbound: error: {exc.format_message()}\n")
        return 2
    except click.exceptions.Abort:
        sys.stderr.write("turnbound: aborted\n")
        return 130
    return 0


def run() -> None:
    sys.exit(main())
