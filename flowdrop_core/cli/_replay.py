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
from collections.abc import Callable, Iterable, Iterator, Sequence
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
    StepRecord,
    Timeline,
    conversation_to_scenario,
    incoming_summary,
    step_origins,
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


#: Rows formatted at once when the table is written as it goes (bounded memory).
_TABLE_CHUNK = 8192


def _cut(values: list[str], cap: int) -> list[str]:
    """Each value longer than ``cap`` cut to it, ending in an ellipsis."""
    return [v if len(v) <= cap else v[: cap - 1] + "…" for v in values]


def _longest(values: Iterable[int]) -> int:
    return max(values, default=0)


def _longest_cells(
    steps: Sequence[StepRecord], labels: list[str], incoming: list[str], flags: list[str]
) -> list[int]:
    """Each column's longest cell, from one cheap pass: the number columns by their
    extremes (a whole number's text grows with its size), the text columns by their cells."""
    counts = [r.count for r in steps]
    deltas = [r.count - r.count_before for r in steps]
    longest = [
        1 + len(str(_longest(r.step for r in steps))),
        _longest(map(len, labels)),
        _longest(map(len, incoming)),
        len(str(_longest(counts))),
        max((len(f"{d:+d}") for d in (min(deltas), max(deltas))), default=0),
        len(str(_longest(r.appended for r in steps))),
        (3 if any(r.appended_any for r in steps) else 2) if steps else 0,
        len(str(_longest(r.duplicates for r in steps))),
        len(str(_longest(r.replaced for r in steps))),
        len(str(_longest(r.inserted for r in steps))),
        len(str(_longest(r.evicted for r in steps))),
        _longest(len(_scope_cell(r)) for r in steps),
        _longest(map(len, flags)),
    ]
    return longest


def _scope_cell(r: StepRecord) -> str:
    return "REFUSED" if r.refused else (r.resolved_scope_id if r.resolved_scope_id else '""')


def _columns(
    steps: Sequence[StepRecord],
    labels: list[str],
    incoming: list[str],
    flags: list[str],
    cut: list[bool],
) -> list[list[str]]:
    """The table's cells for ``steps`` column by column, in :data:`_COLUMNS` order, read
    off the records (``labels``, ``incoming`` and ``flags`` made); a column whose ``cut``
    is set has its cells cut to its cap.

    One pass per column over the records' slots (the event tallies were counted
    when each record was made), so no row dict is built per step for the table.
    """
    columns = [
        [f"*{r.step}" if flag else f" {r.step}" for r, flag in zip(steps, flags, strict=True)],
        labels,
        incoming,
        [str(r.count) for r in steps],
        [f"{r.count - r.count_before:+d}" for r in steps],
        [str(r.appended) for r in steps],
        ["yes" if r.appended_any else "no" for r in steps],
        [str(r.duplicates) for r in steps],
        [str(r.replaced) for r in steps],
        [str(r.inserted) for r in steps],
        [str(r.evicted) for r in steps],
        [_scope_cell(r) for r in steps],
        flags,
    ]
    return [
        _cut(column, cap) if cutting else column
        for column, (_, _, _, cap), cutting in zip(columns, _COLUMNS, cut, strict=True)
    ]


def format_table(timeline: Timeline) -> str:
    """The default ``replay`` output: a header, an aligned table, a summary and a legend.

    One row per step, computed once (O(steps)); the buffer itself is never shown.
    """
    return "\n".join(table_lines(timeline))


