"""The conversation buffer as a runtime uses it: scope, storage and serialized appends.

:class:`ConversationBuffer` wires the pure engine (:func:`append_messages`) to
a scope (resolved only through :func:`resolve_scope`) and a :class:`Store`:

1. Resolve the scope (MEM-6, MEM-8, MEM-13). A refused identity scope stops
   here (MEM-7): no backend call at all, an empty result, one warning.
2. Take the slot lock (MEM-12), bounded by ``lock_timeout``. Past the bound
   the append runs unserialized, with a warning and an ``unserialized``
   event; it never raises for that and never drops the turn.
3. Read the slot (or reuse the live cache), run the engine (which
   validates every incoming message before doing anything), turn its events
   into a delta (:func:`~flowdrop_core.storage.delta_from_events`) and write
   only that, conditionally on the revision read (``Store.apply``, compare
   and set). A call that changed nothing writes nothing. On a conflict the
   slot is read again and the messages applied again, so the report is what
   was stored; the unserialized path uses the same conditional write, so it
   never overwrites another turn.

On a store that runs the read-modify-write itself
(:class:`~flowdrop_core.storage.LiveStore`: the memory store), an append
that is not journaled is steps 2 and 3 in one: ``apply_live`` runs the
engine on the slot's live engine buffer under the store's own guard, which
every other read and write of the store takes too (MEM-12), and keeps it
there; no second copy, no delta, no conditional write. While anyone holds
the slot lock it is not run, and the append takes the lock as above.

The live cache: an append keeps the slot's engine :class:`Buffer` (with its
indexes) next to the revision its write returned, and the next append to
that slot appends to it without asking the store: the conditional write is
the check. Any other write (another instance, another process, a direct
``store.set``) changes the revision, so that write conflicts and the append
re-reads the store. The result's ``messages`` (the whole buffer) is built
only when read, from the list the cache was read from plus the ops since.
Entries are shared between the store, the cache and results, and are
immutable by contract (see :mod:`flowdrop_core.storage`).

:func:`read_memory` is the MEM-7 / MEM-13 read of a plain memory value.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from flowdrop_core._results import LazyValue, PlainResult
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
from flowdrop_core.journal._recorder import recorder as journal_recorder
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import (
    Delta,
    LiveValue,
    MemoryStore,
    Op,
    RevisionConflict,
    Slot,
    Snapshot,
    StorageError,
    Store,
    StoreBusyError,
    apply_ops,
    delta_from_events,
    slot_label,
)
from flowdrop_core.storage._aio import run_in_store
from flowdrop_core.storage._base import LockUnavailable, fork_generation
from flowdrop_core.storage._steps import (
    APPLY,
    JOURNAL_LAST,
    LOCK,
    READ,
    REVISION,
    Steps,
    adrive,
    drive,
    native_async,
)
from flowdrop_core.tiers import Tier, as_tier, require_tier

__all__ = [
    "ConversationBuffer",
    "MemoryReadResult",
    "ScopedAppendResult",
    "read_memory",
]

#: Every warning of this module (refusals, unserialized appends) goes here.
logger = logging.getLogger("flowdrop_core")

ContextLike = ExecutionContext | Mapping[str, Any] | None


def _evict(cache: dict[Slot, Any], keep: int, guard: threading.Lock) -> None:
    """Drop the least recently written entries of ``cache`` past ``keep``.

    The oldest keys are copied first (``list`` of a dict is one C call): a put
    from another thread (one unguarded assignment) may land meanwhile, and
    ``next(iter(cache))`` would then raise "dictionary changed size during
    iteration" (seen with 100 sessions on the async executor's threads).
    """
    with guard:
        excess = len(cache) - keep
        if excess > 0:
            for victim in list(cache)[:excess]:
                cache.pop(victim, None)


class ScopedAppendResult(AppendResult):
    """An :class:`AppendResult` (MEM-14) plus where it happened.

    ``refused`` is True when the identity scope refused (MEM-7); then the
    buffer is empty, ``resolved_scope_id`` is ``""`` and ``refusal_reason``
    says why. ``serialized`` is False when the slot lock was not acquired in
    time and the append ran unserialized (MEM-12). ``messages`` (the whole
    buffer after the append) is built the first time it is read.
    """

    __slots__ = (
        "key",
        "refusal_reason",
        "refused",
        "resolved_scope_id",
        "scope",
        "serialized",
    )

    FIELDS: ClassVar[tuple[str, ...]] = (
        *AppendResult.FIELDS,
        "scope",
        "key",
        "resolved_scope_id",
        "refused",
        "refusal_reason",
        "serialized",
    )

    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool
    refusal_reason: str | None
    serialized: bool

    def __init__(
        self,
        *,
        count: int,
        appended: int,
        appended_any: bool | None = None,
        messages: list[dict[str, Any]] | None = None,
        events: Iterable[Event] = (),
        max_messages: int = 0,
        scope: Scope | str,
        key: str,
        resolved_scope_id: str,
        refused: bool = False,
        refusal_reason: str | None = None,
        serialized: bool = True,
    ) -> None:
        super().__init__(
            count=count,
            appended=appended,
            appended_any=appended_any,
            messages=list(messages) if type(messages) is tuple else messages,
            events=events,
            max_messages=max_messages,
        )
        self.scope = as_scope(scope)
        self.key = key
        self.resolved_scope_id = resolved_scope_id
        self.refused = refused
        self.refusal_reason = refusal_reason
        self.serialized = serialized

    @property
    def messages(self) -> list[dict[str, Any]] | None:
        """The buffer after the append, built the first time it is read.

        The live-store append leaves it as a plain tuple ``(base, log,
        upto)``, read as :class:`_LazyMessages` is (a tuple costs less to
        make); a tuple assigned from outside is kept as a list, so a tuple
        here is always the layer's.
        """
        value = self._messages
        if type(value) is tuple:
            value = self._messages = _LazyMessages.get(value)  # type: ignore[arg-type]
        elif isinstance(value, LazyValue):
            value = self._messages = value.get()
        return value

    @messages.setter
    def messages(self, value: list[dict[str, Any]] | None) -> None:
        self._messages = list(value) if type(value) is tuple else value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: :meth:`AppendResult.to_dict` plus the slot and the flags."""
        out = super().to_dict()
        out["scope"] = str(self.scope)
        out["key"] = self.key
        out["resolved_scope_id"] = self.resolved_scope_id
        out["refused"] = self.refused
        out["refusal_reason"] = self.refusal_reason
        out["serialized"] = self.serialized
        return out


