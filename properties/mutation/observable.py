"""What a run shows from outside, as a canonical digest: the basis of "equivalent mutant".

An implementation is judged on the wire: the operations it sends with their arguments,
the answers it is given, and the terminal and counters of its `end` message. Two tables
whose reachable graphs differ only in state nobody can read (a reset that the next step
makes again, a variable no guard, argument or counter reads afterwards) behave the same
for every host, so a mutant that differs from its original only there is equivalent, not
a survivor. Comparing whole graphs, state by state, would call it a survivor and ask the
claims to pin what no test could ever see.

So a reachable graph is reduced to its observable automaton and minimised:

- an internal step (no host call) is invisible: a state whose only way on is one internal
  step stands for the state that step reaches (a cycle of them is a livelock, shown as
  such);
- a host call is a letter: the operation, the arguments as sent and the answer given;
- what a state shows by itself: `end` with the terminal and the counters, or the step
  horizon the explorer stopped at;
- Moore's partition refinement merges the states no sequence of letters tells apart,
  and the quotient is numbered in breadth-first order over sorted letters, so two graphs
  get the same digest exactly when they accept the same observable runs.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping

import networkx as nx
from turnbound.properties.conformance.runner import fmt_call
from turnbound.properties.scheduler import fmt_values
from turnbound.reference.machine import Machine, State
from turnbound.reference.table import Table

LIVELOCK = "livelock"


def observable_digest(g: nx.DiGraph, table: Table) -> str:
    """The digest of the minimal observable automaton of the explorer graph `g` of `table`."""
    return hashlib.sha256("\n".join(observable_lines(g, table)).encode()).hexdigest()


def observable_lines(g: nx.DiGraph, table: Table) -> list[str]:
    """The minimal observable automaton of `g` as text: one line per state, in canonical order."""
    view = _View(g, table)
    block = view.minimise()
    root = view.settle(0)
    number: dict[int, int] = {block[root]: 0}
    order = [root]
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for _, target in sorted(view.letters[node]):
            b = block[target]
            if b not in number:
                number[b] = len(number)
                order.append(target)
                queue.append(target)
    lines = []
    for node in order:
        moves = ", ".join(f"{letter} -> {number[block[t]]}" for letter, t in sorted(view.letters[node]))
        lines.append(f"{number[block[node]]}: {view.shows[node]}" + (f" | {moves}" if moves else ""))
    return lines


class _View:
    """The explorer graph seen from outside: per settled state, what it shows and its letters."""

    def __init__(self, g: nx.DiGraph, table: Table) -> None:
        self.g = g
        self.table = table
        self.machine = Machine(table, g.graph["params"])
        self.counters = table.counters
        self._settled: dict[int, int] = {}
        self.shows: dict[int, str] = {}
        self.letters: dict[int, list[tuple[str, int]]] = {}
        todo = [self.settle(0)]
        while todo:
            node = todo.pop()
            if node in self.shows:
                continue
            self.shows[node] = self._show(node)
            letters = [(self._letter(node, t, d), self.settle(t)) for _, t, d in g.out_edges(node, data=True)]
            self.letters[node] = letters
            todo.extend(t for _, t in letters if t not in self.shows)

    def settle(self, node: int) -> int:
        """The state `node` stands for: itself, or where its only, internal, steps lead."""
        if node in self._settled:
            return self._settled[node]
        path: list[int] = []
        seen: set[int] = set()
        here = node
        while here not in self._settled:
            out = list(self.g.out_edges(here, data=True))
            if len(out) != 1 or out[0][2]["op"] is not None or here in seen:
                break
            seen.add(here)
            path.append(here)
            here = out[0][1]
        end = self._settled.get(here, here)
        if here in seen:  # an internal cycle: the run never asks the host again
            end = -1
            self.shows[end] = LIVELOCK
            self.letters[end] = []
        for n in path:
            self._settled[n] = end
        self._settled.setdefault(here, end)
        return end

    def _show(self, node: int) -> str:
        d = self.g.nodes[node]
        if d["terminal"]:
            counters = fmt_values({k: d["values"][k] for k in self.counters})
            return f"end {d['location']} ({counters})"
        if d["horizon"]:
            return "horizon"
        return "asks"

    def _letter(self, node: int, target: int, data: dict[str, object]) -> str:
        op, outcome = data["op"], data["outcome"]
        if op is None:  # one of several internal steps: a choice the host can not see
            return "internal"
        d = self.g.nodes[node]
        state = State(d["location"], tuple(d["values"].values()), tuple(sorted(d["facts"].items())))
        t = self.table.transition(str(data["transition"]))
        args = self.machine.args(state, t) if t.args else {}
        return fmt_call(str(op), args, outcome)  # type: ignore[arg-type]

    def minimise(self) -> dict[int, int]:
        """Moore's refinement: per state, the block of states no run of letters tells apart."""
        nodes = sorted(self.shows)
        block = _renumber({n: self.shows[n] for n in nodes})
        while True:
            signature = {
                n: (block[n], tuple(sorted({(letter, block[t]) for letter, t in self.letters[n]})))
                for n in nodes
            }
            refined = _renumber(signature)
            if len(set(refined.values())) == len(set(block.values())):
                return refined
            block = refined


def _renumber(keys: Mapping[int, object]) -> dict[int, int]:
    ids: dict[str, int] = {}
    return {n: ids.setdefault(repr(k), len(ids)) for n, k in keys.items()}


def first_difference(original: nx.DiGraph, table: Table, mutant: nx.DiGraph, changed: Table) -> str | None:
    """The shortest run a host could use to tell the two graphs apart, as text (None: none)."""
    a, b = _View(original, table), _View(mutant, changed)
    start = (a.settle(0), b.settle(0))
    seen = {start}
    queue: deque[tuple[tuple[int, int], tuple[str, ...]]] = deque([(start, ())])
    while queue:
        (x, y), run = queue.popleft()
        where = "; ".join(run) if run else "at the start"
        if a.shows[x] != b.shows[y]:
            return f"{where}: the original shows {a.shows[x]}, the mutant {b.shows[y]}"
        left, right = dict(a.letters[x]), dict(b.letters[y])
        for letter in sorted(set(left) ^ set(right)):
            side = "the mutant" if letter in right else "the original"
            return f"{where}: only {side} goes on with {letter}"
        for letter in sorted(left):
            pair = (left[letter], right[letter])
            if pair not in seen:
                seen.add(pair)
                queue.append((pair, (*run, letter)))
    return None
