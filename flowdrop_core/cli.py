"""The ``flowdrop-buffer`` command line (``python -m flowdrop_core``), issue 4 item 4.

Four subcommands, all thin layers over the library:

- ``replay PATH``: run a scenario file or a recorded conversation through the
  buffer and print the timeline, one row per append, with the steps where the
  size change misleads marked (MEM-14). ``--json`` prints one JSON object per
  step per line, with its events (each citing its rule) and the buffer after.
- ``check PATH...``: replay scenario files and compare each step with its
  ``expect``; every mismatch is printed, then ``N passed, M failed``.
- ``normalize PATH``: the MEM-5 provider view of a conversation and every
  entry it dropped, with where the entry came from.
- ``lint PATH``: what a provider would reject (orphan results, unanswered
  calls, duplicate ids, leading tool messages), with locations.

``replay``, ``normalize`` and ``lint`` also list the import notes of a
recorded conversation: what the importer left out, where and why (issue 13).

Exit codes: 0 fine; 1 ``check`` found a mismatch or ``lint`` found something;
2 bad input (missing file, bad JSON, unknown format, bad message, bad
option), reported on stderr in one message and never as a traceback.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from flowdrop_core.importers import (
    FORMATS,
    ConversationFormatError,
    ImportedConversation,
    ImportNote,
    loads_or_problem,
    parse_conversation,
)
from flowdrop_core.messages import InvalidMessagesError, read_message
from flowdrop_core.provider import Finding, normalize_report
from flowdrop_core.replay import (
    ReplayError,
    StepRecord,
    Timeline,
    check,
    conversation_to_scenario,
    step_origins,
)
from flowdrop_core.replay import replay as run_replay
from flowdrop_core.scenario import (
    SCOPES,
    Scenario,
    ScenarioConfig,
    ScenarioError,
    dump_scenario,
    parse_scenario,
)
from flowdrop_core.storage import StorageError

__all__ = ["PROG", "Progress", "main"]

PROG = "flowdrop-buffer"

#: Replays shorter than this never draw a progress bar (they finish at once).
PROGRESS_MIN_STEPS = 200

#: Bad input: reported on stderr as one message, exit 2, no traceback. ``ValueError``
#: last: a configuration the buffer refuses (``ConversationBuffer``'s blank key) is bad
#: input too, whichever layer notices it first.
INPUT_ERRORS: tuple[type[Exception], ...] = (
    ScenarioError,
    ConversationFormatError,
    ReplayError,
    InvalidMessagesError,
    StorageError,
    ValueError,
)


class CliError(Exception):
    """Bad input found by the command line itself (exit 2)."""


#: What the last-resort handler says: an exception no layer turned into a located
#: error is a bug in this tool; the user still gets one line, exit 2, no traceback.
INTERNAL_ERROR = "internal error while handling this input"


#: Characters a terminal would act on or hide rather than show: C0/C1 controls
#: (ESC starts colour, cursor and title sequences) but the newline, bidi overrides
#: (which reorder what is shown), zero-width characters, and lone surrogates
#: (undecodable bytes in a file name), which no UTF-8 stream can encode.
_UNPRINTABLE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def visible(text: str) -> str:
    """``text`` for a terminal: data from input is shown, never obeyed (issue 9).

    Each character of :data:`_UNPRINTABLE` becomes its escape (``\\x1b``,
    ``\\u202e``), so a message or an id cannot recolour the terminal, move
    the cursor, reorder a line or fail the write; newlines stay.
    """
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _say(text: str, stream: TextIO | None = None) -> None:
    """Print one block of human-readable output through :func:`visible`."""
    print(visible(text), file=stream or sys.stdout)


# --------------------------------------------------------------------------- loading


@dataclass
class Source:
    """A file read for a command: a scenario, or an imported recorded conversation.

    ``entries`` and ``origins`` are every message in the file in order (a
    scenario's starting buffer, then its steps' messages, verbatim), for
    ``normalize`` and ``lint``. ``notes`` is what the import left out (issue 13).
    """

    path: str
    scenario: Scenario | None
    conversation: ImportedConversation | None
    entries: list[Any]
    origins: list[str]
    notes: list[ImportNote] = field(default_factory=list)


def _read_text(path: str) -> str:
    """The file as text; a missing or unreadable file is a :class:`CliError`."""
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:
        raise CliError(f"cannot read {path}: is a directory") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _json(text: str, path: str) -> Any:
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


def load_source(path: str, fmt: str | None = None) -> Source:
    """Read ``path`` as a scenario file or, failing that, a recorded conversation.

    A JSON object with ``steps`` is a scenario (``--format scenario`` forces
    it); anything else goes to the importers, auto-detected unless ``fmt``.
    """
    _check_format(fmt)
    text = _read_text(path)
    if fmt == "scenario" or (fmt is None and _is_scenario(text, path)):
        scenario = parse_scenario(text, source=path)
        entries, origins = _scenario_entries(scenario)
        return Source(path, scenario, None, entries, origins)
    conv = parse_conversation(text, format=fmt, source_name=path)
    return Source(path, None, conv, list(conv.messages), list(conv.origins), list(conv.notes))


def _note_lines(notes: Sequence[ImportNote]) -> list[str]:
    """The import notes as text: a heading, then ``where: what: why`` per note."""
    if not notes:
        return []
    return [
        f"import notes ({len(notes)}): left out of the imported messages",
        *(f"  {note}" for note in notes),
    ]


def _notes_json(notes: Sequence[ImportNote]) -> list[dict[str, str]]:
    return [note.to_dict() for note in notes]


def _scenario_entries(scenario: Scenario) -> tuple[list[Any], list[str]]:
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


# --------------------------------------------------------------------------- replay

#: The context a recorded conversation replays under when no identity option is given.
IMPLICIT_SESSION = "replay"


def _context_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.session_id is not None:
        out["session_id"] = args.session_id
    if args.user_id is not None:
        out["user_id"] = args.user_id
    if args.session_owner_id is not None:
        out["session_owner_id"] = args.session_owner_id
    return out


def recording_context(scope: str, options: dict[str, Any]) -> dict[str, Any]:
    """The context a recorded conversation replays under (a recording names no context).

    Under the ``session`` scope (the default) with no ``--session-id``, the
    session is ``"replay"``, so the recording has a slot. No other scope gets
    an implicit session: under ``user`` it would make MEM-8 take the (absent)
    session owner as the identity and refuse every step, whatever
    ``--user-id`` says. The options given are the rest of the context.
    """
    if scope == "session" and "session_id" not in options:
        return {"session_id": IMPLICIT_SESSION, **options}
    return dict(options)


def _config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.max_messages is not None:
        out["max_messages"] = args.max_messages
    if args.scope is not None:
        out["scope"] = args.scope
    if args.key is not None:
        out["key"] = args.key
    return out


def _override_scenario(
    scenario: Scenario, config: dict[str, Any], context: dict[str, Any]
) -> Scenario:
    """Options override the file: config fields, and context ids for *every* step.

    A context option replaces the scenario's value and removes the same key
    from each step's own context, so it applies to all steps. Every other step
    field (``label``, ``append``, ``refire``) is kept as it is.
    """
    if not config and not context:
        return scenario
    steps = scenario.steps
    new_context = scenario.context
    if context:
        new_context = {**(scenario.context or {}), **context}
        steps = [
            step
            if step.context is None
            else step.model_copy(
                update={"context": {k: v for k, v in step.context.items() if k not in context}}
            )
            for step in scenario.steps
        ]
    return scenario.model_copy(
        update={
            "config": scenario.config.model_copy(update=config),
            "context": new_context,
            "steps": steps,
        }
    )


def build_replay(
    source: Source, args: argparse.Namespace
) -> tuple[Scenario, list[list[str]] | None]:
    """The scenario ``replay`` runs, with the command line's overrides, and step origins."""
    config = _config_overrides(args)
    context = _context_overrides(args)
    if source.scenario is not None:
        if args.per is not None:
            raise CliError(
                f"{source.path}: --per applies to recorded conversations; "
                "a scenario's steps are its appends"
            )
        return _override_scenario(source.scenario, config, context), None
    conv = source.conversation
    assert conv is not None
    per = args.per or "message"
    scenario = conversation_to_scenario(
        conv,
        per=per,  # type: ignore[arg-type]
        config=ScenarioConfig(**config),
        context=recording_context(config.get("scope", ScenarioConfig().scope), context),
        name=Path(source.path).stem,
    )
    return scenario, step_origins(conv, per)  # type: ignore[arg-type]


