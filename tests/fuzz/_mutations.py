"""Seeded, deterministic mutations of the bundled cassettes and scenarios (the fuzz tier's corpus).

``cassette_input(seed, index)`` and ``scenario_input(seed, index)`` make input ``index`` of a run
from its own ``random.Random(f"{seed}:{kind}:{index}")``: the same seed and index give the same
bytes on every machine, whatever ran before (so one failing input is reproduced alone, by its
index). Each input is a bundled source file put through one to three mutations:

- structural, on the parsed document: a type swap, a missing or an extra key, a huge, negative or
  non-finite number, a lone surrogate, a very long string, deep nesting, YAML anchors and aliases
  (billion-laughs shapes included), ``!!binary`` bodies (gzip bombs and invalid UTF-8 included),
  ``!!python/...`` tags, merge keys, ``$ref`` cycles and exponential ``$ref`` schemas in tool
  schemas, and for cassettes broken stream framing and invalid UTF-8 in streamed chunks;
- byte level, on the text: truncation, bit flips, inserted, deleted or repeated bytes, BOMs and
  other encodings (UTF-16/32), CRLF line ends, NULs and invalid UTF-8.

Nothing here runs the package: the driver (``tests.fuzz._drive``) feeds the inputs to it.
"""

from __future__ import annotations

import base64
import copy
import functools
import gzip
import json
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

__all__ = [
    "CASSETTES",
    "ROOT",
    "SCENARIOS",
    "FuzzInput",
    "cassette_input",
    "cassette_sources",
    "gzip_bomb",
    "scenario_input",
    "scenario_sources",
]

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
SCENARIOS = ROOT / "scenarios"


@dataclass(frozen=True)
class FuzzInput:
    """One mutated file: where it goes (relative to the input folder), its bytes, how it was made."""

    kind: str
    """``cassette`` or ``scenario``."""
    index: int
    seed: str
    source: str
    """The bundled file it was made from, relative to the repository."""
    relpath: str
    """``<traffic format>/<scenario id>.yaml`` for a cassette, ``<scenario id>.yaml`` for a scenario."""
    mutations: tuple[str, ...]
    data: bytes
    name: str = ""
    """A crafted input's name (``tests.fuzz._crafted``); empty for a mutated one."""

    @property
    def key(self) -> str:
        """How the driver names it: ``crafted:<name>``, else ``<kind>:<index>``."""
        return f"crafted:{self.name}" if self.name else f"{self.kind}:{self.index}"

    def describe(self) -> str:
        return f"{self.key} (seed {self.seed}) from {self.source} by {'+'.join(self.mutations)}"


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------


@functools.cache
def cassette_sources() -> tuple[Path, ...]:
    return tuple(sorted(CASSETTES.rglob("*.yaml")))


@functools.cache
def scenario_sources() -> tuple[Path, ...]:
    return tuple(sorted(SCENARIOS.rglob("*.yaml")))


@functools.cache
def _text(path: Path) -> str:
    return path.read_text("utf-8")


@functools.cache
def _json_of(path: Path) -> str:
    """The parsed document, kept as canonical JSON text (each input copies it with ``json.loads``)."""
    text = _text(path)
    data = json.loads(text) if path.is_relative_to(CASSETTES) else yaml.safe_load(text)
    return json.dumps(data)


# --------------------------------------------------------------------------------------------
# Raw snippets: YAML or JSON text put in place of a placeholder string
# --------------------------------------------------------------------------------------------


