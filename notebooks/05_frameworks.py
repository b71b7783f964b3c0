# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The real loops side by side
#
# Every agent framework has a "max N" knob, and each means something different by it. This
# notebook puts the real loops turnbound models from their installed source side by side:
# deeptutor's `AgentLoop` and the bundled framework profiles (one table each in `spec/`, with
# the source line of every rule). For each: what the knob counts, how many model requests and
# tool executions a run can make as a function of N (the bound the prover proves for every N,
# drawn over the points), how a capped run ends, and the edge values.
#
# The numbers come from two places, and the notebook checks that they agree:
#
# - **the engines**, here and now: for each N the explorer finds every run of the table and
#   takes the longest; the prover proves the bound for all N;
# - **the installed framework**: each framework's nox session (`nox -t frameworks`, run by CI)
#   replays exactly those longest runs on the unchanged package, offline, through its adapter,
#   and writes what the real code did to `build/knob-points/<profile>.json`
#   (`turnbound knobs PROFILE --adapter ... --points FILE`). The CI step for deeptutor does
#   the same for its `AgentLoop`.
#
# Without those files (a fresh clone), the notebook draws the engines alone and says so.

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import Markdown, display
from turnbound.properties.knob_points import curve, read_points
from turnbound.properties.knobs import REQUESTS, TOOLS, framework_tables, knob_row
from turnbound.reference.profiles import load_profile

POINTS = Path(os.environ.get("TURNBOUND_KNOB_POINTS", "../build/knob-points"))
REQUIRE = os.environ.get("TURNBOUND_REQUIRE_KNOB_POINTS") == "1"
FIGURE = Path("../docs/figures/frameworks-knob-curves.svg")

frameworks = framework_tables()
agentloop = load_profile("deeptutor-agentloop")
loops = [(t, (REQUESTS, TOOLS), range(9)) for t in frameworks]
loops.append((agentloop, ("rounds",), range(6)))  # its explorations are large: N = 0..5
print(f"{len(loops)} real loops:", ", ".join(t.name for t, _, _ in loops))

# %% [markdown]
# ## What each knob counts
#
# The first parameter of each table is the knob; its documentation (in the table, with the
# source line) says what it counts. The explorer gives the exact maxima for N = 0..5; the
# prover's verdict holds for every N. This is the README's generated "what max N means" table.

# %%
rows = [knob_row(t) for t in frameworks]
lines = [
    "| loop | knob (default) | what it counts | requests, N = 0..5 | tool executions, N = 0..5 | exits at N = 3 |",
    "|---|---|---|---|---|---|",
]
for r in rows:
    lines.append(
        f"| {r.framework} | `{r.knob}` ({r.default}) | {r.counts} | {', '.join(map(str, r.requests))} | "
        f"{', '.join(map(str, r.tools))} | {', '.join(r.exits)} |"
    )
knob = agentloop.parameters[0]
lines.append(
    f"| deeptutor 1.6.15 AgentLoop | `{knob.name}` ({knob.default}) | rounds (its table counts model "
    "rounds, not requests and tools separately) | see the figure | — | `forced_finish` |"
)
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## The curves: engines, bound, real code
#
# For each loop and each N, the engines' longest run by each counter. Where the table states a
# bound on that counter over the parameters alone, its value at N is drawn as a line (the
# prover proves it for every N; where the longest run meets it, it is tight). Points measured
# on the installed framework are drawn as crosses over the engines' dots.

# %%
engine_curves = {t.name: curve(t, counters, ns=ns) for t, counters, ns in loops}

measured = {}
if POINTS.is_dir():
    for path in sorted(POINTS.glob("*.json")):
        profile, points = read_points(path)
        measured[profile] = points
missing = sorted({t.name for t, _, _ in loops} - set(measured))
if missing:
    note = f"no points measured on the real code for: {', '.join(missing)} (run nox -t frameworks)"
    if REQUIRE:
        raise SystemExit(note)
    print(note)

disagreements = []
for name, points in measured.items():
    ours = {(p.n, p.counter): p for p in engine_curves.get(name, [])}
    for p in points:
        mine = ours.get((p.n, p.counter))
        if mine is None:
            continue
        if (mine.engines, mine.exit) != (p.engines, p.exit):
            disagreements.append(f"{name} N={p.n} {p.counter}: engines now {mine.engines}, file {p.engines}")
        if not p.agrees:
            disagreements.append(f"{name} N={p.n} {p.counter}: engines {p.engines}, real code {p.real}")
assert not disagreements, "\n".join(disagreements)
print(f"real-code points checked: {sum(len(v) for v in measured.values())}, all on the engines' curves")

# %%
plt.rcParams.update({"svg.hashsalt": "turnbound", "svg.fonttype": "none"})
columns = 4
rows_n = -(-len(loops) // columns)
fig, axes = plt.subplots(rows_n, columns, figsize=(4 * columns, 3.2 * rows_n), squeeze=False)
colours = {REQUESTS: "tab:blue", TOOLS: "tab:orange", "rounds": "tab:green"}
for ax, (table, counters, _) in zip(axes.flat, loops, strict=False):
    points = engine_curves[table.name]
    real = {(p.n, p.counter): p for p in measured.get(table.name, [])}
    for counter in counters:
        mine = [p for p in points if p.counter == counter]
        ns = [p.n for p in mine]
        colour = colours[counter]
        formula = [(p.n, p.formula) for p in mine if p.formula is not None]
        if formula:
            ax.plot(*zip(*formula, strict=True), "-", color=colour, alpha=0.5, label=f"{counter} bound")
        ax.plot(ns, [p.engines for p in mine], "o", color=colour, ms=4, label=f"{counter}, engines")
        got = [(n, real[(n, counter)].real) for n in ns if (n, counter) in real]
        if got:
            ax.plot(*zip(*got, strict=True), "x", color="black", ms=7, label="real code")
    ax.set_title(table.title.split(":", 1)[0], fontsize=9)
    ax.set_xlabel(table.parameters[0].name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
for ax in list(axes.flat)[len(loops) :]:
    ax.axis("off")
fig.tight_layout()
FIGURE.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURE, metadata={"Date": None})
plt.show()

# %% [markdown]
# ## How a capped run ends, and the edge values
#
# At N = 3 (a value every knob accepts), which exit the longest runs take; at N = 0, how many
# requests are allowed. A loop that answers a capped run with an error and one that returns
# quietly look the same in a dashboard that counts requests; they are not the same to a user.

# %%
edge = []
for table, counters, _ in loops:
    by = {(p.n, p.counter): p for p in engine_curves[table.name]}
    first = counters[0]
    edge.append(
        f"| {table.name} | {by[(3, first)].exit} | {by[(0, first)].engines} {first} at N = 0 | "
        f"{by[(1, first)].engines} at N = 1 |"
    )
display(
    Markdown(
        "| profile | exit of the longest run, N = 3 | N = 0 | N = 1 |\n|---|---|---|---|\n" + "\n".join(edge)
    )
)

# %% [markdown]
# ## What to take away
#
# The findings pages in `docs/frameworks/` give each framework's surprises with the witness
# run that shows it. In one line each: the knob counts different things (model responses,
# model invocations, graph super-steps, LLM calls, steps), is checked at different moments
# (before the request, after the response), and a capped run ends differently (an exception,
# a forced final answer, an error exit). A number N in two frameworks' configurations is not
# the same budget.

# %%
print(json.dumps({t.name: len(engine_curves[t.name]) for t, _, _ in loops}, sort_keys=True))
