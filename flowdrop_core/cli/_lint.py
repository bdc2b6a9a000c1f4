"""``flowdrop-buffer lint PATH``: what a provider would reject, with locations.

Orphan results, unanswered calls, duplicate ids, leading tool messages and
entries that are not messages, each with where it came from; exit 1 when
there is any finding (like a linter). Import notes are listed too and do not
change the exit status.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from flowdrop_core.cli._loading import (
    Source,
    finding_dict,
    load_source,
    load_sources,
    notes_json,
    origin,
)
from flowdrop_core.cli._options import CONVERSATION_HELP, EPILOG, FORMAT_HELP, positive_int
from flowdrop_core.cli._output import leave_to_exit, plural, say, say_json
from flowdrop_core.cli._replay import gc_paused
from flowdrop_core.provider import normalize_report

__all__ = ["NAME", "register", "run"]

NAME = "lint"


def register(subparsers: Any) -> None:
    """Add ``lint`` to the command line's subparsers."""
    lnt = subparsers.add_parser(
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
    lnt.add_argument("--format", metavar="F", help=FORMAT_HELP)
    lnt.add_argument("--conversation", type=positive_int, metavar="N", help=CONVERSATION_HELP)
    lnt.add_argument(
        "--json", action="store_true", help="one JSON object: findings and import notes"
    )
    lnt.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """``lint PATH``: each finding with its location; exit 1 when there is any (like a linter).

    A file of one conversation per line is linted conversation by conversation
    (each on its own: one line's call ids are not another's), unless
    ``--conversation N`` picks one.
    """
    with gc_paused():
        return _lint(args)


def _lint(args: argparse.Namespace) -> int:
    picked = getattr(args, "conversation", None)
    if picked is None:
        sources = load_sources(args.path, args.format)
    else:
        sources = [load_source(args.path, args.format, picked)]
    reports = [
        (source, sorted(normalize_report(source.entries).findings, key=lambda f: f.index))
        for source in sources
    ]
    found = any(findings for _, findings in reports)
    leave_to_exit(sources, reports)  # freed by the process's end (see replay)
    if getattr(args, "json", False):
        rows = [
            {
                "source": source.path,
                **({"conversation": source.label} if source.label else {}),
                "findings": [finding_dict(source, f) for f in findings],
                "import_notes": notes_json(source.notes),
            }
            for source, findings in reports
        ]
        data: Any = rows[0] if len(rows) == 1 else {"source": args.path, "conversations": rows}
        say_json(json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False))
        return 1 if found else 0
    for source, findings in reports:
        _report(source, findings, many=len(reports) > 1)
    return 1 if found else 0


def _report(source: Source, findings: list[Any], *, many: bool) -> None:
    for f in findings:
        say(f"{source.path}: {origin(source, f)}: {f.kind}: {f.message}")
    for note in source.notes:
        say(f"{source.path}: {note.where or '(top level)'}: import note: {note.what}: {note.why}")
    summary = plural(len(findings), "finding") if findings else "no findings"
    if source.notes:
        summary += f", {plural(len(source.notes), 'import note')}"
    say(f"{source.label}: {summary}" if many else summary)
