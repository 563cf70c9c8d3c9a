"""Serve a recorded cassette back to a ``Transport``, offline (the replay edge).

``ReplayBackend`` is an ``httpx.BaseTransport``: it never opens a socket. A request is matched on
method, URL path and stream mode (whether the caller streams); among the matches, interactions are
played once each, in recorded order, so a multi-turn conversation replays turn by turn. A request
no unplayed interaction matches raises ``ReplayMissError`` naming the cassette, the request and the
``conformance record`` command that would record it. Streamed bodies are served in pieces (one SSE
event or NDJSON line each), so stream decoders see more than one chunk as they would live. A
stream that broke while it was recorded (``response.interrupted``, written by the recorder) is
served up to where it broke and then breaks again (``StreamInterruptedError`` from the Transport).

``VcrSerializer`` lets vcrpy itself replay these files (for code that calls a provider SDK):
``vcr.VCR().register_serializer("conformance", VcrSerializer())``, then
``use_cassette(path, serializer="conformance", record_mode="none")``. It turns ``parsed_body``
back into the JSON text vcrpy expects, as pydantic-ai's serializer does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import yaml

from conformance.errors import ReplayMissError
from conformance.traffic.cassettes import Cassette, Interaction, is_streaming, load_cassette
from conformance.traffic.safe_yaml import load_yaml
from conformance.traffic.transport import STREAM_EXTENSION, Transport

__all__ = ["ReplayBackend", "VcrSerializer", "replay_transport", "split_stream_body"]

_DROP_ON_REPLAY = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection"})
_BLANK_LINE = re.compile(rb"\n\n|\r\n\r\n|\r\r")
_EVENT_END = re.compile(rb"(?<=\n\n)|(?<=\r\n\r\n)|(?<=\r\r)")


def split_stream_body(body: bytes) -> list[bytes]:
    """A streamed body in the pieces a live server sends: SSE events, else NDJSON lines."""
    if _BLANK_LINE.search(body):
        return [p for p in _EVENT_END.split(body) if p]
    return body.splitlines(keepends=True) or [body]


class _Pieces(httpx.SyncByteStream):
    def __init__(self, pieces: list[bytes], interrupted: str | None = None) -> None:
        self._pieces = pieces
        self._interrupted = interrupted

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces
        if self._interrupted is not None:  # recorded broken: break again, as the server did
            raise httpx.RemoteProtocolError(f"replayed interruption: {self._interrupted}")


class ReplayBackend(httpx.BaseTransport):
    """Answers requests from a cassette; ``command`` is the ``conformance record ...`` line named
    in the error for a request the cassette lacks."""

    def __init__(self, cassette: Cassette, *, command: str = "") -> None:
        self.cassette = cassette
        self.command = command
        self.played: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        stream = request.extensions.get(STREAM_EXTENSION)
        path = request.url.path
        for interaction in self.cassette.interactions:
            if interaction.index in self.played or interaction.response is None:
                continue
            if not _matches(interaction, request.method, path, stream):
                continue
            self.played.append(interaction.index)
            return _response(interaction, stream=bool(stream))
        mode = "" if stream is None else (" (streamed)" if stream else " (not streamed)")
        raise ReplayMissError(self.cassette.path, f"{request.method} {path}{mode}", command=self.command)


def _matches(interaction: Interaction, method: str, path: str, stream: object) -> bool:
    recorded = interaction.request
    try:
        recorded_path = urlsplit(recorded.uri).path
    except ValueError:  # a recorded URI that is not a URL (``http://[::1``) matches no request
        return False
    if recorded.method.upper() != method.upper() or recorded_path != path:
        return False
    return stream is None or bool(stream) == is_streaming(interaction)


def _response(interaction: Interaction, *, stream: bool) -> httpx.Response:
    """The recorded response; a body that broke while recording (``interrupted``) breaks again."""
    response = interaction.response
    assert response is not None
    # as bytes, as they come off a socket: httpx encodes a str header as ASCII and raises on any
    # other character, which a cassette (untrusted input) may hold
    headers = [(_raw(k), _raw(v)) for k, v in response.headers.items() if k not in _DROP_ON_REPLAY]
    if stream and response.chunks:
        pieces = list(response.chunks)  # the pieces as they arrived when recorded
    else:
        pieces = split_stream_body(response.body) if stream and response.body else [response.body]
    return httpx.Response(response.status, headers=headers, stream=_Pieces(pieces, response.interrupted))


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def replay_transport(
    cassette: str | os.PathLike[str] | Cassette, *, wire: str, base_url: str = "http://127.0.0.1", command: str = ""
) -> Transport:
    """A ``Transport`` that answers from ``cassette`` (a path or a loaded one) and opens no socket.

    ``base_url`` only shapes the logged URLs: matching looks at method, path and stream mode.
    """
    loaded = cassette if isinstance(cassette, Cassette) else load_cassette(cassette)
    return Transport(base_url, wire=wire, backend=ReplayBackend(loaded, command=command))


class VcrSerializer:
    """A vcrpy serializer for the cassettes ``conformance.traffic.recorder`` writes (read side only)."""

    @staticmethod
    def deserialize(cassette_string: str) -> dict[str, Any]:
        data: Any = load_yaml(cassette_string)
        if not isinstance(data, dict):
            return {"interactions": []}
        for interaction in data.get("interactions") or []:
            request, response = interaction.get("request", {}), interaction.get("response", {})
            if "parsed_body" in request:
                request["body"] = json.dumps(request.pop("parsed_body"))
            if "parsed_body" in response:
                response["body"] = {"string": json.dumps(response.pop("parsed_body"))}
            body = response.get("body")
            if isinstance(body, dict) and "string" not in body and isinstance(body.get("chunks"), list):
                response["body"] = {"string": "".join(body["chunks"])}
            response.pop("interrupted", None)
        return {"interactions": data.get("interactions") or [], "version": data.get("version", 1)}

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        """What vcrpy would write itself (record with ``conformance.traffic.recorder`` instead)."""
        text: str = yaml.dump(cassette_dict, Dumper=yaml.SafeDumper)
        return text
