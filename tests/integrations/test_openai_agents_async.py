"""GRMemSession's async methods use the buffer's async API, bounded by the store's pool."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.integrations.openai_agents import GRMemSession
from flowdrop_core.storage import SQLiteStore
from flowdrop_core.storage._aio import async_workers


def test_a_hundred_sessions_use_the_stores_bounded_workers_not_a_thread_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_to_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("asyncio.to_thread: an unbounded thread pool, not the store's")

    monkeypatch.setattr(asyncio, "to_thread", no_to_thread)
    store = SQLiteStore(tmp_path / "agents.sqlite3")
    sessions = [GRMemSession(f"s{n}", store=store) for n in range(100)]

    async def run(session: GRMemSession) -> list[Any]:
        await session.add_items([{"role": "user", "content": f"hi from {session.session_id}"}])
        await session.add_items([{"role": "user", "content": "again"}])
        popped = await session.pop_item()
        assert popped is not None and popped["content"] == "again"
        items = await session.get_items()
        await session.clear_session()
        return items

    async def main() -> list[list[Any]]:
        return await asyncio.gather(*(run(s) for s in sessions))

    got = asyncio.run(main())
    assert [[i["content"] for i in items] for items in got] == [
        [f"hi from s{n}"] for n in range(100)
    ]
    assert all(s.last_result is not None and s.last_result.appended == 1 for s in sessions)
    workers = {
        t.name for t in threading.enumerate() if t.name.startswith(f"flowdrop-store-{id(store):x}_")
    }
    assert 0 < len(workers) <= async_workers(store)
    store.close()
