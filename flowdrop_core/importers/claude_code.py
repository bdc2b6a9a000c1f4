"""Claude Code session JSONL (``~/.claude/projects/*/SESSION.jsonl``).

One event per line. ``user`` and ``assistant`` events carry an Anthropic
message in ``message`` (content a string or blocks), read as the
``anthropic`` format reads it; each line is its own message (Claude Code
writes one line per streamed block, so an answer with text and a tool call is
two assistant messages). Other events (``summary``, ``system``,
``file-history-snapshot``, ...) are notes. ``toolUseResult`` repeats the
``tool_result`` block for the UI and is not read.
"""

from __future__ import annotations

from flowdrop_core.importers import anthropic
from flowdrop_core.importers.base import Out, Problem, json_type
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "claude-code"
EXPECTS = "JSON lines of session events {'type': 'user'|'assistant', 'message': {role, content}, 'uuid', ...}"


def read_text(text: str, out: Out) -> None:
    """Read every line; at least one must be a user or assistant event.

    A session log is appended to as Claude Code runs (a crash can cut its last
    line): a line that is not a readable event is a located note with the
    line's text, not a reason to refuse the whole session.
    """
    messages = 0
    first: Problem | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        event = Out()
        try:
            read = _event(line, where, event)
        except Problem as problem:
            first = first or problem
            why = str(problem).removeprefix(f"{where}: ")
            out.note(where, "unreadable line", why, line, unknown=True)
            continue
        out.extend(event)
        messages += read
    if not messages:  # not a session: say why its first unreadable line is not an event
        raise first or Problem("", "no user or assistant event")


def _event(line: str, where: str, out: Out) -> int:
    """One line: 1 when it held a user or assistant message, else 0 (a note)."""
    try:
        event = parse_json(line, column_only=True)
    except JSONProblem as exc:
        raise Problem(where, str(exc)) from None
    if not isinstance(event, dict):
        raise Problem(where, f"expected an event object, got {json_type(event)}")
    kind = event.get("type")
    if not isinstance(kind, str):
        raise Problem(where, "event without a string 'type'")
    if kind in ("user", "assistant"):
        message = event.get("message")
        if not isinstance(message, dict):
            raise Problem(where, f"{kind} event without a 'message' object")
        if message.get("role") != kind:
            raise Problem(f"{where}: message", f"role {message.get('role')!r} in a {kind} event")
        anthropic.read_message(message, f"{where}: message", out)
        return 1
    text_value = event.get("summary", event.get("content", ""))
    out.note(
        where,
        f"{kind} event",
        "not a conversation message",
        text_value if isinstance(text_value, str) and text_value else event,
    )
    return 0
