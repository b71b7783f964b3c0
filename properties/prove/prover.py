"""Proofs for every parameter value: k-induction over the z3 encoding of a table.

For each claim: the base case (no path of fewer than k steps from the initial state
breaks it) and the step case (k consecutive states where it holds, each satisfying
the inferred strengthening, are followed by one where it holds too), with the
parameters constrained by their declared domains only. When the step case fails
for every k up to the limit, the counterexample to induction at k = 1 is reported:
a state and a step, so the author can add a lemma. Whether a failed proof is a
real violation is decided by bounded model checking (`turnbound.properties.prove.witness`),
whose witnesses are replayed on the interpreter.

Why this module is long: the phases share one claim-by-claim schedule and budget, and
the two halves of k-induction share the frames, cached terms and incremental solvers
kept here; split apart, each piece would need the whole prover's state anyway.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import z3
from turnbound.properties.prove.encoding import Encoding, Frame, StateValues, SymbolicEdge
from turnbound.properties.prove.goals import Goal, table_goals
from turnbound.properties.prove.pdr import pdr
from turnbound.properties.prove.strengthening import Strengthening, infer
from turnbound.properties.prove.witness import BeyondHorizon, ConcreteRun, find_tight, find_violation
from turnbound.properties.prove.z3fast import Undecided, check, conj, limit
from turnbound.reference.errors import DefinitionError
from turnbound.reference.table import Table, TraceProperty
from turnbound.reference.types import Value

Verdict = Literal["proved", "refuted", "unknown"]

DEFAULT_MAX_K = 3
DEFAULT_TIMEOUT = 60.0
DEFAULT_DEPTH = 40


@dataclass(frozen=True)
class CounterexampleToInduction:
    """A state where the claim (and the strengthening) hold, and a step to one where the claim fails.

    The state need not be reachable: if it is not, a lemma that excludes it makes the
    induction go through.
    """

    params: dict[str, int]
    before: StateValues
    edge: SymbolicEdge
    outcome: dict[str, Value]
    after: StateValues
    monitors: tuple[str, ...] = ()
    """Names of the ghost monitors to show (a trace property's own), as `name=value` pairs."""

    def _ghosts(self, state: StateValues) -> dict[str, Value]:
        return {name: state.ghosts[i] for i, name in enumerate(self.monitors) if name}

    def describe(self) -> str:
        params = _fmt(self.params)
        happened = self.edge.describe()
        if self.outcome:
            happened += f" [{_fmt(self.outcome)}]"
        before = _fmt({**self.before.vars, **self.before.facts, **self._ghosts(self.before)})
        after = _fmt({**self.after.vars, **self._ghosts(self.after)})
        return (
            f"at {self.before.place} with {before} (parameters {params}), "
            f"step {happened} reaches {self.after.place} with {after}, where the claim is false"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "before": {
                "place": self.before.place,
                "variables": self.before.vars,
                "facts": self.before.facts,
                "monitors": self._ghosts(self.before),
            },
            "transition": self.edge.transition.id,
            "outcome": self.edge.kind if self.edge.error is None else f"raise {self.edge.error}",
            "facts": self.outcome,
            "after": {
                "place": self.after.place,
                "variables": self.after.vars,
                "monitors": self._ghosts(self.after),
            },
        }


def _monitor_name(p: TraceProperty) -> str:
    """How a ghost monitor reads in a counterexample: a call count, or idle/armed/violated."""
    return f"calls({p.op})" if p.kind == "at_most" else f"monitor({p.name}) (0 idle, 1 armed, 2 violated)"


def _pdr_order(w: _Work) -> int:
    """Lemmas first: an author states one to help other claims, which may then need no Spacer run."""
    return 0 if w.goal.kind == "lemma" else 1


def _fmt(values: dict[str, Value] | dict[str, int]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


@dataclass
class ProofResult:
    goal: Goal
    verdict: Verdict
    method: str = ""
    reason: str = ""
    cti: CounterexampleToInduction | None = None
    witness: ConcreteRun | None = None
    tight: bool | None = None
    tight_witness: ConcreteRun | None = None
    seconds: float = 0.0

    @property
    def expected(self) -> str:
        return self.goal.expect

    @property
    def ok(self) -> bool:
        want: Verdict = "proved" if self.goal.expect == "holds" else "refuted"
        return self.verdict == want


_STRENGTHENINGS: dict[tuple[str, str], Strengthening] = {}
"""Per table (source, digest): inferring it is the slowest part, and tables are immutable."""


@dataclass
class _Work:
    """One claim's progress across the phases, and the time spent on it."""

    goal: Goal
    budget: float
    spent: float = 0.0
    result: ProofResult | None = None
    cti: CounterexampleToInduction | None = None
    tried_with: int = -1
    pdr: str = ""
    note: str = ""
    """Why z3 gave up in the last phase that did (the reason of an `unknown` verdict)."""

    def deadline(self) -> float:
        return time.monotonic() + max(0.0, self.budget - self.spent)


@dataclass
class Prover:
    """Proves a table's claims for every parameter value.

    Phases, each claim with its own time budget: k-induction (k = 1..max_k) over the
    inferred strengthening and every claim proved so far, repeated while new claims
    get proved; then property-directed reachability (z3 Spacer) for the rest; then
    bounded model checking for a counterexample, replayed on the interpreter. A claim
    expected to be violated is searched for a counterexample before Spacer runs (only
    the order differs: every verdict is sound either way).
    """

    table: Table
    timeout: float = DEFAULT_TIMEOUT
    max_k: int = DEFAULT_MAX_K
    depth: int = DEFAULT_DEPTH
    use_pdr: bool = True
    strengthen: bool = True
    enc: Encoding = field(init=False)
    _strengthening: Strengthening | None = field(default=None, init=False)
    _proved: list[Goal] = field(default_factory=list, init=False)
    _pool: list[Frame] = field(default_factory=list, init=False)
    """Frames every induction query shares: the terms on them are built once (`_term`)."""
    _terms: dict[tuple[str, int], z3.BoolRef] = field(default_factory=dict, init=False)
    _solvers: dict[tuple[str, int], z3.Solver] = field(default_factory=dict, init=False)
    _facts_in: dict[tuple[str, int], int] = field(default_factory=dict, init=False)
    """How many of the proved claims each step solver has been given."""

    def __post_init__(self) -> None:
        self.enc = Encoding(self.table)

    @property
    def strengthening(self) -> Strengthening:
        if self._strengthening is None:
            if not self.strengthen:
                self._strengthening = Strengthening((), {})
            else:
                key = (self.table.source, self.table.digest)
                cached = _STRENGTHENINGS.get(key)
                if cached is None:
                    cached = infer(self.enc, self.timeout)
                    if cached.complete:
                        _STRENGTHENINGS[key] = cached
                self._strengthening = cached
        return self._strengthening

    def goals(self) -> tuple[Goal, ...]:
        return table_goals(self.table)

    def goal(self, name: str) -> Goal:
        for g in self.goals():
            if g.name == name:
                return g
        known = ", ".join(g.name for g in self.goals())
        raise DefinitionError(f"{self.table.name}: no claim named {name!r}; claims: {known}")

    def background(self, f: Frame) -> z3.BoolRef:
        """What every reachable state satisfies: the strengthening and the claims proved so far."""
        return conj([self.strengthening.holds(self.enc, f), *[g.holds(self.enc, f) for g in self._proved]])

    def _frames(self, n: int) -> list[Frame]:
        while len(self._pool) < n:
            self._pool.append(self.enc.frame())
        return self._pool[:n]

    def _term(self, kind: str, i: int, make: Callable[[], z3.BoolRef]) -> z3.BoolRef:
        """A term on pool frame i (and i + 1 for a step), built on first use: each is a
        substitution into a large template, which would otherwise be redone per claim and k."""
        key = (kind, i)
        found = self._terms.get(key)
        if found is None:
            found = self._terms[key] = make()
        return found

    def _holds(self, goal: Goal, i: int) -> z3.BoolRef:
        return self._term(f"holds:{goal.name}", i, lambda: goal.holds(self.enc, self._pool[i]))

    def _typing(self, i: int) -> z3.BoolRef:
        return self._term("typing", i, lambda: self.enc.typing(self._pool[i]))

    def _step(self, i: int) -> z3.BoolRef:
        return self._term("step", i, lambda: self.enc.step(self._pool[i], self._pool[i + 1]))

    def _inferred(self, i: int) -> z3.BoolRef:
        return self._term("strengthening", i, lambda: self.strengthening.holds(self.enc, self._pool[i]))

    def prove(self, goal: Goal) -> ProofResult:
        return self.prove_all([goal.name])[0]

    def prove_all(self, names: list[str] | None = None) -> list[ProofResult]:
        """Every claim is worked on (each proved claim helps the others); `names` selects the report."""
        goals = self.goals()
        for name in names or []:
            self.goal(name)
        self.strengthening  # noqa: B018  (computed once, outside every claim's time)
        work = [_Work(g, self.timeout) for g in goals]
        self._induction_rounds(work)
        for w in sorted(work, key=_pdr_order):
            if w.result is None and w.goal.expect == "violated":
                self._timed(w, self._refute_within_ranges)
            if w.result is None and self.use_pdr:
                self._timed(w, self._pdr)
                if w.result is not None and w.result.verdict == "proved":
                    self._induction_rounds(work)
        for w in work:
            if w.result is None:
                self._timed(w, self._refute)
            if w.result is None:
                w.result = ProofResult(w.goal, "unknown", reason=w.note or "undecided", cti=w.cti)
        chosen = [w for w in work if not names or w.goal.name in names]
        for w in chosen:
            self._timed(w, self._tightness)
        out = []
        for w in chosen:
            assert w.result is not None
            w.result.seconds = w.spent
            out.append(w.result)
        return out

    def _timed(self, w: _Work, phase: Callable[[_Work, float], None]) -> None:
        """Run one phase on the claim's remaining budget; z3 giving up is noted, not final."""
        start = time.monotonic()
        try:
            phase(w, w.deadline())
        except BeyondHorizon as exc:
            w.note = f"not decided: {exc}"
        except Undecided as exc:
            timed_out = str(exc) in ("timeout", "canceled") or w.deadline() <= time.monotonic()
            w.note = f"timeout after {self.timeout:g} s" if timed_out else f"z3 gave up: {exc}"
        finally:
            w.spent += time.monotonic() - start

    # -- phases ------------------------------------------------------------------------

    def _induction_rounds(self, work: list[_Work]) -> None:
        changed = True
        while changed:
            changed = False
            for w in work:
                if w.result is not None or w.tried_with == len(self._proved):
                    continue
                w.tried_with = len(self._proved)
                self._timed(w, self._induction)
                if w.result is not None and w.result.verdict == "proved":
                    changed = True

    def _induction(self, w: _Work, deadline: float) -> None:
        for k in range(1, self.max_k + 1):
            if not self.base_case(w.goal, k, deadline):
                return  # a real counterexample: bounded model checking will find it
            cti = self.step_case(w.goal, k, deadline)
            if cti is None:
                self._done(
                    w, ProofResult(w.goal, "proved", method="induction" if k == 1 else f"{k}-induction")
                )
                return
            if k == 1:
                w.cti = cti

    def _pdr(self, w: _Work, deadline: float) -> None:
        verdict = pdr(self.enc, lambda f: w.goal.holds(self.enc, f), self.background, deadline)
        w.pdr = verdict
        if verdict == "proved":
            self._done(w, ProofResult(w.goal, "proved", method="PDR (z3 Spacer)", cti=w.cti))

    def _refute_within_ranges(self, w: _Work, deadline: float) -> None:
        witness = find_violation(self.enc, w.goal, self.depth, deadline, self.background, anywhere=False)
        if witness is not None:
            self._done(w, ProofResult(w.goal, "refuted", method="bounded model checking", witness=witness))

    def _refute(self, w: _Work, deadline: float) -> None:
        witness = find_violation(self.enc, w.goal, self.depth, deadline, self.background)
        if witness is not None:
            self._done(w, ProofResult(w.goal, "refuted", method="bounded model checking", witness=witness))
            return
        pdr_note = {"violated": "; Spacer says it is violated", "unknown": "; Spacer gave up"}.get(w.pdr, "")
        helped = " with the inferred strengthening" if self.strengthen else ""
        reason = (
            f"not {self.max_k}-inductive{helped}{pdr_note}, and no counterexample within the explore ranges "
            f"or {self.depth} steps"
        )
        w.note = reason

    def _tightness(self, w: _Work, deadline: float) -> None:
        r = w.result
        if r is None or r.verdict != "proved" or w.goal.edge() is None:
            return
        r.tight_witness = find_tight(self.enc, w.goal, self.depth, deadline, self.background)
        r.tight = r.tight_witness is not None

    def _done(self, w: _Work, result: ProofResult) -> None:
        w.result = result
        if result.verdict == "proved":
            self._proved.append(w.goal)

    # -- the two halves of k-induction ------------------------------------------------

    def _solver(self, kind: str, k: int, make: Callable[[], list[z3.BoolRef]]) -> z3.Solver:
        """One incremental solver per half and k: the frames, steps and strengthening are asserted
        once, each claim is checked under push/pop, and every proved claim is added for good (it
        holds in every reachable state, so adding it loses nothing)."""
        key = (kind, k)
        s = self._solvers.get(key)
        if s is None:
            s = self._solvers[key] = z3.SimpleSolver()
            s.add(*make())
            self._facts_in[key] = 0
        return s

    def base_case(self, goal: Goal, k: int, deadline: float) -> bool:
        """No run of exactly k-1 steps from the initial state ends where the claim is false."""
        enc = self.enc
        frames = self._frames(k)

        def make() -> list[z3.BoolRef]:
            initial = self._term("initial", 0, lambda: enc.initial(frames[0]))
            return [
                enc.parameter_domain(),
                initial,
                *[self._typing(i) for i in range(k)],
                *[self._step(i) for i in range(k - 1)],
            ]

        s = self._solver("base", k, make)
        limit(s, deadline)
        s.push()
        try:
            s.add(z3.Not(self._holds(goal, k - 1)))
            return bool(check(s) == z3.unsat)
        finally:
            s.pop()

    def step_case(self, goal: Goal, k: int, deadline: float) -> CounterexampleToInduction | None:
        """None if k states where the claim holds are always followed by one where it holds."""
        enc = self.enc
        frames = self._frames(k + 1)

        def make() -> list[z3.BoolRef]:
            return [
                enc.parameter_domain(),
                *[self._typing(i) for i in range(k + 1)],
                *[self._inferred(i) for i in range(k + 1)],
                *[self._step(i) for i in range(k)],
            ]

        s = self._solver("step", k, make)
        key = ("step", k)
        for g in self._proved[self._facts_in[key] :]:
            s.add(*[self._holds(g, i) for i in range(k + 1)])
        self._facts_in[key] = len(self._proved)
        limit(s, deadline)
        s.push()
        try:
            s.add(conj([self._holds(goal, i) for i in range(k)]))
            s.add(z3.Not(self._holds(goal, k)))
            if check(s) == z3.unsat:
                return None
            m = s.model()
        finally:
            s.pop()
        before, after = frames[-2], frames[-1]
        e = enc.read_edge(m, before)
        monitors = tuple(
            _monitor_name(p) if i == goal.prop_index else "" for i, p in enumerate(enc.properties)
        )
        return CounterexampleToInduction(
            enc.read_params(m),
            enc.read(m, before),
            e,
            enc.read_outcome(m, e, after),
            enc.read(m, after),
            monitors,
        )
