"""``conformance.adapters._gemini_schema``: JSON Schema -> the Gemini ``Schema`` subset (E15).

Expected values come from wire-formats.md §4a and E15 (the keywords the Gemini Developer API rejects
with 400 "Unknown name ... Cannot find field"; what google-genai's ``process_schema`` and
``_mcp_utils`` do, and where they crash), the ``Schema`` field list and ``format`` docstring of
``google.ai.generativelanguage_v1beta.types.Schema``, the 400 "only 'enum' and 'date-time' are
supported for STRING type" (google-gemini/gemini-cli#3178) and "enum only allowed for STRING type"
(decolua/9router#380); never from the converter's own output.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters._gemini_schema import gemini_parameters
from conformance.adapters.base import SchemaChange
from conformance.model import Tool

KEPT = set(
    "type format title description nullable enum properties required propertyOrdering items minItems maxItems"
    " minLength maxLength pattern minimum maximum minProperties maxProperties anyOf default example".split()
)


def _convert(schema: Any) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    out, changes = gemini_parameters(Tool(name="t", input_schema=schema))
    assert all(isinstance(c, SchemaChange) and c.tool == "t" for c in changes)
    return out, [(c.pointer, c.action) for c in changes]


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    "schema",
    [
        # recorded google-genai output (upper-case types, REC:logfire / openinference cassettes)
        {"properties": {"location": {"type": "STRING"}}, "required": ["location"], "type": "OBJECT"},
        {
            "type": "OBJECT",
            "properties": {"unit": {"type": "STRING", "enum": ["celsius", "fahrenheit"], "default": "celsius"}},
        },
        {"properties": {}, "type": "object"},
        # every field of the Schema subset
        {
            "type": "object",
            "title": "Args",
            "description": "d",
            "propertyOrdering": ["a", "b", "c"],
            "minProperties": 1,
            "maxProperties": 3,
            "example": {"a": "x"},
            "properties": {
                "a": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^x", "format": "date-time"},
                "b": {"type": "integer", "minimum": 0, "maximum": 9, "format": "int64", "nullable": True},
                "c": {"type": "array", "items": {"type": "number", "format": "double"}, "minItems": 1, "maxItems": 2},
                "d": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "required": ["a"],
        },
    ],
)
def test_a_schema_already_in_the_subset_is_unchanged(schema: dict[str, Any]) -> None:
    assert _convert(schema) == (schema, [])


@pytest.mark.parametrize("value", [False, True, {"type": "string"}])
def test_additional_properties_is_dropped_boolean_or_object(value: Any) -> None:
    # E15: the API rejects it; google-genai's MCP path crashes on the boolean form
    assert _convert({"type": "object", "additionalProperties": value}) == (
        {"type": "object"},
        [("/additionalProperties", "dropped")],
    )


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("$schema", "https://json-schema.org/draft/2020-12/schema"),
        ("$id", "urn:x"),
        ("$comment", "c"),
        ("exclusiveMinimum", 0),
        ("exclusiveMaximum", 9),
        ("multipleOf", 2),
        ("propertyNames", {"pattern": "^a"}),
        ("patternProperties", {"^a": {"type": "string"}}),
        ("unevaluatedProperties", False),
        ("dependentRequired", {"a": ["b"]}),
        ("dependentSchemas", {"a": {"required": ["b"]}}),
        ("not", {"required": ["a"]}),
        ("if", {"required": ["a"]}),
        ("then", {"required": ["b"]}),
        ("else", {"required": ["c"]}),
        ("examples", [{"a": 1}]),
        ("uniqueItems", True),
        ("x-mcp-header", "X-A"),
    ],
)
def test_keywords_the_api_rejects_are_dropped_and_reported(keyword: str, value: Any) -> None:
    schema = _obj(a={"type": "string", keyword: value})
    out, changes = _convert(schema)
    assert out == _obj(a={"type": "string"})
    assert changes == [(f"/properties/a/{keyword}", "dropped")]


def test_local_refs_are_inlined_siblings_win_and_defs_go() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address", "description": "Home address"},
            "work": {"$ref": "#/definitions/Address"},
        },
        "$defs": {
            "Address": {"type": "object", "description": "An address", "properties": {"city": {"type": "string"}}}
        },
        "definitions": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}},
    }
    out, changes = _convert(schema)
    assert out == _obj(
        home={"type": "object", "description": "Home address", "properties": {"city": {"type": "string"}}},
        work={"type": "object", "properties": {"zip": {"type": "string"}}},
    )
    assert changes == [
        ("/properties/home/$ref", "changed"),
        ("/properties/work/$ref", "changed"),
        ("/$defs", "dropped"),
        ("/definitions", "dropped"),
    ]


def test_a_recursive_ref_becomes_any_at_its_second_visit() -> None:
    # E15: google-genai's process_schema does the same (cycle -> {})
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
    }
    out, changes = _convert(schema)
    assert out == _obj(root=_obj(child={}))
    assert ("/$defs/Node/properties/child/$ref", "changed") in changes


def test_a_ref_that_is_not_local_becomes_any() -> None:
    out, changes = _convert(_obj(a={"$ref": "https://example.com/s.json"}, b={"$ref": "#/$defs/Missing"}))
    assert out == _obj(a={}, b={})
    assert changes == [("/properties/a/$ref", "dropped"), ("/properties/b/$ref", "dropped")]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": ["string", "null"], "default": "x"}, {"type": "string", "nullable": True, "default": "x"}),
        ({"type": ["null"]}, {"type": "null", "nullable": True}),
        ({"type": ["string", "integer"]}, {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"type": "integer", "nullable": True}),
        # a null member with extra keys: google-genai raises ValueError (E15); here it is just null
        (
            {"anyOf": [{"type": "string"}, {"type": "null", "title": "None"}], "title": "A"},
            {"type": "string", "title": "A", "nullable": True},
        ),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
    ],
)
def test_null_unions_become_nullable_and_one_of_becomes_any_of(
    schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    out, changes = _convert(_obj(a=schema))
    assert out == _obj(a=expected)
    assert changes and all(p.startswith("/properties/a") for p, _ in changes)


def test_all_of_members_are_merged() -> None:
    schema = _obj(
        a={
            "allOf": [
                {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                {"properties": {"y": {"type": "integer"}}, "required": ["y", "x"]},
            ],
            "description": "both",
        }
    )
    out, changes = _convert(schema)
    assert out == _obj(
        a={
            "type": "object",
            "properties": {"x": {"type": "string"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
            "description": "both",
        }
    )
    assert changes == [("/properties/a/allOf", "changed")]


def test_const_and_enum_become_string_enums_or_are_dropped() -> None:
    # process_schema: string const -> enum [const]; "Literal values must be strings" otherwise (E15)
    out, changes = _convert(
        _obj(
            s={"type": "string", "const": "fixed"},
            n={"type": "integer", "const": 3},
            e={"type": "integer", "enum": [1, 2]},  # enum is string-typed (azure-devops-mcp#145: TYPE_STRING)
            m={"type": "string", "enum": ["a", None]},
            t={"enum": ["x", "y"]},  # "enum only allowed for STRING type" (9router#380)
        )
    )
    assert out == _obj(
        s={"type": "string", "enum": ["fixed"]},
        n={"type": "integer"},
        e={"type": "integer"},
        m={"type": "string", "enum": ["a"], "nullable": True},
        t={"enum": ["x", "y"], "type": "string"},
    )
    assert changes == [
        ("/properties/s/const", "changed"),
        ("/properties/n/const", "dropped"),
        ("/properties/e/enum", "dropped"),
        ("/properties/m/enum", "changed"),
        ("/properties/t/type", "changed"),
    ]


@pytest.mark.parametrize(
    ("schema", "kept"),
    [
        ({"type": "string", "format": "date-time"}, True),
        ({"type": "string", "format": "enum"}, True),
        ({"type": "string", "format": "uri"}, False),  # gemini-cli#3178
        ({"type": "string", "format": "email"}, False),
        ({"type": "integer", "format": "int32"}, True),
        ({"type": "number", "format": "float"}, True),
        ({"type": "number", "format": "int64"}, False),
        ({"type": "STRING", "format": "date-time"}, True),
    ],
)
def test_format_is_kept_only_where_the_api_supports_it(schema: dict[str, Any], kept: bool) -> None:
    out, changes = _convert(_obj(a=schema))
    assert ("format" in out["properties"]["a"]) is kept
    assert changes == ([] if kept else [("/properties/a/format", "dropped")])


def test_items_are_converted_and_tuple_items_dropped() -> None:
    out, changes = _convert(
        _obj(
            a={"type": "array", "items": {"type": "string", "const": "x"}},
            b={"type": "array", "prefixItems": [{"type": "string"}]},
        )
    )
    assert out == _obj(a={"type": "array", "items": {"type": "string", "enum": ["x"]}}, b={"type": "array"})
    assert changes == [("/properties/a/items/const", "changed"), ("/properties/b/prefixItems", "dropped")]


def test_pointers_escape_property_names() -> None:
    _, changes = _convert(_obj(**{"a/b~c": {"type": "string", "multipleOf": 1}}))
    assert changes == [("/properties/a~1b~0c/multipleOf", "dropped")]


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({}, ""),
        ({"type": "string"}, ""),
        ({"type": "array", "items": {"type": "string"}}, ""),
        ({"properties": {"a": {"type": "string"}}}, "/type"),
    ],
)
def test_the_root_is_always_an_object_schema_and_the_change_is_reported(schema: dict[str, Any], pointer: str) -> None:
    out, changes = _convert(schema)
    assert out["type"] == "object" and isinstance(out.get("properties", {}), dict)
    assert changes == [(pointer, "changed")]


_OTHER_KEYS = ["$ref", "$defs", "const", "oneOf", "allOf", "additionalProperties", "not", "examples", "$schema", "x"]
_KEYS = st.sampled_from([*sorted(KEPT), *_OTHER_KEYS])
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.sampled_from(["string", "null", "#/$defs/a"])
)
_JSON = st.recursive(
    _LEAVES,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(_KEYS | st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)


def _keys_outside_the_subset(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    bad = [k for k in schema if k not in KEPT]
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for sub in value.values():
                bad += _keys_outside_the_subset(sub)
        elif key == "items":
            bad += _keys_outside_the_subset(value)
        elif key == "anyOf" and isinstance(value, list):
            for sub in value:
                bad += _keys_outside_the_subset(sub)
    return bad


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_any_input_converts_without_crashing_into_the_subset(schema: Any) -> None:
    out, changes = gemini_parameters(Tool(name="t", input_schema=schema if isinstance(schema, dict) else {}))
    assert out["type"] in ("object", "OBJECT") or str(out["type"]).lower() == "object"
    assert _keys_outside_the_subset(out) == []
    assert len(changes) == len({(c.pointer, c.action, c.detail) for c in changes})


def test_reference_inlining_is_bounded_by_schema_nodes() -> None:
    # 26 levels of two $ref each: inlined, 2**26 leaves (record ran for minutes and grew past 700 MB)
    import json

    from _hostile import ref_bomb, run_bounded

    from conformance.errors import UnsupportedContentError

    with pytest.raises(UnsupportedContentError) as caught:
        gemini_parameters(Tool(name="bomb", input_schema=ref_bomb(26)))
    text = str(caught.value)
    assert "'bomb'" in text and "schema_nodes=100000" in text and "--limit schema_nodes=N" in text
    code = (
        "from conformance.adapters._gemini_schema import gemini_parameters\nfrom conformance.model import Tool\n"
        "from conformance.errors import UnsupportedContentError\nimport json, sys\n"
        f"schema = json.loads({json.dumps(json.dumps(ref_bomb(26)))})\n"
        "try:\n    gemini_parameters(Tool(name='bomb', input_schema=schema))\n"
        "except UnsupportedContentError as exc:\n    print('refused')\n"
    )
    done = run_bounded(code)
    assert done.returncode == 0 and done.stdout.strip() == "refused", done.stderr[-2000:]


def test_a_schema_under_the_limit_is_still_inlined_in_full() -> None:
    from _hostile import ref_bomb

    out, _ = _convert(ref_bomb(8))  # 2**8 leaves: far under the default
    node = out["properties"]["x"]
    for _ in range(8):
        node = node["properties"]["a"]
    assert node == {"type": "string"}


def test_a_schema_too_deep_to_convert_is_refused_not_a_crash() -> None:
    from conformance.errors import UnsupportedContentError

    schema: dict[str, Any] = {"type": "string"}
    for _ in range(5000):  # as an MCP server may list it: no loader bounded it
        schema = {"type": "object", "properties": {"x": schema}}
    with pytest.raises(UnsupportedContentError, match=r"'deep'.*nests too deeply"):
        gemini_parameters(Tool(name="deep", input_schema=schema))
