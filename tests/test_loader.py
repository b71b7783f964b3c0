"""The loader rejects each kind of malformed table with one line naming file, item and field."""

from __future__ import annotations

import pytest
from turnbound.reference.errors import DefinitionError
from turnbound.reference.loader import load_table_text


def _reject(text: str) -> str:
    with pytest.raises(DefinitionError) as info:
        load_table_text(text, source="bad.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bad.toml: ")
    return message


def test_the_tiny_table_loads(tiny_text: str) -> None:
    table = load_table_text(tiny_text, "tiny.toml")
    assert [t.id for t in table.transitions] == ["work", "stop", "again", "enough"]
    assert table.counters == ("steps",)
    assert "contract_violation" in table.terminals


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        # unknown names
        (
            'guard = "steps < budget"',
            'guard = "steps < budgt"',
            ["transition 'work'.guard", "unknown name 'budgt'"],
        ),
        (
            'update = { steps = "steps + 1" }',
            'update = { stepz = "steps + 1" }',
            ["transition 'work'.update.stepz", "not a declared variable"],
        ),
        ('op = "step"', 'op = "stepp"', ["transition 'work'.op", "unknown operation 'stepp'"]),
        ('to = "stepped"', 'to = "steped"', ["transition 'work'.to", "unknown location 'steped'"]),
        ('raises = ["abort"]', 'raises = ["abrt"]', ["operations.step.raises", "unknown failures ['abrt']"]),
        ('type = "int"\ninit', 'type = "integer"\ninit', ["variables.steps.type", "unknown type 'integer'"]),
        # type errors
        (
            'guard = "steps < budget"',
            'guard = "steps + budget"',
            ["transition 'work'.guard", "expected bool"],
        ),
        (
            'update = { steps = "steps + 1" }',
            'update = { steps = "more" }',
            ["transition 'work'.update.steps", "type bool, expected int"],
        ),
        ('init = "0"', 'init = "true"', ["variables.steps.init", "expected int"]),
        ("min = 0\ndefault = 2", 'min = 0\ndefault = "2"', ["parameters.budget.default", "valid integer"]),
        # facts
        (
            'facts.more = { type = "bool" }',
            'facts.more = { type = "bool", default = 3 }',
            ["operations.step.facts.more.default", "outside the domain"],
        ),
        (
            'facts.more = { type = "bool" }',
            'facts.more = { type = "int" }',
            ["operations.step.facts.more", "finite domain"],
        ),
        (
            'facts.more = { type = "bool" }',
            'facts.more = { type = "int", min = 0, max = 2, default = 5 }',
            ["operations.step.facts.more.default", "outside the domain (int 0..2)"],
        ),
        (
            'facts.more = { type = "bool" }',
            'facts.steps = { type = "bool" }',
            ["operations.step.facts.steps", "already a parameter or variable"],
        ),
        ('guard = "steps >= budget"', 'guard = "more"', ["transition 'stop'.guard", "unknown name 'more'"]),
        # structure of places
        ('to = "stepped"', 'to = "loop"', ["locations", "unreachable", "stepped"]),
        (
            'stepped = "a step answered"\n',
            'stepped = "a step answered"\nstuck = "dead end"\n',
            ["locations", "unreachable", "stuck"],
        ),
        ('id = "again"', 'id = "work"', ["transition 'work'", "ids must be unique"]),
        (
            'from = "stepped"\nguard = "more"',
            'from = "done"\nguard = "more"',
            ["transition 'again'.from", "terminal"],
        ),
        ('initial = "loop"', 'initial = "start"', ["profile.initial", "'start'"]),
        (
            '[failures.abort]\nto = "aborted"',
            "[failures.abort]",
            ["transition 'work'.on_raise", "may raise 'abort'"],
        ),
        (
            "[parameters.budget]\nmin = 0\ndefault = 2",
            "[parameters.budget]\nmin = 0\ndefault = -1",
            ["parameters.budget.default", "outside min..max"],
        ),
        ("range = [0, 3]", "range = [0, 3, 4]", ["parameters.budget.range", "at most 2 items"]),
        (
            'name = "tiny"',
            'name = "tiny"\ncolour = "blue"',
            ["profile.colour", "Extra inputs are not permitted"],
        ),
        (
            'expr = "steps <= budget"',
            'expr = "steps.bit_length() <= budget"',
            ["bounds[0]", "function calls"],
        ),
    ],
)
def test_malformed_table_is_rejected_naming_the_field(
    tiny_text: str, old: str, new: str, fragments: list[str]
) -> None:
    assert old in tiny_text
    message = _reject(tiny_text.replace(old, new, 1))
    for fragment in fragments:
        assert fragment in message


