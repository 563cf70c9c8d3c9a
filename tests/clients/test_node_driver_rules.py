"""Node drivers do what a user does (docs/clients.md, "Drivers do what a user does"), as the Python
drivers do (``test_driver_rules.py``).

Every driver in ``examples/clients/node/`` (but ``protocol.mjs``, the protocol's own code, which
reports whatever a driver throws) is read as code, its comments and string literals taken out
first, and refused when it repairs, unwraps or second-guesses the library it certifies:

- no property holding a wrapped error (``.cause``, ``originalError``, ``lastError``, ...), read
  directly or by name (``["cause"]``, ``"cause" in error``);
- no retries: a retry count (``maxRetries``, ``retries``) only as ``0``, ``attempts`` only as ``1``, no
  retry package (``p-retry``, ``async-retry``, ...), and a comment saying how retries are off;
- a ``catch`` either rethrows (``throw`` in its block: clean up, then let the library's error out) or
  closes a ``try`` that only parses a value (``JSON.parse``, ``Number``, ...), never one that calls
  the library.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "examples" / "clients" / "node"
DRIVERS = sorted(p for p in NODE.glob("*.mjs") if p.name != "protocol.mjs")
ENTRY_POINTS = [p for p in DRIVERS if not p.name.startswith("_")]

WRAPPED = ("cause", "originalError", "original_error", "lastError", "innerError", "errors")
"""Properties holding another error than the one the library threw to its caller (``lastError`` is the
AI SDK's ``RetryError``'s, ``errors`` an ``AggregateError``'s)."""

RETRY_PACKAGES = ("p-retry", "async-retry", "retry", "exponential-backoff", "promise-retry")
PARSERS = ("JSON.parse", "Number", "parseFloat", "parseInt", "Date.parse", "new URL", "atob", "Buffer.from")
"""What a ``try`` may do when its ``catch`` answers instead of rethrowing: the driver's own parsing of a
value (a ``retry-after``, argument text), never a call into the library."""


def code_of(source: str) -> str:
    """``source`` with its comments and string literals blanked (their length kept, so offsets hold):
    what the rules read. A template literal's text is blanked, its ``${...}`` code kept."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        two = source[i : i + 2]
        if two == "//":
            end = source.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif two == "/*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", source[i:end]))
            i = end
        elif source[i] in "'\"":
            quote, j = source[i], i + 1
            while j < n and source[j] != quote and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            out.append(source[i] + " " * (min(j, n) - i - 1) + (quote if j < n else ""))
            i = j + 1
        elif source[i] == "`":
            j = i + 1
            out.append("`")
            while j < n and source[j] != "`":
                if source[j] == "\\":
                    out.append("  ")
                    j += 2
                elif source[j : j + 2] == "${":
                    depth, k = 1, j + 2
                    while k < n and depth:
                        depth += {"{": 1, "}": -1}.get(source[k], 0)
                        k += 1
                    out.append(source[j:k])
                    j = k
                else:
                    out.append("\n" if source[j] == "\n" else " ")
                    j += 1
            out.append("`")
            i = j + 1
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


def _block(code: str, start: int) -> tuple[int, int]:
    """The ``{...}`` block whose ``{`` is the first one at or after ``start``: (open, close) offsets."""
    open_ = code.index("{", start)
    depth = 0
    for k in range(open_, len(code)):
        depth += {"{": 1, "}": -1}.get(code[k], 0)
        if depth == 0:
            return open_, k
    return open_, len(code)


def problems(source: str) -> list[str]:
    """What in ``source`` breaks the rules, each with its line and what to write instead."""
    code = code_of(source)

    def line(offset: int) -> int:
        return code.count("\n", 0, offset) + 1

    found: list[str] = []
    for name in WRAPPED:
        for m in re.finditer(rf"\.\s*{name}\b|\[\s*['\"]{name}['\"]\s*\]", source):
            if code[m.start()] != " ":  # not inside a comment or a string
                found.append(
                    f"line {line(m.start())}: reads `{name}`, an error wrapped inside the one the library threw:"
                    " map the error the library threw to its caller, by its public class"
                )
    for m in re.finditer(r"\b(maxRetries|retries|max_retries)\s*:\s*([^,}\s]+)", code):
        if m.group(2) != "0":
            found.append(f"line {line(m.start())}: {m.group(1)}: {m.group(2)}: turn retries off ({m.group(1)}: 0)")
    for m in re.finditer(r"\battempts\s*:\s*([^,}\s]+)", code):
        if m.group(1) != "1":
            found.append(f"line {line(m.start())}: attempts: {m.group(1)}: one attempt only (attempts: 1)")
    for package in RETRY_PACKAGES:
        if re.search(rf"from\s+['\"]{re.escape(package)}['\"]|require\(\s*['\"]{re.escape(package)}['\"]", source):
            found.append(f"imports {package}: a driver never retries; the library's own retries are turned off")
    for m in re.finditer(r"\bcatch\b\s*(\([^)]*\))?\s*\{", code):
        open_, close = _block(code, m.start())
        if re.search(r"\bthrow\b", code[open_:close]):
            continue
        try_at = code.rfind("try", 0, m.start())
        body = code[_block(code, try_at)[0] : m.start()] if try_at >= 0 else ""
        calls = re.findall(r"((?:new\s+)?[A-Za-z_$][\w$.]*)\s*\(", body)
        if not calls or any(not any(c == p or c.endswith("." + p) for p in PARSERS) for c in calls):
            found.append(
                f"line {line(m.start())}: a catch that answers instead of rethrowing, after a try that calls"
                f" {', '.join(sorted(set(calls))) or 'nothing'}: let the library's error out (clean up, then throw)"
            )
    return found


def test_the_drivers_are_found() -> None:
    names = {p.name for p in ENTRY_POINTS}
    for driver in ("openai.mjs", "anthropic.mjs", "google_genai.mjs", "ollama.mjs", "langchain_openai.mjs"):
        assert driver in names
    assert {"ai_sdk_openai.mjs", "ai_sdk_anthropic.mjs", "ai_sdk_google.mjs", "minimal_fetch.mjs"} <= names


@pytest.mark.parametrize("path", DRIVERS, ids=[p.name for p in DRIVERS])
def test_every_node_driver_does_what_a_user_does(path: Path) -> None:
    assert problems(path.read_text(encoding="utf-8")) == [], path.name


@pytest.mark.parametrize("path", ENTRY_POINTS, ids=[p.name for p in ENTRY_POINTS])
def test_every_node_driver_says_how_retries_are_off(path: Path) -> None:
    comments = " ".join(re.findall(r"//[^\n]*|/\*.*?\*/", path.read_text(encoding="utf-8"), re.S))
    assert re.search(r"retr(y|ies)", comments, re.I), f"{path.name}: say in a comment how retries are turned off"


@pytest.mark.parametrize(
    ("case", "rule"),
    [
        ("try { x = await client.create(req); } catch (e) { return errorInfo(e.cause); }", "cause"),
        ('if ("cause" in error) return null;\nconst c = error["cause"];', "cause"),
        ("const client = new OpenAI({ maxRetries: 2 });", "retries off"),
        ("const http = { retryOptions: { attempts: 3 } };", "one attempt"),
        ('import pRetry from "p-retry";', "never retries"),
        ("try { return await model.invoke(m); } catch (e) { return { parts: [] }; }", "rethrowing"),
        ("for (;;) { try { return await ai.generate(r); } catch (e) { await sleep(1); } }", "rethrowing"),
    ],
)
def test_code_that_repairs_the_library_is_refused(case: str, rule: str) -> None:
    found = problems(case)
    assert found and rule in " ".join(found), (case, found)


@pytest.mark.parametrize(
    "case",
    [
        "try { value = JSON.parse(raw); } catch (error) { return [null, `invalid JSON: ${error.message}`]; }",
        "try { stream = await client.create(req); } catch (e) { cleanup(); throw e; }",
        'const note = "read error.cause never"; // a comment may say .cause',
        "const client = new Anthropic({ maxRetries: 0 });",
        "const http = { retryOptions: { attempts: 1 } };",
        "try { seconds = Number.parseFloat(text); } catch { seconds = null; }",
    ],
)
def test_what_a_user_writes_passes(case: str) -> None:
    assert problems(case) == []
