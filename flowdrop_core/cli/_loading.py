"""Reading the file a command is given: a scenario, or a recorded conversation to import.

Shared by ``replay``, ``check``, ``normalize`` and ``lint``: every problem is a
:class:`~flowdrop_core.cli._output.CliError` or a library error naming the
file and the JSON path where it is.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.cli._output import CliError
from flowdrop_core.importers import (
    FORMATS,
    ConversationFormatError,
    ImportedConversation,
    ImportNote,
    loads_or_problem,
    parse_conversation,
    parse_conversations,
)
from flowdrop_core.messages import read_message
from flowdrop_core.provider import Finding
from flowdrop_core.scenario import Scenario, parse_scenario

__all__ = [
    "Source",
    "check_count",
    "check_messages",
    "finding_dict",
    "load_source",
    "load_sources",
    "note_lines",
    "notes_json",
    "origin",
    "read_json",
    "read_text",
    "scenario_entries",
]


@dataclass
class Source:
    """A file read for a command: a scenario, or an imported recorded conversation.

    ``entries`` and ``origins`` are every message in the file in order (a
    scenario's starting buffer, then its steps' messages, verbatim), for
    ``normalize`` and ``lint``. ``notes`` is what the import left out.
    """

    path: str
    scenario: Scenario | None
    conversation: ImportedConversation | None
    entries: list[Any]
    origins: list[str]
    notes: list[ImportNote] = field(default_factory=list)
    #: Which conversation of a file holding several (``"line 3"``), else ``""``.
    label: str = ""


#: Largest file a command reads (a recording is far smaller; /dev/zero is not a recording).
MAX_FILE_BYTES = 200 * 1024 * 1024

#: Messages one file may hold before a command refuses it. ``replay`` and ``doctor`` print
#: as they go and keep about 1.4 KB per message beside the decoded messages: a 1,000,000-
#: message agent recording (146 MB) peaks at 1.8 GB, 1,000,000 one-message lines at 1.3 GB
#: (benchmarks/scale_bench.py), so this default stays under 2 GB. A JSON Lines file is
#: counted by its lines before any is decoded.
MAX_MESSAGES = 1_000_000
#: Environment variable that sets another limit (a whole number >= 1).
MAX_MESSAGES_ENV = "FLOWDROP_MAX_MESSAGES"


def message_limit() -> int:
    """The message limit: ``$FLOWDROP_MAX_MESSAGES`` when set, else :data:`MAX_MESSAGES`."""
    raw = os.environ.get(MAX_MESSAGES_ENV, "").strip()
    if not raw:
        return MAX_MESSAGES
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if limit < 1:
        raise CliError(f"{MAX_MESSAGES_ENV}={raw!r}: expected a whole number of messages >= 1")
    return limit


def _too_many(path: str, count: int, what: str, limit: int) -> CliError:
    return CliError(
        f"{path}: {count:,} {what}, over the limit of {limit:,} messages per file (a replay "
        f"keeps about 1.8 KB per message); nothing was read further. Raise the limit with "
        f"{MAX_MESSAGES_ENV}={count}, or split the file"
    )


def check_count(path: str, count: int) -> None:
    """Refuse a file holding more messages than :func:`message_limit`, naming both."""
    limit = message_limit()
    if count > limit:
        raise _too_many(path, count, "messages", limit)


#: A line of JSON Lines that holds something, and a blank line between two others.
_FILLED_LINE = re.compile(r"[^ \t\r\f\v\n][^\n]*")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*(?=\n)")


def _check_lines(text: str, path: str) -> None:
    """Refuse a JSON Lines file with more lines than the message limit, before decoding any.

    Each line of a JSON Lines file holds a message or a whole conversation, so its
    lines are what its import and replay cost. Text with fewer line breaks than
    the limit is passed at once (one ``str.count``); otherwise it is JSON Lines when
    its first line is a whole JSON value (a JSON document's first line of many never
    is), and its lines that hold something are counted without copying the text.
    """
    limit = message_limit()
    breaks = text.count("\n")
    if breaks < limit:
        return
    first = _FILLED_LINE.search(text)
    try:
        json.loads(first.group() if first else "")
    except (ValueError, RecursionError):
        return  # a JSON document over many lines: its messages are counted once read
    count = breaks + 1 - sum(1 for _ in _BLANK_LINE.finditer(text))
    count -= not text[: text.find("\n")].strip()  # the text before the first break
    count -= not text[text.rfind("\n") + 1 :].strip()  # and after the last one
    if count > limit:
        raise _too_many(path, count, "lines", limit)


def read_text(path: str) -> str:
    """The file as text; a missing, unreadable, non-regular or too large file is a
    :class:`CliError`.

    The file is opened without blocking and checked before anything is read, so a
    FIFO never blocks and a device (``/dev/zero``) is never read until memory runs out.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise CliError(f"cannot read {path}: is a directory") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise CliError(f"cannot read {path}: is a directory")
        raise CliError(f"cannot read {path}: not a regular file (a pipe, socket or device)")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_FILE_BYTES:
            raise CliError(
                f"cannot read {path}: {info.st_size:,} bytes, over the "
                f"{MAX_FILE_BYTES:,}-byte limit for one file"
            )
        try:
            raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:  # grew while read
        raise CliError(f"cannot read {path}: over the {MAX_FILE_BYTES:,}-byte limit for one file")
    if raw.startswith(SQLITE_MAGIC):
        raise CliError(f"{path}: {sqlite_refusal(path)}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


#: The first bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: A FlowDrop store's own tables (``flowdrop_core.storage._sqlite``), current and first layout.
STORE_TABLES = ({"slot", "entry"}, {"slots"})


def sqlite_refusal(path: str) -> str:
    """What a SQLite file given to a command that reads recordings is, and what opens it.

    Read without changing anything (``immutable``): a framework's store or a FlowDrop
    store is opened by ``flowdrop-buffer store``; any other database by no command.
    """
    from flowdrop_core.framework_stores._registry import detect  # only for this refusal

    try:
        uri = f"{Path(path).resolve().as_uri()}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True)
        try:
            names = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                                      "WHERE type = 'table'"))  # fmt: skip
        finally:
            conn.close()
        kind = detect(path)
    except (sqlite3.Error, FlowdropError) as exc:
        return f"a damaged SQLite file ({exc}), not a recorded conversation"
    tables = f"tables {', '.join(names)}" if names else "no tables"
    store = f"open it with: flowdrop-buffer store {path}"
    if kind == "langgraph":
        return f"a LangGraph SqliteSaver checkpoint file ({tables}), not a recording; {store}"
    if kind == "openai-agents":
        return f"an OpenAI Agents SQLiteSession file ({tables}), not a recording; {store}"
    if any(ours <= set(names) for ours in STORE_TABLES):
        return f"a FlowDrop store ({tables}), not a recording; {store}"
    return (
        f"a SQLite file with {tables}, not a recorded conversation (JSON or JSON Lines); "
        "no command of flowdrop-buffer reads it"
    )


