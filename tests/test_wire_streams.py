"""Wire message streams are untrusted input: a quick sample of hostile streams against the runner.

Every stream ends as a passed case or a failed one with a one-line reason, within the
timeout plus a second: never a traceback, a hang or a process left behind. The thorough
run (>= 10,000 streams) is in test_wire_streams_slow.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.reference.profiles import load_profile

from tests.wire_streams import HOSTILE_LINES, NO_HANG, Stream, check_clean, play, streams

TABLE = load_profile("deeptutor-scheduler")
CASE = bundled_cases(TABLE)[0]


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(streams(TABLE))
def test_a_hostile_stream_is_a_clean_failed_case(stream: Stream) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result, seconds = play(TABLE, CASE, stream, Path(tmp))
    check_clean(result)
    assert seconds < NO_HANG


def test_every_known_hostile_line_is_a_protocol_failure_with_a_reason(tmp_path: Path) -> None:
    for line in HOSTILE_LINES:
        result, _ = play(TABLE, CASE, Stream([line], True, False), tmp_path)
        check_clean(result)
        assert not result.passed
        assert result.observed.fault_kind in ("protocol", "exit"), (line[:40], result.observed.fault)
