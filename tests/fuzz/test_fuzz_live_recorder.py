"""The fuzz tier's live recorder target (issue 27, point 4): ``conformance record --live`` against a
hostile server on 127.0.0.1 whose answers are drawn from a seeded generator; 0 crashes, 0 hangs.

Each input is one kind of hostile answer with its parameters drawn from ``random.Random`` seeded
by ``CONFORMANCE_FUZZ_SEED`` (default ``0``) and the input's number: bad framing (a status line
that is not one, chunk sizes that are not hex), a ``content-length`` that lies, gzip cut short or
not gzip at all, a gzip bomb, garbage SSE, one line longer than the body bound, huge headers,
bytes sent slowly against tiny timeouts, a connection reset at some point, and well-framed answers
of the wrong shape. Every request of the pair gets that kind of answer, on one adapter of
``ADAPTERS`` in turn (``basic/get_time``: up to four exchanges, non-streamed then streamed).

Every pair must end ``failed: <message>`` (or recorded/deviated when the answer happens to be
good enough), the command must return, print no traceback, and no pair may need its own
``--timeout``: a hostile answer ends at the exchange deadline (``--exchange-timeout``), the body
bound (``--max-body``) or the broken framing, never later; a large or slow kind must end at its
bound (``BOUNDED_BY``). The default run takes every
``SAMPLE_EVERY``-th of the ``CONFORMANCE_FUZZ_LIVE`` inputs (default 66: 11 kinds x 6); the
whole set is the ``fuzz_corpus`` tier (``pytest -m fuzz_corpus``). A finding names its input:
``CONFORMANCE_FUZZ_SEED=S`` and the input number reproduce it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from _raw_server import Peer, RawServer, chunk, deflate_bomb, head

from conformance.cli import main

pytestmark = pytest.mark.fuzz

DATA = Path(__file__).resolve().parents[1] / "data" / "scenarios"
SEED = os.environ.get("CONFORMANCE_FUZZ_SEED", "0")
INPUTS = int(os.environ.get("CONFORMANCE_FUZZ_LIVE", "66"))
SAMPLE_EVERY = 6
"""The default run's sample: inputs 0, 6, 12, ... (one of each kind's first round is not the point:
the kinds rotate with the number, so a sample still covers several kinds)."""
ADAPTERS = ("openai_chat", "anthropic", "gemini", "openai_responses", "ollama")
OPTIONS = ["--exchange-timeout", "1", "--timeout", "30", "--max-body", "1M"]
"""Tiny bounds: a slow answer is cut at 1 s per exchange, a large one at 1 MiB; 30 s per pair is
the net no hostile answer may fall into (it is a finding: "hang")."""
SAFETY = 90.0
"""Seconds after which a command that has not returned is a hang (a net; none should come near)."""

Answer = Callable[[Peer], None]


# --------------------------------------------------------------------------------------------
# The hostile answers, one maker per kind: rng -> answer
# --------------------------------------------------------------------------------------------


def _json_body(rng: random.Random) -> bytes:
    return json.dumps({"id": "x", "choices": [{"message": {"content": "hi" * rng.randint(1, 50)}}]}).encode()


def _bad_framing(rng: random.Random) -> Answer:
    junk = rng.choice(
        [
            b"HTTP/1.1 abc OK\r\n\r\n",
            b"HTTP/9.9 200 OK\r\ncontent-length: 2\r\n\r\n{}",
            b"\x00\xff\xfe not http at all\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nthis is no header\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX3\r\nabc\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffff\r\nshort",
            b"HTTP/1.1 200 OK\r\n" + bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))),
            b"",
        ]
    )

    def answer(peer: Peer) -> None:
        peer.send(junk)

    return answer


def _lying_length(rng: random.Random) -> Answer:
    body = _json_body(rng)
    length = rng.choice([str(len(body) + rng.randint(1, 5000)), str(max(len(body) - 7, 0)), "-5", "abc", "1e9"])
    double = rng.random() < 0.3

    def answer(peer: Peer) -> None:
        headers = [("content-type", "application/json"), ("content-length", length)]
        if double:
            headers.append(("content-length", str(len(body))))
        peer.send(head(headers=headers) + body)

    return answer


def _bad_gzip(rng: random.Random) -> Answer:
    import gzip
    import zlib

    body = _json_body(rng) * rng.randint(1, 20)
    packed = gzip.compress(body)
    raw = rng.choice(
        [
            packed[: rng.randint(0, len(packed) - 1)],  # cut short
            b"\x1f\x8b\x08\x00" + bytes(rng.randrange(256) for _ in range(64)),  # not deflate
            bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))),  # not gzip at all
            zlib.compress(body)[: rng.randint(1, 20)],
        ]
    )
    encoding = rng.choice(["gzip", "deflate", "gzip, deflate", "gzip, gzip"])
    chunked = rng.random() < 0.5

    def answer(peer: Peer) -> None:
        headers = [("content-type", "application/json"), ("content-encoding", encoding)]
        if chunked:
            peer.send(head(headers=[*headers, ("transfer-encoding", "chunked")]) + chunk(raw) + b"0\r\n\r\n")
        else:
            peer.send(head(headers=[*headers, ("content-length", str(len(raw)))]) + raw)

    return answer


def _gzip_bomb(rng: random.Random) -> Answer:
    bomb = deflate_bomb(rng.choice([64, 256, 1024]) << 20, gzip=rng.random() < 0.7)
    encoding = "gzip" if bomb[:2] == b"\x1f\x8b" else "deflate"
    streamed_type = rng.choice(["application/json", "text/event-stream"])

    def answer(peer: Peer) -> None:
        headers = [("content-type", streamed_type), ("content-encoding", encoding)]
        peer.send(head(headers=[*headers, ("content-length", str(len(bomb)))]))
        peer.send(bomb)

    return answer


def _garbage_sse(rng: random.Random) -> Answer:
    pieces = [
        rng.choice(
            [
                b"data: {\n\n",
                b'data: {"choices": [{"delta": {"content": 5}}]}\n\n',
                b"event: x\ndata: [1,2\n\n",
                b"data: " + b"[" * rng.randint(100, 5000) + b"\n\n",
                b"data: \xff\xfe\xed\xa0\x80\n\n",
                b": comment\n\n",
                b"data: [DONE]\n\n",
                b"retry: -1\nid: \x00\n\n",
                bytes(rng.randrange(256) for _ in range(rng.randint(1, 400))),
                b'data: {"type": "message_start", "message": null}\n\n',
                b'data: {"candidates": [{"content": {"parts": [{"functionCall": {"args": "no"}}]}}]}\n\n',
            ]
        )
        for _ in range(rng.randint(1, 30))
    ]
    status = rng.choice(["200 OK", "200 OK", "500 Oops", "429 Slow down"])

    def answer(peer: Peer) -> None:
        headers = [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]
        peer.send(head(status, headers) + b"".join(chunk(p) for p in pieces if p) + b"0\r\n\r\n")

    return answer


def _long_line(rng: random.Random) -> Answer:
    total = rng.choice([2, 3, 8]) << 20  # past the 1 MiB bound, never a newline

    def answer(peer: Peer) -> None:
        peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
        block = b"data: " + b"a" * 65530
        for _ in range(total // len(block)):
            if peer.stopped:
                return
            peer.send(chunk(block))
        peer.send(b"0\r\n\r\n")

    return answer


def _huge_headers(rng: random.Random) -> Answer:
    if rng.random() < 0.5:
        headers = [("x-big", "v" * rng.choice([70_000, 200_000, 1_000_000]))]
    else:
        headers = [(f"x-h{i}", "v" * 40) for i in range(rng.choice([3000, 20_000]))]

    def answer(peer: Peer) -> None:
        peer.send(head(headers=[("content-type", "application/json"), *headers, ("content-length", "2")]) + b"{}")

    return answer


def _slow_bytes(rng: random.Random) -> Answer:
    pace = rng.uniform(0.15, 0.4)
    where = rng.choice(["stream", "body", "status"])

    def answer(peer: Peer) -> None:
        if where == "status":  # headers that never end, a byte at a time
            data = b"HTTP/1.1 200 OK\r\n" + b"x-slow: y\r\n" * 10_000
        elif where == "body":
            body = _json_body(rng)
            peer.send(head(headers=[("content-type", "application/json"), ("content-length", str(len(body)))]))
            data = body
        else:
            peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
            data = chunk(b": ping\n\n") * 200
        for byte in data:
            if peer.stopped:
                return
            peer.send(bytes([byte]))
            peer.wait(pace)

    return answer


def _reset(rng: random.Random) -> Answer:
    when = rng.choice(["at once", "after the headers", "mid-body"])

    def answer(peer: Peer) -> None:
        if when != "at once":
            peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
        if when == "mid-body":
            peer.send(chunk(b'data: {"choices": [{"delta": {"content": "Hel'))
        peer.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST

    return answer


def _wrong_shape(rng: random.Random) -> Answer:
    status, body = rng.choice(
        [
            ("200 OK", b'{"choices": "x"}'),
            ("200 OK", b"[]"),
            ("200 OK", b"null"),
            ("200 OK", b"not json"),
            ("204 No Content", b""),
            ("500 Internal Server Error", b"<html>oops</html>"),
            ("401 Unauthorized", b'{"error": {"message": ' + b"[" * 3000 + b"}}"),
            ("302 Found", b""),
            ("101 Switching Protocols", b""),
        ]
    )

    def answer(peer: Peer) -> None:
        headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        if status.startswith("302"):
            headers.append(("location", "http://example.com/v1/chat/completions"))
        peer.send(head(status, headers) + body)

    return answer


KINDS: dict[str, Callable[[random.Random], Answer]] = {
    "bad-framing": _bad_framing,
    "lying-length": _lying_length,
    "bad-gzip": _bad_gzip,
    "gzip-bomb": _gzip_bomb,
    "garbage-sse": _garbage_sse,
    "long-line": _long_line,
    "huge-headers": _huge_headers,
    "slow-bytes": _slow_bytes,
    "reset": _reset,
    "wrong-shape": _wrong_shape,
    "silent": lambda rng: lambda peer: peer.wait(60),
}

BOUNDED_BY = {
    "gzip-bomb": "(raise it with --max-body)",
    "long-line": "(raise it with --max-body)",
    "slow-bytes": "deadline: ",
    "silent": "deadline: ",
}
"""The bound each kind of answer must end at, as the pair's line says it: a body past ``--max-body``
(counted as it inflates), an exchange past ``--exchange-timeout`` (connecting and the headers
included). Ending any other way is a finding ("unbounded")."""


# --------------------------------------------------------------------------------------------
# Driving one input
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    number: int
    kind: str
    adapter: str
    what: str
    """``crash``, ``hang`` or ``unbounded`` (not ended by the bound its kind must meet)."""
    detail: str

    def describe(self) -> str:
        return (
            f"input {self.number} ({self.kind} on {self.adapter}): {self.what}: {self.detail[:500]}\n"
            f"  reproduce: CONFORMANCE_FUZZ_SEED={SEED} python -m pytest -n 0 -m fuzz_corpus "
            f"'tests/fuzz/test_fuzz_live_recorder.py::test_one_input[{self.number}]'"
        )


_STATUS = re.compile(r"^\[1/1\] (\S+) basic/get_time: (.*)$", re.MULTILINE)
_OK = ("recorded", "unchanged", "model deviated: ", "failed: ", "unsupported")


def drive(number: int, folder: Path) -> tuple[str, list[Finding]]:
    """Run input ``number`` (its kind and adapter by the number, its parameters by the seed); the
    status line of its pair and what went wrong, if anything."""
    kind = list(KINDS)[number % len(KINDS)]
    adapter = ADAPTERS[(number // len(KINDS)) % len(ADAPTERS)]
    answers = [KINDS[kind](random.Random(f"{SEED}:{number}:{n}")) for n in range(8)]

    def answer(peer: Peer) -> None:
        answers[min(peer.number, len(answers) - 1)](peer)

    def finding(what: str, detail: str) -> list[Finding]:
        return [Finding(number, kind, adapter, what, detail)]

    argv = ["record", "--live", "--adapter", adapter, "--scenarios-dir", str(DATA), "--scenario", "basic/get_time"]
    err = io.StringIO()
    outcome: list[object] = []
    with RawServer(answer) as server:
        argv += ["--base-url", server.base_url, "--cassette-dir", str(folder), *OPTIONS]

        def run() -> None:
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    outcome.append(main(argv))
            except BaseException as exc:  # what escapes the command is the finding
                outcome.append(exc)

        thread = threading.Thread(target=run, daemon=True, name=f"fuzz live {number}")
        thread.start()
        thread.join(SAFETY)
        if thread.is_alive():
            return "", finding("hang", f"the command did not return within {SAFETY:g} s")
    text = err.getvalue()
    (result,) = outcome
    if isinstance(result, BaseException):
        return "", finding("crash", f"{type(result).__name__}: {result}")
    if "Traceback" in text:
        return "", finding("crash", text[text.index("Traceback") :])
    if result not in (0, 1):
        return "", finding("crash", f"exit {result}: {text[-1000:]}")
    status = _STATUS.search(text)
    if status is None:
        return "", finding("crash", f"no status line for the pair: {text[-1000:]}")
    shown = status.group(2)
    if not shown.startswith(_OK) or shown.strip() in ("failed:", "failed: none"):
        return shown, finding("crash", f"no clear status: {shown!r}")
    if "timed out after" in shown:
        return shown, finding("hang", f"the pair ran into its --timeout: {shown}")
    bound = BOUNDED_BY.get(kind)
    if bound is not None and bound not in shown:
        return shown, finding("unbounded", f"expected the pair to end with {bound!r}: {shown}")
    return shown, []


def _run(numbers: list[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.process_time()
    findings: list[Finding] = []
    statuses: dict[str, int] = {}
    for number in numbers:
        shown, found = drive(number, tmp_path / str(number))
        findings += found
        word = shown.split(":", 1)[0].split(" (", 1)[0] if shown else "finding"
        statuses[word] = statuses.get(word, 0) + 1
    cpu = time.process_time() - started
    summary = (
        f"fuzz live recorder (seed {SEED}): {len(numbers)} inputs, "
        + ", ".join(f"{count} {word}" for word, count in sorted(statuses.items()))
        + f"; {sum(f.what == 'crash' for f in findings)} crash(es), {sum(f.what == 'hang' for f in findings)} "
        f"hang(s), {sum(f.what == 'unbounded' for f in findings)} unbounded; {cpu:.1f} s of CPU"
    )
    if len(numbers) > 1:  # one input alone is a reproducer: its verdict is the test's
        with capsys.disabled():
            print("\n" + summary, file=sys.stderr)
    assert not findings, summary + "\n" + "\n".join(f.describe() for f in findings)


def test_a_seeded_sample_of_hostile_servers_crashes_nothing_and_hangs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    numbers = list(range(0, INPUTS, SAMPLE_EVERY))
    assert len({list(KINDS)[n % len(KINDS)] for n in numbers}) >= 6  # the sample covers most kinds
    _run(numbers, tmp_path, capsys)


@pytest.mark.fuzz_corpus
def test_every_hostile_server_crashes_nothing_and_hangs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(list(range(INPUTS)), tmp_path, capsys)


@pytest.mark.fuzz_corpus
@pytest.mark.parametrize("number", range(INPUTS))
def test_one_input(number: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One input alone (the reproducer a finding names)."""
    _run([number], tmp_path, capsys)
