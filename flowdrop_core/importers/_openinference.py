"""OpenInference span attributes (Arize Phoenix, the openinference instrumentations).

An LLM span's attributes spell each message under ``llm.input_messages`` and
``llm.output_messages``: flat (``llm.input_messages.0.message.role``,
``...message.content``, ``...message.contents.1.message_content.text``,
``...message.tool_calls.0.tool_call.function.name``), as lists of objects
with dotted keys (``{"message.role": ...}``, Phoenix's "logical JSON"), or
fully nested (``{"llm": {"input_messages": [{"message": {...}}]}}``, a
Phoenix export). The document is the attribute map, a span with
``attributes``, a list of spans, or an OTLP-JSON export. A trace's
conversation is what its last LLM span saw: input messages, then output.
Tool results are ``tool`` messages answering ``message.tool_call_id`` (or,
without one, the oldest open call of ``message.name``); calls without an id
get their origin as id.

An LLM span (``openinference.span.kind`` ``LLM``) that records no message
list but only ``input.value`` / ``output.value`` is read from those: the
conventions define them as the operation's input ("prompt, query, document")
and output ("response, result, answer"), with ``input.mime_type`` /
``output.mime_type`` saying whether the value is ``application/json`` or
``text/plain`` (Arize-ai/openinference ``spec/semantic_conventions.md``,
"Reserved Attributes"; the spec's LLM example has ``"input.value": "What is
the capital of France?"``). JSON holding messages (GenAI parts or OpenAI
Chat, a Chat request or completion, ``{"text", ...}``) is read as those;
text is the user's turn (input) and the assistant's (output). Spans of other
kinds (``CHAIN``, ``TOOL``, ...) are not a model's conversation and are not
claimed for their values.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_type,
    last_call,
    marker,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "openinference"
EXPECTS = (
    "OpenInference span attributes llm.input_messages / llm.output_messages "
    "(flat llm.input_messages.0.message.role keys, or nested), or an LLM span's input.value / "
    "output.value; a span, spans or an OTLP export"
)

ROLES = {"system": "system", "user": "user", "human": "user", "assistant": "assistant"}
ROLES |= {"ai": "assistant", "model": "assistant", "tool": "tool", "function": "tool"}
ROLES |= {"developer": "system"}
SECTIONS = ("input_messages", "output_messages")
KIND = "openinference.span.kind"
#: The whole-value attributes of any span, read on an LLM span without a message list.
VALUES = (
    ("input.value", "input.mime_type", "input"),
    ("output.value", "output.mime_type", "output"),
)
#: Why an attribute whose key clashes with the others' is a note.
LOST = (
    "its key does not fit the message attributes' layout (a value where a message is, "
    "or a name where an index is)"
)
#: Message fields read (after ``message.``); any other content-bearing one is noted.
KNOWN = frozenset({"role", "content", "contents", "tool_calls", "tool_call_id", "name"})


def claims(document: Any) -> Verdict:
    """The signature: some span's attributes hold ``llm.input_messages`` or ``llm.output_messages``."""
    try:
        spans = _spans(document)
    except Problem as problem:
        return Miss(problem.where, problem.what)
    for _, attributes in spans:
        llm = _tree(attributes).get("llm")
        if isinstance(llm, dict) and llm.keys() & set(SECTIONS):
            return Claim("OpenInference span attributes")
    for _, attributes in spans:
        if _values_only(attributes):
            return Claim("an OpenInference LLM span with input.value / output.value")
    return Miss("", "no llm.input_messages or llm.output_messages attribute", len(spans) - 1)


def _values_only(attributes: dict[str, Any]) -> bool:
    """An LLM span that records its input and output only as ``input.value`` / ``output.value``
    (strings, as the conventions type them)."""
    kind = attributes.get(KIND)
    return (
        isinstance(kind, str)
        and kind.upper() == "LLM"
        and any(isinstance(attributes.get(key), str) for key, _, _ in VALUES)
    )


