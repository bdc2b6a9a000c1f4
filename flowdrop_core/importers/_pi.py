"""The pi coding agent's session JSONL (badlogic/pi-mono, ``~/.pi/agent/sessions/``).

The first line is the header ``{"type": "session", "id", "cwd", ...}`` (a
``version``: 1 is a linear list of entries, 2 and 3 a tree). Each further
line is an entry: ``message`` (``message`` is an ``AgentMessage``),
``model_change``, ``thinking_level_change``, ``compaction``,
``branch_summary``, ``custom``, ``custom_message``, ``label`` or
``session_info``. Messages:

- ``user``: ``content`` text or ``text`` / ``image`` blocks;
- ``assistant``: ``text``, ``thinking`` (a note) and ``toolCall`` blocks
  (``id``, ``name``, ``arguments``); ``errorMessage`` is a note;
- ``toolResult``: a tool message for ``toolCallId`` (``[error] `` first when
  ``isError``);
- ``bashExecution`` (a command the user ran with ``!``): a user message of
  the command and its output, as pi sends it, unless ``excludeFromContext``;
- ``custom`` / ``hookMessage`` and ``custom_message`` entries: user messages
  (pi sends them to the model); ``branchSummary`` / ``compactionSummary``:
  notes.

In a tree (entries with ``id`` / ``parentId``), the conversation is the path
from the last entry up to the root, as pi rebuilds it on resume; every entry
off that path is a located note ("another branch"). A ``compaction`` entry
is a note with its summary: the messages it summarized stay, since the file
keeps them. Origins read ``line 3`` (``line 3: content[1]``).
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    Problem,
    arguments_text,
    json_type,
    marker,
)
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict, lines_of

NAME = "pi"
EXPECTS = (
    "pi session lines: a {'type': 'session'} header, then entries {'type': 'message', "
    "'message': {'role': 'user'|'assistant'|'toolResult'|..., 'content'}}, ..."
)

#: Entries with no conversation content (settings, bookkeeping).
QUIET = frozenset({"model_change", "thinking_level_change", "label", "session_info", "custom"})


def claims(lines: list[Line]) -> Verdict:
    """A header line ``{"type": "session"}`` and a ``message`` entry with a ``role``; every
    line an object with a string ``type``."""
    first = lines[0][1] if lines else None
    if not (isinstance(first, dict) and first.get("type") == "session"):
        return Miss("line 1" if lines else "", "no {'type': 'session'} header first", 0)
    for k, (number, value) in enumerate(lines):
        if isinstance(value, LineProblem):
            return Miss(f"line {number}", value.what, k)
        if not (isinstance(value, dict) and isinstance(value.get("type"), str)):
            return Miss(f"line {number}", "not an entry {'type', ...}", k)
    if not any(
        value["type"] == "message"
        and isinstance(value.get("message"), dict)
        and "role" in value["message"]
        for _, value in lines
    ):
        return Miss("", "no 'message' entry with a role", len(lines))
    return Claim("a pi session")


def read_text(text: str, out: Out) -> None:
    """Read every line (blank lines skipped)."""
    read_lines(lines_of(text), out)


def read_lines(lines: list[Line], out: Out) -> None:
    """Read the conversation: the path to the last entry in a tree, else every entry."""
    verdict = claims(lines)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    entries = lines[1:]
    live = _path(entries)
    for number, entry in entries:
        where = f"line {number}"
        if live is not None and number not in live:
            out.note(where, "another branch", "an entry off the path to the session's last "
                     "entry (pi resumes that path)", _text(entry))  # fmt: skip
            continue
        _entry(entry, where, out)
    if not out.messages:
        raise Problem("", "no message in the session")


def _path(entries: list[Line]) -> set[int] | None:
    """The line numbers on the path from the last entry to the root; ``None`` for a linear
    (version 1) session, whose entries have no ``id``."""
    ids = {e.get("id"): n for n, e in entries if isinstance(e.get("id"), str)}
    if not ids or not any("parentId" in e for _, e in entries):
        return None
    path: set[int] = set()
    at: int | None = entries[-1][0]
    by_number = dict(entries)
    while at is not None and at not in path:
        path.add(at)
        at = ids.get(by_number[at].get("parentId"))
    return path


def _entry(entry: dict[str, Any], where: str, out: Out) -> None:
    kind = entry["type"]
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            raise Problem(f"{where}.message", f"expected a message, got {json_type(message)}")
        _message(message, where, out)
    elif kind == "custom_message":
        out.add({"role": "user", "content": _content(entry.get("content"), where, out)}, where)
    elif kind in ("compaction", "branch_summary"):
        out.note(where, f"{kind} entry", "pi's summary of earlier or abandoned turns",
                 entry.get("summary", entry))  # fmt: skip
    elif kind not in QUIET:
        out.note(where, f"{kind} entry", f"{NAME} has no such entry type", entry, unknown=True)


def _message(message: dict[str, Any], where: str, out: Out) -> None:
    role = message.get("role")
    if role == "user":
        out.add({"role": "user", "content": _content(message.get("content"), where, out)}, where)
    elif role == "assistant":
        _assistant(message, where, out)
    elif role == "toolResult":
        text = _content(message.get("content"), where, out)
        if message.get("isError") is True:
            text = ERROR_PREFIX + text
        out.add({"role": "tool", "content": text, "tool_call_id": message.get("toolCallId")}, where)
    elif role == "bashExecution":
        text = f"Ran `{message.get('command')}`\n{message.get('output', '')}"
        if message.get("excludeFromContext") is True:
            out.note(where, "bash execution", "excluded from the model's context (!!)", text)
        else:
            out.add({"role": "user", "content": text}, where)
    elif role in ("custom", "hookMessage"):
        out.add({"role": "user", "content": _content(message.get("content"), where, out)}, where)
    elif role in ("branchSummary", "compactionSummary"):
        out.note(where, f"{role} message", "pi's summary of earlier or abandoned turns",
                 message.get("summary", message))  # fmt: skip
    else:
        raise Problem(f"{where}: message", f"unknown role {role!r}")


def _assistant(message: dict[str, Any], where: str, out: Out) -> None:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for k, block in enumerate(blocks):
        at = f"{where}: content[{k}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "thinking":
            out.note(at, "thinking block", "model reasoning is not a conversation message",
                     block.get("thinking", block))  # fmt: skip
        elif kind == "toolCall":
            calls.append({"id": block.get("id"), "type": "function",
                          "function": {"name": block.get("name"),
                                       "arguments": arguments_text(block.get("arguments"))}})  # fmt: skip
        else:
            texts.append(marker(str(kind)))
            out.note(at, f"unknown block type {kind!r}", f"{NAME} has no such block; shown "
                     "as a marker", block, unknown=True)  # fmt: skip
    error = message.get("errorMessage")
    if isinstance(error, str) and error:
        out.note(f"{where}: message.errorMessage", "model error",
                 f"the model call ended with stopReason {message.get('stopReason')!r}", error)  # fmt: skip
    if not texts and not calls:
        if error:
            return
        out.note(where, "empty assistant message", "no text and no tool call", message)
        return
    built: Message = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        built["tool_calls"] = calls
    out.add(built, where)


def _content(content: Any, where: str, out: Out) -> str:
    """User-side content: text, or ``text`` / ``image`` blocks (an image is a marker)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise Problem(f"{where}: content", f"expected text or blocks, got {json_type(content)}")
    texts = []
    for k, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            texts.append(marker("image", block.get("mimeType")))
        else:
            texts.append(marker(str(kind)))
            out.note(f"{where}: content[{k}]", f"unknown block type {kind!r}",
                     f"{NAME} has no such block; shown as a marker", block, unknown=True)  # fmt: skip
    return "\n".join(texts)


def _text(entry: dict[str, Any]) -> Any:
    """An off-path entry as its note keeps it: its message's text when it is plain."""
    message = entry.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return message["content"]
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        blocks = [b.get("text") for b in message["content"] if isinstance(b, dict)]
        texts = [t for t in blocks if isinstance(t, str)]
        if texts and len(texts) == len(blocks):
            return "\n".join(texts)
    return entry
