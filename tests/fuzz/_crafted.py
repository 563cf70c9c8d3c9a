"""The crafted corpus: a few dozen small hostile cassettes and scenarios the fuzz tier always runs.

Each is made here from a bundled file (nothing binary is committed): the bombs and shapes of issue
14 (billion laughs, gzip bombs in ``!!binary`` bodies, lone surrogates, 3,000-level nesting,
exponential and cyclic ``$ref`` schemas, ``!!python`` tags) and the odd encodings, framings and
values around them. ``python -m tests.fuzz._crafted DIR`` writes them to ``DIR`` to look at.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz._mutations import CASSETTES, ROOT, SCENARIOS, FuzzInput, gzip_bomb

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

__all__ = ["crafted"]

_CASSETTE = "openai_chat/basic/get_time.yaml"
_STREAM_CASSETTE = "anthropic/basic/get_time.yaml"
_GEMINI_CASSETTE = "gemini/basic/get_time.yaml"
_SCENARIO = "basic/get_time.yaml"


def _cassette(rel: str = _CASSETTE) -> Any:
    return json.loads((CASSETTES / rel).read_text("utf-8"))


def _scenario(rel: str = _SCENARIO) -> Any:
    return yaml.safe_load((SCENARIOS / rel).read_text("utf-8"))


def _yaml(data: Any, **raw: str) -> bytes:
    """``data`` as YAML, each placeholder string ``@name@`` replaced by the raw text ``raw[name]``."""
    text = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=10**9)
    for name, snippet in raw.items():
        text = text.replace(f"'@{name}@'", snippet).replace(f"@{name}@", snippet)
    return text.encode("utf-8", "surrogatepass")


def _laughs(levels: int = 9, width: int = 10) -> str:
    parts = ['&l0 "lol"'] + [f"&l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "[" + ", ".join(parts) + "]"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _exponential_schema(levels: int = 26) -> dict[str, Any]:
    defs: dict[str, Any] = {"d0": {"type": "string"}}
    for i in range(1, levels + 1):
        ref = {"$ref": f"#/$defs/d{i - 1}"}
        defs[f"d{i}"] = {"type": "object", "properties": {"l": dict(ref), "r": dict(ref)}}
    return {"type": "object", "properties": {"root": {"$ref": f"#/$defs/d{levels}"}}, "$defs": defs}


_CYCLIC_SCHEMA = {
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/A"}, "me": {"$ref": "#"}},
    "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"$ref": "#/$defs/A"}},
}


def _response(data: Any, index: int = 0) -> dict[str, Any]:
    response: dict[str, Any] = data["interactions"][index]["response"]
    return response


# -- cassettes ------------------------------------------------------------------------------------


def _c_laughs_top() -> tuple[str, bytes]:
    # the shape: a cassette of a few hundred bytes whose aliases expand to a billion nodes
    return _CASSETTE, f"version: 1\nlol: {_laughs()}\ninteractions: []\n".encode()


def _c_laughs_in_body() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["parsed_body"] = "@bomb@"
    return _CASSETTE, _yaml(data, bomb=_laughs())


def _c_laughs_in_headers() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["headers"] = "@bomb@"
    return _CASSETTE, _yaml(data, bomb="{x: " + _laughs(8, 10) + "}")


def _gzip_body(megabytes: int, members: int = 1) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _cassette()
        response = _response(data)
        response.pop("parsed_body", None)
        response["body"] = {"string": "@bomb@"}
        return _CASSETTE, _yaml(data, bomb=f'!!binary "{_b64(gzip_bomb(megabytes) * members)}"')

    return make


def _c_gzip_request() -> tuple[str, bytes]:
    data = _cassette()
    request = data["interactions"][0]["request"]
    request.pop("parsed_body", None)
    request["body"] = "@bomb@"
    return _CASSETTE, _yaml(data, bomb=f'!!binary "{_b64(gzip_bomb(64) * 4)}"')


def _c_gzip_chunk() -> tuple[str, bytes]:
    data = _cassette(_STREAM_CASSETTE)
    response = _response(data, 2)
    response["body"]["chunks"][0] = "@bomb@"
    return _STREAM_CASSETTE, _yaml(data, bomb=f'!!binary "{_b64(gzip_bomb(64))}"')


def _c_invalid_utf8_chunk() -> tuple[str, bytes]:
    data = _cassette(_STREAM_CASSETTE)
    chunks = _response(data, 2)["body"]["chunks"]
    raw = chunks[1].encode()
    chunks[1] = "@bad@"
    bad = raw[:20] + b"\xff\xed\xa0\x80\xc3" + raw[20:]
    return _STREAM_CASSETTE, _yaml(data, bad=f'!!binary "{_b64(bad)}"')


def _c_split_utf8_chunks() -> tuple[str, bytes]:
    # a multi-byte character cut between two chunks, each chunk a !!binary piece
    data = _cassette(_STREAM_CASSETTE)
    chunks = _response(data, 2)["body"]["chunks"]
    joined = "".join(chunks).encode() + "data: 中\n\n".encode()
    cut = joined.index("中".encode()) + 1
    _response(data, 2)["body"]["chunks"] = ["@a@", "@b@"]
    return _STREAM_CASSETTE, _yaml(data, a=f'!!binary "{_b64(joined[:cut])}"', b=f'!!binary "{_b64(joined[cut:])}"')


def _surrogate_at(where: str) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _cassette(_STREAM_CASSETTE)
        interaction = data["interactions"][0]
        if where == "body":
            _response(data)["parsed_body"]["content"][0]["text"] = "@s@"
        elif where == "header":
            _response(data)["headers"]["x-fuzz"] = ["@s@"]
        elif where == "uri":
            interaction["request"]["uri"] += "?q=@s@"
        elif where == "chunk":
            _response(data, 2)["body"]["chunks"][0] = "@s@"
        elif where == "key":
            _response(data)["parsed_body"]["@s@"] = 1
        return _STREAM_CASSETTE, _yaml(data, s='"a\\ud800b"').replace(b"?q=a\\ud800b", b'?q=\\ud800"')

    return make


def _c_surrogate_json() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["parsed_body"]["choices"][0]["message"]["content"] = "@s@"
    text = json.dumps(data).replace('"@s@"', '"\\ud800 and \\udfff"')
    return _CASSETTE, text.encode()


def _c_deep_body(depth: int, as_text: bool) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _cassette()
        response = _response(data)
        response.pop("parsed_body", None)
        nested = '{"a": ' * depth + "1" + "}" * depth
        if as_text:
            response["body"] = {"string": nested}
            return _CASSETTE, json.dumps(data).encode()
        response["parsed_body"] = "@deep@"
        return _CASSETTE, _yaml(data, deep="[" * depth + "1" + "]" * depth)

    return make


def _c_deep_stream() -> tuple[str, bytes]:
    data = _cassette(_STREAM_CASSETTE)
    chunks = _response(data, 2)["body"]["chunks"]
    chunks.insert(1, 'event: content_block_delta\ndata: {"deep": ' + "[" * 3000 + "]" * 3000 + "}\n\n")
    return _STREAM_CASSETTE, json.dumps(data).encode()


def _c_python_tag() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["parsed_body"] = "@tag@"
    return _CASSETTE, _yaml(data, tag="!!python/object/apply:os.getpid []")


def _c_istr_headers() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["headers"] = "@h@"
    return _CASSETTE, _yaml(
        data, h="{? !!python/object/apply:multidict._multidict.istr [Content-Type] : [application/json]}"
    )


def _c_utf16() -> tuple[str, bytes]:
    return _CASSETTE, (CASSETTES / _CASSETTE).read_text("utf-8").encode("utf-16")


def _c_crlf_bom() -> tuple[str, bytes]:
    return _STREAM_CASSETTE, b"\xef\xbb\xbf" + (CASSETTES / _STREAM_CASSETTE).read_bytes().replace(b"\n", b"\r\n")


def _c_bad_uri() -> tuple[str, bytes]:
    data = _cassette()
    for interaction in data["interactions"]:
        interaction["request"]["uri"] = "http://[::1"
    return _CASSETTE, json.dumps(data).encode()


def _c_odd_status() -> tuple[str, bytes]:
    data = _cassette(_STREAM_CASSETTE)
    for code, interaction in zip([-1, 10**30, 999, 0], data["interactions"], strict=False):
        interaction["response"]["status"]["code"] = code
    return _STREAM_CASSETTE, json.dumps(data).encode()


def _c_nan() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["parsed_body"]["usage"] = {"prompt_tokens": "@n@", "completion_tokens": "@i@"}
    return _CASSETTE, _yaml(data, n=".nan", i="-.inf")


def _c_gemini_schema_bomb() -> tuple[str, bytes]:
    data = _cassette(_GEMINI_CASSETTE)
    body = data["interactions"][0]["request"]["parsed_body"]
    body["tools"][0]["functionDeclarations"][0]["parameters"] = _exponential_schema()
    _response(data)["parsed_body"]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = copy.deepcopy(
        _CYCLIC_SCHEMA
    )
    return _GEMINI_CASSETTE, json.dumps(data).encode()


def _c_long_string() -> tuple[str, bytes]:
    data = _cassette()
    _response(data)["parsed_body"]["choices"][0]["message"]["content"] = "中" * 3_000_000
    return _CASSETTE, json.dumps(data, ensure_ascii=False).encode()


def _c_huge_int(as_json: bool) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _cassette()
        _response(data)["parsed_body"]["usage"]["prompt_tokens"] = "@big@"
        if as_json:
            return _CASSETTE, json.dumps(data).replace('"@big@"', "9" * 5000).encode()
        return _CASSETTE, _yaml(data, big="9" * 5000)

    return make


def _c_text(text: bytes) -> Callable[[], tuple[str, bytes]]:
    return lambda: (_CASSETTE, text)


# -- scenarios ------------------------------------------------------------------------------------


def _s_laughs() -> tuple[str, bytes]:
    data = _scenario()
    data["tags"] = "@bomb@"
    return _SCENARIO, _yaml(data, bomb=_laughs())


def _s_surrogate(where: str) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _scenario()
        if where == "behavior":
            data["behavior"] = "@s@"
        elif where == "tool":
            data["tools"][0]["name"] = "@s@"
            data["turns"][0]["reply"]["tool_calls"][0]["name"] = "@s@"
        elif where == "user":
            data["turns"][0]["user"] = "@s@"
        elif where == "key":
            data["tools"][0]["inputSchema"]["properties"]["@s@"] = {"type": "string"}
        return _SCENARIO, _yaml(data, s='"x\\ud800y"')

    return make


def _s_schema(schema: Callable[[], dict[str, Any]]) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        data = _scenario()
        data["tools"][0]["inputSchema"] = schema()
        data.pop("wire", None)
        return _SCENARIO, _yaml(data)

    return make


def _s_deep_arguments() -> tuple[str, bytes]:
    data = _scenario()
    data["turns"][0]["reply"]["tool_calls"][0]["arguments"] = "@deep@"
    return _SCENARIO, _yaml(data, deep="{offset_ms: " + "[" * 3000 + "1" + "]" * 3000 + "}")


def _s_python_tag() -> tuple[str, bytes]:
    data = _scenario()
    data["behavior"] = "@tag@"
    return _SCENARIO, _yaml(data, tag="!!python/object/apply:os.getpid []")


def _s_encoding(how: str) -> Callable[[], tuple[str, bytes]]:
    def make() -> tuple[str, bytes]:
        text = (SCENARIOS / _SCENARIO).read_text("utf-8")
        if how == "utf-16":
            return _SCENARIO, text.encode("utf-16")
        if how == "bom-crlf":
            return _SCENARIO, b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
        return _SCENARIO, text.encode()[:200] + b"\xff\xfe\xed\xa0\x80" + text.encode()[200:]

    return make


def _s_numbers() -> tuple[str, bytes]:
    data = _scenario()
    data["schema_version"] = "@big@"
    data["turns"][0]["reply"]["tool_calls"][0]["arguments"] = {"offset_ms": "@nan@"}
    data["tools"][0]["inputSchema"]["maxProperties"] = "@neg@"
    return _SCENARIO, _yaml(data, big="9" * 5000, nan=".nan", neg="-1e999")


def _s_mcp_command() -> tuple[str, bytes]:
    # validate and list read it; nothing here runs it (the driver runs no scenario naming a command)
    data = _scenario()
    data["tools"] = {"mcp": {"command": ["definitely-not-a-real-command", "--flag"], "tools": ["getTime"]}}
    return _SCENARIO, _yaml(data)


def _s_odd_keys() -> tuple[str, bytes]:
    data = _scenario()
    data["turns"][0]["reply"] = "@odd@"
    return _SCENARIO, _yaml(data, odd="{? [a, b] : 1, 1: x, null: y, true: z, 1.5: w}")


def _s_merge_and_dupes() -> tuple[str, bytes]:
    text = (SCENARIOS / _SCENARIO).read_text("utf-8")
    return _SCENARIO, (text + "behavior: twice\nextra: &a {x: 1}\nmore: {<<: *a, <<: *a}\n").encode()


def _s_long() -> tuple[str, bytes]:
    data = _scenario()
    data["turns"][0]["user"] = "长" * 300_000
    return _SCENARIO, _yaml(data)


def _s_text(text: bytes) -> Callable[[], tuple[str, bytes]]:
    return lambda: (_SCENARIO, text)


_CASSETTES: dict[str, Callable[[], tuple[str, bytes]]] = {
    "laughs-top": _c_laughs_top,
    "laughs-body": _c_laughs_in_body,
    "laughs-headers": _c_laughs_in_headers,
    "gzip-8mib": _gzip_body(8),
    "gzip-256mib": _gzip_body(64, 4),
    "gzip-1gib": _gzip_body(64, 16),
    "gzip-request": _c_gzip_request,
    "gzip-chunk": _c_gzip_chunk,
    "invalid-utf8-chunk": _c_invalid_utf8_chunk,
    "utf8-split-across-chunks": _c_split_utf8_chunks,
    "surrogate-body": _surrogate_at("body"),
    "surrogate-header": _surrogate_at("header"),
    "surrogate-uri": _surrogate_at("uri"),
    "surrogate-chunk": _surrogate_at("chunk"),
    "surrogate-key": _surrogate_at("key"),
    "surrogate-json": _c_surrogate_json,
    "deep-3000-text": _c_deep_body(3000, True),
    "deep-100000-text": _c_deep_body(100_000, True),
    "deep-3000-yaml": _c_deep_body(3000, False),
    "deep-stream-event": _c_deep_stream,
    "python-tag": _c_python_tag,
    "istr-headers": _c_istr_headers,
    "utf16": _c_utf16,
    "bom-crlf": _c_crlf_bom,
    "bad-uri": _c_bad_uri,
    "odd-status": _c_odd_status,
    "nan-usage": _c_nan,
    "gemini-ref-bomb": _c_gemini_schema_bomb,
    "long-string": _c_long_string,
    "huge-int-json": _c_huge_int(True),
    "huge-int-yaml": _c_huge_int(False),
    "empty": _c_text(b""),
    "only-bom": _c_text(b"\xef\xbb\xbf"),
    "two-documents": _c_text(b"version: 1\ninteractions: []\n---\nversion: 1\n"),
    "json-nan": _c_text(b'{"version": 1, "interactions": [NaN, Infinity]}'),
}
_SCENARIOS: dict[str, Callable[[], tuple[str, bytes]]] = {
    "laughs": _s_laughs,
    "surrogate-behavior": _s_surrogate("behavior"),
    "surrogate-tool": _s_surrogate("tool"),
    "surrogate-user": _s_surrogate("user"),
    "surrogate-key": _s_surrogate("key"),
    "ref-exponential": _s_schema(_exponential_schema),
    "ref-exponential-32": _s_schema(lambda: _exponential_schema(32)),
    "ref-cycle": _s_schema(lambda: copy.deepcopy(_CYCLIC_SCHEMA)),
    "deep-arguments": _s_deep_arguments,
    "python-tag": _s_python_tag,
    "utf16": _s_encoding("utf-16"),
    "bom-crlf": _s_encoding("bom-crlf"),
    "invalid-utf8": _s_encoding("invalid"),
    "numbers": _s_numbers,
    "mcp-command": _s_mcp_command,
    "odd-keys": _s_odd_keys,
    "merge-and-duplicate-keys": _s_merge_and_dupes,
    "long-string": _s_long,
    "empty": _s_text(b""),
    "tabs": _s_text(b"schema_version: 1\n\tbehavior: x\n"),
    "list-top": _s_text(b"- 1\n- 2\n"),
}


@functools.cache
def crafted() -> dict[str, FuzzInput]:
    """Every crafted input by name (``c-<name>`` for cassettes, ``s-<name>`` for scenarios)."""
    found: dict[str, FuzzInput] = {}
    for prefix, kind, makers, root in (
        ("c", "cassette", _CASSETTES, CASSETTES),
        ("s", "scenario", _SCENARIOS, SCENARIOS),
    ):
        for name, make in makers.items():
            relpath, data = make()
            found[f"{prefix}-{name}"] = FuzzInput(
                kind=kind,
                index=0,
                seed="crafted",
                source=(root / relpath).relative_to(ROOT).as_posix(),
                relpath=relpath,
                mutations=(name,),
                data=data,
                name=f"{prefix}-{name}",
            )
    return found


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz-corpus")
    for name, inp in crafted().items():
        path = target / inp.kind / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(inp.data)
        print(f"{path} ({len(inp.data)} bytes)")
