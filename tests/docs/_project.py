"""What the tests of docs/*.md share: the fenced blocks of a doc and the commands in them, a user's
project as the docs assume one (the names they use: ``my_pkg``, ``my_framework``, ``drivers/``, the
library ``mylib``), and this checkout's ``conformance`` run from a folder outside it.

The docs name a user's code by placeholders. Each placeholder the docs run is a file here, as small as
it can be while doing what the doc says of it:

- ``my_framework.adapters`` (docs/adapters.md): ``OPENAI_CHAT`` and ``ANTHROPIC``, the bundled adapters
  under the framework's names;
- ``my_pkg.adapters:MY_ADAPTER`` (docs/ci.md): an adapter with one known defect (it drops the text
  before a tool call, the defect of docs/ci.md's baseline example), so a baseline has something to hold;
- ``my_pkg.drivers:CLIENT`` (docs/clients.md): the worked example's driver of the official openai SDK;
- ``mylib`` 1.2.3 and ``drivers/mylib_driver.py`` (docs/ci.md, "Certifying a client library"): a
  library of no dependency (urllib) speaking OpenAI Chat and Anthropic, installed into its own virtualenv
  from its folder (no index has it), and its driver, which follows docs/clients.md's driver rules.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from tests._venvs import venv_with_suite_dependencies

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
OTHERS = frozenset({"testing.md", "selftest.md", "architecture.md", "pytest.md", "commands.md"})
"""Docs written and tested by other owners (their own files under tests/docs/, e.g. commands.md's
test_commands_doc.py): not swept here."""
MY_DOCS = tuple(sorted(p.name for p in DOCS.glob("*.md") if p.name not in OTHERS))

FENCE = re.compile(r"^(?P<indent> *)```(?P<language>\w*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
PROGRAMS = frozenset({"conformance", "python", "pytest", "pip", "git", "export", "sed", "$EDITOR"})
"""First words of a command line in a shell block (a line starting otherwise is output)."""


@dataclass(frozen=True)
class Block:
    """A fenced block of a doc."""

    doc: str
    """The doc's file name (``clients.md``)."""
    line: int
    """The line of its opening fence."""
    language: str
    text: str
    """Its body, dedented as far as its fence is indented (a block inside a list item)."""


def blocks(doc: str) -> list[Block]:
    markdown = (DOCS / doc).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(markdown):
        indent = len(match["indent"])
        body = "".join(line[indent:] for line in match["body"].splitlines(keepends=True))
        found.append(Block(doc, markdown.count("\n", 0, match.start()) + 1, match["language"], body))
    return found


def without_comment(line: str) -> tuple[str, str]:
    """``line`` cut at its shell comment (a ``#`` after a blank, outside quotes): (command, comment)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


@dataclass(frozen=True)
class Command:
    """A command line of a shell block, continuation lines joined."""

    text: str
    """As written, without its comment."""
    comment: str
    output: tuple[str, ...] = ()
    """For a console block (``$ command`` then what it prints): the lines shown under it."""


def commands(block: Block) -> list[Command]:
    """The command lines of a shell block (``sh``, ``console`` or no language); [] for other blocks."""
    if block.language not in ("", "sh", "shell", "bash", "console"):
        return []
    lines = block.text.splitlines()
    if any(line.startswith("$ ") for line in lines):  # a console session: commands, then what they print
        found: list[Command] = []
        for line in lines:
            if line.startswith("$ "):
                text, comment = without_comment(line[2:])
                found.append(Command(text, comment))
            elif found:
                last = found[-1]
                found[-1] = Command(last.text, last.comment, (*last.output, line))
        return found
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
        else:
            joined.append(line)
    found = []
    for line in joined:
        words = line.split()
        if len(words) >= 2 and words[0] in PROGRAMS and not words[1].endswith(":"):
            text, comment = without_comment(line)
            found.append(Command(text, comment))
    return found


# --------------------------------------------------------------------------------------------
# A user's project
# --------------------------------------------------------------------------------------------

MY_FRAMEWORK = """
\"\"\"A framework's adapters (docs/adapters.md): the bundled ones under the framework's names.\"\"\"

import dataclasses

from conformance.adapters import get_adapter

OPENAI_CHAT = dataclasses.replace(get_adapter("openai_chat"), name="my_openai_chat")
ANTHROPIC = dataclasses.replace(get_adapter("anthropic"), name="my_anthropic")
"""

MY_PKG_ADAPTERS = """
\"\"\"my_pkg's adapter (docs/ci.md): OpenAI Chat, with one defect: it drops the text before a tool call.\"\"\"

