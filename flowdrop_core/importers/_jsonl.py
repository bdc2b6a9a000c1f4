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

from flowdrop_core.importers._base import TOP_LEVEL, Out, Problem
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict, lines_of
from flowdrop_core.importers._detect import detect_value, json_formats, nearest_miss

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
    "chat",
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


#: How many lines of a run of single-message lines :func:`claims_head` looks at.
HEAD_LINES = 1000


def claims(lines: list[Line]) -> Verdict:
    """Every line is JSON; each whole-conversation line is claimed by a JSON format, and
    each run of single-message lines by one of :data:`RUN_FORMATS`."""
    return _claims(lines)


def claims_head(lines: list[Line]) -> Verdict:
    """:func:`claims` of the first :data:`HEAD_LINES` lines: the reader reads every
    line and checks it itself (a line that is not JSON, a run no format claims), so a
    long recording is not checked twice. When the reading then fails, the registry
    asks :func:`claims` for the whole file's verdict, so the error is the same."""
    return _claims(lines[:HEAD_LINES]) if len(lines) > HEAD_LINES else claims(lines)


def _claims(lines: list[Line]) -> Verdict:
    if not lines:
        return Miss("", "no lines")
    if len(lines) == 1 and _is_conversation(lines[0][1]):
        return Miss("line 1", "one line holding one whole document: a JSON file, not JSON Lines")
    run: list[Line] = []

    def run_miss() -> Miss | None:
        if not run:
            return None
        numbers = [number for number, _ in run]
        missed = nearest_miss([value for _, value in run], RUN_FORMATS)
        run.clear()
        if missed is None:
            return None
        where = _relocate(missed.where, numbers) if missed.where else f"line {numbers[0]}"
        return Miss(where, missed.what, missed.score)

    for k, (number, value) in enumerate(lines):
        if isinstance(value, LineProblem):
            return Miss(f"line {number}", value.what, k)
        if not _is_conversation(value):
            run.append((number, value))
            continue
        missed = run_miss() or nearest_miss(value, json_formats())
        if missed is not None:
            return Miss(_on_line(number, missed.where), missed.what, k + missed.score)
    missed = run_miss()
    if missed is not None:
        return missed
    if conversation_lines(lines) is not None:
        return Claim("one conversation per line")
    return Claim("JSON lines")


def conversation_lines(lines: list[Line]) -> list[Line] | None:
    """The lines, when there are two or more and each holds a whole conversation
    (a fine-tuning file: one independent conversation per line); else ``None``."""
    if len(lines) >= 2 and all(_is_conversation(value) for _, value in lines):
        return lines
    return None


def read_text(text: str, out: Out) -> None:
    """Read every line (blank lines skipped)."""
    read_lines(lines_of(text), out)


def read_lines(lines: list[Line], out: Out) -> None:
    """Read the parsed lines of :func:`~flowdrop_core.importers._claims.lines_of`.

    The registry parses a JSON Lines file once for every format's claim and
    hands the same lines here, so a long file is not decoded twice. A line
    that is not JSON is the problem, located, before anything is read.
    """
    for number, value in lines:
        if isinstance(value, LineProblem):
            raise Problem(f"line {number}", value.what)
    run: list[tuple[int, Any]] = []

    def flush() -> None:
        if run:
            numbers = [number for number, _ in run]
            got = detect_value([value for _, value in run], RUN_FORMATS, "", numbers=numbers)
            # One message per line, in order (the usual run): each origin is its line.
            whole_lines = got.origins == [f"[{k}]" for k in range(len(got.origins))]
            out.extend(
                got,
                lambda origin: _relocate(origin, numbers),
                origins=[f"line {number}" for number in numbers] if whole_lines else None,
            )
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
    if origin[:1] == "[" and origin[-1:] == "]" and origin[1:-1].isdecimal():
        return f"line {numbers[int(origin[1:-1])]}"  # a whole line's message: ``[3]``

    def swap(match: re.Match[str]) -> str:
        line = f"{match.group(1)}line {numbers[int(match.group(2))]}"
        return f"{line}: " if match.group(3) else line

    return _TOP_INDEX.sub(swap, origin)
