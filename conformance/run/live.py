"""Live recording: what a real model did, told apart from what an adapter does (pure, no I/O).

A live model does not follow a scenario's script: it may answer in text where the script calls a
tool, call another tool, or write the call as JSON in its text. ``conformance record --live``
(``conformance.run.recording``) uses this module to

- send the request knobs of a safe recording (``Sampling``: temperature 0, a seed, a small
  ``max_tokens``) in each wire's own field names (``sampling_fields``; ``max_tokens`` goes through
  the adapter as the unified ``Request.max_tokens``, when the scenario sets none);
- judge each turn the reference adapter decoded against the scenario's loose expectations
  (``deviations``: the tool name called, arguments valid against the tool's JSON schema, the
  scenario's ``subset`` or ``schema`` argument matching; never the scripted values themselves);
- store, per mode and turn, that decoding in the cassette's provenance (``decodings``, under
  ``expected``), with the sampling asked for and the model the responses name (``served_model``).

When a live cassette is replayed (``conformance.run.runner``), the adapter is judged against what
was recorded, not against the script: ``expected_scenario`` gives the scenario with each turn's
expectation taken from the recorded decoding of that mode (exact calls, text and finish reason),
``recorded_decodings`` gives ``streaming.fold`` the stream's own recorded decoding (live, the
streamed and the non-streamed answers are two generations), and ``for_replay`` takes the sampling
fields the recorder added out of the recorded requests (they are not the adapter's). A cassette
without ``expected`` (emulator recordings, older live ones) is judged by its scenario as before.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from conformance.adapters.base import Adapter, WireRequest
from conformance.checks.roundtrip import is_subset
from conformance.model import Response, Text, Tool, ToolCall
from conformance.run.conversation import ConversationOutcome, TurnOutcome
from conformance.scenarios.values import (
    Expectation,
    ExpectedCall,
    ExpectedError,
    Mode,
    Reply,
    Scenario,
    TextExpectation,
    Turn,
)
from conformance.traffic.cassettes import Cassette
from conformance.traffic.transport import Exchange

__all__ = [
    "DEFAULT_SAMPLING",
    "Sampling",
    "decoding",
    "decodings",
    "deviations",
    "expected_scenario",
    "for_replay",
    "is_live",
    "live_command",
    "recorded_decodings",
    "sampling_fields",
    "served_model",
    "with_sampling",
]


@dataclass(frozen=True, kw_only=True)
class Sampling:
    """The request knobs of a live recording (None: not sent)."""

    temperature: float | None = 0.0
    seed: int | None = 42
    max_tokens: int | None = 256
    """Sent as the unified ``Request.max_tokens`` when the scenario sets none."""

    def as_provenance(self) -> dict[str, Any]:
        """The knobs as the cassette's provenance ``sampling`` block (those sent only)."""
        values = {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}
        return {k: v for k, v in values.items() if v is not None}

    @classmethod
    def from_provenance(cls, block: Any) -> Sampling | None:
        """The knobs a cassette recorded (None when it recorded none, or not as a mapping)."""
        if not isinstance(block, Mapping):
            return None
        temperature, seed, max_tokens = block.get("temperature"), block.get("seed"), block.get("max_tokens")
        return cls(
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
            max_tokens=max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
        )


DEFAULT_SAMPLING = Sampling()
"""Temperature 0, seed 42, at most 256 output tokens: repeatable, and a runaway answer ends soon."""


def sampling_fields(wire_format: str, sampling: Sampling) -> dict[str, Any]:
    """The temperature and seed as ``wire_format`` spells them in a request body (merged in).

    OpenAI Chat: top-level ``temperature`` and ``seed``; OpenAI Responses and Anthropic Messages:
    top-level ``temperature``, no seed field (openai-python ``response_create_params.py``,
    anthropic-sdk-python ``message_create_params.py``); Gemini: ``generationConfig.temperature``
    and ``.seed`` (google-genai ``GenerationConfig``); Ollama: ``options.temperature`` and
    ``.seed`` (ollama-python ``Options``).
    """
    knobs: dict[str, Any] = {}
    if sampling.temperature is not None:
        knobs["temperature"] = sampling.temperature
    if sampling.seed is not None and wire_format in ("openai_chat", "gemini", "ollama"):
        knobs["seed"] = sampling.seed
    if not knobs:
        return {}
    if wire_format == "gemini":
        return {"generationConfig": knobs}
    if wire_format == "ollama":
        return {"options": knobs}
    return knobs


