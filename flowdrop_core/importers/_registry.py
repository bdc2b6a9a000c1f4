"""The format registry: the formats, the names ``--format`` takes, and detection.

Detection is positive. Every format
module declares ``claims(document) -> Claim | Miss``: the keys and shapes
that make a document its own. Only the formats that claim a document read
it; among them, the one that leaves the least content in *unknown* notes
wins, then the fewest such notes, then the fewest notes (ties: the earlier
format in :data:`REGISTRY`). A reading is no reading, and the format drops
out, when it gives no message, or a message whose whole content went to an
unknown note. A document no format claims (or that every claiming format
fails to read) is an error naming the nearest formats and what each lacked.

How to add a format
-------------------
1. Write ``flowdrop_core/importers/<format>.py`` with

   - ``NAME`` (the ``--format`` name) and ``EXPECTS`` (one line for errors);
   - ``claims(document) -> Claim | Miss`` (:mod:`.claims`): required keys and
     shapes only, specific enough that no other format's documents match
     (``each(items, prefix, check, shape)`` checks a list item by item; a
     :class:`~.claims.Miss` says where and what is missing);
   - ``read(document, out)`` for a JSON document, or ``read_text(text, out)``
     for JSON Lines (then ``claims`` gets :func:`~.claims.lines_of` of the
     text): fill :class:`~.base.Out` with messages, origins and notes; raise
     :class:`~.base.Problem` (where, what) on the first thing it cannot read.

2. Add one line, ``Format.of(<module>)``, to :data:`REGISTRY` (its position
   only breaks ties), and ``NAME`` to ``jsonl.RUN_FORMATS`` if one message per
   line of it should be read as JSON Lines.
3. Tests in ``tests/importers/test_<format>.py``: a real public sample
   (cited in ``sample_data/imports/SOURCES.md``) with its exact messages, and
   the documents of neighbouring formats it must not claim
   (``tests/importers/test_detection.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core._ids import usable_id
from flowdrop_core.importers import (
    _anthropic as anthropic,
)
from flowdrop_core.importers import (
    _bedrock as bedrock,
)
from flowdrop_core.importers import (
    _chatml as chatml,
)
from flowdrop_core.importers import (
    _claude_code as claude_code,
)
from flowdrop_core.importers import (
    _codex as codex,
)
from flowdrop_core.importers import (
    _cohere as cohere,
)
from flowdrop_core.importers import (
    _detect as detect,
)
from flowdrop_core.importers import (
    _gemini as gemini,
)
from flowdrop_core.importers import (
    _gemini_cli as gemini_cli,
)
from flowdrop_core.importers import (
    _gemini_cli_jsonl as gemini_cli_jsonl,
)
from flowdrop_core.importers import (
    _glaive as glaive,
)
from flowdrop_core.importers import (
    _hermes as hermes,
)
from flowdrop_core.importers import (
    _jsonl as jsonl,
)
from flowdrop_core.importers import (
    _langchain as langchain,
)
from flowdrop_core.importers import (
    _langfuse as langfuse,
)
from flowdrop_core.importers import (
    _mini_swe_agent as mini_swe_agent,
)
from flowdrop_core.importers import (
    _openai_chat as openai_chat,
)
from flowdrop_core.importers import (
    _openai_responses as openai_responses,
)
from flowdrop_core.importers import (
    _openinference as openinference,
)
from flowdrop_core.importers import (
    _otel as otel,
)
from flowdrop_core.importers import (
    _otel_legacy as otel_legacy,
)
from flowdrop_core.importers import (
    _pi as pi,
)
from flowdrop_core.importers import (
    _pydantic_ai as pydantic_ai,
)
from flowdrop_core.importers import (
    _recording as recording,
)
from flowdrop_core.importers import (
    _responses_log as responses_log,
)
from flowdrop_core.importers import (
    _scenario_file as scenario_file,
)
from flowdrop_core.importers import (
    _sharegpt as sharegpt,
)
from flowdrop_core.importers import (
    _swe_agent as swe_agent,
)
from flowdrop_core.importers import (
    _vercel_ai as vercel_ai,
)
from flowdrop_core.importers import (
    _xlam as xlam,
)
from flowdrop_core.importers._base import TOP_LEVEL, ImportNote, Message, Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict, lines_of
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
    "load_conversations",
    "loads_or_problem",
    "nearest_miss",
    "parse_conversation",
    "parse_conversations",
]


@dataclass(frozen=True, slots=True)
class Format:
    """One importable format: its ``--format`` name, what it expects, its claim and reader.

    ``read`` takes the parsed JSON document; ``read_text`` (JSON Lines
    formats) takes the raw text, and then ``claims`` takes its parsed lines
    (or, for a text format that is not JSON Lines, declaring ``claims_text``
    instead of ``claims``: the raw text, and ``on_text`` is true).
    """

    name: str
    expects: str
    claims: Callable[[Any], Verdict]
    read: Callable[[Any, Out], None] | None = None
    read_text: Callable[[str, Out], None] | None = None
    on_text: bool = False
    #: A JSON Lines format's reader of the lines its claim saw (parsed once, not again).
    read_lines: Callable[[list[Line], Out], None] | None = None

    @classmethod
    def of(cls, module: ModuleType) -> Format:
        """The format a module declares (``NAME``, ``EXPECTS``, ``claims`` or ``claims_text``,
        ``read``/``read_text``)."""
        on_text = hasattr(module, "claims_text")
        return cls(
            module.NAME,
            module.EXPECTS,
            module.claims_text if on_text else module.claims,
            getattr(module, "read", None),
            getattr(module, "read_text", None),
            on_text,
            getattr(module, "read_lines", None),
        )


#: Every format, in the order that breaks ties between formats claiming one document.
REGISTRY: tuple[Format, ...] = (
    Format.of(openai_chat),
    Format.of(openai_responses),
    Format.of(responses_log),
    Format.of(cohere),
    Format.of(anthropic),
    Format.of(otel),
    Format.of(openinference),
    Format.of(otel_legacy),
    Format.of(vercel_ai),
    Format.of(pydantic_ai),
    Format.of(gemini),
    Format.of(gemini_cli),
    Format.of(bedrock),
    Format.of(recording),
    Format.of(langchain),
    Format.of(langfuse),
    Format.of(xlam),
    Format.of(glaive),
    Format.of(swe_agent),
    Format.of(mini_swe_agent),
    Format.of(hermes),
    Format.of(sharegpt),
    Format.of(scenario_file),
    Format.of(claude_code),
    Format.of(jsonl),
    Format.of(codex),
    Format.of(gemini_cli_jsonl),
    Format.of(pi),
    Format.of(chatml),
)
_BY_NAME = {f.name: f for f in REGISTRY}

#: Every format name, in registry order (the names ``--format`` takes).
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
    the left-out content): show them next to the conversation. ``label`` names
    the conversation within a file that holds several (``"line 3"``), else ``""``.
    """

    name: str
    format: str
    messages: list[Message]
    origins: list[str]
    turns: list[list[int]] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)
    label: str = ""

    def notes_as_dicts(self) -> list[dict[str, str]]:
        """The notes as JSON-ready rows (``where``, ``what``, ``why``, ``content``)."""
        return [note.to_dict() for note in self.notes]