import dataclasses

from conformance.adapters import get_adapter
from conformance.model import Text

_CHAT = get_adapter("openai_chat")


def _drop_text_before_calls(response):
    if response.tool_calls:
        response = dataclasses.replace(response, parts=tuple(p for p in response.parts if not isinstance(p, Text)))
    return response


def response_from_wire(body, /, *, tools=()):
    return _drop_text_before_calls(_CHAT.response_from_wire(body, tools=tools))


MY_ADAPTER = dataclasses.replace(_CHAT, name="my_adapter", response_from_wire=response_from_wire)
"""

MY_PKG_PYPROJECT = """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "my-pkg"
version = "0.1.0"

[tool.setuptools]
packages = ["my_pkg", "my_framework"]
"""

MYLIB = '''
"""mylib: a client of OpenAI Chat Completions and Anthropic Messages over urllib (no dependency)."""

import json
import urllib.error
import urllib.request

__version__ = "1.2.3"

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for a local server


class APIError(Exception):
    """The API answered with an error status: ``status``, and ``retry_after`` seconds when it said."""

    def __init__(self, status, message, retry_after=None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def _post(url, body, headers, timeout):
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json", **headers}, method="POST"
    )
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        after = exc.headers.get("retry-after")
        raise APIError(exc.code, exc.read().decode("utf-8", "replace"), float(after) if after else None) from None


def chat(base_url, api_key, body, *, timeout=30.0):
    """OpenAI's ``POST /v1/chat/completions``."""
    return _post(f"{base_url}/v1/chat/completions", body, {"authorization": f"Bearer {api_key}"}, timeout)


def messages(base_url, api_key, body, *, timeout=30.0):
    """Anthropic's ``POST /v1/messages``."""
    headers = {"x-api-key": api_key, "anthropic-version": "2023-06-01"}
    return _post(f"{base_url}/v1/messages", body, headers, timeout)
'''

MYLIB_PYPROJECT = """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "mylib"
version = "1.2.3"

[tool.setuptools]
packages = ["mylib"]
"""

MYLIB_DRIVER = '''
"""The driver of mylib (docs/ci.md): one library call per turn, the values converted by hand."""

import json

import mylib
from conformance.clients import Call, SimpleClient
from conformance.model import ErrorInfo, Response, Text, ToolCall, ToolResult

CAPABILITIES = frozenset({"call_ids", "parallel_tool_calls", "system_prompt"})


def _text(parts):
    return "".join(p.text for p in parts if isinstance(p, Text))


def _arguments(text):
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, str(exc)


def _call(id, name, text):
    arguments, error = _arguments(text)
    return ToolCall(id=id, name=name, arguments=arguments, arguments_raw=text, arguments_error=error)


def _chat(call):
    messages = [{"role": "system", "content": call.system}] if call.system else []
    for message in call.messages:
        calls = [p for p in message.parts if isinstance(p, ToolCall)]
        if message.role == "tool":
            for r in message.parts:
                messages.append({"role": "tool", "tool_call_id": r.call_id, "content": _text(r.content)})
        elif calls:
            tool_calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_raw}}
                for c in calls
            ]
            messages.append({"role": "assistant", "content": _text(message.parts) or None, "tool_calls": tool_calls})
        else:
            messages.append({"role": message.role, "content": _text(message.parts)})
    body = {"model": call.model, "messages": messages}
    if call.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description or "",
                                              "parameters": dict(t.input_schema)}}
            for t in call.tools
        ]
    answer = mylib.chat(call.base_url, call.api_key, body, timeout=call.timeout)
    choice = answer["choices"][0]
    said = choice["message"]
    parts = [Text(text=said["content"])] if said.get("content") else []
    parts += [_call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in said.get("tool_calls") or []]
    finish = {"stop": "stop", "tool_calls": "tool_calls", "length": "length"}.get(choice["finish_reason"], "other")
    return Response(parts=tuple(parts), finish_reason=finish)


def _block(part):
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments or {}}
    if isinstance(part, ToolResult):
        result = {"type": "tool_result", "tool_use_id": part.call_id, "content": _text(part.content)}
        return {**result, "is_error": True} if part.is_error else result
    raise ValueError(f"mylib's driver cannot send a {part.kind}")


