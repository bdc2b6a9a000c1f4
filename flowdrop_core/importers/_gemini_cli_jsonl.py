"""Gemini CLI chat recordings as JSON Lines (``chats/session-*.jsonl``).

The CLI appends one JSON object per line: a metadata line (``sessionId``,
``projectHash``, ``startTime``, ...), message records (as in
:mod:`.gemini_cli`: ``id``, ``type``, ``content``, ``toolCalls``, ...),
``{"$set": {...}}`` metadata updates and ``{"$rewindTo": id}`` markers. It is
a log of updates, folded as the CLI's own ``loadConversationRecord`` does:

- a record whose ``id`` was seen before replaces it in place (the CLI
  rewrites a message in full when its tool calls or tokens change);
- ``$rewindTo`` drops that message and every one after it (all of them when
  the id is unknown): each dropped record is a located note ("rewound");
- a ``$set`` whose ``messages`` is a non-empty list replaces the conversation
  with it (the records before it are notes).

The session's ``summary`` (on the metadata line or a ``$set``) is a note.
Origins name the line of the record that holds the message (``line 6``,
``line 6: toolCalls[0].result``). Metadata lines carry no conversation.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers import _gemini_cli as gemini_cli
from flowdrop_core.importers._base import Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict, lines_of

NAME = "gemini-cli-jsonl"
EXPECTS = (
    "Gemini CLI chat recording lines: a {'sessionId', 'projectHash'} line, then records "
    "{'id', 'type': 'user'|'gemini'|..., 'content'}, {'$set'} and {'$rewindTo'}"
)


def _record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and gemini_cli.is_type(value.get("type"))
        and "content" in value
    )


def _marker(value: Any) -> bool:
    return isinstance(value, dict) and (
        "$set" in value or "$rewindTo" in value or ("sessionId" in value and "id" not in value)
    )


def claims(lines: list[Line]) -> Verdict:
    """Every line is a record, a ``$set`` / ``$rewindTo`` or a metadata line (an object
    with ``sessionId``); one is a ``user`` or ``gemini`` record, and one is not a record."""
    for k, (number, value) in enumerate(lines):
        if isinstance(value, LineProblem):
            return Miss(f"line {number}", value.what, k)
        if not (_record(value) or _marker(value)):
            return Miss(f"line {number}", "not a record {'id', 'type', 'content'}, a "
                        "{'$set'} / {'$rewindTo'} or a {'sessionId'} line", k)  # fmt: skip
    if not any(_record(v) and v["type"] in gemini_cli.SPOKEN for _, v in lines):
        return Miss("", "no 'user' or 'gemini' record", len(lines))
    if not any(_marker(v) for _, v in lines):
        return Miss("", "no metadata, '$set' or '$rewindTo' line", len(lines))
    return Claim("a chat recording")


def read_text(text: str, out: Out) -> None:
    """Read every line (blank lines skipped)."""
    read_lines(lines_of(text), out)


def read_lines(lines: list[Line], out: Out) -> None:
    """Fold the records as the CLI does, then read the conversation it leaves."""
    verdict = claims(lines)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    live: dict[str, tuple[dict[str, Any], str]] = {}  # id -> (record, origin), in first order
    replaced: tuple[list[Any], str] | None = None
    summary: tuple[dict[str, Any], str] | None = None
    for number, value in lines:
        where = f"line {number}"
        if _record(value):
            live[value["id"]] = (value, where)
        elif "sessionId" in value and "summary" in value:
            summary = (value, f"{where}: ")
        elif "$rewindTo" in value:
            target = value["$rewindTo"]
            ids = list(live)
            dropped = ids[ids.index(target) :] if target in live else ids
            for record_id in dropped:
                record, origin = live.pop(record_id)
                out.note(origin, "rewound message", f"the session was rewound at {where} "
                         f"(to {target!r})", record.get("content"))  # fmt: skip
        elif isinstance(value.get("$set"), dict):
            if isinstance(value["$set"].get("summary"), str):
                summary = (value["$set"], f"{where}: $set.")
            messages = value["$set"].get("messages")
            if isinstance(messages, list) and messages:
                replaced = (messages, f"{where}: $set.messages")
    if replaced is not None:
        messages, prefix = replaced
        for record, origin in live.values():
            out.note(origin, "message replaced by $set", f"{prefix} replaces the conversation",
                     record.get("content"))  # fmt: skip
        for k, record in enumerate(messages):
            if not isinstance(record, dict):
                raise Problem(f"{prefix}[{k}]", f"expected a record, got {json_type(record)}")
        gemini_cli.read_records([(r, f"{prefix}[{k}]") for k, r in enumerate(messages)], out)
    else:
        read = Out()
        gemini_cli.read_records(list(live.values()), read)
        out.extend(read, _local)
    if summary is not None:
        gemini_cli.summary_note(*summary, out)


def _local(origin: str) -> str:
    """``line 6.toolCalls[0]`` (a record's origin joined to a field) -> ``line 6: toolCalls[0]``."""
    head, dot, rest = origin.partition(".")
    return f"{head}: {rest}" if dot and head.startswith("line ") else origin
