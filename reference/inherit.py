"""A table that `extends` another: the parent's document with the child's entries laid over it.

A variant holds another reading of a few rules, so it states only those; the loader
resolves it into one plain document before any rule runs, and every engine sees the
resolved table. Like a Quint module importing its parent, the child replaces
definitions whole, by their name; it never edits inside one.

- `[profile]`: the child's fields win; `variant_of` defaults to the parent's name.
- Named tables (`parameters`, `enums`, `variables`, `operations`, `failures`,
  `locations`, `terminals`): an entry the child names replaces the parent's entry.
- Named lists (`transitions` by `id`; `invariants`, `bounds`, `lemmas`,
  `trace_properties`, `monitors`, `step_claims` by `name`): an entry with a known key replaces the parent's in
  place, a new one is appended.
- `report` (unnamed rules, first match wins): the child's list replaces the parent's.
- `[profile].remove = ["bounds.name", "transitions.id", ...]` drops inherited entries.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from turnbound.reference.errors import DefinitionError
from turnbound.reference.limits import PROFILE_NAME

MAX_DEPTH = 8
"""Parents above a table; a longer chain is almost certainly a mistake (or a cycle)."""

_NAMED_TABLES = ("parameters", "enums", "variables", "operations", "failures", "locations", "terminals")
_NAMED_LISTS = {
    "transitions": "id",
    "invariants": "name",
    "bounds": "name",
    "lemmas": "name",
    "trace_properties": "name",
    "monitors": "name",
    "step_claims": "name",
}

Reader = Callable[[Path], str]


def resolve(
    data: Mapping[str, Any], text: str, source: str, base: Path, read: Reader | None = None
) -> tuple[dict[str, Any], str]:
    """The document with its `extends` chain resolved, and the digest of every text it came from."""
    return _resolve(dict(data), text, source, base, read or _read, (source,))


def _resolve(
    data: dict[str, Any], text: str, source: str, base: Path, read: Reader, chain: tuple[str, ...]
) -> tuple[dict[str, Any], str]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    profile = data.get("profile")
    if not isinstance(profile, dict) or "extends" not in profile:
        if isinstance(profile, dict) and "remove" in profile:
            raise DefinitionError(
                f"{source}: profile.remove: only a table that extends another removes entries"
            )
        return data, digest
    parent_name = profile["extends"]
    if not isinstance(parent_name, str) or not PROFILE_NAME.fullmatch(parent_name):
        raise DefinitionError(
            f"{source}: profile.extends: {parent_name!r} is not a profile name "
            "(lower-case letters, digits and '-'); the parent is a table beside this one"
        )
    if len(chain) > MAX_DEPTH:
        raise DefinitionError(f"{source}: profile.extends: more than {MAX_DEPTH} tables above this one")
    parent_path = base / f"{parent_name}.toml"
    if str(parent_path) in chain:
        raise DefinitionError(
            f"{source}: profile.extends: {parent_name!r} extends this table again (a cycle)"
        )
    if not parent_path.is_file():
        raise DefinitionError(
            f"{source}: profile.extends: cannot read the parent {parent_path}: no such file"
        )
    try:
        parent_text = read(parent_path)
    except OSError as exc:
        raise DefinitionError(
            f"{source}: profile.extends: cannot read the parent {parent_path}: {exc.strerror or exc}"
        ) from None
    try:
        parent_data = tomllib.loads(parent_text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise DefinitionError(f"{parent_path}: not valid TOML: {exc}") from None
    parent, parent_digest = _resolve(
        parent_data, parent_text, str(parent_path), base, read, (*chain, str(parent_path))
    )
    merged = _overlay(parent, data, source, parent_name)
    combined = hashlib.sha256(f"{digest}\n{parent_digest}".encode()).hexdigest()
    return merged, combined


def _overlay(
    parent: Mapping[str, Any], child: Mapping[str, Any], source: str, parent_name: str
) -> dict[str, Any]:
    out: dict[str, Any] = {key: _copy(value) for key, value in parent.items()}
    child_profile = dict(child["profile"])
    child_profile.pop("extends")
    removals = child_profile.pop("remove", [])
    profile = {k: v for k, v in dict(parent.get("profile", {})).items() if k != "variant_of"}
    profile.update(child_profile)
    profile.setdefault("variant_of", parent_name)
    out["profile"] = profile
    for key, value in child.items():
        if key == "profile":
            continue
        if key in _NAMED_TABLES and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        elif key in _NAMED_LISTS and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, _NAMED_LISTS[key])
        else:
            out[key] = value
    _remove(out, removals, source)
    return out


def _merge_list(parent: list[Any], child: list[Any], key: str) -> list[Any]:
    merged = list(parent)
    index = {item.get(key): i for i, item in enumerate(merged) if isinstance(item, dict)}
    for item in child:
        name = item.get(key) if isinstance(item, dict) else None
        if name is not None and name in index:
            merged[index[name]] = item
        else:
            merged.append(item)
    return merged


def _remove(doc: dict[str, Any], removals: object, source: str) -> None:
    where = f"{source}: profile.remove"
    if not isinstance(removals, list) or not all(isinstance(r, str) for r in removals):
        raise DefinitionError(f"{where}: expected a list of 'section.name' strings")
    for entry in removals:
        section, _, name = entry.partition(".")
        if section in _NAMED_TABLES and isinstance(doc.get(section), dict) and name in doc[section]:
            del doc[section][name]
        elif section in _NAMED_LISTS and isinstance(doc.get(section), list):
            key = _NAMED_LISTS[section]
            kept = [i for i in doc[section] if not (isinstance(i, dict) and i.get(key) == name)]
            if len(kept) == len(doc[section]):
                raise DefinitionError(f"{where}: {entry!r} names no inherited entry")
            doc[section] = kept
        else:
            raise DefinitionError(f"{where}: {entry!r} names no inherited entry")


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")
