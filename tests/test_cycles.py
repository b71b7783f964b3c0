"""Acyclicity without Kahn: a search's backward edges decide it, and they are all recorded.

`cycles.may_loop` may answer False only for an acyclic graph; the search's `back` must hold
every edge to a node found no later, or a cycle could slip past it.
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from turnbound.properties.explore.cycles import kahn_leftover, may_loop
from turnbound.properties.explore.explorer import explore
from turnbound.reference.profiles import load_profile, profile_names


def _compact(n: int, edges: list[tuple[int, int]]) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """The search's layout: node i's successors contiguous; its backward edges listed."""
    dst: list[int] = []
    first: list[int] = []
    for i in range(n):
        first.append(len(dst))
        dst.extend(sorted({j for a, j in edges if a == i}))
    first.append(len(dst))
    back = [(i, j) for i in range(n) for j in dst[first[i] : first[i + 1]] if j <= i]
    return dst, first, back


graphs = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
    )
)


@given(graphs)
def test_no_loop_is_answered_only_for_an_acyclic_graph(graph: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = graph
    dst, first, back = _compact(n, edges)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    acyclic = nx.is_directed_acyclic_graph(g)
    if not may_loop(dst, first, back):
        assert acyclic
    assert (kahn_leftover(n, dst, first) == []) == acyclic


def test_forward_edges_alone_need_no_look_ahead() -> None:
    dst, first, back = _compact(4, [(0, 1), (0, 2), (1, 3), (2, 3)])
    assert back == [] and not may_loop(dst, first, back)


def test_a_backward_edge_that_closes_nothing_is_not_a_loop() -> None:
    """Two siblings, the later one leading to the earlier (a merge, as at deeptutor's `resume`)."""
    dst, first, back = _compact(5, [(0, 1), (0, 2), (2, 1), (1, 3), (3, 4)])
    assert back == [(2, 1)]
    assert not may_loop(dst, first, back)


def test_a_self_loop_and_a_long_cycle_are_loops() -> None:
    assert may_loop(*_compact(2, [(0, 1), (1, 1)]))
    assert may_loop(*_compact(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 1)]))


def test_past_its_budget_the_look_ahead_leaves_the_answer_to_kahn() -> None:
    """Each backward edge looks ahead through the same long chain; once the nodes visited
    outnumber the edges, it answers True, and Kahn decides (here: no cycle)."""
    k = 30
    chain = [(i, i + 1) for i in range(1, k)]
    later = [(0, m) for m in range(k + 1, 2 * k + 1)] + [(m, 1) for m in range(k + 1, 2 * k + 1)]
    n = 2 * k + 1
    dst, first, back = _compact(n, [(0, 1), *chain, *later])
    assert len(back) == k
    assert may_loop(dst, first, back)
    assert kahn_leftover(n, dst, first) == []


@pytest.mark.parametrize("all_states", [True, False], ids=["all", "atomic"])
@pytest.mark.parametrize("name", profile_names())
def test_the_search_records_every_backward_edge(name: str, all_states: bool) -> None:
    search = explore(load_profile(name), max_states=4_000, all_states=all_states)._search
    dst, first = search.dst, search.first_edge
    expected = [(i, j) for i in range(len(search.nodes)) for j in dst[first[i] : first[i + 1]] if j <= i]
    assert sorted(search.back) == sorted(expected)
