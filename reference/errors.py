"""One exception base, split into definition errors (bad input data) and runtime errors.

Every message is a single line that names the file, the item and the field, so a
CLI can print it as is.
"""

from __future__ import annotations

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(32), 127, 0x85]} | {10: "\\n", 13: "\\r", 9: "\\t"}
_CONTROL |= {0x2028: "\\u2028", 0x2029: "\\u2029"}


class TurnboundError(Exception):
    """Base of every error turnbound reports to a user.

    Its text is always one line: a name or value taken from a file (which may hold a
    newline or a terminal escape) is shown escaped, never raw.
    """

    def __str__(self) -> str:
        return super().__str__().translate(_CONTROL)

    def __reduce__(self) -> tuple[object, ...]:
        # A search worker hands its error to the parent process by pickle; the subclasses'
        # own __init__ signatures can not rebuild one from its message alone, and a pool
        # whose result could not be unpickled waits for it forever.
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls: type[TurnboundError], args: tuple[object, ...], state: dict[str, object]) -> TurnboundError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class DefinitionError(TurnboundError):
    """A table, case, script or vector is not well formed."""


class ExpressionError(DefinitionError):
    """An expression does not parse or does not type-check."""


class TableError(DefinitionError):
    """A transition table breaks one of the loader's rules."""

    def __init__(self, source: str, where: str, message: str) -> None:
        self.source = source
        self.where = where
        self.reason = message
        super().__init__(f"{source}: {where}: {message}")


class RunError(TurnboundError):
    """A run could not continue for a reason outside the table's semantics."""


class Livelock(RunError):
    """Internal transitions keep firing without a host call: the table loops on its own.

    Found as soon as a state repeats between two host calls, or after a fixed number of
    internal transitions in a row when every state differs (a counter grows on its own).
    """

    def __init__(self, location: str, count: int, recent: list[str], repeats: bool = False) -> None:
        self.location = location
        self.recent = recent
        if repeats:
            message = (
                f"internal transitions loop at location {location!r} without a host call "
                f"({' -> '.join(recent)})"
            )
        else:
            message = (
                f"{count} internal transitions in a row without a host call (now at {location!r}; "
                f"last: {', '.join(recent)}): the table loops without asking the host"
            )
        super().__init__(message)


class LimitReached(RunError):
    """A run or a search stopped at one of turnbound's named size limits: nothing is decided."""

    def __init__(self, limit: str, message: str) -> None:
        self.limit = limit
        super().__init__(f"{message} (limit {limit} reached)")


class ValueTooLarge(LimitReached):
    """An update made an integer larger than any table needs: the value grows without a bound."""

    def __init__(self, variable: str, transition: str, digits: int, bound: str) -> None:
        self.variable = variable
        self.transition = transition
        super().__init__(
            "INT_LIMIT",
            f"transition {transition} makes {variable} an integer of {digits} digits, beyond {bound}",
        )


class ScriptExhausted(RunError):
    def __init__(self, op: str, call: int) -> None:
        self.op = op
        self.call = call
        super().__init__(f"host script has no outcome for call #{call} of {op!r}: add one to script.{op}")


class StuckState(RunError):
    """No transition is enabled: the table does not cover this state."""

    def __init__(self, location: str, state: str, candidates: list[str]) -> None:
        self.location = location
        self.candidates = candidates
        names = ", ".join(candidates) or "none"
        super().__init__(
            f"no transition is enabled at location {location!r} in state {state}; candidates: {names}"
        )


class Nondeterminism(RunError):
    """More than one transition is enabled: the table is not deterministic here."""

    def __init__(self, location: str, state: str, enabled: list[str]) -> None:
        self.location = location
        self.enabled = enabled
        super().__init__(
            f"transitions {', '.join(enabled)} are all enabled at location {location!r} in state {state}"
        )