class _LazyMessages(tuple, LazyValue):  # type: ignore[type-arg]
    """The buffer after an append, built only when read: a base list plus the ops since.

    ``(base, log, upto)``: ``base`` is a list the conversation buffer never
    changes (what it read from the store, or a later copy) and ``log`` the ops
    of the appends made since, in order (an entry appended at the end is
    logged as the entry itself: no op tuple on the usual append); this result's buffer is ``base``
    with the first ``upto`` ops applied. Later appends only add ops to ``log``
    (or start a new base), so a kept result keeps its own buffer and nothing
    is copied per append. A tuple, so making one per append costs no
    ``__init__``; the result keeps what :meth:`get` returns.
    """

    __slots__ = ()

    def get(self) -> list[dict[str, Any]]:
        """The entries (O(base + ops)); an entry itself in the log was appended at the end."""
        base, log, upto = self
        entries = list(base)
        for op in log[:upto]:
            if type(op) is dict:
                entries.append(op)
            else:
                apply_ops(entries, (op,))
        return entries


_new_lazy = tuple.__new__
_new_tuple = tuple.__new__

#: Value types a context memo may compare by identity: immutable, so the same
#: object means the same value (an equal value of another type, ``True`` for
#: ``1``, is another object and resolves afresh).
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
_MISSING = object()


class _ScopedBuffer(Buffer):
    """The engine buffer of a slot: its appends make :class:`ScopedAppendResult` directly."""

    __slots__ = ()
    _result_type = ScopedAppendResult


def _checked_entries(value: Any, slot: Slot) -> list[dict[str, Any]]:
    """A stored buffer as a list of entries; anything but a list of objects is a StorageError."""
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        bad = (
            type(value).__name__
            if not isinstance(value, list)
            else next(
                f"entry {n} is {type(e).__name__}"
                for n, e in enumerate(value)
                if not isinstance(e, dict)
            )
        )
        raise StorageError.for_slot(
            f"stored value is not a conversation buffer (a list of message objects): {bad}",
            slot,
        )
    return value


