"""The stores agent frameworks write themselves, read by the inspector (read-only by default).

Two files are covered, one module each:

- :mod:`.agents_sqlite`: an OpenAI Agents SDK ``SQLiteSession`` file
  (``agent_sessions`` / ``agent_messages``): one conversation per session id;
- :mod:`.langgraph_sqlite`: a LangGraph ``SqliteSaver`` checkpoint file
  (``checkpoints`` / ``writes``): each thread's latest ``messages``.

Each reader lists its conversations (:class:`ThreadInfo`, with their
health), gives one as GR-MEM rows (which keep the framework's own item or
message, so a repair writes back exactly what the framework reads) or as
a scenario the timeline replays, and repairs one when it was opened with
``writable=True``: the file is backed up first (SQLite's online backup,
next to it), then the GR-MEM view (the stored conversation replayed
through the engine: MEM-1/2 duplicates dropped, MEM-3 healing at the next
user turn, MEM-10) is written back in the framework's own format.

Health is the inspector's health report of the conversation
(:func:`flowdrop_core.inspect.health.health` over its replay): every finding
a provider would reject, located, and what GR-MEM does about it. Files are opened with a
``mode=ro`` URI unless writable, so a reader never changes them.
"""

from __future__ import annotations

from flowdrop_core.framework_stores.base import (
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
from flowdrop_core.framework_stores.registry import detect, open_framework_store, sniff

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
