"""GR-MEM for the OpenAI Agents SDK: a ``Session`` backed by a conversation buffer.

The SDK's own sessions store every item they are given: a retried tool
output is stored twice, and from then on every request carries two results
for one call. :class:`GRMemSession` implements the SDK's ``Session``
protocol (``session_id``, ``session_settings``, async ``get_items(limit)``,
``add_items``, ``pop_item``, ``clear_session``) over a
:class:`~flowdrop_core.conversation.ConversationBuffer` on any flowdrop
store (memory, SQLite, Redis, Postgres), so each ``add_items`` is one GR-MEM
append: MEM-1 drops a second output for an answered ``call_id``, MEM-2 a re-sent
call, MEM-3 heals an unanswered call at the next user message and MEM-10
lets the late real output replace the placeholder in place. Appends to one
session are serialized and written compare-and-set (MEM-12), across tasks,
threads, processes and machines sharing the store; ``journal=N`` keeps the
store's append journal for the inspector.

``get_items`` returns what a provider accepts (the MEM-5 view of
:func:`.responses_items.provider_items`: an orphan output left by a
cancelled run is not sent, an open call gets an interrupted output) while
the store keeps what happened (``stored_items``). Every ``add_items``'s
MEM-14 report is kept in :attr:`GRMemSession.reports` (and put on the
current OpenTelemetry span with the ``otel`` extra).

Items round-trip without loss through :mod:`.responses_items`. Store I/O
goes through the buffer's async API (``aappend``, ``aread``: the store's
bounded executor, one worker per pooled connection), so the event loop never
waits on the store and a process holds no more connections than the store's
pool.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from flowdrop_core import telemetry
from flowdrop_core._ids import usable_id
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.integrations import require
from flowdrop_core.integrations._responses_items import (
    items_to_rows,
    provider_items,
    rows_to_items,
)
from flowdrop_core.provider import Finding
from flowdrop_core.storage import Delta, Op, RevisionConflict, Store
from flowdrop_core.storage._aio import run_in_store
from flowdrop_core.tiers import Tier, require_tier

_settings = require("agents.memory.session_settings", "openai-agents")
SessionSettings = _settings.SessionSettings

__all__ = ["GRMemSession"]


class GRMemSession:
    """An Agents SDK session whose history obeys GR-MEM (``Runner.run(..., session=...)``).

    ``store`` defaults to an in-memory store; pass a
    :class:`~flowdrop_core.storage.SQLiteStore` or
    :class:`~flowdrop_core.storage.redis_store.RedisStore` to share it. The
    history lives in the ``session`` scope under ``key``; ``max_messages``
    is the window (0: none) and ``journal`` the number of append records kept
    per session (0: off). :attr:`reports` holds the MEM-14 report of each
    of this object's latest ``keep_reports`` ``add_items`` calls, oldest first
    (:attr:`last_result` the newest); :attr:`last_findings` what the latest
    ``get_items`` repaired. ``tier`` (:mod:`flowdrop_core.tiers`) defaults to
    ``admin``: the SDK's ``pop_item`` and ``clear_session`` are explicit
    edits by the session's owner, which MEM-15 allows at that tier; open it
    at ``drive`` to make them raise ``TierDenied``, or ``view`` to only read.
    """

    def __init__(
        self,
        session_id: str,
        *,
        store: Store | None = None,
        key: str = "agent_items",
        max_messages: int = 0,
        journal: int = 0,
        lock_timeout: float = 5.0,
        session_settings: Any = None,
        keep_reports: int = 100,
        tier: Tier | str = Tier.ADMIN,
    ) -> None:
        if usable_id(session_id) is None:
            raise ValueError(
                f"session_id must be a non-blank id other than '0' (MEM-6), got {session_id!r}"
            )
        self.session_id = session_id
        self.session_settings = (
            _settings.coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.buffer = ConversationBuffer(
            scope="session",
            key=key,
            max_messages=max_messages,
            store=store,
            lock_timeout=lock_timeout,
            journal=journal,
            tier=tier,
        )
        self._context = {"session_id": session_id}
        self.reports: deque[ScopedAppendResult] = deque(maxlen=max(1, keep_reports))
        self._reports_guard = threading.Lock()
        self.last_findings: list[Finding] = []

    @property
    def last_result(self) -> ScopedAppendResult | None:
        """The MEM-14 report of the latest ``add_items`` (``None`` before the first)."""
        return self.reports[-1] if self.reports else None

    @property
    def store(self) -> Store:
        return self.buffer.store

    def rows(self) -> list[dict[str, Any]]:
        """The stored GR-MEM rows of this session (what the inspector shows)."""
        return self.buffer.messages(self._context)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """What a provider accepts (MEM-5), oldest first, over the latest ``limit`` stored items.

        The runner sends these to the model: an output whose call was never
        stored (a run cancelled mid-tool, its output added later) or a second
        output is left out, and a call with no output gets an interrupted one.
        :attr:`last_findings` lists what was repaired; the store is unchanged.
        """
        limit = _settings.resolve_session_limit(limit, self.session_settings)
        rows = await self.buffer.amessages(self._context)
        if limit is not None:
            rows = rows[-limit:] if limit > 0 else []
        items, self.last_findings = provider_items(rows)
        return items

    async def stored_items(self, limit: int | None = None) -> list[Any]:
        """The items as stored (what happened), oldest first; the latest ``limit`` when given."""
        items = rows_to_items(await self.buffer.amessages(self._context))
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    def add_items_sync(self, items: list[Any]) -> ScopedAppendResult:
        """One GR-MEM append of ``items`` (the blocking form of :meth:`add_items`)."""
        rows = items_to_rows(items)  # a malformed item raises here: nothing is written
        return self._reported(self.buffer.append(rows, self._context))

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` under GR-MEM: duplicates dropped, unanswered calls healed."""
        if not items:
            return
        rows = items_to_rows(list(items))  # a malformed item raises here: nothing is written
        self._reported(await self.buffer.aappend(rows, self._context))

    def _reported(self, result: ScopedAppendResult) -> ScopedAppendResult:
        """Keep ``result`` among :attr:`reports` and put it on the current span."""
        with self._reports_guard:
            self.reports.append(result)
        if telemetry.ENABLED:
            telemetry.emit("openai_agents", result)
        return result

    def pop_item_sync(self) -> Any | None:
        """Remove and return the newest item, under the slot lock, written compare-and-set.

        An edit of stored messages: the ``admin`` tier only (MEM-15).
        """
        require_tier(self.buffer.tier, Tier.ADMIN, "pop_item")
        slot = (str(self.buffer.scope), self.session_id, self.buffer.key)
        with self.store.lock(*slot, self.buffer.lock_timeout):
            while True:
                value, found, revision = self.store.read(*slot)
                if not found or not value:
                    return None
                last = value[-1]
                delta = Delta((Op("delete", len(value) - 1, last),), len(value) - 1)
                try:
                    self.store.apply(*slot, delta, expected=revision)
                except RevisionConflict:
                    continue
                items = rows_to_items(value)
                return items[-1] if items else None

    async def pop_item(self) -> Any | None:
        """Remove and return the newest item (``None`` when the session is empty)."""
        return await run_in_store(self.store, self.pop_item_sync)

    async def clear_session(self) -> None:
        """Empty this session's history."""
        await self.buffer.aclear(self._context)

    def __repr__(self) -> str:
        return f"GRMemSession(session_id={self.session_id!r}, buffer={self.buffer!r})"
