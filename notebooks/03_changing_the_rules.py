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
# # Changing the rules
#
# A table is data, so a question like *"what if the scheduler allowed two recoveries?"* is
# an edit to a TOML text, not a change to any engine. This notebook takes the
# `deeptutor-scheduler` table, changes one rule at a time, and re-runs the explorer and the
# prover on each version to see which claims break, with the counterexample traces.
#
# The two edits:
#
# 1. **two recoveries**: at the exhausted boundary, `prepare_recovery` may be asked twice
#    instead of once;
# 2. **two extra rounds**: the forced finish may report `extraRounds = 2`, which the
#    original table's runtime contract rejects.

# %%
from IPython.display import SVG, Markdown, display
from turnbound.properties.explore.explorer import describe_outcome, explore
from turnbound.properties.graph.model import control_flow, highlight, trace_edges
from turnbound.properties.graph.render import render_graph
from turnbound.properties.prove.prover import Prover
from turnbound.reference.loader import load_table_text
from turnbound.reference.profiles import table_path

PARAMS = {"explorationBudget": 1, "settlementBudget": 1}
original_text = table_path("deeptutor-scheduler").read_text(encoding="utf-8")


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))


def edit(text, *replacements):
    """Apply exact text replacements, each of which must match exactly once."""
    for old, new in replacements:
        assert text.count(old) == 1, f"the table no longer contains exactly one {old!r}"
        text = text.replace(old, new)
    return text


def show_trace(trace):
    for i, step in enumerate(trace.steps, 1):
        args = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in step.args.items())
        counters = " ".join(f"{k}={v}" for k, v in step.counters.items())
        answer = describe_outcome(step.outcome)
        print(f"{i:2}. {step.transition:22} {step.op}({args}) -> {answer}   [{counters}]")
    print(f"    terminal: {trace.terminal}")


# %% [markdown]
# ## The edits, as text
#
# **Two recoveries.** A counter of recovery offers replaces the one-shot flag at the loop
# boundary: offer while fewer than two were made, reject completion after the second.

# %%
GUARD = "exploration_rounds >= explorationBudget and settlement_rounds >= settlementBudget"
two_recoveries = edit(
    original_text,
    (
        "[variables.recovery_used]",
        '[variables.recoveries]\ntype = "int"\ninit = "0"\n\n[variables.recovery_used]',
    ),
    (f'guard = "{GUARD} and not recovery_used"', f'guard = "{GUARD} and recoveries < 2"'),
    (
        'update = { recovery_used = "true" }',
        'update = { recovery_used = "true", recoveries = "recoveries + 1" }',
    ),
    (f'guard = "{GUARD} and recovery_used"', f'guard = "{GUARD} and recoveries >= 2"'),
)

# %% [markdown]
# **Two extra rounds.** The forced finish's fact domain widens from `0..1` to `0..2`.

# %%
two_extra_rounds = edit(
    original_text,
    (
        'facts.extraRounds = { type = "int", min = 0, max = 1 }',
        'facts.extraRounds = { type = "int", min = 0, max = 2 }',
    ),
)

# %% [markdown]
# Each text loads like a bundled table: the loader validates it (names, types, and with z3
# that the guards of every location neither overlap nor leave a case uncovered).

# %%
versions = {
    "original": load_table_text(original_text, source="deeptutor-scheduler.toml"),
    "two recoveries": load_table_text(two_recoveries, source="<two recoveries>"),
    "two extra rounds": load_table_text(two_extra_rounds, source="<two extra rounds>"),
}
for name, t in versions.items():
    print(f"{name:17} {len(t.transitions)} transitions, {len(t.variables)} variables")

# %% [markdown]
# ## Which claims break
#
# The explorer checks every claim on every reachable state at the seed's parameters
# (`explorationBudget = settlementBudget = 1`); the prover checks them for **all** parameter
# values. A claim that breaks in the explorer is refuted by the prover too; the prover can
# also break claims the small parameters never reach.

# %%
explored = {name: explore(t, PARAMS) for name, t in versions.items()}
proved = {name: {r.goal.name: r for r in Prover(t, timeout=10.0).prove_all()} for name, t in versions.items()}

claims = [c for c in explored["original"].summary.claims if c.name in proved["original"]]
rows = []
for c in claims:
    cells = []
    for name in versions:
        e = explored[name].summary.claim(c.name).verdict
        p = proved[name][c.name].verdict
        mark = "" if (e == "holds") == (c.expect == "holds") else " **(breaks)**"
        cells.append(f"{e} / {p}{mark}")
    rows.append((c.name, f"`{c.text}`", c.expect, *cells))
md_table(["claim", "expression", "expected", *(f"{n}: explorer / prover" for n in versions)], rows)

# %%
for name in versions:
    s = explored[name].summary
    broken = [c.name for c in s.claims if not c.as_expected]
    print(f"{name:17} {s.states:5} states, worst case {s.max}; claims broken: {', '.join(broken) or 'none'}")

# %% [markdown]
# ## The counterexamples
#
# For each edit, the shortest run the explorer found that breaks the headline bound
# `rounds <= explorationBudget + settlementBudget + 1`, replayed on the interpreter, and the
# same run drawn over the edited table's control flow.

# %%
for name in ("two recoveries", "two extra rounds"):
    v = explored[name].summary.violation("rounds_bound")
    print(f"== {name}: {v.message}")
    print(f"   {v.witness.line}")
    show_trace(v.witness.trace)
    print()

# %%
for name in ("two recoveries", "two extra rounds"):
    t = versions[name]
    v = explored[name].summary.violation("rounds_bound")
    picture = highlight(
        control_flow(t),
        trace_edges(t, v.witness.trace),
        note=f"{name}: red is the shortest run breaking rounds_bound ({v.witness.line})",
    )
    display(SVG(render_graph(picture, "svg")))

# %% [markdown]
# The prover's counterexamples are not limited to the seed's parameters: it picks the
# parameter values itself, and every witness is replayed on the interpreter before it is
# reported.

# %%
for name in ("two recoveries", "two extra rounds"):
    r = proved[name]["rounds_bound"]
    print(f"== {name}: rounds_bound {r.verdict} ({r.method}); parameters {r.witness.params}")
    show_trace(r.witness.trace)
    print()

# %% [markdown]
# What the numbers say: with two recoveries the worst case grows to
# `explorationBudget + settlementBudget + 2`, and the settlement counter may now exceed
# its budget by two; with two extra rounds only `rounds` moves (the stage counters do not
# see the forced finish), so a reader who checks the stage counters would never notice.