class Progress:
    """A progress bar drawn by hand on a terminal (stderr only when it is a TTY).

    Called as ``progress(done, total)``; redraws at most every 0.1 s, and
    :meth:`close` erases the bar so the table or JSON that follows is clean.
    """

    def __init__(self, stream: TextIO, label: str = "replaying", width: int = 30) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self._last = 0.0
        self._drawn = 0

    @classmethod
    def for_stderr(cls, total: int) -> Progress | None:
        """A bar on stderr when it is a terminal and the replay is long, else ``None``."""
        stream = sys.stderr
        if total < PROGRESS_MIN_STEPS or not stream.isatty():
            return None
        return cls(stream)

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        filled = self.width * done // max(total, 1)
        text = f"{self.label} [{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} steps"
        self.stream.write("\r" + text)
        self.stream.flush()
        self._drawn = len(text)

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0


def _planned_steps(scenario: Scenario, refire: str) -> int:
    if refire == "steps":
        return 2 * len(scenario.steps)
    return len(scenario.steps)


def _run(
    scenario: Scenario, refire: str, origins: list[list[str]] | None, show_progress: bool = True
) -> Timeline:
    bar = Progress.for_stderr(_planned_steps(scenario, refire)) if show_progress else None
    try:
        return run_replay(
            scenario,
            refire=refire,  # type: ignore[arg-type]
            progress=bar,
            origins=origins,
        )
    finally:
        if bar is not None:
            bar.close()


