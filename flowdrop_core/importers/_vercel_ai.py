"""Vercel AI SDK messages: ``UIMessage`` lists (``useChat``) and model messages.

A ``UIMessage`` is ``{"id", "role", "parts": [...]}`` with parts ``text``,
``reasoning``, ``step-start``, ``tool-<name>`` / ``dynamic-tool``
(``toolCallId``, ``state``, ``input``, ``output`` / ``errorText``), ``file``,
``source-url`` / ``source-document`` and ``data-<name>``. An assistant
message's parts split into steps at each ``step-start``: each step is one
assistant message (its texts and calls) followed by the results of its calls
that have one, as ``convertToModelMessages`` sends them. A request body
``{"messages": [...]}`` (with ``id``, ``trigger``) is read the same way.

A model message (``ModelMessage``) is ``{"role", "content": str | [parts]}``
with parts ``text``, ``reasoning``, ``image`` / ``file``, ``tool-call``
(``toolCallId``, ``toolName``, ``input`` or ``args``) and, in ``tool``
messages, ``tool-result`` (``output: {"type", "value"}`` or ``result``).
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    Problem,
    arguments_text,
    json_text,
    json_type,
    marker,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "vercel-ai"
EXPECTS = (
    "Vercel AI SDK UIMessages [{'role', 'parts': [{'type': 'text'|'tool-<name>'|...}]}] "
    "or model messages [{'role', 'content': [{'type': 'tool-call'|'tool-result'|...}]}]"
)

ROLES = ("system", "user", "assistant")
MODEL_ROLES = ("system", "user", "assistant", "tool")
#: Parts only UIMessages have: any one of them marks a list as UIMessages.
UI_MARKERS = ("step-start", "dynamic-tool", "source-url", "source-document")
MODEL_PARTS = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})
MODEL_MARKERS = frozenset({"tool-call", "tool-result"})
#: States of a tool part whose call has a result (or an error) to send back.
DONE = frozenset({"output-available", "output-error", "output-denied"})


def claims(document: Any) -> Verdict:
    """The signature: UIMessages (``parts`` with AI SDK part types) or model messages with
    ``tool-call`` / ``tool-result`` parts."""
    messages = _messages_of(document)
    if not messages:
        return Miss("", "expected a non-empty list of messages (or 'messages')")
    if _ui(messages):
        return Claim("UIMessages")
    if _model(messages):
        return Claim("model messages")
    return Miss(
        "",
        "no AI SDK UI parts (text, step-start, tool-<name>, ...) and no "
        "tool-call / tool-result content parts",
    )


def _messages_of(document: Any) -> list[Any] | None:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return list(document["messages"])
    if isinstance(document, list):
        return document
    return None


def _ui(messages: list[Any]) -> bool:
    if not all(isinstance(m, dict) and isinstance(m.get("parts"), list) for m in messages):
        return False
    kinds = [p.get("type") for m in messages for p in m["parts"] if isinstance(p, dict)]
    if any(m.get("role") == "tool" for m in messages):
        return False
    names = [k for k in kinds if isinstance(k, str)]
    return len(names) == len(kinds) and any(_ui_kind(k) for k in names)


def _ui_kind(kind: str) -> bool:
    return kind in UI_MARKERS or kind.startswith(("tool-", "data-")) or kind == "text"


def _model(messages: list[Any]) -> bool:
    if not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
        return False
    kinds = [
        p.get("type")
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if isinstance(p, dict)
    ]
    return any(isinstance(k, str) and k in MODEL_MARKERS for k in kinds)


def read(document: Any, out: Out) -> None:
    """Read UIMessages or model messages (a list, or a request body with ``messages``)."""
    messages = _messages_of(document)
    if not messages:
        raise Problem("", f"expected a list of AI SDK messages, got {json_type(document)}")
    prefix = "messages" if isinstance(document, dict) else ""
    if _ui(messages):
        for i, message in enumerate(messages):
            _ui_message(message, f"{prefix}[{i}]", out)
    elif _model(messages):
        for i, message in enumerate(messages):
            _model_message(message, f"{prefix}[{i}]", out)
    else:
        raise Problem(
            prefix,
            "neither UIMessages (parts with AI SDK types) nor model messages "
            "(content with tool-call / tool-result parts)",
        )


def _role(value: Any, where: str, allowed: tuple[str, ...]) -> str:
    if isinstance(value, str) and value in allowed:
        return value
    raise Problem(f"{where}.role", f"unknown role {value!r} (expected {' or '.join(allowed)})")


class _Step:
    """One step of an assistant UIMessage: texts, calls, then the results of those calls."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[tuple[Message, str]] = []

    def flush(self, out: Out) -> None:
        if self.texts or self.calls:
            message: Message = {"role": "assistant", "content": "\n".join(self.texts) or None}
            if self.calls:
                message["tool_calls"] = self.calls
            out.add(message, self.where)
        for result, at in self.results:
            out.add(result, at)


