"""Recording: run scenarios x adapters against the emulator or a live provider and write cassettes.

For each chosen (adapter, scenario) pair, one cassette ``CASSETTE_DIR/<adapter>/<scenario-id>.yaml``
holds the conversation run non-streaming, then streaming (the scenario's ``modes``), as
consecutive interactions; replay matches each request by method, path and stream mode, in order.
With the emulator (``conformance record --emulator``) each pair's scenario scripts its replies
through ``set_script``; live (``--live``) the same requests go, through the same code
(``conformance.run.conversation``), to the provider's base URL with its key.

Each pair ends with one status: ``recorded`` (the cassette was written), ``unchanged`` (the file
would not change: it is left byte-identical), ``deviated`` (live: the model did not do what the
scenario's loose expectations allow, ``conformance.run.live.deviations``; nothing is written
unless ``allow_deviation``; a deviation recorded before that the model repeats to the byte is
``unchanged``, saying that the model still deviates), ``unsupported`` (the scenario requires a
capability the adapter does not declare: the runner reports it UNSUPPORTED without a cassette) or
``failed``. Nothing is
written for a failed pair, and the old cassette stays: an exchange that got no response, and live
also a stream that broke, a provider error the scenario does not expect, or an exchange past its
deadline. One pair that fails never stops the others. A scenario with ``tools: {mcp: ...}`` gets
its tools from one MCP server per pair, and its ``tool_results: mcp`` turns are answered by that
server's ``tools/call`` (``conformance.mcp_bridge.scenario_tools``); a server that fails to start or
dies fails the pair.

Live, the requests carry the recording's sampling knobs (``conformance.run.live.Sampling``:
temperature 0, a seed, a small ``max_tokens``, each in its wire's own field), and the cassette's
provenance keeps them, the model the responses name (``served_model``) next to the one asked for,
and per mode and turn the reference adapter's decoding (``expected``), which replay judges
adapters against.

Each pair has ``timeout`` seconds (``conformance record --timeout``, default ``DEFAULT_PAIR_TIMEOUT``):
it runs in a daemon thread, and one that has not finished by then fails ("timed out") and the
next pair starts. A thread cannot be stopped from outside, so the late one is fenced off: the
socket of its exchange in flight is shut down (nothing keeps downloading for a pair that has
ended), its next HTTP request raises, and it writes no cassette (the check runs after its
conversations, before the write); the emulator's script is set and cleared by the caller's thread
only. Each HTTP exchange has ``exchange_timeout`` seconds from its request to the last byte of its
body (``--exchange-timeout``), connecting and the headers included: a server that sends nothing,
its headers a byte at a time, or a stream that never ends, is cut there by a watchdog and fails
the pair ("deadline"). Each response body may hold ``max_body`` bytes once decoded
(``--max-body``, default ``DEFAULT_MAX_BODY``; ``conformance.traffic.transport``): past them the
exchange is cut and the pair fails, what arrived of the body dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from conformance.adapters.base import Adapter
from conformance.errors import ConformanceError, McpServerError, ScenarioError, TransportTimeoutError
from conformance.mcp_bridge.scenario_tools import McpExecutor, open_scenario_tools
from conformance.run.conversation import DEFAULT_MODELS, ConversationOutcome, run_conversation
from conformance.run.live import Sampling, decodings, deviations, served_model, with_sampling
from conformance.scenarios.values import Scenario
from conformance.traffic.recorder import Provenance, RecordResult, _sent_secrets, write_cassette
from conformance.traffic.scrub import Scrubber
from conformance.traffic.transport import DEFAULT_TIMEOUT, Exchange, Transport

__all__ = [
    "DEFAULT_EXCHANGE_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "DEFAULT_PAIR_TIMEOUT",
    "Fence",
    "PairResult",
    "cassette_path",
    "record_pairs",
    "record_with_emulator",
    "select_scenarios",
]

DEFAULT_PAIR_TIMEOUT = 300.0
"""Seconds one (adapter, scenario) pair may take, both modes, every turn (``record --timeout``)."""

DEFAULT_EXCHANGE_TIMEOUT = 120.0
"""Seconds one HTTP exchange may take, request to last byte (``record --exchange-timeout``)."""

DEFAULT_MAX_BODY = 64 * 1024 * 1024
"""Bytes one response body may have once decoded (gzip counted as it inflates; ``record --max-body``)."""


@dataclass(frozen=True, kw_only=True)
class PairResult:
    adapter: str
    scenario: str
    status: str
    """``recorded``, ``unchanged``, ``deviated``, ``unsupported`` or ``failed``."""
    detail: str = ""
    """For ``deviated``: what the model did instead; for ``failed``: the error."""
    written: bool = False
    """Whether the cassette was written (``recorded``; ``deviated`` with ``allow_deviation``)."""

    def shown(self) -> str:
        """The status as the command prints it: ``recorded (4 interactions)``, ``model deviated: ...``,
        ``failed: ...``."""
        if self.status == "deviated":
            return f"model deviated: {self.detail}"
        if self.status == "failed":
            return f"failed: {self.detail}"
        return f"{self.status} ({self.detail})" if self.detail else self.status


def cassette_path(cassette_dir: Path, traffic_format: str, scenario_id: str) -> Path:
    """Where a cassette of ``traffic_format`` (``Adapter.traffic_format``) for the scenario lives."""
    return cassette_dir / traffic_format / f"{scenario_id}.yaml"


def select_scenarios(scenarios: Sequence[Scenario], patterns: Sequence[str] | None) -> list[Scenario]:
    """The scenarios whose id equals or matches (``fnmatch``) one of ``patterns`` (all when none)."""
    if not patterns:
        return list(scenarios)
    return [s for s in scenarios if any(s.id == p or fnmatch.fnmatchcase(s.id, p) for p in patterns)]


@dataclass(frozen=True, kw_only=True)
class _Options:
    cassette_dir: Path
    base_url: str
    mode: str
    api_key: str | None
    model: str | None
    sampling: Sampling | None
    exchange_timeout: float | None
    max_body: int | None
    allow_deviation: bool
    notes: Mapping[str, str]


def record_pairs(
    scenarios: Sequence[Scenario],
    adapters: Sequence[Adapter],
    *,
    cassette_dir: Path,
    base_url: str,
    mode: str,
    set_script: Callable[[Scenario | None], None] | None = None,
    api_key: str | None = None,
    model: str | None = None,
    progress: TextIO | None = None,
    timeout: float | None = DEFAULT_PAIR_TIMEOUT,
    sampling: Sampling | None = None,
    exchange_timeout: float | None = DEFAULT_EXCHANGE_TIMEOUT,
    max_body: int | None = DEFAULT_MAX_BODY,
    allow_deviation: bool = False,
    notes: Mapping[str, str] | None = None,
) -> list[PairResult]:
    """Record every (adapter, scenario) pair; ``set_script`` scripts the emulator per scenario.

    A pair still running after ``timeout`` seconds fails (its exchange in flight is cut), and so
    does one whose HTTP exchange takes longer than ``exchange_timeout`` (None: no limit) or whose
    response body, decoded, passes ``max_body`` bytes (None: no bound; see the module docstring). ``sampling`` (live
    only) are the request knobs sent; ``allow_deviation`` writes the pairs whose model deviated;
    ``notes`` are more provenance lines (``record --provenance KEY=VALUE``: the server build, the
    model file and its sha256)."""
    pairs = [(adapter, scenario) for adapter in adapters for scenario in scenarios]
    scrub = Scrubber([api_key] if api_key else []).text  # details are printed: a provider may echo the key
    options = _Options(
        cassette_dir=cassette_dir,
        base_url=base_url,
        mode=mode,
        api_key=api_key,
        model=model,
        sampling=sampling if mode == "live" else None,
        exchange_timeout=exchange_timeout,
        max_body=max_body,
        allow_deviation=allow_deviation,
        notes=dict(notes or {}),
    )
    results: list[PairResult] = []
    for number, (adapter, scenario) in enumerate(pairs, 1):
        result = _timed(adapter, scenario, timeout, set_script=set_script, options=options)
        result = dataclasses.replace(result, detail=scrub(result.detail))
        results.append(result)
        if progress is not None:
            print(f"[{number}/{len(pairs)}] {adapter.name} {scenario.id}: {result.shown()}", file=progress)
    return results


def record_with_emulator(
    scenarios: Sequence[Scenario], adapters: Sequence[Adapter], **options: Any
) -> list[PairResult]:
    """``record_pairs`` against a loopback emulator started for the call and scripted with each
    scenario's replies in turn (``conformance record --emulator``, ``conformance drift --emulator``);
    ``options`` are ``record_pairs``' keyword arguments but ``base_url``, ``mode`` and ``set_script``."""
    from conformance.emulator import Emulator, EmulatorScript

    with Emulator() as emulator:

        def set_script(scenario: Scenario | None) -> None:
            emulator.set_script(None if scenario is None else EmulatorScript.from_scenario(scenario))

        return record_pairs(
            scenarios, adapters, base_url=emulator.base_url, mode="emulator", set_script=set_script, **options
        )