def read(document: Any, out: Out) -> None:
    """Read an attribute map, a span, a list of spans or an OTLP-JSON export."""
    calls: list[tuple[str, Out]] = []
    for where, attributes in _spans(document):
        lost: list[tuple[str, Any]] = []
        tree = _tree(attributes, lost)
        llm = tree.get("llm")
        if not isinstance(llm, dict) or not any(s in llm for s in SECTIONS):
            if _values_only(attributes):
                calls.append((f"span {where or '(top level)'}", _read_values(attributes, where)))
            continue
        call = Out()
        pending = PendingCalls()
        for section in SECTIONS:
            if section in llm:
                _messages(llm[section], _at(where, f"llm.{section}"), call, pending)
        for key, value in lost:
            if key.split(".")[:2] in (["llm", section] for section in SECTIONS):
                call.note(_at(where, key), f"attribute {key!r}", LOST, value, unknown=True)
        calls.append((f"span {where or '(top level)'}", call))
    if not calls:
        raise Problem(
            "", "no span carries llm.input_messages or llm.output_messages, or is an LLM span "
            "with input.value / output.value"
        )  # fmt: skip
    last_call(calls, out, "an earlier LLM span held it; the last one does not")


def _read_values(attributes: dict[str, Any], where: str) -> Out:
    """An LLM span's ``input.value`` then ``output.value`` (JSON unless declared text)."""
    from flowdrop_core.importers import _otel as otel

    call = Out()
    for key, mime_key, side in VALUES:
        value = attributes.get(key)
        if value is None:
            continue
        mime = attributes.get(mime_key)
        plain = isinstance(mime, str) and mime.lower().startswith("text/")
        otel.read_whole_value(value, _at(where, key), side, call, plain=plain)
    return call


def _at(where: str, key: str) -> str:
    return f"{where}.attributes[{key!r}]" if where else key


