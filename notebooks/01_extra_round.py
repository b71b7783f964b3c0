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
# # The extra round after the budget
#
# With one exploration round and one settlement round configured, a DeepTutor turn finished
# after **three** rounds (seed `000`, "Two Ways to Reach Three Rounds"). Adding the two stage
# budgets is not enough to read the final `rounds` counter: a recovery round and a forced
# finish can each add one more.
#
# This notebook tells that story with turnbound's tools, from the `deeptutor-scheduler` table:
#
# 1. the table and a picture of its control flow;
# 2. the seed's five rows, run on the reference interpreter;
# 3. every way to reach three rounds, enumerated by the explorer;
# 4. the bound `rounds <= explorationBudget + settlementBudget + 1` proved by z3 for *all*
#    budget values, and shown tight.

# %%
import itertools

import networkx as nx
from IPython.display import SVG, Markdown, display
from turnbound.properties.explore.explorer import PathStep, describe_outcome, explore, replay
from turnbound.properties.graph.model import control_flow, highlight, state_graph, state_path_edges
from turnbound.properties.graph.render import render_graph
from turnbound.properties.prove.prover import Prover
from turnbound.properties.explore.sweep import sweep
from turnbound.reference.cases import check_case
from turnbound.reference.expr import render as render_expr
from turnbound.reference.profiles import load_profile, profile_cases
from turnbound.reference.trace import Trace

table = load_profile("deeptutor-scheduler")
SEED = {"explorationBudget": 1, "settlementBudget": 1}  # emptyRecoveryBudget keeps its default, 2


def md_table(header, rows):
    """A list of rows as a Markdown table (the notebook needs nothing beyond turnbound)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))


def show_trace(trace: Trace) -> None:
    """One line per host call: transition, operation, what the host answered, counters after."""
    for i, step in enumerate(trace.steps, 1):
        args = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in step.args.items())
        counters = " ".join(f"{k}={v}" for k, v in step.counters.items())
        answer = describe_outcome(step.outcome)
        print(f"{i:2}. {step.transition:22} {step.op}({args}) -> {answer}   [{counters}]")
    print(f"    terminal: {trace.terminal}")


# %% [markdown]
# ## 1. The table
#
# A table is data: parameters (the budgets), counters, host operations with finite fact
# domains, locations, terminals and guarded transitions. Its claims say what must hold.

# %%
md_table(
    ["parameter", "default", "meaning"],
    [(p.name, p.default, p.doc) for p in table.parameters],
)
md_table(
    ["bound", "claim", "expected"],
    [(c.name, f"`{render_expr(c.expr)}`", c.expect) for c in table.bounds],
)

# %% [markdown]
# The control flow: rounded boxes are locations (the double border is where a turn starts),
# octagons are terminals, coloured by kind. Each edge is a transition with its id, its guard
# in brackets and the host operation it calls; dashed edges are where a host failure leads.

# %%
display(SVG(render_graph(control_flow(table), "svg")))

# %% [markdown]
# ## 2. The seed's five rows, on the reference interpreter
#
# Each row of the seed's table is a bundled case: parameters, a host script (the facts each
# host call returns) and the expected ending. The reference interpreter runs them all.

# %%
seed_rows = [
    "ordinary_cap",
    "recovery_answer",
    "recovery_tools",
    "recovery_rejected",
    "ordinary_cap_no_extra",
]
cases = {c.name: c for c in profile_cases(table)}
results = [check_case(table, cases[name]) for name in seed_rows]
md_table(
    ["case", "probe line", "as the seed says"],
    [(r.case.name, r.line, "yes" if r.passed else "NO: " + "; ".join(r.mismatches)) for r in results],
)
assert all(r.passed for r in results)

# %% [markdown]
# ## 3. Every way to reach three rounds
#
# The explorer builds the reachable state graph at the seed's parameters: every host
# behaviour, each host call answered with every outcome of its fact domain (failures and
# aborts included).

# %%
x = explore(table, SEED, exits=True)
s = x.summary
print(f"{s.states} states, {s.edges} edges; terminal states by kind: {s.terminals}")
print(f"worst case of each counter: {s.max}")
naive = s.claim("naive_rounds_bound")
print(
    f"naive reading `{naive.text}`: {naive.verdict} (largest rounds {naive.lhs_max}, budget sum {naive.rhs})"
)

# %% [markdown]
# The seed's synthetic host only ever answered a round with tools or with an answer; it
# raised no failure, paused for no user, truncated nothing. Restricting the explorer's graph
# to those host answers gives the seed's own world: every ending it can reach, with the
# shortest host behaviour reaching it, replayed on the interpreter.


# %%
def seed_host(outcome) -> bool:
    """The host answers the seed's replay used: no failures, a round has tools or text."""
    if outcome is None:  # an internal transition: no host call
        return True
    if outcome.raise_ is not None:
        return False
    facts = outcome.facts or {}
    if any(facts.get(f) for f in ("truncated", "reasoningBudgetExhausted", "finishRedirect", "paused")):
        return False
    return not ("hasTools" in facts and not (facts["hasTools"] or facts["hasText"]))


