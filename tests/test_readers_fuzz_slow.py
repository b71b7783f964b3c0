"""The readers fuzz at depth: 10,000 examples per reader of untrusted text (the CI slow step).

Same strategies and property as the quick sample in `test_readers_fuzz.py`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.readers_fuzz import READERS_IN_MEMORY, READERS_ON_DISK

EXAMPLES = 10_000
THOROUGH = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(READERS_IN_MEMORY))
def test_reader_in_memory_thoroughly(name: str) -> None:
    reader = READERS_IN_MEMORY[name]

    @THOROUGH
    @given(st.data())
    def check(data: st.DataObject) -> None:
        reader(data)

    check()


@pytest.mark.parametrize("name", sorted(READERS_ON_DISK))
def test_reader_on_disk_thoroughly(name: str) -> None:
    reader = READERS_ON_DISK[name]
    with tempfile.TemporaryDirectory() as tmp:

        @THOROUGH
        @given(st.data())
        def check(data: st.DataObject) -> None:
            reader(data, Path(tmp))

        check()
