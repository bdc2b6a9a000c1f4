"""Claude Code session JSONL (``~/.claude/projects/*/SESSION.jsonl``).

One event per line. ``user`` and ``assistant`` events carry an Anthropic
message in ``message`` (content a string or blocks), read as the
``anthropic`` format reads it. Claude Code writes one line per streamed block
of an answer, each with the answer's message id: assistant lines with the
same id are one assistant message again (origin ``line 4: message+line 6:
message``), also when a ``progress`` or other non-message line comes between
them. A ``message`` without ``role`` takes the event's ``type``. Other events (``summary``, ``system``,
``file-history-snapshot``, ...) are notes. ``toolUseResult`` repeats the
``tool_result`` block for the UI and is not read.

A session that was rewound (Esc Esc, or an edited prompt) keeps the abandoned
lines: each line names its parent (``parentUuid``; a compact boundary, which
has none, its ``logicalParentUuid``), and a rewind makes two user prompts with
one parent. The live conversation is the chain that ends at the last line with
a ``uuid``; every line of a branch that left it at a user prompt is a located
note ("abandoned branch"), not a message. Tool results that share a parent
answer one turn's calls: they are no rewind. See :func:`abandoned_lines`.
"""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core.importers import _anthropic as anthropic
from flowdrop_core.importers._base import Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "claude-code"
EXPECTS = "JSON lines of session events {'type': 'user'|'assistant', 'message': {role, content}, 'uuid', ...}"

#: Unreadable lines before any message after which the file is not a session at all.
#: A session opens with its events (summaries are notes, not unreadable); without this,
#: detection would read every line of any other JSON Lines file as a note first.
GIVE_UP_AFTER = 20
#: A line's parent as Claude Code writes it (compact JSON); only a hint that some two lines
#: share a parent, so that a session that never forked is not parsed twice.
_PARENT = re.compile(r'"(?:parentUuid|logicalParentUuid)"\s*:\s*"([^"]*)"')


def claims(lines: list[Line]) -> Verdict:
    """A session: some line is a ``user`` or ``assistant`` event with a ``message`` object,
    within the first :data:`GIVE_UP_AFTER` lines that are not such events."""
    for others, (_number, event) in enumerate(lines, start=1):
        if (
            isinstance(event, dict)
            and event.get("type") in ("user", "assistant")
            and isinstance(event.get("message"), dict)
        ):
            return Claim("a session log")
        if others >= GIVE_UP_AFTER:
            break
    where = f"line {lines[0][0]}" if lines else ""
    return Miss(where, "no line is a 'user' or 'assistant' event with a 'message' object")


def read_text(text: str, out: Out) -> None:
    """Read every line; at least one must be a user or assistant event.

    A session log is appended to as Claude Code runs (a crash can cut its last
    line): a line that is not a readable event is a located note with the
    line's text, not a reason to refuse the whole session.
    """
    messages = unreadable = 0
    first: Problem | None = None
    streaming: Any = None  # the API message id of the assistant message being assembled
    rows = text.split("\n")
    values: dict[int, Any] = {}  # each line parsed once: for the branches, then the events
    for number, line in enumerate(rows, start=1):
        if line.strip():
            try:
                values[number] = parse_json(line, column_only=True)
            except JSONProblem as exc:
                values[number] = LineProblem(str(exc))
    abandoned = abandoned_lines(values, text)
    for number, line in enumerate(rows, start=1):
        if number not in values:
            continue
        where = f"line {number}"
        if number in abandoned:
            what, content, why = abandoned[number]
            out.note(where, f"abandoned branch: {what}", why, content)
            continue
        event = Out()
        try:
            read, message_id = _event(values[number], where, event)
        except Problem as problem:
            first = first or problem
            unreadable += 1
            if not messages and unreadable >= GIVE_UP_AFTER:
                raise first from None
            why = str(problem).removeprefix(f"{where}: ")
            out.note(where, "unreadable line", why, line, unknown=True)
            continue
        if message_id is not None and message_id == streaming and event.messages:
            _merge(out, event)
        else:
            out.extend(event)
        if read:  # a progress or system line between two blocks of one answer does not end it
            streaming = message_id
        messages += read
    if not messages:  # not a session: say why its first unreadable line is not an event
        raise first or Problem("", "no user or assistant event")