def table_lines(timeline: Timeline) -> Iterator[str]:
    """:func:`format_table`'s lines, made a chunk of rows at a time as they are read.

    The column widths come first from one cheap pass over the records (the text
    columns' cells, cut to their caps, are kept for the rows); then the rows are
    formatted :data:`_TABLE_CHUNK` at a time, so a long replay's table is never
    whole in memory when it is written as it goes.
    """
    scenario = timeline.scenario
    cfg = scenario.config
    window = f"{cfg.max_messages}" if cfg.max_messages else "0 (no cap)"
    context = json.dumps(scenario.context, ensure_ascii=False)
    yield f"{scenario.name}" + (f": {scenario.title}" if scenario.title else "")
    yield (
        f"scope {cfg.scope}, key {cfg.key}, max_messages {window}, storage {cfg.storage}; "
        f"context {context}"
    )
    yield ""
    steps = timeline.steps
    labels = _cut([r.label for r in steps], _COLUMNS[1][3])
    incoming = _cut([incoming_summary(r.incoming) for r in steps], _COLUMNS[2][3])
    flags = [_flag(r) for r in steps]
    longest = _longest_cells(steps, labels, incoming, flags)
    # A column's cells are cut to its cap, so no cell is wider than the cap.
    widths = [
        max(len(header), min(width, cap))
        for (_, header, _, cap), width in zip(_COLUMNS, longest, strict=True)
    ]
    cut = [width > cap for (_, _, _, cap), width in zip(_COLUMNS, longest, strict=True)]
    # One format string for every row: a C call per row instead of a pad per cell
    # (what str.rjust / str.ljust do, cell by cell, then the trailing spaces cut).
    row_format = "  ".join(
        f"{{:{align}{width}}}" for (_, _, align, _), width in zip(_COLUMNS, widths, strict=True)
    ).format
    yield row_format(*[header for _, header, _, _ in _COLUMNS]).rstrip()
    yield row_format(*["-" * w for w in widths]).rstrip()
    for at in range(0, len(steps), _TABLE_CHUNK):
        upto = at + _TABLE_CHUNK
        columns = _columns(steps[at:upto], labels[at:upto], incoming[at:upto], flags[at:upto], cut)
        yield from [row_format(*r).rstrip() for r in zip(*columns, strict=True)]
    yield ""
    yield _summary(timeline)
    if any(flags):
        yield (
            "* MEM-14: the change in count does not show what was appended "
            "(hidden append: the window evicted as much as it added; growth without append: "
            "placeholders were inserted)."
        )


def _summary(timeline: Timeline) -> str:
    """The line under the table: totals over the steps, read off the records."""
    steps = timeline.steps
    return (
        f"{plural(len(steps), 'step')}: {sum(r.appended for r in steps)} appended, "
        f"{sum(r.duplicates for r in steps)} duplicates dropped, "
        f"{sum(r.replaced for r in steps)} placeholders replaced, "
        f"{sum(r.inserted for r in steps)} placeholders inserted, "
        f"{sum(r.evicted for r in steps)} evicted, "
        f"{sum(1 for r in steps if r.refused)} refused; "
        f"{sum(1 for r in steps if r.mem14_flag)} marked * (MEM-14)"
    )


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
    out: SupportsWrite[str], lines: Iterable[str], escape: Callable[[str], str] = visible_json
) -> None:
    """Write each line escaped (``escape``: :func:`visible_json`, or :func:`visible` for
    text) and ended, about a megabyte at a time.

    One escape pass and one write per chunk rather than two writes per line
    (100,000 lines: 200,000 writes, each a system call when the output is
    unbuffered). A newline is never escaped, so a chunk's escape is the
    escapes of its lines; memory stays bounded by the chunk, not the output.
    """
    chunk: list[str] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= _CHUNK:
            out.write(escape("\n".join(chunk)) + "\n")
            chunk.clear()
            size = 0
    if chunk:
        out.write(escape("\n".join(chunk)) + "\n")


def _replay_command(args: argparse.Namespace) -> int:
    source = load_source(args.path, args.format, getattr(args, "conversation", None))
    check_messages(source.path, source.entries, source.origins)
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
        # Each line's events are the step's delta (kind, position, entry); the
        # whole buffer after each step only with --buffer (O(steps x buffer)).
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
