"""The format registry: detection order, names for ``--format``, and detection itself.

Detection reads the file in every format, in :data:`FORMATS` order, and
takes the one that leaves the least content in *unknown* notes (parts, items
or fields the reader does not recognise), then the fewest such notes, then
the fewest notes at all (ties: the earlier format); a format that reads it
with no note wins at once. So a format whose
reader would leave out fields another format reads is never chosen over that
format (issue 13: a match that drops content is not a match). When no format
reads the file, the error lists every format's first problem and what each
format expects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowdrop_core.errors import FlowdropError
from flowdrop_core.ids import usable_id
from flowdrop_core.importers import (
    anthropic,
    bedrock,
    claude_code,
    detect,
    gemini,
    jsonl,
    langchain,
    langfuse,
    openai_chat,
    openai_responses,
    otel,
    scenario_file,
    sharegpt,
)
from flowdrop_core.importers.base import TOP_LEVEL, ImportNote, Message, Out, Problem
from flowdrop_core.scenario import JSONProblem, parse_json

__all__ = [
    "FORMATS",
    "JSON_FORMATS",
    "REGISTRY",
    "ConversationFormatError",
    "Format",
    "ImportedConversation",
    "detect_value",
    "group_turns",
    "load_conversation",
    "loads_or_problem",
    "parse_conversation",
]


@dataclass(frozen=True, slots=True)
class Format:
    """One importable format: its ``--format`` name, what it expects, and its reader.

    ``read`` takes the parsed JSON document; ``read_text`` (JSON Lines
    formats) takes the raw text.
    """

    name: str
    expects: str
    read: Callable[[Any, Out], None] | None = None
    read_text: Callable[[str, Out], None] | None = None


#: Every format, in the order detection prefers them on a tie.
REGISTRY: tuple[Format, ...] = (
    Format(openai_chat.NAME, openai_chat.EXPECTS, read=openai_chat.read),
    Format(openai_responses.NAME, openai_responses.EXPECTS, read=openai_responses.read),
    Format(anthropic.NAME, anthropic.EXPECTS, read=anthropic.read),
    Format(otel.NAME, otel.EXPECTS, read=otel.read),
    Format(gemini.NAME, gemini.EXPECTS, read=gemini.read),
    Format(bedrock.NAME, bedrock.EXPECTS, read=bedrock.read),
    Format(langchain.NAME, langchain.EXPECTS, read=langchain.read),
    Format(langfuse.NAME, langfuse.EXPECTS, read=langfuse.read),
    Format(sharegpt.NAME, sharegpt.EXPECTS, read=sharegpt.read),
    Format(scenario_file.NAME, scenario_file.EXPECTS, read=scenario_file.read),
    Format(claude_code.NAME, claude_code.EXPECTS, read_text=claude_code.read_text),
    Format(jsonl.NAME, jsonl.EXPECTS, read_text=jsonl.read_text),
)
_BY_NAME = {f.name: f for f in REGISTRY}

#: Every format name, in detection order (the names ``--format`` takes).
FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)
#: The formats that read one parsed JSON value (nested values: JSONL lines, trace inputs).
JSON_FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY if f.read is not None)


class ConversationFormatError(FlowdropError, ValueError):
    """A recorded conversation that could not be imported.

    ``problems`` maps each format tried to the first problem it hit
    (``"messages[2]: missing 'role'"``); the message says the same for people.
    """

    def __init__(self, message: str, problems: dict[str, str] | None = None) -> None:
        self.problems = problems or {}
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """An imported conversation: provider-flat messages, where each came from, turns, notes.

    ``origins[i]`` locates ``messages[i]`` in the file. ``turns`` groups
    message indexes by recorded turn (see :func:`group_turns`). ``notes`` lists
    everything of the source that is not in ``messages`` (what, where, why and
    the left-out content): show them next to the conversation.
    """

    name: str
    format: str
    messages: list[Message]
    origins: list[str]
    turns: list[list[int]] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)

    def notes_as_dicts(self) -> list[dict[str, str]]:
        """The notes as JSON-ready rows (``where``, ``what``, ``why``, ``content``)."""
        return [note.to_dict() for note in self.notes]


# --------------------------------------------------------------------------- public API


def load_conversation(
    source: str | Path | bytes,
    format: str | None = None,
    name: str | None = None,
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import a recorded conversation from a file path (``str``/``Path``) or raw ``bytes``.

    ``name`` is used in origins' owner and error messages; it defaults to the
    path as given (``"<bytes>"`` for bytes). A missing file raises ``OSError``.
    """
    if isinstance(source, bytes):
        label = name or "<bytes>"
        raw = source
    else:
        label = name or str(source)
        raw = Path(source).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConversationFormatError(
            f"{label}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_conversation(text, format=format, source_name=label, strict=strict)


def parse_conversation(
    text: str,
    format: str | None = None,
    source_name: str = "<text>",
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import a recorded conversation from text, detecting the format unless ``format`` is given.

    Raises :class:`ConversationFormatError`: with ``format`` given, with that
    format's first problem only; otherwise listing every format tried, why it
    failed and what it expects. ``strict`` additionally rejects orphan tool results.
    """
    if format is not None and format not in _BY_NAME:
        raise ConversationFormatError(
            f"unknown format {format!r}; known formats: {', '.join(FORMATS)}"
        )
    if not text.strip():
        raise ConversationFormatError(f"{source_name} is empty")
    candidates = (format,) if format else FORMATS
    document, json_problem = _load_json(text)
    problems: dict[str, str] = {}
    best: tuple[str, Out] | None = None
    for candidate in candidates:
        spec = _BY_NAME[candidate]
        out = Out()
        try:
            if spec.read_text is None and json_problem is not None:
                raise json_problem
            _guarded(spec, document if spec.read_text is None else text, out)
        except Problem as problem:
            problems[candidate] = str(problem)
            continue
        if best is None or _rank(out) < _rank(best[1]):
            best = (candidate, out)
        if not out.notes:
            break
    if best is None:
        if format:
            raise ConversationFormatError(
                f"{source_name} is not valid {format}: {problems[format]}", problems
            )
        raise ConversationFormatError(
            _no_match_message(source_name, problems, shapes=json_problem is None), problems
        )
    chosen, out = best
    if strict:
        try:
            _check_orphans(out.messages, out.origins)
        except Problem as problem:
            raise ConversationFormatError(
                f"{source_name}: {problem}", {chosen: str(problem)}
            ) from None
    return ImportedConversation(
        name=source_name,
        format=chosen,
        messages=out.messages,
        origins=out.origins,
        turns=group_turns(out.messages),
        notes=out.notes,
    )


def _rank(out: Out) -> tuple[int, int, int]:
    """Less content the reader did not recognise first, then fewer such notes, then fewer notes.

    Measuring the content, not just counting notes, prefers the reader that
    reads a message but not one odd part of it to one that reads none of it.
    """
    unknown = [note for note in out.notes if note.unknown]
    return sum(len(note.content) for note in unknown), len(unknown), len(out.notes)


def _guarded(spec: Format, source: Any, out: Out) -> None:
    """Run a reader on parsed JSON (or, for JSON Lines formats, the text).

    Input nested past the stack's depth is a problem, not a crash.
    """
    try:
        if spec.read_text is not None:
            spec.read_text(source, out)
        else:
            assert spec.read is not None
            spec.read(source, out)
    except RecursionError:
        raise Problem("", "nested too deeply") from None


_FIRST_INDEX = re.compile(r"\[(\d+)\]")


def detect_value(
    value: Any, formats: tuple[str, ...], prefix: str, *, numbers: list[int] | None = None
) -> Out:
    """Read a nested JSON value in the format that reads it with the fewest notes.

    Origins are placed under ``prefix``. On failure, the problem of the format
    that read furthest (ties: the earlier format), tagged with its name and
    located within ``value`` (callers with a ``prefix`` use only its ``what``);
    ``numbers`` relocates ``[i]`` to line numbers for a run of JSONL lines.
    """
    failures: list[tuple[int, str, Problem]] = []
    best: Out | None = None
    for name in formats:
        out = Out()
        try:
            _guarded(_BY_NAME[name], value, out)
        except Problem as problem:
            match = _FIRST_INDEX.search(problem.where)
            failures.append((int(match.group(1)) if match else -1, name, problem))
            continue
        if best is None or _rank(out) < _rank(best):
            best = out
        if not out.notes:
            break
    if best is not None:
        if not prefix:
            return best
        placed = Out()
        placed.extend(best, lambda origin: _under(prefix, origin))
        return placed
    _, name, problem = max(failures, key=lambda failure: failure[0])
    where = problem.where
    if numbers is not None:
        where = jsonl._relocate(where, numbers) if where else f"line {numbers[0]}"
    raise Problem(where, f"{problem.what} (read as {name})")


def _under(prefix: str, origin: str) -> str:
    if not origin or origin == TOP_LEVEL:
        return prefix
    return f"{prefix}{origin}" if origin.startswith("[") else f"{prefix}.{origin}"


def group_turns(messages: list[Message]) -> list[list[int]]:
    """Group message indexes by recorded turn, for per-turn replay.

    A ``user`` message starts a turn. ``system`` messages before anything else
    form their own first group. Every other message (assistant turns, tool
    results, a later system message) joins the turn in progress; if there is
    none yet (a recording that starts with an assistant or tool message), it
    starts one. So a tool result always travels with the assistant turn that
    precedes it, and healing (MEM-3) runs only when a real user turn arrives.
    """
    turns: list[list[int]] = []
    leading_system = True
    for index, message in enumerate(messages):
        role = message.get("role")
        if leading_system and role == "system":
            if not turns:
                turns.append([])
            turns[0].append(index)
            continue
        if role == "user" or not turns or leading_system:
            turns.append([index])
        else:
            turns[-1].append(index)
        leading_system = False
    return turns


def loads_or_problem(text: str, *, column_only: bool = False) -> Any:
    """:func:`~flowdrop_core.scenario.parse_json`, failing as a :class:`ConversationFormatError`."""
    try:
        return parse_json(text, column_only=column_only)
    except JSONProblem as exc:
        problem = str(exc)
    raise ConversationFormatError(problem)  # outside the handler: no chained context


def _load_json(text: str) -> tuple[Any, Problem | None]:
    """Parse the whole text as JSON once; on failure, the problem every JSON format reports."""
    try:
        return loads_or_problem(text), None
    except ConversationFormatError as exc:
        return None, Problem("", str(exc))


def _no_match_message(source_name: str, problems: dict[str, str], *, shapes: bool) -> str:
    """One line per distinct reason, naming every format that failed for it.

    ``shapes`` (the file is JSON, of a shape no format reads): then also what
    each format expects, so the reader can see which one the file meant to be.
    """
    by_reason: dict[str, list[str]] = {}
    for fmt, reason in problems.items():
        by_reason.setdefault(reason, []).append(fmt)
    lines = [f"- {', '.join(fmts)}: {reason}" for reason, fmts in by_reason.items()]
    expects = [f"- {f.name}: {f.expects}" for f in REGISTRY if f.name in problems]
    message = f"no known format matched {source_name}:\n" + "\n".join(lines)
    if shapes:
        message += "\nwhat each format reads:\n" + "\n".join(expects)
    return message


def _check_orphans(messages: list[Message], origins: list[str]) -> None:
    """strict mode: every tool result must answer a call declared earlier in the file."""
    declared: set[str] = set()
    for message, origin in zip(messages, origins, strict=True):
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                call_id = usable_id(call.get("id"))
                if call_id is not None:
                    declared.add(call_id)
        elif role == "tool":
            call_id = usable_id(message.get("tool_call_id"))
            if call_id is None:
                raise Problem(origin, "tool result has no usable tool_call_id")
            if call_id not in declared:
                raise Problem(
                    origin, f"tool result for call {call_id!r} whose call never appears before it"
                )


# The nested readers (jsonl, langfuse) reach detection through .detect, not back here.
detect.install(detect_value, JSON_FORMATS)
