"""Hostile input files for the limit tests (``conformance.limits``, issue 14), built small in each
test, and ``run_bounded``: a load run in a child process under a memory ceiling and a timeout, so
that a regression ends as a failed test (MemoryError, a kill, a crash or a timeout) instead of
taking the machine down. The bound is enforced by the child's limits, never by timing the test.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

__all__ = [
    "MEMORY_CEILING",
    "billion_laughs",
    "cassette_yaml",
    "deep_brackets",
    "dumps",
    "gzip_bomb",
    "ref_bomb",
    "run_bounded",
]

MEMORY_CEILING = 1024 * 1024 * 1024
"""Address space of the child (1 GiB): every bomb below needs more than this when expanded."""

ROOT = Path(__file__).resolve().parents[1]


def billion_laughs(levels: int = 9, width: int = 10, indent: str = "") -> str:
    """YAML anchors ``a0``..``a<levels>``, each a list of ``width`` aliases of the one before: a few
    hundred bytes standing for ``width**levels`` strings."""
    lines = [f'{indent}a0: &a0 "lololololol"']
    lines += [f"{indent}a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def cassette_yaml(response_body: str) -> str:
    """A one-interaction vcrpy cassette whose response body is the YAML text ``response_body``
    (indented under ``response:``)."""
    return (
        "version: 1\ninteractions:\n- request:\n    method: POST\n"
        "    uri: http://127.0.0.1/v1/chat/completions\n"
        '    body: {string: \'{"model": "m", "messages": []}\'}\n'
        "  response:\n    status: {code: 200, message: OK}\n"
        "    headers: {content-type: [application/json]}\n" + response_body
    )


def gzip_bomb(total: int, member: int = 1 << 20) -> bytes:
    """Gzip data inflating to ``total`` zero bytes: concatenated members (RFC 1952 §2.2) of
    ``member`` zeros each, so it is built in milliseconds."""
    one = gzip.compress(b"\0" * member, 9)
    return one * (total // member)


def deep_brackets(levels: int) -> str:
    """JSON text of ``levels`` nested lists."""
    return "[" * levels + "]" * levels


def ref_bomb(levels: int) -> dict[str, object]:
    """A JSON Schema of ``levels`` definitions, each with two ``$ref`` to the one before: 2**levels
    leaves once inlined."""
    defs: dict[str, object] = {"d0": {"type": "string"}}
    for i in range(1, levels + 1):
        ref = {"$ref": f"#/$defs/d{i - 1}"}
        defs[f"d{i}"] = {"type": "object", "properties": {"a": dict(ref), "b": dict(ref)}}
    return {"type": "object", "properties": {"x": {"$ref": f"#/$defs/d{levels}"}}, "$defs": defs}


def _ceiling() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))


def run_bounded(
    code: str, *, env: dict[str, str] | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` with this checkout first on the path, under ``MEMORY_CEILING`` and
    ``timeout`` seconds (``subprocess.TimeoutExpired`` past it). Returns the finished child."""
    child_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env,
        preexec_fn=_ceiling,
        check=False,
    )


def dumps(value: object) -> str:
    """JSON text of ``value`` (for embedding in the YAML the tests write)."""
    return json.dumps(value)