def _merged(body: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    for key, value in fields.items():
        current = out.get(key)
        out[key] = _merged(current, value) if isinstance(value, Mapping) and isinstance(current, Mapping) else value
    return out


def _without(body: Any, fields: Mapping[str, Any]) -> Any:
    """``body`` without the ``fields`` merged into it (an object emptied by their removal goes too)."""
    if not isinstance(body, Mapping):
        return body
    out = dict(body)
    for key, value in fields.items():
        if key not in out:
            continue
        if isinstance(value, Mapping) and isinstance(out[key], Mapping):
            rest = _without(out[key], value)
            if rest:
                out[key] = rest
            else:
                del out[key]
        elif out[key] == value:
            del out[key]
    return out


def with_sampling(adapter: Adapter, scenario: Scenario, sampling: Sampling) -> tuple[Adapter, Scenario]:
    """The adapter whose requests carry the sampling fields, and the scenario with ``max_tokens``
    (when it sets none): what a live recording sends."""
    fields = sampling_fields(adapter.wire_format, sampling)
    if scenario.max_tokens is None and sampling.max_tokens is not None:
        scenario = replace(scenario, max_tokens=sampling.max_tokens)
    if not fields:
        return adapter, scenario
    real = adapter.request_to_wire

    def request_to_wire(request: Any) -> WireRequest:
        wire = real(request)
        return replace(wire, body=_merged(wire.body, fields))

    return replace(adapter, request_to_wire=request_to_wire), scenario


# --------------------------------------------------------------------------------------------
# What the model did: decodings and deviations
# --------------------------------------------------------------------------------------------


def decoding(turn: TurnOutcome) -> dict[str, Any]:
    """One turn's decoding as stored: text, calls (name, arguments, whether they were unusable),
    finish reason; or the error kind of a turn answered with one."""
    if turn.error is not None or turn.response is None:
        return {"turn": turn.turn, "error": turn.error.kind if turn.error is not None else "unknown"}
    from conformance.checks.streaming import response_projection  # the shape fold compares, stored

    return {"turn": turn.turn, **response_projection(turn.response)}


def decodings(outcomes: Iterable[ConversationOutcome]) -> dict[str, list[dict[str, Any]]]:
    """The provenance ``expected`` block: per mode, each turn's decoding by the recording adapter."""
    return {o.mode: [decoding(t) for t in o.turns] for o in outcomes}


def deviations(
    scenario: Scenario, outcomes: Iterable[ConversationOutcome], *, clean: Callable[[str], str] = str
) -> list[str]:
    """What the model did that the scenario's loose expectations do not allow, one line per turn
    (empty: it followed the scenario). ``clean`` scrubs each text or value shown, before it is cut
    short (a secret the model echoed must not leave half of itself)."""
    found: list[str] = []
    for outcome in outcomes:
        for turn in outcome.turns:
            problem = _turn_deviation(scenario, scenario.turns[turn.turn], turn, clean)
            if problem is not None:
                found.append(f"turn {turn.turn} ({outcome.mode.replace('_', '-')}): {problem}")
    return found


def _turn_deviation(scenario: Scenario, spec: Turn, turn: TurnOutcome, clean: Callable[[str], str]) -> str | None:
    want = spec.expect
    if want.error is not None:
        if turn.error is None:
            return f"answered ({_described(turn.response, clean)}) where the scenario expects a {want.error.kind} error"
        if turn.error.kind != want.error.kind:
            return f"gave a {turn.error.kind} error where the scenario expects a {want.error.kind} error"
        return None
    if turn.response is None:
        return None  # an error the scenario does not expect is a failure, not the model's choice
    calls = [p for p in turn.response.parts if isinstance(p, ToolCall)]
    text = "".join(p.text for p in turn.response.parts if isinstance(p, Text))
    if want.tool_calls:
        expected = [c.name for c in want.tool_calls]
        if not calls:
            shown = _json_call(text, scenario.tools)
            if shown is not None:
                return (
                    f"wrote the call to {shown} as JSON in the text ({_quoted(clean(text))}), not as a tool call, "
                    f"where the scenario expects a call to {_names(expected)}"
                )
            return f"answered in text ({_quoted(clean(text))}) where the scenario expects a call to {_names(expected)}"
        if sorted(c.name for c in calls) != sorted(expected):
            return f"called {_names([c.name for c in calls])} where the scenario expects {_names(expected)}"
        problem = _arguments_deviation(scenario, want.tool_calls, calls, clean)
        if problem is not None:
            return problem
    elif want.tool_calls == () and calls:
        return f"called {_names([c.name for c in calls])} where the scenario expects no tool call"
    if not want.tool_calls and want.text is not None and want.text.value and not text.strip() and not calls:
        return "answered with no text where the scenario expects text"
    if turn.response.finish_reason == "length" and want.finish_reason != "length":
        return "stopped at the output limit (finish reason length); raise --max-tokens"
    return None


def _arguments_deviation(
    scenario: Scenario, wanted: Sequence[ExpectedCall], calls: Sequence[ToolCall], clean: Callable[[str], str]
) -> str | None:
    schemas = {t.name: t.input_schema for t in scenario.tools}
    remaining = list(calls)
    for want in wanted:
        call = next(c for c in remaining if c.name == want.name)
        remaining.remove(call)
        if want.arguments_error:
            continue  # the script sends broken arguments; a model that sends good ones is not at fault
        if call.arguments is None:
            why = call.arguments_error
            return (
                f"called {call.name} with arguments that are not usable ({why}): {_quoted(clean(call.arguments_raw))}"
            )
        errors = _schema_errors(schemas.get(call.name), call.arguments)
        if errors:
            shown = _shown(call.arguments, clean)
            return f"called {call.name} with arguments that do not fit its schema ({errors[0]}): {shown}"
        if want.match == "subset" and not is_subset(want.arguments or {}, call.arguments):
            return (
                f"called {call.name} with {_shown(call.arguments, clean)} where the scenario expects at least "
                f"{_shown(want.arguments, clean)}"
            )
        if want.match == "schema":
            errors = _schema_errors(want.arguments, call.arguments)
            if errors:
                return f"called {call.name} with arguments that do not match the scenario's schema ({errors[0]})"
    return None


def _schema_errors(schema: Mapping[str, Any] | None, value: Any) -> list[str]:
    if not schema:
        return []
    try:
        return [e.message for e in Draft202012Validator(schema).iter_errors(value)]
    except SchemaError:
        return []  # a tool schema the validator cannot read judges nothing


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _json_call(text: str, tools: Sequence[Tool]) -> str | None:
    """The tool named by a call written as JSON in ``text`` (bare or in a fenced block), or None."""
    stripped = _FENCE.sub("", text.strip())
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    names = {t.name for t in tools}
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, Mapping):
            continue
        inner = item.get("function")
        name = item.get("name") or (inner.get("name") if isinstance(inner, Mapping) else None)
        if isinstance(name, str) and (name in names or not names):
            return name
    return None


