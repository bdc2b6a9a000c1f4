"""A LangGraph ``SqliteSaver`` checkpoint file: threads, their latest messages, health, repair.

The file is read through LangGraph's own saver (extra ``langgraph``), so the
checkpoints decode exactly as the graph would load them; the connection is
opened read-only (``mode=ro``) and the saver's table setup is skipped, so a
read never writes. Each thread (root namespace ``""``) is listed with its
latest checkpoint's ``messages`` channel.

A repair writes a new checkpoint on top of the latest (as
``graph.update_state`` does: parent = the latest, ``messages`` at the next
channel version, metadata ``source: "update"``), so the history stays
intact behind it and the graph resumes from the repaired messages.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flowdrop_core.framework_stores.base import (
    FrameworkStoreError,
    RepairReport,
    ThreadInfo,
    backup_file,
    connect,
    gr_mem_view,
    health,
    require_writable,
    rows_scenario,
    tables,
)
from flowdrop_core.integrations import require
from flowdrop_core.scenario import Scenario

__all__ = ["CHECKPOINT_COLUMNS", "LangGraphCheckpointFile"]

CHECKPOINT_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint"}
)


class LangGraphCheckpointFile:
    """The threads of one ``SqliteSaver`` file (read-only unless ``writable``)."""

    kind = "langgraph"

    def __init__(
        self, path: str | Path, *, writable: bool = False, channel: str = "messages"
    ) -> None:
        sqlite_saver = require("langgraph.checkpoint.sqlite", "langgraph")
        self.path = Path(path)
        self.writable = writable
        self.channel = channel
        self.conn = connect(self.path, writable, check_same_thread=False)
        found = tables(self.conn)
        if not found.get("checkpoints", set()) >= CHECKPOINT_COLUMNS:
            self.conn.close()
            raise FrameworkStoreError(f"{self.path}: no LangGraph checkpoints table")
        self.saver = sqlite_saver.SqliteSaver(self.conn)
        self.saver.is_setup = True  # the tables exist; setup would write (journal mode, ALTER)
        self.saver._has_task_path = "task_path" in found.get("writes", set())

    def close(self) -> None:
        self.conn.close()

    def _latest(self, thread_id: str) -> Any:
        return self.saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})

    def messages(self, thread_id: str) -> list[Any]:
        """The thread's latest ``messages`` as LangChain messages ([] when it has none)."""
        found = self._latest(thread_id)
        if found is None:
            raise FrameworkStoreError(f"{self.path}: no thread {thread_id!r}")
        value = found.checkpoint["channel_values"].get(self.channel, [])
        if not isinstance(value, list):
            raise FrameworkStoreError(
                f"{self.path}: thread {thread_id!r}: channel {self.channel!r} is "
                f"{type(value).__name__}, not a list of messages"
            )
        return value

    def rows(self, thread_id: str) -> list[dict[str, Any]]:
        """The latest messages as GR-MEM rows (each keeps its message), with their origin."""
        from flowdrop_core.integrations.langgraph import message_to_row

        rows = []
        for k, msg in enumerate(self.messages(thread_id)):
            row = message_to_row(msg)
            row["origin"] = f"{thread_id}.{self.channel}[{k}]"
            rows.append(row)
        return rows

    def threads(self) -> list[ThreadInfo]:
        """Every thread of the root namespace, with its latest checkpoint's health."""
        listed = self.conn.execute(
            "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' "
            "GROUP BY thread_id ORDER BY thread_id"
        ).fetchall()
        out = []
        for thread_id, _ in listed:
            found = self._latest(thread_id)
            problems: tuple[str, ...] = ()
            try:
                rows = self.rows(thread_id)
            except (FrameworkStoreError, ValueError, TypeError) as exc:
                rows, problems = [], (str(exc),)
            out.append(
                ThreadInfo(
                    id=str(thread_id),
                    count=len(rows),
                    updated=None if found is None else found.checkpoint.get("ts"),
                    findings=tuple(health(rows)),
                    problems=problems,
                )
            )
        return out

    def scenario(self, thread_id: str) -> Scenario:
        """The thread's latest messages as appends, one per message, for the timeline."""
        rows = self.rows(thread_id)
        return rows_scenario(rows, f"langgraph-{thread_id}", [r["origin"] for r in rows])

    def repair(self, thread_id: str) -> RepairReport:
        """Back the file up, then put a checkpoint holding the GR-MEM view of the messages."""
        require_writable(self, "a repair")
        from langgraph.checkpoint.base import copy_checkpoint
        from langgraph.checkpoint.base.id import uuid6

        from flowdrop_core.integrations.langgraph import rows_to_messages

        latest = self._latest(thread_id)
        if latest is None:
            raise FrameworkStoreError(f"{self.path}: no thread {thread_id!r}")
        rows = [{k: v for k, v in r.items() if k != "origin"} for r in self.rows(thread_id)]
        backup = backup_file(self.conn, self.path)
        fixed, tally = gr_mem_view(rows)
        checkpoint = copy_checkpoint(latest.checkpoint)
        version = self.saver.get_next_version(
            checkpoint["channel_versions"].get(self.channel), None
        )
        checkpoint["id"] = str(uuid6(clock_seq=-1))
        checkpoint["ts"] = datetime.now(UTC).isoformat()
        checkpoint["channel_values"][self.channel] = rows_to_messages(fixed)
        checkpoint["channel_versions"][self.channel] = version
        checkpoint["updated_channels"] = [self.channel]
        step = latest.metadata.get("step", -1)
        metadata = {
            "source": "update",
            "step": (step if isinstance(step, int) else -1) + 1,
            "parents": {},
            "gr_mem_repair": {"backup": str(backup), "events": tally},
        }
        now = self._latest(thread_id)
        if now is None or now.checkpoint["id"] != latest.checkpoint["id"]:
            raise FrameworkStoreError(
                f"{self.path}: thread {thread_id!r} got a new checkpoint during the repair; "
                "nothing was written (run it again)"
            )
        self.saver.put(latest.config, checkpoint, metadata, {self.channel: version})
        return RepairReport(
            thread_id=thread_id,
            backup=backup,
            before=len(rows),
            after=len(fixed),
            events=tally,
            remaining=health(self.rows(thread_id)),
        )
