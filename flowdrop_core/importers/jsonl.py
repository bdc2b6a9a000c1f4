"""JSON Lines: one message, or one whole conversation, per line.

A line holding a list, or an object with a conversation key (``messages``,
``input``, ``contents``, ...) and no ``role`` or ``type``, is a whole
conversation, read in the JSON format that fits it best; its origins read
``line 3: messages[1]``. Consecutive single-message lines are read together
as one list (so Responses ``function_call`` lines still fold), in the format
that fits them all best; their origins read ``line 3``.
"""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core.importers.base import TOP_LEVEL, Out, Problem
from flowdrop_core.importers.detect import detect_value, json_formats
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "jsonl"
EXPECTS = "one JSON message (or one whole conversation) per line"

CONVERSATION_KEYS = (
    "messages",
    "input",
    "output",
    "steps",
    "contents",
    "conversations",
    "observations",
    "resourceSpans",
    "choices",
    "candidates",
)
#: Formats a run of single-message lines may be read in.
RUN_FORMATS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "otel-genai",
    "gemini",
    "bedrock",
    "langchain",
    "sharegpt",
)
_TOP_INDEX = re.compile(r"(^|\+)\[(\d+)\](\.?)")


def read_text(text: str, out: Out) -> None:
    """Read every line (blank lines skipped)."""
    lines: list[tuple[int, Any]] = []
    # split on "\n" only: str.splitlines would also split inside JSON strings at U+2028.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            lines.append((number, parse_json(line, column_only=True)))
        except JSONProblem as exc:
            raise Problem(f"line {number}", str(exc)) from None
    run: list[tuple[int, Any]] = []

    def flush() -> None:
        if run:
            numbers = [number for number, _ in run]
            got = detect_value([value for _, value in run], RUN_FORMATS, "", numbers=numbers)
            out.extend(got, lambda origin: _relocate(origin, numbers))
            run.clear()

    for number, value in lines:
        if _is_conversation(value):
            flush()
            try:
                got = detect_value(value, json_formats(), "")
            except Problem as problem:
                inner = f": {problem.where}" if problem.where else ""
                raise Problem(f"line {number}{inner}", problem.what) from None
            out.extend(got, lambda origin, n=number: _on_line(n, origin))
        else:
            run.append((number, value))
    flush()


def _on_line(number: int, origin: str) -> str:
    """``line 3: messages[1]``; a message that is the line's whole value is ``line 3``."""
    return f"line {number}" if origin in ("", TOP_LEVEL) else f"line {number}: {origin}"


def _is_conversation(value: Any) -> bool:
    """Whether a JSONL line holds a whole conversation rather than one message."""
    if isinstance(value, list):
        return True
    # ``role`` or ``type`` marks one message or item (a function_call_output has ``output``).
    return (
        isinstance(value, dict)
        and "role" not in value
        and "type" not in value
        and any(key in value for key in CONVERSATION_KEYS)
    )


def _relocate(origin: str, numbers: list[int]) -> str:
    """``[3].content[1]`` -> ``line 7: content[1]`` for a run of single-message lines."""

    def swap(match: re.Match[str]) -> str:
        line = f"{match.group(1)}line {numbers[int(match.group(2))]}"
        return f"{line}: " if match.group(3) else line

    return _TOP_INDEX.sub(swap, origin)