def _messages(call):
    body = {"model": call.model, "max_tokens": call.max_tokens or 1024}
    if call.system:
        body["system"] = call.system
    body["messages"] = [
        {"role": "user" if m.role == "tool" else m.role, "content": [_block(p) for p in m.parts]} for m in call.messages
    ]
    if call.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description or "", "input_schema": dict(t.input_schema)}
            for t in call.tools
        ]
    answer = mylib.messages(call.base_url, call.api_key, body, timeout=call.timeout)
    parts = []
    for block in answer["content"]:
        if block["type"] == "text":
            parts.append(Text(text=block["text"]))
        elif block["type"] == "tool_use":
            parts.append(_call(block["id"], block["name"], json.dumps(block["input"])))
    finish = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}.get(answer["stop_reason"], "other")
    return Response(parts=tuple(parts), finish_reason=finish)


def complete(call: Call) -> Response:
    return _chat(call) if call.wire == "openai_chat" else _messages(call)


KINDS = {400: "invalid_request", 401: "auth", 429: "rate_limit", 500: "server", 503: "overloaded", 529: "overloaded"}


def error_info(exc):
    if isinstance(exc, mylib.APIError):
        kind = KINDS.get(exc.status, "unknown")
        return ErrorInfo(kind=kind, message=str(exc), status=exc.status, retry_after=exc.retry_after)
    return None


CLIENT = SimpleClient(
    name="mylib",
    wires={"openai_chat": CAPABILITIES, "anthropic": CAPABILITIES},
    complete=complete,
    error_info=error_info,
    duties=frozenset({"transport"}),
)
'''

FILL_REASONS = r"""
import pathlib, re, sys

path = pathlib.Path(sys.argv[1])
path.write_text(re.sub(r"reason: (''|\"\")", 'reason: "MY-1: accepted until it is fixed"', path.read_text()))
"""
"""``$EDITOR conformance-baseline.yaml``: the reader gives every entry a reason."""


def write_project(root: Path) -> Path:
    """A user's project in ``root`` (a git repository: docs/ci.md adds its baseline), with the
    checkout's ``examples/`` beside it for the commands that name them; ``root``."""
    files = {
        "pyproject.toml": MY_PKG_PYPROJECT,
        "my_pkg/__init__.py": "",
        "my_pkg/adapters.py": MY_PKG_ADAPTERS,
        "my_pkg/drivers.py": (REPO / "examples" / "clients" / "minimal_openai_driver.py").read_text(encoding="utf-8"),
        "my_framework/__init__.py": "",
        "my_framework/adapters.py": MY_FRAMEWORK,
        "drivers/mylib_driver.py": MYLIB_DRIVER,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (root / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    return root


def write_mylib(folder: Path) -> Path:
    """mylib 1.2.3's source folder, which pip installs (docs/ci.md's ``mylib==1.2.3``); ``folder``."""
    (folder / "mylib").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(textwrap.dedent(MYLIB_PYPROJECT).lstrip(), encoding="utf-8")
    (folder / "mylib" / "__init__.py").write_text(textwrap.dedent(MYLIB).lstrip(), encoding="utf-8")
    return folder


def copy_suite(dest: Path) -> Path:
    """What a checkout of the suite holds that ``pip install`` builds from (the package, its scenarios,
    cassettes and table of equivalences, pyproject.toml, README.md): ``dest``. The rest of a checkout
    (tests, docs, scripts) is not read by the build."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("conformance", "scenarios", "cassettes"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    (dest / "docs").mkdir()
    shutil.copy2(REPO / "docs" / "equivalences.md", dest / "docs" / "equivalences.md")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    return dest


def launchers(bin_dir: Path) -> dict[str, str]:
    """A ``bin_dir`` whose ``conformance`` and ``python`` are this checkout's, whatever is installed, and
    an ``$EDITOR`` that gives every baseline entry a reason; the environment to run commands in."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    scripts = {
        "conformance": f'#!/bin/sh\nexec "{sys.executable}" -m conformance "$@"\n',
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "fill-reasons": f'#!/bin/sh\nexec "{sys.executable}" "{bin_dir / "fill_reasons.py"}" "$@"\n',
    }
    (bin_dir / "fill_reasons.py").write_text(textwrap.dedent(FILL_REASONS).lstrip(), encoding="utf-8")
    for name, text in scripts.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod((bin_dir / name).stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    return env | {
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "COLUMNS": "80",  # what a reader sees without a terminal (tests/conftest.py sets 1000 for the rest)
        "EDITOR": str(bin_dir / "fill-reasons"),
    }


def fresh_venv(folder: Path) -> Path:
    """A new virtualenv in ``folder`` that reads the suite's dependencies from the running environment,
    but not its ``conformance`` (``tests._venvs``); its ``bin`` folder."""
    return venv_with_suite_dependencies(folder).parent
