"""Gemini CLI sessions as JSON: a chat recording, or the prompt log ``logs.json``.

A chat recording (``~/.gemini/tmp/<project>/chats/session-*.json``, what the
CLI wrote before its JSON Lines variant, :mod:`.gemini_cli_jsonl`) is
``{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...]}``.
Each message record has ``id``, ``timestamp``, ``type`` and ``content`` (a
string, a Gemini part, or a list of parts or strings):

- ``user``: a user message (``displayContent``, what the terminal showed
  instead, is not what the model got and is not read);
- ``gemini``: an assistant message; its ``toolCalls`` (``id``, ``name``,
  ``args``, ``result``, ``status``) are its calls, and each call's ``result``
  (``functionResponse`` parts, maybe followed by text parts) is a tool
  message, flagged ``[error]`` when the call's status is ``error`` or
  ``cancelled``; ``thoughts`` (``subject``, ``description``) are a note;
- ``info``, ``error``, ``warning``: what the CLI printed, a note each.

The recording's ``summary`` (the CLI's title of the session) is a note.

``logs.json`` (``~/.gemini/tmp/<project>/logs.json``) is the CLI's log of
what the user typed: a list of ``{"sessionId", "messageId", "type": "user",
"message", "timestamp"}``. It holds the user's side of the conversation
only, so it reads as those user messages in order (of every session it
holds; a note says where each further session starts).
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers import _gemini as gemini
from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_text,
    json_type,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "gemini-cli"
EXPECTS = (
    "a Gemini CLI chat recording {'sessionId', 'messages': [{'id', 'type': 'user'|'gemini'|"
    "'info', 'content', 'toolCalls'}]} or logs.json [{'sessionId', 'messageId', 'type', "
    "'message'}]"
)

#: The record types the CLI writes; only ``user`` and ``gemini`` are conversation.
TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def is_type(value: Any) -> bool:
    """Whether ``value`` is a record type of :data:`TYPES` (a list or object is not, and
    cannot be looked up in a set)."""
    return isinstance(value, str) and value in TYPES


SPOKEN = frozenset({"user", "gemini"})
LOG_KEYS = ("sessionId", "messageId", "type", "message")


def claims(document: Any) -> Verdict:
    """A recording (an object whose ``messages`` are all records with a ``type`` the CLI
    writes, one of them ``user`` or ``gemini``) or a ``logs.json`` list."""
    if isinstance(document, list):
        return _log_verdict(document)
    if not isinstance(document, dict):
        return Miss("", f"expected a chat recording object, got {json_type(document)}")
    missed = records_miss(document.get("messages"), "messages")
    return missed or Claim("a chat recording")


def records_miss(records: Any, where: str) -> Miss | None:
    """``None`` when ``records`` is a list of message records with a spoken one."""
    if not isinstance(records, list) or not records:
        return Miss(where, "no 'messages' list of records")
    for k, record in enumerate(records):
        if not (isinstance(record, dict) and is_type(record.get("type")) and "content" in record):
            return Miss(f"{where}[{k}]", "not a record {'type': 'user'|'gemini'|..., 'content'}", k)
    if not any(record["type"] in SPOKEN for record in records):  # every record is the CLI's
        return Miss(where, "no 'user' or 'gemini' record", 100 + len(records))
    return None


def _log_verdict(document: list[Any]) -> Verdict:
    if not document:
        return Miss("", "an empty list")
    for k, entry in enumerate(document):
        if not (isinstance(entry, dict) and all(key in entry for key in LOG_KEYS)):
            return Miss(
                f"[{k}]", "not a logs.json entry {'sessionId', 'messageId', 'type', 'message'}", k
            )
        if not isinstance(entry["message"], str) or not isinstance(entry["messageId"], int):
            return Miss(f"[{k}]", "a logs.json entry's 'message' is text, 'messageId' a number", k)
    return Claim("logs.json")


def read(document: Any, out: Out) -> None:
    """Read a chat recording or a ``logs.json``."""
    verdict = claims(document)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    if isinstance(document, list):
        _log(document, out)
        return
    read_records([(record, f"messages[{k}]") for k, record in enumerate(document["messages"])], out)
    summary_note(document, "", out)


def summary_note(metadata: dict[str, Any], where: str, out: Out) -> None:
    """The session's ``summary`` (the CLI's one-line title of it) as a note."""
    summary = metadata.get("summary")
    if isinstance(summary, str) and summary.strip():
        out.note(f"{where}summary", "session summary", "the CLI's title of the session, not a "
                 "conversation message", summary)  # fmt: skip


def _log(entries: list[dict[str, Any]], out: Out) -> None:
    session = entries[0]["sessionId"]
    for k, entry in enumerate(entries):
        where = f"[{k}]"
        if entry["sessionId"] != session:
            session = entry["sessionId"]
            out.note(where, "another session", "logs.json holds the prompts of several "
                     "sessions; this one starts here", session)  # fmt: skip
        if entry["type"] != "user":
            out.note(where, f"{entry['type']} entry", "the log records the user's prompts only",
                     entry["message"], unknown=True)  # fmt: skip
            continue
        out.add({"role": "user", "content": entry["message"]}, f"{where}.message")


def read_records(records: list[tuple[dict[str, Any], str]], out: Out) -> None:
    """Read message records (each with its origin), in order."""
    pending = PendingCalls()
    for record, where in records:
        kind = record.get("type")
        if kind not in SPOKEN:
            out.note(where, f"{kind} message", "what the CLI printed, not a conversation message",
                     record.get("content"))  # fmt: skip
            continue
        _thoughts(record, where, out)
        parts = _parts(record.get("content"), f"{where}.content")
        said = Out()
        if parts:
            role = "user" if kind == "user" else "model"
            gemini._content({"role": role, "parts": parts}, f"{where}.content", said, pending)
        message = _spoken(said, where)
        calls = record.get("toolCalls")
        if kind == "gemini" and calls not in (None, []):
            _calls(calls, where, message, out, said)
        elif message is not None:
            out.add(message, where)
        else:
            out.note(where, f"empty {kind} message", "the record holds no text and no call",
                     record.get("content"))  # fmt: skip
        for tool_message, origin in zip(said.messages, said.origins, strict=True):
            out.add(tool_message, origin)  # functionResponse parts of the content itself
        out.notes.extend(said.notes)
        out.synthetic |= said.synthetic


def _spoken(said: Out, where: str) -> Message | None:
    """The record's own message (of its text and content calls); ``None`` when it said
    nothing. Tool messages the content held (``functionResponse`` parts) are kept in
    ``said`` for the caller to place."""
    own = [m for m in said.messages if m.get("role") != "tool"]
    if len(own) > 1:  # one content: gemini._content makes at most one such message
        raise Problem(where, "a record that reads as several messages")
    if own:
        k = said.messages.index(own[0])
        del said.messages[k], said.origins[k]
        return own[0]
    return None


def _calls(calls: Any, where: str, message: Message | None, out: Out, said: Out) -> None:
    """A ``gemini`` record's ``toolCalls``: its calls, then one tool message per result."""
    if not isinstance(calls, list):
        raise Problem(f"{where}.toolCalls", f"expected a list, got {json_type(calls)}")
    assistant: Message = message or {"role": "assistant", "content": None}
    declared = list(assistant.get("tool_calls") or [])
    known = {c.get("id") for c in declared}
    results: list[tuple[Message, str]] = []
    for k, call in enumerate(calls):
        at = f"{where}.toolCalls[{k}]"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise Problem(at, "expected a tool call {'id', 'name', 'args'}")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = at
            out.synthetic.add(at)
        if call_id not in known:
            declared.append({"id": call_id, "type": "function",
                             "function": {"name": call["name"],
                                          "arguments": arguments_text(call.get("args"))}})  # fmt: skip
            known.add(call_id)
        result = _result(call, at)
        if result is not None:
            results.append(({"role": "tool", "content": result, "tool_call_id": call_id},
                            f"{at}.result"))  # fmt: skip
        else:
            out.note(at, "tool call without a result",
                     f"the CLI recorded no result (status {call.get('status')!r})", call)  # fmt: skip
    assistant["tool_calls"] = declared
    out.add(assistant, where)
    for result_message, origin in results:
        out.add(result_message, origin)


