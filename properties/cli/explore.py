"""`turnbound explore`: every reachable state, for one configuration or a sweep of them."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from turnbound.properties.cli.app import app, emit_json, finish, json_option, parse_param_ranges, usage_error
from turnbound.properties.cli.explore_report import count_text, exploration_json, print_exploration
from turnbound.properties.explore.explorer import DEFAULT_MAX_STATES, explore
from turnbound.properties.explore.sweep import DEFAULT_JOBS, configurations, explore_all, tally
from turnbound.properties.graph.files import write_dot, write_graphml
from turnbound.reference.limits import MAX_JOBS
from turnbound.reference.profiles import load_profile


@app.command("explore")
@click.argument("profile")
@click.option(
    "--param",
    "-p",
    "param",
    multiple=True,
    metavar="NAME=V|NAME=LO..HI",
    help="A value or range (repeatable). Without any, every parameter sweeps its table range; "
    "with some, the others stay at their defaults.",
)
@click.option("--dot", type=click.Path(path_type=Path, dir_okay=False), help="Write the graph as DOT.")
@click.option(
    "--graphml", type=click.Path(path_type=Path, dir_okay=False), help="Write the graph as GraphML."
)
@click.option(
    "--jobs", type=click.IntRange(1, MAX_JOBS), default=DEFAULT_JOBS, show_default=True, help="Workers."
)
@click.option(
    "--max-states",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_STATES,
    show_default=True,
    help="Per configuration; beyond it the graph is presumed infinite.",
)
@click.option(
    "--all-states",
    is_flag=True,
    help="Store every state, not only the initial state, terminals, host-call points and leaves "
    "(SPIN's atomic steps, the default); verdicts are the same, the state counts larger.",
)
@json_option
def explore_cmd(
    profile: str,
    param: tuple[str, ...],
    dot: Path | None,
    graphml: Path | None,
    jobs: int,
    max_states: int,
    all_states: bool,
    as_json: bool,
) -> None:
    """Explore every reachable state of PROFILE (a bundled name or a .toml path).

    Checks invariants on every state, bounds on every terminal, trace properties on
    every path and that every run terminates; prints each counterexample as the
    shortest trace, replayed on the interpreter. Exit 1 if a claim's verdict differs
    from its `expect` or a witness does not replay.
    """
    table = load_profile(profile)
    configs = configurations(table, parse_param_ranges(param) if param else None)
    if (dot or graphml) and len(configs) != 1:
        usage_error(
            f"--dot/--graphml write one graph, but the parameters give {len(configs)} configurations; "
            "give each parameter one value (--param name=value)"
        )
    started = time.perf_counter()
    files: dict[str, str] = {}
    if len(configs) == 1:
        # the graph files have every state: searching so once, not atomically and then again
        every = all_states or bool(dot or graphml)
        exploration = explore(table, configs[0], max_states=max_states, exits=True, all_states=every)
        summaries = [exploration.summary]
        if dot:
            write_dot(exploration, dot)
            files["dot"] = str(dot)
        if graphml:
            write_graphml(exploration, graphml)
            files["graphml"] = str(graphml)
    else:
        summaries = explore_all(table, configs, jobs=jobs, max_states=max_states, all_states=all_states)
    seconds = time.perf_counter() - started
    tallies = tally(summaries)
    ok = all(s.ok for s in summaries)
    if as_json:
        emit_json(exploration_json(table, configs, summaries, tallies, files, ok))
    else:
        print_exploration(table, configs, summaries, tallies, files, ok)
        states = sum(s.states for s in summaries)
        rate = f" ({states / seconds:,.0f} states/s)" if seconds > 0 else ""
        done = count_text(len(summaries), "configuration")
        counted = summaries[0].counted if summaries else "states"
        sys.stderr.write(f"explored {done}, {states:,} {counted} in {seconds:.2f} s{rate}\n")
    finish(ok)
