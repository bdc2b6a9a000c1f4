"""The shared part of the framework store readers: the protocol, health, the view, backups."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flowdrop_core._errors import FlowdropError
from flowdrop_core.engine import Buffer
from flowdrop_core.inspect.health import HealthFinding
from flowdrop_core.scenario import Scenario, ScenarioConfig, ScenarioStep
from flowdrop_core.storage._readonly import open_readonly
from flowdrop_core.store_browser import ReadOnlyError
from flowdrop_core.tiers import Tier, as_tier, require_tier

__all__ = [
    "Change",
    "FrameworkStore",
    "FrameworkStoreError",
    "RepairPlan",
    "RepairReport",
    "ThreadInfo",
    "backup_file",
    "connect",
    "finish_repair",
    "gr_mem_view",
    "health",
    "open_tier",
    "read_back",
    "record_repair",
    "repair_log",
    "require_writable",
    "restore_file",
    "rows_scenario",
    "scratch_copy",
    "settle_repair",
    "tables",
]


class FrameworkStoreError(FlowdropError, ValueError):
    """A framework's file cannot be read as such: says which file and what is wrong."""


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation of a framework store: its id, size, last update and health."""

    id: str
    count: int
    updated: str | None
    findings: tuple[HealthFinding, ...] = ()
    problems: tuple[str, ...] = ()  # rows that could not be read at all (kept, never dropped)

    @property
    def healthy(self) -> bool:
        return not self.findings and not self.problems

    def kinds(self) -> dict[str, int]:
        """How many findings of each kind."""
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.kind] = counts.get(f.kind, 0) + 1
        return counts

    def summary(self) -> str:
        """One line: ``healthy`` or the finding kinds with their counts."""
        if self.healthy:
            return "healthy"
        parts = [f"{k} x{n}" for k, n in sorted(self.kinds().items())]
        if self.problems:
            parts.append(f"unreadable x{len(self.problems)}")
        return ", ".join(parts)


def _short(value: Any, width: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True)
class Change:
    """One row a repair removes, inserts or replaces (or renumbers), with its content."""

    op: str  # "remove", "insert", "replace", "renumber"
    where: str  # the table and row (or what the new row will be)
    old: Any = None
    new: Any = None

    def __str__(self) -> str:
        if self.op == "remove":
            return f"remove   {self.where}: {_short(self.old)}"
        if self.op == "insert":
            return f"insert   {self.where}: {_short(self.new)}"
        if self.op == "replace":
            return f"replace  {self.where}: {_short(self.old)} -> {_short(self.new)}"
        return f"{self.op:<8} {self.where}: {_short(self.old)} -> {_short(self.new)}"


@dataclass
class RepairPlan:
    """What a repair will write, computed before anything is written (MEM-15).

    ``changes`` is every row the write touches; nothing else changes.
    ``refused`` is the reason a repair cannot be done safely (then
    nothing is written). ``state`` is what the plan was computed from; the
    write checks it again inside its transaction.
    """

    thread_id: str
    before: int
    after: int
    events: dict[str, int] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    refused: str | None = None
    expected: Any = None  # what the framework's reader must return afterwards
    state: Any = None

    def lines(self) -> list[str]:
        """The plan as text: one line per change, or why nothing will be written."""
        if self.refused:
            return [f"{self.thread_id}: refused, nothing written: {self.refused}"]
        if not self.changes:
            return [f"{self.thread_id}: nothing to do; nothing will be written"]
        head = f"{self.thread_id}: {plural_changes(len(self.changes))} to write:"
        return [head, *(f"  {c}" for c in self.changes)]


def plural_changes(n: int) -> str:
    return f"{n} change" + ("" if n == 1 else "s")


@dataclass
class RepairReport:
    """What a repair did: the changes, the backup, the read-back, what is still flagged."""

    thread_id: str
    backup: Path | None
    before: int
    after: int
    events: dict[str, int] = field(default_factory=dict)
    remaining: list[HealthFinding] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    readback: str = ""
    record: Path | None = None  # the repair log line written for it (MEM-15), if any

    def summary(self) -> str:
        if not self.changes:
            return (
                f"{self.thread_id}: {self.before} -> {self.after} entries (nothing to do); "
                f"nothing written; {len(self.remaining)} finding(s) left"
            )
        done = ", ".join(f"{k} x{n}" for k, n in sorted(self.events.items())) or "rows changed"
        kept = f"backup {self.backup}" if self.backup else "one transaction, no backup needed"
        return (
            f"{self.thread_id}: {self.before} -> {self.after} entries ({done}); "
            f"{plural_changes(len(self.changes))} written; {kept}; "
            f"{self.readback}; {len(self.remaining)} finding(s) left"
            + (f"; recorded in {self.record}" if self.record is not None else "")
        )


class FrameworkStore(Protocol):
    """A framework's own store, as the inspector reads it.

    ``tier`` (:mod:`flowdrop_core.tiers`) is fixed at open: a repair needs
    ``admin`` (MEM-15), asked for explicitly.
    """

    kind: str
    writable: bool
    tier: Tier

    @property
    def path(self) -> Path | str:
        """The file, or the server's URL with its password masked."""
        ...

    def threads(self) -> list[ThreadInfo]:
        """Every conversation with its health, in the store's order."""
        ...

    def rows(self, thread_id: str) -> list[dict[str, Any]]:
        """One conversation as GR-MEM rows (each keeps the framework's own item)."""
        ...

    def scenario(self, thread_id: str) -> Scenario:
        """One conversation as appends, one per stored entry, for the timeline."""
        ...

    def plan_repair(self, thread_id: str) -> RepairPlan:
        """What a repair would change, row by row, or why it is refused; writes nothing."""
        ...

    def repair(self, thread_id: str, plan: RepairPlan | None = None) -> RepairReport:
        """Write ``plan`` (computed now if not given): backup, write, read back, or restore."""
        ...

    def close(self) -> None: ...


