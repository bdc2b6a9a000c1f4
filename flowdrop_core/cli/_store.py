"""``flowdrop-buffer store``: browse the store a runtime writes (SQLite file, Redis or Postgres URL).

Every action goes through :mod:`flowdrop_core.store_browser`; this module
parses options and prints what the library returns, escaped like every other
command's output (:mod:`flowdrop_core.cli._output`): a stored U+202E or
U+009B is shown as its escape, never sent to the terminal.

Tiers (:mod:`flowdrop_core.tiers`): reading is the view tier, and the store
is then opened read-only; ``--append`` is the drive tier (``--write``);
``--clear`` and a framework file's ``--repair`` change stored messages other
than by an append, so they need the administrative tier asked for with
``--admin`` (MEM-15). Without the flag the command refuses, names it and
changes nothing; no environment variable or configuration stands in for it.
The store is opened at the tier the act needs, never more.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from flowdrop_core.cli import _follow as follow
from flowdrop_core.cli import _framework_store as framework_store
from flowdrop_core.cli._output import INPUT_ERRORS, PROG, error, say, say_json
from flowdrop_core.cli._replay import format_table
from flowdrop_core.scenario import dump_scenario
from flowdrop_core.storage import Slot
from flowdrop_core.store_browser import SlotInfo, StoreBrowser, open_browser
from flowdrop_core.tiers import Tier

__all__ = ["NAME", "register", "run"]

NAME = "store"

DESCRIPTION = """\
Connect to a store (a SQLite file, a Redis URL such as redis://host:6379/0, or a Postgres
URL such as postgresql://user@host/db; a password is never printed) and list
its slots with scope, scope id, key, entry count, last write and journal records;
--filter keeps slots whose scope, scope id or key contains the text. With --slot SCOPE
SCOPE_ID KEY: print the slot's buffer; --journal replays its append journal as a
timeline (each step checked against the report recorded at the time); --export FILE
saves the journal as a scenario file 'check' accepts. The store is opened read-only:
--append also needs --write (the drive tier); --clear needs --admin (the administrative
tier, MEM-15): it says what it removes, and the clear is recorded in the slot's journal.

A framework's own SQLite file (an OpenAI Agents SQLiteSession file, a LangGraph
SqliteSaver checkpoint file), and by URL a LangGraph PostgresSaver checkpointer or an
Agents SQLAlchemySession table (docs/frameworks.md), is recognised: its sessions or
threads are listed with their health; --thread ID shows one (--timeline replays it),
--repair prints every row the GR-MEM view changes, and with --admin writes them (a file
after a backup, a server in one transaction) and records the repair (FILE.flowdrop-
repairs.jsonl beside a file; the user's state folder for a server).

--follow prints each new append as it lands (with --slot, that slot's; without, every
journaled slot's, each line naming its slot), in the form --journal shows a step, and names
a write made outside the journal when it is seen; on a framework file, --thread ID --follow
prints each new turn replayed and the thread's health as it changes. Ctrl-C stops it.
"""


def register(subparsers: Any) -> None:
    """Add ``store`` to the command line's subparsers."""
    p = subparsers.add_parser(
        "store",
        help="list a SQLite, Redis or Postgres store's slots, show a buffer, replay its journal",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "target", metavar="STORE", help="a SQLite file, a redis:// or a postgresql:// URL"
    )
    p.add_argument("--filter", default="", metavar="TEXT", help="only slots containing TEXT")
    p.add_argument(
        "--slot", nargs=3, metavar=("SCOPE", "SCOPE_ID", "KEY"), help="one slot ('' for none)"
    )
    p.add_argument("--journal", action="store_true", help="replay the slot's journal")
    p.add_argument("--export", metavar="FILE", help="save the slot's journal as a scenario")
    p.add_argument("--append", metavar="JSON", help="append a message or a list (needs --write)")
    p.add_argument("--max-messages", type=int, default=0, metavar="N", help="window for --append")
    p.add_argument("--clear", action="store_true", help="empty the slot (needs --admin)")
    p.add_argument("--write", action="store_true", help="allow --append (the drive tier)")
    p.add_argument(
        "--admin",
        action="store_true",
        help="allow --clear and --repair (the administrative tier, MEM-15); recorded",
    )
    p.add_argument("--json", action="store_true", help="JSON output")
    framework_store.add_arguments(p)
    follow.add_arguments(p)
    p.set_defaults(handler=run)


def _error(message: str) -> int:
    error(message, NAME)
    return 2


def _when(at: float | None) -> str:
    if at is None:
        return "-"
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _list(browser: StoreBrowser, args: argparse.Namespace) -> int:
    infos = browser.slots(args.filter)
    if args.json:
        for info in infos:
            say_json(json.dumps(_info_dict(info), ensure_ascii=False))
        return 0
    rows = [("scope", "scope_id", "key", "count", "last write", "journal")]
    rows += [
        (
            i.scope,
            json.dumps(i.scope_id, ensure_ascii=False),
            json.dumps(i.key, ensure_ascii=False),
            "-" if i.count is None else str(i.count),
            _when(i.last_write),
            str(i.journal),
        )
        for i in infos
    ]
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for n, row in enumerate(rows):
        say("  ".join(f"{c:<{w}}" for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            say("  ".join("-" * w for w in widths))
    say(f"{len(infos)} slot{'' if len(infos) == 1 else 's'} in {browser.target}")
    return 0


def _info_dict(info: SlotInfo) -> dict[str, Any]:
    return {
        "scope": info.scope,
        "scope_id": info.scope_id,
        "key": info.key,
        "count": info.count,
        "last_write": info.last_write,
        "journal": info.journal,
    }


def needed_tier(args: argparse.Namespace) -> Tier:
    """The tier the asked act needs: admin for a clear or a repair, drive for an append."""
    if args.clear or getattr(args, "repair", False):
        return Tier.ADMIN
    return Tier.DRIVE if args.append is not None else Tier.VIEW


def granted_tier(args: argparse.Namespace) -> Tier:
    """The tier the command line asked for: only ``--admin`` and ``--write`` raise it."""
    return Tier.ADMIN if args.admin else Tier.DRIVE if args.write else Tier.VIEW


def tier_refusal(args: argparse.Namespace) -> str | None:
    """Why the act is refused at the tier asked for (MEM-9, MEM-15), or None."""
    need = needed_tier(args)
    if granted_tier(args) >= need:
        return None
    if need is Tier.ADMIN:
        act = "--clear" if args.clear else "--repair"
        return (
            f"MEM-15: {act} changes stored messages other than by an append: it needs the "
            "administrative tier; add --admin to ask for it (nothing was changed)"
        )
    return (
        "MEM-9: --append writes to the store: it needs the drive tier; add --write to allow "
        "it (nothing was written)"
    )


def _clear(browser: StoreBrowser, slot: Slot) -> int:
    """Say what the clear removes, clear, say what was recorded (MEM-15)."""
    value = browser.buffer(slot)
    what = (
        f"{len(value)} entr{'y' if len(value) == 1 else 'ies'}"
        if isinstance(value, list)
        else "a plain value"
    )
    say(f"admin: clearing slot {slot!r} in {browser.target}: removes {what}")
    say(str(browser.clear(slot, by=f"{PROG} store --clear --admin")))
    return 0


def _slot(browser: StoreBrowser, args: argparse.Namespace) -> int:
    slot = (args.slot[0], args.slot[1], args.slot[2])
    if args.append is not None or args.clear:
        if args.clear:
            return _clear(browser, slot)
        try:
            messages = json.loads(args.append)
        except ValueError as exc:
            return _error(f"--append: not JSON ({exc}); nothing was written")
        except RecursionError:
            return _error(
                "--append: not JSON this tool reads (nested too deeply); nothing was written"
            )
        res = browser.append(slot, messages, max_messages=args.max_messages)
        say_json(
            json.dumps(
                {"count": res.count, "appended": res.appended, "appended_any": res.appended_any}
            )
        )
        return 0
    if args.export:
        scenario, notes = browser.scenario(slot, name=f"journal-{slot[0]}-{slot[1]}-{slot[2]}")
        try:
            with open(args.export, "w", encoding="utf-8") as fh:
                fh.write(dump_scenario(scenario))
        except OSError as exc:
            return _error(f"cannot write {args.export}: {exc.strerror or exc}")
        for note in notes:
            say(f"note: {note}", sys.stderr)
        say(f"saved {args.export} ({len(scenario.steps)} steps)", sys.stderr)
        return 0
    if args.journal:
        replayed = browser.replay(slot)
        for note in replayed.notes:
            say(f"note: {note}", sys.stderr)
        if args.json:
            for line in replayed.timeline.to_json_lines(include_messages=False):
                say_json(line)
        else:
            say(format_table(replayed.timeline))
        for mismatch in replayed.check.mismatches:
            say(f"differs from the record: {mismatch}")
        return 0 if replayed.check.passed else 1
    value = browser.buffer(slot)
    if args.json:
        say_json(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, list):
        for n, entry in enumerate(value):
            say_json(f"{n:>4}  {json.dumps(entry, ensure_ascii=False)}")
        say(f"{len(value)} entr{'y' if len(value) == 1 else 'ies'} in slot {slot!r}")
    else:
        say_json(json.dumps(value, ensure_ascii=False))
    return 0


def run(args: argparse.Namespace) -> int:
    """``store STORE [...]``: exit 0 fine, 1 a replayed journal differs, 2 an error."""
    if (args.journal or args.export or args.append is not None or args.clear) and not args.slot:
        return _error("--journal, --export, --append and --clear need --slot SCOPE SCOPE_ID KEY")
    refused = tier_refusal(args) if not args.repair else None  # a repair prints its plan first
    if refused is not None:
        return _error(refused)
    try:
        if args.follow and not args.interval > 0:
            return _error(f"--interval must be a positive number of seconds, not {args.interval}")
        if framework_store.framework_kind(args.target) is not None:
            if args.follow:
                if args.thread is None or args.write or args.admin or args.repair or args.timeline:
                    return _error("--follow on a framework file takes --thread ID (and --json)")
                return follow.follow_thread(args.target, args.thread, args)
            return framework_store.run(args)
        browser = open_browser(args.target, tier=needed_tier(args))  # never more than needed
        if args.follow:
            if args.journal or args.export or args.append is not None or args.clear:
                return _error("--follow prints new appends; it takes --slot and --json only")
            slot = tuple(args.slot) if args.slot else None
            return follow.follow_slots(browser.store, browser.target, slot, args)
        return _slot(browser, args) if args.slot else _list(browser, args)
    except INPUT_ERRORS as exc:
        return _error(str(exc))