def read_json(text: str, path: str) -> Any:
    """The file's JSON; JSON the json module refuses (in any way) is a :class:`CliError`.

    The message reads like the scenario reader's: ``PATH: not JSON (...)``.
    """
    try:
        return loads_or_problem(text)
    except ConversationFormatError as exc:
        raise CliError(f"{path}: {exc}") from None


def _is_scenario(text: str, path: str) -> bool:
    """A JSON object with ``steps``: read it as a scenario, so its errors name its fields.

    Text that names ``"steps"`` but is not JSON is a broken scenario, and where
    it broke is reported here, unless it imports as a recorded conversation
    (a JSONL file whose lines are scenarios).
    """
    if not text.lstrip().startswith("{"):
        return False
    try:
        data = loads_or_problem(text)
    except ConversationFormatError as problem:
        if '"steps"' not in text:
            return False  # the importers say why, format by format
        try:
            parse_conversation(text, source_name=path)
        except ConversationFormatError:
            raise CliError(f"{path}: {problem}") from None
        return False
    return isinstance(data, dict) and "steps" in data


def _check_format(fmt: str | None) -> None:
    if fmt is not None and fmt not in FORMATS:
        raise CliError(f"unknown format {fmt!r}; known formats: {', '.join(FORMATS)}")


def load_sources(path: str, fmt: str | None = None) -> list[Source]:
    """Read ``path`` as a scenario file or, failing that, its recorded conversations.

    A JSON object with ``steps`` is a scenario (``--format scenario`` forces
    it); anything else goes to the importers, auto-detected unless ``fmt``: one
    conversation, or one per line of a JSONL file of conversations. A file
    holding more messages than :func:`message_limit` is a :class:`CliError`
    (a JSON Lines file: checked on its lines, before any is decoded).
    """
    _check_format(fmt)
    text = read_text(path)
    _check_lines(text, path)
    if fmt == "scenario" or (fmt is None and _is_scenario(text, path)):
        scenario = parse_scenario(text, source=path)
        entries, origins = scenario_entries(scenario)
        check_count(path, len(entries))
        return [Source(path, scenario, None, entries, origins)]
    sources = [
        Source(
            path,
            None,
            conv,
            list(conv.messages),
            list(conv.origins),
            list(conv.notes),
            conv.label,
        )
        for conv in parse_conversations(text, format=fmt, source_name=path)
    ]
    check_count(path, sum(len(source.entries) for source in sources))
    return sources


