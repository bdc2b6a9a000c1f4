"""OpenTelemetry GenAI semantic conventions: messages, spans and OTLP-JSON exports.

Messages are ``{"role", "parts": [...]}`` with parts ``text``,
``tool_call``, ``tool_call_response``, ``reasoning``, ``blob`` / ``uri`` /
``file`` and ``server_tool_call`` / ``server_tool_call_response``. The
top level is a list of messages, an attribute map (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``; values may be JSON
text), a span with such attributes, a list of spans, or an OTLP-JSON export
(``resourceSpans[].scopeSpans[].spans[]``). A trace's conversation is what
its last model call saw: system instructions, input, then output.

The deprecated whole-value attributes ``gen_ai.prompt`` / ``gen_ai.completion``
(one JSON string each, as older instrumentations and the openinference-genai
fixtures write them) are read when a span has no ``gen_ai.input.messages`` /
``gen_ai.output.messages``: the prompt is a list of GenAI messages (or of
OpenAI Chat messages), the completion ``{"text", "finish_reason"}``, GenAI
messages or an OpenAI chat completion (:func:`read_whole_value`).
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    Problem,
    arguments_text,
    json_text,
    json_type,
    kind_of,
    last_call,
    marker,
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "otel-genai"
EXPECTS = (
    "OpenTelemetry GenAI messages {'role', 'parts': [{'type', ...}]}, a span whose attributes "
    "hold gen_ai.input.messages / gen_ai.output.messages (or the deprecated gen_ai.prompt / "
    "gen_ai.completion), or an OTLP-JSON export"
)

INPUT = "gen_ai.input.messages"
OUTPUT = "gen_ai.output.messages"
SYSTEM = "gen_ai.system_instructions"
#: Deprecated whole-value attributes: the prompt and the completion, each one JSON value.
PROMPT = "gen_ai.prompt"
COMPLETION = "gen_ai.completion"
WHOLE = (PROMPT, COMPLETION)
ROLES = ("system", "user", "assistant", "tool")
MEDIA = frozenset({"blob", "uri", "file"})
KNOWN = ("role", "parts", "name", "finish_reason")


#: The part types of the GenAI conventions (a message has at least one of them).
PART_TYPES = frozenset(
    {"text", "tool_call", "tool_call_response", "reasoning", *MEDIA, "server_tool_call",
     "server_tool_call_response"}
)  # fmt: skip


def claims(document: Any) -> Verdict:
    """GenAI messages (``role`` and ``parts`` of typed parts, text in ``content``), an
    attribute map with ``gen_ai.input.messages`` / ``gen_ai.output.messages``, or spans or an
    OTLP export of which at least one span carries them."""
    if isinstance(document, list) and document and all(_is_span(s) for s in document):
        spans = [s for s in document if isinstance(s, dict)]
        return _spans_verdict(spans, "a list of spans")
    if isinstance(document, dict) and "resourceSpans" in document:
        try:
            spans = [span for _, span in _otlp_spans(document)]
        except Problem as problem:
            return Miss(problem.where, problem.what, 1)
        return _spans_verdict(spans, "an OTLP export")
    if isinstance(document, dict) and _is_span(document):
        return _spans_verdict([document], "a span")
    if isinstance(document, dict) and any(k in document for k in (INPUT, OUTPUT)):
        return Claim("an attribute map")
    if isinstance(document, dict) and _has_whole(document):
        return Claim("an attribute map with the deprecated gen_ai.prompt / gen_ai.completion")
    if isinstance(document, list):
        verdict = each(document, "", message_miss, "a list of GenAI messages")
        if isinstance(verdict, Claim) and not _any_known_part(document):
            return Miss("", f"no part of a GenAI type ({', '.join(sorted(PART_TYPES))})", 1)
        return verdict
    return Miss("", f"expected GenAI messages, a span with {INPUT} or an OTLP export, "
                f"got {json_type(document)}")  # fmt: skip


def _has_whole(attributes: Any) -> bool:
    """The attributes hold a deprecated whole-value ``gen_ai.prompt`` / ``gen_ai.completion``
    that is text or JSON (not the indexed ``gen_ai.prompt.N.*`` of otel-legacy)."""
    return isinstance(attributes, dict) and any(
        isinstance(attributes.get(key), str | list | dict) for key in WHOLE
    )


def _spans_verdict(spans: list[dict[str, Any]], shape: str) -> Verdict:
    for span in spans:
        raw = span.get("attributes")
        keys = raw.keys() if isinstance(raw, dict) else (
            [a.get("key") for a in raw if isinstance(a, dict)] if isinstance(raw, list) else []
        )  # fmt: skip
        if INPUT in keys or OUTPUT in keys:
            return Claim(shape)
        if isinstance(raw, list) and any(k in keys for k in WHOLE):
            raw = _attributes(raw, "attributes")
        if _has_whole(raw):
            return Claim(f"{shape} with the deprecated gen_ai.prompt / gen_ai.completion")
    return Miss("", f"no span carries {INPUT} or {OUTPUT}", 1)


def message_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a GenAI message: ``role``, ``parts`` with ``type``,
    and text parts carrying their text in ``content``."""
    missed = key_miss(item, where, ("role", "parts"), "a message object")
    if missed is not None:
        return missed
    parts = item["parts"]
    if not isinstance(parts, list):
        return Miss(f"{where}.parts", "expected a list of parts")
    for k, part in enumerate(parts):
        at = f"{where}.parts[{k}]"
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return Miss(at, "a part without a string 'type'")
        if part["type"] == "text" and not isinstance(part.get("content"), str):
            return Miss(at, "a text part without a string 'content'")
    return None


