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

import difflib
import json
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flowdrop_core.framework_stores._base import (
    Change,
    FrameworkStoreError,
    RepairPlan,
    RepairReport,
    ThreadInfo,
    backup_file,
    connect,
    finish_repair,
    gr_mem_view,
    health,
    open_tier,
    read_back,
    restore_file,
    rows_scenario,
    scratch_copy,
    settle_repair,
    tables,
)
from flowdrop_core.integrations import require
from flowdrop_core.scenario import Scenario
from flowdrop_core.tiers import Tier

__all__ = ["CHECKPOINT_COLUMNS", "LangGraphCheckpointFile"]

CHECKPOINT_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint"}
)


class LangGraphCheckpointFile:
    """The threads of one ``SqliteSaver`` file (read-only unless ``writable``)."""

    kind = "langgraph"

    def __init__(
        self,
        path: str | Path,
        *,
        writable: bool = False,
        channel: str = "messages",
        tier: Tier | str | None = None,
    ) -> None:
        sqlite_saver = require("langgraph.checkpoint.sqlite", "langgraph")
        self.path = Path(path)
        self.writable, self.tier = open_tier(writable, tier)
        self.channel = channel
        self.conn = connect(self.path, self.writable, check_same_thread=False)
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
        out = []
        for thread_id in self._thread_ids():
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

    def _thread_ids(self) -> list[str]:
        """The threads of the root namespace, in id order."""
        listed = self.conn.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id"
        ).fetchall()
        return [str(r[0]) for r in listed]

    def scenario(self, thread_id: str) -> Scenario:
        """The thread's latest messages as appends, one per message, for the timeline."""
        rows = self.rows(thread_id)
        return rows_scenario(rows, f"langgraph-{thread_id}", [r["origin"] for r in rows])

    def plan_repair(self, thread_id: str) -> RepairPlan:
        """The checkpoint a repair would add (its messages, diffed with the latest), or a refusal.

        Refused: a latest checkpoint with pending writes (a step the graph has
        not finished; a checkpoint on top would hide them).
        """
        latest = self._latest(thread_id)
        if latest is None:
            raise FrameworkStoreError(f"{self.path}: no thread {thread_id!r}")
        rows = [{k: v for k, v in r.items() if k != "origin"} for r in self.rows(thread_id)]
        fixed, tally = gr_mem_view(rows)
        plan = RepairPlan(
            thread_id,
            before=len(rows),
            after=len(fixed),
            events=tally,
            state=latest.checkpoint["id"],
            expected=fixed,
        )
        old = [_plain(r) for r in rows]
        new = [_plain(r) for r in fixed]
        if old == new:
            return plan
        if latest.pending_writes:
            plan.refused = (
                f"the latest checkpoint has {len(latest.pending_writes)} pending write(s) "
                "(an unfinished step, or an interrupt waiting for its answer); a checkpoint "
                "on top would drop them: repair after the graph has resumed"
            )
            return plan
        where = (
            f"checkpoints (thread {thread_id!r}, new checkpoint after {latest.checkpoint['id']})"
        )
        plan.changes.append(Change("insert", where, new=f"{self.channel}: {len(new)} message(s)"))
        matcher = difflib.SequenceMatcher(
            a=[json.dumps(x, sort_keys=True, default=repr) for x in old],
            b=[json.dumps(x, sort_keys=True, default=repr) for x in new],
            autojunk=False,
        )
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            at = f"{thread_id}.{self.channel}"
            if op in ("delete", "replace"):
                plan.changes += [
                    Change("remove", f"{at}[{k}] (not in the new checkpoint)", old=old[k])
                    for k in range(a0, a1)
                ]
            if op in ("insert", "replace"):
                plan.changes += [
                    Change("insert", f"{at}[{k}] (new checkpoint)", new=new[k])
                    for k in range(b0, b1)
                ]
        return plan

    def repair(self, thread_id: str, plan: RepairPlan | None = None) -> RepairReport:
        """Back the file up, put a checkpoint holding the GR-MEM view, read it back.

        Nothing to do writes nothing. The new checkpoint is read back with a
        fresh ``SqliteSaver.get_tuple`` (on a scratch copy: the saver sets the
        file up as it opens it); anything other than the planned messages
        restores the backup.
        """
        plan, nothing = settle_repair(self, thread_id, plan)
        if nothing is not None:
            return nothing
        latest = self._latest(thread_id)
        if latest is None or latest.checkpoint["id"] != plan.state:
            raise FrameworkStoreError(
                f"{self.path}: thread {thread_id!r} got a new checkpoint since the plan; "
                "nothing was written (run it again)"
            )
        backup = backup_file(self.conn, self.path)
        fixed = plan.expected
        checkpoint, metadata, version = self._new_checkpoint(
            latest, plan, {"backup": str(backup), "events": plan.events}
        )
        now = self._latest(thread_id)
        if now is None or now.checkpoint["id"] != latest.checkpoint["id"]:
            raise FrameworkStoreError(
                f"{self.path}: thread {thread_id!r} got a new checkpoint during the repair; "
                "nothing was written (run it again)"
            )
        self.saver.put(latest.config, checkpoint, metadata, {self.channel: version})
        readback = read_back(
            self.conn,
            self.path,
            backup,
            lambda: self._read_back(thread_id, checkpoint["id"], fixed, backup),
        )
        return finish_repair(self, thread_id, plan, backup, readback)

    def _new_checkpoint(
        self, latest: Any, plan: RepairPlan, note: dict[str, Any]
    ) -> tuple[Any, dict[str, Any], Any]:
        """The checkpoint a repair puts on top of ``latest`` (as ``update_state`` would).

        Its metadata, and the ``messages`` channel's next version, come with it;
        ``note`` is kept in the metadata as ``gr_mem_repair``.
        """
        from langgraph.checkpoint.base import copy_checkpoint
        from langgraph.checkpoint.base.id import uuid6

        from flowdrop_core.integrations.langgraph import rows_to_messages

        checkpoint = copy_checkpoint(latest.checkpoint)
        version = self.saver.get_next_version(
            checkpoint["channel_versions"].get(self.channel), None
        )
        checkpoint["id"] = str(uuid6(clock_seq=-1))
        checkpoint["ts"] = datetime.now(UTC).isoformat()
        checkpoint["channel_values"][self.channel] = rows_to_messages(plan.expected)
        checkpoint["channel_versions"][self.channel] = version
        checkpoint["updated_channels"] = [self.channel]
        step = latest.metadata.get("step", -1)
        metadata = {
            "source": "update",
            "step": (step if isinstance(step, int) else -1) + 1,
            "parents": {},
            "gr_mem_repair": note,
        }
        return checkpoint, metadata, version

    def _read_back(
        self, thread_id: str, checkpoint_id: str, fixed: list[dict[str, Any]], backup: Path
    ) -> str:
        """A fresh ``SqliteSaver`` must load the new checkpoint with the planned messages."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        from flowdrop_core.integrations.langgraph import message_to_row

        with tempfile.TemporaryDirectory(prefix="flowdrop-readback-") as folder:
            conn = sqlite3.connect(scratch_copy(self.conn, Path(folder)), check_same_thread=False)
            try:
                got = SqliteSaver(conn).get_tuple(
                    {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
                )
            finally:
                conn.close()
        messages = [] if got is None else got.checkpoint["channel_values"].get(self.channel, [])
        same = (
            got is not None
            and got.checkpoint["id"] == checkpoint_id
            and [_plain(message_to_row(m)) for m in messages] == [_plain(r) for r in fixed]
        )
        if not same:
            restore_file(self.conn, backup)
            raise FrameworkStoreError(
                f"{self.path}: SqliteSaver reads the repaired thread {thread_id!r} differently "
                f"from the plan; the backup {backup} was restored"
            )
        return "read back with SqliteSaver.get_tuple: as planned"


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """A row as shown and compared: role, content, metadata."""
    return {k: row.get(k) for k in ("role", "content", "metadata")}
