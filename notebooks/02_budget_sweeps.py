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
# # Budget sweeps
#
# What is the worst case of a counter as a budget grows? For every bundled profile and every
# bound of the form `counter <= formula of the parameters`, this notebook
#
# - sweeps each parameter the formula reads over the table's explore range (the others stay
#   at their default, clipped into that range), and lets the explorer measure the worst
#   case of the counter over **every** host behaviour at each point;
# - asks the prover whether the formula holds for **all** parameter values, and draws it
#   over the measured points: a point on the line means the bound is met exactly there;
# - shows how turns end: the distribution of exit paths (terminal kinds) over all host
#   behaviours.
#
# Nothing here names a profile: a new table in `spec/` shows up on the next run.

# %%
import textwrap

import matplotlib.pyplot as plt
from IPython.display import Markdown, display
from matplotlib.ticker import MaxNLocator
from turnbound.properties.explore.explorer import explore
from turnbound.properties.graph.model import exit_shares
from turnbound.properties.prove.prover import Prover
from turnbound.properties.explore.sweep import explore_all
from turnbound.reference.expr import Compare, refs, render
from turnbound.reference.profiles import load_profile, profile_names

MAX_STATES = 10_000
"""Configurations with more reachable states are left out, so the notebook stays quick."""
PROOF_TIMEOUT_S = 3.0
"""Per claim; the induction proofs take well under a second, the rest goes to the tightness search."""

tables = [load_profile(name) for name in profile_names()]


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))


def base_config(table):
    """Each parameter's default, clipped into its explore range."""
    return {p.name: min(max(p.default, p.range[0]), p.range[1]) for p in table.parameters}


def sides(bound):
    """`counter <= formula` (or `formula >= counter`) whose formula reads parameters only."""
    e = bound.expr
    if not isinstance(e, Compare) or e.op not in ("<=", ">="):
        return None
    lhs, rhs = (e.left, e.right) if e.op == "<=" else (e.right, e.left)
    knobs = sorted(r.name for r in refs(rhs) if r.kind == "param")
    if not knobs or any(r.kind != "param" for r in refs(rhs)):
        return None
    return lhs, rhs, knobs


# %% [markdown]
# ## Worst cases, measured and proved

# %%
plans = {}
for table in tables:
    plotted = [(b, *s) for b in table.bounds if (s := sides(b)) is not None]
    if not plotted:
        continue
    base = base_config(table)
    knobs = sorted({k for *_, ks in plotted for k in ks}, key=[p.name for p in table.parameters].index)
    configs = []
    for knob in knobs:
        lo, hi = table.parameter(knob).range
        configs += [c for v in range(lo, hi + 1) if (c := {**base, knob: v}) not in configs]
    summaries = explore_all(table, configs, max_states=MAX_STATES, progress=False)
    measured = {tuple(s.params.items()): s for s in summaries if s.complete}
    proofs = {
        r.goal.name: r
        for r in Prover(table, timeout=PROOF_TIMEOUT_S).prove_all([b.name for b, *_ in plotted])
    }
    plans[table.name] = (table, base, plotted, measured, proofs, len(configs))
    print(f"{table.name}: {len(measured)} of {len(configs)} configurations explored (<= {MAX_STATES} states)")

# %%
VERDICT = {"proved": "proved for all values", "refuted": "refuted", "unknown": "not decided in time"}
COLUMNS = 3

