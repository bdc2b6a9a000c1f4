"""An OpenAI Agents SDK session file: sessions, their items, health and repair.

Two session kinds write this file, and both are read as the SDK reads them:

- ``SQLiteSession`` (``agents.memory``): ``agent_sessions`` (``session_id``,
  ``created_at``, ``updated_at``) and ``agent_messages`` (``id``,
  ``session_id``, ``message_data`` as JSON text, ``created_at``), read in
  ``id`` order. Other table names (the session's ``sessions_table`` /
  ``messages_table``) are found by their columns.
- ``AdvancedSQLiteSession`` (``agents.extensions.memory``): the same two
  tables plus ``message_structure``, which orders a branch's items by
  ``sequence_number`` and points at their message rows (branches share the
  rows they copied), ``turn_usage`` (per user turn), ``branch_reservations``
  and ``session_clear_generations``. A session with structure rows is read
  through them: its ``main`` branch under the session id, every other
  branch as ``SESSION@BRANCH``.

The items are Responses input items, read by
:mod:`flowdrop_core.integrations._responses_items`. Calls stored one after
another (the model's parallel calls: one item per call) are one assistant
turn, with their arguments. A row whose ``message_data`` is not JSON (the
SDK skips it) is reported with its row id and never touched.

A repair (MEM-15: an administrative act) is planned first: the GR-MEM view
of the conversation is compared with the stored rows, and only rows whose
content changes are written (:meth:`AgentsSessionFile.plan_repair` lists
them). A layout this module does not fully understand is refused before
any change. After the write, the SDK's own session reads the result back
(from a scratch copy, as the SDK writes when it opens a file); anything
other than what was planned restores the backup.
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
import threading
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
from flowdrop_core.integrations._responses_items import (
    ITEM_KEY,
    _call_types,
    item_to_row,
    row_to_item,
)
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.scenario import Scenario
from flowdrop_core.tiers import Tier

__all__ = ["GROUP_KEY", "AgentsSessionFile", "find_tables"]

SESSION_COLUMNS = frozenset({"session_id", "created_at", "updated_at"})
MESSAGE_COLUMNS = frozenset({"id", "session_id", "message_data", "created_at"})
STRUCTURE_COLUMNS = frozenset(
    {
        "id",
        "session_id",
        "message_id",
        "branch_id",
        "message_type",
        "sequence_number",
        "user_turn_number",
        "branch_turn_number",
        "tool_name",
        "created_at",
    }
)
#: Tables an AdvancedSQLiteSession adds (all but ``message_structure`` are left as they are).
ADVANCED_TABLES = frozenset(
    {"message_structure", "turn_usage", "branch_reservations", "session_clear_generations"}
)
#: The key of a row that stands for several stored items (calls of one model turn).
GROUP_KEY = "responses_items"


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


@dataclass(frozen=True)
class Record:
    """One stored item: its message row, and its structure row in an advanced session."""

    ref: int  # the message row id
    data: str  # message_data as stored
    item: Any
    struct: int | None = None  # message_structure.id
    seq: int | None = None
    turns: tuple[Any, Any] = (None, None)  # user_turn_number, branch_turn_number
    kind: str | None = None  # message_type
    tool: str | None = None  # tool_name


@dataclass
class _Thread:
    session: str
    branch: str | None  # None: a plain SQLiteSession (no structure rows)
    records: list[Record] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _is_call_row(row: dict[str, Any]) -> bool:
    return (
        row.get("role") == "assistant"
        and row.get("content") is None
        and bool((row.get("metadata") or {}).get("tool_calls"))
    )


def _row_items(row: dict[str, Any], types: dict[str, str]) -> list[Any]:
    if GROUP_KEY in row:
        return list(row[GROUP_KEY])
    return row_to_item(row, types)


def _lis(values: Sequence[int]) -> set[int]:
    """The values of a longest increasing subsequence (patience sorting)."""
    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = [-1] * len(values)
    for k, v in enumerate(values):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        back[k] = tail_at[lo - 1] if lo else -1
        if lo == len(tails):
            tails.append(v)
            tail_at.append(k)
        else:
            tails[lo] = v
            tail_at[lo] = k
    out: set[int] = set()
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.add(values[k])
        k = back[k]
    return out


def _message_type(item: Any) -> str:
    """The SDK's ``message_type`` of a new item (its ``_classify_message_type``)."""
    if isinstance(item, dict):
        if item.get("role") in ("user", "assistant"):
            return str(item["role"])
        if item.get("type"):
            return str(item["type"])
    return "other"


