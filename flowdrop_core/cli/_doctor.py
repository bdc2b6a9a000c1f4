"""``flowdrop-buffer doctor PATH``: what is wrong with a recording, where, and what GR-MEM did.

The recording is replayed (one append per message unless ``--per turn``)
and its health report printed (:func:`flowdrop_core.inspect.health.health`):
one line per finding: where in the file (its own name for the message, e.g.
``messages[52]``) and the replay step (1-based), the kind, call id and rule,
and what GR-MEM did, once; the whole story of each is in ``--json``. Exit 1 when a provider would reject the recording as it is. With
``--json``, one object: ``{"findings": [{"kind", "rule", "index", "step",
"call_id", "action", "message"}], "provider_rejects": bool}``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, overload

from flowdrop_core.cli._loading import Source, check_messages, load_source
from flowdrop_core.cli._options import EPILOG, FORMAT_HELP, non_negative_int
from flowdrop_core.cli._output import (
    INPUT_ERRORS,
    CliError,
    in_file,
    leave_to_exit,
    plural,
    say,
    say_json,
)
from flowdrop_core.cli._replay import build_replay, gc_paused, stream_steps
from flowdrop_core.inspect.health import HealthReport, Place, health, health_of_steps
from flowdrop_core.replay import replay

__all__ = ["NAME", "register", "run"]

NAME = "doctor"


def register(subparsers: Any) -> None:
    """Add ``doctor`` to the command line's subparsers."""
    doc = subparsers.add_parser(
        "doctor",
        help="what is wrong with a recording, where, and what GR-MEM did about it "
        "(exit 1 when a provider would reject it)",
        description="Replay PATH and report every finding: what a provider would reject in "
        "the recording as it is (re-sent results, unanswered calls, orphan and id-less "
        "results, duplicate turns, results after the next turn) and what the buffer GR-MEM "
        "builds still holds (a result the window left orphaned). Each finding is one line: "
        "where it is in the file (e.g. messages[52]) and the replay step (1-based), its kind, "
        "call id and rule, and what GR-MEM did; --json gives the whole story of each. Exit 1 "
        "when a provider would reject the recording.",
        epilog=EPILOG,
    )
    doc.add_argument("path", metavar="PATH")
    doc.add_argument("--format", metavar="F", help=FORMAT_HELP)
    doc.add_argument(
        "--per",
        choices=("message", "turn"),
        help="recorded conversations: one append per message (default) or per recorded turn",
    )
    doc.add_argument(
        "--max-messages",
        type=non_negative_int,
        metavar="N",
        help="window; 0: none (a window can leave results orphaned in the buffer)",
    )
    doc.add_argument(
        "--json",
        action="store_true",
        help='one JSON object: {"findings": [...], "provider_rejects": bool}',
    )
    doc.set_defaults(
        handler=run, scope=None, key=None, session_id=None, user_id=None, session_owner_id=None
    )


def run(args: argparse.Namespace) -> int:
    """``doctor PATH``: the health report; exit 1 when a provider would reject the recording."""
    with gc_paused():
        return _doctor(args)


def _doctor(args: argparse.Namespace) -> int:
    source = load_source(args.path, args.format)
    check_messages(source.path, source.entries, source.origins)
    if source.conversation is not None:
        report = _recording_health(source, args)
    else:
        scenario, origins = build_replay(source, args)
        try:
            # check_messages read every message a step appends or starts from: not again.
            timeline = replay(scenario, origins=origins, validated=True)
        except INPUT_ERRORS as exc:
            raise CliError(in_file(args.path, exc)) from None
        report = health(timeline)
        if scenario.config.storage.strip().lower() == "memory":
            leave_to_exit(source, scenario, origins, timeline)  # see replay: no teardown at exit
    status = 1 if report.provider_rejects else 0
    if args.json:
        say_json(json.dumps(report.to_dict(), ensure_ascii=False, indent=2, allow_nan=False))
        return status

    for f in report.findings:
        say(f"{source.path}: {f.line}")
    verdict = (
        "a provider would reject the recording as it is"
        if report.provider_rejects
        else "a provider accepts the recording as it is"
    )
    count = plural(len(report.findings), "finding") if report.findings else "no findings"
    say(
        f"{count} in {plural(report.messages, 'message')}, {plural(report.steps, 'step')}: {verdict}"
    )
    return status


class _MessagePlaces(Sequence[Place]):
    """Where each message of a one-message-per-step replay went: message k at step k + 1."""

    def __init__(self, count: int) -> None:
        self._size = count

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Place: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Place]: ...
    def __getitem__(self, index: int | slice) -> Place | Sequence[Place]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(self._size))]
        if not -self._size <= index < self._size:
            raise IndexError(index)
        return Place(index % self._size + 1, 0)


def _recording_health(source: Source, args: argparse.Namespace) -> HealthReport:
    """A recorded conversation's health, its replay read step by step and not kept.

    Its messages are the recording (no starting buffer); each step's record is
    given to the health report as it is made (the call lifecycle, and the
    events of the few steps MEM-5's repair pass has a finding in).
    """
    conv = source.conversation
    assert conv is not None
    _, timeline, records = stream_steps(source, args)
    places: Sequence[Place]
    if (args.per or "message") == "message":
        places = _MessagePlaces(len(conv.messages))
    else:
        places = [
            Place(g, j) for g, group in enumerate(conv.turns, start=1) for j in range(len(group))
        ]
    report = health_of_steps(records, conv.messages, conv.origins, places)
    leave_to_exit(source, timeline)  # see replay: no teardown at exit
    return report
