"""Hypothesis strategies for hostile input to every reader, and the one property they share.

Each reader of text someone else wrote (tables, expressions, host scripts, cases,
vectors, logs, ITF traces, raw JSON) must, for any input, either return a result or
raise an error of turnbound's own type (`TurnboundError`, one line). Anything else --
a KeyError, RecursionError, OverflowError, MemoryError -- is a bug the property finds.

Inputs are mutations of real ones (the bundled tables, cases and vectors, a log the
reference writes), so most of them get deep into the reader before they break, plus
raw text mutations (bytes flipped, inserted, cut, repeated) and hostile values (deep
nesting, huge integers, look-alike Unicode, NaN).
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from turnbound.properties.conformance.cases import bundled_cases
from turnbound.properties.conformance.messages import trace_messages
from turnbound.properties.conformance.validate import validate
from turnbound.properties.conformance.vectors import load_vector, vector_case, vectors_dir
from turnbound.properties.export.itf import read_itf, to_itf
from turnbound.reference.cases import check_case, load_case
from turnbound.reference.errors import TurnboundError
from turnbound.reference.expr_parse import Symbol, parse_expr
from turnbound.reference.host import ScriptHost, check_script, parse_script
from turnbound.reference.interpreter import run
from turnbound.reference.jsonfile import parse_json
from turnbound.reference.loader import build_table, load_table_text
from turnbound.reference.profiles import cases_dir, load_profile, profile_names, spec_dir
from turnbound.reference.table import Table
from turnbound.reference.types import BOOL, INT

TABLES = profile_names()
SMALL_TABLES = ["dsh-turn-unguarded", "dsh-turn-guard", "deeptutor-scheduler"]


@cache
def table_text(name: str) -> str:
    return (spec_dir() / f"{name}.toml").read_text(encoding="utf-8")


@cache
def table_data(name: str) -> dict[str, Any]:
    return tomllib.loads(table_text(name))


@cache
def table(name: str) -> Table:
    return load_profile(name)


@cache
def case_texts(name: str) -> tuple[str, ...]:
    return tuple(p.read_text(encoding="utf-8") for p in sorted(cases_dir(table(name)).glob("*.json")))


@cache
def vector_texts(name: str) -> tuple[str, ...]:
    paths = sorted(p for p in vectors_dir(table(name)).glob("*.json") if p.name != "manifest.json")
    small = sorted(paths, key=lambda p: p.stat().st_size)[:12]
    return tuple(p.read_text(encoding="utf-8") for p in small)


# -- hostile values ---------------------------------------------------------------------

HOSTILE_TEXT = [
    "",
    " ",
    "#",
    "\n",
    "\x00",
    "ｒｏｕｎｄｓ",
    "ﬁnish",
    "\u202e",
    "\ud7ff",
    "../../x",
    "/etc/passwd",
    "true # and false",
    "rounds < 3 \\",
    "0x10",
    "1_000",
    "1e3",
    "True",
    "None",
    "__import__('os')",
    "(" * 60,
    "9" * 40,
    "a" * 3000,
    "x if y else z",
    "not not not true",
    "rounds * rounds * rounds * rounds",
]

HOSTILE_INTS = [0, 1, -1, 2, 10**9, 10**12, 10**21, -(10**21), 2**63, 10**4000]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(HOSTILE_INTS),
    st.integers(min_value=-5, max_value=300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=12),
)
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8) | st.sampled_from(HOSTILE_TEXT), inner, max_size=4),
    ),
    max_leaves=12,
)


# -- structural mutation of a parsed document --------------------------------------------


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _mutate_string(data: st.DataObject, text: str) -> str:
    how = data.draw(st.sampled_from(["insert", "replace", "cut", "hostile", "swap-case"]))
    at = data.draw(st.integers(0, len(text)))
    if how == "insert":
        return text[:at] + data.draw(st.sampled_from(HOSTILE_TEXT) | st.text(max_size=3)) + text[at:]
    if how == "replace":
        return text[:at] + data.draw(st.text(min_size=1, max_size=2)) + text[at + 1 :]
    if how == "cut":
        return text[:at]
    if how == "hostile":
        return data.draw(st.sampled_from(HOSTILE_TEXT))
    return text.swapcase()


def mutate_document(data: st.DataObject, doc: Any, rounds: int = 3) -> Any:
    """A copy of `doc` with up to `rounds` structural edits: delete, replace, rename, duplicate, tweak."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, rounds))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        if not path:
            continue
        parent = _get(doc, path[:-1])
        key = path[-1]
        how = data.draw(st.sampled_from(["delete", "replace", "rename", "duplicate", "tweak"]))
        current = parent[key]
        if how == "delete":
            del parent[key]
        elif how == "replace":
            parent[key] = data.draw(values)
        elif how == "rename" and isinstance(parent, dict):
            parent[_mutate_string(data, str(key))] = parent.pop(key)
        elif how == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(current))
        elif isinstance(current, str):
            parent[key] = _mutate_string(data, current)
        elif isinstance(current, bool):
            parent[key] = not current
        elif isinstance(current, int):
            parent[key] = data.draw(st.sampled_from(HOSTILE_INTS) | st.integers(-3, 300))
    return doc


