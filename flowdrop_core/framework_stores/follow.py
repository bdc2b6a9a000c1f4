"""Follow one thread of a framework's own store live: each new turn, and its health.

A LangGraph checkpoint file or an Agents session file has no journal; its
turns are its stored rows. :class:`ThreadFollower` waits for the file (or
its ``-wal``) to change (a ``stat``, see
:mod:`flowdrop_core.journal._wait_sqlite`), then opens the file read-only
(:func:`~flowdrop_core.storage._readonly.open_readonly`: no file created,
no byte changed), replays the thread as ``--timeline`` does (one append per
stored row) and reports the steps past those already shown, with the
thread's health whenever its summary changes. A store on a server (a
LangGraph Postgres checkpointer, an Agents ``SQLAlchemySession`` table) is
read the same way, through one read-only connection, every ``interval``. A thread whose stored rows
shrank or changed before the last shown one (a repair, a framework that
rewrote its history) is named, and its timeline shown again from the start.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowdrop_core.framework_stores._base import ThreadInfo, health
from flowdrop_core.framework_stores._registry import open_framework_store
from flowdrop_core.journal._wait import SleepWaiter, Waiter
from flowdrop_core.journal._wait_sqlite import FileWaiter
from flowdrop_core.replay import StepRecord, replay

__all__ = ["ThreadFollower", "ThreadUpdate", "follow_thread"]


@dataclass
class ThreadUpdate:
    """What changed in the thread: new timeline ``steps``, its ``health`` when it changed.

    ``rewritten`` names a change to rows already shown (then ``steps`` is the
    whole timeline again); ``health`` is ``None`` when unchanged.
    """

    steps: list[StepRecord] = field(default_factory=list)
    health: str | None = None
    healthy: bool = True
    findings: list[dict[str, Any]] = field(default_factory=list)
    rewritten: str = ""
    count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the steps as the timeline's JSON lines, the health and its findings."""
        return {
            "steps": [json.loads(line) for line in _step_lines(self.steps)],
            "count": self.count,
            "health": self.health,
            "healthy": self.healthy,
            "findings": self.findings,
            "rewritten": self.rewritten or None,
        }


def _step_lines(steps: list[StepRecord]) -> list[str]:
    return [json.dumps(s.to_dict(), ensure_ascii=False, default=repr) for s in steps]


class ThreadFollower:
    """New turns of one thread as they land, read-only; the first poll shows none."""

    def __init__(
        self,
        path: str | Path,
        thread_id: str,
        *,
        interval: float = 0.2,
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.thread_id = thread_id
        self.path: Path | str
        self._server: Any = None
        if "://" in str(path):  # a checkpointer or SQLAlchemy table on a server: one
            # read-only connection, each read its own READ ONLY transaction, polled
            self.path = str(path)
            self._server = open_framework_store(self.path)
            self.waiter: Waiter = SleepWaiter(self._server, interval)
        else:
            self.path = Path(path)
            self.waiter = FileWaiter(self.path, interval)
        self._rows, _steps = self._read()
        self._health = ThreadInfo(
            thread_id, len(self._rows), None, tuple(health(self._rows))
        ).summary()

    def _read(self) -> tuple[list[dict[str, Any]], list[StepRecord]]:
        store = self._server or open_framework_store(self.path, writable=False)
        try:
            rows = store.rows(self.thread_id)
            steps = replay(store.scenario(self.thread_id)).steps if rows else []
        finally:
            if store is not self._server:
                store.close()
        return rows, list(steps)

    def poll(self) -> ThreadUpdate | None:
        """The turns since the last poll and the health if it changed; ``None``: nothing new."""
        rows, steps = self._read()
        update = ThreadUpdate(count=len(rows))
        same_prefix = len(rows) >= len(self._rows) and _same(rows[: len(self._rows)], self._rows)
        if same_prefix:
            update.steps = steps[len(self._rows) :]
        else:
            update.rewritten = (
                f"thread {self.thread_id!r} was rewritten (it held {len(self._rows)} rows, now "
                f"{len(rows)}, the first ones differ): its timeline from the start"
            )
            update.steps = steps
        self._rows = rows
        findings = health(rows)
        summary = ThreadInfo(self.thread_id, len(rows), None, tuple(findings)).summary()
        if summary != self._health:
            self._health = summary
            update.health = summary
        update.healthy = not findings
        update.findings = [f.to_dict() for f in findings]
        if not update.steps and update.health is None and not update.rewritten:
            return None
        return update

    def events(self, stop: Callable[[], bool] | None = None) -> Iterator[ThreadUpdate]:
        """Every update as it lands, waiting for the file to change between polls."""
        while stop is None or not stop():
            update = self.poll()
            if update is not None:
                yield update
            self.waiter.wait([])

    def __iter__(self) -> Iterator[ThreadUpdate]:
        return self.events()

    def close(self) -> None:
        """Nothing stays open between polls of a file; a server's connection is closed."""
        self.waiter.close()
        if self._server is not None:
            self._server.close()


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    dump = json.dumps
    return dump(a, sort_keys=True, default=repr) == dump(b, sort_keys=True, default=repr)


def follow_thread(path: str | Path, thread_id: str, *, interval: float = 0.2) -> ThreadFollower:
    """A follower of ``thread_id`` in the framework store at ``path`` (a file or a URL),
    read-only."""
    return ThreadFollower(path, thread_id, interval=interval)
