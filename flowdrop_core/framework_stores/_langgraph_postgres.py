"""A LangGraph ``PostgresSaver`` checkpointer on a Postgres server: threads, health, repair.

The tables ``langgraph-checkpoint-postgres`` creates (``checkpoints``,
``checkpoint_blobs``, ``checkpoint_writes``, ``checkpoint_migrations``) are
found in the URL's search path (libpq's ``options=-csearch_path=...`` picks
another schema). They are read through LangGraph's own ``PostgresSaver``,
so the checkpoints decode exactly as the graph would load them; everything
else (threads, rows, health, the repair plan) is the SQLite checkpoint
file's (:class:`~._langgraph_sqlite.LangGraphCheckpointFile`).

Read-only opening runs every read in a ``READ ONLY`` transaction (the
server refuses any write in it) and never calls ``setup()``. A repair
(MEM-15) is one transaction: the ``checkpoints`` table is locked against
new checkpoints, the plan is checked against the latest checkpoint again,
the new checkpoint is put, and a fresh ``PostgresSaver`` on the same
transaction must load the planned messages; only then is it committed. Any
difference or error rolls it back: nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flowdrop_core.framework_stores._base import (
    FrameworkStoreError,
    RepairPlan,
    RepairReport,
    finish_repair,
    open_tier,
    settle_repair,
)
from flowdrop_core.framework_stores._langgraph_sqlite import (
    CHECKPOINT_COLUMNS,
    LangGraphCheckpointFile,
    _plain,
)
from flowdrop_core.integrations import require
from flowdrop_core.storage.urls import mask_url, plain_store_url
from flowdrop_core.tiers import Tier

__all__ = ["POSTGRES_TABLES", "LangGraphPostgresCheckpointer", "visible_tables"]

#: The tables ``PostgresSaver.setup()`` creates besides ``checkpoints``.
POSTGRES_TABLES = frozenset({"checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"})

_VISIBLE = (
    "SELECT c.relname, a.attname FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid "
    "WHERE c.relkind IN ('r', 'p') AND pg_catalog.pg_table_is_visible(c.oid) "
    "AND a.attnum > 0 AND NOT a.attisdropped"
)


def visible_tables(conn: Any) -> dict[str, set[str]]:
    """Each table the search path shows (no schema needed to name it), with its columns."""
    found: dict[str, set[str]] = {}
    with conn.cursor(row_factory=_tuple_row()) as cur:
        for table, column in cur.execute(_VISIBLE).fetchall():
            found.setdefault(str(table), set()).add(str(column))
    return found


def is_checkpointer(found: dict[str, set[str]]) -> bool:
    """Whether the tables are ``PostgresSaver``'s."""
    return found.get("checkpoints", set()) >= CHECKPOINT_COLUMNS and set(found) >= POSTGRES_TABLES


def _tuple_row() -> Any:
    from psycopg.rows import tuple_row

    return tuple_row


def connect_server(url: str, *, read_only: bool, timeout: int = 10) -> Any:
    """A psycopg connection as ``PostgresSaver`` wants it (dict rows), ``READ ONLY`` unless told."""
    psycopg = require("psycopg", "postgres")
    from psycopg.rows import dict_row

    try:
        conn = psycopg.connect(
            url,
            autocommit=False,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=timeout,
        )
    except psycopg.Error as exc:
        raise FrameworkStoreError(f"{mask_url(url)}: cannot connect ({exc})") from exc
    conn.read_only = read_only
    return conn


