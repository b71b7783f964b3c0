"""The one reader of JSON that someone else wrote: cases, scripts, vectors, manifests, ITF, log lines.

Python's `json` module, left alone, turns a hostile document into a traceback (deep
nesting: RecursionError; a 5,000-digit integer: ValueError), a hang (a million-digit
integer) or a huge allocation. Here each size is bounded by a named limit
(`turnbound.reference.limits`) and every violation is one `DefinitionError` line naming
the file (and line).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import MAX_INT_DIGITS, MAX_JSON_BYTES, MAX_JSON_DEPTH


class _TooLarge(ValueError):
    """Raised from inside the decoder's hooks; turned into a one-line error by the caller."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _TooLarge(f"an integer with {len(text.lstrip('-'))} digits (the limit is {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > 64:
        raise _TooLarge(f"a number written with {len(text)} characters (the limit is 64)")
    value = float(text)
    if not math.isfinite(value):
        raise _TooLarge(f"the number {text} is out of range")
    return value


def _parse_constant(text: str) -> float:
    raise _TooLarge(f"{text} is not JSON")


def _depth_ok(value: Any) -> bool:
    """Nesting within MAX_JSON_DEPTH (iterative: the check itself never recurses)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            return False
        stack.extend((c, depth + 1) for c in children)
    return True


def parse_json(text: str, where: str) -> Any:
    """One JSON document from text; `where` names it (`file` or `file:line`) in the error."""
    try:
        value = json.loads(
            text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    except _TooLarge as exc:
        raise DefinitionError(f"{where}: not accepted: {exc}") from None
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if exc.lineno == 1 else f"line {exc.lineno}, column {exc.colno}"
        raise DefinitionError(f"{where}: not valid JSON: {exc.msg} ({at})") from None
    except RecursionError:
        raise DefinitionError(f"{where}: not accepted: nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, MemoryError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "too large"
        raise DefinitionError(f"{where}: not accepted: {reason}") from None
    if not _depth_ok(value):
        raise DefinitionError(f"{where}: not accepted: nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def read_text(path: Path, what: str, limit: int = MAX_JSON_BYTES) -> str:
    """A UTF-8 file of at most `limit` bytes, or one line saying why not (`what`: "case", "the log", …)."""
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise DefinitionError(f"{path}: {what} is larger than {limit} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DefinitionError(f"{path}: {what} is not valid UTF-8 (byte {exc.start})") from None


def read_json(path: Path, what: str) -> Any:
    """One bounded JSON document from a file."""
    return parse_json(read_text(path, what), str(path))