# --------------------------------------------------------------------------- public API


def _decode(source: str | Path | bytes, name: str | None) -> tuple[str, str]:
    if isinstance(source, bytes):
        label = name or "<bytes>"
        raw = source
    else:
        label = name or str(source)
        raw = Path(source).read_bytes()
    if raw.startswith(b"SQLite format 3\x00"):  # a store, not a recording: say what opens it
        raise ConversationFormatError(
            f"{label}: a SQLite file, not a recorded conversation (JSON or JSON Lines); "
            "a LangGraph checkpoint file, an OpenAI Agents session file or a FlowDrop store "
            "is opened by 'flowdrop-buffer store FILE' (the Store page)"
        )
    try:
        return raw.decode("utf-8-sig"), label
    except UnicodeDecodeError as exc:
        raise ConversationFormatError(
            f"{label}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def load_conversation(
    source: str | Path | bytes,
    format: str | None = None,
    name: str | None = None,
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import the one recorded conversation of a file path (``str``/``Path``) or raw ``bytes``.

    ``name`` is used in origins' owner and error messages; it defaults to the
    path as given (``"<bytes>"`` for bytes). A missing file raises ``OSError``.
    A file holding several conversations is an error: use :func:`load_conversations`.
    """
    text, label = _decode(source, name)
    return parse_conversation(text, format=format, source_name=label, strict=strict)


def load_conversations(
    source: str | Path | bytes,
    format: str | None = None,
    name: str | None = None,
    *,
    strict: bool = False,
) -> list[ImportedConversation]:
    """Every conversation of a file (one, or one per line of a fine-tuning JSONL file)."""
    text, label = _decode(source, name)
    return parse_conversations(text, format=format, source_name=label, strict=strict)


def parse_conversation(
    text: str,
    format: str | None = None,
    source_name: str = "<text>",
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import one recorded conversation from text, detecting the format unless ``format`` is given.

    Raises :class:`ConversationFormatError`: with ``format`` given, with that
    format's first problem only; otherwise naming the nearest formats and what
    each lacked or failed on. ``strict`` additionally rejects orphan tool
    results. Text holding several conversations is an error naming how many.
    """
    conversations = parse_conversations(text, format, source_name, strict=strict)
    if len(conversations) > 1:
        raise ConversationFormatError(
            f"{source_name} holds {len(conversations)} conversations, one per line "
            f"({conversations[0].label} to {conversations[-1].label}); "
            "read them one at a time (--conversation N)"
        )
    return conversations[0]


def parse_conversations(
    text: str,
    format: str | None = None,
    source_name: str = "<text>",
    *,
    strict: bool = False,
) -> list[ImportedConversation]:
    """Every conversation of the text: one, or one per line of a JSONL file of conversations.

    Each conversation of a many-conversation file is read on its own (its own
    call ids: they never collide with another line's), labelled ``line N``,
    with origins ``line N: messages[1]``. Errors as :func:`parse_conversation`.
    """
    if format is not None and format not in _BY_NAME:
        raise ConversationFormatError(
            f"unknown format {format!r}; known formats: {', '.join(FORMATS)}"
        )
    if not text.strip():
        raise ConversationFormatError(f"{source_name} is empty")
    document, json_problem = _load_json(text)
    lines: list[Line] | None = None
    problems: dict[str, str] = {}
    misses: dict[str, Miss] = {}
    best: tuple[str, list[tuple[str, Out]]] | None = None
    for spec in REGISTRY if format is None else (_BY_NAME[format],):
        if spec.read_text is not None and lines is None:
            lines = lines_of(text)
        # JSON Lines is claimed on the first lines of each run; its reader checks the rest.
        head = format is None and spec.name == jsonl.NAME
        if format is None:
            on = text if spec.on_text else lines
            verdict = (
                jsonl.claims_head(lines or [])
                if head
                else _verdict(spec, document, json_problem, on)
            )
            if isinstance(verdict, Miss):
                problems[spec.name], misses[spec.name] = str(verdict), verdict
                continue
        try:
            if spec.read_text is None and json_problem is not None:
                raise json_problem
            assert lines is not None or spec.read_text is None
            read = _read(spec, document, text, lines or [])
        except Problem as problem:
            _untraced(problem)
            whole = _verdict(spec, document, json_problem, lines) if head else None
            if isinstance(whole, Miss):  # the whole file's verdict, as if claimed at once
                problems[spec.name], misses[spec.name] = str(whole), whole
            else:
                problems[spec.name] = str(problem)
            continue
        if best is None or _rank(read) < _rank(best[1]):
            best = (spec.name, read)
        if not any(out.notes for _, out in read):
            break
    if best is None:
        if format:
            raise ConversationFormatError(
                f"{source_name} is not valid {format}: {problems[format]}", problems
            )
        raise ConversationFormatError(
            _no_match_message(source_name, problems, misses, document, json_problem, lines),
            {name: problems[name] for name in FORMATS if name in problems},
        )
    chosen, read = best
    if json_problem is not None:
        _untraced(json_problem)
    conversations = []
    for label, out in read:
        if strict:
            try:
                _check_orphans(out.messages, out.origins)
            except Problem as problem:
                raise ConversationFormatError(
                    f"{source_name}: {problem}", {chosen: str(problem)}
                ) from None
        conversations.append(
            ImportedConversation(
                name=source_name,
                format=chosen,
                messages=out.messages,
                origins=out.origins,
                turns=group_turns(out.messages),
                notes=out.notes,
                label=label,
            )
        )
    return conversations


def _verdict(
    spec: Format, document: Any, json_problem: Problem | None, lines: list[Line] | str | None
) -> Verdict:
    """Whether ``spec`` claims the document (its lines, for a JSON Lines format; the
    text itself, for a text format that claims by text)."""
    if spec.read_text is None and json_problem is not None:
        return Miss("", json_problem.what)
    try:
        return spec.claims(lines if spec.read_text is not None else document)
    except RecursionError:
        return Miss("", "nested too deeply")


def _read(spec: Format, document: Any, text: str, lines: list[Line]) -> list[tuple[str, Out]]:
    """Read with one format: ``[("", out)]``, or one ``("line N", out)`` per conversation
    line of a JSONL file of conversations. A reading with no message, or with a message
    whose whole content went to an unknown note, is a :class:`Problem` (no reading)."""
    if spec.name == jsonl.NAME and (split := jsonl.conversation_lines(lines)) is not None:
        read = []
        for number, value in split:
            try:
                got = detect_value(value, JSON_FORMATS, "")
            except Problem as problem:
                inner = f": {problem.where}" if problem.where else ""
                raise Problem(f"line {number}{inner}", problem.what) from None
            out = Out()
            out.extend(got, lambda origin, n=number: jsonl._on_line(n, origin))
            read.append((f"line {number}", out))
        return read
    out = Out()
    if spec.read_lines is not None:
        _guarded(spec, lines, out)
    else:
        _guarded(spec, document if spec.read_text is None else text, out)
    _check_read(out)
    return [("", out)]


def _check_read(out: Out) -> None:
    """No import is a success with no message, or with a message that is all note."""
    if not out.messages:
        if out.notes:
            first = out.notes[0]
            raise Problem(
                "",
                f"no message: all {len(out.notes)} items read are notes "
                f"(the first: {first.where or TOP_LEVEL}: {first.what})",
            )
        raise Problem("", "no message")
    hollow = [
        (message, origin)
        for message, origin in zip(out.messages, out.origins, strict=True)
        if not message.get("content")
        and not message.get("tool_calls")
        and message.get("role") != "tool"
    ]
    if not hollow:
        return
    unknown = [note for note in out.notes if note.unknown]
    for _message, origin in hollow:
        for note in unknown:
            if note.where == origin or note.where.startswith((f"{origin}.", f"{origin}[")):
                raise Problem(origin, f"the message's whole content went to a note ({note.what})")


def _rank(read: list[tuple[str, Out]]) -> tuple[int, int, int]:
    """Less content the reader did not recognise first, then fewer such notes, then fewer notes.

    Measuring the content, not just counting notes, prefers the reader that
    reads a message but not one odd part of it to one that reads none of it.
    """
    notes = [note for _, out in read for note in out.notes]
    unknown = [note for note in notes if note.unknown]
    return sum(len(note.content) for note in unknown), len(unknown), len(notes)


def _untraced(problem: BaseException) -> None:
    """Drop a caught problem's tracebacks: kept, they hold the frames it was raised through.

    A reader that keeps its first problem in a local (to raise it later) makes
    a cycle: that frame holds the problem, whose traceback holds the frame and,
    through it, every caller's frame and locals. The collector frees the cycle
    eventually; until then, a caller's whole timeline stays alive, and the
    collection itself cost 1.5 s of a 100,000-message replay.
    """
    seen: BaseException | None = problem
    while seen is not None:  # and of the exceptions it was raised from or during
        seen.__traceback__ = None
        seen = seen.__cause__ or seen.__context__


def _guarded(spec: Format, source: Any, out: Out) -> None:
    """Run a reader on parsed JSON (or, for JSON Lines formats, the text or its parsed lines).

    Input nested past the stack's depth is a problem, not a crash.
    """
    try:
        if spec.read_lines is not None and isinstance(source, list):
            spec.read_lines(source, out)
        elif spec.read_text is not None:
            spec.read_text(source, out)
        else:
            assert spec.read is not None
            spec.read(source, out)
    except RecursionError:
        raise Problem("", "nested too deeply") from None


def nearest_miss(value: Any, formats: tuple[str, ...]) -> Miss | None:
    """``None`` when one of the JSON ``formats`` claims ``value``; else the nearest miss
    (highest score; ties: the earlier format), its ``what`` naming the format."""
    nearest: tuple[str, Miss] | None = None
    for name in formats:
        try:
            verdict = _BY_NAME[name].claims(value)
        except RecursionError:
            verdict = Miss("", "nested too deeply")
        if isinstance(verdict, Claim):
            return None
        if nearest is None or verdict.score > nearest[1].score:
            nearest = (name, verdict)
    assert nearest is not None
    name, miss = nearest
    return Miss(miss.where, f"{miss.what} (nearest format: {name})", miss.score)


def detect_value(
    value: Any,
    formats: tuple[str, ...],
    prefix: str,
    *,
    numbers: list[int] | None = None,
    whole: bool = False,
) -> Out:
    """Read a nested JSON value in the claiming format that reads it with the fewest notes.

    Origins are placed under ``prefix``. When no format claims it, the nearest
    miss; when every claiming format fails, the problem of the one that read
    furthest (ties: the earlier format), tagged with its name; either located
    within ``value`` (callers with a ``prefix`` use only its ``what``).
    ``numbers`` relocates ``[i]`` to line numbers for a run of JSONL lines; such a run
    is claimed on its first lines unless ``whole`` (every format's reader checks each
    line it reads; when none reads the run, it is judged on every line for the error).
    """
    # A run of JSON Lines messages is claimed on its first lines; each reader checks
    # every line it reads. When none reads it, the whole run is judged as ever.
    head = (
        not whole
        and numbers is not None
        and isinstance(value, list)
        and len(value) > jsonl.HEAD_LINES
    )
    claimed_on = value[: jsonl.HEAD_LINES] if head else value
    failures: list[tuple[int, str, Problem]] = []
    best: Out | None = None
    for name in formats:
        spec = _BY_NAME[name]
        try:
            claimed = isinstance(spec.claims(claimed_on), Claim)
        except RecursionError:
            claimed = False
        if not claimed:
            continue
        out = Out()
        try:
            _guarded(spec, value, out)
            _check_read(out)
        except Problem as problem:
            _untraced(problem)
            match = _FIRST_INDEX.search(problem.where)
            failures.append((int(match.group(1)) if match else -1, name, problem))
            continue
        if best is None or _rank([("", out)]) < _rank([("", best)]):
            best = out
        if not out.notes:
            break
    if best is not None:
        if not prefix:
            return best
        placed = Out()
        placed.extend(best, lambda origin: _under(prefix, origin))
        return placed
    if head:  # no format read the run: its error, as judged on every line
        return detect_value(value, formats, prefix, numbers=numbers, whole=True)
    if failures:
        _, name, furthest = max(failures, key=lambda failure: failure[0])
        where, what = furthest.where, f"{furthest.what} (read as {name})"
    else:
        missed = nearest_miss(value, formats)
        assert missed is not None
        where, what = missed.where, missed.what
    if numbers is not None:
        where = jsonl._relocate(where, numbers) if where else f"line {numbers[0]}"
    raise Problem(where, what)


_FIRST_INDEX = re.compile(r"\[(\d+)\]")


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


#: How many reasons the error lists (the claiming formats' problems, then the nearest misses).
NEAREST = 2
#: How many keys a description of the file names.
KEYS_SHOWN = 6


def _no_match_message(
    source_name: str,
    problems: dict[str, str],
    misses: dict[str, Miss],
    document: Any,
    json_problem: Problem | None,
    lines: list[Line] | None,
) -> str:
    """One message for a file no format reads: what the file looks like, then (for JSON
    and JSON Lines) the two nearest formats with what each lacked, and what they read.

    Text that is not JSON says so first, with its line and column, and nothing else: a
    reason per format would only repeat it. JSON Lines are measured against the formats
    that read lines, JSON against the rest; the other kind's "not JSON" is never listed.
    """
    head = f"no known format matched {source_name}: "
    if json_problem is not None:
        if not lines or any(isinstance(value, LineProblem) for _, value in lines):
            return f"{source_name}: {_not_json(json_problem, lines or [])}"
        looks = _looks_lines(lines)
        pool = [f.name for f in REGISTRY if f.read_text is not None and not f.on_text]
    else:
        looks = _looks(document)
        pool = [
            f.name
            for f in REGISTRY
            if f.read_text is None or not problems.get(f.name, "").startswith("line ")
        ]
    claimed = [name for name in pool if name in problems and name not in misses]
    nearest = sorted(
        (name for name in pool if name in misses), key=lambda name: -misses[name].score
    )
    by_reason: dict[str, list[str]] = {}
    for fmt in [*claimed, *nearest]:
        reason = problems[fmt]
        if reason not in by_reason and len(by_reason) == NEAREST:
            continue
        by_reason.setdefault(reason, []).append(fmt)
    lines_out = [f"- {', '.join(fmts)}: {reason}" for reason, fmts in by_reason.items()]
    listed = {fmt for fmts in by_reason.values() for fmt in fmts}
    expects = [f"- {f.name}: {f.expects}" for f in REGISTRY if f.name in listed]
    return (
        f"{head}{looks}\nthe nearest formats, and what each lacked:\n"
        + "\n".join(lines_out)
        + "\nwhat each format reads:\n"
        + "\n".join(expects)
    )


def _not_json(problem: Problem, lines: list[Line]) -> str:
    """Not JSON, located; text whose first line is JSON and whose later one is not is
    JSON Lines broken at that line."""
    broken = [(n, v) for n, v in lines if isinstance(v, LineProblem)]
    if len(lines) > 1 and broken and not isinstance(lines[0][1], LineProblem):
        number, value = broken[0]
        return f"JSON Lines whose line {number} is {value.what}"
    return problem.what


def _keys(objects: list[dict[str, Any]]) -> str:
    """The objects' keys, the commonest first, as ``'a', 'b' and 3 more``."""
    counts: dict[str, int] = {}
    for obj in objects:
        for key in obj:
            counts[key] = counts.get(key, 0) + 1
    names = sorted(counts, key=lambda k: -counts[k])
    shown = ", ".join(repr(k) for k in names[:KEYS_SHOWN])
    more = f" and {len(names) - KEYS_SHOWN} more" if len(names) > KEYS_SHOWN else ""
    return f"keys {shown}{more}" if names else "no keys"


def _looks(document: Any) -> str:
    """What a JSON document looks like, in a few words."""
    if isinstance(document, dict):
        return f"a JSON object with {_keys([document])}"
    if isinstance(document, list):
        if not document:
            return "an empty JSON list"
        if all(isinstance(item, dict) for item in document):
            return f"a JSON list of {_count(len(document), 'object')} with {_keys(document)}"
        kinds = sorted({json_type(item) for item in document})
        return f"a JSON list of {_count(len(document), 'value')} ({', '.join(kinds)})"
    return f"a JSON {json_type(document)}"


def _looks_lines(lines: list[Line]) -> str:
    """What JSON Lines look like: how many lines, and their keys."""
    objects = [value for _, value in lines if isinstance(value, dict)]
    if len(objects) == len(lines):
        return f"JSON Lines of {_count(len(lines), 'object')} with {_keys(objects)}"
    kinds = sorted({json_type(value) for _, value in lines})
    return f"JSON Lines of {_count(len(lines), 'value')} ({', '.join(kinds)})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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
detect.install(detect_value, JSON_FORMATS, nearest_miss, _BY_NAME)