for name, (table, base, plotted, measured, proofs, _) in plans.items():
    panels = [(b, lhs, rhs, knob) for b, lhs, rhs, knobs in plotted for knob in knobs]
    rows_n = -(-len(panels) // COLUMNS)
    fig, axes = plt.subplots(rows_n, COLUMNS, figsize=(13, 3.9 * rows_n), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (bound, lhs, _, knob) in zip(axes.flat, panels, strict=False):
        lo, hi = table.parameter(knob).range
        xs, worst, formula = [], [], []
        for v in range(lo, hi + 1):
            s = measured.get(tuple({**base, knob: v}.items()))
            if s is None:
                continue
            c = s.claim(bound.name)
            xs.append(v)
            worst.append(c.lhs_max)
            formula.append(c.rhs)
        claim = textwrap.fill(render(bound.expr), 52)
        ax.plot(xs, formula, "-", color="tab:blue", linewidth=2, label="the bound's formula")
        ax.plot(xs, worst, "o", color="tab:red", markersize=8, label="worst case (explorer)")
        ax.set_title(f"{bound.name}: {VERDICT[proofs[bound.name].verdict]}\n{claim}", fontsize=9)
        fixed = ", ".join(f"{k}={v}" for k, v in base.items() if k != knob)
        ax.set_xlabel(f"{knob}\n({fixed})" if fixed else knob, fontsize=9)
        ax.set_ylabel(f"worst-case {render(lhs)}")
        ax.set_xticks(range(lo, hi + 1))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.margins(y=0.15)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{name}: worst case over every host behaviour vs. the bound", fontsize=12)
    fig.tight_layout()
    plt.show()

# %%
rows = []
for name, (_, _, plotted, measured, proofs, _) in plans.items():
    for bound, *_ in plotted:
        p = proofs[bound.name]
        points = [s.claim(bound.name) for s in measured.values()]
        met = sum(1 for c in points if c.tight)
        rows.append(
            (
                name,
                bound.name,
                f"`{render(bound.expr)}`",
                bound.expect,
                p.verdict,
                f"{met} of {len(points)}",
                f"{p.seconds:.1f}",
            )
        )
md_table(
    ["profile", "bound", "claim", "expected", "prover", "met exactly (explored points)", "proof s"], rows
)

# %% [markdown]
# A bound that holds and is met exactly at every explored point is **tight**: no smaller
# formula of the same parameters would do. A refuted bound (`expected: violated`) is a
# reading the table disproves; its measured points lie above the line.
#
# ## How turns end
#
# Each run ends at one terminal: its exit path. Over all host behaviours (every outcome of
# every host call, failures and aborts included), how are the exits distributed? Two
# measures, both from the explorer's state graph at each profile's default configuration:
#
# - **behaviours**: the number of distinct outcome sequences that end there (long turns
#   have many more sequences, so they dominate this count);
# - **random host**: the probability of ending there when the host answers every call with
#   an outcome drawn uniformly from its domain.

# %%
exits = {}
for table in tables:
    for params in (base_config(table), {p.name: p.range[0] for p in table.parameters}):
        x = explore(table, params, max_states=MAX_STATES)
        if x.summary.complete:
            exits[table.name] = (params, exit_shares(x))
            break
    else:
        print(f"{table.name}: more than {MAX_STATES} states even at its smallest configuration; left out")

md_table(
    ["profile", "parameters", "exit", "behaviours", "random host"],
    [
        (
            name,
            ", ".join(f"{k}={v}" for k, v in params.items()),
            e.terminal,
            f"{e.paths:,}",
            f"{e.probability:.1%}",
        )
        for name, (params, shares) in exits.items()
        for e in shares.values()
    ],
)

# %%
kinds = sorted({k for _, shares in exits.values() for k in shares})
colours = {k: plt.get_cmap("tab20")(i % 20) for i, k in enumerate(kinds)}
names = list(exits)
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.7 * len(names) + 2.2), sharey=True)
for ax, measure, title in (
    (left, "paths", "share of distinct host behaviours"),
    (right, "probability", "probability under a uniformly random host"),
):
    for row, name in enumerate(names):
        shares = exits[name][1]
        total = sum(getattr(e, measure) for e in shares.values())
        start = 0.0
        for kind, e in shares.items():
            width = getattr(e, measure) / total
            ax.barh(row, width, left=start, color=colours[kind], edgecolor="white")
            if width > 0.12:
                ax.text(start + width / 2, row, kind, ha="center", va="center", fontsize=7)
            start += width
    ax.set_xlim(0, 1)
    ax.set_xlabel(title)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
left.set_yticks(range(len(names)), names)
left.invert_yaxis()
handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in kinds]
fig.legend(handles, kinds, title="exit (terminal)", loc="center right", fontsize=8)
fig.suptitle("How turns end, over every host behaviour (default configuration of each profile)")
fig.tight_layout(rect=(0, 0, 0.86, 1))
plt.show()
