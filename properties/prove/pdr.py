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


def pdr(
    enc: Encoding, claim: Callable[[Frame], z3.BoolRef], background: Background, deadline: float
) -> Literal["proved", "violated", "unknown"]:
    """Whether every reachable state satisfies the claim, for every parameter value."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return "unknown"
    f, g = enc.frame("pdr:a"), enc.frame("pdr:b")
    state_f = [f.place, *f.vars.values(), *f.facts.values(), *f.ghosts]
    state_g = [g.place, *g.vars.values(), *g.facts.values(), *g.ghosts]
    params = list(enc.params.values())
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("timeout", max(1, int(remaining * 1000)))
    reach = z3.Function("reach", *[c.sort() for c in state_f + params], z3.BoolSort())
    fp.register_relation(reach)
    fp.declare_var(*state_f, *state_g, *params, f.choice)
    fp.rule(reach(*state_f, *params), [enc.parameter_domain(), enc.typing(f), enc.initial(f)])
    fp.rule(
        reach(*state_g, *params),
        [reach(*state_f, *params), enc.typing(g), background(f), background(g), enc.step(f, g)],
    )
    try:
        verdict = fp.query(z3.And(reach(*state_f, *params), z3.Not(claim(f))))
    except z3.Z3Exception:  # canceled at the timeout
        return "unknown"
    if verdict == z3.unsat:
        return "proved"
    if verdict == z3.sat:
        return "violated"
    return "unknown"
