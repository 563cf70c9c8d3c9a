"""The worked example of docs/clients.md: the official openai SDK's Chat Completions tool calling,
non-streamed, certified with ``conformance certify --client examples/clients/minimal_openai_driver.py:CLIENT``.

The full driver of the SDK (both OpenAI wires, streams as events) is ``openai_driver.py``.
"""

import json

import openai

from conformance.clients import Call, SimpleClient
from conformance.model import ErrorInfo, Response, Text, ToolCall


def to_openai(call: Call) -> list[dict]:
    messages = [{"role": "system", "content": call.system}] if call.system else []
    for m in call.messages:
        texts = "".join(p.text for p in m.parts if isinstance(p, Text))
        calls = [p for p in m.parts if isinstance(p, ToolCall)]
        if m.role == "tool":
            for r in m.parts:
                content = "".join(c.text for c in r.content if isinstance(c, Text))
                messages.append({"role": "tool", "tool_call_id": r.call_id, "content": content})
        elif calls:
            tool_calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_raw}}
                for c in calls
            ]
            messages.append({"role": "assistant", "content": texts or None, "tool_calls": tool_calls})
        else:
            messages.append({"role": m.role, "content": texts})
    return messages


def complete(call: Call) -> Response:
    # max_retries=0: the suite counts the requests of each turn; a hidden retry is a finding
    client = openai.OpenAI(base_url=call.base_url + "/v1", api_key=call.api_key, max_retries=0)
    tools = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description or "", "parameters": dict(t.input_schema)},
        }
        for t in call.tools
    ]
    extra = {"tools": tools} if tools else {}
    if call.tool_choice is not None and tools:
        extra["tool_choice"] = call.tool_choice
    if call.max_tokens is not None:
        extra["max_tokens"] = call.max_tokens
    completion = client.chat.completions.create(model=call.model, messages=to_openai(call), **extra)
    choice = completion.choices[0]
    parts: list = [Text(text=choice.message.content)] if choice.message.content else []
    for c in choice.message.tool_calls or []:
        try:
            arguments, error = json.loads(c.function.arguments or "{}"), None
        except ValueError as exc:
            arguments, error = None, str(exc)
        parts.append(
            ToolCall(
                id=c.id,
                name=c.function.name,
                arguments=arguments,
                arguments_raw=c.function.arguments,
                arguments_error=error,
            )
        )
    reason = {"tool_calls": "tool_calls", "stop": "stop", "length": "length"}.get(choice.finish_reason, "other")
    return Response(parts=tuple(parts), finish_reason=reason)


# The SDK's exception classes (its README, "Handling errors"), most specific first; the kind is what the
# class means, so a 503, which the SDK raises as InternalServerError, is "server".
KINDS = (
    (openai.RateLimitError, "rate_limit"),
    (openai.BadRequestError, "invalid_request"),
    (openai.AuthenticationError, "auth"),
    (openai.InternalServerError, "server"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    if isinstance(exc, openai.APIStatusError):
        kind = next((kind for cls, kind in KINDS if isinstance(exc, cls)), "unknown")
        after = exc.response.headers.get("retry-after")
        return ErrorInfo(
            kind=kind,
            message=exc.message,
            status=exc.status_code,
            retry_after=float(after) if after else None,
        )
    return None


CLIENT = SimpleClient(
    name="openai-sdk-chat",
    # no "streaming": the stream cases are UNSUPPORTED (examples/clients/openai_driver.py streams)
    wires={
        "openai_chat": frozenset(
            {
                "parallel_tool_calls",
                "tool_choice_auto",
                "tool_choice_none",
                "tool_choice_required",
                "system_prompt",
                "call_ids",
            }
        )
    },
    complete=complete,
    error_info=error_info,
    duties=frozenset({"transport"}),  # the SDK sends tool names and schemas as given
)