def _result(call: dict[str, Any], at: str) -> str | None:
    """A call's result as the tool message's text: each ``functionResponse``'s ``response``
    (as JSON text), then any text parts; ``None`` when there is none."""
    parts = _parts(call.get("result"), f"{at}.result")
    if not parts:
        return None
    texts: list[str] = []
    for part in parts:
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            texts.append(body if isinstance(body, str) else json_text(body))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            texts.append(json_text(part))
    text = "\n".join(texts)
    return ERROR_PREFIX + text if call.get("status") in ("error", "cancelled") else text


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    """A ``PartListUnion`` as a list of part objects (a string is one text part)."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if not isinstance(content, list):
        raise Problem(where, f"expected text or parts, got {json_type(content)}")
    parts = []
    for k, part in enumerate(content):
        if isinstance(part, str):
            parts.append({"text": part})
        elif isinstance(part, dict):
            parts.append(part)
        else:
            raise Problem(f"{where}[{k}]", f"expected a part, got {json_type(part)}")
    return parts


def _thoughts(record: dict[str, Any], where: str, out: Out) -> None:
    thoughts = record.get("thoughts")
    if not isinstance(thoughts, list) or not thoughts:
        return
    texts = [
        f"{t.get('subject', '')}: {t.get('description', '')}" if isinstance(t, dict) else str(t)
        for t in thoughts
    ]
    out.note(f"{where}.thoughts", "thoughts", "model reasoning is not a conversation message",
             "\n".join(texts))  # fmt: skip