_COLUMNS: tuple[tuple[str, str, str, int], ...] = (
    # (row key, header, alignment, max width)
    ("step", "step", ">", 6),
    ("label", "label", "<", 34),
    ("incoming", "incoming", "<", 44),
    ("count", "count", ">", 6),
    ("count_delta", "Δcount", ">", 6),
    ("appended", "appended", ">", 8),
    ("appended_any", "any", "<", 3),
    ("duplicates", "dup", ">", 3),
    ("replaced", "repl", ">", 4),
    ("inserted", "heal", ">", 4),
    ("evicted", "evict", ">", 5),
    ("resolved_scope_id", "scope id", "<", 16),
    ("mem14_flag", "MEM-14", "<", 22),
)


def _cells(row: dict[str, Any], record: StepRecord) -> list[str]:
    """One table row's cells, in :data:`_COLUMNS` order (one call per row, not per cell)."""
    flag = row["mem14_flag"]
    scope_id = row["resolved_scope_id"]
    return [
        f"{'*' if flag else ' '}{row['step']}",
        row["label"],
        row["incoming"],
        str(row["count"]),
        f"{row['count_delta']:+d}",
        str(row["appended"]),
        "yes" if row["appended_any"] else "no",
        str(row["duplicates"]),
        str(row["replaced"]),
        str(row["inserted"]),
        str(row["evicted"]),
        "REFUSED" if record.refused else (scope_id if scope_id else '""'),
        flag,
    ]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(timeline: Timeline) -> str:
    """The default ``replay`` output: a header, an aligned table, a summary and a legend.

    One row per step, computed once (O(steps)); the buffer itself is never shown.
    """
    scenario = timeline.scenario
    cfg = scenario.config
    window = f"{cfg.max_messages}" if cfg.max_messages else "0 (no cap)"
    context = json.dumps(scenario.context, ensure_ascii=False)
    lines = [
        f"{scenario.name}" + (f": {scenario.title}" if scenario.title else ""),
        f"scope {cfg.scope}, key {cfg.key}, max_messages {window}, storage {cfg.storage}; "
        f"context {context}",
        "",
    ]
    rows = timeline.rows()
    caps = [cap for _, _, _, cap in _COLUMNS]
    cells = []
    for row, record in zip(rows, timeline.steps, strict=True):
        values = _cells(row, record)
        cells.append(
            [
                v if len(v) <= cap else v[: cap - 1] + "…"
                for v, cap in zip(values, caps, strict=True)
            ]
        )
    widths = [
        max(len(header), max(map(len, column), default=0))
        for (_, header, _, _), column in zip(
            _COLUMNS, zip(*cells, strict=False) if cells else [()] * len(_COLUMNS), strict=False
        )
    ]
    pads = [str.rjust if align == ">" else str.ljust for _, _, align, _ in _COLUMNS]

    def render(values: Sequence[str]) -> str:
        return "  ".join(
            [pad(value, width) for value, pad, width in zip(values, pads, widths, strict=True)]
        ).rstrip()

    lines.append(render([header for _, header, _, _ in _COLUMNS]))
    lines.append(render(["-" * w for w in widths]))
    lines.extend(render(r) for r in cells)
    lines.append("")
    lines.append(_summary(timeline, rows))
    if any(row["mem14_flag"] for row in rows):
        lines.append(
            "* MEM-14: the change in count does not show what was appended "
            "(hidden append: the window evicted as much as it added; growth without append: "
            "placeholders were inserted)."
        )
    return "\n".join(lines)


