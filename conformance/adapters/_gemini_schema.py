"""JSON Schema (MCP ``inputSchema``) -> Gemini ``Schema``, the OpenAPI-3.0 subset that
``functionDeclarations[].parameters`` accepts. Private helper of ``conformance.adapters.gemini``.

Sources: wire-formats.md §4a and E15 (google-genai ``_transformers.py::process_schema`` and
``_mcp_utils.py`` read and probed; what they do is done here without their crashes); the field
list of ``google.ai.generativelanguage_v1beta.types.Schema`` (type, format, title, description,
nullable, enum, properties, required, propertyOrdering, items, min/maxItems, min/maxLength,
pattern, minimum, maximum, min/maxProperties, anyOf, default, example).

The Gemini Developer API rejects any other field with 400 "Unknown name ... Cannot find field"
(E15: ``additionalProperties``, ``$schema``, ``const``, ``exclusiveMinimum``, ``propertyNames``,
``multipleOf`` reported), accepts ``format`` only as float/double (NUMBER), int32/int64 (INTEGER)
and enum/date-time (STRING) (400 "only 'enum' and 'date-time' are supported for STRING type",
google-gemini/gemini-cli#3178) and ``enum`` only as strings of a STRING schema
(decolua/9router#380, microsoft/azure-devops-mcp#145). So:

- local ``$ref`` into ``$defs``/``definitions`` is inlined (siblings of the ``$ref`` win); a
  recursive reference becomes ``{}`` (any) at its second visit; other references become ``{}``;
  inlining stops with ``UnsupportedContentError`` past ``schema_nodes`` of ``conformance.limits``
  (two references per level double the schema at each level: 26 levels are 67 million nodes);
- ``type: [X, "null"]`` -> ``type: X`` + ``nullable: true``; several non-null types -> ``anyOf``;
- ``anyOf``/``oneOf`` members that are ``{"type": "null", ...}`` (extra keys allowed) -> ``nullable``;
  ``oneOf`` -> ``anyOf`` (exclusivity is lost); a single remaining member is merged into the schema;
- ``allOf`` members are merged into the schema (properties joined, ``required`` united);
- a string ``const`` -> ``enum: [const]``; a non-string ``const`` and a non-string ``enum`` are dropped;
- every other keyword outside the field list above is dropped.

Every change is reported as a ``SchemaChange`` with a JSON pointer into the original schema; a
schema already in the subset (upper-case ``OBJECT``/``STRING`` types included) comes out unchanged
with no changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.base import SchemaChange
from conformance.errors import UnsupportedContentError
from conformance.limits import current, how_to_raise
from conformance.model import JSONObject, Tool

__all__ = ["gemini_parameters"]

_KEPT = frozenset(
    "type format title description nullable enum properties required propertyOrdering items minItems maxItems"
    " minLength maxLength pattern minimum maximum minProperties maxProperties anyOf default example".split()
)
"""Fields of the Gemini ``Schema`` this converter passes through."""

_SHAPES: dict[str, type | tuple[type, ...]] = {
    "type": (str, list),
    "properties": Mapping,
    "items": (Mapping, bool),
    "anyOf": list,
    "oneOf": list,
    "allOf": list,
    "enum": list,
    "required": list,
    "propertyOrdering": list,
}
"""Keywords whose value must have this JSON type to mean anything; other values are dropped."""

_FORMATS: dict[str, frozenset[str]] = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}


def gemini_parameters(tool: Tool) -> tuple[JSONObject, tuple[SchemaChange, ...]]:
    """The tool's input schema as a Gemini ``parameters`` object schema, plus every change made."""
    converter = _Converter(tool.input_schema, tool.name)
    try:
        schema = converter.node(tool.input_schema, "", frozenset())
    except RecursionError:  # an MCP server's schema is not bounded by the scenario loader
        raise UnsupportedContentError(
            f"tool {tool.name!r}: its input schema nests too deeply to convert to a Gemini Schema"
        ) from None
    kind = schema.get("type")
    if isinstance(kind, str) and kind.lower() == "object":
        pass
    elif not schema:
        schema = {"type": "object", "properties": {}}
        converter.change("", "changed", "an empty schema became an empty object schema")
    elif kind is None and "properties" in schema:
        schema["type"] = "object"
        converter.change("/type", "changed", "added type object")
    else:
        schema = {"type": "object", "properties": {}}
        converter.change("", "changed", f"a non-object schema (type {kind!r}) became an empty object schema")
    return schema, tuple(converter.changes)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _is_null_member(member: Any) -> bool:
    # E15: google-genai's handle_null_fields crashes when the null member has extra keys (a title)
    return isinstance(member, Mapping) and member.get("type") in ("null", "NULL", ["null"])