def _run(coro_factory: Callable[[], Any]) -> Any:
    """Run a coroutine to its end, also from code that already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    out: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            out.append(asyncio.run(coro_factory()))
        except BaseException as exc:  # pragma: no cover - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    return out[0]


class AgentsSessionFile:
    """The sessions of one Agents SDK session file (read-only unless ``writable``)."""

    kind = "openai-agents"
    #: The order the SDK's session reads a session's rows in.
    order = "id"

    def __init__(
        self, path: str | Path, *, writable: bool = False, tier: Tier | str | None = None
    ) -> None:
        self.path = Path(path)
        self.writable, self.tier = open_tier(writable, tier)
        self.conn = connect(self.path, self.writable)
        self.found = tables(self.conn)
        names = find_tables(self.found)
        if names is None:
            self.conn.close()
            raise FrameworkStoreError(
                f"{self.path}: no SQLiteSession tables (agent_sessions / agent_messages)"
            )
        self.sessions_table, self.messages_table = names
        self.structure = self._structure_is_ours()

    def close(self) -> None:
        self.conn.close()

    # -- layout --------------------------------------------------------------------------

    def _foreign_keys(self, table: str) -> list[tuple[Any, ...]]:
        return self.conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall()

    def _structure_is_ours(self) -> bool:
        """Whether ``message_structure`` exists and points at this file's messages table."""
        if not self.found.get("message_structure", set()) >= STRUCTURE_COLUMNS:
            return False
        return any(
            fk[3] == "message_id" and str(fk[2]).lower() == self.messages_table.lower()
            for fk in self._foreign_keys("message_structure")
        )

    def _layout_refusal(self) -> str | None:
        """Why a repair of this file could write what it does not report (else ``None``)."""
        extra = self.found[self.messages_table] - MESSAGE_COLUMNS
        if extra:
            return (
                f"{self.messages_table} has columns the SDK does not write "
                f"({', '.join(sorted(extra))})"
            )
        if "message_structure" in self.found and not self.structure:
            return (
                "message_structure does not belong to "
                f"{self.messages_table} (another table pair or an unknown layout)"
            )
        if self.structure and self.found["message_structure"] - STRUCTURE_COLUMNS:
            extra = self.found["message_structure"] - STRUCTURE_COLUMNS
            return f"message_structure has unknown columns ({', '.join(sorted(extra))})"
        involved = {self.sessions_table.lower(), self.messages_table.lower()}
        if self.structure:
            involved.add("message_structure")
        triggers = self.conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        hit = sorted(n for n, t in triggers if str(t).lower() in involved)
        if hit:
            return f"triggers would change rows this repair does not report ({', '.join(hit)})"
        known = {"message_structure"} if self.structure else set()
        for table in self.found:
            if table in known or table == self.messages_table:
                continue
            for fk in self._foreign_keys(table):
                if str(fk[2]).lower() == self.messages_table.lower():
                    return f"table {table} refers to {self.messages_table} rows (unknown layout)"
        return None

    # -- reading -------------------------------------------------------------------------

    def _has_structure(self, session: str) -> bool:
        if not self.structure:
            return False
        return (
            self.conn.execute(
                "SELECT 1 FROM message_structure WHERE session_id = ? LIMIT 1", (session,)
            ).fetchone()
            is not None
        )

    def _branches(self, session: str) -> list[str]:
        listed = self.conn.execute(
            "SELECT branch_id, MIN(id) FROM message_structure WHERE session_id = ? "
            "GROUP BY branch_id ORDER BY MIN(id)",
            (session,),
        ).fetchall()
        return [str(b) for b, _ in listed]

    def _sessions(self) -> list[tuple[str, Any]]:
        return self.conn.execute(
            f'SELECT s.session_id, s.updated_at FROM "{self.sessions_table}" s '
            f'UNION SELECT DISTINCT m.session_id, NULL FROM "{self.messages_table}" m '
            f'WHERE m.session_id NOT IN (SELECT session_id FROM "{self.sessions_table}")'
        ).fetchall()

    def _resolve(self, thread_id: str) -> tuple[str, str | None]:
        """The session and branch a thread id names (``SESSION@BRANCH`` for other branches)."""
        if self._has_structure(thread_id):
            return thread_id, "main"
        if self.structure and "@" in thread_id:
            session, branch = thread_id.rsplit("@", 1)
            if self._has_structure(session) and branch in self._branches(session):
                return session, branch
        return thread_id, None

    def _read(self, thread_id: str) -> _Thread:
        session, branch = self._resolve(thread_id)
        thread = _Thread(session, branch)
        if branch is None:
            listed = self.conn.execute(
                f'SELECT id, message_data FROM "{self.messages_table}" '
                f"WHERE session_id = ? ORDER BY {self.order}",
                (session,),
            ).fetchall()
            raw: list[tuple[Any, ...]] = [
                (rid, data, None, None, (None, None), None, None) for rid, data in listed
            ]
        else:  # as AdvancedSQLiteSession.get_items reads a branch
            found = self.conn.execute(
                "SELECT m.id, m.message_data, s.id, s.sequence_number, "
                "s.user_turn_number, s.branch_turn_number, s.message_type, s.tool_name "
                f'FROM "{self.messages_table}" m JOIN message_structure s ON m.id = s.message_id '
                "WHERE m.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number",
                (session, branch),
            ).fetchall()
            raw = [(r[0], r[1], r[2], r[3], (r[4], r[5]), r[6], r[7]) for r in found]
        for rid, data, struct, seq, turns, kind, tool in raw:
            where = f"{self.messages_table}.id={rid}"
            try:
                item = json.loads(data)
            except (TypeError, ValueError) as exc:
                thread.problems.append(
                    f"{where}: message_data is not JSON ({exc}); the SDK skips it"
                )
                continue
            thread.records.append(Record(rid, data, item, struct, seq, turns, kind, tool))
        return thread

    def _rows_of(self, thread: _Thread) -> tuple[list[dict[str, Any]], list[str]]:
        """GR-MEM rows (with ``_records``: the record indexes each stands for) and problems.

        Calls stored one after another are the model's parallel calls of one
        turn: one assistant row declaring them all, with their arguments.
        """
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        last_call_record = -2
        for k, rec in enumerate(thread.records):
            where = f"{self.messages_table}.id={rec.ref}"
            try:
                row = item_to_row(rec.item, rec.ref, self.messages_table)
            except InvalidMessagesError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if _is_call_row(row):
                call = row["metadata"]["tool_calls"][0]
                if isinstance(rec.item, dict) and "arguments" in rec.item:
                    call["arguments"] = rec.item["arguments"]
                if last_call_record == k - 1 and rows and _is_call_row(rows[-1]):
                    group = rows[-1]
                    group["metadata"]["tool_calls"].append(call)
                    group.setdefault(GROUP_KEY, [group.pop(ITEM_KEY)]).append(rec.item)
                    group["_records"] = (*group["_records"], k)
                    group["origin"] = f"{group['origin']},{rec.ref}"
                    last_call_record = k
                    continue
                last_call_record = k
            row["origin"] = where
            row["_records"] = (k,)
            rows.append(row)
        return rows, problems

    def threads(self) -> list[ThreadInfo]:
        """Every session id (from both tables), newest update last, with its health.

        A session with other branches than ``main`` lists each as ``SESSION@BRANCH``.
        """
        out = []
        for session_id, updated in sorted(
            self._sessions(), key=lambda r: (str(r[1] or ""), str(r[0]))
        ):
            ids = [str(session_id)]
            if self._has_structure(str(session_id)):
                ids += [f"{session_id}@{b}" for b in self._branches(str(session_id)) if b != "main"]
            for thread_id in ids:
                thread = self._read(thread_id)
                rows, problems = self._rows_of(thread)
                out.append(
                    ThreadInfo(
                        id=thread_id,
                        count=len(rows),
                        updated=updated,
                        findings=tuple(health(rows)),
                        problems=tuple(thread.problems + problems),
                    )
                )
        return out

    def rows(self, thread_id: str) -> list[dict[str, Any]]:
        """The session's turns as GR-MEM rows, each with its ``origin`` (table and row ids)."""
        rows, _ = self._rows_of(self._read(thread_id))
        return [{k: v for k, v in r.items() if k != "_records"} for r in rows]

    def items(self, thread_id: str) -> list[Any]:
        """The session's items exactly as the SDK reads them."""
        return [r.item for r in self._read(thread_id).records]

    def scenario(self, thread_id: str) -> Scenario:
        """The session as appends, one per stored turn, for the timeline."""
        rows = self.rows(thread_id)
        return rows_scenario(rows, f"agents-{thread_id}", [r["origin"] for r in rows])

    # -- repair --------------------------------------------------------------------------

    def plan_repair(self, thread_id: str) -> RepairPlan:
        """The rows a repair would remove, insert or replace, or why it is refused."""
        thread = self._read(thread_id)
        rows, problems = self._rows_of(thread)
        if not rows and not problems:
            raise FrameworkStoreError(f"{self.path}: session {thread_id!r} has no items")
        state = [(r.ref, r.data, r.struct, r.seq) for r in thread.records]
        plan = RepairPlan(thread_id, before=len(rows), after=len(rows), state=state)
        plan.refused = self._layout_refusal()
        if plan.refused is None and problems:
            plan.refused = f"items this reader cannot pair: {'; '.join(problems)}"
        if plan.refused:
            return plan
        fixed, tally = gr_mem_view(copy.deepcopy(rows))
        plan.events, plan.after = tally, len(fixed)
        types = _call_types(fixed)
        target: list[tuple[int | None, Any]] = []  # (record index, item); None: a new item
        for row in fixed:
            items = _row_items(row, types)
            recs = row.get("_records")
            if recs is not None and items == [thread.records[i].item for i in recs]:
                target += [(i, thread.records[i].item) for i in recs]
            else:
                target += [(None, item) for item in items]
        plan.expected = [item for _, item in target]
        if [i for i, _ in target] == list(range(len(thread.records))):
            return plan  # nothing to do
        if thread.branch is None:
            plan.changes, plan.state = self._plan_plain(thread, target), (state, None)
        else:
            refusal = self._turns_refusal(thread, target)
            if refusal:
                plan.refused = refusal
                return plan
            plan.changes, ops = self._plan_advanced(thread, target)
            plan.state = (state, ops)
        return plan

    def _free_ids(self, lo: int, hi: int, need: int) -> list[int] | None:
        """``need`` ids strictly between ``lo`` and ``hi`` no row of the table uses, or None."""
        if hi - lo - 1 < need:
            return None
        used = {
            r[0]
            for r in self.conn.execute(
                f'SELECT id FROM "{self.messages_table}" WHERE id > ? AND id < ?', (lo, hi)
            )
        }
        free = [i for i in range(lo + 1, hi) if i not in used][:need]
        return free if len(free) == need else None

    def _plan_plain(self, thread: _Thread, target: list[tuple[int | None, Any]]) -> list[Change]:
        """Rows in ``id`` order: kept rows stay; the rest reuse ids between them, or new ids.

        An item that must go where no id is free (a placeholder before the next
        user turn) makes the rows after it change places: each gets the next
        item's content, and the last item is a new row at the end.
        """
        records = thread.records
        anchors = _lis([i for i, _ in target if i is not None])
        table = self.messages_table
        by_ref = {rec.ref: rec for rec in records}
        loose = sorted(rec.ref for k, rec in enumerate(records) if k not in anchors)
        changes: list[Change] = []
        segment: list[tuple[int | None, Any]] = []
        lo = 0
        for entry in [*target, (-1, None)]:  # -1: the end
            index = entry[0]
            if index is None or (index != -1 and index not in anchors):
                segment.append(entry)
                continue
            hi = records[index].ref if index != -1 else None
            slots = loose[
                bisect_right(loose, lo) : len(loose) if hi is None else bisect_left(loose, hi)
            ]
            need = len(segment) - len(slots)
            extra: list[int] | None = []
            if need > 0 and hi is not None:
                extra = self._free_ids(lo, hi, need)
                if extra is None:  # no room: this kept row moves too, the segment goes on
                    anchors.discard(index)
                    insort(loose, records[index].ref)
                    segment.append(entry)
                    continue
            slots = sorted(slots + (extra or []))
            for n, (_, item) in enumerate(segment):
                if n >= len(slots):
                    changes.append(Change("insert", f"{table} (new row at the end)", new=item))
                    continue
                old = by_ref.get(slots[n])
                if old is None:
                    changes.append(Change("insert", f"{table}.id={slots[n]}", new=item))
                elif old.item != item:
                    changes.append(Change("replace", f"{table}.id={slots[n]}", old.item, item))
            for slot in slots[len(segment) :]:
                if slot in by_ref:
                    changes.append(Change("remove", f"{table}.id={slot}", old=by_ref[slot].item))
            segment = []
            if hi is not None:
                lo = hi
        return changes

    def _turns_refusal(self, thread: _Thread, target: list[tuple[int | None, Any]]) -> str | None:
        """Why an advanced branch cannot take this view: its user turns must stay put."""
        users = {k for k, rec in enumerate(thread.records) if rec.kind == "user"}
        anchors = _lis([i for i, _ in target if i is not None])
        if not users <= anchors or any(i is None and _message_type(x) == "user" for i, x in target):
            return (
                "the view would remove, move or add a user turn; its turn numbers, usage "
                "(turn_usage) and branches refer to them"
            )
        seqs = [rec.seq for rec in thread.records]
        if len(set(seqs)) != len(seqs):
            return "two structure rows of the branch share a sequence_number (order unknown)"
        return None

    def _plan_advanced(
        self, thread: _Thread, target: list[tuple[int | None, Any]]
    ) -> tuple[list[Change], list[tuple[Any, ...]]]:
        """A branch in ``sequence_number`` order: kept structure rows stay; the rest are written.

        A removed item loses its structure row (its message row too, unless
        another branch still refers to it); a new item is a new message row and
        a structure row; an item that moves gets a new sequence number. Where no
        number is free between two kept rows, the session's later structure
        rows (every branch) are renumbered up by what is needed.
        """
        records = thread.records
        anchors = _lis([i for i, _ in target if i is not None])
        session = thread.session
        changes: list[Change] = []
        ops: list[tuple[Any, ...]] = []
        placed = {i for i, _ in target if i is not None}
        for k, rec in enumerate(records):
            if k not in placed:
                shared = self.conn.execute(
                    "SELECT COUNT(*) FROM message_structure WHERE message_id = ? AND id != ?",
                    (rec.ref, rec.struct),
                ).fetchone()[0]
                changes.append(Change("remove", f"message_structure.id={rec.struct}", old=rec.item))
                ops.append(("delete_structure", rec.struct))
                if not shared:
                    changes.append(
                        Change("remove", f"{self.messages_table}.id={rec.ref}", old=rec.item)
                    )
                    ops.append(("delete_message", rec.ref))
        # Sequence numbers, simulated in the order the writes will run.
        seq_of: dict[Any, int] = {
            sid: int(seq)
            for sid, seq in self.conn.execute(
                "SELECT id, sequence_number FROM message_structure WHERE session_id = ?",
                (session,),
            )
        }
        mine = {rec.struct for rec in records}
        for k, rec in enumerate(records):
            if k not in placed:
                seq_of.pop(rec.struct, None)
        lo = 0
        turns: tuple[Any, Any] = (0, 0)
        pending: list[tuple[int | None, Any]] = []

        def place(hi: int | None) -> None:
            if not pending:
                return
            if hi is None:
                start = max([lo, *seq_of.values()]) + 1
                free = list(range(start, start + len(pending)))
            else:
                used = {seq_of[s] for s in mine if s in seq_of and lo < seq_of[s] < hi}
                free = [n for n in range(lo + 1, hi) if n not in used]
                if len(free) < len(pending):
                    need = len(pending) - len(free)
                    moved = sorted(s for s, n in seq_of.items() if n >= hi)
                    changes.append(
                        Change(
                            "renumber",
                            f"message_structure.id in ({', '.join(map(str, moved))}), "
                            f"session {session!r}, every branch",
                            old=f"sequence_number >= {hi}",
                            new=f"sequence_number + {need}",
                        )
                    )
                    ops.append(("shift", hi, need))
                    for s in moved:
                        seq_of[s] += need
                    free = [n for n in range(lo + 1, hi + need) if n not in used]
            for (index, item), seq in zip(pending, free, strict=False):
                if index is None:
                    changes.append(
                        Change(
                            "insert",
                            f"{self.messages_table} (new row) + message_structure "
                            f"(branch {thread.branch!r}, sequence_number {seq})",
                            new=item,
                        )
                    )
                    ops.append(("insert", item, seq, turns))
                    seq_of[("new", len(ops))] = seq
                else:
                    rec = records[index]
                    changes.append(
                        Change(
                            "renumber",
                            f"message_structure.id={rec.struct} ({self.messages_table}.id={rec.ref})",
                            old=f"sequence_number {seq_of[rec.struct]}",
                            new=f"sequence_number {seq}",
                        )
                    )
                    ops.append(("move", rec.struct, seq, turns))
                    seq_of[rec.struct] = seq
            pending.clear()

        for index, item in target:
            if index is not None and index in anchors:
                rec = records[index]
                place(seq_of[rec.struct])
                lo = seq_of[rec.struct]
                turns = rec.turns
            else:
                pending.append((index, item))
        place(None)
        return changes, ops

    def repair(self, thread_id: str, plan: RepairPlan | None = None) -> RepairReport:
        """Write the plan (computed now if not given), read it back with the SDK, or restore.

        Nothing to do writes nothing (no backup either). Otherwise the file is
        backed up, the planned rows are written in one ``BEGIN IMMEDIATE``
        transaction (a session that changed since the plan is refused), and the
        SDK's own reader must return exactly the planned items.
        """
        plan, nothing = settle_repair(self, thread_id, plan)
        if nothing is not None:
            return nothing
        thread = self._read(thread_id)
        before_sdk = self._sdk_state(thread)
        backup = backup_file(self.conn, self.path)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = self.plan_repair(thread_id)
            if now.changes != plan.changes or now.expected != plan.expected:
                raise FrameworkStoreError(
                    f"{self.path}: session {thread_id!r} changed since the plan; "
                    "nothing was written (run it again)"
                )
            if thread.branch is None:
                self._write_plain(thread, plan)
            else:
                self._write_advanced(thread, now.state[1])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        readback = read_back(
            conn, self.path, backup, lambda: self._read_back(thread, plan, before_sdk, backup)
        )
        return finish_repair(self, thread_id, plan, backup, readback)

    def _write_plain(self, thread: _Thread, plan: RepairPlan) -> None:
        table = self.messages_table
        for change in plan.changes:
            data = json.dumps(change.new) if change.new is not None else None
            if change.where.startswith(f"{table}.id="):
                rid = int(change.where.split("=", 1)[1])
                if change.op == "remove":
                    self.conn.execute(f'DELETE FROM "{table}" WHERE id = ?', (rid,))
                elif change.op == "replace":
                    self.conn.execute(
                        f'UPDATE "{table}" SET message_data = ? WHERE id = ?', (data, rid)
                    )
                else:
                    self.conn.execute(*self._insert_at(rid, thread.session, data))
            else:
                self.conn.execute(*self._insert_last(thread.session, data))

    def _insert_at(self, rid: int, session: str, data: str | None) -> tuple[str, tuple[Any, ...]]:
        """A planned row written with its own id (it sorts in place by id)."""
        return (
            f'INSERT INTO "{self.messages_table}" (id, session_id, message_data) VALUES (?, ?, ?)',
            (rid, session, data),
        )

    def _insert_last(self, session: str, data: str | None) -> tuple[str, tuple[Any, ...]]:
        """A planned row after the session's last."""
        return (
            f'INSERT INTO "{self.messages_table}" (session_id, message_data) VALUES (?, ?)',
            (session, data),
        )

    def _write_advanced(self, thread: _Thread, ops: list[tuple[Any, ...]]) -> None:
        table = self.messages_table
        conn = self.conn
        for op in ops:
            if op[0] == "delete_structure":
                conn.execute("DELETE FROM message_structure WHERE id = ?", (op[1],))
            elif op[0] == "delete_message":
                conn.execute(f'DELETE FROM "{table}" WHERE id = ?', (op[1],))
            elif op[0] == "shift":
                conn.execute(
                    "UPDATE message_structure SET sequence_number = sequence_number + ? "
                    "WHERE session_id = ? AND sequence_number >= ?",
                    (op[2], thread.session, op[1]),
                )
            elif op[0] == "move":
                conn.execute(
                    "UPDATE message_structure SET sequence_number = ?, user_turn_number = ?, "
                    "branch_turn_number = ? WHERE id = ?",
                    (op[2], op[3][0], op[3][1], op[1]),
                )
            else:  # insert
                item, seq, turns = op[1], op[2], op[3]
                cur = conn.execute(
                    f'INSERT INTO "{table}" (session_id, message_data) VALUES (?, ?)',
                    (thread.session, json.dumps(item)),
                )
                conn.execute(
                    "INSERT INTO message_structure (session_id, message_id, branch_id, "
                    "message_type, sequence_number, user_turn_number, branch_turn_number, "
                    "tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        thread.session,
                        cur.lastrowid,
                        thread.branch,
                        _message_type(item),
                        seq,
                        turns[0],
                        turns[1],
                        item.get("name") if isinstance(item, dict) else None,
                    ),
                )

    # -- read-back -----------------------------------------------------------------------

    def _sdk_state(self, thread: _Thread) -> dict[str, Any] | None:
        """What the SDK's own session reads from this file now (None without the SDK)."""
        try:
            from agents.memory import SQLiteSession
        except ImportError:
            return None
        with tempfile.TemporaryDirectory(prefix="flowdrop-readback-") as folder:
            copy_path = scratch_copy(self.conn, Path(folder))
            kwargs: dict[str, Any] = {
                "sessions_table": self.sessions_table,
                "messages_table": self.messages_table,
            }
            if thread.branch is None:
                session = SQLiteSession(thread.session, db_path=copy_path, **kwargs)
                try:
                    items = _run(lambda: session.get_items())
                finally:
                    session.close()
                return {"items": {None: items}}
            from agents.extensions.memory import AdvancedSQLiteSession

            adv = AdvancedSQLiteSession(session_id=thread.session, db_path=copy_path, **kwargs)
            try:
                branches = self._branches(thread.session)

                async def read() -> dict[str, Any]:
                    return {
                        "items": {b: await adv.get_items(branch_id=b) for b in branches},
                        "turns": {
                            b: await adv.get_conversation_turns(branch_id=b) for b in branches
                        },
                        "usage": {b: await adv.get_turn_usage(branch_id=b) for b in branches},
                    }

                return dict(_run(read))
            finally:
                adv.close()

    def _read_back(
        self, thread: _Thread, plan: RepairPlan, before: dict[str, Any] | None, backup: Path
    ) -> str:
        """Check the written file with the SDK's reader; restore the backup on any difference."""
        after = self._sdk_state(thread)
        if before is None or after is None:
            mine = self.items(plan.thread_id)
            if mine != plan.expected:
                restore_file(self.conn, backup)
                raise FrameworkStoreError(
                    f"{self.path}: the repaired session reads back differently from the plan; "
                    f"the backup {backup} was restored"
                )
            return "read back with flowdrop's reader (openai-agents is not installed)"
        expected = copy.deepcopy(before)
        expected["items"][thread.branch] = plan.expected
        if after != expected:
            what = sorted(k for k in expected if expected[k] != after.get(k))
            restore_file(self.conn, backup)
            raise FrameworkStoreError(
                f"{self.path}: the SDK reads the repaired session differently from the plan "
                f"({', '.join(what)}); the backup {backup} was restored"
            )
        if thread.branch is None:
            return "read back with SQLiteSession.get_items: as planned"
        return (
            "read back with AdvancedSQLiteSession (get_items, get_conversation_turns, "
            "get_turn_usage, every branch): as planned"
        )