class Fence(httpx.BaseTransport):
    """The HTTP transport of one pair (and of one case of ``conformance.servers``, which bounds a
    live server's exchanges the same way): its connections are not kept between exchanges, and each
    exchange is watched from its request to the last byte of its body.

    Once ``cancel()`` is called (the pair timed out), every request raises instead of reaching the
    server and the exchange in flight is cut: its socket is shut down, so nothing keeps downloading
    for a pair that has ended. Each exchange must end within ``deadline`` seconds of its request:
    past them a watchdog shuts its socket down wherever it is (connecting, waiting for or reading
    the headers a byte at a time, reading the body), the exchange raises ``httpx.ReadTimeout`` and
    ``overran`` says which. The socket is known from httpcore's ``trace`` extension (the
    ``connect_tcp`` and ``start_tls`` events), hence a new connection per exchange."""

    def __init__(self, deadline: float | None = None) -> None:
        self.cancelled = threading.Event()
        self.deadline = deadline
        self.overran: str | None = None
        self.inner = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        self._lock = threading.Lock()
        self._watches: set[_Watch] = set()

    def overrun(self, what: str) -> httpx.ReadTimeout:
        self.overran = self.overran or f"{what} did not end within {self.deadline:g} s"
        return httpx.ReadTimeout(f"deadline: {self.overran}")

    def cancel(self) -> None:
        """The pair timed out: refuse every later request and cut the exchanges in flight."""
        self.cancelled.set()
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            watch.fire("the pair timed out")

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.cancelled.is_set():
            raise httpx.TimeoutException("the pair timed out", request=request)
        what = f"{request.method} {request.url.path}"
        watch = _Watch(self, what)
        request.extensions["trace"] = watch.trace
        if self.deadline is not None:
            request.extensions["timeout"] = dict.fromkeys(("connect", "read", "write", "pool"), self.deadline)
        with self._lock:
            self._watches.add(watch)
        if self.cancelled.is_set():  # cancelled between the check above and the registration
            watch.fire("the pair timed out")
        try:
            response = self.inner.handle_request(request)
        except httpx.HTTPError as exc:
            watch.end()
            raise watch.why(exc) from exc
        except BaseException:
            watch.end()
            raise
        if watch.end_at is not None:  # httpcore reads the body's read timeout when it starts: what is left
            left = max(watch.end_at - time.monotonic(), 0.01)
            request.extensions["timeout"] = {**request.extensions["timeout"], "read": left}
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Watched(response.stream, watch),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self.inner.close()