g = x.graph
seed_graph = nx.DiGraph()
seed_graph.add_nodes_from(g.nodes)
seed_graph.add_edges_from((a, b) for a, b, d in g.edges(data=True) if seed_host(d["outcome"]))
seed_world = nx.descendants(seed_graph, 0) | {0}


def shortest_run(node):
    """The shortest seed-host path to a state, replayed on the interpreter."""
    nodes = nx.shortest_path(seed_graph, 0, node)
    path = [
        PathStep(g.edges[a, b]["transition"], g.edges[a, b]["op"], g.edges[a, b]["outcome"])
        for a, b in itertools.pairwise(nodes)
    ]
    return nodes, replay(table, x.params, path).trace


endings = {}  # one shortest run per distinct ending: terminal and counters
for node in sorted(n for n in seed_world if g.nodes[n]["terminal"]):
    nodes, trace = shortest_run(node)
    endings.setdefault((trace.terminal, *trace.counters.values()), (nodes, trace))


def seed_row(trace):
    same = (
        r.case.name
        for r in results
        if (r.trace.terminal, r.trace.counters) == (trace.terminal, trace.counters)
    )
    return next(same, "(not in the seed)")


COUNTERS = ("rounds", "exploration_rounds", "settlement_rounds", "tool_steps")
runs = sorted(endings.values(), key=lambda v: tuple(-v[1].counters[c] for c in COUNTERS))
md_table(
    ["rounds", "exploration", "settlement", "tool steps", "last operation", "seed row"],
    [(*(t.counters[c] for c in COUNTERS), t.ops[-1], seed_row(t)) for _, t in runs],
)
three = [(nodes, t) for nodes, t in runs if t.counters["rounds"] == 3]
print(f"{len(endings)} endings with the seed's host; {len(three)} of them reach three rounds")

# %% [markdown]
# With the seed's host, the explorer finds exactly the seed's rows: **four ways to reach
# three rounds** (the forced finish's extra round, and the recovery round ending in an
# answer, in a rejected batch, or in a dispatched batch followed by rejection) and the
# two-round forced finish, plus two early answers the seed had no reason to list.
#
# The picture shows that part of the state graph; the paths to the three-round endings
# are drawn in red; each edge says which transition it took and what the host answered.

# %%
marked = [e for nodes, _ in three for e in state_path_edges(x, nodes)]
picture = highlight(
    state_graph(x, keep=seed_world, edge_labels=True),
    marked,
    note="red: the paths to the three-round endings",
)
display(SVG(render_graph(picture, "svg")))

# %% [markdown]
# With **every** host behaviour there are many more ways to reach three rounds. The
# explorer lists one shortest witness per distinct probe line at which the naive reading
# `rounds <= explorationBudget + settlementBudget` breaks, and names the bundled case
# that reproduces it, if any.

# %%
violation = s.violation("naive_rounds_bound")
md_table(
    ["#", "terminal", "probe line of a three-round ending", "host calls", "bundled case"],
    [
        (i, e.witness.trace.terminal, e.line, len(e.witness.trace.steps), e.case or "")
        for i, e in enumerate(violation.exits, 1)
    ],
)
print(f"{len(violation.exits)} distinct three-round endings over all host behaviours")

# %% [markdown]
# ## 4. The bound, proved for every budget value, and tight
#
# The explorer checks one parameter assignment at a time. The prover encodes the table's
# transition relation in z3 with the parameters left symbolic and proves each claim by
# induction, so the result holds for **all** budget values. For a bound it then searches a
# run that meets it exactly (tightness); for a false claim, a counterexample. Both are
# replayed on the interpreter.

# %%
prover = Prover(table, timeout=10.0)  # seconds per claim: a guard, these proofs take about one
proofs = {
    r.goal.name: r for r in prover.prove_all(["rounds_bound", "settlement_bound", "naive_rounds_bound"])
}
md_table(
    ["claim", "verdict", "method", "tight", "seconds"],
    [(n, r.verdict, r.method, r.tight, f"{r.seconds:.2f}") for n, r in proofs.items()],
)

# %%
tight = proofs["rounds_bound"].tight_witness
print("A run that meets rounds <= explorationBudget + settlementBudget + 1 exactly,")
print(f"with parameters {tight.params}:")
show_trace(tight.trace)

# %%
refuted = proofs["naive_rounds_bound"].witness
print(f"The naive reading, refuted with parameters {refuted.params}:")
show_trace(refuted.trace)

# %% [markdown]
# The proof covers every budget value; the explorer confirms it is tight at every small
# one: across a sweep of both stage budgets, the worst case of `rounds` is exactly
# `explorationBudget + settlementBudget + 1`. (`emptyRecoveryBudget = 0` keeps the sweep
# quick; notebook 02 varies it too.)

# %%
grid = {"explorationBudget": range(4), "settlementBudget": range(4), "emptyRecoveryBudget": [0]}
summaries = sweep(table, grid, progress=False)
worst = {(t.params["explorationBudget"], t.params["settlementBudget"]): t.max["rounds"] for t in summaries}
md_table(
    ["explorationBudget \\ settlementBudget", *map(str, range(4))],
    [(e, *(f"{worst[e, st]} (bound {e + st + 1})" for st in range(4))) for e in range(4)],
)
assert all(w == e + st + 1 for (e, st), w in worst.items())