def _summary(timeline: Timeline, rows: list[dict[str, Any]] | None = None) -> str:
    rows = timeline.rows() if rows is None else rows
    total = {
        key: sum(row[key] for row in rows)
        for key in ("appended", "duplicates", "replaced", "inserted", "evicted")
    }
    refused = sum(1 for row in rows if row["refused"])
    flagged = sum(1 for row in rows if row["mem14_flag"])
    return (
        f"{_plural(len(rows), 'step')}: {total['appended']} appended, "
        f"{total['duplicates']} duplicates dropped, {total['replaced']} placeholders replaced, "
        f"{total['inserted']} placeholders inserted, {total['evicted']} evicted, "
        f"{refused} refused; {flagged} marked * (MEM-14)"
    )


def cmd_replay(args: argparse.Namespace) -> int:
    """``replay PATH``: the timeline as a table, or JSON lines with ``--json``."""
    with _gc_paused():
        return _replay_command(args)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for one command.

    A long replay allocates millions of small acyclic objects (steps, events,
    entries) that all stay alive until the output is written; the collector
    would re-scan them again and again for nothing (about a third of a
    100,000-message replay). Reference counting still frees everything; the
    collector is switched back on, as it was, afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _replay_command(args: argparse.Namespace) -> int:
    source = load_source(args.path, args.format)
    check_messages(source.path, source.entries, source.origins)
    scenario, origins = build_replay(source, args)
    try:
        timeline = _run(scenario, args.refire, origins)
    except INPUT_ERRORS as exc:
        raise CliError(_in_file(args.path, exc)) from None
    out = sys.stdout
    if args.json:
        if source.notes:  # one leading line, only when the import left something out
            out.write(json.dumps({"import_notes": _notes_json(source.notes)}, ensure_ascii=False))
            out.write("\n")
        # Each line's events are the step's delta (kind, position, entry); the
        # whole buffer after each step only with --buffer (O(steps x buffer)).
        for line in timeline.to_json_lines(include_messages=args.buffer):
            out.write(line)
            out.write("\n")
    else:
        out.write(visible(format_table(timeline)) + "\n")
        if source.notes:
            out.write(visible("\n".join(["", *_note_lines(source.notes)])) + "\n")
    if args.save:
        name = Path(args.save).stem
        try:
            Path(args.save).write_text(
                dump_scenario(timeline.to_scenario(name=name)), encoding="utf-8"
            )
        except OSError as exc:
            raise CliError(f"cannot write {args.save}: {exc.strerror or exc}") from None
        _say(f"saved {args.save}", sys.stderr)
    return 0


