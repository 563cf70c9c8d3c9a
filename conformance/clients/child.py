"""The driver side of ``conformance certify --python OTHER``: runs in the other interpreter.

``OTHER -m conformance.clients.child SPEC`` (the suite puts its own source on ``PYTHONPATH``; the
other interpreter needs nothing the suite pins) loads the driver ``SPEC`` (``pkg.module:OBJECT`` or
``path/to/driver.py:OBJECT``), says what it declares in one JSON line, then answers one JSON line
per call: the turn run by ``conformance.clients.invoke`` (the result, the events, or what the
library raised and ``error_info`` of it). Only the standard library and ``conformance.model`` are
imported here. The protocol's lines are written to the stdout it was given, moved to a descriptor
of its own; descriptor 1 then points at stderr, so that a driver's prints, a C library's writes and
a subprocess's output cannot break it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from conformance.clients.codec import from_json, to_json
from conformance.clients.contract import Call, Client, duties_to_json
from conformance.clients.invoke import EventLoop, invoke

__all__ = ["load_object", "main"]


def load_object(spec: str) -> Any:
    """The object ``pkg.module:NAME`` or ``path/to/file.py:NAME`` names (``ImportError``/
    ``AttributeError`` say why not). A file's folder goes on ``sys.path`` so its siblings import."""
    target, colon, attribute = spec.rpartition(":")
    if not colon or not target or not attribute:
        raise ImportError(f"{spec!r} is not MODULE:OBJECT or FILE.py:OBJECT")
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise ImportError(f"no driver file {path}")
        sys.path.insert(0, str(path.parent))
        name = f"conformance_driver_{path.stem}"
        loaded = importlib.util.spec_from_file_location(name, path)
        if loaded is None or loaded.loader is None:
            raise ImportError(f"cannot load {path} as a module")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    obj: Any = module
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = _protocol_stream()
    if len(args) != 1:
        _send(out, {"fatal": "usage: python -m conformance.clients.child MODULE:OBJECT"})
        return 2
    try:
        client: Client = load_object(args[0])
        hello = {
            "name": client.name,
            "wires": {wire: sorted(caps) for wire, caps in client.wires.items()},
            "known_gaps": dict(getattr(client, "known_gaps", {}) or {}),
            "schema_rewrites": dict(getattr(client, "schema_rewrites", {}) or {}),
            "request_differences": dict(getattr(client, "request_differences", {}) or {}),
            "duties": duties_to_json(getattr(client, "duties", None)),
            "python": sys.version.split()[0],
            "executable": sys.executable,
        }
    except BaseException as exc:  # any failure to load is reported to the suite, which exits 2
        _send(out, {"fatal": f"cannot load {args[0]} in {sys.executable}: {type(exc).__name__}: {exc}"})
        return 2
    _send(out, {"hello": hello})
    with EventLoop() as loop:
        for line in sys.stdin:
            if not line.strip():
                continue
            call = from_json(json.loads(line)["call"])
            if not isinstance(call, Call):
                _send(out, {"fatal": "the suite sent something that is not a Call"})
                return 2
            result = invoke(client, call, loop, timeout=call.timeout)
            _send(out, {"result": to_json(result)})
    return 0


def _protocol_stream() -> TextIO:
    """The protocol's own stream: file descriptor 1 as it was given, moved to a descriptor of its own;
    descriptor 1 (and ``sys.stdout``) then point at stderr, so that nothing else the process or its
    children write (a driver's print, a C library's write, an ``echo`` from a subprocess) can land
    between two protocol lines and corrupt every later verdict."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol, "w", encoding="utf-8", newline="\n")


def _send(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


if __name__ == "__main__":
    raise SystemExit(main())