@functools.cache
def gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, gzipped (about a thousandth of the size)."""
    block = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    return b"".join(compressor.compress(block) for _ in range(megabytes)) + compressor.flush()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _laughs(rng: random.Random) -> str:
    """A billion-laughs flow sequence: ``levels`` anchors, each ``width`` aliases of the one before."""
    levels, width = rng.choice([(3, 4), (5, 6), (7, 8), (9, 10), (12, 10), (20, 2), (26, 2)])
    parts = ['&l0 "lol"']
    for i in range(1, levels + 1):
        parts.append(f"&l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]")
    return "[" + ", ".join(parts) + "]"


def _deep(rng: random.Random, yaml_ok: bool) -> str:
    depth = rng.choice([50, 500, 1000, 3000, 20000])
    if yaml_ok and rng.random() < 0.3:
        return "{a: " * depth + "1" + "}" * depth
    if rng.random() < 0.5:
        return "[" * depth + "1" + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth


_NUMBERS_JSON = [
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "-0",
    "-1",
    "0",
    "9" * 400,
    "-" + "9" * 400,
    "9" * 5000,  # past int_max_str_digits (4,300): int() raises ValueError
    "18446744073709551616",
    "-9223372036854775809",
    "1e-400",
    "4.9e-324",
    "1.7976931348623157e308",
    "65536",
    "100000",
]
_NUMBERS_YAML = [*_NUMBERS_JSON[:2], ".nan", ".inf", "-.inf", "0x7fffffffffffffffff", "0o777", "1_000", "+12", "~"]


def _snippet(rng: random.Random, family: str, yaml_ok: bool) -> str:
    """Raw text for one placeholder: a value JSON and YAML both read (YAML-only ones when ``yaml_ok``)."""
    if family == "number":
        return rng.choice(_NUMBERS_YAML if yaml_ok and rng.random() < 0.4 else _NUMBERS_JSON)
    if family == "deep":
        return _deep(rng, yaml_ok)
    if family == "surrogate":
        lone = rng.choice(["\\ud800", "\\udfff", "\\udc80", "\\ud83d", "a\\ud800b", "\\ud800\\ud800"])
        return f'"{lone}"'
    if family == "long":
        size = rng.choice([10_000, 100_000, 400_000])
        return '"' + rng.choice("aé中\\n") * size + '"'
    if family == "control":
        return json.dumps("".join(chr(rng.choice([0, 1, 7, 8, 0x1B, 0x7F, 0x85, 0x2028, 0xFEFF])) for _ in range(8)))
    assert yaml_ok, family
    if family == "laughs":
        return _laughs(rng)
    if family == "binary":
        choice = rng.random()
        if choice < 0.35:
            data = gzip_bomb(rng.choice([8, 64, 256]))
        elif choice < 0.55:
            data = b"\x1f\x8b" + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))  # broken gzip
        elif choice < 0.8:
            data = bytes(
                rng.choice([0x80, 0xC0, 0xED, 0xF5, 0xFF, 0xFE, 0x00, 0x41]) for _ in range(rng.randint(1, 64))
            )
        else:
            data = gzip.compress(b'{"a": ' * 5000 + b"1" + b"}" * 5000, mtime=0)
        return f'!!binary "{_b64(data)}"'
    if family == "badbinary":
        return rng.choice(['!!binary "%%%%"', '!!binary "QUJD="', "!!binary 12", '!!binary "A"', "!!binary []"])
    if family == "python":
        return rng.choice(
            [
                "!!python/object/apply:os.getpid []",
                "!!python/name:os.getcwd",
                '!!python/object/new:builtins.str ["x"]',
                "!!python/object/apply:multidict._multidict.istr [Content-Type]",
                "!!python/object/apply:multidict._multidict.istr [[1, 2]]",
                '!!python/tuple [1, "a"]',
                "!!python/bytes AAAA",
                "!!set {a, b}",
                '!!timestamp "2001-12-14t21:59:43.10-05:00"',
                "!!omap [a: 1, b: 2]",
                '!custom "x"',
                '!<tag:example.com,2000:x> "y"',
            ]
        )
    if family == "alias":
        return "*nowhere" if rng.random() < 0.3 else "&x [1, *x]" if rng.random() < 0.5 else '&a "x"'
    if family == "merge":
        return rng.choice(["{<<: {a: 1}, b: 2}", "{<<: [{a: 1}, {a: 2}], <<: {c: 3}}", "{<<: 1}", "{<<: *nowhere}"])
    raise AssertionError(family)


_SNIPPETS_ANY = ("number", "deep", "surrogate", "long", "control")
_SNIPPETS_YAML = ("laughs", "binary", "badbinary", "python", "alias", "merge")

# --------------------------------------------------------------------------------------------
# Walking a document
# --------------------------------------------------------------------------------------------

_Path = tuple[Any, ...]


def _nodes(data: Any, path: _Path = ()) -> list[tuple[_Path, Any]]:
    found: list[tuple[_Path, Any]] = [(path, data)]
    if isinstance(data, dict):
        for key, value in data.items():
            found.extend(_nodes(value, (*path, key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found.extend(_nodes(value, (*path, i)))
    return found


def _set(data: Any, path: _Path, value: Any) -> Any:
    if not path:
        return value
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return data


def _pick(rng: random.Random, data: Any, want: Callable[[_Path, Any], bool] | None = None) -> _Path | None:
    nodes = [(p, v) for p, v in _nodes(data) if want is None or want(p, v)]
    if not nodes:
        return None
    return rng.choice(nodes)[0]


_PLACEHOLDER = "__fuzz_raw_{}__"


class _Doc:
    """A document being mutated: the data, and raw snippets to put in place of placeholders."""

    def __init__(self, data: Any, kind: str) -> None:
        self.data = data
        self.kind = kind
        self.raw: dict[str, str] = {}
        self.yaml_only = False

    def place(self, path: _Path, snippet: str, *, yaml_only: bool) -> None:
        token = _PLACEHOLDER.format(len(self.raw))
        self.raw[token] = snippet
        self.data = _set(self.data, path, token)
        self.yaml_only = self.yaml_only or yaml_only


# --------------------------------------------------------------------------------------------
# Structural mutations
# --------------------------------------------------------------------------------------------


def _type_swap(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data)
    if path is not None:
        value = rng.choice([None, 0, -1, 1.5, True, "", "x", [], {}, [None], {"": None}, "🦀" * 3, 2**70])
        doc.data = _set(doc.data, path, value)


def _drop_key(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, dict) and bool(v))
    if path is not None:
        node = doc.data
        for step in path:
            node = node[step]
        del node[rng.choice(list(node))]


def _extra_key(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, dict))
    if path is not None:
        node = doc.data
        for step in path:
            node = node[step]
        key = rng.choice(["extra", "", "x" * 300, "\u0000", "__proto__", "interactions", "version", "id", "🦀", "1"])
        node[key] = rng.choice([None, 1, "v", [1, 2], {"k": "v"}, True])


def _empty_container(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, dict | list) and bool(v))
    if path is not None:
        doc.data = _set(doc.data, path, type(_get(doc.data, path))())


def _get(data: Any, path: _Path) -> Any:
    for step in path:
        data = data[step]
    return data


def _duplicate_item(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, list) and bool(v))
    if path is not None:
        items = _get(doc.data, path)
        items.extend(copy.deepcopy(items) * rng.choice([1, 3, 20]))


def _string_edit(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, str))
    if path is not None:
        text = _get(doc.data, path)
        cut = rng.randint(0, len(text))
        insert = rng.choice(["", "\n", "\r\n", "\x00", "'", '"', "\\", "{", "}", "[", "data: ", "\n\n", "\ufeff", "🦀"])
        doc.data = _set(doc.data, path, text[:cut] + insert + text[cut + rng.randint(0, 5) :])


def _placed(family_choices: tuple[str, ...], *, yaml_only: bool) -> Callable[[random.Random, _Doc], None]:
    def mutate(rng: random.Random, doc: _Doc) -> None:
        family = rng.choice(family_choices)
        want = (lambda p, v: not isinstance(v, dict | list)) if rng.random() < 0.7 else None
        for _ in range(rng.choice([1, 1, 2, 3])):
            path = _pick(rng, doc.data, want)
            if path is None or not path:
                return
            doc.place(path, _snippet(rng, family, yaml_only), yaml_only=yaml_only)

    return mutate


def _number(rng: random.Random, doc: _Doc) -> None:
    path = _pick(rng, doc.data, lambda p, v: isinstance(v, int | float) and not isinstance(v, bool))
    if path is None:
        path = _pick(rng, doc.data, lambda p, v: not isinstance(v, dict | list))
    if path:
        doc.place(path, _snippet(rng, "number", doc.kind == "scenario"), yaml_only=False)


_SCHEMA_KEYS = ("inputSchema", "parameters", "input_schema", "parametersJsonSchema", "schema")


def _ref_schema(rng: random.Random, levels: int | None = None) -> dict[str, Any]:
    shape = rng.choice(["cycle", "self", "exponential", "dangling", "remote", "odd"])
    if shape == "cycle":
        return {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"$ref": "#/$defs/A"}},
        }
    if shape == "self":
        return {
            "type": "object",
            "properties": {"me": {"$ref": "#"}},
            "definitions": {"x": {"$ref": "#/definitions/x"}},
        }
    if shape == "exponential":
        n = levels or rng.choice([10, 20, 26, 32])
        defs: dict[str, Any] = {"d0": {"type": "string"}}
        for i in range(1, n + 1):
            defs[f"d{i}"] = {
                "type": "object",
                "properties": {"l": {"$ref": f"#/$defs/d{i - 1}"}, "r": {"$ref": f"#/$defs/d{i - 1}"}},
            }
        return {"type": "object", "properties": {"root": {"$ref": f"#/$defs/d{n}"}}, "$defs": defs}
    if shape == "dangling":
        return {
            "type": "object",
            "properties": {"a": {"$ref": rng.choice(["#/nope", "#/$defs/", "", "#/%zz", "#/~2"])}},
        }
    if shape == "remote":
        return {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}}
    return {"type": rng.choice(["objekt", ["object", 5], None]), "properties": rng.choice([[], "x", {"a": 5}])}


def _schema_refs(rng: random.Random, doc: _Doc) -> None:
    """A ``$ref`` cycle or an exponential ``$ref`` schema where a tool schema is (or anywhere)."""
    paths = [p for p, v in _nodes(doc.data) if p and p[-1] in _SCHEMA_KEYS]
    if not paths:
        paths = [p for p, v in _nodes(doc.data) if isinstance(v, dict) and p]
    if paths:
        doc.data = _set(doc.data, rng.choice(paths), _ref_schema(rng))


def _chunks(rng: random.Random, doc: _Doc) -> None:
    """Stream framing and chunk bytes: split, merge, drop or garble the streamed pieces."""
    paths = [p for p, v in _nodes(doc.data) if p and p[-1] == "chunks" and isinstance(v, list) and v]
    if not paths:
        paths = [p for p, v in _nodes(doc.data) if p and p[-1] == "string" and isinstance(v, str)]
        if not paths:
            return _string_edit(rng, doc)
        path = rng.choice(paths)
        text = _get(doc.data, path)
        doc.data = _set(doc.data, (*path[:-1], "chunks"), [text[i : i + 7] for i in range(0, len(text), 7)])
        del _get(doc.data, path[:-1])["string"]
        return None
    path = rng.choice(paths)
    chunks: list[Any] = _get(doc.data, path)
    joined = "".join(c for c in chunks if isinstance(c, str))
    how = rng.choice(["split", "merge", "drop", "framing", "crlf", "binary", "reorder", "nonstring", "huge-event"])
    if how == "split":
        cuts = sorted(rng.sample(range(len(joined) + 1), min(len(joined) + 1, rng.randint(1, 30))))
        chunks[:] = [joined[a:b] for a, b in zip([0, *cuts], [*cuts, len(joined)], strict=True)]
    elif how == "merge":
        chunks[:] = [joined]
    elif how == "drop":
        del chunks[rng.randrange(len(chunks))]
    elif how == "framing":
        bad = rng.choice(
            [
                joined.replace("\n\n", "\n"),
                joined.replace("data: ", "data:"),
                joined.replace("data: ", ""),
                joined.replace("\n", ""),
                joined[: len(joined) // 2],
                "data: {\n\n" + joined,
                joined + "data: [DONE]\n\ndata: {}\n\n",
                joined.replace("}", "", 1),
                ":" * 1000 + "\n" + joined,
                "event: \ndata: \n\n" * 100,
                "data: " + "x" * 100_000 + "\n\n",
                joined.replace("\n", "\r"),
            ]
        )
        chunks[:] = [bad]
    elif how == "crlf":
        chunks[:] = [c.replace("\n", "\r\n") if isinstance(c, str) else c for c in chunks]
    elif how == "binary":
        i = rng.randrange(len(chunks))
        raw = chunks[i].encode("utf-8") if isinstance(chunks[i], str) else b""
        at = rng.randint(0, len(raw))
        cut = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe4\xb8", b"\x80\x80", b"\x00"])
        chunks[i] = _PLACEHOLDER.format(len(doc.raw))
        doc.raw[chunks[i]] = f'!!binary "{_b64(raw[:at] + cut + raw[at:])}"'
        doc.yaml_only = True
    elif how == "reorder":
        rng.shuffle(chunks)
    elif how == "nonstring":
        chunks[rng.randrange(len(chunks))] = rng.choice([None, 5, [], {"a": 1}, True])
    else:
        depth = rng.choice([100, 1000, 3000, 20000])
        chunks.append('data: {"deep": ' + "[" * depth + "]" * depth + "}\n\n")
    return None


def _status(rng: random.Random, doc: _Doc) -> None:
    paths = [p for p, v in _nodes(doc.data) if p and p[-1] in ("status", "code", "status_code")]
    if paths:
        value = rng.choice(
            [-1, 0, 99, 199, 299, 300, 404, 429, 499, 500, 503, 600, 999, 2**40, "200", "abc", None, 200.5]
        )
        doc.data = _set(doc.data, rng.choice(paths), value)


def _swap_uri(rng: random.Random, doc: _Doc) -> None:
    paths = [p for p, v in _nodes(doc.data) if p and p[-1] == "uri"]
    if paths:
        value = rng.choice(
            [
                "http://[::1",
                "",
                "not a url",
                "http://127.0.0.1/v1/chat/completions?stream=true#stream",
                "http://127.0.0.1/v1beta/models/x:streamGenerateContent?alt=sse",
                "http://127.0.0.1/api/chat",
                "http://127.0.0.1/v1/messages",
                "http://127.0.0.1/v1/responses",
                "http://" + "a" * 70_000,
                "http://127.0.0.1:99999/",
                "file:///etc/passwd",
                "http://user:pass@127.0.0.1/%zz",
            ]
        )
        doc.data = _set(doc.data, rng.choice(paths), value)


def _splice(rng: random.Random, doc: _Doc) -> None:
    """A subtree of another bundled file of the same kind, put in place of one of this one."""
    sources = cassette_sources() if doc.kind == "cassette" else scenario_sources()
    other = json.loads(_json_of(rng.choice(sources)))
    nodes = _nodes(other)
    _, value = rng.choice(nodes)
    path = _pick(rng, doc.data)
    if path:
        doc.data = _set(doc.data, path, copy.deepcopy(value))


def _top_level(rng: random.Random, doc: _Doc) -> None:
    doc.data = rng.choice([None, [], {}, "text", 5, [doc.data], {"interactions": doc.data}, {"version": 1}])


STRUCTURAL: dict[str, Callable[[random.Random, _Doc], None]] = {
    "type-swap": _type_swap,
    "drop-key": _drop_key,
    "extra-key": _extra_key,
    "empty-container": _empty_container,
    "duplicate-item": _duplicate_item,
    "string-edit": _string_edit,
    "number": _number,
    "json-snippet": _placed(_SNIPPETS_ANY, yaml_only=False),
    "yaml-snippet": _placed(_SNIPPETS_YAML, yaml_only=True),
    "schema-ref": _schema_refs,
    "splice": _splice,
    "top-level": _top_level,
}
_WEIGHTS = {"top-level": 0.25, "chunks": 2.0, "yaml-snippet": 1.5, "json-snippet": 1.5}
"""How often a structural mutation is picked, against 1 for the others (a new top level hides the rest)."""
CASSETTE_ONLY: dict[str, Callable[[random.Random, _Doc], None]] = {
    "chunks": _chunks,
    "status": _status,
    "uri": _swap_uri,
}

# --------------------------------------------------------------------------------------------
# Serializing, and byte-level mutations
# --------------------------------------------------------------------------------------------


def _serialize(rng: random.Random, doc: _Doc) -> tuple[str, bytes]:
    as_json = doc.kind == "cassette" and not doc.yaml_only and rng.random() < 0.6
    if as_json:
        text = json.dumps(doc.data, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.3, allow_nan=True)
        how = "json"
    else:
        text = yaml.dump(  # libyaml's emitter: the pure-Python one is ten times slower
            doc.data,
            Dumper=_DUMPER,
            sort_keys=False,
            allow_unicode=rng.random() < 0.7,
            default_flow_style=rng.choice([False, False, None]),
            width=rng.choice([80, 10**9]),
        )
        how = "yaml"
    for token, snippet in doc.raw.items():
        # a placeholder is a plain scalar in both dumps (JSON quotes it)
        text = text.replace(f'"{token}"', snippet).replace(token, snippet)
    return how, text.encode("utf-8", "surrogatepass")


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randint(0, len(data))]


def _bit_flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 8, 64])):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _insert_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    piece = rng.choice(
        [
            b"\x00",
            b"\xff\xfe",
            b"\xed\xa0\x80",
            b"\xc3",
            b"\x80",
            b"\t",
            b"\r",
            b"\n---\n",
            b"\n...\n",
            b"%YAML 1.1\n",
            b"&a ",
            b"*a",
            b": ",
            b"- ",
            b"\xef\xbb\xbf",
            b"\x1b[31m",
            b"{{{{",
            b"]]]]",
            bytes(rng.getrandbits(8) for _ in range(16)),
        ]
    )
    return data[:at] + piece + data[at:]


def _delete_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + data[at + rng.choice([1, 2, 10, 100, 1000]) :]


def _repeat_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    piece = data[at : at + rng.choice([1, 10, 100])]
    return data[:at] + piece * rng.choice([2, 10, 1000]) + data[at:]


def _encoding(rng: random.Random, data: bytes) -> bytes:
    how = rng.choice(["utf-8-bom", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "double-bom", "cesu"])
    try:
        text = data.decode("utf-8", "surrogatepass")
        if how == "utf-8-bom":
            return b"\xef\xbb\xbf" + data
        if how == "double-bom":
            return b"\xef\xbb\xbf\xef\xbb\xbf" + data
        if how == "latin-1":
            return text.encode("latin-1", "replace")
        if how == "cesu":
            return (
                text.encode("utf-16-le", "surrogatepass")
                .decode("utf-16-le", "surrogatepass")
                .encode("utf-8", "surrogatepass")
            )
        return text.encode(how, "surrogatepass")
    except UnicodeError:
        return data


def _crlf(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\r", b"\x85", b"\xe2\x80\xa8"]))


def _tabs(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"  ", b"\t", rng.choice([1, 5, -1]))


BYTE_LEVEL: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "truncate": _truncate,
    "bit-flip": _bit_flip,
    "insert-bytes": _insert_bytes,
    "delete-bytes": _delete_bytes,
    "repeat-bytes": _repeat_bytes,
    "encoding": _encoding,
    "line-ends": _crlf,
    "tabs": _tabs,
}

# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def _make(kind: str, seed: str, index: int) -> FuzzInput:
    rng = random.Random(f"{seed}:{kind}:{index}")
    sources = cassette_sources() if kind == "cassette" else scenario_sources()
    root = CASSETTES if kind == "cassette" else SCENARIOS
    source = rng.choice(sources)
    names: list[str] = []
    structural = dict(STRUCTURAL, **(CASSETTE_ONLY if kind == "cassette" else {}))
    roll = rng.random()
    data = _text(source).encode("utf-8")
    if roll < 0.8:  # structural, maybe followed by a byte-level one
        doc = _Doc(json.loads(_json_of(source)), kind)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            choices = sorted(structural)
            name = rng.choices(choices, weights=[_WEIGHTS.get(n, 1.0) for n in choices])[0]
            structural[name](rng, doc)
            names.append(name)
        how, data = _serialize(rng, doc)
        names.append(how)
        if rng.random() < 0.2:
            name = rng.choice(sorted(BYTE_LEVEL))
            data = BYTE_LEVEL[name](rng, data)
            names.append(name)
    else:  # byte level on the file as it is bundled
        for _ in range(rng.choice([1, 1, 2])):
            name = rng.choice(sorted(BYTE_LEVEL))
            data = BYTE_LEVEL[name](rng, data)
            names.append(name)
    return FuzzInput(
        kind=kind,
        index=index,
        seed=seed,
        source=source.relative_to(ROOT).as_posix(),
        relpath=source.relative_to(root).as_posix(),
        mutations=tuple(names),
        data=data,
    )


def cassette_input(seed: str, index: int) -> FuzzInput:
    """Mutated cassette number ``index`` of the run seeded ``seed``."""
    return _make("cassette", seed, index)


def scenario_input(seed: str, index: int) -> FuzzInput:
    """Mutated scenario number ``index`` of the run seeded ``seed``."""
    return _make("scenario", seed, index)
