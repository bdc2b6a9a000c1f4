"""The conversation buffer as a runtime uses it: scope, storage and serialized appends.

:class:`ConversationBuffer` wires the pure engine (:func:`append_messages`) to
a scope (resolved only through :func:`resolve_scope`) and a :class:`Store`:

1. Resolve the scope (MEM-6, MEM-8, MEM-13). A refused identity scope stops
   here (MEM-7): no backend call at all, an empty result, one warning.
2. Take the slot lock (MEM-12), bounded by ``lock_timeout``. Past the bound
   the append runs unserialized, with a warning and an ``unserialized``
   event; it never raises for that and never drops the turn.
3. Read the slot, run the engine (which validates every incoming message
   before doing anything), and write the slot back only when the buffer
   changed: a call that appended nothing writes nothing.

The live cache: a serialized append keeps the slot's engine :class:`Buffer`
(with its indexes) next to the revision token its write returned. The next
serialized append to that slot asks the store for the slot's revision (O(1),
no decoding) and, when it is still that token, appends to the live buffer
instead of decoding and rebuilding the whole slot, so a replay of N
one-message steps no longer re-reads every entry at every step. Any other
write (another instance, another process, a direct ``store.set``) changes the
token, so the next append re-reads the store; an unserialized append (MEM-12
timeout) never uses the cache. Entries are shared between the store, the
cache and results, and are immutable by contract (see
:mod:`flowdrop_core.storage`).

:func:`read_memory` is the MEM-7 / MEM-13 read of a plain memory value.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from flowdrop_core.context import (
    ExecutionContext,
    Scope,
    ScopeResolution,
    as_context,
    as_scope,
    resolve_scope,
)
from flowdrop_core.engine import AppendResult, Buffer, check_window
from flowdrop_core.events import Event, EventKind
from flowdrop_core.journal.recorder import start as journal_start
from flowdrop_core.storage import MemoryStore, Slot, StorageError, Store, slot_label

__all__ = [
    "ConversationBuffer",
    "MemoryReadResult",
    "ScopedAppendResult",
    "read_memory",
]

#: Every warning of this module (refusals, unserialized appends) goes here.
logger = logging.getLogger("flowdrop_core")

ContextLike = ExecutionContext | Mapping[str, Any] | None


class ScopedAppendResult(AppendResult):
    """An :class:`AppendResult` (MEM-14) plus where it happened.

    ``refused`` is True when the identity scope refused (MEM-7); then the
    buffer is empty, ``resolved_scope_id`` is ``""`` and ``refusal_reason``
    says why. ``serialized`` is False when the slot lock was not acquired in
    time and the append ran unserialized (MEM-12).
    """

    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool = False
    refusal_reason: str | None = None
    serialized: bool = True


class MemoryReadResult(BaseModel):
    """A memory read (MEM-7, MEM-13): a refused scope yields the default, ``found=False``."""

    model_config = ConfigDict(frozen=True)

    value: Any = None
    found: bool
    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool = False
    refusal_reason: str | None = None


def _warn_refused(op: str, key: str, res: ScopeResolution, ctx: ExecutionContext | None) -> None:
    """MEM-7: exactly one warning per refusal, naming node, pipeline and workflow."""
    logger.warning(
        "MEM-7: %s of %r refused in %s scope for node %r in pipeline %r of workflow %r: %s. "
        "Storage was not touched.",
        op,
        key,
        res.scope,
        None if ctx is None else ctx.node_id,
        None if ctx is None else ctx.pipeline_id,
        None if ctx is None else ctx.workflow_id,
        res.reason,
    )


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip():
        raise ValueError(f"memory key must be a non-blank string, got {key!r}")
    return key


def read_memory(
    store: Store,
    scope: Scope | str,
    key: str,
    default: Any = None,
    context: ContextLike = None,
) -> MemoryReadResult:
    """Read one memory value (MEM-7, MEM-13).

    Under a refused identity scope the store is not called: the result is
    ``default`` with ``found=False`` and ``resolved_scope_id=""``, and one
    warning is logged. Otherwise the store's ``(value, found)`` is returned.
    """
    key = _check_key(key)
    ctx = as_context(context)
    res = resolve_scope(scope, ctx)
    if res.refused:
        _warn_refused("read", key, res, ctx)
        return MemoryReadResult(
            value=default,
            found=False,
            scope=res.scope,
            key=key,
            resolved_scope_id="",
            refused=True,
            refusal_reason=res.reason,
        )
    value, found = store.get(str(res.scope), res.resolved_scope_id, key, default)
    return MemoryReadResult(
        value=value,
        found=found,
        scope=res.scope,
        key=key,
        resolved_scope_id=res.resolved_scope_id,
    )


class ConversationBuffer:
    """A scoped, stored, serialized conversation buffer (one node's configuration).

    ``scope`` and ``key`` name the slot together with the resolved scope id;
    ``max_messages`` is the window (0 = no cap); ``store`` defaults to a new
    :class:`MemoryStore`; ``lock_timeout`` bounds the MEM-12 wait in seconds; ``journal`` > 0 records every append in
    the store's journal (see :mod:`flowdrop_core.journal`), keeping that many per slot.
    Besides its configuration the object holds a live cache of the buffers of
    the ``cache_slots`` slots it wrote most recently (see the module
    docstring; 0 disables it), guarded by a lock, so one instance may be
    shared by any number of threads.
    """

    def __init__(
        self,
        scope: Scope | str = Scope.SESSION,
        key: str = "chat_history",
        max_messages: int = 0,
        store: Store | None = None,
        lock_timeout: float = 5.0,
        cache_slots: int = 64,
        journal: int = 0,
    ) -> None:
        self.scope = as_scope(scope)
        self.key = _check_key(key)
        self.max_messages = check_window(max_messages)
        if lock_timeout < 0:
            raise ValueError(f"lock_timeout must be >= 0 seconds, got {lock_timeout!r}")
        self.lock_timeout = float(lock_timeout)
        self.store: Store = MemoryStore() if store is None else store
        if isinstance(cache_slots, bool) or not isinstance(cache_slots, int) or cache_slots < 0:
            raise ValueError(f"cache_slots must be an integer >= 0, got {cache_slots!r}")
        self.cache_slots = cache_slots
        if isinstance(journal, bool) or not isinstance(journal, int) or journal < 0:
            raise ValueError(f"journal must be an integer >= 0 (0 = off), got {journal!r}")
        self.journal = journal  # the append journal keeps this many records per slot; 0: off
        self._reset_cache()

    def _reset_cache(self) -> None:
        # slot -> (revision token, live Buffer whose entries are the slot's value
        # at that revision). A Buffer is only mutated after being taken out.
        self._cache: dict[Slot, tuple[str, Buffer]] = {}
        self._cache_guard = threading.Lock()
        self._cache_pid = os.getpid()

    def _cache_take(self, slot: Slot) -> tuple[str, Buffer] | None:
        """Remove and return the slot's cache entry (a fork starts with an empty cache)."""
        if self._cache_pid != os.getpid():
            self._reset_cache()
        with self._cache_guard:
            return self._cache.pop(slot, None)

    def _cache_put(self, slot: Slot, token: Any, buf: Buffer) -> None:
        """Cache ``buf`` as the slot's value at ``token``, dropping the least recently written."""
        if isinstance(token, str) and self.cache_slots and self._cache_pid == os.getpid():
            with self._cache_guard:
                self._cache[slot] = (token, buf)  # taken out before, so now the newest
                while len(self._cache) > self.cache_slots:
                    del self._cache[next(iter(self._cache))]

    def _revision(self, slot: Slot) -> str | None:
        """The store's revision of ``slot``; ``None`` (no caching) for a store without revisions."""
        revision = getattr(self.store, "revision", None)
        return None if revision is None else revision(*slot)

    def __repr__(self) -> str:
        return (
            f"ConversationBuffer(scope={self.scope.value!r}, key={self.key!r}, "
            f"max_messages={self.max_messages}, store={self.store!r})"
        )

    # -- helpers ---------------------------------------------------------------------------

    def _load(self, scope_id: str) -> list[dict[str, Any]]:
        """Read the slot's buffer; anything but a list of objects is a :class:`StorageError`."""
        value, found = self.store.get(str(self.scope), scope_id, self.key, None)
        if not found:
            return []
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise StorageError(
                f"stored value is not a conversation buffer (a list of message objects), "
                f"got {type(value).__name__}",
                scope=str(self.scope),
                scope_id=scope_id,
                key=self.key,
            )
        return value

    def _scoped(
        self,
        base: AppendResult,
        res: ScopeResolution,
        events: tuple[Event, ...] | None = None,
        serialized: bool = True,
    ) -> ScopedAppendResult:
        return ScopedAppendResult.model_construct(
            count=base.count,
            appended=base.appended,
            appended_any=base.appended_any,
            messages=base.messages,
            events=base.events if events is None else events,
            max_messages=base.max_messages,
            scope=res.scope,
            key=self.key,
            resolved_scope_id=res.resolved_scope_id,
            refused=res.refused,
            refusal_reason=res.reason,
            serialized=serialized,
        )

    def _refused(
        self, op: str, res: ScopeResolution, ctx: ExecutionContext | None
    ) -> ScopedAppendResult:
        """MEM-7 / MEM-14 point 4: empty buffer, count 0, appended 0, one event, one warning."""
        _warn_refused(op, self.key, res, ctx)
        return ScopedAppendResult(
            count=0,
            appended=0,
            appended_any=False,
            messages=[],
            events=(Event(kind=EventKind.REFUSED, rule="MEM-7"),),
            max_messages=self.max_messages,
            scope=res.scope,
            key=self.key,
            resolved_scope_id="",
            refused=True,
            refusal_reason=res.reason,
        )

    def resolve(self, context: ContextLike) -> ScopeResolution:
        """This buffer's scope resolved under ``context`` (no storage access)."""
        return resolve_scope(self.scope, context)

    # -- public API ------------------------------------------------------------------------

    def append(self, messages: Any, context: ContextLike = None) -> ScopedAppendResult:
        """Append one message or a list of messages to the slot ``context`` resolves to.

        Raises :class:`~flowdrop_core.messages.InvalidMessagesError` (nothing
        written) for a malformed message, and :class:`StorageError` when the
        slot holds a corrupt value or the write fails; the slot lock is
        released on every path.
        """
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        if res.refused:
            return self._refused("append", res, ctx)
        scope_id = res.resolved_scope_id
        with self.store.lock(str(self.scope), scope_id, self.key, self.lock_timeout) as acquired:
            if not acquired:
                logger.warning(
                    "MEM-12: lock on slot %s not acquired within %.3g s (node %r); "
                    "appending unserialized rather than fail or drop the turn.",
                    slot_label(str(self.scope), scope_id, self.key),
                    self.lock_timeout,
                    None if ctx is None else ctx.node_id,
                )
            result = self._append_locked(scope_id, messages, cache=acquired, context=ctx)
        if acquired:
            return self._scoped(result, res)
        unserialized = Event(kind=EventKind.UNSERIALIZED, rule="MEM-12")
        return self._scoped(result, res, (unserialized, *result.events), serialized=False)

    def _append_locked(
        self, scope_id: str, messages: Any, cache: bool, context: ExecutionContext | None = None
    ) -> AppendResult:
        """Read (or reuse), append, write when changed; the caller holds the slot lock if ``cache``.

        The cached buffer is taken out of the cache before anything can fail,
        and put back only after the store accepted the write, so an exception
        (invalid message, failed write) never leaves a cache entry ahead of or
        behind the store. Without the lock the cache is neither used nor filled.
        """
        slot: Slot = (str(self.scope), scope_id, self.key)
        buf: Buffer | None = None
        token: str | None = None
        if cache:
            token = self._revision(slot)
            entry = self._cache_take(slot)
            if (
                token is not None
                and entry is not None
                and entry[0] == token
                and entry[1].max_messages == self.max_messages
            ):
                buf = entry[1]
        if buf is None:
            buf = Buffer(self._load(scope_id), self.max_messages)
        recorder = journal_start(self.store, self.journal, slot, buf) if self.journal else None
        result = buf.append(messages)  # validates first: raises with ``buf`` unchanged
        after = buf.messages()
        if result.changed:  # a call that changed nothing writes nothing
            token = self.store.set(*slot, after)
        if recorder is not None:  # the append journal (off by default)
            recorder.finish(messages, context, result, self._revision(slot), serialized=cache)
        if cache:
            self._cache_put(slot, token, buf)
        result.__dict__["messages"] = after  # set once, before anyone sees the result
        return result

    def read(self, context: ContextLike = None) -> ScopedAppendResult:
        """Read the buffer without appending: the same result shape, ``appended`` 0, no events.

        Under a refused scope the store is not called (MEM-7) and the result
        is the refusal, exactly as for :meth:`append`.
        """
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        if res.refused:
            return self._refused("read", res, ctx)
        scope_id = res.resolved_scope_id
        entries = self._cached_messages((str(self.scope), scope_id, self.key))
        if entries is None:
            entries = self._load(scope_id)
        return ScopedAppendResult.model_construct(
            count=len(entries),
            appended=0,
            appended_any=False,
            messages=entries,
            events=(),
            max_messages=self.max_messages,
            scope=res.scope,
            key=self.key,
            resolved_scope_id=res.resolved_scope_id,
            refused=False,
            refusal_reason=None,
            serialized=True,
        )

    def _cached_messages(self, slot: Slot) -> list[dict[str, Any]] | None:
        """The slot's entries from the live cache when it holds the store's revision, else None."""
        if not self._cache or self._cache_pid != os.getpid():
            return None
        token = self._revision(slot)
        if token is None:
            return None
        with self._cache_guard:  # a cached Buffer is never mutated while in the cache
            entry = self._cache.get(slot)
            if entry is None or entry[0] != token:
                return None
            return entry[1].messages()

    def messages(self, context: ContextLike = None) -> list[dict[str, Any]]:
        """Just the stored entries (``[]`` when empty or refused)."""
        return self.read(context).messages or []

    def clear(self, context: ContextLike = None) -> bool:
        """Empty the slot under the slot lock; return whether it held a buffer.

        A refused scope touches nothing and returns False (with the MEM-7 warning).
        """
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        if res.refused:
            self._refused("clear", res, ctx)
            return False
        scope_id = res.resolved_scope_id
        slot: Slot = (str(self.scope), scope_id, self.key)
        with self.store.lock(*slot, self.lock_timeout):
            self._cache_take(slot)
            return self.store.delete(*slot)
