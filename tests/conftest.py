"""Shared fixtures: the bundled profiles and a small table to break in loader tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO.parent / "shared" / "seeds"

TINY = """
[profile]
name = "tiny"
initial = "loop"

[parameters.budget]
min = 0
default = 2
range = [0, 3]

[variables.steps]
type = "int"
init = "0"
counter = true

[failures.abort]
to = "aborted"

[operations.step]
raises = ["abort"]
facts.more = { type = "bool" }

[operations.finish]

[locations]
loop = "top of the loop"
stepped = "a step answered"

[terminals]
done = "finished"
aborted = "aborted"

[[transitions]]
id = "work"
from = "loop"
guard = "steps < budget"
op = "step"
update = { steps = "steps + 1" }
to = "stepped"

[[transitions]]
id = "stop"
from = "loop"
guard = "steps >= budget"
op = "finish"
to = "done"

[[transitions]]
id = "again"
from = "stepped"
guard = "more"
to = "loop"

[[transitions]]
id = "enough"
from = "stepped"
guard = "not more"
op = "finish"
to = "done"

[[bounds]]
name = "steps_bound"
expr = "steps <= budget"
"""


@pytest.fixture(scope="session")
def deeptutor() -> Table:
    return load_profile("deeptutor-scheduler")


@pytest.fixture
def tiny_text() -> str:
    return TINY
