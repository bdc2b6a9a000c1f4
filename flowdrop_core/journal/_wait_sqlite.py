"""SQLite: a commit changes the file or its ``-wal``; a ``stat`` of both tells, writing nothing.

Also used for a framework's own SQLite file (a LangGraph checkpoint, an
Agents session file): nothing is opened between changes, so a read-only
follower creates no file and changes no byte.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flowdrop_core.journal._wait import SignalWaiter

__all__ = ["FileWaiter", "file_signature"]


def file_signature(path: Path) -> tuple[Any, ...]:
    """Size, modification time and inode of the file and its ``-wal`` (``None`` when absent)."""
    out: list[Any] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


class FileWaiter(SignalWaiter):
    """Wake when the file or its ``-wal`` changed (a ``stat`` every ``interval``).

    With a store, the follower reads through the waiter's own read-only
    :class:`~flowdrop_core.storage.SQLiteStore` on the same file, reopened
    after each change: a read-only connection opened while the file was at
    rest is ``immutable`` and would never see a later writer's commits.
    """

    def __init__(self, path: Path, interval: float, store: Any = None) -> None:
        self.path = Path(path)
        reader = None
        if store is not None:
            from flowdrop_core.storage import SQLiteStore

            reader = SQLiteStore(self.path, readonly=True)
        super().__init__(reader, interval)
        self.how = f"a stat of the file and its -wal every {interval:g} s"

    def signal(self) -> Any:
        return file_signature(self.path)

    def changed(self) -> None:
        if self.reader is not None:
            self.reader.close()  # the next read opens a connection that sees the change

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
