"""Fixtures shared by the real-framework tests: each module names its `PROFILE` and its `adapter`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table


@pytest.fixture(scope="module")
def table(request: pytest.FixtureRequest) -> Table:
    return load_profile(request.module.PROFILE)


@pytest.fixture(scope="module")
def real(request: pytest.FixtureRequest, table: Table) -> Iterator[ThreadedScheduler]:
    """The installed framework behind the module's adapter, closed after the module."""
    scheduler: ThreadedScheduler = request.module.adapter.scheduler(table)
    yield scheduler
    scheduler.close()
