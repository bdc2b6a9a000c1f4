"""A framework writes one more turn to its own file (run in the writer process of the tests)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any


def run(path: str, kind: str, thread: str) -> Any:
    if kind == "langgraph":
        from framework_files import graph_of
        from langchain_core.messages import HumanMessage
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(path, check_same_thread=False)
        graph = graph_of(SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread}}
        graph.update_state(config, {"messages": [HumanMessage("more cats?")]})
        conn.close()
        return _folder(path)
    from agents import SQLiteSession

    session = SQLiteSession(thread, db_path=path)
    asyncio.run(session.add_items([{"role": "user", "content": "more cats?"}]))
    session.close()
    return _folder(path)


def _folder(path: str) -> dict[str, str]:
    """The folder as the framework left it (each file's digest), to compare with later."""
    from pathlib import Path

    from framework_files import folder_state

    return folder_state(Path(path).parent)