def mutate_text(data: st.DataObject, text: str) -> str:
    """Raw text edits: a span cut, repeated, replaced by hostile text or random characters."""
    for _ in range(data.draw(st.integers(1, 3))):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 80)))
        how = data.draw(st.sampled_from(["cut", "repeat", "hostile", "random", "truncate", "nest"]))
        if how == "cut":
            text = text[:a] + text[b:]
        elif how == "repeat":
            text = text[:b] + text[a:b] * data.draw(st.integers(2, 50)) + text[b:]
        elif how == "hostile":
            text = text[:a] + data.draw(st.sampled_from(HOSTILE_TEXT)) + text[b:]
        elif how == "random":
            text = text[:a] + data.draw(st.text(max_size=6)) + text[b:]
        elif how == "truncate":
            text = text[:a]
        else:
            depth = data.draw(st.sampled_from([40, 1000, 100_000]))
            text = text[:a] + "[" * depth + text[a:]
    return text


# -- the property ------------------------------------------------------------------------


def clean(reader: Callable[[], object]) -> object:
    """Run a reader: a result, or None after an error of turnbound's own type in one line.

    Any other exception propagates, so the calling test fails with it.
    """
    try:
        return reader()
    except TurnboundError as exc:
        message = str(exc)
        assert message and "\n" not in message, f"not one line: {message!r}"
        assert "Traceback" not in message
        return None


def read_table_document(data: st.DataObject) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    doc = mutate_document(data, table_data(name))
    return clean(lambda: build_table(doc, f"{name}-mutant.toml", "0" * 64))


def read_table_text(data: st.DataObject) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    text = mutate_text(data, table_text(name))
    return clean(lambda: load_table_text(text, f"{name}-mutant.toml"))


_SCOPE = {
    "rounds": Symbol("rounds", "var", INT),
    "budget": Symbol("budget", "param", INT),
    "done": Symbol("done", "var", BOOL),
    "hasTools": Symbol("hasTools", "fact", BOOL),
}
_EXPRESSIONS = [
    "rounds < budget and not done",
    "rounds + 1 if hasTools else rounds",
    "budget - rounds * 2 >= 0 or done == hasTools",
    "0 <= rounds <= budget",
]


def read_expression(data: st.DataObject) -> object:
    text = data.draw(
        st.sampled_from(_EXPRESSIONS)
        | st.text(
            alphabet=st.sampled_from(list("rounds budget done hasTools 0123456789()+-*<>=!#\\.ｒﬁ'\"[]{}:,")),
            max_size=40,
        )
    )
    if data.draw(st.booleans()):
        text = mutate_text(data, text)
    expected = data.draw(st.sampled_from([BOOL, INT, None]))
    return clean(lambda: parse_expr(text, _SCOPE, expected))


