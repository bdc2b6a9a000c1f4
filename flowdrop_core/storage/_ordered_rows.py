"""The SQL stores' shared row layout: a buffer as gapped-ordered ``entry`` rows, and journal rows.

SQLite and Postgres keep a buffer the same way: one ``entry`` row per entry,
keyed by ``(slot id, ord)``, where ``ord`` is a gapped integer key (appends
step by :data:`GAP`), so an entry goes between two others at the midpoint of
their keys without renumbering the buffer; when a gap is used up, the rows
from that point on are shifted once. Their journals are one row per record,
``(scope, scope_id, key, seq)``. The two dialects differ only in the
placeholder (``?`` or ``%s``) and the table names, so each store builds its
statements once (:meth:`RowSQL.build`) and the algorithms live here, once:
:class:`OrderedRows` applies a :class:`~flowdrop_core.storage._base.Delta` to
the rows, :func:`add_journal_row` writes an append's record (numbered after
the journal's last, the journal kept to its limit).

Every function runs inside the caller's write transaction, so a failure
leaves nothing written. The algorithms do no I/O themselves: each yields its
statements as :data:`SQLSteps` and a driver runs them on a connection,
:func:`run_sql` on a sync one (SQLite, psycopg) and :func:`arun_sql` on a
psycopg ``AsyncConnection``, so the sync and async writes are the same SQL.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, NamedTuple

from flowdrop_core.storage._base import Delta, JournalWrite, Slot, check_journal_seq

__all__ = [
    "COUNT",
    "GAP",
    "ONE",
    "RUN",
    "OrderedRows",
    "RowSQL",
    "SQLSteps",
    "add_journal_row",
    "arun_sql",
    "initial_rows",
    "journal_row_steps",
    "run_sql",
]

#: Step between the ordering keys of consecutive appended entries.
GAP = 1 << 20

#: What a statement step is sent back: its first row (``None`` when none), its row count,
#: or nothing.
ONE, COUNT, RUN = "one", "count", "run"

#: Statements as steps: ``(ONE | COUNT | RUN, sql, args)`` yielded, the answer sent back;
#: the generator's return value is the caller's.
SQLSteps = Generator[tuple[str, str, Any], Any, Any]


def run_sql(conn: Any, steps: SQLSteps) -> Any:
    """Run ``steps`` on a sync DB-API connection; return what they return.

    A statement's error is raised here, out of the caller's transaction.
    """
    reply: Any = None
    while True:
        try:
            kind, sql, args = steps.send(reply)
        except StopIteration as done:
            return done.value
        cur = conn.execute(sql, args)
        reply = cur.fetchone() if kind == ONE else cur.rowcount if kind == COUNT else None


async def arun_sql(conn: Any, steps: SQLSteps) -> Any:
    """:func:`run_sql` on a psycopg ``AsyncConnection``."""
    reply: Any = None
    while True:
        try:
            kind, sql, args = steps.send(reply)
        except StopIteration as done:
            return done.value
        cur = await conn.execute(sql, args)
        reply = (await cur.fetchone()) if kind == ONE else cur.rowcount if kind == COUNT else None


class RowSQL(NamedTuple):
    """One store's statements on its ``entry`` and ``journal`` tables, in its placeholder style."""

    ord_from_front: str
    ord_from_back: str
    delete_front: str
    insert: str
    insert_last: str
    update_body: str
    delete_at: str
    shift: str
    journal_last: str
    journal_records: str
    journal_since: str
    journal_counts: str
    journal_insert: str
    journal_trim: str

    @classmethod
    def build(cls, entry: str, journal: str, placeholder: str) -> RowSQL:
        """The statements for the tables named ``entry`` and ``journal`` (``?`` or ``%s``)."""
        where = "WHERE scope = ? AND scope_id = ? AND key = ?"
        statements = cls(
            ord_from_front=f"SELECT ord FROM {entry} WHERE slot = ? ORDER BY ord LIMIT 1 OFFSET ?",
            ord_from_back=(
                f"SELECT ord FROM {entry} WHERE slot = ? ORDER BY ord DESC LIMIT 1 OFFSET ?"
            ),
            delete_front=(
                f"DELETE FROM {entry} WHERE slot = ? AND ord IN "
                f"(SELECT ord FROM {entry} WHERE slot = ? ORDER BY ord LIMIT ?)"
            ),
            insert=f"INSERT INTO {entry} (slot, ord, body) VALUES (?, ?, ?)",
            # an append after the last row, its key found in the same statement (the
            # primary key's last entry of the slot): one round trip, not two
            insert_last=(
                f"INSERT INTO {entry} (slot, ord, body) "
                f"SELECT ?, COALESCE(max(ord) + {GAP}, 0), ? FROM {entry} WHERE slot = ?"
            ),
            update_body=f"UPDATE {entry} SET body = ? WHERE slot = ? AND ord = ?",
            delete_at=f"DELETE FROM {entry} WHERE slot = ? AND ord = ?",
            shift=f"UPDATE {entry} SET ord = ord + ? WHERE slot = ? AND ord >= ?",
            journal_last=f"SELECT max(seq) FROM {journal} {where}",
            journal_records=f"SELECT seq, record FROM {journal} {where} ORDER BY seq",
            journal_since=f"SELECT seq, record FROM {journal} {where} AND seq > ? ORDER BY seq",
            journal_counts=(
                f"SELECT scope, scope_id, key, count(*) FROM {journal} GROUP BY 1, 2, 3"
            ),
            journal_insert=(
                f"INSERT INTO {journal} (scope, scope_id, key, seq, at, record) "
                "VALUES (?, ?, ?, ?, ?, ?)"
            ),
            journal_trim=f"DELETE FROM {journal} {where} AND seq <= ?",
        )
        if placeholder == "?":
            return statements
        return cls(*(sql.replace("?", placeholder) for sql in statements))