class LangGraphPostgresCheckpointer(LangGraphCheckpointFile):
    """The threads of one ``PostgresSaver`` checkpointer (read-only unless ``writable``)."""

    kind = "langgraph-postgres"

    def __init__(
        self,
        url: str,
        *,
        writable: bool = False,
        channel: str = "messages",
        tier: Tier | str | None = None,
    ) -> None:
        pg_saver = require("langgraph.checkpoint.postgres", "langgraph")
        self.url = plain_store_url(url)
        self.path: Path | str = mask_url(self.url)  # type: ignore[assignment]
        self.writable, self.tier = open_tier(writable, tier)
        writable = self.writable
        self.channel = channel
        self._in_repair = False
        self.conn = connect_server(self.url, read_only=not writable)
        try:
            found = visible_tables(self.conn)
            self.conn.rollback()
        except Exception:
            self.conn.close()
            raise
        if not is_checkpointer(found):
            self.conn.close()
            raise FrameworkStoreError(
                f"{self.path}: no LangGraph PostgresSaver tables in the search path "
                f"(checkpoints, {', '.join(sorted(POSTGRES_TABLES))})"
            )
        self.saver = pg_saver.PostgresSaver(self.conn)  # never setup(): it would write

    @property
    def _pg(self) -> Any:
        """The psycopg connection (``self.conn`` is typed as the SQLite file's)."""
        return self.conn

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A read ends its (read-only) transaction, unless a repair's transaction is open."""
        try:
            yield
        finally:
            if not self._in_repair:
                self.conn.rollback()

    def _latest(self, thread_id: str) -> Any:
        with self._reading():
            return super()._latest(thread_id)

    def _thread_ids(self) -> list[str]:
        with self._reading(), self._pg.cursor(row_factory=_tuple_row()) as cur:
            listed = cur.execute(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' "
                "ORDER BY thread_id"
            ).fetchall()
        return [str(r[0]) for r in listed]

    def _migration_refusal(self) -> str | None:
        """Why a repair is refused when the tables are newer than the installed saver."""
        with self._reading(), self._pg.cursor(row_factory=_tuple_row()) as cur:
            row = cur.execute("SELECT MAX(v) FROM checkpoint_migrations").fetchone()
        known = len(self.saver.MIGRATIONS) - 1
        if row is not None and row[0] is not None and int(row[0]) > known:
            return (
                f"the tables are at migration {row[0]}, the installed "
                f"langgraph-checkpoint-postgres knows up to {known}: upgrade it first"
            )
        return None

    def plan_repair(self, thread_id: str) -> RepairPlan:
        """As for a checkpoint file; also refused when the tables are newer than the saver."""
        plan = super().plan_repair(thread_id)
        if plan.changes and not plan.refused:
            plan.refused = self._migration_refusal()
            if plan.refused:
                plan.changes = []
        return plan

    def repair(self, thread_id: str, plan: RepairPlan | None = None) -> RepairReport:
        """Put a checkpoint holding the GR-MEM view in one transaction, read it back, commit.

        Nothing to do writes nothing. The checkpoint is read back by a fresh
        ``PostgresSaver`` on the same transaction before the commit; anything
        other than the planned messages rolls the transaction back.
        """
        plan, nothing = settle_repair(self, thread_id, plan)
        if nothing is not None:
            return nothing
        self.conn.rollback()
        self._in_repair = True
        try:
            self.conn.execute("SET LOCAL lock_timeout = '5s'")
            # New checkpoints wait until this transaction ends; reads go on.
            self.conn.execute("LOCK TABLE checkpoints IN SHARE ROW EXCLUSIVE MODE")
            latest = self._latest(thread_id)
            now = self.plan_repair(thread_id)
            if (
                latest is None
                or latest.checkpoint["id"] != plan.state
                or now.refused
                or now.expected != plan.expected
            ):
                raise FrameworkStoreError(
                    f"{self.path}: thread {thread_id!r} changed since the plan; "
                    "nothing was written (run it again)"
                )
            checkpoint, metadata, version = self._new_checkpoint(
                latest, plan, {"events": plan.events, "transaction": True}
            )
            self.saver.put(latest.config, checkpoint, metadata, {self.channel: version})
            readback = self._read_back_here(thread_id, checkpoint["id"], plan.expected)
            self.conn.commit()
        except FrameworkStoreError:
            self.conn.rollback()
            raise
        except Exception as exc:
            self.conn.rollback()
            raise FrameworkStoreError(
                f"{self.path}: the repair of {thread_id!r} failed "
                f"({type(exc).__name__}: {exc}); rolled back, nothing was written"
            ) from exc
        finally:
            self._in_repair = False
        return finish_repair(self, thread_id, plan, None, readback)

    def _read_back_here(self, thread_id: str, checkpoint_id: str, fixed: list[Any]) -> str:
        """A fresh ``PostgresSaver`` in the open transaction must load the planned messages."""
        from langgraph.checkpoint.postgres import PostgresSaver

        from flowdrop_core.integrations.langgraph import message_to_row

        got = PostgresSaver(self._pg).get_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        messages = [] if got is None else got.checkpoint["channel_values"].get(self.channel, [])
        same = (
            got is not None
            and got.checkpoint["id"] == checkpoint_id
            and [_plain(message_to_row(m)) for m in messages] == [_plain(r) for r in fixed]
        )
        if not same:
            raise FrameworkStoreError(
                f"{self.path}: PostgresSaver reads the repaired thread {thread_id!r} differently "
                "from the plan; rolled back, nothing was written"
            )
        return "read back with PostgresSaver.get_tuple before the commit: as planned"
