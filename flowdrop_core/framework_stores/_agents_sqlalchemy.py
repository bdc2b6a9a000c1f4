"""An OpenAI Agents SDK ``SQLAlchemySession`` table, on SQLite or Postgres, addressed by URL.

``agents.extensions.memory.SQLAlchemySession`` writes the same two tables as
``SQLiteSession`` (``agent_sessions``: ``session_id``, ``created_at``,
``updated_at``; ``agent_messages``: ``id``, ``session_id``, ``message_data``,
``created_at``; other names found by their columns) through any SQLAlchemy
engine, and reads a session's rows in ``created_at, id`` order. The URL is
SQLAlchemy's (``sqlite:///file``, ``sqlite+aiosqlite:///file``,
``postgresql+psycopg://...``, ``postgresql+asyncpg://...``) or a plain
``postgresql://`` one holding these tables.

Everything else is the session file's
(:class:`~._agents_sqlite.AgentsSessionFile`): rows, parallel calls as one
turn, health, the repair plan (only rows whose content changes). Reading
never writes: a SQLite file is opened read-only
(:func:`~flowdrop_core.storage._readonly.open_readonly`), a Postgres
connection runs each statement in a ``READ ONLY`` transaction.

A repair (MEM-15) is one transaction on the SDK's own async engine: the
session row is locked as the SDK locks it for a mutation, the plan is
checked again, the planned rows are written, and the SDK's
``SQLAlchemySession.get_items`` on that same transaction must return the
planned items; only then is it committed, else rolled back (nothing
written, no backup needed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from flowdrop_core.framework_stores._agents_sqlite import (
    MESSAGE_COLUMNS,
    AgentsSessionFile,
    _run,
    find_tables,
)
from flowdrop_core.framework_stores._base import (
    FrameworkStoreError,
    RepairPlan,
    RepairReport,
    finish_repair,
    open_tier,
    settle_repair,
)
from flowdrop_core.integrations import require
from flowdrop_core.storage.urls import mask_url as _mask_url
from flowdrop_core.tiers import Tier

__all__ = ["SQLALCHEMY_SCHEMES", "AgentsSQLAlchemySession", "engine_urls", "is_sqlalchemy_url"]


def mask_url(url: str) -> str:
    """The URL as shown: a password masked (a ``sqlite:///`` URL has none; kept as typed)."""
    text = url.strip()
    return text if text.lower().startswith("sqlite") else _mask_url(text)


#: URL schemes only SQLAlchemy takes (a plain ``postgresql://`` is decided by its tables).
SQLALCHEMY_SCHEMES = ("sqlite", "sqlite+pysqlite", "sqlite+aiosqlite")
_POSTGRES_DRIVERS = ("psycopg", "asyncpg", "psycopg2")


def is_sqlalchemy_url(target: str) -> bool:
    """``sqlite:///...`` or ``postgresql+DRIVER://...``: a SQLAlchemy URL, not a store of ours."""
    scheme = target.strip().split("://", 1)[0].lower() if "://" in target else ""
    if scheme in SQLALCHEMY_SCHEMES:
        return True
    base, _, driver = scheme.partition("+")
    return base in ("postgresql", "postgres") and driver in _POSTGRES_DRIVERS


def engine_urls(target: str) -> tuple[Any, Any]:
    """The URL for reading (a sync driver) and for the SDK (an async driver)."""
    require("sqlalchemy", "openai-agents")
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if any(ord(c) < 32 or ord(c) == 127 for c in unquote(target.strip())):
        raise FrameworkStoreError(f"{mask_url(target)!r}: the URL holds control characters")
    try:
        url = make_url(target.strip())
    except ArgumentError as exc:
        raise FrameworkStoreError(f"{mask_url(target)}: not a SQLAlchemy URL ({exc})") from exc
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise FrameworkStoreError(f"{mask_url(target)}: names no SQLite file")
        url = url.set(query={})  # sqlite3 options (uri=true, mode=rw) are not a visitor's to set
        return url.set(drivername="sqlite"), url.set(drivername="sqlite+aiosqlite")
    if backend == "postgresql":
        driver = url.get_driver_name()
        reading = url.set(drivername="postgresql+psycopg")
        sdk = url if driver == "asyncpg" else reading
        return reading, sdk
    raise FrameworkStoreError(
        f"{mask_url(target)}: a {backend} URL; SQLAlchemySession tables are read on "
        "SQLite and Postgres"
    )


class _Conn:
    """A SQLAlchemy connection that runs the session file's SQL (``?`` parameters)."""

    def __init__(self, conn: Any) -> None:
        self.sa = conn

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        from sqlalchemy import text

        names = iter(range(len(params)))
        named = re.sub(r"\?", lambda _: f":p{next(names)}", sql)
        return self.sa.execute(text(named), {f"p{k}": v for k, v in enumerate(params)})


def _read_only_sqlite(path: Path) -> Any:
    from flowdrop_core.storage._readonly import open_readonly

    return open_readonly(path, check_same_thread=False)[0]


class AgentsSQLAlchemySession(AgentsSessionFile):
    """The sessions of one ``SQLAlchemySession`` table pair (read-only unless ``writable``)."""

    kind = "openai-agents-sqlalchemy"
    order = "created_at, id"

    def __init__(self, url: str, *, writable: bool = False, tier: Tier | str | None = None) -> None:
        require("sqlalchemy", "openai-agents")
        from sqlalchemy import create_engine, event, inspect
        from sqlalchemy.exc import SQLAlchemyError

        self.url = url.strip()
        self.path: Path | str = mask_url(self.url)  # type: ignore[assignment]
        self.writable, self.tier = open_tier(writable, tier)
        writable = self.writable
        reading, self.sdk_url = engine_urls(self.url)
        if reading.get_backend_name() == "sqlite":
            file = Path(str(reading.database))
            if not file.is_file():
                raise FrameworkStoreError(f"{self.path}: no such file")
            if writable:
                self.engine = create_engine(reading, isolation_level="AUTOCOMMIT")
            else:
                self.engine = create_engine(
                    "sqlite://",
                    creator=lambda: _read_only_sqlite(file),
                    isolation_level="AUTOCOMMIT",
                )
        else:
            require("psycopg", "postgres")
            self.engine = create_engine(
                reading, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 10}
            )
            if not writable:  # every statement its own READ ONLY transaction

                @event.listens_for(self.engine, "connect")
                def _read_only(dbapi_conn: Any, _: Any) -> None:
                    with dbapi_conn.cursor() as cur:
                        cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

        try:
            self.sa = self.engine.connect()
            insp = inspect(self.sa)
            self.found = {
                t: {str(c["name"]) for c in insp.get_columns(t)} for t in insp.get_table_names()
            }
        except SQLAlchemyError as exc:
            self.engine.dispose()
            raise FrameworkStoreError(f"{self.path}: cannot read ({exc})") from exc
        self.conn = _Conn(self.sa)  # type: ignore[assignment]
        names = find_tables(self.found)
        if names is None:
            self.close()
            raise FrameworkStoreError(
                f"{self.path}: no SQLAlchemySession tables (agent_sessions / agent_messages)"
            )
        self.sessions_table, self.messages_table = names
        self.structure = False

    def close(self) -> None:
        self.sa.close()
        self.engine.dispose()

    def _sessions(self) -> list[tuple[str, Any]]:
        """Every session id (both tables), ``updated_at`` as text."""
        listed = {
            str(s): None if at is None else str(at)
            for s, at in self.conn.execute(
                f'SELECT session_id, updated_at FROM "{self.sessions_table}"'
            )
        }
        for (s,) in self.conn.execute(f'SELECT DISTINCT session_id FROM "{self.messages_table}"'):
            listed.setdefault(str(s), None)
        return list(listed.items())

    # -- repair --------------------------------------------------------------------------

    def _layout_refusal(self) -> str | None:
        """Why a repair could write what it does not report (else ``None``)."""
        from sqlalchemy import inspect

        extra = self.found[self.messages_table] - MESSAGE_COLUMNS
        if extra:
            return (
                f"{self.messages_table} has columns the SDK does not write "
                f"({', '.join(sorted(extra))})"
            )
        insp = inspect(self.sa)
        for table in self.found:
            if table == self.messages_table:
                continue
            for fk in insp.get_foreign_keys(table):
                if str(fk.get("referred_table", "")).lower() == self.messages_table.lower():
                    return f"table {table} refers to {self.messages_table} rows (unknown layout)"
        if self.sa.dialect.name == "sqlite":
            sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (?, ?)"
        else:
            sql = (
                "SELECT tgname FROM pg_catalog.pg_trigger WHERE NOT tgisinternal "
                "AND tgrelid IN (to_regclass(?), to_regclass(?))"
            )
        quoted = (f'"{self.sessions_table}"', f'"{self.messages_table}"')
        names = (self.sessions_table, self.messages_table)
        hit = sorted(
            str(r[0])
            for r in self.conn.execute(sql, names if self.sa.dialect.name == "sqlite" else quoted)
        )
        if hit:
            return f"triggers would change rows this repair does not report ({', '.join(hit)})"
        return None

    def plan_repair(self, thread_id: str) -> RepairPlan:
        """As for a session file; refused where ``created_at`` and ``id`` order rows differently."""
        thread = self._read(thread_id)
        refs = [r.ref for r in thread.records]
        if refs != sorted(refs):
            plan = RepairPlan(thread_id, before=len(refs), after=len(refs))
            plan.refused = (
                f"the session's rows in created_at order are not in id order "
                f"({self.messages_table}.id {refs}); a row written between them could not "
                "be placed"
            )
            return plan
        return super().plan_repair(thread_id)

    def _insert_at(self, rid: int, session: str, data: str | None) -> tuple[str, tuple[Any, ...]]:
        """A row with its own id takes its neighbour's ``created_at``, so it reads in place."""
        table = self.messages_table
        near = (
            f'COALESCE((SELECT created_at FROM "{table}" WHERE session_id = ? AND id < ? '
            f'ORDER BY id DESC LIMIT 1), (SELECT created_at FROM "{table}" WHERE '
            "session_id = ? AND id > ? ORDER BY id LIMIT 1), CURRENT_TIMESTAMP)"
        )
        return (
            f'INSERT INTO "{table}" (id, session_id, message_data, created_at) '
            f"VALUES (?, ?, ?, {near})",
            (rid, session, data, session, rid, session, rid),
        )

    def _insert_last(self, session: str, data: str | None) -> tuple[str, tuple[Any, ...]]:
        """A row after the session's last takes the latest ``created_at`` (or now)."""
        table = self.messages_table
        last = (
            f'COALESCE((SELECT MAX(created_at) FROM "{table}" WHERE session_id = ?), '
            "CURRENT_TIMESTAMP)"
        )
        return (
            f'INSERT INTO "{table}" (session_id, message_data, created_at) VALUES (?, ?, {last})',
            (session, data, session),
        )

    def repair(self, thread_id: str, plan: RepairPlan | None = None) -> RepairReport:
        """Write the plan in one transaction, read it back with the SDK there, then commit.

        Nothing to do writes nothing. Anything the SDK's ``get_items`` returns
        other than the planned items rolls the transaction back.
        """
        plan, nothing = settle_repair(self, thread_id, plan)
        if nothing is not None:
            return nothing
        try:
            readback = str(_run(lambda: self._repair_async(thread_id, plan)))
        except FrameworkStoreError:
            raise
        except Exception as exc:
            raise FrameworkStoreError(
                f"{self.path}: the repair of {thread_id!r} failed "
                f"({type(exc).__name__}: {exc}); rolled back, nothing was written"
            ) from exc
        return finish_repair(self, thread_id, plan, None, readback)

    async def _repair_async(self, thread_id: str, plan: RepairPlan) -> str:
        from agents.extensions.memory import SQLAlchemySession
        from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

        engine = create_async_engine(self.sdk_url)
        try:
            async with engine.connect() as aconn:
                transaction = await aconn.begin()
                try:
                    await aconn.run_sync(lambda c: self._write_in(c, thread_id, plan))
                    sdk = SQLAlchemySession(
                        self._read(thread_id).session,
                        engine=engine,
                        sessions_table=self.sessions_table,
                        messages_table=self.messages_table,
                    )
                    # The SDK's reader, on this transaction (SQLAlchemy's "join an
                    # external transaction": the session neither commits nor rolls back).
                    sdk._session_factory = async_sessionmaker(bind=aconn, expire_on_commit=False)
                    got = await sdk.get_items()
                    if got != plan.expected:
                        raise FrameworkStoreError(
                            f"{self.path}: SQLAlchemySession.get_items reads the repaired "
                            f"session {thread_id!r} differently from the plan; rolled back, "
                            "nothing was written"
                        )
                    await transaction.commit()
                except BaseException:
                    await transaction.rollback()
                    raise
        finally:
            await engine.dispose()
        return "read back with SQLAlchemySession.get_items before the commit: as planned"

    def _write_in(self, conn: Any, thread_id: str, plan: RepairPlan) -> None:
        """Inside the repair's transaction: lock the session, check the plan, write it."""
        reader = self.conn
        self.conn = _Conn(conn)  # type: ignore[assignment]
        try:
            thread = self._read(thread_id)
            if conn.dialect.name == "sqlite":  # takes SQLite's writer, as the SDK does
                sql = f'UPDATE "{self.sessions_table}" SET updated_at = updated_at WHERE session_id = ?'
            else:
                sql = f'SELECT session_id FROM "{self.sessions_table}" WHERE session_id = ? FOR UPDATE'
            self.conn.execute(sql, (thread.session,))
            now = self.plan_repair(thread_id)
            if now.refused or now.changes != plan.changes or now.expected != plan.expected:
                raise FrameworkStoreError(
                    f"{self.path}: session {thread_id!r} changed since the plan; "
                    "nothing was written (run it again)"
                )
            self._write_plain(self._read(thread_id), plan)
        finally:
            self.conn = reader
