"""RedisStore: buffers in a shared Redis, so MEM-12 holds across processes and hosts.

The shared store the Python agent ecosystem keeps chat history in is Redis;
this backend lets the runtime and the inspector use the same one. It follows
the :class:`~flowdrop_core.storage.Store` protocol of the other backends.

Keys (see :func:`slot_keys`). One slot is three keys sharing one prefix,
``<namespace>:<JSON array of scope, scope_id, key>``: the JSON text of a list
of three strings is self-delimiting and has exactly one spelling per triple
(``json.dumps`` escapes quotes, backslashes and control characters such as
NUL), so no two different triples can name one slot, whatever separators or
unicode their parts hold. Suffixes: ``:entries`` (a LIST, one JSON entry per
element), ``:meta`` (a HASH: ``rev``, ``updated_at``, and ``value`` for a
value that is not a list) and ``:journal`` (a STREAM, the append journal).
``<namespace>:slots`` is a sorted set of every non-empty slot (its JSON
triple) scored by its last write time, so listing slots never scans keys.

Writes are Lua scripts: Redis runs a script entirely or not at all, so a
client killed mid-call (SIGKILL) or a connection dropped mid-write leaves
either the old value or the new one, never a torn buffer. Every write sets a
fresh revision token in the same script.

A connection failure or timeout is a :class:`StorageError` naming the slot
and the server; the client reconnects on the next call, so the caller works
again as soon as Redis is back, without a restart.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis
from redis.exceptions import RedisError

from flowdrop_core.storage import Slot, StorageError, _check_timeout, _decode, _encode, new_revision

__all__ = ["REDIS_ENV", "RedisStore", "slot_keys", "slot_prefix"]

#: Environment variable naming the Redis URL when none is passed.
REDIS_ENV = "FLOWDROP_REDIS_URL"

#: Default namespace: every key this store writes starts with it.
NAMESPACE = "flowdrop"


def _triple(slot: Slot) -> str:
    return json.dumps(list(slot), ensure_ascii=False, separators=(",", ":"))


def slot_prefix(slot: Slot, namespace: str = NAMESPACE) -> str:
    """The key prefix of one slot: ``<namespace>:["scope","scope_id","key"]``.

    Injective: the JSON array is self-delimiting and canonical for a triple of
    strings, so two different triples never share a prefix (nor one a prefix
    of another's keys: every key adds ``:`` and a fixed suffix after ``]``).
    """
    scope, scope_id, key = slot
    if not all(isinstance(part, str) for part in slot):
        raise TypeError(f"slot parts must be strings, got {slot!r}")
    return f"{namespace}:{_triple((scope, scope_id, key))}"


def slot_keys(slot: Slot, namespace: str = NAMESPACE) -> tuple[str, str, str]:
    """The slot's ``(entries, meta, journal)`` keys."""
    prefix = slot_prefix(slot, namespace)
    return f"{prefix}:entries", f"{prefix}:meta", f"{prefix}:journal"


# -- server-side scripts ----------------------------------------------------------------------

#: Replace the slot's value. KEYS: entries, meta, index. ARGV: rev, now, triple, kind
#: ("list" then the JSON entries, or "json" then one JSON text).
_SET = """
redis.call('DEL', KEYS[1])
if ARGV[4] == 'list' then
  for i = 5, #ARGV, 4000 do
    redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 3999, #ARGV)))
  end
  redis.call('HDEL', KEYS[2], 'value')
  redis.call('HSET', KEYS[2], 'kind', 'list', 'rev', ARGV[1], 'updated_at', ARGV[2])
else
  redis.call('HSET', KEYS[2], 'kind', 'json', 'value', ARGV[5], 'rev', ARGV[1], 'updated_at', ARGV[2])
end
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
return 1
"""

#: Empty the slot. KEYS: entries, meta, index. ARGV: triple. Returns 1 if it held a value.
_DELETE = """
local had = redis.call('EXISTS', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return had
"""

#: Release a lease only if it is still ours. KEYS: lock. ARGV: token.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

#: Poll interval bounds while waiting for another holder's lease.
_POLL_MIN, _POLL_MAX = 0.0005, 0.005


class RedisStore:
    """A Redis-backed store: ``RedisStore(url)``, else ``$FLOWDROP_REDIS_URL``.

    ``namespace`` prefixes every key (several deployments can share one
    server); ``socket_timeout`` bounds each network call, so a dead server is
    an error after that long, never a hang. The client's connection pool is
    thread-safe and reconnects by itself after a failure or a fork.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        namespace: str = NAMESPACE,
        socket_timeout: float = 5.0,
    ) -> None:
        url = url if url is not None else os.environ.get(REDIS_ENV, "").strip()
        if not url:
            raise ValueError(f"RedisStore needs a URL (redis://host:port/db) or ${REDIS_ENV}")
        if not isinstance(namespace, str) or not namespace or ":" in namespace:
            raise ValueError(f"namespace must be a non-empty string without ':', got {namespace!r}")
        self.namespace = namespace
        self.index_key = f"{namespace}:slots"
        try:
            self.client = redis.Redis.from_url(
                url,
                socket_timeout=socket_timeout,
                socket_connect_timeout=socket_timeout,
                health_check_interval=0,
            )
        except (ValueError, RedisError) as exc:
            raise StorageError(f"not a usable Redis URL {url!r} ({exc})") from exc
        kwargs = self.client.connection_pool.connection_kwargs
        self.server = (
            kwargs.get("path") or f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
        ) + f"/{kwargs.get('db', 0)}"
        self._set = self.client.register_script(_SET)
        self._delete = self.client.register_script(_DELETE)
        self._unlock = self.client.register_script(_UNLOCK)
        self._thread_locks: dict[Slot, threading.Lock] = {}
        self._thread_guard = threading.Lock()

    def __repr__(self) -> str:
        return f"RedisStore({self.server!r}, namespace={self.namespace!r})"

    def close(self) -> None:
        """Close the pool's connections (reopened on the next call)."""
        self.client.close()

    def __enter__(self) -> RedisStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- errors ------------------------------------------------------------------------------

    def _error(self, what: str, slot: Slot | None, exc: BaseException) -> StorageError:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        message = f"cannot {what} on Redis {self.server} ({reason})"
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    def _keys(self, scope: str, scope_id: str, key: str) -> tuple[Slot, tuple[str, str, str]]:
        slot = (str(scope), scope_id, key)
        return slot, slot_keys(slot, self.namespace)

    # -- Store protocol ----------------------------------------------------------------------

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``, the value and its entries read in one transaction."""
        value, _rev, found = self.get_with_revision(scope, scope_id, key, default)
        return value, found

    def get_with_revision(
        self, scope: str, scope_id: str, key: str, default: Any = None
    ) -> tuple[Any, str | None, bool]:
        """``(value, revision, found)`` read atomically (MULTI), so they belong together."""
        slot, (entries, meta, _journal) = self._keys(scope, scope_id, key)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.hmget(meta, "kind", "rev", "value")
            pipe.lrange(entries, 0, -1)
            (kind, rev, text), items = pipe.execute()
        except RedisError as exc:
            raise self._error("read the slot", slot, exc) from exc
        if kind is None:
            return default, None, False
        revision = rev.decode("utf-8") if rev is not None else None
        if kind == b"json":
            return _decode(text, slot), revision, True
        return [_decode(item, slot) for item in items], revision, True

    def set(self, scope: str, scope_id: str, key: str, value: Any) -> str:
        """Replace the slot's value in one script; return the new revision token."""
        slot, (entries, meta, _journal) = self._keys(scope, scope_id, key)
        token = new_revision()
        if isinstance(value, list | tuple):
            args = ["list", *(_encode(entry, slot) for entry in value)]
        else:
            args = ["json", _encode(value, slot)]
        try:
            self._set(
                keys=[entries, meta, self.index_key],
                args=[token, repr(time.time()), _triple(slot), *args],
            )
        except RedisError as exc:
            raise self._error("write the slot", slot, exc) from exc
        return token

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision token (one HGET; the value is not read)."""
        slot, (_entries, meta, _journal) = self._keys(scope, scope_id, key)
        try:
            rev = self.client.hget(meta, "rev")
        except RedisError as exc:
            raise self._error("read the slot's revision", slot, exc) from exc
        return None if rev is None else rev.decode("utf-8")

    def delete(self, scope: str, scope_id: str, key: str) -> bool:
        """Empty the slot (its journal is kept); return whether it held a value."""
        slot, (entries, meta, _journal) = self._keys(scope, scope_id, key)
        try:
            return bool(self._delete(keys=[entries, meta, self.index_key], args=[_triple(slot)]))
        except RedisError as exc:
            raise self._error("delete the slot", slot, exc) from exc

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector)."""
        return sorted(slot for slot, _ in self.slot_times())

    def slot_times(self) -> list[tuple[Slot, float]]:
        """Every non-empty slot with the time of its last write (seconds since the epoch)."""
        try:
            rows = self.client.zrange(self.index_key, 0, -1, withscores=True)
        except RedisError as exc:
            raise self._error("list the slots", None, exc) from exc
        out: list[tuple[Slot, float]] = []
        for member, score in rows:
            try:
                scope, scope_id, key = json.loads(member)
            except (ValueError, TypeError) as exc:
                raise StorageError(
                    f"slot index {self.index_key!r} holds a member that is not a slot "
                    f"({member!r}) on Redis {self.server}"
                ) from exc
            out.append(((scope, scope_id, key), float(score)))
        return out

    # -- MEM-12 ------------------------------------------------------------------------------

    def _thread_lock(self, slot: Slot) -> threading.Lock:
        with self._thread_guard:
            lock = self._thread_locks.get(slot)
            if lock is None:
                lock = self._thread_locks[slot] = threading.Lock()
            return lock

    @contextmanager
    def lock(self, scope: str, scope_id: str, key: str, timeout: float = 5.0) -> Iterator[bool]:
        """MEM-12: a lease on the slot (``SET NX PX``), waiting at most ``timeout`` seconds.

        Yields whether it was acquired; never raises for a timeout. The lease
        expires by itself, so a holder killed mid-append blocks nobody for
        longer than the lease.
        """
        slot, (entries, _meta, _journal) = self._keys(scope, scope_id, key)
        lock_key = entries[: -len(":entries")] + ":lock"
        deadline = time.monotonic() + _check_timeout(timeout)
        token = uuid.uuid4().hex
        tlock = self._thread_lock(slot)
        got_thread = tlock.acquire(timeout=timeout)
        got = False
        try:
            delay = _POLL_MIN
            while got_thread:
                try:
                    got = bool(self.client.set(lock_key, token, nx=True, px=30_000))
                except RedisError as exc:
                    raise self._error("lock the slot", slot, exc) from exc
                remaining = deadline - time.monotonic()
                if got or remaining <= 0:
                    break
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, _POLL_MAX)
            yield got
        finally:
            if got:
                with suppress(RedisError):  # the lease expires by itself
                    self._unlock(keys=[lock_key], args=[token])
            if got_thread:
                tlock.release()
