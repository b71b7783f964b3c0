"""Cycles in a finished search's graph: whether a run may loop forever, and a lasso if so.

The graph is the search's compact one: node i's successors are `dst[first[i]:first[i + 1]]`,
nodes numbered in the order breadth-first search found them. Kahn's algorithm decides
acyclicity by touching every edge once, in Python: a tenth of a large search's time. Most
graphs need far less. An edge i -> j with j > i goes forward in that numbering, and a cycle
cannot be made of forward edges alone: its node m of largest number leaves by an edge back,
m -> x with x <= m, and x reaches m through nodes numbered at most m. The search records its
backward edges (`back`); when none of them closes such a path, the graph is acyclic without
Kahn. Only when one might (or the look-ahead's budget runs out) does Kahn run, and it alone
says which nodes are cyclic.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx


def may_loop(dst: list[int], first: list[int], back: list[tuple[int, int]]) -> bool:
    """False only if no backward edge m -> x closes a cycle (x reaches m through nodes <= m).

    The look-ahead visits at most as many nodes as the graph has edges; past that it answers
    True and leaves the decision to Kahn.
    """
    budget = len(dst)
    for m, x in back:
        if x == m:
            return True
        seen = {x}
        stack = [x]
        while stack:
            a = stack.pop()
            for b in dst[first[a] : first[a + 1]]:
                if b == m:
                    return True
                if b < m and b not in seen:
                    seen.add(b)
                    stack.append(b)
            budget -= 1
            if budget < 0:
                return True
    return False


def kahn_leftover(n: int, dst: list[int], first: list[int]) -> list[int]:
    """Nodes Kahn's algorithm cannot remove: on a cycle or downstream of one (empty: acyclic)."""
    indegree = [0] * n
    for j, count in Counter(dst).items():
        indegree[j] = count
    ready = [i for i in range(n) if indegree[i] == 0]
    removed = 0
    while ready:
        i = ready.pop()
        removed += 1
        for j in dst[first[i] : first[i + 1]]:
            indegree[j] -= 1
            if not indegree[j]:
                ready.append(j)
    if removed == n:
        return []
    return [i for i in range(n) if indegree[i] > 0]


def lasso(dst: list[int], first: list[int], candidates: list[int]) -> tuple[int, list[int]]:
    """The cycle node nearest the initial state (the lowest number), and the shortest loop back to it."""
    sub = nx.DiGraph()
    keep = set(candidates)
    for i in candidates:
        sub.add_node(i)
        sub.add_edges_from((i, j) for j in dst[first[i] : first[i + 1]] if j in keep)
    on_cycle = set()
    for comp in nx.strongly_connected_components(sub):
        if len(comp) > 1 or any(sub.has_edge(i, i) for i in comp):
            on_cycle.update(comp)
    start = min(on_cycle)
    if sub.has_edge(start, start):
        return start, [start, start]
    best: list[int] | None = None
    for j in sorted(sub.successors(start)):
        if j == start or j not in on_cycle:
            continue
        try:
            back = nx.shortest_path(sub, j, start)
        except nx.NetworkXNoPath:
            continue
        if best is None or len(back) + 1 < len(best):
            best = [start, *back]
    assert best is not None
    return start, best
