"""Which framework wrote a file or a database, and the reader for it.

A SQLite file is told by its tables. A URL:

- ``sqlite:///FILE``, ``sqlite+aiosqlite:///FILE``, ``postgresql+DRIVER://...``
  (SQLAlchemy's forms, never a FlowDrop store's): an Agents
  ``SQLAlchemySession`` table pair;
- ``postgresql://`` / ``postgres://``: by the tables the URL's search path
  shows: LangGraph's ``PostgresSaver`` tables first, else the Agents tables;
  neither is FlowDrop's own ``PostgresStore`` (schema ``flowdrop``), which
  stays what ``store URL`` opens;
- anything else (``redis://``...) is no framework store.
"""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.framework_stores._agents_sqlalchemy import (
    AgentsSQLAlchemySession,
    is_sqlalchemy_url,
)
from flowdrop_core.framework_stores._agents_sqlite import AgentsSessionFile, find_tables
from flowdrop_core.framework_stores._base import (
    FrameworkStore,
    FrameworkStoreError,
    connect,
    tables,
)
from flowdrop_core.framework_stores._langgraph_postgres import (
    LangGraphPostgresCheckpointer,
    connect_server,
    is_checkpointer,
    visible_tables,
)
from flowdrop_core.framework_stores._langgraph_sqlite import (
    CHECKPOINT_COLUMNS,
    LangGraphCheckpointFile,
)
from flowdrop_core.storage.urls import mask_url
from flowdrop_core.tiers import Tier

__all__ = ["detect", "open_framework_store", "sniff"]

_LIBPQ = ("postgresql://", "postgres://")


def _server_kind(url: str) -> str | None:
    """The framework whose tables a ``postgresql://`` URL's search path shows (read only)."""
    conn = connect_server(url, read_only=True, timeout=5)  # a failure: the store says why
    try:
        found = visible_tables(conn)
    finally:
        conn.close()
    if is_checkpointer(found):
        return "langgraph-postgres"
    if find_tables(found) is not None:
        return "openai-agents-sqlalchemy"
    return None


def detect(path: str | Path) -> str | None:
    """The kind of framework store ``path`` (a file or a URL) is, or ``None``.

    ``"openai-agents"`` or ``"langgraph"`` for a SQLite file,
    ``"openai-agents-sqlalchemy"`` or ``"langgraph-postgres"`` for a URL.
    """
    text = str(path).strip()
    if is_sqlalchemy_url(text):
        return "openai-agents-sqlalchemy"
    if text.lower().startswith(_LIBPQ):
        return _server_kind(text)
    if "://" in text:
        return None
    p = Path(path)
    conn = connect(p, writable=False)
    try:
        found = tables(conn)
    finally:
        conn.close()
    if find_tables(found) is not None:
        return "openai-agents"
    if found.get("checkpoints", set()) >= CHECKPOINT_COLUMNS:
        return "langgraph"
    return None


def sniff(target: str) -> str | None:
    """:func:`detect`, ``None`` for what it cannot open (a FlowDrop store says why itself)."""
    try:
        return detect(target.strip())
    except (FrameworkStoreError, ImportError):
        return None


def open_framework_store(
    path: str | Path, *, writable: bool = False, tier: Tier | str | None = None
) -> FrameworkStore:
    """The reader for ``path``'s framework (a file or a server URL); anything else is a
    clear error.

    ``tier``: ``view`` (the default; ``writable`` alone is ``drive``, which
    repairs nothing) or ``admin``, which a repair needs (MEM-15) and which
    opens the store writable.
    """
    kind = detect(path)
    if kind == "openai-agents-sqlalchemy":
        return AgentsSQLAlchemySession(str(path), writable=writable, tier=tier)
    if kind == "langgraph-postgres":
        return LangGraphPostgresCheckpointer(str(path), writable=writable, tier=tier)
    p = Path(path)
    if kind == "openai-agents":
        return AgentsSessionFile(p, writable=writable, tier=tier)
    if kind == "langgraph":
        return LangGraphCheckpointFile(p, writable=writable, tier=tier)
    if "://" in str(path):
        raise FrameworkStoreError(
            f"{mask_url(str(path))}: no framework tables there (LangGraph PostgresSaver: checkpoints, "
            "checkpoint_blobs, checkpoint_writes; OpenAI Agents SQLAlchemySession: "
            "agent_sessions / agent_messages)"
        )
    raise FrameworkStoreError(
        f"{p}: neither an OpenAI Agents SQLiteSession file (agent_sessions / agent_messages) "
        "nor a LangGraph SqliteSaver file (checkpoints)"
    )
