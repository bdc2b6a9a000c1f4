"""LangChain and LangGraph messages in every serialized spelling.

Each message may be spelled as ``messages_to_dict`` output (``{"type":
"human", "data": {...}}``), the ``dumpd`` constructor JSON (``{"lc": 1,
"type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``, Python
and JS alike), a flat ``model_dump`` as LangGraph state holds it
(``{"type": "ai", "content": ..., "tool_calls": [...]}``), or a role-based
dict that carries LangChain fields (``additional_kwargs.tool_calls``,
``function_call``). The top level is a list of messages, an object with
``messages`` (a LangGraph state), a list of states (``stream_mode="values"``:
the last state holds the conversation), a list of node updates
(``stream_mode="updates"``) or an ``LLMResult`` (``generations`` of
``ChatGeneration``: a model call's reply, as callbacks and LangSmith record it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_text,
    json_type,
    kind_of,
    object_content,
    openai_call,
    parts_text,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each

NAME = "langchain"
EXPECTS = (
    "LangChain messages ({'type', 'data'}, {'lc': 1, 'type': 'constructor', ...}, "
    "flat {'type': 'human'|'ai'|..., 'content'}, or role dicts with 'additional_kwargs'), "
    "a LangGraph state {'messages': [...]} or a list of states/updates"
)

TYPES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "function",
}
CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "function",
}
KNOWN = (
    "type", "data", "content", "additional_kwargs", "response_metadata", "name", "id", "role",
    "tool_calls", "invalid_tool_calls", "tool_call_chunks", "usage_metadata", "tool_call_id",
    "artifact", "status", "example", "lc", "kwargs",
)  # fmt: skip
CALL_PARTS = frozenset({"tool_use", "tool_call", "function_call"})
LEFT_OUT_PARTS = {
    "thinking": "model reasoning is not a conversation message",
    "reasoning": "model reasoning is not a conversation message",
}
MEDIA = frozenset({"image_url", "image", "audio", "file", "video", "input_audio"})


#: Fields only a LangChain message carries (a role dict with one of them is LangChain's).
LANGCHAIN_FIELDS = ("additional_kwargs", "response_metadata", "invalid_tool_calls",
                    "usage_metadata", "tool_call_chunks")  # fmt: skip


def claims(document: Any) -> Verdict:
    """LangChain messages (typed ``{'type', 'data'}``, ``dumpd`` constructors, flat typed
    messages, or role dicts among them), a LangGraph state or a list of states or updates;
    at least one message must be LangChain-typed (a plain role dict is Chat's)."""
    if isinstance(document, dict) and "generations" in document:
        return _generations_verdict(document["generations"])
    if isinstance(document, dict) and "messages" in document:
        if "sessionId" in document and "projectHash" in document:  # its reader notes the rest
            return Miss("projectHash", "a Gemini CLI chat recording, not a LangGraph state", 1)
        return _messages_verdict(document["messages"], "messages", "a LangGraph state")
    if isinstance(document, list) and document and all(_is_state(v) for v in document):
        return _messages_verdict(document[-1]["messages"], f"[{len(document) - 1}].messages",
                                 "a list of stream values")  # fmt: skip
    if isinstance(document, list) and document and all(_is_update(v) for v in document):
        for i, update in enumerate(document):
            for node, state in update.items():
                verdict = _messages_verdict(state["messages"], f"[{i}].{node}.messages", "")
                if isinstance(verdict, Claim):
                    return Claim("a list of node updates")
        return Miss("", "no node update holds a LangChain-typed message", 1)
    if isinstance(document, list):
        return _messages_verdict(document, "", "a list of messages")
    return Miss("", f"expected a list of messages or an object with 'messages', "
                f"got {json_type(document)}")  # fmt: skip


def _generations_verdict(generations: Any) -> Verdict:
    """An ``LLMResult``: ``generations``, a list per prompt of generations, each with a
    ``message`` (``ChatGeneration``) or a ``text``."""
    if not (isinstance(generations, list) and generations and isinstance(generations[0], list)):
        return Miss("generations", "expected a list of lists of generations", 1)
    if not generations[0]:
        return Miss("generations[0]", "an empty list", 1)
    first = generations[0][0]
    if not isinstance(first, dict) or not (
        "message" in first or isinstance(first.get("text"), str)
    ):
        return Miss("generations[0][0]", "a generation without 'message' or 'text'", 2)
    if "message" in first:
        missed = message_miss(first["message"], "generations[0][0].message")
        if missed is not None:
            return Miss(missed.where, missed.what, 2)
    return Claim("an LLMResult")


def _messages_verdict(items: Any, prefix: str, shape: str) -> Verdict:
    verdict = each(items, prefix, message_miss, shape, score=2 if prefix else 1)
    if isinstance(verdict, Claim) and not any(_typed(item) for item in items):
        return Miss(prefix, "no LangChain-typed message ('type' with 'data', 'lc', or "
                    "'additional_kwargs'); plain role dicts are OpenAI Chat's", 1)  # fmt: skip
    return verdict


def _typed(item: dict[str, Any]) -> bool:
    """A message only LangChain spells so (a ``dumpd`` constructor's ``type`` is a string too)."""
    kind = kind_of(item)
    if kind is not None:
        return True  # message_miss checked it is a LangChain type, or an lc constructor
    return any(key in item for key in LANGCHAIN_FIELDS)


def message_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a LangChain message (typed, or a role dict)."""
    if not isinstance(item, dict):
        return Miss(where, f"expected a message object, got {json_type(item)}")
    if item.get("lc") == 1:
        return (
            None if item.get("type") == "constructor" else Miss(where, "'lc' without a constructor")
        )
    kind = kind_of(item)
    if kind is not None:
        base = kind.removesuffix("MessageChunk").removesuffix("Chunk").lower()
        if base not in TYPES and base != "chat":
            return Miss(where, f"type {kind!r} is not a LangChain message type")
        if not isinstance(item.get("data"), dict) and "content" not in item:
            return Miss(where, "a typed message without 'data' or 'content'")
        return None
    if isinstance(item.get("role"), str) and "content" in item:
        return None
    return Miss(where, "no LangChain 'type' and no 'role' with 'content'")


def read(document: Any, out: Out) -> None:
    """Read a list of messages, a LangGraph state, a list of stream values / updates, or an
    ``LLMResult`` (a model call's output: its first generation is the reply)."""
    if isinstance(document, dict) and "generations" in document:
        _read_llm_result(document["generations"], out)
        return
    if isinstance(document, dict) and "messages" in document:
        _read_list(document["messages"], "messages", out)
        return
    if isinstance(document, list) and document and all(_is_state(v) for v in document):
        _read_states(document, out)
        return
    if isinstance(document, list) and document and all(_is_update(v) for v in document):
        for i, update in enumerate(document):
            for node, state in update.items():
                _read_list(state["messages"], f"[{i}].{node}.messages", out)
        return
    if not isinstance(document, list):
        raise Problem(
            "",
            f"expected a list of messages or an object with 'messages', got {json_type(document)}",
        )
    _read_list(document, "", out)


def _read_llm_result(generations: Any, out: Out) -> None:
    """``generations[0][0]`` is the reply (its ``message``, else its ``text``); the other
    prompts' and candidates' generations are notes, as a response's other choices."""
    if not (isinstance(generations, list) and generations and isinstance(generations[0], list)):
        raise Problem("generations", "expected a list of lists of generations")
    for i, batch in enumerate(generations):
        if not isinstance(batch, list):
            raise Problem(f"generations[{i}]", f"expected a list, got {json_type(batch)}")
        for k, generation in enumerate(batch):
            where = f"generations[{i}][{k}]"
            if not isinstance(generation, dict):
                raise Problem(where, f"expected a generation object, got {json_type(generation)}")
            if (i, k) != (0, 0):
                out.note(where, "another generation",
                         "an LLMResult's other generations are not one conversation; "
                         "generations[0][0] is imported",
                         generation.get("message", generation.get("text", generation)))  # fmt: skip
            elif "message" in generation:
                at = f"{where}.message"
                out.add(message(generation["message"], at, out, PendingCalls()), at)
            elif isinstance(generation.get("text"), str):
                out.add({"role": "assistant", "content": generation["text"]}, where)
            else:
                raise Problem(where, "a generation without 'message' or 'text'")


def _is_state(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _is_update(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(_is_state(v) for v in value.values())


def _read_states(states: list[Any], out: Out) -> None:
    """``stream_mode="values"``: each state holds the conversation so far; read the last."""
    last = len(states) - 1
    _read_list(states[last]["messages"], f"[{last}].messages", out)
    kept = {json_text(m) for m in states[last]["messages"]}
    for i, state in enumerate(states[:last]):
        for k, message in enumerate(state["messages"]):
            if json_text(message) not in kept:
                out.note(
                    f"[{i}].messages[{k}]",
                    "message missing from the last state",
                    "an earlier stream value held it, the last one does not",
                    message,
                )


def _read_list(items: Any, prefix: str, out: Out) -> None:
    if not isinstance(items, list):
        raise Problem(prefix, f"expected a list, got {json_type(items)}")
    pending = PendingCalls()
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        out.add(message(item, where, out, pending), where)


def _named_result(item: dict[str, Any], where: str, pending: PendingCalls) -> Message | None:
    """A LangChain-JS tool result as Langfuse's JS handler writes it: ``role`` is the tool's
    name and there is no ``tool_call_id``; it answers the oldest open call of that name."""
    role = item.get("role")
    if not isinstance(role, str) or role in TYPES or "tool_call_id" in item or "type" in item:
        return None
    call_id = pending.answer(role)
    if call_id is None:
        return None  # not a result: the role is reported as unknown below
    content = item.get("content", "")
    if not isinstance(content, str | None):
        raise Problem(f"{where}.content", f"expected a string, got {json_type(content)}")
    return {"role": "tool", "content": content, "tool_call_id": call_id}


def _unwrap(item: dict[str, Any], where: str) -> tuple[str, dict[str, Any], str]:
    """``(role, fields, origin of the fields)`` of one message in any spelling."""
    if item.get("lc") == 1 and item.get("type") == "constructor":
        ids = item.get("id")
        cls = ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else None
        kwargs = item.get("kwargs", {})
        if not isinstance(kwargs, dict):
            raise Problem(f"{where}.kwargs", f"expected an object, got {json_type(kwargs)}")
        base = cls.removesuffix("Chunk") if cls else None
        if base is None and isinstance(kwargs.get("type"), str):  # LangSmith: "id": []
            return _type_role(kwargs["type"], kwargs, where), kwargs, f"{where}.kwargs"
        if base == "ChatMessage":
            return _chat_role(kwargs.get("role"), f"{where}.kwargs"), kwargs, f"{where}.kwargs"
        if base not in CLASSES:
            raise Problem(where, f"unknown LangChain class {cls!r}")
        return CLASSES[base], kwargs, f"{where}.kwargs"
    kind = kind_of(item)
    if "type" in item and kind is None:
        raise Problem(where, f"'type' must be a string, got {json_type(item['type'])}")
    if "data" in item and isinstance(item.get("data"), dict) and kind is not None:
        data = item["data"]
        return _type_role(kind, data, where), data, f"{where}.data"
    if kind is not None:
        return _type_role(kind, item, where), item, where
    if "role" in item:
        return _chat_role(item["role"], where), item, where
    raise Problem(where, "missing 'type'")


def _type_role(kind: str, data: dict[str, Any], where: str) -> str:
    base = kind.removesuffix("MessageChunk").removesuffix("Chunk").lower()
    if base == "chat":
        return _chat_role(data.get("role"), where)
    if base in TYPES:
        return TYPES[base]
    raise Problem(where, f"unknown message type {kind!r} (expected human, ai, system or tool)")


def _chat_role(role: Any, where: str) -> str:
    if isinstance(role, str) and role in TYPES:
        return TYPES[role]
    shown = repr(role)
    raise Problem(where, f"unknown role {shown} (expected user, assistant, system or tool)")


def message(item: Any, where: str, out: Out, pending: PendingCalls) -> Message:
    """One LangChain message, in any spelling, as a provider-flat message."""
    if not isinstance(item, dict):
        raise Problem(where, f"expected a message object, got {json_type(item)}")
    named = _named_result(item, where, pending)
    if named is not None:
        return named
    role, data, at = _unwrap(item, where)
    out.foreign(data, at, KNOWN, NAME)
    if data is item and item.get("data") not in (None, "", [], {}):  # not a typed message
        out.note(
            f"{where}.data",  # where is never empty: every message sits in a list
            "field 'data'",
            f"{NAME} reads 'data' only as the fields of a typed message",
            item["data"],
            unknown=True,
        )
    extra = data.get("additional_kwargs")
    extra = extra if isinstance(extra, dict) else {}
    _reasoning_notes(extra, at, out)
    calls = _calls(data, extra, at) if role == "assistant" else []
    for n, call in enumerate(calls):
        if isinstance(call["id"], list | dict):  # unhashable: it would crash the reader
            raise Problem(
                f"{at}.tool_calls[{n}].id",
                f"a tool call id is text, got {json_type(call['id'])}",
            )
    out.synthetic.update(
        c["id"] for c in calls if c["id"] == f"{at}.additional_kwargs.function_call"
    )
    call_ids = {json_text(c["id"]) for c in calls}  # ids may be any JSON: compare as text
    content = data.get("content", "")
    if isinstance(content, list):
        content = _parts(content, f"{at}.content", out, call_ids)
    elif isinstance(content, dict):
        content = object_content(
            content, f"{at}.content", out, f"{NAME} content is text or blocks; shown as its JSON"
        )
    elif content is not None and not isinstance(content, str):
        raise Problem(
            f"{at}.content",
            f"expected a string or a list of content parts, got {json_type(content)}",
        )
    if role == "function":
        name = data.get("name")
        call_id = pending.answer(name if isinstance(name, str) else None)
        if call_id is None:
            out.note(
                at, "function result without a call", "no earlier function_call is open", name or ""
            )
        return {"role": "tool", "content": content, "tool_call_id": call_id}
    result: Message = {"role": role, "content": content}
    if calls:
        result["tool_calls"] = calls
        if content == "":
            result["content"] = None
        for call in calls:
            if isinstance(call["id"], str):
                pending.declare(call["id"], call["function"]["name"])
    if role == "tool":
        if data.get("status") == "error" and isinstance(content, str):
            result["content"] = ERROR_PREFIX + content
        if "tool_call_id" in data:  # an id-less result is imported as such (MEM-1 judges it)
            if isinstance(data["tool_call_id"], list | dict):
                raise Problem(
                    f"{at}.tool_call_id",
                    f"a tool call id is text, got {json_type(data['tool_call_id'])}",
                )
            result["tool_call_id"] = data["tool_call_id"]
    return result


def _reasoning_notes(extra: dict[str, Any], at: str, out: Out) -> None:
    """Reasoning a provider integration keeps in ``additional_kwargs``: a note with its text."""
    for key in ("reasoning", "reasoning_content", "thinking"):
        value = extra.get(key)
        if value in (None, "", [], {}):
            continue
        texts: list[str] = []  # a summary's texts; a string is noted as it is
        if isinstance(value, dict):
            summary = value.get("summary")
            for item in summary if isinstance(summary, list) else ():
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    texts.append(item["text"])
        out.note(
            f"{at}.additional_kwargs.{key}",
            "reasoning",
            "model reasoning is not a conversation message",
            "\n".join(texts) if texts else value,
        )


def _calls(data: dict[str, Any], extra: dict[str, Any], at: str) -> list[dict[str, Any]]:
    """Tool calls: ``tool_calls`` (+ ``invalid_tool_calls``), else the OpenAI ones in
    ``additional_kwargs``, and a legacy ``additional_kwargs.function_call``."""
    calls: list[dict[str, Any]] = []
    raw = data.get("tool_calls")
    if raw:
        if not isinstance(raw, list):
            raise Problem(f"{at}.tool_calls", f"expected a list, got {json_type(raw)}")
        calls = [openai_call(c, f"{at}.tool_calls[{k}]") for k, c in enumerate(raw)]
    elif extra.get("tool_calls"):
        raw = extra["tool_calls"]
        if not isinstance(raw, list):
            raise Problem(
                f"{at}.additional_kwargs.tool_calls", f"expected a list, got {json_type(raw)}"
            )
        calls = [
            openai_call(c, f"{at}.additional_kwargs.tool_calls[{k}]") for k, c in enumerate(raw)
        ]
    invalid = data.get("invalid_tool_calls")
    if isinstance(invalid, list):
        calls.extend(openai_call(c, f"{at}.invalid_tool_calls[{k}]") for k, c in enumerate(invalid))
    legacy = extra.get("function_call")
    if isinstance(legacy, dict) and not calls:
        where = f"{at}.additional_kwargs.function_call"
        calls.append(
            {
                "id": where,
                "type": "function",
                "function": {
                    "name": legacy.get("name"),
                    "arguments": arguments_text(legacy.get("arguments")),
                },
            }
        )
    return calls


def _parts(parts: list[Any], where: str, out: Out, call_ids: set[Any]) -> str:
    """Content blocks: call blocks that repeat ``tool_calls`` are dropped, others noted."""
    texts: list[str] = []
    for k, part in enumerate(parts):
        at = f"{where}[{k}]"
        kind = kind_of(part) if isinstance(part, dict) else None
        if kind in CALL_PARTS and isinstance(part, dict):
            if json_text(part.get("id")) not in call_ids:
                out.note(
                    at,
                    f"{kind} block not in tool_calls",
                    "LangChain reads calls from tool_calls; this block declares one it lacks",
                    part,
                )
            continue
        text = _one_part(part, at, out)
        if text is not None:
            texts.append(text)
    return "\n".join(texts)


def _one_part(part: Any, at: str, out: Out) -> str | None:
    """One content block's text (``None`` when it was left out as a note)."""
    sub = Out()
    try:
        text = parts_text(
            [part], "", sub, NAME, {"text": "text"}, MEDIA, LEFT_OUT_PARTS, strings=True
        )
    except Problem as problem:
        raise Problem(at, problem.what) from None
    for note in sub.notes:
        out.notes.append(replace(note, where=at))
    if sub.notes and not text:
        return None
    return text