def _merge(out: Out, event: Out) -> None:
    """Claude Code writes each block of one streamed answer on its own line, all with the
    answer's message id: they are one assistant message again (texts, then calls)."""
    into, part = out.messages[-1], event.messages[0]
    texts = [t for t in (into.get("content"), part.get("content")) if t]
    calls = [*into.get("tool_calls", ()), *part.get("tool_calls", ())]
    into["content"] = "\n".join(texts) if texts or not calls else None
    if calls:
        into["tool_calls"] = calls
    out.origins[-1] += f"+{event.origins[0]}"
    out.notes.extend(event.notes)


def _event(event: Any, where: str, out: Out) -> tuple[int, Any]:
    """One parsed line: (1 when it held a user or assistant message, else 0 (a note);
    the API message id of an assistant message made of one message, else ``None``)."""
    if isinstance(event, LineProblem):
        raise Problem(where, event.what)
    if not isinstance(event, dict):
        raise Problem(where, f"expected an event object, got {json_type(event)}")
    kind = event.get("type")
    if not isinstance(kind, str):
        raise Problem(where, "event without a string 'type'")
    if kind in ("user", "assistant"):
        message = event.get("message")
        if not isinstance(message, dict):
            raise Problem(where, f"{kind} event without a 'message' object")
        if "role" not in message:  # the event's type says whose message it is
            message = {**message, "role": kind}
        elif message["role"] != kind:
            raise Problem(f"{where}: message", f"role {message.get('role')!r} in a {kind} event")
        anthropic.read_message(message, f"{where}: message", out)
        message_id = message.get("id") if kind == "assistant" and len(out.messages) == 1 else None
        return 1, message_id if isinstance(message_id, str) and message_id else None
    text_value = event.get("summary", event.get("content", ""))
    out.note(
        where,
        f"{kind} event",
        "not a conversation message",
        text_value if isinstance(text_value, str) and text_value else event,
    )
    return 0, None


def abandoned_lines(values: dict[int, Any], text: str) -> dict[int, tuple[str, Any, str]]:
    """The lines of branches a rewind left: line number -> (what, content, why).

    The live chain runs from the last line with a ``uuid`` up through each
    ``parentUuid`` (or ``logicalParentUuid`` where the parent is null). A line
    off that chain whose parent is on it starts an abandoned branch when it is a
    user prompt (a ``user`` event with no ``tool_result`` block): then it and
    every line below it are abandoned. Empty when the session never forked.
    """
    parents = _PARENT.findall(text)
    if len(parents) == len(set(parents)):  # no two lines with one parent: no fork (fast path)
        return {}
    events = {
        number: event
        for number, event in values.items()
        if isinstance(event, dict) and isinstance(event.get("uuid"), str)
    }
    if not events:
        return {}
    line_of = {event["uuid"]: number for number, event in events.items()}

    def parent(event: dict[str, Any]) -> Any:
        up = event.get("parentUuid")
        return up if up is not None else event.get("logicalParentUuid")

    leaf = max(events)
    live: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in live:
        live.add(at)
        at = line_of.get(parent(events[at]))
    children: dict[int, list[int]] = {}
    for number, event in events.items():
        up = line_of.get(parent(event))
        if up is not None:
            children.setdefault(up, []).append(number)
    found: dict[int, tuple[str, Any, str]] = {}
    for fork in sorted(live):
        for root in children.get(fork, ()):
            if root in live or not _prompt(events[root]):
                continue
            why = (
                f"the session was rewound to line {fork}; the live conversation is the "
                f"parentUuid chain ending at line {leaf}"
            )
            stack = [root]
            while stack:
                number = stack.pop()
                if number in found or number in live:
                    continue
                found[number] = (*_left(events[number]), why)
                stack.extend(children.get(number, ()))
    return found


def _prompt(event: dict[str, Any]) -> bool:
    """A user event that is a prompt (not the results of a turn's tool calls)."""
    message = event.get("message")
    if event.get("type") != "user" or not isinstance(message, dict):
        return False
    content = message.get("content")
    return not (
        isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _left(event: dict[str, Any]) -> tuple[str, Any]:
    """What an abandoned line was, and its content as a note keeps it (its text if plain)."""
    kind = event.get("type")
    message = event.get("message")
    if not isinstance(message, dict):
        return f"{kind} event", event
    content = message.get("content")
    if isinstance(content, list):
        blocks = [b.get("text") for b in content if isinstance(b, dict)]
        texts = [t for t in blocks if isinstance(t, str)]
        if texts and len(texts) == len(blocks):
            content = "\n".join(texts)
    return f"{kind} message", content
