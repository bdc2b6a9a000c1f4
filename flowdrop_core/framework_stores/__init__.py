"""The stores agent frameworks write themselves, read by the inspector (read-only by default).

Two files and two server stores are covered, one module each:

- :mod:`._agents_sqlite`: an OpenAI Agents SDK ``SQLiteSession`` or
  ``AdvancedSQLiteSession`` file (``agent_sessions`` / ``agent_messages``,
  ``message_structure``): one conversation per session id (and branch);
- :mod:`._langgraph_sqlite`: a LangGraph ``SqliteSaver`` checkpoint file
  (``checkpoints`` / ``writes``): each thread's latest ``messages``;
- :mod:`._langgraph_postgres`: a LangGraph ``PostgresSaver`` checkpointer,
  by ``postgresql://`` URL;
- :mod:`._agents_sqlalchemy`: an Agents ``SQLAlchemySession`` table pair, by
  SQLAlchemy URL (SQLite or Postgres).

:func:`detect` tells them apart (a URL by its form and the tables its
search path shows; see :mod:`._registry`). On a server a repair is one
transaction, read back by the framework's reader before the commit.

Each reader lists its conversations (:class:`ThreadInfo`, with their
health), gives one as GR-MEM rows (which keep the framework's own items or
message) or as a scenario the timeline replays, and repairs one when it
was opened with ``writable=True``. A repair is an administrative act
(MEM-15): :meth:`FrameworkStore.plan_repair` names every row it will
change (the GR-MEM view of the conversation, replayed through the engine:
MEM-1/2 duplicates dropped, MEM-3 healing at the next user turn, MEM-10,
compared with what is stored) or why it is refused; ``repair`` backs the
file up, writes only those rows, and reads the result back with the
framework's own reader, restoring the backup on any difference.

Health is the inspector's health report of the conversation
(:func:`flowdrop_core.inspect.health.health` over its replay). A read-only
open changes no byte and creates no file
(:func:`flowdrop_core.storage._readonly.open_readonly`).
"""

from __future__ import annotations

from flowdrop_core.framework_stores._base import (
    Change,
    FrameworkStore,
    FrameworkStoreError,
    RepairPlan,
    RepairReport,
    ThreadInfo,
    backup_file,
    gr_mem_view,
    health,
    rows_scenario,
)
from flowdrop_core.framework_stores._registry import detect, open_framework_store, sniff

__all__ = [
    "Change",
    "FrameworkStore",
    "FrameworkStoreError",
    "RepairPlan",
    "RepairReport",
    "ThreadInfo",
    "backup_file",
    "detect",
    "gr_mem_view",
    "health",
    "open_framework_store",
    "rows_scenario",
    "sniff",
]