def initial_rows(sid: Any, bodies: list[str]) -> Iterator[tuple[Any, int, str]]:
    """``(slot, ord, body)`` rows for a whole buffer written at once, :data:`GAP` apart."""
    return ((sid, n * GAP, body) for n, body in enumerate(bodies))


def add_journal_row(
    conn: Any, sql: RowSQL, parts: tuple[Any, ...], slot: Slot, journal: JournalWrite, path: Any
) -> None:
    """Insert the record (numbered after the journal's last) and trim to ``limit``.

    ``parts`` is the slot as the table stores it; a number that does not
    follow the journal's last raises :class:`~flowdrop_core.storage._base.JournalConflict`.
    """
    run_sql(conn, journal_row_steps(sql, parts, slot, journal, path))


def journal_row_steps(
    sql: RowSQL, parts: tuple[Any, ...], slot: Slot, journal: JournalWrite, path: Any
) -> SQLSteps:
    """:func:`add_journal_row` as statement steps."""
    last = (yield (ONE, sql.journal_last, parts))[0]
    check_journal_seq(slot, journal, int(last or 0), path)
    yield (RUN, sql.journal_insert, (*parts, journal.seq, journal.at, journal.text))
    yield (RUN, sql.journal_trim, (*parts, journal.seq - journal.limit))


class OrderedRows:
    """Turns a delta's positions into ``entry`` rows of one slot, inside a write transaction.

    A position is found from the nearer end of the buffer (``LIMIT 1 OFFSET``
    on the primary key), so the ops an append makes (evict the first, append
    after the last, a placeholder near the end) are a few index steps; a new
    row takes the midpoint of its neighbours' keys.
    """

    __slots__ = ("conn", "count", "sid", "sql")

    def __init__(self, conn: Any, sql: RowSQL, sid: int, count: int) -> None:
        self.conn, self.sql, self.sid, self.count = conn, sql, sid, count

    def run(self, delta: Delta, bodies: list[str | None]) -> None:
        """Apply ``delta``'s ops in order; ``bodies[k]`` is op ``k``'s entry as JSON text."""
        run_sql(self.conn, self.steps(delta, bodies))

    def ord_at(self, position: int) -> SQLSteps:
        """The ordering key of the row at ``position`` (a step)."""
        if position < self.count - position:
            sql, offset = self.sql.ord_from_front, position
        else:
            sql, offset = self.sql.ord_from_back, self.count - 1 - position
        return int((yield (ONE, sql, (self.sid, offset)))[0])

    def steps(self, delta: Delta, bodies: list[str | None]) -> SQLSteps:
        """:meth:`run` as statement steps (no connection needed)."""
        sid, sql = self.sid, self.sql
        ops = delta.ops
        k = 0
        while k < len(ops):
            kind, position, _ = ops[k]
            if kind == "delete" and position == 0:  # evictions come in runs from the front
                run = 1
                while k + run < len(ops) and ops[k + run][0] == "delete" and ops[k + run][1] == 0:
                    run += 1
                yield (RUN, sql.delete_front, (sid, sid, run))
                self.count -= run
                k += run
                continue
            if kind == "insert" and position == self.count:  # the usual append
                yield (RUN, sql.insert_last, (sid, bodies[k], sid))
                self.count += 1
            elif kind == "insert":
                yield (RUN, sql.insert, (sid, (yield from self.new_ord(position)), bodies[k]))
                self.count += 1
            elif kind == "replace":
                yield (RUN, sql.update_body, (bodies[k], sid, (yield from self.ord_at(position))))
            else:
                yield (RUN, sql.delete_at, (sid, (yield from self.ord_at(position))))
                self.count -= 1
            k += 1

    def new_ord(self, position: int) -> SQLSteps:
        """An ordering key that sorts the new row at ``position`` (steps)."""
        if self.count == 0:
            return 0
        if position == self.count:
            return (yield from self.ord_at(position - 1)) + GAP
        hi = yield from self.ord_at(position)
        if position == 0:
            return hi - GAP
        lo = yield from self.ord_at(position - 1)
        if hi - lo < 2:  # the gap is used up: shift the rows from ``position`` on, once
            top = yield from self.ord_at(self.count - 1)
            shift = top - hi + GAP  # every shifted key lands above every current key
            yield (RUN, self.sql.shift, (shift, self.sid, hi))
            hi += shift
        return (lo + hi) // 2