# --------------------------------------------------------------------------- check


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _scenario_only(path: str) -> Scenario:
    """A scenario file for ``check``; a recorded conversation is named as such, in one line."""
    text = _read_text(path)
    data = _json(text, path)
    if not (isinstance(data, dict) and "steps" in data):
        raise CliError(
            f"{path}: not a scenario (no 'steps'); check needs a scenario file with "
            "expect (replay PATH --save SCENARIO makes one from a recording)"
        )
    return parse_scenario(text, source=path)


def cmd_check(args: argparse.Namespace) -> int:
    """``check PATH...``: every mismatch, then ``N passed, M failed``; exit 1 on any."""
    passed = failed = errors = 0
    for path in args.paths:
        try:
            scenario = _scenario_only(path)
            check_messages(path, *_scenario_entries(scenario))
            result = check(scenario)
        except (CliError, *INPUT_ERRORS) as exc:
            _error(_in_file(path, exc))
            errors += 1
            continue
        if result.passed:
            passed += 1
            if args.verbose:
                _say(f"ok {path} ({_plural(len(scenario.steps), 'step')})")
        else:
            failed += 1
            for mismatch in result.mismatches:
                _say(str(mismatch))
    summary = f"{passed} passed, {failed} failed"
    if errors:
        summary += f", {_plural(errors, 'error')}"
    print(summary)
    if errors:
        return 2
    return 1 if failed else 0


# --------------------------------------------------------------------------- normalize / lint


def _origin(source: Source, finding: Finding) -> str:
    if 0 <= finding.index < len(source.origins):
        return source.origins[finding.index]
    return f"entry {finding.index}"


def _finding_dict(source: Source, finding: Finding) -> dict[str, Any]:
    return {**finding.model_dump(mode="json"), "origin": _origin(source, finding)}


def _message_line(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    parts = [f"{role:<9}"]
    calls = message.get("tool_calls") or []
    if calls:
        names = []
        for call in calls:
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            names.append(
                f"{call.get('id')} ({fn.get('name')})" if fn.get("name") else call.get("id")
            )
        parts.append("calls " + ", ".join(str(n) for n in names))
    if message.get("tool_call_id") is not None:
        parts.append(f"[{message['tool_call_id']}]")
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    parts.append(_fit(" ".join(text.split()), 70) if text else '""')
    return " ".join(parts)


def cmd_normalize(args: argparse.Namespace) -> int:
    """``normalize PATH``: the MEM-5 provider view, its drop count and the reason per drop."""
    source = load_source(args.path, args.format)
    report = normalize_report(source.entries)
    if args.json:
        data = {
            "source": source.path,
            "entries": len(source.entries),
            "messages": report.messages,
            "dropped": report.dropped,
            "drops": [_finding_dict(source, f) for f in report.drops],
            "findings": [_finding_dict(source, f) for f in report.findings],
            "import_notes": _notes_json(source.notes),
        }
        print(json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False))
        return 0
    lines = [
        f"MEM-5 provider view of {source.path}: {len(source.entries)} entries in, "
        f"{len(report.messages)} messages out, {report.dropped} dropped",
        "",
    ]
    width = len(str(max(len(report.messages) - 1, 0)))
    lines.extend(f"  {k:>{width}}  {_message_line(m)}" for k, m in enumerate(report.messages))
    if not report.messages:
        lines.append("  (no messages)")
    drops = report.drops
    repairs = [f for f in report.findings if not f.dropped]
    lines.append("")
    lines.append(f"dropped ({len(drops)}):" if drops else "dropped: none")
    lines.extend(f"  {_origin(source, f)} (entry {f.index}): {f.message}" for f in drops)
    if repairs:
        lines.append(f"repaired ({len(repairs)}):")
        lines.extend(f"  {_origin(source, f)} (entry {f.index}): {f.message}" for f in repairs)
    lines.extend(_note_lines(source.notes))
    _say("\n".join(lines))
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    """``lint PATH``: each finding with its location; exit 1 when there is any (like a linter)."""
    source = load_source(args.path, args.format)
    findings = sorted(normalize_report(source.entries).findings, key=lambda f: f.index)
    if getattr(args, "json", False):
        data = {
            "source": source.path,
            "findings": [_finding_dict(source, f) for f in findings],
            "import_notes": _notes_json(source.notes),
        }
        print(json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False))
        return 1 if findings else 0
    for f in findings:
        _say(f"{source.path}: {_origin(source, f)} (entry {f.index}): {f.kind}: {f.message}")
    for note in source.notes:
        _say(f"{source.path}: {note.where or '(top level)'}: import note: {note.what}: {note.why}")
    summary = _plural(len(findings), "finding") if findings else "no findings"
    if source.notes:
        summary += f", {_plural(len(source.notes), 'import note')}"
    print(summary)
    return 1 if findings else 0


