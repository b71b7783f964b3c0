"""Errors cross process boundaries: a search worker's error reaches its parent whole."""

from __future__ import annotations

import pickle

import pytest
from turnbound.reference.errors import (
    DefinitionError,
    LimitReached,
    Livelock,
    Nondeterminism,
    ScriptExhausted,
    StuckState,
    TableError,
    TurnboundError,
    ValueTooLarge,
)

ERRORS: list[TurnboundError] = [
    DefinitionError("a table: bad"),
    TableError("t.toml", "transitions[2]", "unknown name"),
    Livelock("loop", 1000, ["a", "b"], repeats=True),
    Livelock("loop", 1000, ["a"]),
    LimitReached("max_states=5", "too many states"),
    ValueTooLarge("x", "grow", 20, "2^63"),
    ScriptExhausted("model_request", 4),
    StuckState("loop", "x=1", ["a", "b"]),
    Nondeterminism("loop", "x=1", ["a", "b"]),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_every_error_survives_a_pickle_round_trip(error: TurnboundError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__
