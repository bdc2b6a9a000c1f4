"""How the async API reaches a store: each store's own bounded executor.

``await buffer.aappend(...)`` runs the very append ``buffer.append`` runs
(the MEM-12 slot lock, the read, the engine, the conditional write, the
journal record and the report) on a worker thread of the store's executor,
so the event loop only awaits a future and is never blocked by a store call.

One executor per store object, shared by every buffer on it and created on
first use, with :func:`async_workers` threads. A store with a connection
pool says how many connections it may hold (``async_workers``): one worker
per connection, so an append never waits for a connection while holding
another, and a hundred tasks appending at once queue for the workers rather
than opening a hundred connections. A child process after ``fork`` makes
its own executor.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from flowdrop_core.storage._base import fork_generation

__all__ = ["DEFAULT_WORKERS", "async_workers", "run_in_store", "submit_to_store"]

T = TypeVar("T")

#: Workers of a store that states no bound (memory, SQLite): its calls are short and
#: SQLite writes take the file's one write lock in turn, so more threads only wait.
DEFAULT_WORKERS = 4

_guard = threading.Lock()
_executors: weakref.WeakKeyDictionary[Any, tuple[int, ThreadPoolExecutor]] = (
    weakref.WeakKeyDictionary()
)


def async_workers(store: Any) -> int:
    """How many of ``store``'s calls the async API runs at once (its ``async_workers``)."""
    workers = getattr(store, "async_workers", None)
    return workers if isinstance(workers, int) and workers > 0 else DEFAULT_WORKERS


def _executor(store: Any) -> ThreadPoolExecutor:
    generation = fork_generation()
    held = _executors.get(store)
    if held is not None and held[0] == generation:
        return held[1]
    with _guard:
        held = _executors.get(store)
        if held is None or held[0] != generation:
            pool = ThreadPoolExecutor(
                max_workers=async_workers(store), thread_name_prefix=f"flowdrop-store-{id(store):x}"
            )
            held = (generation, pool)
            _executors[store] = held
            weakref.finalize(store, pool.shutdown, wait=False)
        return held[1]


async def run_in_store(store: Any, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on ``store``'s executor, awaited (the event loop never blocks on it).

    A cancelled await does not stop the call: a write already sent may still
    land, exactly as when a thread is interrupted after its commit.
    """
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(store), fn, *args)


def submit_to_store(store: Any, fn: Callable[[], Any]) -> None:
    """Start ``fn()`` on ``store``'s executor without waiting (for work a caller cannot await)."""
    _executor(store).submit(fn)
