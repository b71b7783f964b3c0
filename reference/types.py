"""Value types of the table language and the finite domains facts are drawn from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Value = int | bool | str
"""A runtime value: an integer, a boolean, or the name of an enum member."""


@dataclass(frozen=True)
class IntType:
    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolType:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class EnumType:
    name: str
    members: tuple[str, ...]

    def __str__(self) -> str:
        return f"enum {self.name}"


Type = IntType | BoolType | EnumType

INT = IntType()
BOOL = BoolType()


def type_of_value(value: object) -> str:
    """Name a Python value's table type, for messages."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def conforms(value: object, type_: Type) -> bool:
    """Whether a decoded JSON/TOML value is a value of the type (bool is never an int)."""
    if isinstance(type_, BoolType):
        return isinstance(value, bool)
    if isinstance(type_, IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str) and value in type_.members


@dataclass(frozen=True)
class Domain:
    """A finite set of values of one type: all booleans, an integer range, or an enum."""

    type: Type
    lo: int = 0
    hi: int = 0

    def __contains__(self, value: object) -> bool:
        if not conforms(value, self.type):
            return False
        if isinstance(self.type, IntType):
            assert isinstance(value, int)
            return self.lo <= value <= self.hi
        return True

    def values(self) -> Iterator[Value]:
        if isinstance(self.type, BoolType):
            yield from (False, True)
        elif isinstance(self.type, IntType):
            yield from range(self.lo, self.hi + 1)
        else:
            yield from self.type.members

    def size(self) -> int:
        """How many values the domain holds."""
        if isinstance(self.type, BoolType):
            return 2
        if isinstance(self.type, IntType):
            return max(0, self.hi - self.lo + 1)
        return len(self.type.members)

    def describe(self) -> str:
        if isinstance(self.type, IntType):
            return f"int {self.lo}..{self.hi}"
        if isinstance(self.type, EnumType):
            return "one of " + ", ".join(self.type.members)
        return "bool"