def _any_known_part(messages: list[Any]) -> bool:
    return any(
        part.get("type") in PART_TYPES for message in messages for part in message["parts"]
    ) or all(not message["parts"] for message in messages)


def read(document: Any, out: Out) -> None:
    """Read messages, attributes, a span, a list of spans or an OTLP-JSON export."""
    if isinstance(document, list) and document and all(_is_span(s) for s in document):
        _read_spans([(f"[{i}]", s) for i, s in enumerate(document)], out)
    elif isinstance(document, list):
        read_messages(document, "", out)
    elif isinstance(document, dict) and "resourceSpans" in document:
        _read_spans(_otlp_spans(document), out)
    elif isinstance(document, dict) and _is_span(document):
        _read_spans([("", document)], out)
    elif isinstance(document, dict) and (
        any(k in document for k in (INPUT, OUTPUT)) or _has_whole(document)
    ):
        _read_attributes(document, "", out)
    else:
        raise Problem(
            "",
            f"expected GenAI messages, a span with {INPUT} or an OTLP export, "
            f"got {json_type(document)}",
        )


def _is_span(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("attributes"), dict | list)


def _otlp_spans(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    spans: list[tuple[str, dict[str, Any]]] = []
    resources = document["resourceSpans"]
    if not isinstance(resources, list):
        raise Problem("resourceSpans", f"expected a list, got {json_type(resources)}")
    for r, resource in enumerate(resources):
        scopes = resource.get("scopeSpans", []) if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise Problem(f"resourceSpans[{r}].scopeSpans", "expected a list")
        for s, scope in enumerate(scopes):
            items = scope.get("spans", []) if isinstance(scope, dict) else None
            if not isinstance(items, list):
                raise Problem(f"resourceSpans[{r}].scopeSpans[{s}].spans", "expected a list")
            for k, span in enumerate(items):
                if isinstance(span, dict):
                    spans.append((f"resourceSpans[{r}].scopeSpans[{s}].spans[{k}]", span))
    return spans


def _start(span: dict[str, Any]) -> int:
    value = span.get("startTimeUnixNano", span.get("start_time", 0))
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _read_spans(spans: list[tuple[str, dict[str, Any]]], out: Out) -> None:
    """Spans in start order; the conversation is what the last one carrying messages saw."""
    calls: list[tuple[str, Out]] = []
    for where, span in sorted(spans, key=lambda item: _start(item[1])):
        at = f"{where}.attributes" if where else "attributes"  # a lone span: no leading dot
        raw = span.get("attributes", [])  # a span without attributes carries no messages
        if not isinstance(raw, dict | list):
            raise Problem(at, f"expected a list or object, got {json_type(raw)}")
        attributes = _attributes(raw, at)
        if not any(k in attributes for k in (INPUT, OUTPUT)) and not _has_whole(attributes):
            continue
        call = Out()
        _read_attributes(attributes, at, call)
        name = span.get("name")
        calls.append((f"span {name!r}" if isinstance(name, str) else f"span {where}", call))
    if not calls:
        raise Problem("", f"no span carries {INPUT} or {OUTPUT}")
    last_call(calls, out, "an earlier model call held it; the last call does not")


def _attributes(value: Any, where: str) -> dict[str, Any]:
    """A span's attributes as a map: OTLP's ``[{"key", "value": {"stringValue"}}]`` or a dict."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, list):
        raise Problem(where, f"expected a list or object, got {json_type(value)}")
    result: dict[str, Any] = {}
    for k, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise Problem(f"{where}[{k}]", "expected an attribute {'key', 'value'}")
        result[item["key"]] = _any_value(item.get("value"))
    return result


def _any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as plain JSON."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "intValue", "doubleValue"):
        if key in value:
            return value[key]
    if "arrayValue" in value and isinstance(value["arrayValue"], dict):
        return [_any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value and isinstance(value["kvlistValue"], dict):
        return {
            kv.get("key"): _any_value(kv.get("value"))
            for kv in value["kvlistValue"].get("values", [])
            if isinstance(kv, dict)
        }
    return value


def _json_value(value: Any, where: str) -> Any:
    if isinstance(value, str):
        try:
            return parse_json(value)
        except JSONProblem as exc:
            raise Problem(where, str(exc)) from None
    return value


def _read_attributes(attributes: dict[str, Any], prefix: str, out: Out) -> None:
    """System instructions, then input messages, then output messages (or, without them, the
    deprecated whole-value prompt and completion)."""
    at = (lambda key: f"{prefix}[{key!r}]") if prefix else (lambda key: key)
    if SYSTEM in attributes:
        parts = _json_value(attributes[SYSTEM], at(SYSTEM))
        if not isinstance(parts, list):
            raise Problem(at(SYSTEM), f"expected a list of parts, got {json_type(parts)}")
        message = _message({"role": "system", "parts": parts}, at(SYSTEM), out)
        if message is not None:
            out.add(message, at(SYSTEM))
    if not any(k in attributes for k in (INPUT, OUTPUT)):
        for key, side in ((PROMPT, "input"), (COMPLETION, "output")):
            if key in attributes:
                read_whole_value(attributes[key], at(key), side, out)
        return
    for key in (INPUT, OUTPUT):
        if key in attributes:
            messages = _json_value(attributes[key], at(key))
            if not isinstance(messages, list):
                raise Problem(at(key), f"expected a list of messages, got {json_type(messages)}")
            read_messages(messages, at(key), out)


def read_messages(items: list[Any], prefix: str, out: Out) -> None:
    """A list of GenAI messages."""
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        message = _message(item, where, out)
        if message is not None:
            out.add(message, where)


def _result(part: dict[str, Any], at: str, out: Out) -> Message:
    """A ``tool_call_response`` part as a tool message. The conventions name its value
    ``response``; pydantic-ai's instrumentation writes ``result``. Without either (content
    capture off), the result is empty and a note says so."""
    key = next((k for k in ("response", "result") if k in part), None)
    if key is None:
        out.note(at, "tool_call_response without its value",
                 "the recording holds no 'response' or 'result' (content capture off?)", part)  # fmt: skip
        content = ""
    else:
        value = part[key]
        content = value if isinstance(value, str) else json_text(value)
    return {"role": "tool", "content": content, "tool_call_id": part.get("id")}


def _message(item: Any, where: str, out: Out) -> Message | None:
    """One GenAI message; its tool_call_response parts become tool messages of their own."""
    if not isinstance(item, dict):
        raise Problem(where, f"expected a message object, got {json_type(item)}")
    if "role" not in item:
        raise Problem(where, "missing 'role'")
    if "parts" not in item:
        raise Problem(where, "missing 'parts'")
    role = role_of(item["role"], where, ROLES, {})
    out.foreign(item, where, KNOWN, NAME)
    parts = item["parts"]
    if not isinstance(parts, list):
        raise Problem(f"{where}.parts", f"expected a list, got {json_type(parts)}")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results = 0
    for k, part in enumerate(parts):
        at = f"{where}.parts[{k}]"
        if not isinstance(part, dict):
            raise Problem(at, f"expected a part object, got {json_type(part)}")
        kind = kind_of(part)
        if kind is None:
            raise Problem(at, "part without a string 'type'")
        if kind == "text":
            text = part.get("content")
            if not isinstance(text, str):
                raise Problem(at, "text part without a string 'content'")
            texts.append(text)
        elif kind == "tool_call":
            calls.append(
                {
                    "id": part.get("id"),
                    "type": "function",
                    "function": {
                        "name": part.get("name"),
                        "arguments": arguments_text(part.get("arguments")),
                    },
                }
            )
        elif kind == "tool_call_response":
            out.add(_result(part, at, out), at)
            results += 1
        elif kind == "reasoning":
            out.note(
                at,
                "reasoning part",
                "model reasoning is not a conversation message",
                part.get("content", part),
            )
        elif kind in MEDIA:
            texts.append(marker(kind, part.get("modality") or part.get("mime_type")))
        elif kind in ("server_tool_call", "server_tool_call_response"):
            body = part.get(kind, {})
            name = part.get("name")
            label = f"{kind} {name}" if isinstance(name, str) else kind
            texts.append(marker(label, part.get("id"), body))
        else:
            text = part.get("content")
            texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                at,
                f"unknown part type {kind!r}",
                f"{NAME} has no such part type; "
                + ("its content is kept" if isinstance(text, str) else "shown as a marker"),
                part,
                unknown=True,
            )
    if results and not texts and not calls:
        return None
    message: Message = {"role": role, "content": "\n".join(texts) if texts or not calls else None}
    if calls:
        if role != "assistant":
            raise Problem(
                where, f"tool_call part on a {role} message; only assistant turns call tools"
            )
        message["tool_calls"] = calls
    return message


def read_whole_value(value: Any, where: str, side: str, out: Out, *, plain: bool = False) -> None:
    """One whole-value prompt (``side="input"``) or completion (``"output"``) as messages.

    What spans store as one value: the deprecated ``gen_ai.prompt`` /
    ``gen_ai.completion`` and OpenInference's ``input.value`` / ``output.value``.
    JSON text is parsed; it may be a list of GenAI messages (``role``, ``parts``),
    a list of OpenAI Chat messages, a Chat request (``messages``), a Chat
    completion (``choices``), or a completion ``{"text", "finish_reason"}``.
    Text that is not JSON (or a JSON string) is one turn: the user's on the
    input side, the assistant's on the output side. Any other shape is an
    error naming where: guessing would lose or misplace text. ``plain``: the
    value is declared text (``text/plain``), so it is not parsed.
    """
    from flowdrop_core.importers import _openai_chat as openai_chat
    from flowdrop_core.importers._base import PendingCalls

    parsed: Any = value
    if isinstance(value, str) and not plain:
        try:
            parsed = parse_json(value)
        except JSONProblem:
            parsed = value  # plain text, not JSON
    role = "user" if side == "input" else "assistant"
    if isinstance(parsed, str):
        out.add({"role": role, "content": parsed}, where)
        return
    pending = PendingCalls()
    if isinstance(parsed, list) and parsed and all(message_miss(m, "") is None for m in parsed):
        read_messages(parsed, where, out)
    elif isinstance(parsed, list) and parsed:
        for i, item in enumerate(parsed):
            at = f"{where}[{i}]"
            out.add(openai_chat.chat_message(item, at, out, pending), at)
    elif isinstance(parsed, dict) and "choices" in parsed and side == "output":
        openai_chat._read_choices(parsed["choices"], out, pending, prefix=f"{where}.")
    elif isinstance(parsed, dict) and "messages" in parsed and side == "input":
        items = parsed["messages"]
        if not isinstance(items, list):
            raise Problem(f"{where}.messages", f"expected a list, got {json_type(items)}")
        for i, item in enumerate(items):
            at = f"{where}.messages[{i}]"
            out.add(openai_chat.chat_message(item, at, out, pending), at)
    elif isinstance(parsed, dict) and isinstance(parsed.get("text"), str) and side == "output":
        out.foreign(parsed, where, ("text", "finish_reason"), NAME)
        out.add({"role": "assistant", "content": parsed["text"]}, where)
    else:
        wanted = (
            "GenAI or Chat messages, a Chat request ('messages') or text"
            if side == "input"
            else "GenAI or Chat messages, a Chat completion ('choices'), {'text', ...} or text"
        )
        raise Problem(where, f"expected {wanted}, got {json_type(parsed)}")
