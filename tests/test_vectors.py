"""Conformance vectors: byte-stable, schema-valid, and covering what their manifest says."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from turnbound.properties.conformance.control_edges import vector_edges
from turnbound.properties.conformance.vector_gen import generate, json_text, write_vectors
from turnbound.properties.conformance.vectors import (
    MANIFEST,
    Manifest,
    load_vectors,
    schema_texts,
    vector_cases,
    vectors_dir,
)
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import load_profile, profile_cases, profile_names, spec_dir

SCHEMA = spec_dir() / "schema"
PROFILES = [n for n in profile_names() if vectors_dir(load_profile(n)).is_dir()]


def _manifest(name: str) -> Manifest:
    return Manifest.model_validate_json((vectors_dir(load_profile(name)) / MANIFEST).read_text())


def test_the_schemas_are_generated_from_the_models() -> None:
    assert {p.name: p.read_text() for p in SCHEMA.glob("*.json")} == schema_texts()


def test_every_bundled_profile_has_vectors() -> None:
    assert profile_names() == PROFILES


@pytest.mark.parametrize("name", PROFILES)
def test_vectors_and_manifest_are_schema_valid(name: str) -> None:
    directory = vectors_dir(load_profile(name))
    vector_schema = json.loads((SCHEMA / "vector.schema.json").read_text())
    manifest_schema = json.loads((SCHEMA / "manifest.schema.json").read_text())
    files = sorted(p for p in directory.glob("*.json") if p.name != MANIFEST)
    validator = jsonschema.Draft202012Validator(vector_schema)
    for path in files:
        validator.validate(json.loads(path.read_text()))
    jsonschema.Draft202012Validator(manifest_schema).validate(json.loads((directory / MANIFEST).read_text()))
    assert sorted(_manifest(name).vectors) == sorted(p.stem for p in files)


@pytest.mark.parametrize("name", PROFILES)
def test_the_manifest_covers_every_case_transition_and_reachable_edge(name: str) -> None:
    table = load_profile(name)
    manifest = _manifest(name)
    assert manifest.table_sha256 == table.digest
    assert sorted(manifest.cases.items) == sorted(c.name for c in profile_cases(table))
    assert manifest.transitions.uncovered == [] and manifest.edges.uncovered == []
    assert sorted(manifest.transitions.items) == sorted(t.id for t in table.transitions)
    assert len(manifest.vectors) <= 400
    walked = {key for v in load_vectors(vectors_dir(table)) for key in vector_edges(table, v)}
    assert set(manifest.edges.items) <= walked


@pytest.mark.parametrize("name", PROFILES)
def test_each_vector_is_what_the_reference_does(name: str) -> None:
    table = load_profile(name)
    cases = vector_cases(table, vectors_dir(table))  # re-runs each and compares, or raises
    assert len(cases) == len(_manifest(name).vectors)


def test_a_stale_or_edited_vector_is_refused(tmp_path: Path) -> None:
    table = load_profile("deeptutor-scheduler")
    source = vectors_dir(table) / "case-ordinary_cap.json"
    data = json.loads(source.read_text())
    data["expected"]["counters"]["rounds"] = 2
    (tmp_path / "case-ordinary_cap.json").write_text(json.dumps(data))
    with pytest.raises(DefinitionError, match="its expected trace is not what the reference does"):
        vector_cases(table, tmp_path)
    data = json.loads(source.read_text())
    data["table_sha256"] = "0" * 64
    (tmp_path / "case-ordinary_cap.json").write_text(json.dumps(data))
    with pytest.raises(DefinitionError, match="generated from another version of"):
        vector_cases(table, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROFILES)
def test_regenerating_changes_no_byte(name: str) -> None:
    table = load_profile(name)
    vectors, manifest = generate(table)
    expected = {f"{v.id}.json": json_text(v) for v in vectors} | {MANIFEST: json_text(manifest)}
    directory = vectors_dir(table)
    assert {p.name: p.read_text() for p in directory.glob("*.json")} == expected


def test_a_regeneration_removes_the_edge_vectors_the_previous_one_wrote(tmp_path: Path) -> None:
    """Edge vectors are named TRANSITION-DIGEST: a run no longer generated goes, another file stays."""
    table = load_profile("dsh-turn-unguarded")
    out, vectors, manifest = write_vectors(table, tmp_path)
    stale = "step-0123456789.json"
    (out / stale).write_text("{}")
    (out / "notes-by-hand.json").write_text("{}")
    listed = manifest.model_copy(update={"vectors": [*manifest.vectors, stale.removesuffix(".json")]})
    (out / MANIFEST).write_text(json_text(listed))
    write_vectors(table, tmp_path)
    names = {p.name for p in out.glob("*.json")}
    assert stale not in names and "notes-by-hand.json" in names
    assert {f"{v.id}.json" for v in vectors} <= names


def test_an_edge_is_told_apart_by_the_valuation_of_the_guard_it_takes() -> None:
    """A partial failure propagates at rounds == 0 and at rounds > 0: two edges, so one vector
    can not stand for both."""
    manifest = _manifest("deeptutor-scheduler")
    partial = [
        key
        for key in manifest.edges.items
        if key.startswith('explore_round | {"fields":{"partial":true},"raise":"host_failure"} -> propagate')
    ]
    assert sorted(k.split(" given ")[1] for k in partial) == [
        "propagate(not rounds == 0)",
        "propagate(rounds == 0)",
    ]
    assert len({manifest.edges.items[k] for k in partial}) == 2
