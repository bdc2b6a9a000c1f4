"""``flowdrop-buffer normalize PATH``: the MEM-5 provider view of a conversation.

Prints every message a provider would get, the drop count, and each dropped
or repaired entry with where it came from in the file; the import notes of
a recorded conversation follow.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from flowdrop_core.cli._loading import finding_dict, load_source, note_lines, notes_json, origin
from flowdrop_core.cli._options import CONVERSATION_HELP, EPILOG, FORMAT_HELP, positive_int
from flowdrop_core.cli._output import fit, say, say_json
from flowdrop_core.provider import normalize_report

__all__ = ["NAME", "register", "run"]

NAME = "normalize"


def register(subparsers: Any) -> None:
    """Add ``normalize`` to the command line's subparsers."""
    nrm = subparsers.add_parser(
        "normalize",
        help="the MEM-5 provider view of a conversation and why each entry was dropped",
        description="Print the MEM-5 provider view of PATH (a recorded conversation, or a "
        "scenario's buffer followed by its steps' messages), its drop count and the reason "
        "and location of every drop.",
        epilog=EPILOG,
    )
    nrm.add_argument("path", metavar="PATH")
    nrm.add_argument("--format", metavar="F", help=FORMAT_HELP)
    nrm.add_argument("--conversation", type=positive_int, metavar="N", help=CONVERSATION_HELP)
    nrm.add_argument("--json", action="store_true", help="one JSON object")
    nrm.set_defaults(handler=run)


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
    parts.append(fit(" ".join(text.split()), 70) if text else '""')
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    """``normalize PATH``: the MEM-5 provider view, its drop count and the reason per drop."""
    source = load_source(args.path, args.format, getattr(args, "conversation", None))
    report = normalize_report(source.entries)
    if args.json:
        data = {
            "source": source.path,
            "entries": len(source.entries),
            "messages": report.messages,
            "dropped": report.dropped,
            "drops": [finding_dict(source, f) for f in report.drops],
            "findings": [finding_dict(source, f) for f in report.findings],
            "import_notes": notes_json(source.notes),
        }
        say_json(json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False))
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
    lines.extend(f"  {origin(source, f)}: {f.message}" for f in drops)
    if repairs:
        lines.append(f"repaired ({len(repairs)}):")
        lines.extend(f"  {origin(source, f)}: {f.message}" for f in repairs)
    lines.extend(note_lines(source.notes))
    say("\n".join(lines))
    return 0