def _described(response: Response | None, clean: Callable[[str], str]) -> str:
    if response is None:
        return "nothing"
    calls = [p.name for p in response.parts if isinstance(p, ToolCall)]
    if calls:
        return f"called {_names(calls)}"
    return f"text {_quoted(clean(''.join(p.text for p in response.parts if isinstance(p, Text))))}"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "no tool"


def _quoted(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


def _shown(value: Any, clean: Callable[[str], str], limit: int = 120) -> str:
    text = clean(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def served_model(exchanges: Iterable[Exchange]) -> str | None:
    """The model the answered exchanges name (``model``, Gemini's ``modelVersion``, a Responses
    stream's ``response.model``, an Anthropic stream's ``message.model``); several distinct ones
    joined by ``", "``; None when no answer names one."""
    seen: list[str] = []
    for exchange in exchanges:
        if exchange.status is None or exchange.status >= 400:
            continue
        for document in _documents(exchange):
            name = _model_of(document)
            if name and name not in seen:
                seen.append(name)
            if name:
                break
    return ", ".join(seen) if seen else None


def _documents(exchange: Exchange) -> Iterable[Any]:
    body = exchange.response_body
    if not exchange.stream:
        with contextlib.suppress(ValueError):
            yield json.loads(body)
        return
    for line in body.decode("utf-8", "replace").splitlines():
        line = line.strip()
        payload = line[5:].strip() if line.startswith("data:") else line
        if payload.startswith("{"):
            try:
                yield json.loads(payload)
            except ValueError:
                continue


def _model_of(document: Any) -> str | None:
    if not isinstance(document, Mapping):
        return None
    for key in ("model", "modelVersion"):
        if isinstance(document.get(key), str) and document[key]:
            return str(document[key])
    for key in ("response", "message"):
        inner = document.get(key)
        if isinstance(inner, Mapping) and isinstance(inner.get("model"), str) and inner["model"]:
            return str(inner["model"])
    return None


# --------------------------------------------------------------------------------------------
# Replaying a live cassette
# --------------------------------------------------------------------------------------------


def is_live(provenance: Mapping[str, Any] | None) -> bool:
    """Was the cassette recorded from a live provider (provenance ``mode: live``)?"""
    return bool(provenance) and (provenance or {}).get("mode") == "live"


def live_command(provenance: Mapping[str, Any] | None, traffic_format: str, scenario_id: str) -> str | None:
    """The ``conformance record --live`` line that re-records a live cassette (None for another one):
    its base URL when it is not a loopback one (whose port was not recorded), the requested model."""
    if not is_live(provenance):
        return None
    block = provenance or {}
    base_url = block.get("base_url")
    loopback = not isinstance(base_url, str) or re.match(r"https?://(127\.|localhost|\[::1\])", base_url)
    shown = "URL" if loopback else str(base_url)
    parts = ["conformance", "record", "--live", "--adapter", traffic_format, "--scenario", scenario_id]
    parts += ["--base-url", shown, "--api-key-env", "VAR"]
    if isinstance(block.get("model"), str) and not block.get("model_default"):
        parts += ["--model", block["model"]]
    return shlex.join(parts)


def _turns(provenance: Mapping[str, Any] | None, mode: Mode) -> list[Mapping[str, Any]] | None:
    expected = (provenance or {}).get("expected") if is_live(provenance) else None
    turns = expected.get(mode) if isinstance(expected, Mapping) else None
    if not isinstance(turns, list):
        return None
    return [t for t in turns if isinstance(t, Mapping) and isinstance(t.get("turn"), int)]


def expected_scenario(scenario: Scenario, provenance: Mapping[str, Any] | None, mode: Mode) -> Scenario:
    """``scenario`` as a live cassette's ``mode`` is judged: each recorded turn expects what the
    reference adapter decoded when it was recorded, and has no scripted reply (the model answered,
    not the emulator's script: no scripted argument text or stream fault to compare with);
    ``max_tokens`` is the one the recording sent. Any other cassette: ``scenario`` itself."""
    recorded = _turns(provenance, mode)
    if recorded is None:
        return scenario
    by_turn = {t["turn"]: t for t in recorded}
    turns = tuple(
        replace(spec, expect=_expectation(by_turn[spec.index]), reply=Reply()) if spec.index in by_turn else spec
        for spec in scenario.turns
    )
    sampling = Sampling.from_provenance((provenance or {}).get("sampling"))
    max_tokens = scenario.max_tokens
    if max_tokens is None and sampling is not None:
        max_tokens = sampling.max_tokens
    return replace(scenario, turns=turns, max_tokens=max_tokens)


def _expectation(recorded: Mapping[str, Any]) -> Expectation:
    if "error" in recorded:
        return Expectation(error=ExpectedError(kind=recorded["error"]))
    calls = tuple(
        ExpectedCall(name=str(c.get("name")), arguments_error=True)
        if c.get("arguments_error")
        else ExpectedCall(name=str(c.get("name")), arguments=c.get("arguments"), match="exact")
        for c in recorded.get("calls") or ()
        if isinstance(c, Mapping)
    )
    text = recorded.get("text")
    return Expectation(
        tool_calls=calls,
        text=TextExpectation(value=text, mode="exact") if isinstance(text, str) else None,
        finish_reason=recorded.get("finish_reason"),
    )


def recorded_decodings(provenance: Mapping[str, Any] | None, mode: Mode) -> dict[int, dict[str, Any]] | None:
    """A live cassette's recorded decoding of each answered turn in ``mode``, as
    ``streaming.response_projection`` shapes it (None for any other cassette)."""
    recorded = _turns(provenance, mode)
    if recorded is None:
        return None
    return {
        t["turn"]: {"text": t.get("text"), "calls": list(t.get("calls") or []), "finish_reason": t.get("finish_reason")}
        for t in recorded
        if "error" not in t
    }


def for_replay(cassette: Cassette) -> Cassette:
    """A live cassette with the sampling fields its recorder added taken out of each recorded
    request body (the adapter did not send them; ``translation.recorded_request`` compares what it
    sends with the rest). Any other cassette: itself."""
    provenance = cassette.provenance
    sampling = Sampling.from_provenance((provenance or {}).get("sampling")) if is_live(provenance) else None
    wire = (provenance or {}).get("adapter")
    if sampling is None or not isinstance(wire, str):
        return cassette
    fields = sampling_fields(wire, sampling)
    if not fields:
        return cassette
    interactions = tuple(
        replace(i, request=replace(i.request, json=_without(i.request.json, fields)))
        if isinstance(i.request.json, Mapping)
        else i
        for i in cassette.interactions
    )
    return replace(cassette, interactions=interactions)
