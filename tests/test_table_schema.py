"""The table format's JSON Schema (spec/schema/table.schema.json): every bundled table fits it,
and it rejects the structural mistakes an editor should flag before turnbound loads the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from turnbound.reference.profiles import profile_names, spec_dir, table_path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((spec_dir() / "schema" / "table.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _table(name: str) -> dict[str, Any]:
    with table_path(name).open("rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("name", profile_names())
def test_every_bundled_table_fits_the_schema(name: str) -> None:
    errors = [e.message for e in VALIDATOR.iter_errors(_table(name))]
    assert errors == []


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda t: t["profile"].pop("name"), "name"),
        (lambda t: t["transitions"][0].update(form="loop"), "form"),
        (lambda t: t["transitions"][0].update(guard=True), "guard"),
        (lambda t: t.update(bound=[]), "bound"),
    ],
    ids=["missing name", "misspelt from", "guard not text", "unknown section"],
)
def test_the_schema_flags_structural_mistakes(edit: Any, field: str) -> None:
    table = _table("deeptutor-scheduler")
    edit(table)
    messages = [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(table)]
    assert messages and any(field in m for m in messages), messages


def _taplo(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("taplo")), "check"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_editor_checks_the_bundled_tables_with_the_schema() -> None:
    """Taplo, the engine of Even Better TOML, reads .taplo.toml as the README says."""
    result = _taplo(ROOT)
    assert result.returncode == 0, result.stderr


def test_an_editor_points_at_the_misspelt_field(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".taplo.toml", tmp_path)
    (tmp_path / "spec" / "schema").mkdir(parents=True)
    shutil.copy(spec_dir() / "schema" / "table.schema.json", tmp_path / "spec" / "schema")
    text = table_path("dsh-turn-guard").read_text().replace("\nfrom = ", "\nform = ", 1)
    (tmp_path / "spec" / "typo.toml").write_text(text)
    result = _taplo(tmp_path)
    assert result.returncode != 0
    assert "'form' was unexpected" in result.stderr
