"""The prover's explicit search is memoized per parameter assignment, and a memoized search
answers exactly as a fresh one does (same path, same exhaustiveness)."""

from __future__ import annotations

import time

from turnbound.properties.prove.encoding import Encoding
from turnbound.properties.prove.explicit import Node, StateSpace, search_state, state_space_for
from turnbound.reference.profiles import load_profile


def _fresh(enc: Encoding, params: dict[str, int], place: str) -> list[str]:
    graph = StateSpace(enc, params, 20_000)
    path, exhaustive = graph.bfs(graph.start, lambda n: n[0].location == place, time.monotonic() + 60)
    assert exhaustive and path is not None
    return [edge.transition.id for _, edge, _ in path]


def test_memoized_searches_agree_with_fresh_ones() -> None:
    enc = Encoding(load_profile("deeptutor-scheduler"))
    params = {"explorationBudget": 2, "settlementBudget": 1}
    deadline = time.monotonic() + 60
    graph = state_space_for(enc, params, 20_000)
    assert state_space_for(enc, params, 20_000) is graph
    for place in ("forced_finish", "round_done", "reject_finish", "aborted", "forced_finish"):
        found, exhaustive = graph.from_start(lambda i, n, p=place: n[0].location == p, deadline)
        assert exhaustive and found is not None
        assert [edge.transition.id for _, edge, _ in found] == _fresh(enc, params, place)


def test_search_state_runs_end_at_a_terminal_and_repeat() -> None:
    enc = Encoding(load_profile("deeptutor-scheduler"))
    params = {"explorationBudget": 1, "settlementBudget": 1}

    def at_round_done(place: str, env: object, monitors: object) -> bool:
        return place == "round_done"

    first, exhaustive = search_state(enc, params, at_round_done, time.monotonic() + 60)
    again, _ = search_state(enc, params, at_round_done, time.monotonic() + 60)
    assert exhaustive and first is not None and again is not None
    assert first.states[-1].place in enc.table.terminals
    assert [e.transition.id for e in first.edges] == [e.transition.id for e in again.edges]


def test_an_unreachable_target_is_exhaustively_absent() -> None:
    enc = Encoding(load_profile("deeptutor-scheduler"))
    graph = state_space_for(enc, {"explorationBudget": 1, "settlementBudget": 0}, 20_000)

    def never(i: int, n: Node) -> bool:
        return False

    found, exhaustive = graph.from_start(never, time.monotonic() + 60)
    assert found is None and exhaustive
