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
# # Comparing disciplines
#
# The three seed systems budget an agent turn in three different ways:
#
# - **deeptutor-scheduler** (seed `000`): exploration and settlement budgets, one recovery
#   round, a forced tool-less finish;
# - **dsh-turn-guard** (seed `001`): an unbounded `while (true)` loop with a guard on the
#   pre-step hook (a wrap-up notice past `maxSteps`, a cancel after the grace window), in
#   two readings of the seed (`dsh-turn-guard-refire` repeats the notice inside the grace
#   window), and the loop with no guard at all (`dsh-turn-unguarded`);
# - **tool-call-budget** (seed `002`): a cap on executed tool calls, then one forced final
#   request without tools.
#
# For each, this notebook asks what every budget knob really bounds (measured: which worst
# cases move when the knob is raised by one), which bounds are proved, and how turns end.

# %%
import textwrap

import matplotlib.pyplot as plt
from IPython.display import Markdown, display
from matplotlib.ticker import MaxNLocator
from turnbound.properties.explore.explorer import explore
from turnbound.properties.graph.model import exit_shares
from turnbound.properties.prove.prover import Prover
from turnbound.reference.expr import render
from turnbound.reference.profiles import load_profile

PROFILES = [
    "deeptutor-scheduler",
    "dsh-turn-guard",
    "dsh-turn-guard-refire",
    "dsh-turn-unguarded",
    "tool-call-budget",
]
PROOF_TIMEOUT_S = 3.0
tables = {name: load_profile(name) for name in PROFILES}


def base_config(table):
    """Each parameter's default, clipped into its explore range (small enough to explore)."""
    return {p.name: min(max(p.default, p.range[0]), p.range[1]) for p in table.parameters}


def fmt(params):
    return ", ".join(f"{k}={v}" for k, v in params.items())


# %% [markdown]
# ## Measure: the worst cases, and what one more unit of each knob changes
#
# At each profile's base configuration the explorer measures the worst case of every counter
# over all host behaviours; then each knob is raised by one, the others kept, and the
# explorer measures again. A knob that moves no worst case bounds nothing the table counts.

# %%
measured = {}
for name, table in tables.items():
    base = base_config(table)
    x = explore(table, base)
    effects = {}
    for p in table.parameters:
        if not p.admits(base[p.name] + 1):
            continue
        raised = explore(table, {**base, p.name: base[p.name] + 1}).summary.max
        effects[p.name] = {c: raised.get(c, 0) - x.summary.max.get(c, 0) for c in table.counters}
    proofs = Prover(table, timeout=PROOF_TIMEOUT_S).prove_all([b.name for b in table.bounds])
    measured[name] = (base, x.summary, exit_shares(x), effects, proofs)
    print(f"{name}: {x.summary.states} states at {fmt(base)}")

# %% [markdown]
# ## Side by side

# %%
VERDICT = {"proved": "proved", "refuted": "refuted", "unknown": "undecided"}
rows = []
for name, (base, summary, shares, effects, proofs) in measured.items():
    table = tables[name]
    knobs = []
    for p in table.parameters:
        moved = {c: d for c, d in effects.get(p.name, {}).items() if d}
        what = ", ".join(f"{c} {d:+d}" for c, d in moved.items()) or "nothing"
        knobs.append(f"**{p.name}**: {what}")
    bounds = []
    for r in proofs:
        expect = "" if r.goal.expect == "holds" else " (expected false)"
        bounds.append(f"`{render(r.goal.expr)}`: {VERDICT[r.verdict]}{expect}")
    worst = ", ".join(f"{c}={v}" for c, v in summary.max.items())
    exits = ", ".join(f"{e.terminal} {e.probability:.0%}" for e in shares.values())
    rows.append((name, fmt(base), "<br>".join(knobs), worst, "<br>".join(bounds), exits))

header = [
    "profile",
    "base configuration",
    "raising a knob by one moves the worst case of",
    "worst case at base",
    "bounds (prover, all parameter values)",
    "exits (random host)",
]
lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
lines += ["| " + " | ".join(row) + " |" for row in rows]
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## One figure
#
# Top: for each profile, how much the worst case of each counter grows when one knob is
# raised by one (a bar of height 1 means one more of that counter per unit of the knob).
# Bottom right: how turns end when the host answers every call at random.

# %%
names = list(measured)
fig, axes = plt.subplots(2, 3, figsize=(16, 10))
for ax, name in zip(axes.flat, names, strict=False):
    base, summary, shares, effects, proofs = measured[name]
    counters = list(tables[name].counters)
    knobs = list(effects)
    width = 0.8 / max(1, len(knobs))
    for i, knob in enumerate(knobs):
        xs = [j + (i - (len(knobs) - 1) / 2) * width for j in range(len(counters))]
        ax.bar(xs, [effects[knob][c] for c in counters], width, label=f"{knob} +1")
    ax.set_xticks(range(len(counters)), counters, fontsize=8, rotation=25, ha="right")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("change of the worst case")
    cut = "\nworst cases cut off at the step horizon" if "horizon" in shares else ""
    ax.set_title(f"{name}\n{textwrap.fill('base: ' + fmt(base), 58)}{cut}", fontsize=9)
    ax.legend(fontsize=8, title="knob raised", title_fontsize=8, loc="best")
    ax.grid(axis="y", alpha=0.3)

ax = axes.flat[len(names)]
kinds = sorted({kind for m in measured.values() for kind in m[2]})
colours = {k: plt.get_cmap("tab20")(i % 20) for i, k in enumerate(kinds)}
for row, name in enumerate(names):
    start = 0.0
    for kind, e in measured[name][2].items():
        ax.barh(row, e.probability, left=start, color=colours[kind], edgecolor="white")
        start += e.probability
ax.set_yticks(range(len(names)), names, fontsize=8)
ax.invert_yaxis()
ax.set_xlim(0, 1)
ax.set_xlabel("probability of each exit under a uniformly random host")
ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
ax.set_title("How turns end", fontsize=10)
ax.legend(
    [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in kinds],
    kinds,
    fontsize=7,
    title="exit",
    title_fontsize=8,
    loc="center left",
    bbox_to_anchor=(1.01, 0.5),
)
for ax in axes.flat[len(names) + 1 :]:
    ax.set_visible(False)
fig.suptitle("Three budget disciplines: what each knob bounds, and how turns end", fontsize=13)
fig.tight_layout()
plt.show()

# %% [markdown]
# Reading the figure:
#
# - **deeptutor-scheduler**: each stage budget adds exactly one round to the worst case, and
#   the recovery round (or the forced finish's extra round) sits on top of both; the empty
#   recovery budget moves no worst case at all, it only changes which exit a turn takes.
# - **dsh-turn-guard**: which knob lengthens a turn depends on the reading of the seed. With
#   one wrap-up notice per budget crossing, `gracefulSteps` does and `maxFires` does not;
#   when the notice repeats inside the grace window, it is the other way round. A message
#   typed by the user opens a fresh budget, so `maxUserMessages` moves every step count.
# - **dsh-turn-unguarded**: no knob bounds steps; `claimedCeiling` is a reader's assumption,
#   refuted, and the worst case is only cut off by the explorer's step horizon.
# - **tool-call-budget**: `max_rounds` bounds executed tool calls one for one; requests and
#   tool frames grow with it too, by the amounts in the table.