def read_json_text(data: st.DataObject) -> object:
    source = json.dumps(data.draw(values), allow_nan=True)
    text = mutate_text(data, source) if data.draw(st.booleans()) else source
    return clean(lambda: parse_json(text, "x.json"))


def read_script(data: st.DataObject) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    texts = case_texts(name)
    case = json.loads(data.draw(st.sampled_from(texts)))
    script = mutate_document(data, case["script"])
    t = table(name)

    def go() -> object:
        parsed = parse_script(script, "s.json")
        check_script(t, parsed, "s.json", violations_expected=data.draw(st.booleans()))
        return run(t, ScriptHost(parsed), case.get("params", {}))

    return clean(go)


def read_case(data: st.DataObject, directory: Path) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    text = data.draw(st.sampled_from(case_texts(name)))
    if data.draw(st.booleans()):
        text = mutate_text(data, text)
    else:
        text = json.dumps(mutate_document(data, json.loads(text)))
    path = directory / f"{json.loads(case_texts(name)[0])['name']}.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return clean(lambda: check_case(table(name), load_case(path)))


def read_vector(data: st.DataObject, directory: Path) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    text = data.draw(st.sampled_from(vector_texts(name)))
    original = json.loads(text)
    if data.draw(st.booleans()):
        text = mutate_text(data, text)
    else:
        text = json.dumps(mutate_document(data, original))
    path = directory / f"{original['id']}.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return clean(lambda: vector_case(table(name), load_vector(path), str(path)))


@cache
def log_lines(name: str) -> tuple[str, ...]:
    """A log of the first three cases' reference runs, as an implementation's log would hold them."""
    cases = bundled_cases(table(name))[:3]
    return tuple(json.dumps(m) for c in cases for m in trace_messages(c.expected))


def read_log(data: st.DataObject, directory: Path) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    lines = list(log_lines(name))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        how = data.draw(st.sampled_from(["text", "doc", "drop", "repeat"]))
        if how == "text":
            lines[i] = mutate_text(data, lines[i])
        elif how == "doc":
            try:  # an earlier mutation of this line may have made it unparsable, or nested too deeply
                original = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            lines[i] = json.dumps(mutate_document(data, original), allow_nan=True)
        elif how == "drop":
            del lines[i]
            if not lines:
                lines = ["{}"]
        else:
            lines.insert(i, lines[i])
    path = directory / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return clean(lambda: validate(table(name), path))


@cache
def itf_document(name: str) -> dict[str, Any]:
    """The ITF trace of the profile's shortest case, cut to its first four states (mutations stay cheap)."""
    t = table(name)
    cases = [json.loads(text) for text in case_texts(name)]
    case = min(cases, key=lambda c: sum(len(q) for q in c["script"].values()))
    trace = run(t, ScriptHost(parse_script(case["script"], "case")), case.get("params", {}))
    doc = to_itf(t, trace)
    doc["states"] = doc["states"][:4]
    return doc


def read_itf_file(data: st.DataObject, directory: Path) -> object:
    name = data.draw(st.sampled_from(SMALL_TABLES))
    doc = mutate_document(data, itf_document(name))
    text = json.dumps(doc, allow_nan=True)
    if data.draw(st.booleans()):
        text = mutate_text(data, text)
    path = directory / "trace.itf.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return clean(lambda: read_itf(path))


READERS_IN_MEMORY: dict[str, Callable[[st.DataObject], object]] = {
    "table (structural)": read_table_document,
    "table (text)": read_table_text,
    "expression": read_expression,
    "json": read_json_text,
    "script": read_script,
}
READERS_ON_DISK: dict[str, Callable[[st.DataObject, Path], object]] = {
    "case": read_case,
    "vector": read_vector,
    "log": read_log,
    "itf": read_itf_file,
}
