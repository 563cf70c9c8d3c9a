"""Record traffic into one scrubbed, readable, vcrpy-shaped cassette file (the writing edge).

Capture happens at our own ``Transport`` (every exchange it makes is logged), not by patching
httpx with vcrpy: the runner sends everything through a ``Transport`` anyway; the log keeps the
exact bytes and the chunk boundaries (vcrpy buffers streams into one string, toolchain.md §1.3);
a broken stream is kept with what arrived (vcrpy records nothing then, §3.3); and no private vcrpy
function is patched. The file written is what vcrpy writes (``version: 1``, ``interactions`` of
``request``/``response``, headers as name -> list), in the pydantic-ai ``parsed_body`` dialect
that ``conformance.traffic.cassettes`` reads: JSON bodies as YAML mappings (key order kept, Unicode kept),
SSE and NDJSON bodies as literal block strings (double-quoted when they hold ``\\r``), bytes that
are not UTF-8 as ``!!binary``.

``record_cassette`` runs a callable against a fresh ``Transport`` and calls ``write_cassette``:

1. scrub (``conformance.traffic.scrub``): secret headers, key query parameters, key-shaped strings, the
   API key, every named secret and every value sent in a secret header or query parameter (a server
   that echoes one); a stream's chunks are scrubbed joined and cut again where they arrived cut, so a
   secret split across chunks leaves no part in any of them (the chunk holding its start keeps
   ``REDACTED``, a chunk wholly inside it becomes empty; the number and order of chunks are kept), and
   so are the values of a repeated header; the rendered text and every joined stream are checked once
   more and never written if a named secret is still in them;
2. normalise what would churn: the loopback port (``http://127.0.0.1:PORT`` -> ``http://127.0.0.1``),
   volatile headers (``date``, ``host``, ``user-agent``, lengths and encodings); and, for a live
   recording, the values a provider makes anew for every answer (ids, ``created``, server timings,
   request-id headers: ``conformance.traffic.volatile``), replaced by stable forms whose JSON path
   globs the provenance lists under ``volatile`` (the emulator's values are stable by construction,
   ``conformance.emulator._deterministic``, and are written as they are);
3. compare with the file already there: when the traffic (interactions and provenance other than
   the date and client versions) is the same, the file is left byte-identical (``unchanged``);
4. otherwise write atomically (``conformance.traffic.atomic``), after reading the new file back with
   ``load_cassette`` and replaying it through ``ReplayBackend`` to verify every interaction.

A provenance block comes first: suite version, adapter, mode, base URL, model, scenario, the UTC
date of the recording and client versions, and for a live recording the ``volatile`` globs.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import platform
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from importlib import metadata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx
import yaml

from conformance.errors import CassetteError, CassetteWriteError
from conformance.traffic.atomic import write_atomic
from conformance.traffic.cassettes import Cassette, is_streaming, load_cassette
from conformance.traffic.replay import ReplayBackend
from conformance.traffic.safe_yaml import load_yaml
from conformance.traffic.scrub import SECRET_QUERY, Scrubber, is_secret_header
from conformance.traffic.transport import DEFAULT_TIMEOUT, STREAM_EXTENSION, Exchange, Transport
from conformance.traffic.volatile import normalise_interactions

__all__ = [
    "DROPPED_REQUEST_HEADERS",
    "DROPPED_RESPONSE_HEADERS",
    "Provenance",
    "RecordResult",
    "normalise_url",
    "record_cassette",
    "record_command",
    "render_cassette",
    "write_cassette",
]

DROPPED_REQUEST_HEADERS = frozenset({"host", "user-agent", "content-length", "accept-encoding", "connection"})
"""Request headers not written: they churn (port, client version) or are transport detail."""

DROPPED_RESPONSE_HEADERS = frozenset(
    {"date", "server", "content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)
"""Response headers not written: the wall clock, the server's software version, and framing that
no longer fits the stored body (httpx has decoded gzip, the body is stored whole)."""

_LOOPBACK_PORT = re.compile(r"(https?://(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])):\d+")
"""A loopback URL's port inside a message (it changes on every run)."""
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Where a recording came from (the adapter and base URL are given to ``record_cassette``)."""

    mode: Literal["emulator", "live"]
    model: str | None = None
    scenario: str | None = None
    """The scenario id (its path under ``scenarios/``)."""
    scenario_sha256: str | None = None
    """The scenario's fingerprint (``Scenario.fingerprint``): a run reports the cassette stale when
    the scenario it plays has another one."""
    extra: Mapping[str, str] = field(default_factory=dict)
    """More lines for the block (e.g. ``sdk: openai 3.54.0``); values must not hold secrets."""
    model_default: bool = False
    """``model`` is the adapter's default name, sent because none was chosen (``record --live``
    without ``--model``): what was asked for, not what answered (that is ``served_model``)."""
    served_model: str | None = None
    """The model the live responses name (``conformance.run.live.served_model``)."""
    sampling: Mapping[str, Any] | None = None
    """The request knobs a live recording sent (``conformance.run.live.Sampling``)."""
    expected: Mapping[str, Any] | None = None
    """A live recording's decoding of each turn per mode, by the reference adapter, that replay
    judges adapters against (``conformance.run.live``)."""


@dataclass(frozen=True, kw_only=True)
class RecordResult:
    """What ``record_cassette``/``write_cassette`` did."""

    path: Path
    status: Literal["written", "unchanged"]
    interactions: int
    skipped: tuple[str, ...] = ()
    """Exchanges that got no HTTP response (connect errors, timeouts), not written."""


def record_command(adapter: str, scenario: str | None, *, mode: str = "emulator") -> str:
    """The command that (re)records one cassette, named in replay errors."""
    parts = ["conformance", "record", f"--{mode}", "--adapter", adapter]
    if scenario:
        parts += ["--scenario", scenario]
    return shlex.join(parts)


def record_cassette(
    path: str | os.PathLike[str],
    run: Callable[[Transport], None],
    *,
    adapter: str,
    base_url: str,
    provenance: Provenance,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    backend: httpx.BaseTransport | None = None,
    now: Callable[[], datetime] | None = None,
) -> RecordResult:
    """Run ``run(transport)`` against ``base_url`` and write its traffic to the cassette at ``path``.

    ``adapter`` is the wire format (places the API key). ``headers`` are extra request headers
    (an organisation id). ``secrets`` are more literal values to scrub besides ``api_key`` and the
    secret-looking ``headers`` values. An exception from ``run`` propagates and nothing is written.
    """
    with Transport(
        base_url, wire=adapter, api_key=api_key, headers=headers, timeout=timeout, backend=backend
    ) as transport:
        run(transport)
        exchanges = list(transport.exchanges)
    named = [*secrets, *([api_key] if api_key else []), *(headers or {}).values()]
    return write_cassette(
        path, exchanges, adapter=adapter, base_url=base_url, provenance=provenance, secrets=named, now=now
    )


def write_cassette(
    path: str | os.PathLike[str],
    exchanges: Iterable[Exchange],
    *,
    adapter: str,
    base_url: str,
    provenance: Provenance,
    secrets: Iterable[str] = (),
    now: Callable[[], datetime] | None = None,
    check: Callable[[Cassette], None] | None = None,
) -> RecordResult:
    """Write ``exchanges`` (a ``Transport``'s log) as one cassette; see the module docstring.

    ``check`` is given the new cassette as read back, before it replaces the old file: it raises
    ``CassetteWriteError`` to keep the old one (a live recording replays it through the reference
    adapter, which must decode what the provenance's ``expected`` says: the key redacted the same way).
    """
    target = Path(path)
    exchanges = list(exchanges)
    scrubber = Scrubber([*secrets, *_sent_secrets(exchanges)])
    answered = [e for e in exchanges if e.status is not None]
    skipped = tuple(
        f"{e.method} {scrubber.url(e.url)}: {scrubber.text(e.error or 'no response')}"
        for e in exchanges
        if e.status is None
    )
    try:
        interactions = [_interaction(e, scrubber) for e in answered]
    except CassetteWriteError as exc:
        raise CassetteWriteError(f"{target}: {exc}") from exc
    volatile: tuple[str, ...] = ()
    if provenance.mode == "live":
        interactions, volatile = normalise_interactions(interactions)
    block = _provenance_block(provenance, adapter=adapter, base_url=scrubber.url(base_url))
    if volatile:
        block["volatile"] = list(volatile)
    previous = _previous(target)
    if previous is not None and _same_traffic(previous, block, interactions):
        return RecordResult(path=target, status="unchanged", interactions=len(interactions), skipped=skipped)
    block["recorded"] = (now or _utc_now)().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = render_cassette(block, interactions)
    streams = (
        "".join(i["response"]["body"]["chunks"]) for i in interactions if "chunks" in i["response"].get("body", {})
    )
    leaks = scrubber.leaked("\n".join([text, *streams]))
    if leaks:
        raise CassetteWriteError(
            f"{target}: {len(leaks)} secret(s) survived scrubbing (in a form the scrubber cannot redact "
            "without changing what the answer decodes to); nothing was written"
        )

    command = record_command(adapter, provenance.scenario, mode=provenance.mode)

    def verified(temp: Path) -> None:
        _verify(temp, target, interactions, command)
        if check is not None:
            try:
                check(load_cassette(temp))
            except CassetteWriteError as exc:
                raise CassetteWriteError(f"{target}: {exc}") from exc

    write_atomic(target, text.encode("utf-8"), check=verified)
    return RecordResult(path=target, status="written", interactions=len(interactions), skipped=skipped)


# --------------------------------------------------------------------------------------------
# Building the document
# --------------------------------------------------------------------------------------------


def normalise_url(url: str) -> str:
    """``url`` with the port of a loopback host removed (so recordings do not churn)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host not in _LOOPBACK and not host.startswith("127."):
        return url
    netloc = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _sent_secrets(exchanges: Iterable[Exchange]) -> list[str]:
    """The values of secret headers on both sides (and the credentials after an ``authorization``
    scheme, decoded for ``Basic``; each cookie value), of secret query parameters and a URL's
    password, to scrub wherever else they show up (an echo)."""
    found: list[str] = []
    for exchange in exchanges:
        url = urlsplit(exchange.url)
        found += [
            v for k, v in parse_qsl(url.query, keep_blank_values=True) if k.lower() in SECRET_QUERY and len(v) >= 8
        ]
        found += [url.password] if url.password else []
        for name, value in (*exchange.request_headers, *exchange.response_headers):
            if not is_secret_header(name):
                continue
            found.append(value)
            scheme, space, credentials = value.partition(" ")
            if space and scheme.isalpha():  # Bearer TOKEN, Basic BASE64, Token KEY: the credentials alone too
                found.append(credentials.strip())
                if scheme.lower() == "basic":
                    found.extend(_basic_credentials(credentials.strip()))
            if name in ("cookie", "set-cookie"):
                crumbs = (part.partition("=")[2].strip() for part in value.split(";"))
                found.extend(c for c in crumbs if len(c) >= 8)
    return found


def _basic_credentials(encoded: str) -> list[str]:
    """``user:password`` of a ``Basic`` authorization, and the password alone (none when not base64)."""
    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return []
    return [decoded, decoded.partition(":")[2]]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _provenance_block(provenance: Provenance, *, adapter: str, base_url: str) -> dict[str, Any]:
    block: dict[str, Any] = {
        "suite": f"conformance {_version('conformance')}",
        "adapter": adapter,
        "mode": provenance.mode,
        "base_url": normalise_url(base_url),
    }
    if provenance.model is not None:
        block["model"] = provenance.model
    if provenance.model_default:
        block["model_default"] = True
    if provenance.served_model is not None:
        block["served_model"] = provenance.served_model
    if provenance.scenario is not None:
        block["scenario"] = provenance.scenario
    if provenance.scenario_sha256:
        block["scenario_sha256"] = provenance.scenario_sha256
    if provenance.sampling:
        block["sampling"] = dict(provenance.sampling)
    if provenance.expected is not None:
        block["expected"] = dict(provenance.expected)
    block.update({str(k): str(v) for k, v in provenance.extra.items()})
    block["clients"] = {"python": platform.python_version(), "httpx": _version("httpx")}
    return block


def _interaction(exchange: Exchange, scrubber: Scrubber) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": exchange.method,
        "uri": normalise_url(scrubber.url(exchange.url)),
        "headers": _headers(exchange.request_headers, DROPPED_REQUEST_HEADERS, scrubber),
    }
    body = _body(exchange.request_body, scrubber, allow_json=True)
    if "body" in body:  # vcrpy keeps a request body as a plain string (a response one under `string`)
        body["body"] = body["body"]["string"]
    request.update(body)
    status = exchange.status or 0
    response: dict[str, Any] = {"status": {"code": status, "message": _reason(status)}}
    response["headers"] = _headers(exchange.response_headers, DROPPED_RESPONSE_HEADERS, scrubber)
    if exchange.stream and exchange.chunks and (pieces := _text_chunks(exchange.chunks, scrubber)) is not None:
        response["body"] = {"chunks": pieces}
    else:
        response.update(_body(exchange.response_body, scrubber, allow_json=not exchange.stream))
    if exchange.error is not None:
        response["interrupted"] = _LOOPBACK_PORT.sub(r"\1", scrubber.text(exchange.error))
    return {"request": request, "response": response}


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _headers(pairs: Iterable[tuple[str, str]], dropped: frozenset[str], scrubber: Scrubber) -> dict[str, list[str]]:
    """Headers as name -> values, scrubbed: a named secret split across any two values, in either
    order (two header names, ``x-key-part-1``/``x-key-part-2``, wherever they stand:
    ``Scrubber.across``); then all values as pieces in the order they came, then the values of each
    repeated header together (a secret split across two of them is found)."""
    kept = [(name, value) for name, value in pairs if name not in dropped]
    values = [value for _, value in kept]
    for i in range(len(values)):
        for j in range(len(values)):
            if i != j and (both := scrubber.across(values[i], values[j])) is not None:
                values[i], values[j] = both
    across = scrubber.pieces(values)
    grouped: dict[str, list[str]] = {}
    for (name, _), value in zip(kept, across, strict=True):
        grouped.setdefault(name, []).append(value)
    return {name: scrubber.header_values(name, values) for name, values in grouped.items()}


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _text_chunks(chunks: Iterable[bytes], scrubber: Scrubber) -> list[str] | None:
    """A stream's pieces as they arrived, as text (one SSE event or NDJSON line each when the server
    flushed them so), scrubbed as one joined text and cut again where they were cut
    (``Scrubber.pieces``: a secret split across pieces is removed from all of them); None when a
    piece is not UTF-8 on its own (then the body is stored whole)."""
    try:
        texts = [chunk.decode("utf-8") for chunk in chunks]
    except UnicodeDecodeError:
        return None
    return scrubber.pieces(texts)


def _body(body: bytes, scrubber: Scrubber, *, allow_json: bool) -> dict[str, Any]:
    if allow_json and body[:1] in (b"{", b"["):
        try:
            parsed = json.loads(body, object_pairs_hook=_no_duplicates)
        except ValueError:
            parsed = None
        # parsed_body is read back as json.dumps(parsed_body): keep it only when that round-trips.
        if isinstance(parsed, dict | list) and json.loads(json.dumps(parsed)) == parsed:
            return {"parsed_body": scrubber.json(parsed)}
    try:
        text: str | bytes = scrubber.text(body.decode("utf-8"))
    except UnicodeDecodeError:
        text = scrubber.data(body)
    return {"body": {"string": text}}


# --------------------------------------------------------------------------------------------
# YAML
# --------------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks where YAML allows it."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def render_cassette(provenance: Mapping[str, Any], interactions: list[dict[str, Any]]) -> str:
    """The cassette text: provenance first, then the interactions, then ``version: 1``.

    Written as pretty JSON (JSON is YAML: vcrpy and any YAML loader read it, and
    ``conformance.traffic.cassettes`` reads it at orjson's speed), with the characters YAML would read
    differently escaped. A cassette holding bytes that are not UTF-8 is written as YAML instead
    (``!!binary``).
    """
    document = {"provenance": dict(provenance), "interactions": interactions, "version": 1}
    if _holds_bytes(document):
        return yaml.dump(
            document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
        )
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return _YAML_SPECIAL.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


_YAML_SPECIAL = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
"""Characters YAML reads differently inside a double-quoted scalar (NEL and the Unicode line and
paragraph separators are line breaks; C1 controls, BOM and non-characters are not printable)."""


def _holds_bytes(value: Any) -> bool:
    if isinstance(value, bytes):
        return True
    if isinstance(value, dict):
        return any(_holds_bytes(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_bytes(v) for v in value)
    return False


def _previous(target: Path) -> Any:
    try:
        return load_yaml(target.read_bytes())
    except (OSError, yaml.YAMLError):
        return None


_UNTRACKED = ("recorded", "clients")


def _same_traffic(previous: Any, block: Mapping[str, Any], interactions: list[dict[str, Any]]) -> bool:
    if not isinstance(previous, dict) or type(previous.get("version")) is not int or previous["version"] != 1:
        # ``True`` and ``1.0`` equal 1 in Python, but the loader refuses them: such a file is rewritten
        return False
    old_block = previous.get("provenance")
    if not isinstance(old_block, dict) or "recorded" not in old_block:
        return False
    new = load_yaml(render_cassette(block, interactions))
    untracked = {k: v for k, v in old_block.items() if k not in _UNTRACKED}
    tracked = {k: v for k, v in new["provenance"].items() if k not in _UNTRACKED}
    return bool(untracked == tracked and previous.get("interactions") == new["interactions"])


# --------------------------------------------------------------------------------------------
# Verifying the written file
# --------------------------------------------------------------------------------------------


def _verify(temp: Path, target: Path, interactions: list[dict[str, Any]], command: str) -> None:
    """Read ``temp`` back and replay it; raise ``CassetteWriteError`` (naming ``target``) on any difference."""
    try:
        cassette = load_cassette(temp)
    except CassetteError as exc:
        raise CassetteWriteError(f"{target}: the new cassette does not read back: {exc}") from exc
    problems = [p for i in cassette.interactions for p in i.problems]
    if len(cassette.interactions) != len(interactions):
        problems.append(f"{len(cassette.interactions)} interactions read back, {len(interactions)} recorded")
    for loaded, written in zip(cassette.interactions, interactions, strict=False):
        problems += _differences(loaded.index, loaded, written)
    if not problems:
        problems += _replay_problems(cassette, interactions, command)
    if problems:
        raise CassetteWriteError(
            f"{target}: the new cassette does not replay what was recorded (old file kept): " + "; ".join(problems)
        )


def _expected_body(side: Mapping[str, Any]) -> tuple[bytes, Any]:
    if "parsed_body" in side:
        return json.dumps(side["parsed_body"]).encode(), side["parsed_body"]
    if isinstance(side.get("body"), dict) and "chunks" in side["body"]:
        return "".join(side["body"]["chunks"]).encode("utf-8"), None
    value = side["body"]["string"] if isinstance(side["body"], dict) else side["body"]
    return (value.encode("utf-8") if isinstance(value, str) else value), None


def _differences(index: int, loaded: Any, written: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    request, response = written["request"], written["response"]
    if (loaded.request.method, loaded.request.uri) != (request["method"], request["uri"]):
        out.append(f"interaction {index}: the request line differs")
    body, parsed = _expected_body(request)
    if (loaded.request.json != parsed) if parsed is not None else (loaded.request.body != body):
        out.append(f"interaction {index}: the request body differs")
    if loaded.response is None or loaded.response.status != response["status"]["code"]:
        out.append(f"interaction {index}: the response status differs")
        return out
    body, parsed = _expected_body(response)
    if (loaded.response.json != parsed) if parsed is not None else (loaded.response.body != body):
        out.append(f"interaction {index}: the response body differs")
    return out


def _replay_problems(cassette: Cassette, interactions: list[dict[str, Any]], command: str) -> list[str]:
    backend = ReplayBackend(cassette, command=command)
    out: list[str] = []
    with httpx.Client(transport=backend) as client:
        for index, (loaded, written) in enumerate(zip(cassette.interactions, interactions, strict=True)):
            request = written["request"]
            body, _ = _expected_body(request)
            stream = is_streaming(loaded)
            built = client.build_request(
                request["method"], request["uri"], content=body, extensions={STREAM_EXTENSION: stream}
            )
            try:
                response = client.send(built)
                served = response.content
            except CassetteError as exc:
                out.append(f"interaction {index} does not replay: {exc}")
                continue
            except httpx.HTTPError as exc:
                if "interrupted" not in written["response"]:
                    out.append(f"interaction {index} does not replay: {exc}")
                continue  # a stream that broke while recording breaks again on replay, as it should
            expected, _ = _expected_body(written["response"])
            if response.status_code != written["response"]["status"]["code"] or served != expected:
                out.append(f"interaction {index}: replay serves a different response")
    return out
