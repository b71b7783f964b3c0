"""`turnbound conform`: check an implementation (a command speaking protocol v1, or a Python adapter)."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import shlex
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    finish,
    json_option,
    seconds_option,
    usage_error,
)
from turnbound.properties.conformance.cases import ConformCase, ConformCaseResult, bundled_cases
from turnbound.properties.conformance.generated import fuzz_cases
from turnbound.properties.conformance.runner import (
    ConformReport,
    Progress,
    conform,
    failure_details,
    junit_xml,
    report_json,
)
from turnbound.properties.conformance.vectors import bundled_vector_cases, vector_cases
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.properties.export.itf import write_itf
from turnbound.properties.fuzz.report import fuzz_counts
from turnbound.properties.scheduler import (
    BREAKER,
    ReferenceScheduler,
    RunFunction,
    Scheduler,
    SchedulerFault,
    ThreadedScheduler,
)
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table


@app.command("conform")
@click.argument("profile")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--vectors", "vectors_dir", type=click.Path(path_type=Path), metavar="DIR", help="Run the vectors in DIR."
)
@click.option("--fuzz", type=click.IntRange(min=0), default=0, help="Add N generated runs (see --fuzzer).")
@click.option(
    "--fuzzer",
    type=click.Choice(["hypothesis", "scripts"]),
    default="hypothesis",
    show_default=True,
    help="hypothesis: N examples of the table's Hypothesis machine (several turns each); "
    "scripts: N seeded random host scripts, shrunk greedily (much faster).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated runs.")
@seconds_option("--timeout", minimum=0.01, default=10.0, help="Seconds per message.")
@click.option("--junit", type=click.Path(path_type=Path), metavar="FILE", help="Write JUnit XML to FILE.")
@click.option(
    "--itf",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Write the first counterexample as ITF to FILE.",
)
@click.option("--adapter", metavar="MODULE:NAME", help="An in-process Python scheduler instead of a command.")
@click.option(
    "--keep-going",
    is_flag=True,
    help=f"Run every case even after {BREAKER} in a row failed because the implementation hangs, "
    "exits or breaks the protocol.",
)
@json_option
def conform_cmd(
    profile: str,
    command: tuple[str, ...],
    vectors_dir: Path | None,
    fuzz: int,
    fuzzer: str,
    seed: int,
    timeout: float,
    junit: Path | None,
    itf: Path | None,
    adapter: str | None,
    keep_going: bool,
    as_json: bool,
) -> None:
    """Check an implementation of PROFILE against the reference: conform PROFILE [options] -- COMMAND...

    COMMAND is started once and speaks wire protocol v1 on stdin/stdout (spec/PROTOCOL.md);
    --adapter MODULE:NAME instead names a Python Scheduler, a factory of one, or a run function.
    """
    table = load_profile(profile)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(adapter):
        usage_error("name the implementation: -- COMMAND [ARGS...], or --adapter MODULE:NAME")
    scripts = fuzz if fuzzer == "scripts" else 0
    examples = fuzz if fuzzer == "hypothesis" else 0
    cases = _cases(table, vectors_dir, scripts, seed)
    if not cases and not examples:
        usage_error(f"{table.name}: nothing to run (no cases, no vectors, no --fuzz)")
    wire: WireScheduler | None = None
    if command:
        wire = WireScheduler(command, table, timeout=timeout)
        try:  # a command that cannot start is bad input, not a failure of every case
            wire.spawn()
        except SchedulerFault as exc:
            usage_error(str(exc))
        scheduler: Scheduler = wire
        name = shlex.join(command)
    else:
        assert adapter is not None
        scheduler, name = load_adapter(adapter, table, timeout), adapter
    try:
        with _progress_bar(sys.stderr.isatty()) as progress:
            report = conform(
                table,
                scheduler,
                cases,
                implementation=name,
                machine_examples=examples,
                seed=seed,
                restarts=(lambda: wire.starts - 1) if wire else None,
                keep_going=keep_going,
                progress=progress,
            )
    except KeyboardInterrupt:
        raise click.exceptions.Abort() from None
    if junit is not None:
        _write(junit, junit_xml(report))
    if itf is not None:
        _write_itf(itf, table, report)
    if as_json:
        emit_json(report_json(report))
    else:
        _print(report, cases)
    finish(report.passed)


@contextlib.contextmanager
def _progress_bar(shown: bool) -> Iterator[Progress | None]:
    """A progress bar on stderr when it is a terminal; nothing at all otherwise."""
    if not shown:
        yield None
        return
    columns = (TextColumn("conform"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with RichProgress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("cases", total=None)

        def tell(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield tell


def _cases(table: Table, vectors_dir: Path | None, fuzz: int, seed: int) -> list[ConformCase]:
    if vectors_dir is not None:
        cases = vector_cases(table, vectors_dir)
    else:
        cases = bundled_cases(table) + bundled_vector_cases(table)
    return cases + fuzz_cases(table, fuzz, seed)


def load_adapter(spec: str, table: Table, timeout: float) -> Scheduler:
    """MODULE:NAME as a Scheduler: an instance, a factory (no argument, or the table), or a run function."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        usage_error(f"--adapter {spec!r}: expected MODULE:NAME")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        raise DefinitionError(f"--adapter {spec}: cannot import {module_name}: {exc}") from None
    except AttributeError:
        raise DefinitionError(f"--adapter {spec}: {module_name} has no {attr!r}") from None
    if target is ReferenceScheduler:
        return ReferenceScheduler(table)
    if all(hasattr(target, m) for m in ("start", "send", "close")) and not inspect.isclass(target):
        return target  # type: ignore[no-any-return]
    if not callable(target):
        raise DefinitionError(f"--adapter {spec}: not a Scheduler and not callable")
    required = [
        p
        for p in inspect.signature(target).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(required) == 2:
        run: RunFunction = target
        return ThreadedScheduler(run, timeout=timeout)
    made = target() if not required else target(table)
    if not all(hasattr(made, m) for m in ("start", "send", "close")):
        raise DefinitionError(
            f"--adapter {spec}: the factory returned {type(made).__name__}, not a Scheduler"
        )
    return made  # type: ignore[no-any-return]


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot write: {exc.strerror}") from None


def _write_itf(path: Path, table: Table, report: ConformReport) -> None:
    failures = report.failures
    if report.machine is not None and report.machine.failure is not None:
        failures.append(report.machine.failure)
    if not failures:
        return
    first = failures[0]
    observed = first.observed
    meta = {
        "description": f"conformance counterexample: {first.case.kind} {first.case.id}: {first.divergence}",
        "case": first.case.id,
        "divergence": first.divergence,
        "implementation": report.implementation,
        "observed": [{"op": op, "args": args} for op, args, _ in observed.calls],
        "observed_end": (
            {"terminal": observed.end.terminal, "counters": observed.end.counters}
            if observed.end
            else {"fault": observed.fault}
        ),
    }
    write_itf(path, table, first.case.expected, meta)


def _print(report: ConformReport, cases: list[ConformCase]) -> None:
    kinds: Counter[str] = Counter(c.kind for c in cases)
    parts = [
        f"{kinds[k]} {label}"
        for k, label in (("case", "cases"), ("vector", "vectors"), ("fuzz", "generated"))
    ]
    console.print(
        f"conform {report.profile}: {', '.join(parts)} against {report.implementation}", markup=False
    )
    shown: dict[str, str] = {}
    for r in report.failures:
        same = report.duplicates.get(r.case.id)
        if same is not None:
            console.print(
                f"FAIL {r.case.kind} {r.case.id}: {r.divergence} "
                f"(the same first divergence as {same}, not shrunk)",
                markup=False,
                soft_wrap=True,
            )
            continue
        key = f"{_params(r.case)} {r.case.script.model_dump_json(by_alias=True)}"
        if r.case.kind == "fuzz" and key in shown:
            console.print(
                f"FAIL {r.case.kind} {r.case.id}: shrinks to the case of {shown[key]}", markup=False
            )
            continue
        shown[key] = r.case.id
        console.print(f"FAIL {r.case.kind} {r.case.id}: {r.divergence}", markup=False, soft_wrap=True)
        _print_failure(r)
    m = report.machine
    if m is not None:
        ran = f"{fuzz_counts(m.examples, m.turns, m.steps)}, seed {m.seed}"
        if m.passed:
            console.print(f"hypothesis machine: {ran}: no divergence", markup=False)
        else:
            console.print(f"FAIL hypothesis {m.id} ({ran}): {m.message}", markup=False, soft_wrap=True)
            if m.failure is not None and not m.failure.passed:
                _print_failure(m.failure)
    if report.stopped:
        console.print(
            f"stopped: {len(report.not_run)} cases not run after {report.stopped}; "
            "--keep-going runs them all",
            markup=False,
            soft_wrap=True,
        )
    if report.restarts:
        times = "once" if report.restarts == 1 else f"{report.restarts} times"
        console.print(f"the implementation was restarted {times} after faults", markup=False)
    console.print(report.summary, markup=False)


def _print_failure(r: ConformCaseResult) -> None:
    for line in failure_details(r):
        console.print(f"    {line}", markup=False, soft_wrap=True)
    if r.case.kind == "fuzz":
        script = r.case.script.model_dump_json(by_alias=True, exclude_defaults=True)
        replay = f'{{"params": {_params(r.case)}, "script": {script}}}'
        console.print(f"    replay (turnbound run --script): {replay}", markup=False, soft_wrap=True)


def _params(case: ConformCase) -> str:
    return "{" + ", ".join(f'"{k}": {v}' for k, v in case.params.items()) + "}"
