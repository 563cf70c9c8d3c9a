"""Mutant servers for ``certify_server``: a loopback proxy in front of the emulator that breaks its
answers one way each (issue 29, "Done means"), and hostile servers that never answer, answer
forever, send too much, redirect elsewhere or answer in another wire ("Bad input").

``MutantProxy(upstream, mutate)`` forwards each request to the emulator (127.0.0.1 only), reads the
whole answer, passes it through ``mutate`` and sends what comes out with a ``content-length``.
The mutations (OpenAI Chat, whose rules are in wire-formats.md §1c-§1e):

- ``no_terminator``: a stream without its ``data: [DONE]`` line (§1d: the stream ends with it);
- ``changing_ids``: every chunk of a stream under another ``id`` (all chunks of one completion share
  its id: openai-python ``ChatCompletionChunk.id``, "Each chunk has the same ID");
- ``ok_for_invalid``: a 4xx answered as a 200 with a completion instead (the request was invalid);
- ``arguments_not_json``: each call's argument text with an ``x`` before it (§1c: a JSON string
  holding the arguments object).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import TracebackType

import httpx

from tests._raw_server import Peer, RawServer, head

__all__ = [
    "MUTATIONS",
    "Answer",
    "MutantProxy",
    "arguments_not_json",
    "changing_ids",
    "no_terminator",
    "ok_for_invalid",
]


@dataclass(frozen=True)
class Answer:
    """What the emulator answered to one request, as the proxy got it whole."""

    path: str
    request: bytes
    status: int
    content_type: str
    body: bytes

    @property
    def stream(self) -> bool:
        return self.content_type.startswith("text/event-stream")


def no_terminator(answer: Answer) -> Answer:
    return replace(answer, body=answer.body.replace(b"data: [DONE]\n\n", b"")) if answer.stream else answer


def changing_ids(answer: Answer) -> Answer:
    if not answer.stream:
        return answer
    count = iter(range(1_000_000))
    return replace(
        answer,
        body=re.sub(rb'"id":"chatcmpl-[^"]*"', lambda _: b'"id":"chatcmpl-%d"' % next(count), answer.body),
    )


_COMPLETION = json.dumps(
    {
        "id": "chatcmpl-ok",
        "object": "chat.completion",
        "created": 1735689600,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop", "logprobs": None}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
).encode()


def ok_for_invalid(answer: Answer) -> Answer:
    if 400 <= answer.status < 500:
        return Answer(answer.path, answer.request, 200, "application/json", _COMPLETION)
    return answer


def arguments_not_json(answer: Answer) -> Answer:
    if answer.status != 200:
        return answer
    if not answer.stream:
        value = json.loads(answer.body)
        for choice in value.get("choices", []):
            for call in choice.get("message", {}).get("tool_calls") or []:
                call["function"]["arguments"] = "x" + call["function"]["arguments"]
        return replace(answer, body=json.dumps(value).encode())
    started: set[int] = set()
    lines = []
    for line in answer.body.split(b"\n"):
        if line.startswith(b"data: {"):
            value = json.loads(line[6:])
            for choice in value.get("choices", []):
                for call in (choice.get("delta") or {}).get("tool_calls") or []:
                    text = (call.get("function") or {}).get("arguments")
                    if text and call["index"] not in started:
                        started.add(call["index"])
                        call["function"]["arguments"] = "x" + text
            line = b"data: " + json.dumps(value).encode()
        lines.append(line)
    return replace(answer, body=b"\n".join(lines))


MUTATIONS: dict[str, tuple[Callable[[Answer], Answer], str]] = {
    "no_terminator": (no_terminator, "server.framing"),
    "changing_ids": (changing_ids, "server.ids"),
    "ok_for_invalid": (ok_for_invalid, "server.errors"),
    "arguments_not_json": (arguments_not_json, "server.arguments"),
}
"""Mutation name -> (the mutation, the check that must fail for it)."""


class MutantProxy:
    """A loopback proxy to ``upstream`` (the emulator) that passes every answer through ``mutate``."""

    def __init__(self, upstream: str, mutate: Callable[[Answer], Answer]) -> None:
        self.upstream = upstream
        self.mutate = mutate
        self.server = RawServer(self._answer)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def __enter__(self) -> MutantProxy:
        self.server.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.__exit__(kind, exc, tb)

    def _answer(self, peer: Peer) -> None:
        lines = peer.head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() in ("content-type", "anthropic-version", "authorization", "x-api-key", "x-goog-api-key"):
                headers[name] = value.strip()
        got = httpx.request(method, self.upstream + target, content=peer.body, headers=headers, timeout=30)
        answer = Answer(target, peer.body, got.status_code, got.headers.get("content-type", ""), got.content)
        out = self.mutate(answer)
        reason = "OK" if out.status == 200 else "Error"
        sent = [("content-type", out.content_type), ("content-length", str(len(out.body)))]
        peer.send(head(f"{out.status} {reason}", sent) + out.body)