def load_source(path: str, fmt: str | None = None, conversation: int | None = None) -> Source:
    """The one conversation (or scenario) of ``path``; ``conversation`` (from 1) picks one
    of a file holding several, which without it is a :class:`CliError` saying so."""
    sources = load_sources(path, fmt)
    if conversation is None:
        if len(sources) > 1:
            raise CliError(
                f"{path} holds {len(sources)} conversations, one per line "
                f"({sources[0].label} to {sources[-1].label}); pick one with --conversation N "
                f"(1 to {len(sources)})"
            )
        return sources[0]
    if conversation > len(sources):
        held = "1 conversation" if len(sources) == 1 else f"{len(sources)} conversations"
        raise CliError(
            f"{path} holds {held}; --conversation takes 1 to {len(sources)}, not {conversation}"
        )
    return sources[conversation - 1]


def note_lines(notes: Sequence[ImportNote]) -> list[str]:
    """The import notes as text: a heading, then ``where: what: why`` per note."""
    if not notes:
        return []
    return [
        f"import notes ({len(notes)}): left out of the imported messages",
        *(f"  {note}" for note in notes),
    ]


def notes_json(notes: Sequence[ImportNote]) -> list[dict[str, str]]:
    return [note.to_dict() for note in notes]


def scenario_entries(scenario: Scenario) -> tuple[list[Any], list[str]]:
    """The starting buffer, then every step's messages, verbatim, with importer-style origins."""
    entries: list[Any] = list(scenario.buffer)
    origins = [f"buffer[{i}]" for i in range(len(entries))]
    for s, step in enumerate(scenario.steps):
        if step.text is not None:  # MEM-16: the message the text made, if any
            made = step.append if isinstance(step.append, list) else [step.append]
            entries.extend(made)
            origins.extend(f"steps[{s}].text" for _ in made)
        elif isinstance(step.append, list):
            entries.extend(step.append)
            origins.extend(f"steps[{s}].append[{k}]" for k in range(len(step.append)))
        else:
            entries.append(step.append)
            origins.append(f"steps[{s}].append")
    return entries, origins


def check_messages(path: str, entries: Sequence[Any], origins: Sequence[str]) -> None:
    """Every message ``replay`` would append or start from is a message, or one located error.

    Each problem names the file and the JSON path the entry came from
    (``rec.json: steps[0].append[1]: unknown role 'bogus' ...``), so bad input
    is found where it is written, before any step runs.
    """
    problems = []
    for entry, origin in zip(entries, origins, strict=True):
        problem = read_message(entry)
        if isinstance(problem, str):
            problems.append(f"{path}: {origin}: {problem}")
    if problems:
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise CliError("\n".join(problems[:20]) + more)


def origin(source: Source, finding: Finding) -> str:
    """Where the entry a finding is about is in the file, as the file names it (one numbering).

    ``messages[3].content[0]``, ``line 2``: a person finds it there (for Anthropic, the
    ``messages[i]`` its errors name); the 0-based message index is in ``--json``.
    """
    if 0 <= finding.index < len(source.origins):
        return source.origins[finding.index]
    return f"message index {finding.index} (0-based)"


def finding_dict(source: Source, finding: Finding) -> dict[str, Any]:
    """A finding as JSON, with its origin."""
    return {**finding.model_dump(mode="json"), "origin": origin(source, finding)}
