"""A read-only SQLite open that changes no byte and creates no file beside the database.

A plain ``mode=ro`` open is not enough: on a WAL file at rest it creates
``-wal`` and ``-shm``, and on a file a writer left behind (a ``-wal`` and
``-shm`` with no process attached) it rebuilds the ``-shm``. Each state of
the folder gets the open that leaves it as it is:

- ``immutable``: no ``-wal`` (nor a hot ``-journal``) beside the file: the
  file is all there is; ``immutable=1`` makes SQLite create nothing;
- ``shared``: ``-wal`` and ``-shm`` exist: ``readonly_shm=1`` maps the
  ``-shm`` read-only; a live writer's commits are seen through it, and
  without a writer SQLite reads the ``-wal`` into its own memory instead of
  recovering the index into the file;
- ``copy``: a ``-wal`` without ``-shm`` (or a hot ``-journal``) needs a
  recovery SQLite can only do by writing; the database and its journal are
  copied into a private temporary folder, read there, and the folder is
  removed when the connection closes. No writer can be live in this state
  (a WAL writer always holds the ``-shm``).

:func:`is_stale` says when a writer appeared after the open, so a long-lived
reader reconnects and sees its commits.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import weakref
from pathlib import Path
from typing import Any, Literal

__all__ = ["ReadOnlyKind", "is_stale", "open_readonly"]

ReadOnlyKind = Literal["immutable", "shared", "copy"]


class _CopyConnection(sqlite3.Connection):
    """A connection to a private copy; closing it removes the copy."""

    _copy_dir: str | None = None

    def close(self) -> None:
        super().close()
        if self._copy_dir is not None:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            self._copy_dir = None


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _uri(path: Path, params: str) -> str:
    return f"{path.resolve().as_uri()}?mode=ro&{params}"


def _copy(path: Path, **kwargs: Any) -> sqlite3.Connection:
    folder = tempfile.mkdtemp(prefix="flowdrop-ro-")
    try:
        target = Path(folder) / "db.sqlite3"
        shutil.copyfile(path, target)
        for suffix in ("-wal", "-journal"):
            if _side(path, suffix).exists():
                shutil.copyfile(_side(path, suffix), _side(target, suffix))
        # read-write on the copy: SQLite replays its -wal or rolls its hot journal back there
        conn = sqlite3.connect(os.fspath(target), factory=_CopyConnection, **kwargs)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    conn._copy_dir = folder
    weakref.finalize(conn, shutil.rmtree, folder, ignore_errors=True)
    return conn


def open_readonly(path: Path, **kwargs: Any) -> tuple[sqlite3.Connection, ReadOnlyKind]:
    """A connection that reads ``path`` (committed data included) and writes nothing beside it.

    ``kwargs`` go to :func:`sqlite3.connect` (``timeout``, ``isolation_level``,
    ``check_same_thread``). The first query is run here, so a file that is not
    a database raises :class:`sqlite3.DatabaseError` from this call.
    """
    wal, shm, journal = _side(path, "-wal"), _side(path, "-shm"), _side(path, "-journal")
    kind: ReadOnlyKind
    if journal.exists() and journal.stat().st_size > 0:
        kind = "copy"
    elif not wal.exists():
        kind = "immutable"
    elif shm.exists():
        kind = "shared"
    else:
        kind = "copy"
    conn: sqlite3.Connection | None = None
    try:
        if kind == "immutable":
            conn = sqlite3.connect(_uri(path, "immutable=1"), uri=True, **kwargs)
        elif kind == "shared":
            conn = sqlite3.connect(_uri(path, "readonly_shm=1"), uri=True, **kwargs)
        else:
            conn = _copy(path, **kwargs)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        if conn is not None:
            conn.close()
        if kind != "shared":
            raise
        kind = "copy"  # an -shm we may not read: read a private copy instead
        conn = _copy(path, **kwargs)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    return conn, kind


def is_stale(path: Path, kind: ReadOnlyKind) -> bool:
    """Whether a writer started since a connection of ``kind`` was opened (reconnect then).

    An immutable connection would not see its commits (nor notice a checkpoint
    rewriting pages under it); a private copy is a snapshot. A shared one
    follows the writer through the ``-shm``.
    """
    if kind == "immutable":
        return _side(path, "-wal").exists()
    if kind == "copy":
        return _side(path, "-shm").exists()
    return False
