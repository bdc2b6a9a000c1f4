"""``store ... --follow``: print each append (or each framework turn) as it lands, until Ctrl-C.

The followers live in the library (:mod:`flowdrop_core.journal.follow`,
:mod:`flowdrop_core.framework_stores.follow`); this module only renders
what they report, one block per append, escaped like every other output,
and flushes after each so a pipe sees it at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from flowdrop_core.cli._output import say, say_json
from flowdrop_core.journal import events_from_dicts
from flowdrop_core.journal.follow import FollowEvent, follow_journal
from flowdrop_core.replay import StepRecord, incoming_summary
from flowdrop_core.storage import Store

__all__ = ["add_arguments", "follow_slots", "follow_thread", "format_append"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--follow`` and its check interval."""
    p.add_argument(
        "--follow",
        action="store_true",
        help="print each new append (or framework turn) as it lands, until interrupted",
    )
    p.add_argument(
        "--interval",
        type=float,
        default=0.2,
        metavar="SECONDS",
        help="with --follow: how often the store's change signal is checked (default 0.2)",
    )


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S")


def _slot_name(slot: tuple[str, str, str]) -> str:
    return "/".join(json.dumps(p, ensure_ascii=False) if not p or "/" in p else p for p in slot)


def format_append(event: FollowEvent, *, name_slot: bool) -> str:
    """One append as ``--journal`` shows a step: record, incoming, count, appended, decisions."""
    where = f"[{_slot_name(event.slot)}] " if name_slot else ""
    if event.record is None:
        return f"{where}! {event.describe()}"
    rec = event.record
    head = (
        f"{where}record {rec.seq} at {_when(rec.at)}  "
        f"in: {incoming_summary(rec.incoming, width=80)}  "
        f"count {rec.count}  appended {rec.appended}  "
        f"appended_any {'yes' if rec.appended_any else 'no'}"
    )
    lines = [head]
    if not rec.serialized:
        lines.append("    (ran unserialized: MEM-12 lock timeout)")
    for ev in events_from_dicts(rec.events):
        lines.append(f"    {ev.kind} ({ev.rule}): {ev.reason}")
    return "\n".join(lines)


def _print(text: str, as_json: bool) -> None:
    (say_json if as_json else say)(text)
    sys.stdout.flush()


def follow_slots(store: Store, target: str, slot: Any, args: argparse.Namespace) -> int:
    """Follow one slot (``slot``) or every journaled slot; return 0 when interrupted."""
    follower = follow_journal(store, slot, interval=args.interval)
    what = f"slot {_slot_name(slot)}" if slot is not None else "every journaled slot"
    say(
        f"following {what} of {target} ({follower.waiter.how}); Ctrl-C to stop",
        sys.stderr,
    )
    try:
        for event in follower:
            if args.json:
                _print(json.dumps(event.to_dict(), ensure_ascii=False, default=repr), True)
            else:
                _print(format_append(event, name_slot=slot is None), False)
    except KeyboardInterrupt:
        return 0
    finally:
        follower.close()
    return 0  # pragma: no cover - the follower runs until interrupted


def _step_line(step: StepRecord) -> str:
    return (
        f"step {step.step}  {step.label}  in: {incoming_summary(step.incoming, width=80)}  "
        f"count {step.count}  appended {step.appended}  "
        f"appended_any {'yes' if step.appended_any else 'no'}"
    )


def follow_thread(path: str, thread_id: str, args: argparse.Namespace) -> int:
    """Follow one framework thread (read-only): each new turn replayed, health as it changes."""
    from flowdrop_core.framework_stores.follow import follow_thread as follow

    follower = follow(path, thread_id, interval=args.interval)
    say(
        f"following thread {thread_id!r} of {path} ({follower.waiter.how}); Ctrl-C to stop",
        sys.stderr,
    )
    try:
        for update in follower:
            if args.json:
                _print(json.dumps(update.to_dict(), ensure_ascii=False, default=repr), True)
                continue
            if update.rewritten:
                _print(f"! {update.rewritten}", False)
            for step in update.steps:
                lines = [_step_line(step)]
                lines += [f"    {ev.kind} ({ev.rule}): {ev.reason}" for ev in step.events]
                _print("\n".join(lines), False)
            if update.health is not None:
                _print(f"health: {update.health}", False)
    except KeyboardInterrupt:
        return 0
    finally:
        follower.close()
    return 0  # pragma: no cover - the follower runs until interrupted