def _spans(document: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every span's attributes as a map, with the span's origin, in start order."""
    from flowdrop_core.importers import _otel as otel

    if isinstance(document, dict) and "resourceSpans" in document:
        spans = otel._otlp_spans(document)
    elif isinstance(document, dict) and isinstance(document.get("attributes"), dict | list):
        spans = [("", document)]
    elif isinstance(document, list) and all(
        isinstance(s, dict) and isinstance(s.get("attributes"), dict | list) for s in document
    ):
        spans = [(f"[{i}]", s) for i, s in enumerate(document)]
    elif isinstance(document, dict):
        return [("", document)]
    else:
        raise Problem("", f"expected span attributes, a span or spans, got {json_type(document)}")
    ordered = sorted(spans, key=lambda item: otel._start(item[1]))
    result = []
    for where, span in ordered:
        at = f"{where}.attributes" if where else "attributes"
        result.append((where, otel._attributes(span["attributes"], at)))
    return result


def _tree(
    attributes: dict[str, Any], lost: list[tuple[str, Any]] | None = None, prefix: str = ""
) -> dict[str, Any]:
    """Dotted keys unflattened: ``a.0.b`` -> ``{"a": [{"b": ...}]}`` (also inside values).

    A key that cannot take its place (a value where other keys need a list or an object,
    a name where an index is, a key that is not text) goes to ``lost`` with its dotted key
    and value, so the reader can note it rather than drop it.
    """
    root: dict[str, Any] = {}
    for key, value in attributes.items():
        full = f"{prefix}.{key}" if prefix else str(key)
        if not isinstance(key, str):
            _lose(lost, full, value)
            continue
        node: Any = root
        parts = key.split(".")
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            here = ".".join([prefix, *parts[: k + 1]] if prefix else parts[: k + 1])
            if isinstance(node, list):
                index = int(part) if part.isdigit() else None
                if index is None:
                    _lose(lost, full, value)
                    break
                while len(node) <= index:
                    node.append({})
                if last:
                    _replace(node, index, _unflat(value, lost, here), lost, here)
                else:
                    if not isinstance(node[index], dict | list):
                        _lose(lost, here, node[index])
                        node[index] = {}
                    node = _child(node, index, parts[k + 1])
                continue
            if last:
                _replace(node, part, _unflat(value, lost, here), lost, here)
            else:
                if not isinstance(node.get(part), dict | list):
                    if part in node:
                        _lose(lost, here, node[part])
                    node[part] = [] if parts[k + 1].isdigit() else {}
                node = node[part]
    return root


def _lose(lost: list[tuple[str, Any]] | None, key: str, value: Any) -> None:
    if lost is not None and value not in (None, "", [], {}):
        lost.append((key, value))


def _replace(
    node: Any, slot: Any, value: Any, lost: list[tuple[str, Any]] | None, key: str
) -> None:
    """Set ``node[slot]``; what deeper keys had already put there is lost."""
    exists = slot < len(node) if isinstance(node, list) else slot in node
    if exists and isinstance(node[slot], dict | list):
        _lose(lost, key, node[slot])
    node[slot] = value


def _child(node: list[Any], index: int, following: str) -> Any:
    if following.isdigit() and not isinstance(node[index], list):
        node[index] = []
    return node[index]


def _unflat(value: Any, lost: list[tuple[str, Any]] | None = None, key: str = "") -> Any:
    if isinstance(value, list):
        return [
            _tree(v, lost, f"{key}.{i}") if isinstance(v, dict) else v for i, v in enumerate(value)
        ]
    if isinstance(value, dict):
        return _tree(value, lost, key)
    return value


def _messages(items: Any, prefix: str, out: Out, pending: PendingCalls) -> None:
    if not isinstance(items, list):
        raise Problem(prefix, f"expected a list of messages, got {json_type(items)}")
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            raise Problem(where, "expected a message ({'message.role', ...})")
        out.add(_message(message, where, out, pending), where)


def _message(message: dict[str, Any], where: str, out: Out, pending: PendingCalls) -> Message:
    given = message.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise Problem(f"{where}.role", f"unknown role {message.get('role')!r}")
    for key, value in message.items():
        if key not in KNOWN and value not in (None, "", [], {}):
            out.note(
                f"{where}.{key}", f"field {key!r}", f"{NAME} does not read it", value, unknown=True
            )
    texts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif content is not None:
        raise Problem(f"{where}.content", f"expected a string, got {json_type(content)}")
    for k, part in enumerate(message.get("contents") or ()):
        body = part.get("message_content") if isinstance(part, dict) else None
        if not isinstance(body, dict):
            raise Problem(f"{where}.contents[{k}]", "expected a message_content object")
        kind = body.get("type")
        if kind == "text" and isinstance(body.get("text"), str):
            texts.append(body["text"])
        elif kind == "reasoning":
            out.note(
                f"{where}.contents[{k}]",
                "reasoning content",
                "model reasoning is not a conversation message",
                body.get("text", body),
            )
        elif kind == "image":
            image = body.get("image")
            url = image.get("image", {}).get("url") if isinstance(image, dict) else None
            texts.append(marker("image", url if isinstance(url, str) else None))
        else:
            text = body.get("text")
            texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                f"{where}.contents[{k}]",
                f"unknown content type {kind!r}",
                f"{NAME} has no such content type",
                body,
                unknown=True,
            )
    result: Message = {"role": role, "content": "\n".join(texts) if texts else None}
    calls = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise Problem(f"{where}.tool_calls", f"expected a list, got {json_type(raw_calls)}")
    for k, item in enumerate(raw_calls or ()):
        call = item.get("tool_call") if isinstance(item, dict) else None
        if not isinstance(call, dict):
            raise Problem(f"{where}.tool_calls[{k}]", "expected a tool_call object")
        function: dict[str, Any] = (
            call["function"] if isinstance(call.get("function"), dict) else {}
        )
        call_id = call.get("id")
        if call_id in (None, ""):
            call_id = f"{where}.tool_calls[{k}]"
            out.synthetic.add(call_id)
        pending.declare(call_id, function.get("name"))
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": function.get("name"),
                    "arguments": arguments_text(function.get("arguments")),
                },
            }
        )
    if calls:
        if role != "assistant":
            raise Problem(f"{where}.tool_calls", f"tool calls on a {role} message")
        result["tool_calls"] = calls
    if role == "tool":
        call_id = message.get("tool_call_id")
        if call_id in (None, ""):
            call_id = pending.answer(message.get("name")) or pending.answer()
            if call_id is None:
                out.note(where, "tool result without a call", "no open call to answer", "")
        result["tool_call_id"] = call_id
        if result["content"] is None:
            result["content"] = ""
    return result
