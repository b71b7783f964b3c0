"""Wire protocol v1 messages as pydantic models: the source of `spec/schema/wire-message.schema.json`.

turnbound parses messages by hand (`turnbound.properties.conformance.messages`), to name exactly what
an implementation got wrong; these models state the same shapes for implementers and
for the logs `turnbound validate` reads (one message per line).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

Scalar = int | bool | str


class Start(BaseModel):
    """turnbound -> implementation: begin one case."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["start"]
    protocol: Literal[1]
    profile: str
    params: dict[str, int]


class Op(BaseModel):
    """implementation -> turnbound: a host call."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["op"]
    op: str
    args: dict[str, Scalar] = Field(default_factory=dict)


class Result(BaseModel):
    """turnbound -> implementation: the host call returned these facts."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["result"]
    facts: dict[str, Scalar]


class Raise(BaseModel):
    """turnbound -> implementation: the host call failed; the failure's fields (e.g. `partial`) sit
    beside `error`."""

    model_config = ConfigDict(extra="allow")
    type: Literal["raise"]
    error: str


class EndMessage(BaseModel):
    """implementation -> turnbound: the case ended at `terminal` with these counters."""

    model_config = ConfigDict(extra="forbid", title="End")
    type: Literal["end"]
    terminal: str
    counters: dict[str, int]


class Stop(BaseModel):
    """turnbound -> implementation: no more cases; stdin closes next."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["stop"]


class WireMessage(
    RootModel[Annotated[Start | Op | Result | Raise | EndMessage | Stop, Field(discriminator="type")]]
):
    """One line of wire protocol v1 (and of a log for `turnbound validate`)."""
