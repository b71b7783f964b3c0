"""Property-directed reachability (z3's Spacer engine) for claims induction can not prove.

Some claims hold only because of disjunctive facts no candidate atom states ("the
failed round was an exploration round, or settlement was below its budget"). Spacer
searches for such an inductive invariant itself. The reachable states are one
relation per place, over the variables, facts, monitors and parameters; each edge is
one rule from its source's relation to its target's, restricted to states that satisfy
the background (facts already proved to hold in every reachable state, so the
restriction loses nothing). Relations per place, rather than one with the place as a
number, spare Spacer from learning the control flow: 4-8x faster on the slowest claims. But
not on every claim (google-adk's agent_tool_runs_are_outside_the_count stalls), so the
restarts alternate with the encoding of one relation and the place as a number.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

import z3
from turnbound.properties.prove.encoding import Encoding, Frame

Background = Callable[[Frame], z3.BoolRef]


FIRST_BUDGET = 2.0
"""Seconds the first Spacer attempt gets; each restart doubles it."""


def pdr(
    enc: Encoding, claim: Callable[[Frame], z3.BoolRef], background: Background, deadline: float
) -> Literal["proved", "violated", "unknown"]:
    """Whether every reachable state satisfies the claim, for every parameter value.

    Spacer's running time on one query is heavy-tailed and depends on more than the query
    (the same text took 1 s or over a minute, by what the process had done before). So it
    runs as restarts: a fresh context and another random seed each time, with a budget
    that doubles, until the deadline.
    """
    budget, seed = FIRST_BUDGET, 0
    while (remaining := deadline - time.monotonic()) > 0:
        attempt = _attempt_split if seed % 2 == 0 else _attempt_single
        verdict = attempt(enc, claim, background, min(budget, remaining), seed)
        if verdict != "unknown":
            return verdict
        budget, seed = budget * 2, seed + 1
    return "unknown"


def _attempt_split(
    enc: Encoding, claim: Callable[[Frame], z3.BoolRef], background: Background, seconds: float, seed: int
) -> Literal["proved", "violated", "unknown"]:
    f, g = enc.frame("pdr:a"), enc.frame("pdr:b")
    ctx, fp = _spacer(seconds, seed)

    def fresh(e: z3.ExprRef) -> z3.ExprRef:
        return e.translate(ctx)

    sf = [fresh(c) for c in (*f.vars.values(), *f.facts.values(), *f.ghosts)]
    sg = [fresh(c) for c in (*g.vars.values(), *g.facts.values(), *g.ghosts)]
    ps = [fresh(c) for c in enc.params.values()]
    place_f, place_g = fresh(f.place), fresh(g.place)

    def at(term: z3.ExprRef, place: z3.ExprRef, index: int) -> z3.BoolRef:
        """The term with a frame's place fixed (the other places' parts simplify away)."""
        return z3.simplify(z3.substitute(term, (place, z3.IntVal(index, ctx))))

    sorts = [c.sort() for c in sf + ps]
    reach = {p: z3.Function(f"reach:{p}", *sorts, z3.BoolSort(ctx)) for p in enc.places}
    bad = z3.Function("bad", z3.BoolSort(ctx))
    for r in (*reach.values(), bad):
        fp.register_relation(r)
    fp.declare_var(*sf, *sg, *ps)
    first = enc.table.initial
    start = at(fresh(z3.And(enc.typing(f), enc.initial(f))), place_f, enc.place_index[first])
    fp.rule(reach[first](*sf, *ps), [fresh(enc.parameter_domain()), start])
    # The background on the pre-state only: on both sides, Spacer's inlining stalled on google-adk.
    typing_g, before = fresh(enc.typing(g)), fresh(background(f))
    pre: dict[int, z3.BoolRef] = {}
    post: dict[int, z3.BoolRef] = {}
    for e in enc.edges:
        i, j = enc.place_index[e.transition.source], enc.place_index[e.target]
        if i not in pre:
            pre[i] = at(before, place_f, i)
        if j not in post:
            post[j] = at(typing_g, place_g, j)
        step = at(at(fresh(enc.edge(e, f, g)), place_f, i), place_g, j)
        fp.rule(reach[e.target](*sg, *ps), [reach[e.transition.source](*sf, *ps), pre[i], post[j], step])
    holds = fresh(claim(f))
    for p, i in enc.place_index.items():
        ok = at(holds, place_f, i)
        if not z3.is_true(ok):
            fp.rule(bad(), [reach[p](*sf, *ps), z3.Not(ok)])
    return _verdict(fp, bad())


def _attempt_single(
    enc: Encoding, claim: Callable[[Frame], z3.BoolRef], background: Background, seconds: float, seed: int
) -> Literal["proved", "violated", "unknown"]:
    f, g = enc.frame("pdr:a"), enc.frame("pdr:b")
    state_f = [f.place, *f.vars.values(), *f.facts.values(), *f.ghosts]
    state_g = [g.place, *g.vars.values(), *g.facts.values(), *g.ghosts]
    params = list(enc.params.values())
    ctx, fp = _spacer(seconds, seed)

    def fresh(e: z3.ExprRef) -> z3.ExprRef:
        return e.translate(ctx)

    sf, sg, ps = [fresh(c) for c in state_f], [fresh(c) for c in state_g], [fresh(c) for c in params]
    reach = z3.Function("reach", *[c.sort() for c in sf + ps], z3.BoolSort(ctx))
    fp.register_relation(reach)
    fp.declare_var(*sf, *sg, *ps, fresh(f.choice))
    fp.rule(reach(*sf, *ps), [fresh(enc.parameter_domain()), fresh(enc.typing(f)), fresh(enc.initial(f))])
    fp.rule(
        reach(*sg, *ps),
        [
            reach(*sf, *ps),
            fresh(enc.typing(g)),
            fresh(background(f)),
            fresh(background(g)),
            fresh(enc.step(f, g)),
        ],
    )
    query = z3.And(reach(*sf, *ps), z3.Not(fresh(claim(f))))
    return _verdict(fp, query)


def _spacer(seconds: float, seed: int) -> tuple[z3.Context, z3.Fixedpoint]:
    """A Spacer engine in a fresh context: its search depends on the history of the context it
    runs in, so each attempt starts clean."""
    ctx = z3.Context()
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("spacer.random_seed", seed)
    fp.set("timeout", max(1, int(seconds * 1000)))
    return ctx, fp


def _verdict(fp: z3.Fixedpoint, query: z3.ExprRef) -> Literal["proved", "violated", "unknown"]:
    try:
        verdict = fp.query(query)
    except z3.Z3Exception:  # canceled at the timeout
        return "unknown"
    if verdict == z3.unsat:
        return "proved"
    if verdict == z3.sat:
        return "violated"
    return "unknown"
