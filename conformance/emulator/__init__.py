"""The loopback provider emulator: a real HTTP/1.1 server on 127.0.0.1 that speaks the OpenAI
Chat, OpenAI Responses, Anthropic, Gemini and Ollama wire formats, plays a scenario's replies turn
by turn (faults included), and answers the same request with the same bytes every time.

``docs/emulator.md`` describes the paths, the fault table and the quirks of each wire::

    from conformance.emulator import Emulator, EmulatorScript
    with Emulator(port=0) as emu:
        emu.set_script(EmulatorScript(scenario_id="basic/get_time", replies=(Reply(...),)))
        ...  # send requests to emu.base_url

``serve_command`` is ``conformance emulator --port N [--scenario ID] [--scenarios-dir DIR]
[--max-requests N] [--max-log-bytes BYTES]`` (the bounds of the request log).
"""

from __future__ import annotations

from conformance.emulator._cassette import PlayedAnswer
from conformance.emulator._command import serve_command
from conformance.emulator._server import (
    DEFAULT_MAX_LOG_BYTES,
    DEFAULT_MAX_REQUESTS,
    DEFAULT_REPLY,
    ENCODERS,
    Emulator,
    EmulatorScript,
    ReceivedRequest,
)

__all__ = [
    "DEFAULT_MAX_LOG_BYTES",
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_REPLY",
    "ENCODERS",
    "Emulator",
    "EmulatorScript",
    "PlayedAnswer",
    "ReceivedRequest",
    "serve_command",
]