class _Watch:
    """One exchange of a ``Fence``: its sockets, and the watchdog that shuts them down at the
    exchange's deadline or when the pair is cancelled (``fire``)."""

    def __init__(self, fence: Fence, what: str) -> None:
        self.fence, self.what = fence, what
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.fired: str | None = None
        """Why the exchange was cut (its deadline passed, or the pair timed out), once it was."""
        self.ended = False
        self.end_at = None if fence.deadline is None else time.monotonic() + fence.deadline
        self.timer: threading.Timer | None = None
        if fence.deadline is not None:
            self.timer = threading.Timer(fence.deadline, self.fire, args=("deadline",))
            self.timer.daemon = True
            self.timer.start()

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's ``trace`` extension: keep the socket of each connection the exchange opens."""
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self.lock:
            if self.fired is None and not self.ended:
                self.sockets.append(sock)
                return
        _shut(sock)

    def fire(self, reason: str) -> None:
        with self.lock:
            if self.fired is not None or self.ended:
                return
            self.fired = reason
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)

    def past(self) -> bool:
        """Whether the exchange's deadline has passed."""
        return self.end_at is not None and time.monotonic() > self.end_at

    def why(self, exc: BaseException) -> BaseException:
        """What to raise for ``exc``, an httpx error of this exchange: the pair's timeout or the
        deadline when either cut it, else ``exc`` itself."""
        if self.fence.cancelled.is_set():  # set before any watch fires "the pair timed out"
            return httpx.TimeoutException("the pair timed out", request=getattr(exc, "_request", None))
        if self.fired is not None or isinstance(exc, httpx.TimeoutException):
            return self.fence.overrun(self.what)
        return exc

    def end(self) -> None:
        with self.lock:
            self.ended = True
            self.sockets.clear()
        if self.timer is not None:
            self.timer.cancel()
        with self.fence._lock:
            self.fence._watches.discard(self)