class _Converter:
    __slots__ = ("changes", "left", "limit", "root", "seen", "tool")

    def __init__(self, root: Any, tool: str) -> None:
        self.root = root
        self.tool = tool
        self.changes: list[SchemaChange] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.limit = current().schema_nodes
        self.left = self.limit

    def change(self, pointer: str, action: str, detail: str) -> None:
        key = (pointer, action, detail)
        if key not in self.seen:  # a definition inlined twice reports its changes once
            self.seen.add(key)
            self.changes.append(SchemaChange(tool=self.tool, pointer=pointer, action=action, detail=detail))

    def resolve(self, ref: str) -> tuple[Any, str] | None:
        if not ref.startswith("#/"):
            return None
        target: Any = self.root
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or token not in target:
                return None
            target = target[token]
        return target, ref[1:]

    def node(self, node: Any, ptr: str, refs: frozenset[str]) -> JSONObject:
        self.left -= 1
        if self.left < 0:
            raise UnsupportedContentError(
                f"tool {self.tool!r}: its input schema expands past the limit schema_nodes={self.limit} once its "
                f"$refs are inlined (Gemini Schema has no references; at {ptr or '/'}); {how_to_raise('schema_nodes')}"
            )
        if node is True or (isinstance(node, Mapping) and not node):
            return {}
        if not isinstance(node, Mapping):
            self.change(ptr, "changed", f"schema {node!r} cannot be expressed in a Gemini Schema; became {{}} (any)")
            return {}
        rest = dict(node)
        base: JSONObject = {}
        if "$ref" in rest:
            ref = str(rest.pop("$ref"))
            found = self.resolve(ref)
            if found is None:
                self.change(f"{ptr}/$ref", "dropped", f"$ref {ref!r} is not a local reference; became {{}} (any)")
            elif ref in refs:
                self.change(f"{ptr}/$ref", "changed", f"recursive $ref {ref!r} became {{}} (any) at its second visit")
            else:
                self.change(f"{ptr}/$ref", "changed", f"inlined $ref {ref!r}: Gemini Schema has no references")
                base = self.node(found[0], found[1], refs | {ref})
        out = self.fields(rest, ptr, refs)
        return {**base, **out} if base else out

    def fields(self, node: Mapping[str, Any], ptr: str, refs: frozenset[str]) -> JSONObject:
        out: JSONObject = {}
        merged: list[JSONObject] = []
        nullable = False
        kind = node.get("type")
        types: list[str] = []
        if isinstance(kind, list):
            types = [t for t in kind if isinstance(t, str) and t != "null"]
            nullable = "null" in kind
            if len(types) == 1:
                kind = types[0]
                plus = " + nullable" if nullable else ""
                self.change(f"{ptr}/type", "changed", f"type {node['type']!r} became type {kind!r}{plus}")
            elif not types:
                kind = "null"
                self.change(f"{ptr}/type", "changed", f"type {node['type']!r} became type 'null' + nullable")
            else:
                kind = None
                self.change(f"{ptr}/type", "changed", f"type {node['type']!r} became anyOf of the types")
        lowered = kind.lower() if isinstance(kind, str) else None
        for key, value in node.items():
            p = f"{ptr}/{_escape(key)}"
            shape = _SHAPES.get(key)
            if shape is not None and not isinstance(value, shape):
                self.change(p, "dropped", f"{key} {value!r} is not a valid value for this keyword")
            elif key == "type":
                if kind is not None:
                    out["type"] = kind
                else:
                    out["anyOf"] = [{"type": t} for t in types]
            elif key == "properties":
                out[key] = {name: self.node(sub, f"{p}/{_escape(name)}", refs) for name, sub in value.items()}
            elif key == "items":
                out[key] = self.node(value, p, refs)
            elif key in ("anyOf", "oneOf"):
                members = [m for m in value if not _is_null_member(m)]
                if len(members) < len(value):
                    nullable = True
                    self.change(p, "changed", f"the null member of {key} became nullable: true")
                converted = [self.node(m, f"{p}/{i}", refs) for i, m in enumerate(value) if not _is_null_member(m)]
                if key == "oneOf":
                    self.change(p, "changed", "oneOf became anyOf: Gemini Schema has no oneOf (exclusivity is lost)")
                if len(converted) == 1:
                    merged.append(converted[0])
                    self.change(p, "changed", f"the single remaining {key} member was merged into the schema")
                elif converted and "anyOf" in out:
                    self.change(p, "dropped", f"{key} next to anyOf cannot be expressed")
                elif converted:
                    out["anyOf"] = converted
            elif key == "allOf":
                merged.extend(self.node(m, f"{p}/{i}", refs) for i, m in enumerate(value))
                self.change(p, "changed", "allOf members were merged into the schema: Gemini Schema has no allOf")
            elif key == "const":
                if isinstance(value, str) and "enum" not in node:
                    out["enum"] = [value]
                    self.change(p, "changed", "string const became enum [const]: Gemini Schema has no const")
                else:
                    self.change(p, "dropped", "const dropped: Gemini Schema has no const and enum holds strings only")
            elif key == "enum":
                strings = [v for v in value if isinstance(v, str)]
                if len(strings) == len(value) or (None in value and len(strings) == len(value) - 1):
                    out["enum"] = strings
                    if len(strings) < len(value):
                        nullable = True
                        self.change(p, "changed", "null in enum became nullable: true")
                else:
                    self.change(p, "dropped", "enum with non-string values dropped: Gemini enum holds strings only")
            elif key == "format":
                if isinstance(value, str) and value in _FORMATS.get(lowered or "", frozenset()):
                    out[key] = value
                else:
                    self.change(p, "dropped", f"format {value!r} is not supported for type {kind!r} by Gemini")
            elif key in _KEPT:
                out[key] = value
            elif key in ("$defs", "definitions"):
                self.change(p, "dropped", "definitions dropped: references to them are inlined")
            else:
                self.change(p, "dropped", f"{key} is not a Gemini Schema field (the API rejects unknown fields, E15)")
        if "enum" in out and "type" not in out and not merged:
            out["type"] = "string"  # enum is only allowed for STRING (decolua/9router#380)
            self.change(f"{ptr}/type", "changed", "added type string: Gemini allows enum on STRING only")
        if merged:
            result: JSONObject = {}
            for member in [*merged, out]:
                for key, value in member.items():
                    if key == "properties" and isinstance(result.get(key), dict):
                        result[key] = {**result[key], **value}
                    elif key == "required" and isinstance(result.get(key), list):
                        result[key] = list(dict.fromkeys([*result[key], *value]))
                    else:
                        result[key] = value
            out = result
        if nullable and out.get("nullable") is not True:
            out["nullable"] = True
        return out