# --------------------------------------------------------------------------- parser


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _text(text: str) -> str:
    """An option value that is text: bytes that are not UTF-8 arrive as lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError("not UTF-8 text") from None
    return text


def _non_blank(text: str) -> str:
    if not _text(text).strip():
        raise argparse.ArgumentTypeError("expected a non-blank string")
    return text


EPILOG = """\
exit status: 0 fine; 1 check found a mismatch or lint found something;
2 bad input (missing file, bad JSON, unknown format, bad message, bad option).
"""


REPLAY_CONTEXT = """\
context of a replay:
  a scenario runs under its own context (each step's context overrides it key by
  key); --session-id, --user-id and --session-owner-id replace those keys for
  every step. A recorded conversation names no context: under the session scope
  (the default) it runs as session "replay" unless --session-id is given; under
  any other scope only the options given make its context, so
  `--scope user --user-id 7` stores under user 7. MEM-8: when a session drives
  the run, the user scope's identity is the session's owner (--session-owner-id),
  never --user-id. Ids are read by GR-MEM's usable-id rule (see README).
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; ``prog`` is ``flowdrop-buffer`` however it is started."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Replay, check and lint FlowDrop conversation buffers (GR-MEM, MEM-14).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    fmt_help = f"input format (default: detect): {', '.join(FORMATS)}"

    rep = sub.add_parser(
        "replay",
        help="replay a scenario or recorded conversation and print the timeline",
        description="Replay PATH (a scenario file or a recorded conversation) through the "
        "buffer and print one row per append (or, with --json, one JSON line per append "
        "carrying its events: the delta). Options override the file; --session-id, "
        "--user-id and --session-owner-id apply to every step. Rows marked * are the "
        "MEM-14 cases.",
        epilog=REPLAY_CONTEXT + "\n" + EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("path", metavar="PATH")
    rep.add_argument("--max-messages", type=_non_negative_int, metavar="N", help="window; 0: none")
    rep.add_argument("--scope", choices=SCOPES, help="buffer scope")
    rep.add_argument("--key", type=_non_blank, metavar="K", help="storage key")
    rep.add_argument("--session-id", type=_text, metavar="ID", help="session id for every step")
    rep.add_argument("--user-id", type=_text, metavar="ID", help="user id for every step")
    rep.add_argument(
        "--session-owner-id",
        type=_text,
        metavar="ID",
        help="owner of the session for every step (MEM-8: the user scope's identity when a "
        "session drives the run)",
    )
    rep.add_argument("--format", metavar="F", help=fmt_help)
    rep.add_argument(
        "--per",
        choices=("message", "turn"),
        help="recorded conversations: one append per message (default) or per recorded turn",
    )
    rep.add_argument(
        "--refire",
        nargs="?",
        const="steps",
        default="none",
        choices=("none", "steps", "results"),
        help="re-fire: 'steps' (the default of a bare --refire) replays every step a second "
        "time; 'results' re-sends each step carrying a tool result right after it",
    )
    rep.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per step per line: the MEM-14 report and the step's events, "
        "which are its delta (each event's kind, position and entry; applying them in order "
        "to the buffer before the step gives the buffer after it). The whole buffer is not "
        "repeated on every line unless --buffer is given",
    )
    rep.add_argument(
        "--buffer",
        action="store_true",
        help='with --json, also put the whole buffer after each step under "messages" '
        "(output grows with steps x buffer size: for short replays)",
    )
    rep.add_argument(
        "--save",
        metavar="SCENARIO",
        help="also save the replay as a scenario file whose expect is what happened",
    )
    rep.set_defaults(handler=cmd_replay)

    chk = sub.add_parser(
        "check",
        help="replay scenario files and compare each step with its expect",
        description="Replay each scenario and compare every step with its expect. Prints "
        "each mismatch (scenario: step: field: expected, got) and a last line "
        "'N passed, M failed'. Exit 1 on any mismatch.",
        epilog=EPILOG,
    )
    chk.add_argument("paths", nargs="+", metavar="PATH")
    chk.add_argument("-v", "--verbose", action="store_true", help="also list passing scenarios")
    chk.set_defaults(handler=cmd_check)

    nrm = sub.add_parser(
        "normalize",
        help="the MEM-5 provider view of a conversation and why each entry was dropped",
        description="Print the MEM-5 provider view of PATH (a recorded conversation, or a "
        "scenario's buffer followed by its steps' messages), its drop count and the reason "
        "and location of every drop.",
        epilog=EPILOG,
    )
    nrm.add_argument("path", metavar="PATH")
    nrm.add_argument("--format", metavar="F", help=fmt_help)
    nrm.add_argument("--json", action="store_true", help="one JSON object")
    nrm.set_defaults(handler=cmd_normalize)

    lnt = sub.add_parser(
        "lint",
        help="what a provider would reject, with locations (exit 1 when anything is found)",
        description="List what a provider would reject in PATH: orphan results, unanswered "
        "calls, duplicate ids, leading tool messages, entries that are not messages. Each "
        "finding names where the entry came from. Exit 1 when there is any finding. What the "
        "import left out of a recording is listed too, as import notes (they do not change "
        "the exit status).",
        epilog=EPILOG,
    )
    lnt.add_argument("path", metavar="PATH")
    lnt.add_argument("--format", metavar="F", help=fmt_help)
    lnt.add_argument(
        "--json", action="store_true", help="one JSON object: findings and import notes"
    )
    lnt.set_defaults(handler=cmd_lint)
    return parser