class _Watched(httpx.SyncByteStream):
    """A response body of a ``Fence`` exchange: it stops at the first piece past the deadline or
    after the pair was cancelled, and ends its exchange's watch when closed."""

    def __init__(self, inner: httpx.SyncByteStream, watch: _Watch) -> None:
        self.inner, self.watch = inner, watch

    def __iter__(self) -> Iterator[bytes]:
        try:
            for piece in self.inner:
                if self.watch.fence.cancelled.is_set():
                    raise httpx.TimeoutException("the pair timed out")
                yield piece
                if self.watch.past():
                    raise self.watch.fence.overrun(self.watch.what)
        except httpx.HTTPError as exc:
            why = self.watch.why(exc)
            if why is exc:
                raise
            raise why from exc

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.watch.end()


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways: a read blocked on it in another thread returns at once."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _timed(
    adapter: Adapter,
    scenario: Scenario,
    timeout: float | None,
    *,
    set_script: Callable[[Scenario | None], None] | None,
    options: _Options,
) -> PairResult:
    """``_record_one`` in a daemon thread, given ``timeout`` seconds; the emulator script is set
    and cleared here, in the caller's thread, so a late pair never clears the next one's."""
    fence = Fence(options.exchange_timeout)
    outcome: list[PairResult] = []

    def work() -> None:
        try:
            outcome.append(_record_one(adapter, scenario, options, fence))
        except BaseException as exc:  # an adapter that raises anything costs this pair only
            outcome.append(_failed(adapter, scenario, f"{type(exc).__name__}: {exc}"))

    if set_script is not None:
        set_script(scenario)
    try:
        thread = threading.Thread(target=work, name=f"record {adapter.name} {scenario.id}", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            fence.cancel()  # its exchange in flight is cut: nothing keeps downloading for it
            return _failed(
                adapter, scenario, f"timed out after {timeout:g} s (raise it with --timeout); nothing was written"
            )
    finally:
        if set_script is not None:
            set_script(None)
    return outcome[0]


def _failed(adapter: Adapter, scenario: Scenario, detail: str) -> PairResult:
    return PairResult(adapter=adapter.name, scenario=scenario.id, status="failed", detail=detail)


def _record_one(adapter: Adapter, scenario: Scenario, options: _Options, fence: Fence) -> PairResult:
    excluded = scenario.wire_excluded(adapter.name, adapter.wire_format)
    if excluded is not None:
        return PairResult(adapter=adapter.name, scenario=scenario.id, status="unsupported", detail=excluded)
    missing = sorted(scenario.requires - adapter.capabilities)
    if missing:
        return PairResult(
            adapter=adapter.name, scenario=scenario.id, status="unsupported", detail="requires " + ", ".join(missing)
        )
    if scenario.mcp is None:
        return _record_pair(adapter, scenario, None, options, fence)
    try:  # one MCP server for the pair, stopped after it
        with open_scenario_tools(scenario) as (ready, executor):
            return _record_pair(adapter, ready, executor, options, fence)
    except (McpServerError, ScenarioError) as exc:
        return _failed(adapter, scenario, f"MCP tools: {exc}")


class _PairFailed(ConformanceError):
    """Why a pair's traffic is not written (its message is the pair's detail)."""


def _record_pair(
    adapter: Adapter,
    scenario: Scenario,
    executor: McpExecutor | None,
    options: _Options,
    fence: Fence,
) -> PairResult:
    live = options.mode == "live"
    chosen_model = options.model or DEFAULT_MODELS.get(adapter.wire_format, "model")
    sent_adapter, sent_scenario = (
        with_sampling(adapter, scenario, options.sampling) if options.sampling is not None else (adapter, scenario)
    )
    outcomes: list[ConversationOutcome] = []
    try:
        with Transport(
            options.base_url,
            wire=adapter.wire_format,
            api_key=options.api_key,
            timeout=options.exchange_timeout or DEFAULT_TIMEOUT,
            backend=fence,
            max_body=options.max_body,
        ) as transport:
            for run_mode in scenario.modes:
                outcomes.append(
                    run_conversation(
                        sent_scenario, sent_adapter, transport, mode=run_mode, model=chosen_model, executor=executor
                    )
                )
                if executor is not None and executor.failure is not None:
                    raise executor.failure  # the MCP server died: nothing is written
                if fence.overran is not None or transport.too_large is not None:
                    break  # the pair fails: the next mode would wait or download as long again
            exchanges = list(transport.exchanges)
        if fence.cancelled.is_set():  # timed out while this ran: the caller has moved on, nothing is written
            raise TransportTimeoutError(f"{adapter.name} {scenario.id}: the pair timed out")
        secrets = [options.api_key] if options.api_key else []
        scrubber = Scrubber([*secrets, *_sent_secrets(exchanges)])  # the one write_cassette scrubs the traffic with
        problem = _failure(scenario, outcomes, exchanges, live=live, fence=fence, too_large=transport.too_large)
        if problem is not None:
            raise _PairFailed(scrubber.text(f"{problem}; nothing was written"))
        found = deviations(scenario, outcomes, clean=scrubber.text) if live else []
        if found and not options.allow_deviation:
            return PairResult(
                adapter=adapter.name,
                scenario=scenario.id,
                status="deviated",
                detail=_joined(found) + " (nothing was written; --allow-deviation records it anyway)",
            )
        expected = scrubber.json(decodings(outcomes)) if live else None
        import json

        from conformance.errors import CassetteWriteError
        from conformance.traffic.cassettes import Cassette
        from conformance.traffic.replay import ReplayBackend

        def decodes_as_expected(cassette: Cassette) -> None:
            """The new cassette, replayed through the recording adapter, decodes what ``expected`` says:
            a secret redacted in a stream's deltas is redacted alike in the decoding (else not written)."""
            with Transport("http://127.0.0.1", wire=adapter.wire_format, backend=ReplayBackend(cassette)) as again:
                replayed = [
                    run_conversation(
                        sent_scenario, sent_adapter, again, mode=o.mode, model=chosen_model, executor=executor
                    )
                    for o in outcomes
                ]
            got, want = (json.loads(json.dumps(v, default=repr)) for v in (decodings(replayed), expected))
            for mode in want:
                seen_turns = [*got.get(mode, []), *[None] * len(want[mode])][: max(len(want[mode]), 1)]
                for turn, (seen, recorded) in enumerate(zip(seen_turns, want[mode], strict=False)):
                    if seen != recorded:
                        raise CassetteWriteError(
                            f"turn {turn} ({mode.replace('_', '-')}): the answer holds a secret that cannot be "
                            "redacted without changing what the adapter decodes from it (replayed: "
                            f"{scrubber.text(json.dumps(seen))[:200]}; recorded: "
                            f"{scrubber.text(json.dumps(recorded))[:200]}); nothing was written"
                        )

        result: RecordResult = write_cassette(
            cassette_path(options.cassette_dir, adapter.traffic_format, scenario.id),
            exchanges,
            adapter=adapter.wire_format,
            base_url=options.base_url,
            provenance=Provenance(
                mode="live" if live else "emulator",
                model=chosen_model,
                scenario=scenario.id,
                scenario_sha256=scenario.fingerprint or None,
                model_default=live and options.model is None,
                served_model=served_model(exchanges) if live else None,
                sampling=options.sampling.as_provenance() if options.sampling is not None else None,
                expected=expected,
                extra=options.notes,
            ),
            secrets=secrets,
            check=decodes_as_expected if live else None,
        )
    except ConformanceError as exc:
        return _failed(adapter, scenario, str(exc))
    except Exception as exc:  # an adapter that raises costs this pair only
        return _failed(adapter, scenario, f"{type(exc).__name__}: {exc}")
    notes = [f"{result.interactions} interactions"]
    notes += [f"{o.mode}: {o.stopped}" for o in outcomes if o.stopped and not found]
    if found and result.status == "unchanged":  # recorded before with --allow-deviation: nothing new to say
        return PairResult(
            adapter=adapter.name,
            scenario=scenario.id,
            status="unchanged",
            detail=f"the model still deviates, as recorded: {_joined(found)}",
        )
    if found:
        return PairResult(
            adapter=adapter.name,
            scenario=scenario.id,
            status="deviated",
            detail=f"{_joined(found)} (recorded anyway: --allow-deviation)",
            written=True,
        )
    status = "recorded" if result.status == "written" else "unchanged"
    return PairResult(
        adapter=adapter.name,
        scenario=scenario.id,
        status=status,
        detail="; ".join(notes),
        written=status == "recorded",
    )


def _joined(found: Sequence[str], most: int = 3) -> str:
    shown = "; ".join(found[:most])
    return shown + (f"; and {len(found) - most} more" if len(found) > most else "")


def _failure(
    scenario: Scenario,
    outcomes: Sequence[ConversationOutcome],
    exchanges: Sequence[Exchange],
    *,
    live: bool,
    fence: Fence,
    too_large: str | None,
) -> str | None:
    """Why the pair's traffic must not be written, or None: an exchange past its deadline or without
    a response; live also a broken stream or a provider error the scenario does not expect."""
    if fence.overran is not None:
        return f"deadline: {fence.overran} (raise it with --exchange-timeout)"
    if too_large is not None:  # the body the transport cut at --max-body
        return f"{too_large} (raise it with --max-body)"
    for exchange in exchanges:
        if exchange.status is None:
            return f"{exchange.method} {httpx.URL(exchange.url).path}: no response ({exchange.error or 'none'})"
    if not live:
        return None
    for exchange in exchanges:
        if exchange.error is not None:
            return f"{exchange.method} {httpx.URL(exchange.url).path}: the stream broke ({exchange.error})"
    for outcome in outcomes:
        for turn in outcome.turns:
            if turn.error is not None and scenario.turns[turn.turn].expect.error is None:
                where = f"turn {turn.turn} ({outcome.mode.replace('_', '-')})"
                status = f" (HTTP {turn.status})" if turn.status else ""
                return f"{where}: provider error {turn.error.kind}{status}: {turn.error.message}"
    return None
