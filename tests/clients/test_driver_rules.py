"""Drivers do what a user does (docs/clients.md, "Drivers do what a user does").

Every driver in ``examples/clients/`` is read as a syntax tree (never as text) and refused when it
repairs, unwraps or second-guesses the library it certifies: a driver that reads the cause inside a
library's exception, retries, or swallows the library's exception and answers for it would show the
suite a better library than its users meet. The rules, each with what to write instead:

- no attribute holding a wrapped exception (``__cause__``, ``__context__``, ``original_exception``, ...),
  read directly or through ``getattr``/``hasattr``;
- no ``traceback`` module, ``sys.exc_info()``/``sys.exception()`` or ``inspect.trace()``;
- no retries: no ``max_retries``/``num_retries``/``retries`` but 0, no ``attempts`` but 1, no retry
  library (tenacity, backoff, ...), no loop that goes round again after catching an exception from
  anything but its own parsing of a value;
- an ``except`` handler ends in a bare ``raise`` (clean up, then let the library's exception out), unless
  its ``try`` only parses a value (``float``, ``json.loads``, ...); and it never calls again what its
  ``try`` called.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "examples" / "clients"

WRAPPED = frozenset(
    {
        "__cause__",
        "__context__",
        "__traceback__",
        "__suppress_context__",
        "original_exception",
        "original_error",
        "inner_exception",
        "orig",
        "cause",
    }
)
"""Attributes that hold another exception than the one the library raised to its caller (``orig`` is
SQLAlchemy's, ``original_exception`` LiteLLM's) or where it was raised."""

RETRY_LIBRARIES = frozenset({"tenacity", "backoff", "retrying", "stamina", "retry"})
RETRY_COUNTS = frozenset({"max_retries", "num_retries", "retries", "max_attempts"})
"""Keywords that count retries: only 0 is allowed."""
PARSERS = frozenset({"float", "int", "loads", "parsedate_to_datetime", "now", "max", "total_seconds", "b64decode"})
"""What a ``try`` may call when its handler answers instead of re-raising: the driver's own parsing of a
value (``retry-after``, argument text), never a call into the library."""


def _callee(call: ast.Call) -> str:
    """The last name of what ``call`` calls (``client.messages.create`` -> ``create``)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _walk_same_scope(nodes: list[ast.stmt]) -> list[ast.AST]:
    """Every node under ``nodes`` but inside nested functions, lambdas and classes."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.append(child)
    return out


def _calls(nodes: list[ast.stmt]) -> set[str]:
    return {_callee(n) for n in _walk_same_scope(nodes) if isinstance(n, ast.Call)} - {""}


def _reraises(handler: ast.ExceptHandler) -> bool:
    last = handler.body[-1]
    return isinstance(last, ast.Raise) and last.exc is None


def _leaves(handler: ast.ExceptHandler) -> bool:
    """Does the handler leave the loop it is in (raise, return or break as its last statement)?"""
    return isinstance(handler.body[-1], ast.Raise | ast.Return | ast.Break)


def _only_parses(body: list[ast.stmt]) -> bool:
    nodes = _walk_same_scope(body)
    if any(isinstance(n, ast.Await | ast.Yield | ast.YieldFrom | ast.For | ast.AsyncFor | ast.While) for n in nodes):
        return False
    return _calls(body) <= PARSERS


def _int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def driver_problems(source: str, name: str) -> list[str]:
    """What in the driver ``source`` repairs, unwraps or second-guesses its library: ``name:line: ...``."""
    tree = ast.parse(source, filename=name)
    problems: list[str] = []

    def say(node: ast.AST, message: str) -> None:
        problems.append(f"{name}:{getattr(node, 'lineno', 0)}: {message}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in WRAPPED:
            say(
                node,
                f"reads .{node.attr}, an exception inside or behind the one the library raised: map the raised"
                " exception by its public class in error_info (a user catching it never sees the one inside)",
            )
        elif isinstance(node, ast.Call):
            callee = _callee(node)
            dotted = _dotted(node.func)
            if (
                callee in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in WRAPPED
            ):
                say(
                    node,
                    f"{callee}(..., {node.args[1].value!r}) reads an exception inside or behind the one the"
                    " library raised: map the raised exception by its public class in error_info",
                )
            if dotted in ("sys.exc_info", "sys.exception", "inspect.trace"):
                say(node, f"{dotted}() reads the exception being handled: error_info gets the exception to map")
            for keyword in node.keywords:
                value = _int(keyword.value)
                if keyword.arg in RETRY_COUNTS and value != 0:
                    say(
                        keyword.value,
                        f"{keyword.arg}={ast.unparse(keyword.value)}: turn the library's retries off"
                        f" ({keyword.arg}=0); the suite counts the requests of each turn",
                    )
                if keyword.arg == "attempts" and value != 1:
                    say(
                        keyword.value,
                        f"attempts={ast.unparse(keyword.value)}: turn the library's retries off (attempts=1)",
                    )
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                top = module.split(".")[0]
                if top == "traceback":
                    say(node, "imports traceback: a driver maps the exception it is given, not where it came from")
                if top in RETRY_LIBRARIES:
                    say(node, f"imports {top}, a retry library: a driver calls the library once per turn")
        elif isinstance(node, ast.Try | ast.TryStar):
            tried = _calls(node.body)
            for handler in node.handlers:
                again = sorted(tried & _calls(handler.body))
                if again:
                    say(
                        handler,
                        f"the except handler calls {', '.join(again)} again, as its try did: let the library's"
                        " exception out (a retry or a fallback hides what the library did)",
                    )
                if not _reraises(handler) and not _only_parses(node.body):
                    say(
                        handler,
                        "the except handler does not end in a bare raise: clean up if needed, then let the"
                        " library's exception out (error_info maps it)",
                    )
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            for inner in _walk_same_scope(node.body):
                if isinstance(inner, ast.Try | ast.TryStar) and not _only_parses(inner.body):
                    for handler in inner.handlers:
                        if not _leaves(handler):
                            say(
                                handler,
                                "a loop goes round again after catching an exception (a retry loop): call the"
                                " library once and let its exception out",
                            )
    return sorted(problems, key=lambda p: int(p.split(":")[1]))


DRIVERS = sorted(CLIENTS.glob("*.py"))


def test_the_drivers_are_found() -> None:
    stems = {p.stem for p in DRIVERS}
    assert {"_convert", "openai_driver", "anthropic_driver", "litellm_driver", "minimal_openai_driver"} <= stems


@pytest.mark.parametrize("path", DRIVERS, ids=lambda p: p.name)
def test_every_driver_does_what_a_user_does(path: Path) -> None:
    assert driver_problems(path.read_text(encoding="utf-8"), path.name) == []


UNWRAPS = """
import litellm
from litellm.exceptions import MidStreamFallbackError