def _error(message: str) -> None:
    _say(f"{PROG}: error: {message}", sys.stderr)


def _in_file(path: str, exc: Exception) -> str:
    """``exc``'s message naming the file it is about (the library names the scenario)."""
    text = str(exc)
    return text if text.startswith(path) else f"{path}: {text}"


def _paths(args: argparse.Namespace) -> str:
    paths = getattr(args, "paths", None) or [getattr(args, "path", "")]
    return ", ".join(str(p) for p in paths)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (never raises for bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: bad option (2) or --help (0)
        return int(exc.code) if isinstance(exc.code, int) else 2
    handler: Callable[[argparse.Namespace], int] = args.handler
    # Runtime warnings (MEM-7 refusals, MEM-12 unserialized appends) go to stderr,
    # except under ``check``, where a refusal is the behaviour being checked.
    warnings: logging.Handler
    if args.command == "check":
        warnings = logging.NullHandler()
    else:
        warnings = logging.StreamHandler(sys.stderr)
        warnings.setFormatter(logging.Formatter(f"{PROG}: warning: %(message)s"))
    logger = logging.getLogger("flowdrop_core")
    logger.addHandler(warnings)
    try:
        return handler(args)
    except (CliError, *INPUT_ERRORS) as exc:
        _error(str(exc))
        return 2
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, without a traceback at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, not bad input: still one message, never a traceback
        _error(
            f"{_paths(args)}: {INTERNAL_ERROR} ({type(exc).__name__}: {exc}); "
            "please report it with the file"
        )
        return 2
    finally:
        logger.removeHandler(warnings)
