"""Property-directed reachability (z3's Spacer engine) for claims induction can not prove.

Some claims hold only because of disjunctive facts no candidate atom states ("the
failed round was an exploration round, or settlement was below its budget"). Spacer
searches for such an inductive invariant itself. The reachable states are one
relation over the frame constants and the parameters; the rules are the encoding's
initial state and step, restricted to states that satisfy the background (facts
already proved to hold in every reachable state, so the restriction loses nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

import z3
from turnbound.properties.prove.encoding import Encoding, Frame

Background = Callable[[Frame], z3.BoolRef]


FIRST_BUDGET = 4.0
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
        verdict = _attempt(enc, claim, background, min(budget, remaining), seed)
        if verdict != "unknown":
            return verdict
        budget, seed = budget * 2, seed + 1
    return "unknown"


def _attempt(
    enc: Encoding, claim: Callable[[Frame], z3.BoolRef], background: Background, seconds: float, seed: int
) -> Literal["proved", "violated", "unknown"]:
    f, g = enc.frame("pdr:a"), enc.frame("pdr:b")
    state_f = [f.place, *f.vars.values(), *f.facts.values(), *f.ghosts]
    state_g = [g.place, *g.vars.values(), *g.facts.values(), *g.ghosts]
    params = list(enc.params.values())
    # A fresh context: Spacer's search depends on the history of the context it runs in.
    ctx = z3.Context()

    def fresh(e: z3.ExprRef) -> z3.ExprRef:
        return e.translate(ctx)

    sf, sg, ps = [fresh(c) for c in state_f], [fresh(c) for c in state_g], [fresh(c) for c in params]
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("spacer.random_seed", seed)
    fp.set("timeout", max(1, int(seconds * 1000)))
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
    try:
        verdict = fp.query(query)
    except z3.Z3Exception:  # canceled at the timeout
        return "unknown"
    if verdict == z3.unsat:
        return "proved"
    if verdict == z3.sat:
        return "violated"
    return "unknown"
