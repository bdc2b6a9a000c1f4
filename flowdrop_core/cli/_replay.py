"""``flowdrop-buffer replay PATH``: a scenario or a recorded conversation through the buffer.

Prints the timeline, one row per append, with the steps where the size change
misleads marked (MEM-14). ``--json`` prints one JSON object per step per
line, with its events (each citing its rule): the step's delta. ``--save``
writes the replay as a scenario file whose ``expect`` is what happened.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flowdrop_core.cli._loading import (
    Source,
    check_messages,
    load_source,
    note_lines,
    notes_json,
)
from flowdrop_core.cli._options import (
    CONVERSATION_HELP,
    EPILOG,
    FORMAT_HELP,
    non_blank,
    non_negative_int,
    positive_int,
    utf8_text,
)
from flowdrop_core.cli._output import (
    INPUT_ERRORS,
    CliError,
    Progress,
    in_file,
    leave_to_exit,
    left_to_exit,
    plural,
    say,
    visible,
    visible_json,
)
from flowdrop_core.replay import (
    PlannedStep,
    StepRecord,
    Timeline,
    conversation_to_scenario,
    incoming_summary,
    step_origins,
    stream_replay,
)
from flowdrop_core.replay import replay as run_replay
from flowdrop_core.scenario import SCOPES, Scenario, ScenarioConfig, dump_scenario

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = [
    "NAME",
    "build_replay",
    "format_table",
    "gc_paused",
    "recording_context",
    "register",
    "run",
    "stream_steps",
    "table_lines",
]

NAME = "replay"


def register(subparsers: Any) -> None:
    """Add ``replay`` to the command line's subparsers."""
    rep = subparsers.add_parser(
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
    rep.add_argument("--max-messages", type=non_negative_int, metavar="N", help="window; 0: none")
    rep.add_argument("--scope", choices=SCOPES, help="buffer scope")
    rep.add_argument("--key", type=non_blank, metavar="K", help="storage key")
    rep.add_argument("--session-id", type=utf8_text, metavar="ID", help="session id for every step")
    rep.add_argument("--user-id", type=utf8_text, metavar="ID", help="user id for every step")
    rep.add_argument(
        "--session-owner-id",
        type=utf8_text,
        metavar="ID",
        help="owner of the session for every step (MEM-8: the user scope's identity when a "
        "session drives the run)",
    )
    rep.add_argument("--format", metavar="F", help=FORMAT_HELP)
    rep.add_argument("--conversation", type=positive_int, metavar="N", help=CONVERSATION_HELP)
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
    rep.set_defaults(handler=run)


REPLAY_CONTEXT = REPLAY_CONTEXT = """\
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
        copies=False,  # the command owns the import and changes no message
    )
    return scenario, step_origins(conv, per)  # type: ignore[arg-type]


def _planned_steps(scenario: Scenario, refire: str) -> int:
    if refire == "steps":
        return 2 * len(scenario.steps)
    return len(scenario.steps)


def _run(
    scenario: Scenario,
    refire: str,
    origins: list[list[str]] | None,
    show_progress: bool = True,
    *,
    validated: bool = False,
) -> Timeline:
    """Replay with a progress bar on stderr; ``validated``: ``check_messages`` read every step."""
    bar = Progress.for_stderr(_planned_steps(scenario, refire)) if show_progress else None
    try:
        return run_replay(
            scenario,
            refire=refire,  # type: ignore[arg-type]
            progress=bar,
            origins=origins,
            validated=validated,
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


def _flag(record: StepRecord) -> str:
    """The record's MEM-14 mark for the table, ``""`` when the size change does not mislead."""
    return record.mem14_flag or ""


def _cut(value: str, cap: int) -> str:
    """``value`` cut to ``cap`` characters, ending in an ellipsis, when longer."""
    return value if len(value) <= cap else value[: cap - 1] + "…"


#: The label and incoming columns' caps (their cells are cut when kept).
_LABEL_CAP = _COLUMNS[1][3]
_INCOMING_CAP = _COLUMNS[2][3]


def _scope_cell(r: StepRecord) -> str:
    return "REFUSED" if r.refused else (r.resolved_scope_id if r.resolved_scope_id else '""')


#: A kept table row: label, incoming, scope and flag cells, then count, Δcount,
#: appended, any ("yes"/"no"), dup, repl, heal, evict.
_Row = tuple[str, str, str, str, int, int, int, str, int, int, int, int]


class _Table:
    """The ``replay`` table made from records read one at a time, each then forgotten.

    The column widths depend on every row, so each step is kept until the end
    in a compact row (:data:`_Row`: its text cells cut to their caps, the label
    and scope id the record's own strings, small numbers shared), about 250
    bytes, rather than the record and its events. Widths and totals are read
    off the rows in one pass per column at the end.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.rows: list[_Row] = []
        self.refused = 0

    def add(self, r: StepRecord) -> None:
        """Keep one step's row (see the class doc)."""
        label = r.label
        if len(label) > _LABEL_CAP:
            label = label[: _LABEL_CAP - 1] + "…"
        incoming = incoming_summary(r.incoming, _INCOMING_CAP)
        if r.refused:
            self.refused += 1
        self.rows.append(
            (
                label,
                incoming,
                _scope_cell(r),
                r.mem14_flag or "",
                r.count,
                r.count - r.count_before,
                r.appended,
                "yes" if r.appended_any else "no",
                r.duplicates,
                r.replaced,
                r.inserted,
                r.evicted,
            )
        )

    @staticmethod
    def _longest_of(rows: list[_Row]) -> list[int]:
        """Each column's longest cell: the text columns by their cells, the numbers by their
        extremes (a whole number's text grows with its size)."""
        if not rows:
            return [0] * len(_COLUMNS)

        def most(k: int) -> int:
            return len(str(max(row[k] for row in rows)))

        deltas = [row[5] for row in rows]
        return [
            1 + len(str(len(rows))),
            max(len(row[0]) for row in rows),
            max(len(row[1]) for row in rows),
            most(4),
            max(len(f"{d:+d}") for d in (min(deltas), max(deltas))),
            most(6),
            3 if any(row[7] == "yes" for row in rows) else 2,
            most(8),
            most(9),
            most(10),
            most(11),
            max(len(row[2]) for row in rows),
            max(len(row[3]) for row in rows),
        ]

    def lines(self) -> Iterator[str]:
        """The table's lines: header, aligned rows, summary and legend; rows dropped as written."""
        scenario = self.scenario
        cfg = scenario.config
        window = f"{cfg.max_messages}" if cfg.max_messages else "0 (no cap)"
        context = json.dumps(scenario.context, ensure_ascii=False)
        yield f"{scenario.name}" + (f": {scenario.title}" if scenario.title else "")
        yield (
            f"scope {cfg.scope}, key {cfg.key}, max_messages {window}, storage {cfg.storage}; "
            f"context {context}"
        )
        yield ""
        rows = self.rows
        self.rows = []
        longest = self._longest_of(rows)
        caps = [cap for _, _, _, cap in _COLUMNS]
        # A column's cells are cut to its cap, so no cell is wider than the cap.
        widths = [
            max(len(header), min(width, cap))
            for (_, header, _, cap), width in zip(_COLUMNS, longest, strict=True)
        ]
        specs = [
            f"{align}{width}" for (_, _, align, _), width in zip(_COLUMNS, widths, strict=True)
        ]
        # One format string for every row: a C call per row instead of a pad per cell.
        text_format = "  ".join(f"{{:{spec}}}" for spec in specs).format
        yield text_format(*[header for _, header, _, _ in _COLUMNS]).rstrip()
        yield text_format(*["-" * w for w in widths]).rstrip()
        # The numbers go to the format as numbers (Δcount with its sign), unless one
        # outgrows its column (a million steps): then every cell is text, cut to its cap.
        # (The step's cell is text, cut on its own: past 99,999 steps it outgrows its cap.)
        cut = any(width > cap for width, cap in zip(longest[1:], caps[1:], strict=True))
        step_cap = caps[0]
        specs[4] = specs[4].replace(">", ">+")
        row_format = "  ".join(f"{{:{spec}}}" for spec in specs).format
        flagged = 0
        for number, row in enumerate(rows, start=1):
            label, incoming, scope, flag, *numbers = row
            if flag:
                flagged += 1
            step = f"*{number}" if flag else f" {number}"
            if len(step) > step_cap:
                step = step[: step_cap - 1] + "…"
            if cut:
                cells = [step, label, incoming, str(numbers[0]), f"{numbers[1]:+d}"]
                cells += [str(n) for n in numbers[2:]] + [scope, flag]
                cells = [_cut(c, cap) for c, cap in zip(cells, caps, strict=True)]
                yield text_format(*cells).rstrip()
            else:
                yield row_format(step, label, incoming, *numbers, scope, flag).rstrip()
        yield ""
        yield (
            f"{plural(len(rows), 'step')}: {sum(row[6] for row in rows)} appended, "
            f"{sum(row[8] for row in rows)} duplicates dropped, "
            f"{sum(row[9] for row in rows)} placeholders replaced, "
            f"{sum(row[10] for row in rows)} placeholders inserted, "
            f"{sum(row[11] for row in rows)} evicted, "
            f"{self.refused} refused; "
            f"{flagged} marked * (MEM-14)"
        )
        if flagged:
            yield (
                "* MEM-14: the change in count does not show what was appended "
                "(hidden append: the window evicted as much as it added; growth without append: "
                "placeholders were inserted)."
            )


def format_table(timeline: Timeline) -> str:
    """The default ``replay`` output: a header, an aligned table, a summary and a legend.

    One row per step, computed once (O(steps)); the buffer itself is never shown.
    """
    return "\n".join(table_lines(timeline))


def table_lines(timeline: Timeline) -> Iterator[str]:
    """:func:`format_table`'s lines: each record made a compact row, then the rows written."""
    table = _Table(timeline.scenario)
    for record in timeline.steps:
        table.add(record)
    return table.lines()


def run(args: argparse.Namespace) -> int:
    """``replay PATH``: the timeline as a table, or JSON lines with ``--json``."""
    with gc_paused():
        return _replay_command(args)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for one command (``replay``, ``doctor``, ``lint``).

    A long replay allocates millions of small acyclic objects (steps, events,
    entries) that all stay alive until the output is written; the collector
    would re-scan them again and again for nothing (about a third of a
    100,000-message replay). Reference counting still frees everything; the
    collector is switched back on, as it was, afterwards, except when the
    command left its objects for the process's end (:func:`leave_to_exit`):
    switched on then, its first collection would scan every object the
    replay made (most of a second at 100,000 messages) just before the process
    ends without freeing them.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled and not left_to_exit():
            gc.enable()


#: How many characters of JSON lines are escaped and written at once.
_CHUNK = 1 << 20


def _write_lines(
    out: SupportsWrite[str],
    lines: Iterable[str],
    escape: Callable[[str], str] = visible_json,
    bar: Progress | None = None,
) -> None:
    """Write each line escaped (``escape``: :func:`visible_json`, or :func:`visible` for
    text) and ended, about a megabyte at a time.

    One escape pass and one write per chunk rather than two writes per line
    (100,000 lines: 200,000 writes, each a system call when the output is
    unbuffered). A newline is never escaped, so a chunk's escape is the
    escapes of its lines; memory stays bounded by the chunk, not the output.
    ``bar``: a progress bar drawn while the lines are made, erased before each write.
    """
    chunk: list[str] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= _CHUNK:
            if bar is not None:
                bar.close()
            out.write(escape("\n".join(chunk)) + "\n")
            chunk.clear()
            size = 0
    if bar is not None:
        bar.close()
    if chunk:
        out.write(escape("\n".join(chunk)) + "\n")


def recording_steps(source: Source, per: str) -> Callable[[], Iterator[PlannedStep]]:
    """The steps of a recorded conversation, made afresh each call from its messages.

    What :func:`build_replay`'s scenario holds, without a step object kept per
    message: one message per step labelled by its origin, or one recorded turn
    (shallow copies of its messages) labelled by its first and last origins.
    """
    conv = source.conversation
    assert conv is not None
    messages, origins = conv.messages, conv.origins

    def steps() -> Iterator[PlannedStep]:
        if per == "message":
            for message, origin in zip(messages, origins, strict=True):
                yield (message, None, origin, False, [origin])
            return
        for group in conv.turns:
            where = [origins[k] for k in group]
            label = where[0] if len(where) == 1 else f"{where[0]} … {where[-1]}"
            yield ([dict(messages[k]) for k in group], None, label, False, where)

    return steps


def stream_steps(
    source: Source, args: argparse.Namespace, bar: Progress | None = None
) -> tuple[Scenario, Timeline, Iterator[StepRecord]]:
    """The replay ``replay`` and ``doctor`` print as they go: each record made, then forgotten.

    A recorded conversation is run from its messages (its scenario holds no
    steps); a scenario from its steps. ``check_messages`` read every message.
    ``bar`` is told each step done (its total counted first).
    """
    if source.scenario is not None:
        scenario, _ = build_replay(source, args)
        steps = None
    else:
        conv = source.conversation
        assert conv is not None
        config = _config_overrides(args)
        per = args.per or "message"
        scenario = Scenario(
            name=Path(source.path).stem,
            title=f"{conv.name} ({conv.format}, one append per {per})",
            config=ScenarioConfig(**config),
            context=recording_context(
                config.get("scope", ScenarioConfig().scope), _context_overrides(args)
            ),
            steps=[],
        )
        steps = recording_steps(source, per)
    try:
        timeline, records = stream_replay(
            scenario, steps, refire=getattr(args, "refire", "none"), validated=True, progress=bar
        )
    except INPUT_ERRORS as exc:
        raise CliError(in_file(args.path, exc)) from None
    return scenario, timeline, _located(args.path, records)


def _located(path: str, records: Iterator[StepRecord]) -> Iterator[StepRecord]:
    """``records``, an input error met on the way made a :class:`CliError` naming ``path``."""
    try:
        yield from records
    except INPUT_ERRORS as exc:
        raise CliError(in_file(path, exc)) from None


def _replay_command(args: argparse.Namespace) -> int:
    source = load_source(args.path, args.format, getattr(args, "conversation", None))
    check_messages(source.path, source.entries, source.origins)
    if args.save or args.buffer:
        return _replay_whole(source, args)  # both need every step's record
    bar = Progress.for_stderr(len(source.entries))
    scenario, timeline, records = stream_steps(source, args, bar)
    out = sys.stdout
    if args.json:
        if source.notes:  # one leading line, only when the import left something out
            data = {"import_notes": notes_json(source.notes)}
            out.write(visible_json(json.dumps(data, ensure_ascii=False)))
            out.write("\n")
        # Each line's events are the step's delta (kind, position, entry), written as it comes.
        _write_lines(out, (record.to_json() for record in records), bar=bar)
    else:
        table = _Table(scenario)
        try:
            for record in records:
                table.add(record)
        finally:
            if bar is not None:
                bar.close()
        _write_lines(out, table.lines(), escape=visible)
        if source.notes:
            out.write(visible("\n".join(["", *note_lines(source.notes)])) + "\n")
    if scenario.config.storage.strip().lower() == "memory":
        # Nothing to clean up at exit (a SQLite replay removes its temporary file then).
        leave_to_exit(source, scenario, timeline)
    return 0


def _replay_whole(source: Source, args: argparse.Namespace) -> int:
    """``replay --save`` or ``--json --buffer``: the whole timeline, kept, then written."""
    scenario, origins = build_replay(source, args)
    try:
        # check_messages read every message a step appends or starts from: not again.
        timeline = _run(scenario, args.refire, origins, validated=True)
    except INPUT_ERRORS as exc:
        raise CliError(in_file(args.path, exc)) from None
    out = sys.stdout
    if args.json:
        if source.notes:  # one leading line, only when the import left something out
            data = {"import_notes": notes_json(source.notes)}
            out.write(visible_json(json.dumps(data, ensure_ascii=False)))
            out.write("\n")
        _write_lines(out, timeline.to_json_lines(include_messages=args.buffer))
    else:
        _write_lines(out, table_lines(timeline), escape=visible)
        if source.notes:
            out.write(visible("\n".join(["", *note_lines(source.notes)])) + "\n")
    if args.save:
        name = Path(args.save).stem
        try:
            Path(args.save).write_text(
                dump_scenario(timeline.to_scenario(name=name)), encoding="utf-8"
            )
        except OSError as exc:
            raise CliError(f"cannot write {args.save}: {exc.strerror or exc}") from None
        say(f"saved {args.save}", sys.stderr)
    if scenario.config.storage.strip().lower() == "memory":
        # Nothing to clean up at exit (a SQLite replay removes its temporary file then).
        leave_to_exit(source, scenario, origins, timeline)
    return 0
