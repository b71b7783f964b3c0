"""A table that extends another: the variant states only what its reading changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.loader import load_table
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile, table_path

PARENT = """
[profile]
name = "base"
initial = "start"

[parameters.budget]
default = 2
range = [0, 2]

[variables.n]
type = "int"
init = "0"
counter = true

[operations.step]
facts = { more = { type = "bool" } }

[locations]
start = "before a step"

[terminals]
done = "finished"

[[transitions]]
id = "go"
from = "start"
guard = "n < budget"
op = "step"
update = { n = "n + 1" }
to = "start"

[[transitions]]
id = "stop"
from = "start"
guard = "n >= budget"
to = "done"

[[bounds]]
name = "within_budget"
expr = "n <= budget"

[[bounds]]
name = "naive"
expr = "n <= 1"
expect = "violated"
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def _child(tmp_path: Path, body: str) -> Path:
    _write(tmp_path, "base", PARENT)
    return _write(tmp_path, "child", '[profile]\nextends = "base"\nname = "child"\n' + body)


def test_the_bundled_variant_inherits_everything_but_its_reading() -> None:
    profile, variant = load_profile("dsh-turn-guard"), load_profile("dsh-turn-guard-refire")
    assert variant.variant_of == "dsh-turn-guard"
    changed = {t.id for t, u in zip(profile.transitions, variant.transitions, strict=True) if t != u}
    assert changed == {"step", "step_with_notice"}
    assert variant.operations == profile.operations
    # the variant restates one step claim for its reading: only that claim's compiled ghost differs
    assert {c.name for c in variant.step_claims if c not in profile.step_claims} == {
        "requests_inside_the_grace_window"
    }
    differ = {v.name for v, w in zip(profile.variables, variant.variables, strict=True) if v != w}
    assert differ == {"requests_inside_the_grace_window"}
    assert {b.name for b in variant.bounds} - {b.name for b in profile.bounds} == {"once_reading_bound"}
    assert len(table_path("dsh-turn-guard-refire").read_text().splitlines()) < 100


def test_a_child_replaces_by_name_in_place_and_appends_new_entries(tmp_path: Path) -> None:
    table = load_table(
        _child(
            tmp_path,
            '[[transitions]]\nid = "go"\nfrom = "start"\nguard = "n < budget"\nop = "step"\n'
            'update = { n = "n + 2" }\nto = "start"\n\n'
            '[[bounds]]\nname = "within_budget"\nexpr = "n <= budget + 1"\n\n'
            '[[bounds]]\nname = "even"\nexpr = "n <= 2 * budget"\n',
        )
    )
    assert [t.id for t in table.transitions] == ["go", "stop"]
    trace = run(table, ScriptHost(Script({"step": [Outcome.of_facts(more=True)] * 3})))
    assert trace.ops == ["step"] and trace.counters == {"n": 2}  # the child's update, not the parent's
    assert [b.name for b in table.bounds] == ["within_budget", "naive", "even"]
    assert table.variant_of == "base" and table.name == "child"


def test_remove_drops_inherited_entries(tmp_path: Path) -> None:
    table = load_table(_child(tmp_path, 'remove = ["bounds.naive"]\n'))
    assert [b.name for b in table.bounds] == ["within_budget"]


def test_a_change_of_the_parent_changes_the_childs_digest(tmp_path: Path) -> None:
    child = _child(tmp_path, "")
    before = load_table(child).digest
    _write(tmp_path, "base", PARENT.replace("default = 2", "default = 1"))
    assert load_table(child).digest != before


@pytest.mark.parametrize(
    ("body", "parent", "message"),
    [
        ('remove = ["bounds.missing"]\n', None, "'bounds.missing' names no inherited entry"),
        ('remove = ["nothing"]\n', None, "'nothing' names no inherited entry"),
        ("", "absent", "cannot read the parent"),
        ("", "../base", "is not a profile name"),
        ("", "/etc/passwd", "is not a profile name"),
    ],
)
def test_bad_inheritance_is_one_named_line(tmp_path: Path, body: str, parent: str | None, message: str) -> None:
    path = _child(tmp_path, body)
    if parent is not None:
        path.write_text(path.read_text().replace('extends = "base"', f'extends = "{parent}"'))
    with pytest.raises(DefinitionError) as info:
        load_table(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_a_cycle_is_named(tmp_path: Path) -> None:
    _write(tmp_path, "a", '[profile]\nextends = "b"\nname = "a"\n')
    _write(tmp_path, "b", '[profile]\nextends = "a"\nname = "b"\n')
    with pytest.raises(DefinitionError, match="a cycle"):
        load_table(tmp_path / "a.toml")


def test_remove_needs_extends(tmp_path: Path) -> None:
    path = _write(tmp_path, "alone", PARENT.replace('name = "base"', 'name = "base"\nremove = ["bounds.naive"]'))
    with pytest.raises(DefinitionError, match="only a table that extends another"):
        load_table(path)


def test_mutants_of_a_variant_are_made_from_the_resolved_table() -> None:
    from turnbound.properties.mutation.score import read_document

    variant = load_profile("dsh-turn-guard-refire")
    document = read_document(variant)
    assert [t["id"] for t in document["transitions"]] == [t.id for t in variant.transitions]
    assert "extends" not in document["profile"]