def error_info(exc):
    if isinstance(exc, MidStreamFallbackError):  # what the LiteLLM driver did before issue 24
        return error_info(exc.original_exception)
    return None
"""


def test_a_driver_that_unwraps_an_exception_is_refused() -> None:
    [problem] = driver_problems(UNWRAPS, "bad_driver.py")
    assert problem.startswith("bad_driver.py:7: reads .original_exception")
    assert "map the raised exception by its public class" in problem


BAD = {
    "cause": ("def error_info(exc):\n    return exc.__cause__\n", ["reads .__cause__"]),
    "context through getattr": (
        "def error_info(exc):\n    return getattr(exc, '__context__', None)\n",
        ["getattr(..., '__context__')"],
    ),
    "traceback": ("import traceback\n", ["imports traceback"]),
    "exc_info": ("import sys\n\ndef error_info(exc):\n    return sys.exc_info()\n", ["sys.exc_info()"]),
    "retries on": ("import openai\nclient = openai.OpenAI(max_retries=2)\n", ["max_retries=2"]),
    "retry count from a variable": ("def send(n):\n    return litellm.completion(num_retries=n)\n", ["num_retries=n"]),
    "attempts": ("options = HttpRetryOptions(attempts=3)\n", ["attempts=3"]),
    "retry library": ("from tenacity import retry\n", ["imports tenacity"]),
    "retry loop": (
        "def complete(client, call):\n"
        "    for _ in range(3):\n"
        "        try:\n"
        "            return client.chat(call)\n"
        "        except ollama.ResponseError:\n"
        "            continue\n",
        ["does not end in a bare raise", "a retry loop"],
    ),
    "calls again": (
        "def complete(client, call):\n"
        "    try:\n"
        "        return client.chat(call)\n"
        "    except openai.RateLimitError:\n"
        "        return client.chat(call)\n",
        ["calls chat again", "does not end in a bare raise"],
    ),
    "swallows": (
        "async def complete(client, call):\n"
        "    try:\n"
        "        return await client.messages.create(**call)\n"
        "    except anthropic.APIStatusError:\n"
        "        return Response(finish_reason='error')\n",
        ["does not end in a bare raise"],
    ),
    "parses what the library gave, then answers": (
        "def arguments(stream):\n"
        "    try:\n"
        "        return json.loads(stream.read())\n"
        "    except ValueError:\n"
        "        return {}\n",
        ["does not end in a bare raise"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_code_that_repairs_the_library_is_refused(case: str) -> None:
    source, expected = BAD[case]
    problems = driver_problems(source, "bad.py")
    assert len(problems) == len(expected), problems
    for words in expected:
        assert any(words in problem for problem in problems), (words, problems)


GOOD = {
    "clean up, then re-raise": (
        "def finish_call(client, send):\n"
        "    try:\n"
        "        answer = send(client)\n"
        "    except BaseException:\n"
        "        client.close()\n"
        "        raise\n"
        "    return answer\n"
    ),
    "parse a header value": (
        "def seconds(value):\n    try:\n        return float(value)\n    except ValueError:\n        return None\n"
    ),
    "parse in a loop that the handler leaves": (
        "def delay(items):\n"
        "    for item in items:\n"
        "        try:\n"
        "            return float(item[:-1])\n"
        "        except ValueError:\n"
        "            return None\n"
    ),
    "retries off": "client = openai.OpenAI(max_retries=0)\noptions = HttpRetryOptions(attempts=1)\n",
    "a cause of our own": "class Failure(Exception):\n    pass\n\n\ndef fail():\n    raise Failure('x') from None\n",
}


@pytest.mark.parametrize("case", sorted(GOOD))
def test_what_a_user_writes_passes(case: str) -> None:
    assert driver_problems(GOOD[case], "good.py") == []
