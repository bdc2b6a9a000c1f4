"""``flowdrop-buffer store FILE`` on a framework's own file (Agents ``SQLiteSession``, LangGraph).

:mod:`flowdrop_core.cli._store` hands a SQLite file here when
:func:`~flowdrop_core.framework_stores.detect` recognises it. Without
``--thread``: every session or thread with its entry count, last update and
health. With ``--thread ID``: its entries, each with its MEM-5 findings;
``--timeline`` replays it (one append per stored entry); ``--repair`` prints
every row it will remove, insert or replace, then writes only those (an
administrative act, MEM-15: it needs ``--admin``; the file is backed up
first, read back with the framework's own reader after, and the repair is
recorded in ``FILE.flowdrop-repairs.jsonl``). Without ``--admin`` the file
is opened read-only.
Exit 1 when a listed conversation (or the one shown) has findings.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from flowdrop_core.cli._output import error, plural, say, say_json
from flowdrop_core.framework_stores import FrameworkStore, ThreadInfo, open_framework_store, sniff
from flowdrop_core.tiers import Tier

__all__ = ["add_arguments", "framework_kind", "run"]

LABELS = {
    "openai-agents": "OpenAI Agents SQLiteSession file",
    "langgraph": "LangGraph checkpoint file",
    "openai-agents-sqlalchemy": "OpenAI Agents SQLAlchemySession tables",
    "langgraph-postgres": "LangGraph PostgresSaver checkpointer",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options only a framework file takes."""
    p.add_argument(
        "--thread",
        metavar="ID",
        help="a framework file: one session (Agents) or thread (LangGraph)",
    )
    p.add_argument(
        "--timeline", action="store_true", help="with --thread: replay it, one append per entry"
    )
    p.add_argument(
        "--repair",
        action="store_true",
        help=(
            "with --thread: print every row the GR-MEM view changes; with --admin, back the "
            "file up, write those rows, read them back with the framework's reader and "
            "record the repair"
        ),
    )


def framework_kind(target: str) -> str | None:
    """The framework of a SQLite file, or ``None`` (a flowdrop store, a URL, not a file)."""
    return sniff(target)


def _info(info: ThreadInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "count": info.count,
        "updated": info.updated,
        "healthy": info.healthy,
        "findings": [f.to_dict() for f in info.findings],
        "problems": list(info.problems),
    }


def _list(store: FrameworkStore, args: argparse.Namespace) -> int:
    infos = store.threads()
    if args.json:
        for info in infos:
            say_json(json.dumps(_info(info), ensure_ascii=False))
    else:
        rows = [("id", "count", "updated", "health")]
        rows += [
            (json.dumps(i.id, ensure_ascii=False), str(i.count), i.updated or "-", i.summary())
            for i in infos
        ]
        widths = [max(len(r[k]) for r in rows) for k in range(4)]
        for n, row in enumerate(rows):
            say("  ".join(f"{c:<{w}}" for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                say("  ".join("-" * w for w in widths))
        word = "session" if store.kind.startswith("openai-agents") else "thread"
        say(f"{plural(len(infos), word)} in {store.path} ({LABELS[store.kind]})")
    return 0 if all(i.healthy for i in infos) else 1


def _thread(store: FrameworkStore, args: argparse.Namespace) -> int:
    from flowdrop_core.cli._replay import format_table
    from flowdrop_core.framework_stores import health
    from flowdrop_core.replay import replay

    if args.repair:
        plan = store.plan_repair(args.thread)
        for line in plan.lines():  # MEM-15: the change is named before it is made
            say(line)
        if not args.admin:  # MEM-15: asked for explicitly, whatever else is set
            error(
                "MEM-15: --repair changes stored messages other than by an append: it needs "
                "the administrative tier; add --admin to ask for it (nothing was written)",
                "store",
            )
            return 2
        if plan.refused:
            error(f"{store.path}: repair refused: {plan.refused}", "store")
            return 2
        if plan.changes:
            say(f"admin: writing these changes to {store.path} after a backup")
        report = store.repair(args.thread, plan)
        say(report.summary())
        return 0 if not report.remaining else 1
    rows = store.rows(args.thread)
    if not rows and args.thread not in {t.id for t in store.threads()}:
        error(f"{store.path}: no session or thread {args.thread!r}", "store")
        return 2
    findings = health(rows)
    if args.timeline:
        timeline = replay(store.scenario(args.thread))
        if args.json:
            for line in timeline.to_json_lines(include_messages=False):
                say_json(line)
        else:
            say(format_table(timeline))
    elif args.json:
        for row in rows:
            say_json(json.dumps(row, ensure_ascii=False, default=repr))
    else:
        by_index: dict[int, list[str]] = {}
        for f in findings:
            by_index.setdefault(-1 if f.index is None else f.index, []).append(str(f))
        for n, row in enumerate(rows):
            shown = {k: row.get(k) for k in ("role", "content", "metadata")}  # calls with arguments
            say(f"{n:>4}  {json.dumps(shown, ensure_ascii=False, default=repr)}")
            for text in by_index.get(n, ()):
                say(f"      ! {text}")
        for text in by_index.get(-1, ()):  # about the whole conversation, no one entry
            say(f"      ! {text}")
        entries = f"{len(rows)} entr{'y' if len(rows) == 1 else 'ies'}"
        say(f"{entries} in {args.thread!r}; {plural(len(findings), 'finding')}")
    return 0 if not findings else 1


def run(args: argparse.Namespace) -> int:
    """List the file's conversations, show one, replay it, or repair it."""
    admin = bool(args.repair and args.admin and args.thread is not None)
    store = open_framework_store(args.target, tier=Tier.ADMIN if admin else Tier.VIEW)
    try:
        if args.thread is None:
            if args.repair or args.timeline:
                error("--timeline and --repair need --thread ID", "store")
                return 2
            return _list(store, args)
        return _thread(store, args)
    finally:
        store.close()