def health(rows: Sequence[dict[str, Any]]) -> list[HealthFinding]:
    """What is wrong with a stored conversation, located: the inspector's health report.

    The rows are replayed one append per stored entry and judged by
    :func:`flowdrop_core.inspect.health.health` (what a provider would reject,
    found by MEM-5's repair pass, plus results that landed after another turn,
    each with what GR-MEM does about it). ``index`` is the stored entry.
    """
    from flowdrop_core.inspect.health import health as health_report
    from flowdrop_core.replay import replay

    if not rows:
        return []
    labels = [str(r.get("origin") or f"entry {k}") for k, r in enumerate(rows)]
    scenario = rows_scenario(rows, "framework-store", labels)
    return list(health_report(replay(scenario, origins=[[x] for x in labels])).findings)


def gr_mem_view(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The conversation replayed through the engine from empty; the rows and the event tally.

    Duplicates (MEM-1, MEM-2) are dropped, open calls healed at the next user
    turn (MEM-3), a late result replaces its placeholder (MEM-10). Empty user
    turns are kept (a repair never drops what the framework wrote as a turn
    only because GR-MEM would not count it): they are re-inserted in place.
    """
    buf = Buffer()
    tally: dict[str, int] = {}
    for row in rows:
        result = buf.append(row)
        kinds = result.tally()
        if kinds.get("pure_read"):
            buf._push([row, (), None, False, 0])  # kept as it was, not as GR-MEM would
            kinds.pop("pure_read")
            kinds["appended"] = kinds.get("appended", 0) + 1
        for k, n in kinds.items():
            tally[k] = tally.get(k, 0) + n
    tally.pop("appended", None)
    return buf.messages(), tally


def rows_scenario(rows: Sequence[dict[str, Any]], name: str, labels: Sequence[str]) -> Scenario:
    """A conversation as a scenario: one append per stored row, labelled with where it is."""
    return Scenario(
        name=name,
        title=f"{name} (one append per stored row)",
        config=ScenarioConfig(),
        context={"session_id": "framework-store"},
        steps=[
            ScenarioStep(label=label, append=dict(row))
            for row, label in zip(rows, labels, strict=True)
        ],
    )


def connect(path: Path, writable: bool, **kwargs: Any) -> sqlite3.Connection:
    """The file, read-only unless ``writable``; never created.

    Read-only is :func:`~flowdrop_core.storage._readonly.open_readonly`: no byte
    of the file or its ``-wal``/``-shm`` changes and no file appears beside it,
    whatever state a framework left the folder in.
    """
    if not path.is_file():
        raise FrameworkStoreError(f"{path}: no such file")
    kwargs.setdefault("timeout", 5.0)
    try:
        if not writable:
            return open_readonly(path, **kwargs)[0]
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, **kwargs)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise FrameworkStoreError(f"{path}: not a SQLite database ({exc})") from exc
    return conn


def tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Each table's column names."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: {r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')} for n in names}


def backup_file(conn: sqlite3.Connection, path: Path) -> Path:
    """Copy the database (consistently, WAL included) next to ``path`` before a repair."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bak-{stamp}-{n}")
    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    if not target.is_file():  # pragma: no cover - sqlite creates it or raises
        shutil.copy2(path, target)
    return target


def restore_file(conn: sqlite3.Connection, backup: Path) -> None:
    """Put the backup's content back into the open database (SQLite's online backup)."""
    source = sqlite3.connect(f"{backup.resolve().as_uri()}?mode=ro", uri=True)
    try:
        source.backup(conn)
    finally:
        source.close()


