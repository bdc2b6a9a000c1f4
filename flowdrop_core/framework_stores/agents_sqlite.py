"""An OpenAI Agents SDK ``SQLiteSession`` file: sessions, their items, health and repair.

The SDK's schema (``agents.memory.SQLiteSession``): ``agent_sessions``
(``session_id``, ``created_at``, ``updated_at``) and ``agent_messages``
(``id``, ``session_id``, ``message_data`` as JSON text, ``created_at``),
read in ``id`` order. Other table names (the session's ``sessions_table`` /
``messages_table``) are found by their columns. No SDK import is needed:
the items are Responses input items, read by
:mod:`flowdrop_core.integrations.responses_items`.

A row whose ``message_data`` is not JSON (the SDK skips it silently) is
reported as a problem with its row id and left in the file by a repair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowdrop_core.framework_stores import (
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
from flowdrop_core.integrations.responses_items import item_to_row, rows_to_items
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.scenario import Scenario

__all__ = ["AgentsSessionFile", "find_tables"]

SESSION_COLUMNS = frozenset({"session_id", "created_at", "updated_at"})
MESSAGE_COLUMNS = frozenset({"id", "session_id", "message_data", "created_at"})


def find_tables(found: dict[str, set[str]]) -> tuple[str, str] | None:
    """``(sessions_table, messages_table)``: the defaults first, else any pair with the columns."""
    if (
        found.get("agent_sessions", set()) >= SESSION_COLUMNS
        and found.get("agent_messages", set()) >= MESSAGE_COLUMNS
    ):
        return "agent_sessions", "agent_messages"
    sessions = sorted(
        n for n, cols in found.items() if cols >= SESSION_COLUMNS and "message_data" not in cols
    )
    messages = sorted(n for n, cols in found.items() if cols >= MESSAGE_COLUMNS)
    if sessions and messages:
        return sessions[0], messages[0]
    return None


class AgentsSessionFile:
    """The sessions of one ``SQLiteSession`` file (read-only unless ``writable``)."""

    kind = "openai-agents"

    def __init__(self, path: str | Path, *, writable: bool = False) -> None:
        self.path = Path(path)
        self.writable = writable
        self.conn = connect(self.path, writable)
        names = find_tables(tables(self.conn))
        if names is None:
            self.conn.close()
            raise FrameworkStoreError(
                f"{self.path}: no SQLiteSession tables (agent_sessions / agent_messages)"
            )
        self.sessions_table, self.messages_table = names

    def close(self) -> None:
        self.conn.close()

    def _records(self, session_id: str) -> list[tuple[int, str]]:
        return self.conn.execute(
            f'SELECT id, message_data FROM "{self.messages_table}" WHERE session_id = ? ORDER BY id',
            (session_id,),
        ).fetchall()

    def _read(self, session_id: str) -> tuple[list[dict[str, Any]], list[str], list[int]]:
        """``(rows, problems, ids of the rows read)``; an unreadable record is a problem."""
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        ids: list[int] = []
        for rid, data in self._records(session_id):
            where = f"{self.messages_table}.id={rid}"
            try:
                item = json.loads(data)
            except (TypeError, ValueError) as exc:
                problems.append(f"{where}: message_data is not JSON ({exc}); the SDK skips it")
                continue
            try:
                row = item_to_row(item, rid, self.messages_table)
            except InvalidMessagesError as exc:
                problems.append(f"{where}: {exc}")
                continue
            row["origin"] = where
            rows.append(row)
            ids.append(rid)
        return rows, problems, ids

    def threads(self) -> list[ThreadInfo]:
        """Every session id (from both tables), newest update last, with its health."""
        listed = self.conn.execute(
            f'SELECT s.session_id, s.updated_at FROM "{self.sessions_table}" s '
            f'UNION SELECT DISTINCT m.session_id, NULL FROM "{self.messages_table}" m '
            f'WHERE m.session_id NOT IN (SELECT session_id FROM "{self.sessions_table}")'
        ).fetchall()
        out = []
        for session_id, updated in sorted(listed, key=lambda r: (str(r[1] or ""), str(r[0]))):
            rows, problems, _ = self._read(session_id)
            out.append(
                ThreadInfo(
                    id=str(session_id),
                    count=len(rows),
                    updated=updated,
                    findings=tuple(health(rows)),
                    problems=tuple(problems),
                )
            )
        return out

    def rows(self, thread_id: str) -> list[dict[str, Any]]:
        """The session's items as GR-MEM rows, each with its ``origin`` (table and row id)."""
        return self._read(thread_id)[0]

    def items(self, thread_id: str) -> list[Any]:
        """The session's items exactly as the SDK reads them."""
        return rows_to_items(self.rows(thread_id))

    def scenario(self, thread_id: str) -> Scenario:
        """The session as appends, one per stored item, for the timeline."""
        rows = self.rows(thread_id)
        return rows_scenario(rows, f"agents-{thread_id}", [r["origin"] for r in rows])

    def repair(self, thread_id: str) -> RepairReport:
        """Back the file up, then replace the session's items by their GR-MEM view, atomically.

        The read, the view and the write happen in one ``BEGIN IMMEDIATE``
        transaction, so an agent writing meanwhile waits rather than loses an
        item; unreadable records stay where they are.
        """
        require_writable(self, "a repair")
        backup = backup_file(self.conn, self.path)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows, _, ids = self._read(thread_id)
            if not rows:
                raise FrameworkStoreError(f"{self.path}: session {thread_id!r} has no items")
            fixed, tally = gr_mem_view(
                [{k: v for k, v in r.items() if k != "origin"} for r in rows]
            )
            items = rows_to_items(fixed)
            conn.executemany(
                f'DELETE FROM "{self.messages_table}" WHERE id = ?', [(i,) for i in ids]
            )
            conn.executemany(
                f'INSERT INTO "{self.messages_table}" (session_id, message_data) VALUES (?, ?)',
                [(thread_id, json.dumps(item)) for item in items],
            )
            conn.execute(
                f'UPDATE "{self.sessions_table}" SET updated_at = CURRENT_TIMESTAMP '
                "WHERE session_id = ?",
                (thread_id,),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return RepairReport(
            thread_id=thread_id,
            backup=backup,
            before=len(rows),
            after=len(items),
            events=tally,
            remaining=health(self.rows(thread_id)),
        )