class _LiveSlot(LiveValue):
    """A slot's buffer as a live store keeps it for the appends: the engine buffer, base and log.

    ``buf`` is the slot's engine :class:`Buffer` (with its indexes); ``base``
    and ``log`` are what the results' lazy ``messages`` are built from (see
    :class:`_LazyMessages`).
    """

    __slots__ = ("base", "buf", "log")

    def __init__(self, buf: Buffer, base: list[dict[str, Any]]) -> None:
        self.buf = buf
        self.base = base
        self.log: list[Op | dict[str, Any]] = []  # an entry itself: appended at the end

    def entries(self) -> list[dict[str, Any]]:
        """The entries, oldest first (a new list of the stored dicts)."""
        return self.buf.messages()

    def __len__(self) -> int:
        return len(self.buf)


class _Cached:
    """A cached slot: its revision and the live engine buffer whose entries are its value then.

    ``base`` and ``log`` are what the results' lazy ``messages`` are built
    from (see :class:`_LazyMessages`). An append takes the record out of the
    cache, changes it, and puts the same record back.
    """

    __slots__ = ("base", "buf", "journal_last", "log", "revision")

    def __init__(
        self, revision: str | None, buf: Buffer, base: list[dict[str, Any]], log: list[Op]
    ) -> None:
        self.revision = revision
        self.buf = buf
        self.base = base
        self.log = log
        #: The journal's last record number after this buffer's last write (None: unknown).
        self.journal_last: int | None = None


class _Memo:
    """The last context an append saw and what it resolved to (replaced whole, never changed).

    ``key`` is the context itself (``None`` or an :class:`ExecutionContext`)
    or, for a dict, its items.
    """

    __slots__ = ("ctx", "key", "open_slot", "res", "slot")

    def __init__(
        self, key: Any, ctx: ExecutionContext | None, res: ScopeResolution, slot: Slot
    ) -> None:
        self.key = key
        self.ctx = ctx
        self.res = res
        self.slot = slot
        self.open_slot = None if res.refused else slot  # the slot, unless the scope refused


class _LiveHook:
    """A store and its ``apply_live`` (``None``: not a LiveStore), looked up once per store."""

    __slots__ = ("apply", "store")

    def __init__(self, store: Any, apply: Any) -> None:
        self.store = store
        self.apply = apply


#: Conditional writes that may find the slot changed before an append gives up.
_MAX_CONFLICTS = 1000

#: Seconds without any commit, at the least, before a busy store counts as stalled (MEM-12).
STALL_FLOOR = 2.0


