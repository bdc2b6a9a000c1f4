"""Legacy OpenTelemetry / OpenLLMetry indexed attributes: ``gen_ai.prompt.N.*`` and
``gen_ai.completion.N.*``.

What OpenLLMetry (Traceloop) and instrumentations that copied it (Koog, ...)
write on a model-call span: ``gen_ai.prompt.0.role``, ``gen_ai.prompt.0.content``,
``gen_ai.prompt.1.tool_calls.0.name`` / ``.arguments`` / ``.id``,
``gen_ai.prompt.2.tool_call_id``, then ``gen_ai.completion.0.*`` for the
reply. The document is the attribute map, a span with ``attributes``, a list
of spans or an OTLP-JSON export; a trace is what its last such span saw.
Some instrumentations (Koog) write a message's tool calls as its ``content``:
JSON text of a list of OpenAI-shape calls (``{"function": {"name",
"arguments"}, "id"}``), under any role; those become an assistant message's
calls. A result without ``tool_call_id`` answers the oldest open call.
Several completions are one reply each in order (Koog writes one per call).
"""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core.importers import _openinference as openinference
from flowdrop_core.importers._base import (
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_type,
    last_call,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "otel-legacy"
EXPECTS = (
    "OpenLLMetry span attributes gen_ai.prompt.N.role / .content and gen_ai.completion.N.*, "
    "a span, spans or an OTLP export"
)

ROLES = {"system": "system", "user": "user", "human": "user", "assistant": "assistant"}
ROLES |= {"model": "assistant", "ai": "assistant", "tool": "tool", "function": "tool"}
INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.\d+\.")
KNOWN = frozenset({"role", "content", "tool_calls", "tool_call_id", "finish_reason", "name"})


def claims(document: Any) -> Verdict:
    """The signature: some span's attributes have an indexed ``gen_ai.prompt.N.`` or
    ``gen_ai.completion.N.`` key."""
    try:
        spans = openinference._spans(document)
    except Problem as problem:
        return Miss(problem.where, problem.what)
    for _, attributes in spans:
        if any(isinstance(k, str) and INDEXED.match(k) for k in attributes):
            return Claim("indexed gen_ai.prompt / gen_ai.completion attributes")
    return Miss("", "no gen_ai.prompt.N.* or gen_ai.completion.N.* attribute", len(spans) - 1)


def read(document: Any, out: Out) -> None:
    """Read every span with indexed attributes; the conversation is the last one's."""
    calls: list[tuple[str, Out]] = []
    for where, attributes in openinference._spans(document):
        indexed = {k: v for k, v in attributes.items() if isinstance(k, str) and INDEXED.match(k)}
        if not indexed:
            continue
        tree = openinference._tree(indexed).get("gen_ai", {})
        call = Out()
        pending = PendingCalls()
        for section in ("prompt", "completion"):
            # Every key matched ``gen_ai.<section>.<N>.``, so the section unflattens to a list.
            for i, item in enumerate(tree.get(section, [])):
                at = _at(where, f"gen_ai.{section}.{i}")
                if item == {}:
                    continue  # an index the span skipped
                _message(item, at, call, pending)
        calls.append((f"span {where or '(top level)'}", call))
    if not calls:
        raise Problem("", "no span carries gen_ai.prompt.N or gen_ai.completion.N attributes")
    last_call(calls, out, "an earlier model call held it; the last one does not")


def _at(where: str, key: str) -> str:
    return f"{where}.attributes[{key!r}]" if where else key


def _message(item: Any, at: str, out: Out, pending: PendingCalls) -> None:
    if not isinstance(item, dict):
        raise Problem(at, f"expected a message's attributes, got {json_type(item)}")
    given = item.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise Problem(f"{at}.role", f"unknown role {given!r}")
    for key, value in item.items():
        if key not in KNOWN and value not in (None, "", [], {}):
            out.note(f"{at}.{key}", f"field {key!r}", f"{NAME} does not read it", value,
                     unknown=True)  # fmt: skip
    content = item.get("content")
    if content is not None and not isinstance(content, str):
        raise Problem(f"{at}.content", f"expected a string, got {json_type(content)}")
    calls = _content_calls(content, at)
    if calls is not None:  # Koog: the calls are the content, whatever the role says
        for call in calls:
            pending.declare(call["id"], call["function"]["name"])
        out.add({"role": "assistant", "content": None, "tool_calls": calls}, at)
        return
    message: Message = {"role": role, "content": content}
    declared = []
    for k, call in enumerate(item.get("tool_calls") or ()):
        if not isinstance(call, dict):
            raise Problem(f"{at}.tool_calls.{k}", "expected a tool call's attributes")
        call_id = call.get("id") or f"{at}.tool_calls.{k}"
        if not call.get("id"):
            out.synthetic.add(call_id)
        pending.declare(call_id, call.get("name"))
        declared.append({"id": call_id, "type": "function", "function": {
            "name": call.get("name"), "arguments": arguments_text(call.get("arguments"))}})  # fmt: skip
    if declared:
        message["tool_calls"] = declared
    elif role != "tool" and content is None:
        message["content"] = ""
    if role == "tool":
        call_id = item.get("tool_call_id") or pending.answer(item.get("name")) or pending.answer()
        if call_id is None:
            out.note(at, "tool result without a call", "no open call to answer", "")
        message["tool_call_id"] = call_id
        message["content"] = content or ""
    out.add(message, at)


def _content_calls(content: Any, at: str) -> list[dict[str, Any]] | None:
    """Content that is JSON text of a list of OpenAI-shape tool calls, as those calls."""
    if not isinstance(content, str) or not content.lstrip().startswith("[{"):
        return None
    try:
        parsed = parse_json(content)
    except JSONProblem:
        return None
    calls = []  # JSON text starting with ``[{`` is a list holding at least one value
    for k, call in enumerate(parsed):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        call_id = call.get("id") or f"{at}.content[{k}]"
        calls.append({"id": call_id, "type": "function", "function": {
            "name": function["name"], "arguments": arguments_text(function.get("arguments"))}})  # fmt: skip
    return calls
