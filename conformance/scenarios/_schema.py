"""Validate scenario data against ``schemas/scenario.schema.json`` and explain each error.

jsonschema's own messages are written for JSON Schema experts (``'x' is not valid under any of
the given schemas``). Each error becomes a ``ScenarioProblem`` placed on the YAML node it is
about, saying what is wrong, what is expected and what to do: the closest valid key for an
unknown key, the allowed values for an enum, the branch that fits for an ``anyOf``.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from conformance.scenarios.problems import DocPath, Locator, ScenarioProblem, closest, type_name

__all__ = ["scenario_schema", "schema_problems"]

_YAML_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "null": "null",
}


@functools.cache
def scenario_schema() -> Mapping[str, Any]:
    """The published JSON Schema of scenario files (``conformance/schemas/scenario.schema.json``)."""
    text = resources.files("conformance").joinpath("schemas", "scenario.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(scenario_schema())


def schema_problems(data: Any, locator: Locator) -> list[ScenarioProblem]:
    """Every schema error of ``data``, explained and placed (empty when the data is valid)."""
    problems: list[ScenarioProblem] = []
    for error in _validator().iter_errors(data):
        problems.extend(_explain(error, locator))
    return problems


def _explain(error: ValidationError, locator: Locator) -> Iterator[ScenarioProblem]:
    at: DocPath = tuple(error.absolute_path)
    instance = error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    described = str(schema.get("description", ""))
    validator = error.validator
    if validator == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(schema.get("properties", {}))
        for key in instance:
            if key not in allowed:
                yield locator.problem(
                    (*at, key),
                    f"unknown key {key!r}",
                    expected="one of: " + ", ".join(allowed),
                    hint=closest(key, allowed) or "remove it, or check its indentation",
                    on_key=True,
                )
    elif validator == "required" and isinstance(instance, dict):
        properties = schema.get("properties", {})
        required: list[str] = list(error.validator_value) if isinstance(error.validator_value, list) else []
        for key in required:
            if key in instance:
                continue
            near = difflib.get_close_matches(key, [str(k) for k in instance if k not in properties], n=1, cutoff=0.6)
            yield locator.problem(
                at,
                f"missing required key {key!r}",
                expected=f"{key}: {_description(properties.get(key, {}))}".rstrip(": "),
                hint=f"is {near[0]!r} a misspelling of {key!r}?" if near else f"add {key}:",
            )
    elif validator == "type":
        yield _type_problem(error, at, locator, described)
    elif validator in ("enum", "const"):
        yield _value_problem(error, at, locator, described)
    elif validator in ("anyOf", "oneOf"):
        yield from _alternatives(error, at, locator)
    elif validator == "not":
        negated = error.validator_value if isinstance(error.validator_value, Mapping) else {}
        yield locator.problem(at, str(negated.get("description") or described or error.message))
    elif validator in ("minItems", "minLength"):
        what = "list" if validator == "minItems" else "string"
        count = error.validator_value
        message = f"the {what} is empty" if count == 1 else f"the {what} is too short"
        yield locator.problem(
            at, message, expected=f"at least {count} item(s)" if what == "list" else "", hint=described
        )
    elif validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than"}.get(
            str(validator), "less than"
        )
        yield locator.problem(at, f"{instance!r} is out of range", expected=f"{bound} {error.validator_value}")
    elif validator == "uniqueItems" and isinstance(instance, list):
        repeated = sorted({json.dumps(v, sort_keys=True) for i, v in enumerate(instance) if v in instance[:i]})
        yield locator.problem(at, "the list repeats " + ", ".join(repeated), expected="each item once")
    else:
        yield locator.problem(at, error.message, hint=described)


def _description(schema: Any) -> str:
    if isinstance(schema, Mapping):
        if "description" in schema:
            return str(schema["description"])
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _description(scenario_schema()["$defs"].get(ref.removeprefix("#/$defs/"), {}))
    return ""


def _type_problem(error: ValidationError, at: DocPath, locator: Locator, described: str) -> ScenarioProblem:
    wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    expected = " or ".join(_YAML_TYPES.get(str(t), str(t)) for t in wanted)
    instance = error.instance
    if not at:
        return locator.problem(
            at,
            f"the file holds {type_name(instance)}, not a mapping",
            expected="a mapping with schema_version, behavior, source, tools and turns",
            hint="see docs/scenarios.md for a complete example",
        )
    hint = described
    if "string" in wanted and (isinstance(instance, bool | int | float) or instance is None):
        hint = "quote the value to make it a string" + (f" ({described})" if described else "")
    return locator.problem(at, f"expected {expected}, got {type_name(instance)}", expected=expected, hint=hint)


def _value_problem(error: ValidationError, at: DocPath, locator: Locator, described: str) -> ScenarioProblem:
    instance = error.instance
    value: Any = error.validator_value
    allowed = [value] if error.validator == "const" else list(value)
    if at == ("schema_version",):
        return locator.problem(
            at,
            f"schema_version {instance!r} is not supported",
            expected="1",
            hint="this version of conformance reads schema_version 1 scenarios (docs/scenarios.md)",
        )
    near = closest(instance, [str(a) for a in allowed]) if isinstance(instance, str) else ""
    return locator.problem(
        at,
        f"{instance!r} is not allowed here",
        expected="one of: " + ", ".join(str(a) for a in allowed),
        hint=near or described,
    )


def _alternatives(error: ValidationError, at: DocPath, locator: Locator) -> Iterator[ScenarioProblem]:
    """Explain an ``anyOf``/``oneOf``: the errors of the branches whose type fits the value."""
    branches = error.validator_value if isinstance(error.validator_value, list) else []
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if all(isinstance(b, Mapping) and set(b) <= {"description", "required"} for b in branches):
        # "exactly one of these keys": say it in the words of the branch description
        first = branches[0] if branches else {}
        yield locator.problem(at, str(first.get("description") or error.message))
        return
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        by_branch.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    fitting = [
        errors
        for errors in by_branch.values()
        if not any(e.validator == "type" and tuple(e.absolute_path) == at for e in errors)
    ]
    if len(fitting) == 1:
        for sub in fitting[0]:
            yield from _explain(sub, locator)
        return
    kinds = [_branch_kind(b) for b in branches]
    yield locator.problem(
        at,
        f"{type_name(error.instance)} does not fit here",
        expected=" or ".join(kinds),
        hint=str(schema.get("description", "")),
    )


def _branch_kind(branch: Any) -> str:
    if not isinstance(branch, Mapping):
        return "?"
    if "enum" in branch:
        return "one of " + ", ".join(str(v) for v in branch["enum"])
    if "type" in branch:
        return _YAML_TYPES.get(str(branch["type"]), str(branch["type"]))
    ref = branch.get("$ref")
    if isinstance(ref, str):
        target = scenario_schema()["$defs"].get(ref.removeprefix("#/$defs/"), {})
        if target.get("type") == "object":
            return "a mapping with " + ", ".join(sorted(target.get("properties", {})))
    return _description(branch) or "?"
