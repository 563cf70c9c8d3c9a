"""The recorded-request regression check: what an adapter sends now is what its cassette recorded.

``translation.recorded_request``  on every turn, the body the adapter sent is compared, field by field,
                                  with the body of the cassette request that answered it (replay plays the
                                  cassette's interactions in order, so turn N meets the request recorded for
                                  turn N in that stream mode). Each difference is a finding naming the JSON
                                  path (``$.messages[0].content``) and the recorded and sent values.

Normalisation (docs/checks.md, "Recorded requests"), and nothing else:

- key order is ignored (a JSON object is a mapping); list order is not;
- ``$.model``: the model the run asked for (``Request.model``) stands for the one the cassette was
  recorded with (its provenance ``model``), so a run with another model is not a finding;
- a cassette may mark values that change from one recording to the next as volatile: its provenance
  lists JSON path globs under ``volatile`` (``volatile: ["$.metadata.request_id"]``); there only the
  presence of the value is compared;
- an adapter declares the differences it intends as data, ``Adapter.request_differences`` (JSON path
  glob -> reason): those paths are not compared. A glob is the JSON path as a finding prints it,
  ``*`` standing for any run of characters (``$.messages[*].content``) and ``?`` for one.

Text is compared as text: a system prompt, a prompt-based adapter's rendered tools, a tool
description or a JSON-encoded ``arguments`` string that changes its escaping or whitespace is a
difference (a long text is shown around its first differing character). JSON ``true`` is not ``1``.

The check gives no verdict when the case did not replay a cassette ``conformance record`` wrote (no
provenance: another tool's recording spells requests its own way), and none for a black-box client
(``conformance certify``), whose requests ``client.recorded_request`` compares on their read-back
(``conformance.checks.client_request``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.checks._common import CaseContext, verdict
from conformance.checks._paths import glob_matches, step
from conformance.verdicts import CheckVerdict, Finding

__all__ = [
    "CHECK",
    "MAX_SHOWN",
    "compare_bodies",
    "glob_matches",
    "recorded_request",
    "step",
    "volatile_globs",
]

CHECK = "translation.recorded_request"
MAX_SHOWN = 160
"""Characters of a value shown in a finding; a longer text is cut around its first difference."""


def volatile_globs(provenance: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The volatile JSON path globs a cassette's provenance lists (``volatile``: a list of strings,
    or one string); anything else marks nothing."""
    value = (provenance or {}).get("volatile")
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def recorded_request(ctx: CaseContext) -> CheckVerdict | None:
    """The ``translation.recorded_request`` verdict of a case (None when it does not apply)."""
    if ctx.client is not None or ctx.provenance is None or not ctx.recorded:
        return None
    volatile = volatile_globs(ctx.provenance)
    intended = tuple(getattr(ctx.adapter, "request_differences", {}) or {})
    recorded_model = ctx.provenance.get("model")
    findings: list[Finding] = []
    for turn, recorded in zip(ctx.outcome.turns, ctx.recorded, strict=False):
        sent = turn.wire.body
        if recorded.json is None:
            findings.append(
                Finding(
                    check=CHECK,
                    message="the cassette's request has no JSON body to compare with; re-record the cassette",
                    path="$",
                    turn=turn.turn,
                )
            )
            continue
        expected = recorded.json
        if (
            isinstance(expected, dict)
            and isinstance(sent, Mapping)
            and isinstance(recorded_model, str)
            and expected.get("model") == recorded_model
            and sent.get("model") == turn.request.model
        ):
            expected = {**expected, "model": turn.request.model}  # the model the run asked for stands for it
        findings.extend(compare_bodies(expected, sent, volatile=volatile, ignored=intended, turn=turn.turn))
    return verdict(CHECK, findings)


def compare_bodies(
    recorded: Any,
    sent: Any,
    *,
    volatile: Sequence[str] = (),
    ignored: Sequence[str] = (),
    turn: int | None = None,
    path: str = "$",
    check: str = CHECK,
) -> list[Finding]:
    """One finding per JSON path where ``sent`` differs from ``recorded`` (key order aside); paths
    matching ``ignored`` are not compared, those matching ``volatile`` only for presence."""
    findings: list[Finding] = []
    _walk(recorded, sent, path, volatile, ignored, turn, findings)
    return [replace(f, check=check) for f in findings] if check != CHECK else findings


def _walk(
    recorded: Any,
    sent: Any,
    path: str,
    volatile: Sequence[str],
    ignored: Sequence[str],
    turn: int | None,
    out: list[Finding],
) -> None:
    if path != "$" and (glob_matches(path, ignored) or glob_matches(path, volatile)):
        return
    if isinstance(recorded, Mapping) and isinstance(sent, Mapping):
        for key in recorded:
            where = step(path, key)
            if key not in sent:
                if not glob_matches(where, ignored):
                    out.append(_finding("missing: recorded, not sent", where, recorded[key], None, turn))
            else:
                _walk(recorded[key], sent[key], where, volatile, ignored, turn, out)
        for key in sent:
            where = step(path, key)
            if key not in recorded and not glob_matches(where, ignored):
                out.append(_finding("added: sent, not recorded", where, None, sent[key], turn))
        return
    if isinstance(recorded, list | tuple) and isinstance(sent, list | tuple):
        for index in range(max(len(recorded), len(sent))):
            where = f"{path}[{index}]"
            if index >= len(sent):
                if not glob_matches(where, ignored):
                    out.append(_finding("missing: recorded, not sent", where, recorded[index], None, turn))
            elif index >= len(recorded):
                if not glob_matches(where, ignored):
                    out.append(_finding("added: sent, not recorded", where, None, sent[index], turn))
            else:
                _walk(recorded[index], sent[index], where, volatile, ignored, turn, out)
        return
    if _same_scalar(recorded, sent):
        return
    if isinstance(recorded, str) and isinstance(sent, str):
        at = next((i for i, (a, b) in enumerate(zip(recorded, sent, strict=False)) if a != b), None)
        at = min(len(recorded), len(sent)) if at is None else at
        out.append(
            Finding(
                check=CHECK,
                message=f"text differs at character {at}",
                path=path,
                expected=_around(recorded, at),
                actual=_around(sent, at),
                turn=turn,
            )
        )
        return
    out.append(_finding("differs", path, recorded, sent, turn))


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b and isinstance(a, float) == isinstance(b, float)
    return type(a) is type(b) and bool(a == b)


def _finding(message: str, path: str, recorded: Any, sent: Any, turn: int | None) -> Finding:
    return Finding(check=CHECK, message=message, path=path, expected=_capped(recorded), actual=_capped(sent), turn=turn)


def _capped(value: Any) -> Any:
    """``value``, or its JSON-ish text cut to ``MAX_SHOWN`` characters when longer."""
    if isinstance(value, str):
        return value if len(value) <= MAX_SHOWN else value[:MAX_SHOWN] + f"… ({len(value)} characters)"
    if isinstance(value, Mapping | list | tuple):
        text = repr(value)
        if len(text) > MAX_SHOWN:
            return text[:MAX_SHOWN] + f"… ({len(text)} characters)"
    return value


def _around(text: str, at: int) -> str:
    """``text`` whole when short, else a window of it around character ``at``."""
    if len(text) <= MAX_SHOWN:
        return text
    start = max(0, at - MAX_SHOWN // 4)
    end = start + MAX_SHOWN
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