class MemoryReadResult(PlainResult):
    """A memory read (MEM-7, MEM-13): a refused scope yields the default, ``found=False``.

    Frozen: a read is a fact about the store at one moment.
    """

    __slots__ = ("found", "key", "refusal_reason", "refused", "resolved_scope_id", "scope", "value")

    FIELDS: ClassVar[tuple[str, ...]] = (
        "value",
        "found",
        "scope",
        "key",
        "resolved_scope_id",
        "refused",
        "refusal_reason",
    )

    value: Any
    found: bool
    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool
    refusal_reason: str | None

    def __init__(
        self,
        *,
        value: Any = None,
        found: bool,
        scope: Scope | str,
        key: str,
        resolved_scope_id: str,
        refused: bool = False,
        refusal_reason: str | None = None,
    ) -> None:
        for name, field in (
            ("value", value),
            ("found", found),
            ("scope", as_scope(scope)),
            ("key", key),
            ("resolved_scope_id", resolved_scope_id),
            ("refused", refused),
            ("refusal_reason", refusal_reason),
        ):
            object.__setattr__(self, name, field)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"MemoryReadResult is frozen: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"MemoryReadResult is frozen: cannot delete {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``value`` as stored: JSON-ready when the store holds JSON)."""
        out = self.fields()
        out["scope"] = str(self.scope)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryReadResult:
        """A read result from :meth:`to_dict` (validated; a bad field is a ``ValueError``)."""
        from flowdrop_core._result_schema import read_result

        return cls(**read_result(cls, data))


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
    :class:`MemoryStore`; ``lock_timeout`` bounds the MEM-12 wait in seconds,
    both for the slot lock and for the store's own write lock. Besides its
    configuration the object holds a live cache of the buffers of the
    ``cache_slots`` slots it wrote most recently (see the module docstring;
    0 disables it), guarded by a lock, so one instance may be shared by any
    number of threads. ``journal`` > 0 records every append in the store's
    journal (see :mod:`flowdrop_core.journal`), keeping that many per slot.
    ``tier`` is what the holder may do (:mod:`flowdrop_core.tiers`): ``view``
    reads only (MEM-9), ``drive`` (the default) also appends, and ``admin``
    may also clear a slot (MEM-15); a denied call raises
    :class:`~flowdrop_core.tiers.TierDenied` before any storage access.
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
        tier: Tier | str = Tier.DRIVE,
    ) -> None:
        self.scope = as_scope(scope)
        self._tier = as_tier(tier)
        self._drives = self._tier >= Tier.DRIVE  # read on every append: one attribute
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
        # The last context seen and what it resolved to. Replaced whole, so
        # threads sharing the buffer read a consistent record.
        self._memo: _Memo | None = None
        self._live = _LiveHook(None, None)
        self._step = self._live_step  # bound once: a live store calls it on every append
        self._reset_cache()

    @property
    def tier(self) -> Tier:
        """What the holder may do; fixed at construction (MEM-15: nothing raises it later)."""
        return self._tier

    def _reset_cache(self) -> None:
        # slot -> its cached record; a Buffer is only mutated after being taken out.
        self._cache: dict[Slot, _Cached] = {}
        self._cache_guard = threading.Lock()
        self._cache_pid = fork_generation()

    def _cache_take(self, slot: Slot) -> _Cached | None:
        """Remove and return the slot's cache entry (a fork starts with an empty cache)."""
        if self._cache_pid != fork_generation():
            self._reset_cache()
        with self._cache_guard:
            return self._cache.pop(slot, None)

    def _cache_put(self, slot: Slot, entry: _Cached) -> None:
        """Cache a slot's live buffer at its revision, dropping the least recently written.

        Putting an entry back is one dict assignment (atomic), so it needs the
        guard only to drop old entries: the guard keeps a reader
        (:meth:`_cached_at`) from seeing a buffer while it is changed,
        and a buffer put back is no longer changed.
        """
        if (
            type(entry.revision) is str
            and self.cache_slots
            and self._cache_pid == fork_generation()
        ):
            cache = self._cache
            cache[slot] = entry  # taken out before, so now the newest
            if len(cache) > self.cache_slots:
                _evict(cache, self.cache_slots, self._cache_guard)

    def __repr__(self) -> str:
        return (
            f"ConversationBuffer(scope={self.scope.value!r}, key={self.key!r}, "
            f"max_messages={self.max_messages}, store={self.store!r})"
        )

    # -- helpers ---------------------------------------------------------------------------

    def _snapshot(self, slot: Slot) -> tuple[list[dict[str, Any]], str | None]:
        """Read the slot's buffer and revision; anything but a list of objects is a StorageError."""
        value, found, revision = self.store.read(*slot)
        if not found:
            return [], revision
        return _checked_entries(value, slot), revision

    def _live_step(
        self, slot: Slot, value: Any, messages: Any
    ) -> tuple[_LiveSlot, ScopedAppendResult, bool]:
        """One append as a live store's read-modify-write (see ``LiveStore.apply_live``).

        ``value`` is the slot as stored: the live buffer of an earlier append
        (used as it is when its window is this buffer's), a plain buffer, or
        None. The engine validates every message before changing anything,
        so a bad one raises with the slot untouched.
        """
        live = value
        if type(value) is not _LiveSlot or (buf := value.buf).max_messages != self.max_messages:
            if value is None:
                entries: list[dict[str, Any]] = []
            elif type(value) is _LiveSlot:
                entries = value.entries()
            else:
                entries = _checked_entries(list(value) if type(value) is deque else value, slot)
            live = _LiveSlot(self._build(slot, entries), entries)
            buf = live.buf
        result: ScopedAppendResult = buf.append(messages)  # type: ignore[assignment]
        log = live.log
        entry = result.appended_at_end()
        if entry is not None:  # the usual append: one message appended at the end
            log.append(entry)  # logged as the entry itself (see _LazyMessages)
            changed = True
        else:
            ops = delta_from_events(result.decisions(), result.count).ops  # type: ignore[arg-type]
            log.extend(ops)
            changed = bool(ops)
        upto = len(log)
        # built when read (see ScopedAppendResult.messages)
        result._messages = (live.base, log, upto)  # type: ignore[assignment]
        if upto > 2 * result.count and upto > 64:  # a new base: O(1) amortized
            live.base, live.log = buf.messages(), []
        return live, result, changed

    def _load(self, scope_id: str) -> list[dict[str, Any]]:
        """Read the slot's buffer (see :meth:`_snapshot`)."""
        return self._snapshot((str(self.scope), scope_id, self.key))[0]

    def _build(self, slot: Slot, entries: list[dict[str, Any]]) -> Buffer:
        """The engine buffer of stored entries; a bad stored entry names the slot."""
        try:
            return _ScopedBuffer(entries, self.max_messages)
        except InvalidMessagesError as exc:
            raise StorageError.for_slot(
                f"the stored buffer holds a bad entry ({exc}); the incoming messages were not "
                "appended",
                slot,
            ) from exc

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
        released on every path. The result's ``messages`` (the whole buffer
        after the append) is built only when read.
        """
        if not self._drives:
            require_tier(self.tier, Tier.DRIVE, "append")  # MEM-9: viewing is not driving
        memo = self._memo  # the usual case, inline: the same context as last time
        if memo is not None and type(context) is dict:
            key = memo.key
            if type(key) is tuple and len(key) == len(context):
                for name, value in key:
                    if context.get(name, _MISSING) is not value:
                        break
                else:
                    live = self._live
                    slot = memo.open_slot
                    # The usual append on a live store (see _append_at), inline: one call fewer.
                    if (
                        slot is not None
                        and live.apply is not None
                        and live.store is self.store
                        and not self.journal
                    ):
                        res = memo.res
                        done: ScopedAppendResult | None = live.apply(
                            slot[0], slot[1], slot[2], self._step, messages
                        )
                        if done is not None:
                            done.scope = res.scope
                            done.key = self.key
                            done.resolved_scope_id = res.resolved_scope_id
                            done.refused = False
                            done.refusal_reason = None
                            done.serialized = True
                            return done
                    return self._append_at(messages, memo.res, memo.ctx, memo.slot)
        ctx, res, slot = self._resolved(context)
        return self._append_at(messages, res, ctx, slot)

    def _resolved(
        self, context: ContextLike
    ) -> tuple[ExecutionContext | None, ScopeResolution, Slot]:
        """``context`` validated and resolved (MEM-6, MEM-8, MEM-13), and its slot.

        The last answer is kept: a runtime appends under the same context turn
        after turn, so validating and resolving it again would be most of the
        cost of an append. It is reused only for the same context: the same
        :class:`ExecutionContext` (frozen), the same ``None``, or a dict
        holding the same keys with the very same immutable value objects.
        """
        memo = self._memo
        if memo is not None:
            key = memo.key
            if type(context) is dict:
                if type(key) is tuple and len(key) == len(context):
                    for name, value in key:
                        if context.get(name, _MISSING) is not value:
                            break
                    else:
                        return memo.ctx, memo.res, memo.slot
            elif context is key and (context is None or type(context) is ExecutionContext):
                return memo.ctx, memo.res, memo.slot
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        slot: Slot = (str(self.scope), res.resolved_scope_id, self.key)
        if type(context) is dict:
            if all(type(v) in _IMMUTABLE for v in context.values()):
                self._memo = _Memo(tuple(context.items()), ctx, res, slot)
        elif context is None or type(context) is ExecutionContext:
            self._memo = _Memo(context, ctx, res, slot)
        return ctx, res, slot

    def append_resolved(
        self, messages: Any, res: ScopeResolution, ctx: ExecutionContext | None = None
    ) -> ScopedAppendResult:
        """:meth:`append` for a caller that already resolved this buffer's scope (:meth:`resolve`).

        The replay timeline resolves each step once and passes it here.
        """
        if not self._drives:
            require_tier(self.tier, Tier.DRIVE, "append")  # MEM-9: viewing is not driving
        memo = self._memo
        if memo is not None and memo.res is res:
            slot = memo.slot
        else:
            slot = (str(self.scope), res.resolved_scope_id, self.key)
        return self._append_at(messages, res, ctx, slot)

    def _append_at(
        self, messages: Any, res: ScopeResolution, ctx: ExecutionContext | None, slot: Slot
    ) -> ScopedAppendResult:
        """The append: MEM-7 refusal, else the MEM-12 lock around a conditional write.

        Read (or reuse the live cache), append, and write the change
        conditionally on the revision read. MEM-12: the write is a compare and
        set. When another writer got there first (:class:`RevisionConflict`)
        the slot is read again and the incoming messages applied again, so the
        result describes what was stored. A write the store could not start
        within ``lock_timeout`` (:class:`StoreBusyError`) is tried again at
        once when other writers committed meanwhile (contention: the store is
        moving); when nothing was committed, it is tried again until nothing
        has moved for ``2 * lock_timeout`` and at least :data:`STALL_FLOOR`
        seconds (a scheduling pause on a loaded machine is not a stall), and
        then the error is raised: nothing was written, and the caller is told.
        A cached buffer is taken out of the cache before anything can fail,
        and put back only after the store accepted the write, so an exception
        never leaves the cache ahead of or behind the store.

        One method, because this is the runtime's hot path
        (``benchmarks/layers_bench.py``): the usual append (a cached buffer,
        one appended message, one conditional write) makes no call besides
        the lock, the engine and the store's write.
        """
        if res.refused:
            return self._refused("append", res, ctx)
        store = self.store
        if not self.journal:  # a store that runs the read-modify-write itself (LiveStore)
            live = self._live
            if live.store is not store:  # the store changed: look again
                live = self._live = _LiveHook(store, getattr(store, "apply_live", None))
            if live.apply is not None:
                done: ScopedAppendResult | None = live.apply(*slot, self._step, messages)
                if done is not None:
                    done.scope = res.scope
                    done.key = self.key
                    done.resolved_scope_id = res.resolved_scope_id
                    done.refused = False
                    done.refusal_reason = None
                    done.serialized = True
                    return done
                # someone holds the slot lock: wait for it below, as with any store
        return drive(store, self._append_steps(messages, res, ctx, slot))

    def _append_steps(
        self, messages: Any, res: ScopeResolution, ctx: ExecutionContext | None, slot: Slot
    ) -> Steps:
        """The append under the MEM-12 lock, as store steps a sync or async driver runs.

        What :meth:`_append_at` says, after the refusal and the live store:
        the lock, the read (or the cached buffer), the engine, the
        conditional write and its retries. It does no I/O itself: each store
        call is yielded (:mod:`flowdrop_core.storage._steps`), so
        :meth:`append` and :meth:`aappend` run the very same rules.
        """
        acquired = yield (LOCK, slot, self.lock_timeout)
        if not acquired:
            self._warn_unserialized(slot, ctx)
        conflicts = 0
        still_since: float | None = None  # when the store was last seen not moving
        generation = fork_generation()
        cache = self._cache
        while True:
            # The slot's cached record (see _current); a cached one inline, the usual case.
            cached = None
            if self._cache_pid == generation:
                with self._cache_guard:
                    cached = cache.pop(slot, None)
            if cached is not None and cached.buf.max_messages == self.max_messages:
                fresh = False
            else:
                cached = self._cache_take(slot)
                if cached is not None and cached.buf.max_messages == self.max_messages:
                    fresh = False
                else:
                    cached, fresh = self._record(slot, (yield (READ, slot))), True
                cache = self._cache  # a fork starts a new one
            buf = cached.buf
            token = cached.revision
            rec = None
            if self.journal:
                # The journal's last record number as this writer's own write left it, or
                # asked: a record another writer added meanwhile makes the write's number
                # not follow, a JournalConflict, and the retry asks (MEM-12 as for entries).
                last = cached.journal_last
                if fresh or last is None:
                    last = yield (JOURNAL_LAST, slot)
                rec = journal_recorder(self.journal, slot, buf, token, last)
            # validates first: raises with ``buf`` unchanged; a _ScopedBuffer's result
            result: ScopedAppendResult = buf.append(messages)  # type: ignore[assignment]
            added = result.appended_at_end()
            if added is not None:  # the usual append: one message appended at the end
                # delta_from_events' answer for it, made inline
                op = _new_tuple(Op, ("insert", result.count - 1, added))
                delta = _new_tuple(Delta, ((op,), result.count))
            else:
                delta = delta_from_events(result.decisions(), result.count)  # type: ignore[arg-type]
            if not delta.ops and rec is None:  # a call that changed nothing writes nothing
                if not fresh and (yield (REVISION, slot)) != token:
                    continue  # the cached copy is stale: read again, run again
                self._cache_put(slot, cached)
                lazy = _new_lazy(_LazyMessages, (cached.base, cached.log, len(cached.log)))
                break
            try:
                written = (
                    None
                    if rec is None  # the journal record goes in with the change, or neither
                    else rec.entry(
                        messages, ctx, result, changed=bool(delta.ops), serialized=acquired
                    )
                )
                token = yield (APPLY, slot, delta, token, self.lock_timeout, written)
            except LockUnavailable:  # a lock taken with the write was held elsewhere (MEM-12)
                acquired = False
                self._warn_unserialized(slot, ctx)
                continue
            except RevisionConflict:
                conflicts += 1
                if conflicts >= _MAX_CONFLICTS:
                    raise StorageError.for_slot(
                        f"{_MAX_CONFLICTS} conditional writes found the slot changed by "
                        "another writer; nothing of this append was written",
                        slot,
                    ) from None
                continue
            except StoreBusyError as busy:
                now = time.monotonic()
                if busy.progressed:  # others committed meanwhile: contention, not a stall
                    still_since = None
                    continue
                if still_since is None:
                    still_since = now - self.lock_timeout  # the attempt that just waited
                if now - still_since < max(2 * self.lock_timeout, STALL_FLOOR):
                    continue
                raise
            log = cached.log
            log.extend(delta.ops)
            lazy = _new_lazy(_LazyMessages, (cached.base, log, len(log)))
            if len(log) > 64 and len(log) > 2 * result.count:  # a new base: O(1) amortized
                cached.base, cached.log = buf.messages(), []
            cached.revision = token
            if written is not None:
                cached.journal_last = written.seq
            # Back in the cache (see _cache_put), inline: one dict assignment.
            if type(token) is str and self.cache_slots and self._cache_pid == generation:
                cache[slot] = cached
                if len(cache) > self.cache_slots:
                    _evict(cache, self.cache_slots, self._cache_guard)
            break
        # Where it happened (set here rather than copied: the engine made this result).
        result.scope = res.scope
        result.key = self.key
        result.resolved_scope_id = res.resolved_scope_id
        result.refused = False
        result.refusal_reason = None
        result._messages = lazy
        if acquired:
            result.serialized = True
            return result
        result.serialized = False
        result.events = (Event(kind=EventKind.UNSERIALIZED, rule="MEM-12"), *result.events)
        return result

    def _warn_unserialized(self, slot: Slot, ctx: ExecutionContext | None) -> None:
        logger.warning(
            "MEM-12: lock on slot %s not acquired within %.3g s (node %r); "
            "appending unserialized, with a write conditional on the revision read, "
            "rather than fail or drop the turn.",
            slot_label(*slot),
            self.lock_timeout,
            None if ctx is None else ctx.node_id,
        )

    def _current(self, slot: Slot) -> tuple[_Cached, bool]:
        """The slot's record (revision, engine buffer, lazy-result base and log); whether just read.

        A cached buffer is trusted without asking the store: the conditional
        write tells whether it was still current.
        """
        entry = self._cache_take(slot)
        if entry is not None and entry.buf.max_messages == self.max_messages:
            return entry, False
        return self._record(slot, self.store.read(*slot)), True

    def _record(self, slot: Slot, snap: Snapshot) -> _Cached:
        """The slot's record made from a fresh read (see :meth:`_snapshot`)."""
        value, found, token = snap
        entries = _checked_entries(value, slot) if found else []
        return _Cached(token, self._build(slot, entries), entries, [])

    def read(self, context: ContextLike = None) -> ScopedAppendResult:
        """Read the buffer without appending: the same result shape, ``appended`` 0, no events.

        Under a refused scope the store is not called (MEM-7) and the result
        is the refusal, exactly as for :meth:`append`.
        """
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        if res.refused:
            return self._refused("read", res, ctx)
        return drive(self.store, self._read_steps(res))  # type: ignore[no-any-return]

    def _read_steps(self, res: ScopeResolution) -> Steps:
        """:meth:`read` after the refusal, as store steps (see :meth:`_append_steps`)."""
        slot: Slot = (str(self.scope), res.resolved_scope_id, self.key)
        entries = None
        if self._cache and self._cache_pid == fork_generation():
            token = yield (REVISION, slot)
            entries = self._cached_at(slot, token)
        if entries is None:
            value, found, _ = yield (READ, slot)
            entries = _checked_entries(value, slot) if found else []
        return ScopedAppendResult(
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

    def _cached_at(self, slot: Slot, token: str | None) -> list[dict[str, Any]] | None:
        """The slot's cached entries when the cache holds revision ``token``, else None."""
        if token is None:
            return None
        with self._cache_guard:  # a cached Buffer is never mutated while in the cache
            entry = self._cache.get(slot)
            if entry is None or entry.revision != token:
                return None
            return entry.buf.messages()

    def messages(self, context: ContextLike = None) -> list[dict[str, Any]]:
        """Just the stored entries (``[]`` when empty or refused)."""
        return self.read(context).messages or []

    def clear(self, context: ContextLike = None) -> bool:
        """Empty the slot under the slot lock; return whether it held a buffer.

        Clearing changes stored messages other than by an append, so it needs
        the ``admin`` tier (MEM-15); below it :class:`TierDenied` is raised
        before any storage access. A refused scope touches nothing and
        returns False (with the MEM-7 warning).
        """
        require_tier(self.tier, Tier.ADMIN, "clear")
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

    # -- async API -------------------------------------------------------------------------

    async def aappend(self, messages: Any, context: ContextLike = None) -> ScopedAppendResult:
        """:meth:`append` for async code: the same append, awaited; the loop never blocks on it.

        The scope is resolved here (MEM-6, MEM-7, MEM-8, MEM-13: a refused
        scope returns at once, no store call); the append itself (the MEM-12
        lock, the compare-and-set write, the journal record and the MEM-14
        report) is :meth:`append`'s own steps (:meth:`_append_steps`), awaited
        on the store's native async client where it has one (Redis), else run
        on the store's bounded executor (:mod:`flowdrop_core.storage._aio`),
        so both paths always agree.
        """
        if not self._drives:
            require_tier(self.tier, Tier.DRIVE, "append")  # MEM-9: viewing is not driving
        ctx, res, slot = self._resolved(context)
        if res.refused:
            return self._refused("append", res, ctx)
        store = self.store
        if native_async(store):  # the same steps on the store's async client: no thread
            return await adrive(store, self._append_steps(messages, res, ctx, slot))  # type: ignore[no-any-return]
        return await run_in_store(store, self._append_at, messages, res, ctx, slot)

    async def aread(self, context: ContextLike = None) -> ScopedAppendResult:
        """:meth:`read` for async code (a refused scope answers at once, no store call)."""
        ctx = as_context(context)
        res = resolve_scope(self.scope, ctx)
        if res.refused:
            return self._refused("read", res, ctx)
        store = self.store
        if native_async(store):
            return await adrive(store, self._read_steps(res))  # type: ignore[no-any-return]
        return await run_in_store(store, self.read, ctx)

    async def amessages(self, context: ContextLike = None) -> list[dict[str, Any]]:
        """:meth:`messages` for async code."""
        return (await self.aread(context)).messages or []

    async def aclear(self, context: ContextLike = None) -> bool:
        """:meth:`clear` for async code (the ``admin`` tier only, MEM-15)."""
        require_tier(self.tier, Tier.ADMIN, "clear")
        ctx = as_context(context)
        if resolve_scope(self.scope, ctx).refused:
            return self.clear(ctx)  # the refusal: a warning, no store call
        return await run_in_store(self.store, self.clear, ctx)
