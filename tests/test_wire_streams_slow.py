"""Wire message streams, thoroughly: >= 10,000 hostile streams against the runner (slow step)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.reference.profiles import load_profile

from tests.wire_streams import NO_HANG, Stream, check_clean, play, streams

TABLE = load_profile("deeptutor-scheduler")
CASES = bundled_cases(TABLE)


SHARDS = 2
"""The 10,000 streams in two halves of different seeds, so `pytest -n auto` plays them on two cores."""


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_ten_thousand_hostile_streams_are_clean_failed_cases(shard: int) -> None:
    @seed(shard)
    @settings(
        max_examples=10_000 // SHARDS, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(streams(TABLE))
    def check(stream: Stream) -> None:
        case = CASES[len(stream.lines) % len(CASES)]
        with tempfile.TemporaryDirectory() as tmp:
            result, seconds = play(TABLE, case, stream, Path(tmp))
        check_clean(result)
        assert seconds < NO_HANG

    check()