def _ui_message(message: dict[str, Any], where: str, out: Out) -> None:
    """One UIMessage (``_ui`` has checked it is an object with a ``parts`` list)."""
    role = _role(message.get("role"), where, ROLES)
    step = _Step(where)
    for k, part in enumerate(message["parts"]):
        at = f"{where}.parts[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            raise Problem(at, "part without a string 'type'")
        if kind == "step-start":
            step.flush(out)
            step = _Step(at)
        elif kind == "text":
            if not isinstance(part.get("text"), str):
                raise Problem(at, "text part without a string 'text'")
            step.texts.append(part["text"])
        elif kind == "reasoning":
            if not isinstance(part.get("text"), str):  # OTel GenAI's reasoning holds 'content'
                raise Problem(at, "reasoning part without a string 'text'")
            out.note(
                at, "reasoning part", "model reasoning is not a conversation message", part["text"]
            )
        elif kind == "dynamic-tool" or kind.startswith("tool-"):
            if role != "assistant":
                raise Problem(at, f"a tool part on a {role} message")
            _tool_part(part, kind, at, step, out)
        elif kind == "file":
            step.texts.append(marker("file", part.get("filename") or part.get("mediaType")))
        elif kind in ("source-url", "source-document"):
            step.texts.append(marker(kind, part.get("url") or part.get("title")))
        elif kind.startswith("data-"):
            out.note(at, f"{kind} part", "app data is not sent to the model", part.get("data"))
        else:
            text = part.get("text")
            step.texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                at,
                f"unknown part type {kind!r}",
                f"{NAME} has no such part type",
                part,
                unknown=True,
            )
    legacy = message.get("content")  # AI SDK 4 kept the text in ``content`` too
    if isinstance(legacy, str) and legacy and legacy not in step.texts:
        out.note(f"{where}.content", "field 'content'", "the parts are read instead", legacy)
    if role != "assistant":
        out.add({"role": role, "content": "\n".join(step.texts)}, where)
        return
    step.flush(out)


def _tool_part(part: dict[str, Any], kind: str, at: str, step: _Step, out: Out) -> None:
    name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
    call_id = part.get("toolCallId")
    if not isinstance(call_id, str):
        raise Problem(at, f"{kind} part without a string 'toolCallId'")
    if not isinstance(name, str):
        raise Problem(at, "dynamic-tool part without a string 'toolName'")
    arguments = part.get("input", part.get("rawInput"))
    state = part.get("state")
    if part.get("providerExecuted"):
        step.texts.append(marker(f"provider tool {name}", call_id, arguments))
        if "output" in part:
            step.texts.append(marker(f"provider tool result {name}", call_id, part["output"]))
        return
    step.calls.append(
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments_text(arguments)},
        }
    )
    if state == "output-available" or "output" in part:
        output = part.get("output")
        content = output if isinstance(output, str) else json_text(output)
    elif state == "output-error":
        content = ERROR_PREFIX + str(part.get("errorText", ""))
    elif state == "output-denied":
        approval = part.get("approval")
        reason = approval.get("reason") if isinstance(approval, dict) else None
        content = ERROR_PREFIX + "denied" + (f": {reason}" if isinstance(reason, str) else "")
    else:
        if state not in (None, "input-streaming", "input-available"):
            out.note(at, f"tool part in state {state!r}", "the call has no result yet", part)
        return
    step.results.append(({"role": "tool", "content": content, "tool_call_id": call_id}, at))


def _model_message(message: dict[str, Any], where: str, out: Out) -> None:
    """One model message (``_model`` has checked it is an object with ``role`` and ``content``)."""
    role = _role(message.get("role"), where, MODEL_ROLES)
    content = message.get("content")
    if isinstance(content, str):
        out.add({"role": role, "content": content}, where)
        return
    if not isinstance(content, list):
        raise Problem(f"{where}.content", f"expected a string or parts, got {json_type(content)}")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for k, part in enumerate(content):
        at = f"{where}.content[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning":
            out.note(at, "reasoning part", "model reasoning is not a conversation message", part)
        elif kind in ("image", "file"):
            texts.append(marker(kind, part.get("mediaType") or part.get("mimeType")))
        elif kind == "tool-call":
            calls.append(
                {
                    "id": part.get("toolCallId"),
                    "type": "function",
                    "function": {
                        "name": part.get("toolName"),
                        "arguments": arguments_text(part.get("input", part.get("args"))),
                    },
                }
            )
        elif kind == "tool-result":
            out.add(_result(part), at)
        else:
            text = part.get("text") if isinstance(part, dict) else None
            texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                at, f"unknown part type {kind!r}", f"{NAME} has no such part", part, unknown=True
            )
    if texts or calls or role != "tool":
        result: Message = {"role": "assistant" if role == "tool" else role}
        result["content"] = "\n".join(texts) if texts else None
        if calls:
            result["tool_calls"] = calls
        out.add(result, where)


def _result(part: dict[str, Any]) -> Message:
    """A ``tool-result`` part: ``output`` ``{"type": "text"|"json"|"error-text"|..., "value"}``."""
    if "output" in part and isinstance(part["output"], dict) and "type" in part["output"]:
        output = part["output"]
        value = output.get("value")
        text = value if isinstance(value, str) else json_text(value)
        if str(output.get("type", "")).startswith("error"):
            text = ERROR_PREFIX + text
    else:
        value = part.get("result", part.get("output"))
        text = value if isinstance(value, str) else json_text(value)
        if part.get("isError"):
            text = ERROR_PREFIX + text
    return {"role": "tool", "content": text, "tool_call_id": part.get("toolCallId")}