def test_not_toml_at_all() -> None:
    assert "not valid TOML" in _reject("[profile\nname=")


def test_missing_section_is_named() -> None:
    assert "profile: Field required" in _reject("[parameters.x]\ndefault = 1\n")


def test_enum_member_clashing_with_a_variable(tiny_text: str) -> None:
    message = _reject(tiny_text.replace("[locations]", '[enums]\nkind = ["steps", "other"]\n\n[locations]'))
    assert "enums.kind" in message and "'steps'" in message


def test_location_with_no_way_out(tiny_text: str) -> None:
    text = tiny_text.replace(
        'stepped = "a step answered"\n', 'stepped = "a step answered"\nstuck = "dead end"\n'
    )
    text = text.replace(
        'id = "again"\nfrom = "stepped"\nguard = "more"\nto = "loop"',
        'id = "again"\nfrom = "stepped"\nguard = "more"\nto = "stuck"',
    )
    message = _reject(text)
    assert "no outgoing transition" in message and "stuck" in message


def test_unreachable_terminal(tiny_text: str) -> None:
    message = _reject(tiny_text.replace('aborted = "aborted"', 'aborted = "aborted"\nlost = "never reached"'))
    assert "terminals" in message and "lost" in message


def test_args_must_match_the_operation(tiny_text: str) -> None:
    text = tiny_text.replace("[operations.finish]", '[operations.finish]\nargs = { why = "bool" }')
    message = _reject(text)
    assert "transition 'stop'.args" in message and "takes arguments ['why']" in message


def test_trace_property_needs_a_known_operation(tiny_text: str) -> None:
    text = tiny_text + '\n[[trace_properties]]\nname = "once"\nop = "nope"\nat_most = 1\n'
    assert "trace_properties[0] 'once'" in _reject(text)


GHOST = '\n[variables.asked]\ntype = "int"\ninit = "0"\nghost = true\n'


def _with_ghost(tiny_text: str) -> str:
    text = tiny_text.replace("[failures.abort]", GHOST.lstrip("\n") + "\n[failures.abort]")
    return text.replace(
        'update = { steps = "steps + 1" }', 'update = { steps = "steps + 1", asked = "asked + 1" }'
    )


def test_a_ghost_read_by_claims_and_ghost_updates_loads(tiny_text: str) -> None:
    text = _with_ghost(tiny_text) + '\n[[invariants]]\nname = "asked_is_steps"\nexpr = "asked == steps"\n'
    table = load_table_text(text, "tiny.toml")
    assert [v.name for v in table.variables if v.ghost] == ["asked"]


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('guard = "steps < budget"', 'guard = "asked < budget"', "transition 'work'.guard"),
        (
            'update = { steps = "steps + 1", ',
            'update = { steps = "asked + 1", ',
            "transition 'work'.update.steps",
        ),
    ],
)
def test_behaviour_that_reads_a_ghost_is_rejected(tiny_text: str, old: str, new: str, where: str) -> None:
    text = _with_ghost(tiny_text)
    assert old in text
    message = _reject(text.replace(old, new, 1))
    assert where in message and "ghost variable 'asked'" in message


def test_a_probe_line_may_not_show_a_ghost(tiny_text: str) -> None:
    text = _with_ghost(tiny_text) + '\n[[report]]\nwhen = "true"\nline = "asked={asked}"\n'
    message = _reject(text)
    assert "report[0].line" in message and "'asked'" in message


def test_a_counter_can_not_be_a_ghost(tiny_text: str) -> None:
    message = _reject(tiny_text.replace("counter = true", "counter = true\nghost = true", 1))
    assert "variables.steps.ghost" in message