def read_back(conn: sqlite3.Connection, path: Path, backup: Path, check: Callable[[], str]) -> str:
    """Run a read-back ``check``; if the framework's reader fails on the file, restore the backup.

    ``check`` restores and raises :class:`FrameworkStoreError` itself when what
    it reads differs from the plan; any other error there is a reader that
    cannot load the written file, so the backup is put back too.
    """
    try:
        return check()
    except FrameworkStoreError:
        raise
    except Exception as exc:
        restore_file(conn, backup)
        raise FrameworkStoreError(
            f"{path}: the framework's reader failed on the repaired file "
            f"({type(exc).__name__}: {exc}); the backup {backup} was restored"
        ) from exc


def scratch_copy(conn: sqlite3.Connection, folder: Path) -> Path:
    """A copy of the open database in ``folder``, for a framework reader that writes as it opens."""
    target = folder / "readback.sqlite"
    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    return target


def require_writable(store: Any, what: str) -> None:
    """Refuse a write on a store opened read-only (the write switch is off)."""
    if not store.writable:
        raise ReadOnlyError(
            f"{store.path}: opened read-only; {what} needs the write switch "
            "(writable=True, --write, or Allow writes on the Store page)"
        )


def open_tier(writable: bool, tier: Tier | str | None) -> tuple[bool, Tier]:
    """Whether to open the file writable, and the tier: ``writable`` alone is ``drive``
    (which repairs nothing), ``tier="admin"`` opens it writable for a repair."""
    have = as_tier(tier) if tier is not None else (Tier.DRIVE if writable else Tier.VIEW)
    return writable or have is Tier.ADMIN, have


#: The file beside a repaired file that records every repair (MEM-15), one JSON line each.
REPAIR_LOG_SUFFIX = ".flowdrop-repairs.jsonl"


def repair_log(path: Path | str) -> Path:
    """Where a repair of ``path`` is recorded: beside a file; for a store on a server (a
    masked URL), ``server-repairs.jsonl`` in the user's state folder (``$XDG_STATE_HOME``,
    else ``~/.local/state``, then ``flowdrop/``), since nothing is added to the
    framework's database."""
    if isinstance(path, Path):
        return path.with_name(path.name + REPAIR_LOG_SUFFIX)
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(state) / "flowdrop" / "server-repairs.jsonl"


def record_repair(store: Any, report: RepairReport) -> RepairReport:
    """Append one JSON line for a repair that wrote rows to :func:`repair_log`
    (``<file>.flowdrop-repairs.jsonl`` beside a file).

    MEM-15: a change other than an append is recorded. The line holds when,
    the thread, the tier, the backup, the entry counts, the events and every
    changed row as the plan named it; the report then names the log.
    """
    if not report.changes:
        return report
    log = repair_log(store.path)
    log.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "file": os.fspath(store.path),
        "kind": store.kind,
        "thread": report.thread_id,
        "tier": str(store.tier),
        "backup": None if report.backup is None else os.fspath(report.backup),
        "before": report.before,
        "after": report.after,
        "events": report.events,
        "changes": [str(c) for c in report.changes],
    }
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, ensure_ascii=False, default=repr) + "\n")
    report.record = log
    return report


def finish_repair(
    store: Any, thread_id: str, plan: RepairPlan, backup: Path | None, readback: str
) -> RepairReport:
    """The report of a repair that wrote ``plan``, with what is left, recorded (MEM-15).

    Every kind of store ends a repair the same way: the thread's health read
    again, then :func:`record_repair`.
    """
    return record_repair(
        store,
        RepairReport(
            thread_id=thread_id,
            backup=backup,
            before=plan.before,
            after=plan.after,
            events=plan.events,
            remaining=health(store.rows(thread_id)),
            changes=plan.changes,
            readback=readback,
        ),
    )


def settle_repair(
    store: Any, thread_id: str, plan: RepairPlan | None
) -> tuple[RepairPlan, RepairReport | None]:
    """The plan a repair carries out, or its report when there is nothing to write.

    Every kind of file starts a repair the same way (MEM-15: an administrative
    act that changes only what it reports): the store must have been opened
    at the admin tier (:class:`~flowdrop_core.tiers.TierDenied` otherwise,
    before anything is read for it) and writable, a refused plan raises
    before any change, and an empty plan writes nothing, not even a backup.
    """
    require_tier(getattr(store, "tier", Tier.VIEW), Tier.ADMIN, f"a repair of {thread_id!r}")
    require_writable(store, "a repair")
    if plan is None:
        plan = store.plan_repair(thread_id)
    if plan.refused:
        raise FrameworkStoreError(f"{store.path}: repair of {thread_id!r} refused: {plan.refused}")
    if plan.changes:
        return plan, None
    report = RepairReport(
        thread_id,
        None,
        plan.before,
        plan.after,
        plan.events,
        remaining=health(store.rows(thread_id)),
    )
    return plan, report
