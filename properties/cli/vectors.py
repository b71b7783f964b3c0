"""`turnbound vectors generate|check`: the conformance vectors of the bundled profiles and their schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from turnbound.properties.cli.app import app, console, emit_json, finish, json_option
from turnbound.properties.conformance.vector_gen import generate, json_text, write_vectors
from turnbound.properties.conformance.vectors import MANIFEST, schema_texts, vectors_dir
from turnbound.reference.profiles import load_profile, profile_names, spec_dir


@app.group("vectors")
def vectors_group() -> None:
    """Conformance vectors: language-neutral runs of the reference (spec/vectors/<profile>/)."""


@vectors_group.command("generate")
@click.argument("profiles", nargs=-1)
@json_option
def vectors_generate_cmd(profiles: tuple[str, ...], as_json: bool) -> None:
    """Write the vectors and manifest of each PROFILE (default: every bundled one), and spec/schema/."""
    rows: list[dict[str, Any]] = []
    for name in profiles or profile_names():
        table = load_profile(name)
        out, vectors, manifest = write_vectors(table)
        rows.append(
            {
                "profile": table.name,
                "directory": str(out),
                "vectors": len(vectors),
                "cases": len(manifest.cases.items),
                "transitions": len(manifest.transitions.items),
                "transitions_uncovered": manifest.transitions.uncovered,
                "edges": len(manifest.edges.items),
                "edges_uncovered": manifest.edges.uncovered,
                "parameter_assignments": manifest.parameter_assignments,
            }
        )
    schema_dir = spec_dir() / "schema"
    schema_dir.mkdir(exist_ok=True)
    for file, text in schema_texts().items():
        (schema_dir / file).write_text(text, encoding="utf-8")
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        uncovered = f"{len(r['transitions_uncovered'])} transitions, {len(r['edges_uncovered'])} edges"
        console.print(
            f"{r['profile']}: {r['vectors']} vectors covering {r['cases']} cases, {r['transitions']} "
            f"transitions and {r['edges']} control edges over {r['parameter_assignments']} parameter "
            f"assignments ({uncovered} uncovered) -> {r['directory']}",
            markup=False,
            soft_wrap=True,
        )


@vectors_group.command("check")
@click.argument("profiles", nargs=-1)
@json_option
def vectors_check_cmd(profiles: tuple[str, ...], as_json: bool) -> None:
    """Regenerate in memory and compare with the checked-in files: exit 1 on any drift."""
    drift: list[str] = []
    for name in profiles or profile_names():
        table = load_profile(name)
        vectors, manifest = generate(table)
        directory = vectors_dir(table)
        expected = {f"{v.id}.json": json_text(v) for v in vectors} | {MANIFEST: json_text(manifest)}
        drift += _compare(directory, expected)
    drift += _compare(spec_dir() / "schema", schema_texts(), extra_ok=True)
    if as_json:
        emit_json({"drift": drift})
    else:
        for line in drift:
            console.print(line, markup=False)
        console.print(
            "vectors: no drift" if not drift else f"vectors: {len(drift)} files drifted", markup=False
        )
    finish(not drift)


def _compare(directory: Path, expected: dict[str, str], extra_ok: bool = False) -> list[str]:
    out = []
    present = {p.name for p in directory.glob("*.json")} if directory.is_dir() else set()
    for name, text in sorted(expected.items()):
        path = directory / name
        if name not in present:
            out.append(f"missing: {path}")
        elif not _same(path, text):
            out.append(f"differs: {path}")
    if not extra_ok:
        out += [f"not generated: {directory / n}" for n in sorted(present - set(expected))]
    return out


def _same(path: Path, text: str) -> bool:
    """Byte-equal to the text generated (a file that is not UTF-8, or is huge, simply differs)."""
    want = text.encode("utf-8")
    try:
        with path.open("rb") as f:
            return f.read(len(want) + 1) == want
    except OSError:
        return False
