"""An inductive strengthening inferred per place, so claims can be proved by induction.

A table's lemmas can only speak about parameters and variables, but many facts a
proof needs hold at some places only ("extra_rounds is 0 until the forced finish",
"recovery_used holds at recovery_offer") or relate a ghost monitor to the variables
("prepare_recovery was not called while recovery_used is false"). Houdini finds them:
candidate atoms are generated from the table itself (its claims, lemmas and guard
comparisons with their neighbouring relations, every variable at its initial value,
ints >= 0, and small ghost templates), every place starts with all of them, and any
candidate that does not hold initially or is not kept by some edge is dropped until
the rest is inductive. The result is sound whatever the candidates are: it holds
initially and is kept by every edge, so it holds in every reachable state.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import z3
from turnbound.properties.prove.candidates import Atom, candidate_atoms
from turnbound.properties.prove.encoding import Encoding, Frame
from turnbound.properties.prove.explicit import reachable, sample_parameters
from turnbound.properties.prove.z3fast import conj, true_in

QUERY_TIMEOUT_MS = 20_000


@dataclass
class Strengthening:
    """Per place, the atoms that survived: together they are inductive."""

    atoms: tuple[Atom, ...]
    kept: dict[str, tuple[int, ...]]
    seconds: float = 0.0
    complete: bool = True
    _template: z3.BoolRef | None = None

    def holds(self, enc: Encoding, f: Frame) -> z3.BoolRef:
        if self._template is None:
            pattern = enc.pattern[0]
            parts = []
            for place, kept in self.kept.items():
                if kept:
                    atoms = conj([self.atoms[i].make(pattern) for i in kept])
                    parts.append(z3.Implies(enc.at(pattern, place), atoms))
            self._template = conj(parts)
        return enc.rename(self._template, f)

    def facts_at(self, place: str) -> list[str]:
        return [self.atoms[i].text for i in self.kept.get(place, ())]


def _solver(deadline: float) -> z3.Solver:
    s = z3.SimpleSolver()
    s.set("timeout", max(1, min(QUERY_TIMEOUT_MS, int((deadline - time.monotonic()) * 1000))))
    return s


def infer(enc: Encoding, timeout: float = 60.0) -> Strengthening:
    """Houdini: the greatest inductive subset of the candidates, per place."""
    start = time.monotonic()
    deadline = start + timeout
    atoms = candidate_atoms(enc)
    kept = _survivors_of_samples(enc, atoms)
    complete = True

    f0 = enc.frame("houdini:init")
    s = _solver(deadline)
    s.add(enc.parameter_domain(), enc.typing(f0), enc.initial(f0))
    terms0 = [a.make(f0) for a in atoms]
    complete &= _drop_until_kept(s, terms0, kept[enc.table.initial])

    pre, post = enc.frame("houdini:pre"), enc.frame("houdini:post")
    pre_terms = [a.make(pre) for a in atoms]
    post_terms = [a.make(post) for a in atoms]
    base = [enc.parameter_domain(), enc.typing(pre), enc.typing(post)]
    solvers: dict[int, z3.Solver] = {}
    queue = deque(e.index for e in enc.edges)
    queued = set(queue)
    while queue:
        index = queue.popleft()
        queued.discard(index)
        e = enc.edges[index]
        source, target = e.transition.source, e.target
        s = solvers.get(index)
        if s is None:
            s = _solver(deadline)
            s.add(*base, enc.edge(e, pre, post))
            solvers[index] = s
        if not kept[target]:
            continue
        s.push()
        s.add(conj([pre_terms[i] for i in sorted(kept[source])]))
        before = len(kept[target])
        complete &= _drop_until_kept(s, post_terms, kept[target])
        s.pop()
        if len(kept[target]) < before:
            for other in enc.edges:
                if other.transition.source == target and other.index not in queued:
                    queue.append(other.index)
                    queued.add(other.index)
    return Strengthening(
        atoms,
        {place: tuple(sorted(k)) for place, k in kept.items()},
        time.monotonic() - start,
        complete,
    )


def _survivors_of_samples(enc: Encoding, atoms: tuple[Atom, ...]) -> dict[str, set[int]]:
    """Per place, the atoms no sampled reachable state falsifies."""
    kept = {place: set(range(len(atoms))) for place in enc.places}
    for params in sample_parameters(enc.table):
        for place, env, monitors in reachable(enc, params):
            alive = kept[place]
            alive -= {i for i in alive if atoms[i].check(env, monitors) is False}
    return kept


def _drop_until_kept(s: z3.Solver, terms: list[z3.BoolRef], kept: set[int]) -> bool:
    """Drop the atoms a model of the solver falsifies until every kept atom follows (False: undecided)."""
    while kept:
        s.push()
        s.add(z3.Not(conj([terms[i] for i in sorted(kept)])))
        verdict = s.check()
        if verdict == z3.unsat:
            s.pop()
            return True
        if verdict != z3.sat:
            s.pop()
            kept.clear()
            return False
        model = s.model()
        s.pop()
        false = {i for i in kept if not true_in(model, terms[i])}
        assert false, "a model of the negated conjunction falsifies some atom"
        kept -= false
    return True
