"""The engines' process pool: results in order, and a worker that dies is one error, not a
wait forever (what `multiprocessing.Pool` does when a worker is killed mid-task)."""

from __future__ import annotations

import os
import signal

import pytest
from turnbound.properties.workers import WorkerDied, fork_context, ordered_map

pytestmark = pytest.mark.skipif(fork_context() is None, reason="the pool forks; this platform cannot")

_OFFSET: list[int] = []


def _set_offset(offset: int) -> None:
    _OFFSET[:] = [offset]


def _shifted(x: int) -> int:
    return x + _OFFSET[0]


def _dies_at_three(x: int) -> int:
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_results_come_in_the_items_order_from_workers_set_up_by_the_initializer() -> None:
    assert list(ordered_map(_shifted, range(40), 2, _set_offset, (100,), chunksize=3)) == list(
        range(100, 140)
    )
    assert _OFFSET == []  # set up in the workers only


def test_a_killed_worker_ends_the_map_with_one_error() -> None:
    with pytest.raises(WorkerDied, match=r"worker process died without a result.*--jobs 1"):
        list(ordered_map(_dies_at_three, range(8), 2, _set_offset, (0,)))
