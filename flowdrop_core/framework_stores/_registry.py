"""Which framework wrote a file, and the reader for it."""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.framework_stores._agents_sqlite import AgentsSessionFile, find_tables
from flowdrop_core.framework_stores._base import (
    FrameworkStore,
    FrameworkStoreError,
    connect,
    tables,
)
from flowdrop_core.framework_stores._langgraph_sqlite import (
    CHECKPOINT_COLUMNS,
    LangGraphCheckpointFile,
)
from flowdrop_core.tiers import Tier

__all__ = ["detect", "open_framework_store", "sniff"]


def detect(path: str | Path) -> str | None:
    """``"openai-agents"``, ``"langgraph"`` or ``None`` (not a framework store this reads)."""
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
    """:func:`detect` for a connection string: ``None`` for a URL, a missing or other file."""
    if "://" in target:
        return None
    try:
        return detect(target.strip())
    except FrameworkStoreError:
        return None


def open_framework_store(
    path: str | Path, *, writable: bool = False, tier: Tier | str | None = None
) -> FrameworkStore:
    """The reader for ``path``'s framework; a file of neither kind is a clear error.

    ``tier``: ``view`` (the default; ``writable`` alone is ``drive``, which
    repairs nothing) or ``admin``, which a repair needs (MEM-15) and which
    opens the file writable.
    """
    p = Path(path)
    kind = detect(p)
    if kind == "openai-agents":
        return AgentsSessionFile(p, writable=writable, tier=tier)
    if kind == "langgraph":
        return LangGraphCheckpointFile(p, writable=writable, tier=tier)
    raise FrameworkStoreError(
        f"{p}: neither an OpenAI Agents SQLiteSession file (agent_sessions / agent_messages) "
        "nor a LangGraph SqliteSaver file (checkpoints)"
    )
