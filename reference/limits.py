"""Every size a table, a file or an option can ask for, with its limit, in one place.

turnbound reads files other people wrote. Each limit below is checked up front, before
any engine runs, so an oversized input is one line naming the file and the field, never
a MemoryError, an OverflowError, a hang or a traceback. The limits are far above what
the bundled tables use (the test suite checks that they all fit).
"""

from __future__ import annotations

import re
from typing import Final

PROFILE_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,63}")
"""A table's `[profile].name`: it names directories (cases, vectors), so it is an identifier."""

MAX_TABLE_BYTES: Final = 1_000_000
"""A table file (the largest bundled table is about 27 kB)."""

MAX_JSON_BYTES: Final = 16_000_000
"""A case, script, vector, manifest or ITF file."""

MAX_LOG_BYTES: Final = 256_000_000
"""A log for `validate`: it holds whole runs, one JSON message a line."""

MAX_LINE_BYTES: Final = 1_000_000
"""One line of a log."""

MAX_JSON_DEPTH: Final = 32
"""Nesting of arrays and objects in any JSON document turnbound reads (vectors use 6)."""

MAX_INT_DIGITS: Final = 18
"""Digits of an integer in a JSON document: anything larger is no count of turns."""

MAX_PARAMETER_VALUE: Final = 1_000_000
"""The largest magnitude of a parameter's min, max, default, range or `-p` value."""

MAX_PARAMETER_RANGE: Final = 1_000
"""Values in one parameter's explore range or one `-p NAME=LO..HI`."""

MAX_SWEEP: Final = 1024
"""Parameter configurations one command sweeps (the product of the ranges)."""

MAX_FACT_VALUES: Final = 256
"""Values of one int fact or failure field (engines enumerate every one)."""

MAX_OUTCOMES: Final = 65_536
"""Distinct outcomes of one operation: the product of its facts' domains (plus its raises)."""

MAX_EXPRESSION_CHARS: Final = 2_000
"""Characters in one expression."""

MAX_EXPRESSION_DEPTH: Final = 40
"""Nesting of one expression."""

MAX_LITERAL: Final = 10**9
"""The largest integer literal an expression may write."""

MAX_STEP_HORIZON: Final = 100_000
"""A table's `step_horizon`."""

MAX_SCRIPT_OUTCOMES: Final = 100_000
"""Outcomes in one host script (all operations together)."""

MAX_SECONDS: Final = 86_400.0
"""The longest time option (`prove --timeout`, `conform --timeout`, …): a day."""

MAX_JOBS: Final = 64
"""Worker processes one command starts (`--jobs`)."""
