"""RedisStore: buffers in a shared Redis, so MEM-12 holds across processes and hosts.

The shared store the Python agent ecosystem keeps chat history in is Redis;
this backend lets the runtime and the inspector use the same one. It follows
the :class:`~flowdrop_core.storage.Store` protocol of the other backends.

Keys (see :func:`slot_keys`). One slot is a few keys sharing one prefix,
``<namespace>:{<JSON array of scope, scope_id, key>}``: the JSON text of a
list of three strings is self-delimiting and has exactly one spelling per
triple (``json.dumps`` escapes quotes, backslashes and control characters
such as NUL), so no two different triples can name one slot, whatever
separators or unicode their parts hold. The braces are a Redis Cluster hash
tag: every key of a slot hashes to the same cluster slot, so one script can
change them all. Suffixes: ``:entries`` (a LIST, one JSON entry per
element), ``:meta`` (a HASH: ``kind``, ``rev``, ``count``, ``updated_at``,
and ``value`` for a value that is not a list), ``:journal`` (a STREAM, the
append journal, each entry ``s`` = record number and ``r`` = record) and
``:lock`` (the MEM-12 lease). ``<namespace>:slots`` is a sorted set of every
non-empty slot (its JSON triple) scored by its last write time, and
``<namespace>:journals`` the set of slots with a journal, so listing never
scans keys (on a cluster they are updated right after the slot's script).

Redis must not evict the store's keys: an eviction policy drops a slot's keys
one by one. At connect one read-only script checks that the user may run
every command the store needs (:data:`NEEDED_COMMANDS`) and reads
``maxmemory-policy``; a refused command, or a policy that may evict a key
without a TTL (anything but ``noeviction`` and ``volatile-*``, see
:data:`SAFE_POLICIES`), is one :class:`StorageError` saying what to change.
Every write script reads the policy again (``INFO memory``) before it writes,
so a policy changed after connect refuses the next write: no turn is
acknowledged under an evicting policy. A slot whose keys disagree (meta
without entries, a count that is not the list's length, a listed slot with
no keys), or an empty one while the policy evicts, reads as a
:class:`StorageError` naming the slot and eviction, never as an empty buffer.

Writes are Lua scripts: Redis runs a script entirely or not at all, so a
client killed mid-call (SIGKILL) or a connection dropped mid-write leaves
either the old value or the new one, never a torn buffer. Every write sets a
fresh revision token in the same script, and an append's journal record is
added (XADD) by the script of its change. Reads are one read-only script
(``no-writes``), so they work when the server is at ``maxmemory``.

A connection failure or timeout is a :class:`StorageError` naming the slot
and the server; the client reconnects on the next call, so the caller works
again as soon as Redis is back, without a restart.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import redis
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from flowdrop_core.storage._base import (
    ANY,
    Delta,
    Expected,
    JournalConflict,
    JournalWrite,
    LockUnavailable,
    RevisionConflict,
    Slot,
    SlotLocks,
    Snapshot,
    StorageError,
    acquire_within,
    awrite_landed,
    check_timeout,
    decode_entries,
    decode_json,
    encode_json,
    fork_generation,
    mask_url,
    new_revision,
    slot_label,
    time_problem,
    write_landed,
)

_log = logging.getLogger("flowdrop_core")

__all__ = ["REDIS_ENV", "RedisStore", "slot_keys", "slot_prefix"]

#: Environment variable naming the Redis URL when none is passed.
REDIS_ENV = "FLOWDROP_REDIS_URL"

#: Default namespace: every key this store writes starts with it.
NAMESPACE = "flowdrop"

#: Connections a store opens at most per process (the lease connection included): a
#: Redis call is one short round trip, so a few connections keep two cores busy, and 8
#: matches the Postgres pool.
DEFAULT_MAX_CONNECTIONS = 8


#: Slots whose key names a store keeps made (:meth:`RedisStore._names`); past it, it starts over.
_NAMES_KEPT = 4096


def _triple(slot: Slot) -> str:
    return json.dumps(list(slot), ensure_ascii=False, separators=(",", ":"))


def slot_prefix(slot: Slot, namespace: str = NAMESPACE) -> str:
    """The key prefix of one slot: ``<namespace>:{["scope","scope_id","key"]}``.

    Injective: the JSON array is self-delimiting and canonical for a triple of
    strings, so two different triples never share a prefix (nor one a prefix
    of another's keys: every key adds ``:`` and a fixed suffix after ``]}``).
    The triple sits in braces, a Redis Cluster hash tag, so every key of the
    slot lands on one cluster node (the tag is what lies between the first
    ``{`` and the next ``}``: the same text for all keys of one slot).
    """
    scope, scope_id, key = slot
    if not all(isinstance(part, str) for part in slot):
        raise TypeError(f"slot parts must be strings, got {slot!r}")
    return f"{namespace}:{{{_triple((scope, scope_id, key))}}}"


def slot_keys(slot: Slot, namespace: str = NAMESPACE) -> tuple[str, str, str]:
    """The slot's ``(entries, meta, journal)`` keys."""
    prefix = slot_prefix(slot, namespace)
    return f"{prefix}:entries", f"{prefix}:meta", f"{prefix}:journal"


def triple_of(prefix_or_member: str | bytes) -> Slot:
    """The slot named by an index member (its JSON triple)."""
    scope, scope_id, key = json.loads(prefix_or_member)
    return (scope, scope_id, key)


# -- server-side scripts ----------------------------------------------------------------------
#: ``maxmemory-policy`` values that never evict a key without a TTL. Every key this store
#: keeps data in has none (only the MEM-12 lease expires, and losing a lease loses no turn:
#: writes are conditional), so ``volatile-*`` policies are accepted; ``allkeys-*`` and any
#: policy not known to spare such keys are refused.
SAFE_POLICIES = (
    "noeviction",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
)

#: The Lua guard every write script starts with: the server's ``maxmemory-policy``, read by
#: ``INFO memory`` in the same script as the write (Lua cannot call CONFIG), so a policy
#: changed after connect refuses the very next write: no turn is acknowledged under a
#: policy that may evict it. Returns {"evicting", <policy>}.
_POLICY = (
    "local function policy_of()\n"
    "  return string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)')\n"
    "end\n"
    "local function evicting()\n"
    "  local p = policy_of()\n"
    "  for _, ok in ipairs({"
    + ", ".join(f"'{p}'" for p in SAFE_POLICIES)
    + "}) do if p == ok then return nil end end\n"
    "  return p or '(unknown)'\n"
    "end\n"
)

_GUARD = _POLICY + "local policy = evicting()\nif policy then return {'evicting', policy} end\n"

# Every write is one script. KEYS: entries, meta, journal, then (unless on a cluster) the
# slot index and the journal index. ARGV[1] is the condition: "*" (any revision), "-" (the
# slot must be empty) or "=<revision>". A failed condition returns
# {"conflict", <current revision or "">} and writes nothing.

_CONDITION = """
local cur = redis.call('HGET', KEYS[2], 'rev')
local want = ARGV[1]
if want ~= '*' then
  if want == '-' then
    if cur then return {'conflict', cur} end
  elseif cur ~= string.sub(want, 2) then
    return {'conflict', cur or ''}
  end
end
"""

#: The slot's keys must agree before a write changes them (an eviction policy may have
#: dropped one): meta without entries, entries without meta, or a count that is not the
#: list's length is an error, and nothing is written.
_CONSISTENT = """
local kind = redis.call('HGET', KEYS[2], 'kind')
local size = redis.call('LLEN', KEYS[1])
if not kind and size > 0 then
  return {'error', 'the slot has entries but no meta key (evicted?); Redis must run noeviction'}
end
if kind == 'list' then
  local want = redis.call('HGET', KEYS[2], 'count')
  if want and tonumber(want) ~= size then
    return {'error', 'the slot says ' .. want .. ' entries, its list holds ' .. size ..
            ' (keys evicted?); Redis must run noeviction'}
  end
end
"""

#: Replace the slot's value. ARGV: condition, rev, now, triple, kind ("list" then the
#: JSON entries, or "json" then one JSON text).
_SET = (
    _GUARD
    + _CONDITION
    + """
redis.call('DEL', KEYS[1])
if ARGV[5] == 'list' then
  for i = 6, #ARGV, 4000 do
    redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 3999, #ARGV)))
  end
  redis.call('HDEL', KEYS[2], 'value')
  redis.call('HSET', KEYS[2], 'kind', 'list', 'rev', ARGV[2], 'updated_at', ARGV[3],
             'count', #ARGV - 5)
else
  redis.call('HDEL', KEYS[2], 'count')
  redis.call('HSET', KEYS[2], 'kind', 'json', 'value', ARGV[6], 'rev', ARGV[2],
             'updated_at', ARGV[3])
end
if KEYS[4] then redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4]) end
return {'ok'}
"""
)

#: Apply a delta and add its journal record. List operations only, O(ops) plus, for a
#: mid-buffer insert or delete, the entries after it (the current exchange). ARGV:
#: condition, rev, now, triple, count after, journal seq ("" for none), journal record,
#: journal limit, then per op: kind ("i", "r", "d"), position, entry JSON ("" for a
#: delete). The condition, the journal's number and every position are checked first, so
#: it is all or nothing; with no ops only the record is added (the slot is untouched).
_APPLY_BODY = (
    _CONDITION
    + _CONSISTENT
    + """
if kind and kind ~= 'list' then return {'error', 'stored value is not a conversation buffer (a plain value)'} end
local jseq = ARGV[6]
if jseq ~= '' then
  local last = 0
  local top = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
  if #top > 0 then
    local fields = top[1][2]
    for f = 1, #fields, 2 do
      if fields[f] == 's' then last = tonumber(fields[f + 1]) end
    end
    if last == 0 then  -- a record written before numbers were kept beside it
      for f = 1, #fields, 2 do
        if fields[f] == 'r' then last = tonumber(cjson.decode(fields[f + 1]).seq) or 0 end
      end
    end
  end
  if tonumber(jseq) ~= last + 1 then return {'jconflict', tostring(last)} end
end
-- with no ops, a journaled call only adds its record; an unjournaled one still writes
local touch = nargs >= 9 or jseq == ''
local names = {i = 'insert', r = 'replace', d = 'delete'}
for i = 9, nargs, 3 do
  local op, pos = ARGV[i], tonumber(ARGV[i + 1])
  if op == 'i' then
    if pos < 0 or pos > size then return {'error', 'insert at ' .. pos .. ' in a buffer of ' .. size} end
    size = size + 1
  else
    if pos < 0 or pos >= size then
      return {'error', names[op] .. ' at ' .. pos .. ' in a buffer of ' .. size}
    end
    if op == 'd' then size = size - 1 end
  end
end
if touch and size ~= tonumber(ARGV[5]) then
  return {'error', 'the change leaves ' .. size .. ' entries, its count says ' .. ARGV[5]}
end
for i = 9, nargs, 3 do
  local op, pos, entry = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local len = redis.call('LLEN', KEYS[1])
  if op == 'r' then
    redis.call('LSET', KEYS[1], pos, entry)
  elseif op == 'i' and pos == len then
    redis.call('RPUSH', KEYS[1], entry)
  elseif op == 'i' and pos == 0 then
    redis.call('LPUSH', KEYS[1], entry)
  elseif op == 'd' and pos == 0 then
    redis.call('LPOP', KEYS[1])
  elseif op == 'd' and pos == len - 1 then
    redis.call('RPOP', KEYS[1])
  else
    local tail = redis.call('LRANGE', KEYS[1], pos, -1)
    redis.call('LTRIM', KEYS[1], 0, pos - 1)
    if op == 'i' then redis.call('RPUSH', KEYS[1], entry) end
    for k = (op == 'd') and 2 or 1, #tail do redis.call('RPUSH', KEYS[1], tail[k]) end
  end
end
if touch then
  redis.call('HSET', KEYS[2], 'kind', 'list', 'rev', ARGV[2], 'updated_at', ARGV[3],
             'count', size)
  if KEYS[4] then redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4]) end
end
if jseq ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[8], '*', 's', jseq, 'r', ARGV[7])
  if KEYS[5] then redis.call('SADD', KEYS[5], ARGV[4]) end
end
return {'ok'}
"""
)
_APPLY = _GUARD + "local nargs = #ARGV\n" + _APPLY_BODY

#: The append's write under MEM-12's lease taken with the write (``RedisStore.write_lock``):
#: _APPLY, after the policy guard, refuses to write while another writer holds the slot's
#: lease (returns {"leased", <holder>}). Scripts run one at a time, so a write that finds
#: the lease free or its own ran as if it held the lease. KEYS: _APPLY's five, then the
#: lease key; ARGV: _APPLY's, then the writer's lease token ("": it holds none).
_APPLY_LEASED = (
    _GUARD
    + """
local nargs = #ARGV - 1
local held = redis.call('GET', KEYS[6])
if held and held ~= ARGV[#ARGV] then return {'leased', held} end
"""
    + _APPLY_BODY
)

#: Empty the slot (its journal is kept). ARGV: condition, triple. Returns {"ok", 1} if it
#: held a value.
_DELETE = (
    _CONDITION
    + """
local had = redis.call('EXISTS', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
if KEYS[4] then redis.call('ZREM', KEYS[4], ARGV[2]) end
return {'ok', had}
"""
)

#: Read a slot in one step without writing (so it runs at maxmemory): meta fields, the
#: entries, and whether the index lists the slot. KEYS: entries, meta[, index]. ARGV: triple.
_READ = (
    "#!lua flags=no-writes\n"
    + _POLICY
    + """
local meta = redis.call('HMGET', KEYS[2], 'kind', 'rev', 'value', 'count')
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local listed = 0
if KEYS[3] and redis.call('ZSCORE', KEYS[3], ARGV[1]) then listed = 1 end
if not meta[1] and #items == 0 and listed == 0 then
  local policy = evicting()
  if policy then return {'evicting', policy} end
end
return {meta[1] or '', meta[2] or '', meta[3] or '', meta[4] or '', listed, items}
"""
)

#: Every command the store sends, for the check at connect. Besides these it needs EVALSHA
#: and SCRIPT LOAD (how the client runs a script); CLIENT (lease liveness), CONFIG, SCAN
#: and RENAMENX (:meth:`RedisStore.migrate_keys`) are optional.
NEEDED_COMMANDS = (
    "DEL", "EXISTS", "GET", "HDEL", "HGET", "HMGET", "HSET", "INFO", "LLEN", "LPOP",
    "LPUSH", "LRANGE", "LSET", "LTRIM", "RPOP", "RPUSH", "SADD", "SET", "SMEMBERS",
    "XADD", "XLEN", "XRANGE", "XREVRANGE", "ZADD", "ZRANGE", "ZREM", "ZSCORE",
)  # fmt: skip

#: The check at connect: runs each needed command on keys of the namespace inside a
#: read-only script, where Redis checks the ACL (command and key) before it refuses a
#: write, so nothing is written and it works at maxmemory. Returns the policy check's
#: result (or "") and the refused commands with Redis's reason. KEYS: a probe key (HASH,
#: LIST, STRING), a sorted set, a set, a stream: all of one hash tag.
_PROBE = (
    "#!lua flags=no-writes\n"
    + _POLICY
    + """
local k, z, st, x = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local calls = {
  {'DEL', k}, {'EXISTS', k}, {'GET', k}, {'HDEL', k, 'f'}, {'HGET', k, 'f'},
  {'HMGET', k, 'f'}, {'HSET', k, 'f', 'v'}, {'INFO', 'memory'}, {'LLEN', k}, {'LPOP', k},
  {'LPUSH', k, 'v'}, {'LRANGE', k, 0, -1}, {'LSET', k, 0, 'v'}, {'LTRIM', k, 0, -1},
  {'RPOP', k}, {'RPUSH', k, 'v'}, {'SADD', st, 'v'}, {'SET', k, 'v'}, {'SMEMBERS', st},
  {'XADD', x, '*', 'f', 'v'}, {'XLEN', x}, {'XRANGE', x, '-', '+'},
  {'XREVRANGE', x, '+', '-'}, {'ZADD', z, 1, 'v'}, {'ZRANGE', z, 0, -1}, {'ZREM', z, 'v'},
  {'ZSCORE', z, 'v'},
}
local refused = {}
for _, call in ipairs(calls) do
  local reply = redis.pcall(unpack(call))
  local err = type(reply) == 'table' and reply.err
  if err and (string.find(err, 'NOPERM') or string.find(err, 'user executing the script')) then
    table.insert(refused, call[1] .. ': ' .. err)
  end
end
local policy = ''
if #refused == 0 then policy = policy_of() or '' end
return {policy, refused}
"""
)

#: Take over a lease whose holder is gone, only if it is still that holder's.
#: KEYS: lock. ARGV: the dead holder's value, ours, lease in ms.
_STEAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""

#: Release a lease only if it is still ours. KEYS: lock. ARGV: token.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

#: Poll interval bounds while waiting for another holder's lease.
_POLL_MIN, _POLL_MAX = 0.0005, 0.005

#: A lease outlives any append (an append is a few round trips) and expires by itself.
#: A waiter does not sit out the lease of a holder that died: see RedisStore.lock.
LEASE_SECONDS = 10.0

#: How often a waiter checks whether the lease holder's process is still connected.
_LIVENESS_EVERY = 0.05

_OPS = {"insert": "i", "replace": "r", "delete": "d"}

#: States of a lease taken with the append's write (``RedisStore.write_lock``): not taken
#: (each write checks it is free, in its script), to be taken before the next write (a
#: write conflicted: writers are racing, so they queue), taken, or not obtainable in time.
_LAZY, _WANTED, _TAKEN, _UNAVAILABLE = range(4)


class _WriteLease:
    """MEM-12's lease of one ``write_lock`` block: its slot, key, deadline, token and state."""

    __slots__ = ("deadline", "lock_key", "slot", "state", "token")

    def __init__(self, slot: Slot, lock_key: str, deadline: float) -> None:
        self.slot, self.lock_key, self.deadline = slot, lock_key, deadline
        self.token = ""
        self.state = _LAZY

    def script_call(self, keys: list[str], args: list[Any]) -> tuple[list[str], list[Any]]:
        """The leased apply script's KEYS and ARGV for the apply's own."""
        return [*keys, self.lock_key], [*args, self.token]

    def wants_lease(self, reply: Any) -> bool:
        """After a leased write's reply: whether to take the lease and write again.

        ``leased``: another writer holds it, so wait for it (nothing was
        written). A conflict while not holding it: take it before the next
        write, so racing writers queue instead of conflicting again.
        """
        if reply[0] == b"leased":
            return True
        if reply[0] == b"conflict" and self.state == _LAZY:
            self.state = _WANTED
        return False

    def taken(self, got: bool, token: str) -> None:
        """The outcome of waiting for the lease; not taken raises :class:`LockUnavailable`."""
        if got:
            self.state, self.token = _TAKEN, token
            return
        self.state = _UNAVAILABLE
        raise LockUnavailable.for_slot(
            "the slot's lease is held by another writer past the lock timeout; nothing was written",
            self.slot,
        )


#: The ``write_lock`` block the current thread or task is in (its apply takes the lease).
_WRITE_LEASE: contextvars.ContextVar[_WriteLease | None] = contextvars.ContextVar(
    "flowdrop_redis_write_lease", default=None
)

#: MEM-12's lease as Redis calls (see ``RedisStore._lease``): returns (taken, token).
_LeaseSteps = Generator[tuple[Any, ...], Any, tuple[bool, str]]

#: Connection settings of the sync client that are not the async one's (objects bound to
#: the sync client: its retry policy, its hooks).
_SYNC_ONLY = frozenset({"retry", "redis_connect_func", "event_dispatcher"})


def _condition(expected: Expected) -> str:
    if expected is ANY:
        return "*"
    if expected is None:
        return "-"
    return f"={expected}"


class RedisStore:
    """A Redis-backed store: ``RedisStore(url)``, else ``$FLOWDROP_REDIS_URL``.

    ``namespace`` prefixes every key (several deployments can share one
    server); ``socket_timeout`` bounds each network call, so a dead server is
    an error after that long, never a hang. The client's connection pool is
    thread-safe and reconnects by itself after a failure or a fork.

    A write's ``timeout`` (protocol) has nothing to wait for here: Redis runs
    one script at a time and never makes a script wait for a lock, so a write
    is bounded by ``socket_timeout``. A write that times out on the wire is a
    :class:`StorageError` saying the outcome is unknown (the script ran whole
    or not at all), not a :class:`StoreBusyError`, so nobody retries it
    blindly.

    ``cluster``: talk to a Redis Cluster (``redis.cluster.RedisCluster``);
    ``None`` asks the server (``INFO cluster``). On a cluster the slot
    index and the journal index are updated right after the slot's script
    (a script may only touch one cluster slot's keys). At connect the
    user's permissions and ``maxmemory-policy`` are checked (see the module
    docstring); ``check_policy=False`` skips only the refusal of an evicting
    policy at connect (to read what is left on such a server): writes are
    still refused under it. The URL's password is never shown:
    :func:`~flowdrop_core.storage._base.mask_url`.

    Connections: the store opens at most ``max_connections`` (default
    :data:`DEFAULT_MAX_CONNECTIONS`) per process however many threads or
    tasks append: one idle connection whose CLIENT ID marks this process's
    slot leases (not on a cluster), the rest a blocking pool that a call
    waits on, at most ``max(30 s, socket_timeout)``, when all are in use. Or
    pass the caller's own ``client`` (a ``redis.Redis`` or ``RedisCluster``,
    its pool its bound, plus the one lease connection); the store never
    closes it. The async API (``ConversationBuffer.aappend``) runs one worker
    per pooled connection (``async_workers``).
    """

    kind = "redis"

    def __init__(
        self,
        url: str | None = None,
        *,
        namespace: str = NAMESPACE,
        socket_timeout: float = 5.0,
        cluster: bool | None = None,
        check_policy: bool = True,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        client: Any = None,
    ) -> None:
        if not (type(max_connections) is int and max_connections >= 2):
            raise ValueError(
                "max_connections must be a whole number >= 2 (one connection marks the "
                f"process's leases), got {max_connections!r}"
            )
        self.max_connections = max_connections
        self._own_client = client is None
        if client is not None:
            from redis.cluster import RedisCluster

            cluster = isinstance(client, RedisCluster)
            if url is None:
                pool = getattr(client, "connection_pool", None)
                kw = {} if pool is None else pool.connection_kwargs
                url = f"redis://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
        url = url if url is not None else os.environ.get(REDIS_ENV, "").strip()
        if not url:
            raise ValueError(f"RedisStore needs a URL (redis://host:port/db) or ${REDIS_ENV}")
        if not isinstance(namespace, str) or not namespace or ":" in namespace:
            raise ValueError(f"namespace must be a non-empty string without ':', got {namespace!r}")
        self.url = url
        self.namespace = namespace
        self.index_key = f"{namespace}:slots"
        self.journals_key = f"{namespace}:journals"
        try:
            if client is not None and not cluster:
                self.client: Any = client
            else:
                self.client = redis.Redis(
                    connection_pool=redis.BlockingConnectionPool.from_url(
                        url,
                        max_connections=max_connections - 1,
                        timeout=max(30.0, socket_timeout),
                        socket_timeout=socket_timeout,
                        socket_connect_timeout=socket_timeout,
                        health_check_interval=0,
                    )
                )
        except (ValueError, RedisError) as exc:
            raise StorageError(f"not a usable Redis URL {mask_url(url)!r} ({exc})") from None
        kwargs = self.client.connection_pool.connection_kwargs
        self.server = (
            kwargs.get("path") or f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
        ) + f"/{kwargs.get('db', 0)}"
        if client is not None and cluster:
            self.client = client
        elif cluster is None:
            cluster = self._is_cluster()
        self.cluster = cluster
        if cluster and client is None:
            from redis.cluster import RedisCluster

            self.client.close()
            self.client = RedisCluster.from_url(
                url,
                socket_timeout=socket_timeout,
                socket_connect_timeout=socket_timeout,
                max_connections=max_connections,
            )
        self._set = self.client.register_script(_SET)
        self._apply = self.client.register_script(_APPLY)
        self._apply_leased = self.client.register_script(_APPLY_LEASED)
        self._delete = self.client.register_script(_DELETE)
        self._read = self.client.register_script(_READ)
        self._unlock = self.client.register_script(_UNLOCK)
        self._steal = self.client.register_script(_STEAL)
        self._locks = SlotLocks()
        self._asides: weakref.WeakKeyDictionary[Any, _AsyncSide] = weakref.WeakKeyDictionary()
        self._asides_guard = threading.Lock()  # loops of several threads add and drop sides
        self._slot_names: dict[Slot, tuple[tuple[str, ...], str, str]] = {}
        self._alive_guard = threading.Lock()
        self._alive: tuple[int, Any, int] | None = None  # (pid, connection, its CLIENT ID)
        self._no_client = False  # CLIENT is not permitted: leases are not checked for liveness
        self._old_server = False  # Redis before 7 (no script flags): reads are pipelined
        self._probe = self.client.register_script(_PROBE)
        self.check_policy = check_policy
        self.policy: str | None = None
        self._verified = False
        self._verify()

    @property
    def async_workers(self) -> int:
        """How many calls the async API runs at once: one per pooled connection (at most 64)."""
        if self._own_client:
            return self.max_connections - (0 if self.cluster else 1)
        pool = getattr(self.client, "connection_pool", None)
        return min(int(getattr(pool, "max_connections", 64) or 64), 64)

    def _is_cluster(self) -> bool:
        """Whether the server is a cluster node (``INFO cluster``); False when unreachable."""
        try:
            info = self.client.info("cluster")
        except RedisError:
            return False
        return bool(info.get("cluster_enabled"))

    def _verify(self, what: str | None = None, slot: Slot | None = None) -> None:
        """The check at connect: every command the store needs is permitted, no evicting policy.

        One read-only script (:data:`_PROBE`) runs each command of
        :data:`NEEDED_COMMANDS` on keys of the namespace and reads
        ``maxmemory-policy``: a refused command, or (unless ``check_policy``
        is off) a policy that may evict a key without a TTL, is one
        :class:`StorageError` saying what to change. A server unreachable at
        connect is checked by the next call (``what`` on ``slot``), whose
        error it then is.
        """
        tag = f"{self.namespace}:{{probe}}"
        try:
            policy, refused = self._probe(keys=[f"{tag}:k", f"{tag}:z", f"{tag}:s", f"{tag}:x"])
        except ResponseError as exc:
            text = str(exc)
            if "NOPERM" in text or "no permissions" in text:
                raise self._refused(
                    [f"{text} (the store runs scripts by EVALSHA and SCRIPT LOAD)"]
                ) from None
            if "#!lua" not in text and "near '#'" not in text:
                raise self._error("check the server", None, exc) from exc
            self._old_server = True  # Redis before 7: no read-only script to probe with
            policy, refused = self._policy_by_config(), []
        except RedisError as exc:
            if what is not None:
                raise self._error(what, slot, exc) from exc
            _log.info("cannot check Redis %s now (%s); the first call will", self.server, exc)
            return
        if refused:
            raise self._refused([r.decode("utf-8", "replace") for r in refused]) from None
        if isinstance(policy, bytes):
            policy = policy.decode("utf-8", "replace")
        self.policy = policy or None
        self._verified = True
        if self.check_policy and self.policy is not None and self.policy not in SAFE_POLICIES:
            raise self._evicting(self.policy, None, "connect")

    def _policy_by_config(self) -> str | None:
        """``maxmemory-policy`` by CONFIG GET (Redis before 7; None: not readable)."""
        try:
            got = self.client.config_get("maxmemory-policy")
        except RedisError as exc:
            _log.info("cannot read maxmemory-policy on Redis %s (%s)", self.server, exc)
            return None
        policy = got.get("maxmemory-policy") if isinstance(got, dict) else None
        return policy.decode() if isinstance(policy, bytes) else policy

    def _refused(self, reasons: list[str]) -> StorageError:
        """A user whose ACL refuses commands the store needs: one error listing them all."""
        user = self.client.connection_pool.connection_kwargs.get("username") or "default"
        return StorageError(
            f"the Redis user {user!r} on {self.server} may not run what the store needs: "
            + "; ".join(reasons)
            + f". The store needs EVALSHA, SCRIPT LOAD and {', '.join(NEEDED_COMMANDS)} on the "
            f"keys {self.namespace}:* (e.g. ACL SETUSER {user} ~{self.namespace}:* +evalsha "
            f"+script|load +{' +'.join(c.lower() for c in NEEDED_COMMANDS)}); the store refuses to connect"
        )

    def _evicting(self, policy: str, slot: Slot | None, what: str) -> StorageError:
        """A server whose ``maxmemory-policy`` may evict the store's keys, refused."""
        message = (
            f"Redis {self.server} runs maxmemory-policy {policy}, which may evict keys "
            "without a TTL and so lose stored turns; the store refuses to "
            + {
                "connect": "connect",
                "read": "read an empty slot (its keys may have been evicted)",
            }.get(what, "write (nothing was written)")
            + ". Set it to noeviction: CONFIG SET maxmemory-policy noeviction, and "
            "maxmemory-policy noeviction in redis.conf (a volatile-* policy also works)"
        )
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    def __repr__(self) -> str:
        return f"RedisStore({self.server!r}, namespace={self.namespace!r})"

    @property
    def display_url(self) -> str:
        """The URL with any password masked (what every message shows)."""
        return mask_url(self.url)

    def close(self) -> None:
        """Close the pool's connections (reopened on the next call)."""
        self._forget_closed_loops()
        with self._alive_guard:
            alive, self._alive = self._alive, None
        if alive is not None and alive[0] == os.getpid():
            alive[1].disconnect()
        if self._own_client:  # a caller's client stays the caller's
            self.client.close()

    def __enter__(self) -> RedisStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ----------------------------------------------------------------------------

    def _error(self, what: str, slot: Slot | None, exc: BaseException) -> StorageError:
        """A client failure as a :class:`StorageError` naming the server and the slot."""
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if isinstance(exc, RedisTimeoutError) and what.startswith("write"):
            reason += "; the write ran whole or not at all, which is unknown"
        elif what.startswith("write"):
            reason += "; nothing was written"  # asked again: see write_landed
        message = f"cannot {what} on Redis {self.server} ({reason})"
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    def _keys(self, scope: str, scope_id: str, key: str) -> tuple[Slot, list[str]]:
        """The slot and its script KEYS: entries, meta, journal (+ both indexes off a cluster)."""
        slot = (str(scope), scope_id, key)
        return slot, list(self._names(slot)[0])

    def _names(self, slot: Slot) -> tuple[tuple[str, ...], str, str]:
        """The slot's script KEYS, JSON triple and lease key, made once and then looked up.

        Each append needs them two or three times, and making them is three
        ``json.dumps`` calls (about 9 us); a slot's names never change.
        """
        names = self._slot_names.get(slot)
        if names is None:
            keys: tuple[str, ...] = slot_keys(slot, self.namespace)  # checks the slot's parts
            if not self.cluster:
                keys += (self.index_key, self.journals_key)
            names = (keys, _triple(slot), keys[0][: -len(":entries")] + ":lock")
            if len(self._slot_names) >= _NAMES_KEPT:
                self._slot_names.clear()
            self._slot_names[slot] = names
        return names

    def _run(self, script: Any, keys: list[str], args: list[Any], slot: Slot, what: str) -> Any:
        """Run a write script; a conflict is a :class:`RevisionConflict`, nothing written."""
        if not self._verified:
            self._verify(what, slot)
        try:
            reply = script(keys=keys, args=args)
        except RedisError as exc:
            raise self._error(what, slot, exc) from exc
        return self._checked(reply, args, slot, what)

    def _checked(self, reply: Any, args: list[Any], slot: Slot, what: str) -> Any:
        """A write script's reply; a refusal or a conflict raised, nothing written (both paths)."""
        status = reply[0]
        if status == b"evicting":
            raise self._evicting(reply[1].decode("utf-8", "replace"), slot, what)
        if status == b"conflict":
            actual = reply[1].decode("utf-8") or None
            expected = args[0]
            raise RevisionConflict(slot, None if expected == "-" else expected[1:], actual)
        if status == b"jconflict":
            raise JournalConflict.for_seq(slot, int(args[5]), reply[1].decode("utf-8"))
        if status == b"error":
            raise StorageError.for_slot(
                f"cannot apply the change ({reply[1].decode('utf-8')}); nothing was written", slot
            )
        return reply

    # -- reading -----------------------------------------------------------------------------

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """Value and revision read by one read-only script, so they belong together.

        The script writes nothing, so it runs at ``maxmemory``. Keys that
        disagree (an eviction policy dropped some) are a :class:`StorageError`
        naming the slot, never an empty buffer.
        """
        slot, keys = self._keys(scope, scope_id, key)
        if not self._verified:
            self._verify("read the slot", slot)
        try:
            if self._old_server:
                reply = self._read_pipelined(slot, keys)
            else:
                reply = self._read(keys=[keys[0], keys[1], *keys[3:4]], args=[self._names(slot)[1]])
                if reply[0] == b"evicting":
                    raise self._evicting(reply[1].decode("utf-8", "replace"), slot, "read")
            kind, rev, text, count, listed, items = reply
        except ResponseError as exc:
            if self._old_server or ("#!lua" not in str(exc) and "near '#'" not in str(exc)):
                raise self._error("read the slot", slot, exc) from exc
            self._old_server = True  # Redis before 7: no script flags
            return self.read(scope, scope_id, key)
        except RedisError as exc:
            raise self._error("read the slot", slot, exc) from exc
        return self._snapshot(slot, kind, rev, text, count, listed, items)

    def _snapshot(
        self, slot: Slot, kind: Any, rev: Any, text: Any, count: Any, listed: Any, items: Any
    ) -> Snapshot:
        """The read script's reply as a :class:`Snapshot` (both paths); keys that disagree raise."""
        if not kind:
            if items or listed:
                raise StorageError.for_slot(
                    "the slot's keys disagree: "
                    + (
                        "it has entries but no meta key"
                        if items
                        else "it is listed but its keys are gone"
                    )
                    + f" on Redis {self.server} (evicted? Redis must run maxmemory-policy "
                    "noeviction; or written by a version before hash-tagged keys: run "
                    "RedisStore.migrate_keys() once); nothing was read",
                    slot,
                )
            return Snapshot(None, False, None)
        revision = rev.decode("utf-8") if rev else None
        if kind == b"json":
            return Snapshot(decode_json(text, slot), True, revision)
        if count and int(count) != len(items):
            raise StorageError.for_slot(
                f"the slot's keys disagree: its meta says {int(count)} entries, its list holds "
                f"{len(items)} on Redis {self.server} (evicted? Redis must run maxmemory-policy "
                "noeviction); nothing was read",
                slot,
            )
        return Snapshot(_decode_entries(items, slot), True, revision)

    def _read_pipelined(self, slot: Slot, keys: list[str]) -> list[Any]:
        """The read script's reply without a script (Redis before 7), still consistent.

        The revision is read before and after the entries (one pipeline, no
        MULTI); every write changes entries and revision in one script and a
        revision never repeats, so equal revisions mean the entries belong to
        them. Retried until they are equal.
        """
        while True:
            pipe = self.client.pipeline(transaction=False)
            pipe.hmget(keys[1], ["kind", "rev", "value", "count"])
            pipe.lrange(keys[0], 0, -1)
            if len(keys) > 3:
                pipe.zscore(keys[3], _triple(slot))
            pipe.hget(keys[1], "rev")
            replies = pipe.execute()
            (kind, rev, text, count), items = replies[0], replies[1]
            if replies[-1] == rev:
                listed = 1 if len(keys) > 3 and replies[2] is not None else 0
                return [kind or b"", rev or b"", text or b"", count or b"", listed, items]

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``."""
        snap = self.read(scope, scope_id, key)
        return (snap.value, True) if snap.found else (default, False)

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision (one HGET; the value is not read)."""
        slot, (_entries, meta, *_rest) = self._keys(scope, scope_id, key)
        try:
            rev = self.client.hget(meta, "rev")
        except RedisError as exc:
            raise self._error("read the slot's revision", slot, exc) from exc
        return None if rev is None else rev.decode("utf-8")

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector)."""
        return sorted(slot for slot, _ in self.slot_times())

    def listing(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Every non-empty slot with its entry count and last write (two round trips)."""
        times = self.slot_times()
        counts = self.counts([slot for slot, _ in times])
        return {slot: (n, at) for (slot, at), n in zip(times, counts, strict=True)}

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
            problem = time_problem(score)
            if problem is not None:
                raise StorageError.for_slot(
                    f"bad stored entry: {problem} in slot index {self.index_key!r} on Redis "
                    f"{self.server}",
                    (scope, scope_id, key),
                )
            out.append(((scope, scope_id, key), float(score)))
        return out

    def counts(self, slots: list[Slot]) -> list[int | None]:
        """Each slot's entry count (``None``: a plain value or empty), in one pipelined trip."""
        try:
            pipe = self.client.pipeline(transaction=False)
            for slot in slots:
                entries, meta, _journal = slot_keys(slot, self.namespace)
                pipe.hget(meta, "kind")
                pipe.llen(entries)
            replies = pipe.execute()
        except RedisError as exc:
            raise self._error("list the slots", None, exc) from exc
        return [
            int(size) if kind == b"list" else None
            for kind, size in zip(replies[::2], replies[1::2], strict=True)
        ]

    def count(self, scope: str, scope_id: str, key: str) -> int | None:
        """The number of entries of a buffer (LLEN), ``None`` for a plain value or empty slot."""
        slot, (entries, meta, *_rest) = self._keys(scope, scope_id, key)
        try:
            pipe = self.client.pipeline(transaction=False)  # no MULTI: works at maxmemory
            pipe.hget(meta, "kind")
            pipe.llen(entries)
            kind, size = pipe.execute()
        except RedisError as exc:
            raise self._error("read the slot", slot, exc) from exc
        return int(size) if kind == b"list" else None

    # -- writing -----------------------------------------------------------------------------

    def set(
        self,
        scope: str,
        scope_id: str,
        key: str,
        value: Any,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> str:
        """Replace the slot's value in one script; return the new revision."""
        slot, keys = self._keys(scope, scope_id, key)
        if isinstance(value, list | tuple):
            args = ["list", *(encode_json(e, slot, f"entry {n}") for n, e in enumerate(value))]
        else:
            args = ["json", encode_json(value, slot, "value")]
        token = new_revision()
        now = repr(time.time())
        self._run(
            self._set,
            keys,
            [_condition(expected), token, now, _triple(slot), *args],
            slot,
            "write the slot",
        )
        if self.cluster:
            self._index(slot, now)
        return token

    def _index(self, slot: Slot, now: str, journaled: bool = False) -> None:
        """On a cluster: list the slot (and its journal) after its script, in other keys."""
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.zadd(self.index_key, {_triple(slot): float(now)})
            if journaled:
                pipe.sadd(self.journals_key, _triple(slot))
            pipe.execute()
        except RedisError as exc:  # the slot itself is written; only the listing lags
            _log.warning("cannot list slot %s in %s (%s)", slot_label(*slot), self.index_key, exc)

    def apply(
        self,
        scope: str,
        scope_id: str,
        key: str,
        delta: Delta,
        *,
        expected: str | None,
        timeout: float | None = None,
        journal: JournalWrite | None = None,
    ) -> str:
        """Apply ``delta`` as list operations (RPUSH, LPOP, LSET, ...) if the slot is at ``expected``.

        One script: the condition, the journal's record number, every
        position checked, then the ops and the record (XADD), so it is all or
        nothing. Costs O(ops), plus the entries after a mid-buffer insert (a
        healed placeholder goes into the current exchange).
        """
        slot, keys, args, token, now = self._apply_call(
            scope, scope_id, key, delta, expected, journal
        )
        try:
            lease = _WRITE_LEASE.get()
            if lease is None or lease.slot != slot or lease.state == _UNAVAILABLE:
                self._run(self._apply, keys, args, slot, "write the change")
            else:
                self._run_leased(lease, keys, args, slot)
        except StorageError as exc:
            # The reply was lost (timeout, dropped connection): ask whether it landed, so a
            # stored turn is reported as stored and a retry never duplicates it.
            lost = isinstance(exc.__cause__, RedisError) and delta.ops
            if not (lost and write_landed(self, slot, token, journal)):
                raise
            _log.warning("the reply of a write to slot %s was lost; it landed", slot_label(*slot))
        if self.cluster:
            self._index(slot, now, journal is not None)
        if journal is not None and not delta.ops:
            return expected  # type: ignore[return-value]
        return token

    def _run_leased(self, lease: _WriteLease, keys: list[str], args: list[Any], slot: Slot) -> None:
        """The apply script under a ``write_lock``: the lease checked, or taken, in the write."""
        if lease.state == _WANTED:
            lease.taken(
                *self._run_lease(self._lease(slot, lease.lock_key, lease.deadline), lease.lock_key)
            )
        while True:
            script_keys, script_args = lease.script_call(keys, args)
            if not self._verified:
                self._verify("write the change", slot)
            try:
                reply = self._apply_leased(keys=script_keys, args=script_args)
            except RedisError as exc:
                raise self._error("write the change", slot, exc) from exc
            if not lease.wants_lease(reply):
                self._checked(reply, args, slot, "write the change")
                return
            lease.taken(
                *self._run_lease(self._lease(slot, lease.lock_key, lease.deadline), lease.lock_key)
            )

    def _apply_call(
        self,
        scope: str,
        scope_id: str,
        key: str,
        delta: Delta,
        expected: str | None,
        journal: JournalWrite | None,
    ) -> tuple[Slot, list[str], list[Any], str, str]:
        """The apply script's slot, KEYS, ARGV, new revision and time (both paths)."""
        slot = (str(scope), scope_id, key)
        names, triple, _lock = self._names(slot)
        keys = list(names)
        now = repr(time.time())
        if journal is None:
            token = new_revision()
            args: list[Any] = [_condition(expected), token, now, triple, delta.count]
            args += ["", "", 0]
        else:
            token = journal.revision or new_revision()
            args = [_condition(expected), token, now, triple, delta.count]
            args += [journal.seq, journal.text, journal.limit]
        for kind, position, entry in delta.ops:
            body = "" if kind == "delete" else encode_json(entry, slot, f"entry at {position}")
            args += [_OPS[kind], position, body]
        return slot, keys, args, token, now

    def migrate_keys(self) -> int:
        """Rename the keys of an older layout (``<ns>:[...]:entries``) to hash-tagged ones.

        Run once after upgrading, with no writer running: each slot's keys are
        renamed to ``<ns>:{[...]}:<suffix>`` (the slot and journal indexes keep
        their members). Returns the number of keys renamed; 0 on a current
        layout. Not available on a cluster (the old keys had no hash tag).
        """
        if self.cluster:
            raise StorageError(f"migrate_keys cannot run on a cluster (Redis {self.server})")
        prefix = f"{self.namespace}:["
        renamed = 0
        try:
            for raw in self.client.scan_iter(match=f"{self.namespace}:[[]*", count=1000):
                name = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
                head, _, suffix = name.rpartition(":")
                if not name.startswith(prefix) or suffix not in (
                    "entries",
                    "meta",
                    "journal",
                    "lock",
                ):
                    continue
                triple = head[len(self.namespace) + 1 :]
                self.client.renamenx(name, f"{self.namespace}:{{{triple}}}:{suffix}")
                renamed += 1
        except RedisError as exc:
            raise self._error("migrate the keys", None, exc) from exc
        return renamed

    # -- journal -----------------------------------------------------------------------------

    def _journal_key(self, slot: Slot) -> str:
        return slot_keys(slot, self.namespace)[2]

    def journal_last(self, scope: str, scope_id: str, key: str) -> int:
        """The slot's newest record number (0: none)."""
        slot = (str(scope), scope_id, key)
        try:
            rows = self.client.xrevrange(self._journal_key(slot), count=1)
        except RedisError as exc:
            raise self._error("read the journal", slot, exc) from exc
        if not rows:
            return 0
        return _record_seq(rows[0][1], slot)

    def journal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """The slot's kept records ``(seq, text)``, oldest first."""
        slot = (str(scope), scope_id, key)
        try:
            rows = self.client.xrange(self._journal_key(slot))
        except RedisError as exc:
            raise self._error("read the journal", slot, exc) from exc
        return [(_record_seq(fields, slot), fields.get(b"r")) for _rid, fields in rows]

    def journal_since(self, scope: str, scope_id: str, key: str, seq: int) -> list[tuple[int, Any]]:
        """The slot's kept records numbered after ``seq``, oldest first (a follower's read).

        Records are numbered one by one, so the newest ``last - seq`` entries
        are read from the stream's end (a few entries, not the whole journal).
        """
        last = self.journal_last(scope, scope_id, key)
        if last <= seq:
            return []
        slot = (str(scope), scope_id, key)
        try:
            rows = self.client.xrevrange(self._journal_key(slot), count=last - seq)
        except RedisError as exc:
            raise self._error("read the journal", slot, exc) from exc
        out = [(_record_seq(fields, slot), fields.get(b"r")) for _rid, fields in reversed(rows)]
        return [(n, text) for n, text in out if n > seq]

    def journal_counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps (one XLEN per slot, pipelined)."""
        try:
            members = self.client.smembers(self.journals_key)
            slots = sorted(triple_of(m) for m in members)
            pipe = self.client.pipeline(transaction=False)
            for slot in slots:
                pipe.xlen(self._journal_key(slot))
            return {s: int(n) for s, n in zip(slots, pipe.execute(), strict=True) if n}
        except RedisError as exc:
            raise self._error("list the journals", None, exc) from exc
        except (ValueError, TypeError) as exc:
            raise StorageError(
                f"journal index {self.journals_key!r} holds a member that is not a slot "
                f"on Redis {self.server} ({exc})"
            ) from exc

    def delete(
        self,
        scope: str,
        scope_id: str,
        key: str,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> bool:
        """Empty the slot (its journal is kept); return whether it held a value."""
        slot, keys = self._keys(scope, scope_id, key)
        reply = self._run(
            self._delete,
            keys,
            [_condition(expected), _triple(slot)],
            slot,
            "write (delete) the slot",
        )
        if self.cluster:
            with suppress(RedisError):
                self.client.zrem(self.index_key, _triple(slot))
        return bool(reply[1])

    # -- native async (redis.asyncio) ----------------------------------------------------------

    def native_async(self) -> bool:
        """Whether the async API runs on ``redis.asyncio`` (not on a cluster; Redis 7 or later).

        Then ``aappend`` runs the append's steps (:mod:`flowdrop_core.storage._steps`) on
        the async twins below: the same scripts, the same reply checks, no thread.
        """
        return not self.cluster and not self._old_server

    def _aside(self) -> _AsyncSide:
        """This event loop's async client and scripts (made on first use, again after a fork)."""
        loop = asyncio.get_running_loop()
        side = self._asides.get(loop)
        if side is None or side.generation != fork_generation():
            if side is not None:  # the parent's: its connections are not this process's
                side.forget()
            self._forget_closed_loops()
            # The sync pool's idle connections (the check at connect) are closed, so a
            # process that appends only from async code stays within max_connections.
            with suppress(RedisError, AttributeError, TypeError):
                self.client.connection_pool.disconnect(inuse_connections=False)
            side = _AsyncSide(self, loop)
            with self._asides_guard:
                self._asides[loop] = side
        return side

    def _forget_closed_loops(self) -> None:
        """Drop the async sides of loops closed without closing them (their sockets go with them).

        ``asyncio.run`` closes a loop's side as the loop shuts down
        (:meth:`_AsyncSide.close_with_loop`); a loop closed by hand without
        ``shutdown_asyncgens`` leaves it here, and a closed loop can use it no more.
        """
        with self._asides_guard:
            closed = [(loop, side) for loop, side in self._asides.items() if loop.is_closed()]
            for loop, _side in closed:
                del self._asides[loop]
        for _loop, side in closed:
            side.forget()

    async def aclose(self) -> None:
        """Close the current event loop's async connections (the sync ones: :meth:`close`).

        A loop run by ``asyncio.run`` has them closed as it ends without this call.
        """
        with self._asides_guard:
            side = self._asides.pop(asyncio.get_running_loop(), None)
        if side is not None:
            await side.aclose()
            side.forget()

    async def _averified(self, what: str, slot: Slot) -> _AsyncSide:
        if not self._verified:  # the server was unreachable at connect: check it now, once
            await asyncio.to_thread(self._verify, what, slot)
        return self._aside()

    async def aread(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """:meth:`read` on ``redis.asyncio``: the same read-only script and checks."""
        slot, keys = self._keys(scope, scope_id, key)
        side = await self._averified("read the slot", slot)
        try:
            reply = await side.read(
                keys=[keys[0], keys[1], *keys[3:4]], args=[self._names(slot)[1]]
            )
        except ResponseError as exc:
            if "#!lua" not in str(exc) and "near '#'" not in str(exc):
                raise self._error("read the slot", slot, exc) from exc
            self._old_server = True  # Redis before 7: no script flags; the sync read knows how
            return await asyncio.to_thread(self.read, scope, scope_id, key)
        except RedisError as exc:
            raise self._error("read the slot", slot, exc) from exc
        if reply[0] == b"evicting":
            raise self._evicting(reply[1].decode("utf-8", "replace"), slot, "read")
        return self._snapshot(slot, *reply)

    async def arevision(self, scope: str, scope_id: str, key: str) -> str | None:
        """:meth:`revision` on ``redis.asyncio``."""
        slot, (_entries, meta, *_rest) = self._keys(scope, scope_id, key)
        try:
            rev = await self._aside().client.hget(meta, "rev")
        except RedisError as exc:
            raise self._error("read the slot's revision", slot, exc) from exc
        return None if rev is None else rev.decode("utf-8")

    async def aapply(
        self,
        scope: str,
        scope_id: str,
        key: str,
        delta: Delta,
        *,
        expected: str | None,
        timeout: float | None = None,
        journal: JournalWrite | None = None,
    ) -> str:
        """:meth:`apply` on ``redis.asyncio``: the same script, arguments and reply checks."""
        slot, keys, args, token, _now = self._apply_call(
            scope, scope_id, key, delta, expected, journal
        )
        side = await self._averified("write the change", slot)
        try:
            lease = _WRITE_LEASE.get()
            if lease is None or lease.slot != slot or lease.state == _UNAVAILABLE:
                try:
                    reply = await side.apply(keys=keys, args=args)
                except RedisError as exc:
                    raise self._error("write the change", slot, exc) from exc
                self._checked(reply, args, slot, "write the change")
            else:
                await self._arun_leased(side, lease, keys, args, slot)
        except StorageError as exc:
            lost = isinstance(exc.__cause__, RedisError) and delta.ops
            if not (lost and await awrite_landed(self, slot, token, journal)):
                raise
            _log.warning("the reply of a write to slot %s was lost; it landed", slot_label(*slot))
        if journal is not None and not delta.ops:
            return expected  # type: ignore[return-value]
        return token

    async def _arun_leased(
        self, side: _AsyncSide, lease: _WriteLease, keys: list[str], args: list[Any], slot: Slot
    ) -> None:
        """:meth:`_run_leased` on ``redis.asyncio``."""
        if lease.state == _WANTED:
            steps = self._lease(slot, lease.lock_key, lease.deadline)
            lease.taken(*await self._arun_lease(side, steps, lease.lock_key))
        while True:
            script_keys, script_args = lease.script_call(keys, args)
            try:
                reply = await side.apply_leased(keys=script_keys, args=script_args)
            except RedisError as exc:
                raise self._error("write the change", slot, exc) from exc
            if not lease.wants_lease(reply):
                self._checked(reply, args, slot, "write the change")
                return
            steps = self._lease(slot, lease.lock_key, lease.deadline)
            lease.taken(*await self._arun_lease(side, steps, lease.lock_key))

    async def ajournal_last(self, scope: str, scope_id: str, key: str) -> int:
        """:meth:`journal_last` on ``redis.asyncio``."""
        slot = (str(scope), scope_id, key)
        try:
            rows = await self._aside().client.xrevrange(self._journal_key(slot), count=1)
        except RedisError as exc:
            raise self._error("read the journal", slot, exc) from exc
        return _record_seq(rows[0][1], slot) if rows else 0

    async def ajournal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """:meth:`journal_records` on ``redis.asyncio``."""
        slot = (str(scope), scope_id, key)
        try:
            rows = await self._aside().client.xrange(self._journal_key(slot))
        except RedisError as exc:
            raise self._error("read the journal", slot, exc) from exc
        return [(_record_seq(fields, slot), fields.get(b"r")) for _rid, fields in rows]

    @asynccontextmanager
    async def alock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> AsyncIterator[bool]:
        """:meth:`lock` for async code: the slot's task lock, then the same lease (MEM-12).

        The lease's steps are :meth:`lock`'s own (:meth:`_lease`), run on
        ``redis.asyncio``; tasks of this event loop wait for one another on an
        ``asyncio.Lock`` per slot, threads and other processes on the lease.
        """
        slot, lock_key = self._lock_key(scope, scope_id, key)
        wait = check_timeout(timeout)
        deadline = time.monotonic() + wait
        side = self._aside()
        task_lock = side.locks.get(slot)
        got_task = await acquire_within(task_lock, wait)
        got, token = False, ""
        try:
            if got_task:
                got, token = await self._arun_lease(
                    side, self._lease(slot, lock_key, deadline), lock_key
                )
            yield got
        finally:
            try:
                if got:
                    with suppress(RedisError):  # the lease expires by itself
                        await side.unlock(keys=[lock_key], args=[token])
            finally:
                if got_task:
                    task_lock.release()

    def awrite_lock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> _AsyncWriteLock:
        """:meth:`write_lock` for async code: the slot's task lock now, the lease with the write.

        ``async with`` it: enters as whether the task lock was taken.
        """
        slot, lock_key = self._lock_key(scope, scope_id, key)
        wait = check_timeout(timeout)
        side = self._aside()
        lease = _WriteLease(slot, lock_key, time.monotonic() + wait)
        return _AsyncWriteLock(side, lease, side.locks.get(slot), wait)

    async def _arun_lease(self, side: _AsyncSide, steps: _LeaseSteps, lock_key: str) -> Any:
        """:meth:`_lease` on ``redis.asyncio``."""
        lease = int(LEASE_SECONDS * 1000)
        reply: Any = None
        error: BaseException | None = None
        while True:
            try:
                call = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            op = call[0]
            try:
                if op == "set":
                    reply = await side.client.set(lock_key, call[1], nx=True, px=lease)
                elif op == "get":
                    reply = await side.client.get(lock_key)
                elif op == "gone":
                    holder = self._holder_of(call[1])
                    if holder is not None:
                        try:
                            reply = not await side.client.execute_command(
                                "CLIENT", "LIST", "ID", holder
                            )
                        except ResponseError:  # CLIENT refused: wait for the lease to expire
                            reply = False
                elif op == "steal":
                    reply = await side.steal(keys=[lock_key], args=[call[1], call[2], lease])
                elif op == "sleep":
                    await asyncio.sleep(call[1])
                else:
                    reply = await side.holder_id(self)
            except RedisError as exc:
                error = exc

    # -- MEM-12 ------------------------------------------------------------------------------

    def _holder_id(self) -> int | None:
        """This process's liveness connection's CLIENT ID (the connection is opened once).

        The connection stays open, idle, for the life of the process: when the
        process dies the kernel closes it and the server forgets the id, which
        is how a waiter knows a lease's holder is gone. ``None`` when the
        server's ACL forbids CLIENT (or on a cluster): the lease still
        serializes, and a dead holder's lease is waited out until it expires
        (:data:`LEASE_SECONDS`), with a warning once.
        """
        if self._no_client or self.cluster:
            return None
        with self._alive_guard:
            pid = os.getpid()
            if self._alive is None or self._alive[0] != pid:
                conn = self.client.connection_pool.make_connection()
                conn.connect()
                try:
                    conn.send_command("CLIENT", "ID")
                    self._alive = (pid, conn, int(conn.read_response()))
                except ResponseError as exc:  # NOPERM: an ACL user without CLIENT
                    conn.disconnect()
                    self._no_client = True
                    _log.warning(
                        "MEM-12: Redis %s refuses CLIENT (%s): the slot lease still serializes "
                        "appends, but a killed holder's lease is waited out (up to %.0f s) "
                        "instead of taken over at once",
                        self.server,
                        exc,
                        LEASE_SECONDS,
                    )
                    return None
            return self._alive[2]

    def _holder_gone(self, value: bytes) -> bool:
        """Whether the lease ``value`` (``<client id>:<token>``) belongs to a closed connection."""
        holder = self._holder_of(value)
        if holder is None:
            return False
        try:
            return not self.client.execute_command("CLIENT", "LIST", "ID", holder)
        except ResponseError:  # CLIENT refused after all: wait for the lease to expire
            return False

    def _holder_of(self, value: bytes) -> str | None:
        """The CLIENT ID a lease ``value`` names, when its liveness can be asked (both paths)."""
        holder = value.split(b":", 1)[0]
        return holder.decode() if holder.isdigit() and not self._no_client else None

    @contextmanager
    def lock(self, scope: str, scope_id: str, key: str, timeout: float = 5.0) -> Iterator[bool]:
        """MEM-12: the slot's thread lock, then a lease (``SET NX PX``), waiting at most ``timeout``.

        Yields whether both were acquired; never raises for a timeout. The
        lease's value is ``<holder's CLIENT ID>:<random token>``, released only
        by its holder (a Lua compare-and-delete), and it expires by itself after
        :data:`LEASE_SECONDS`. A waiter checks every 50 ms whether the holder's
        connection still exists (``CLIENT LIST ID``); a holder killed
        mid-append (SIGKILL) has none, so the waiter takes the lease over
        at once instead of waiting for it to expire. The lease only makes
        waiting cheap: correctness comes from the conditional writes, which
        stay correct even when a lease is taken over under a slow holder.
        A lost connection while waiting yields ``False`` (unserialized: the
        write that follows fails with the connection error instead).
        """
        slot, lock_key = self._lock_key(scope, scope_id, key)
        deadline = time.monotonic() + check_timeout(timeout)
        with self._locks.held(slot, timeout) as got_thread:
            got, token = False, ""
            try:
                if got_thread:
                    got, token = self._run_lease(self._lease(slot, lock_key, deadline), lock_key)
                yield got
            finally:
                if got:
                    with suppress(RedisError):  # the lease expires by itself
                        self._unlock(keys=[lock_key], args=[token])

    @contextmanager
    def write_lock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> Iterator[bool]:
        """MEM-12 for an append: the slot's thread lock now, the lease with the append's write.

        The usual append is then one round trip, not three: its write script
        checks that no other writer holds the lease (scripts run one at a
        time, so a write finding it free ran as if under it) instead of a
        ``SET`` before and a release after. A write finding the lease held
        waits for it (as :meth:`lock` would, until the same deadline) and
        writes again under it; a write that conflicted takes the lease before
        the next try, so racing writers queue. Not obtained in time, the
        write raises :class:`LockUnavailable` (nothing written) and the append
        goes on unserialized. On a cluster this is :meth:`lock`.
        """
        if self.cluster:
            with self.lock(scope, scope_id, key, timeout) as got:
                yield got
            return
        slot, lock_key = self._lock_key(scope, scope_id, key)
        wait = check_timeout(timeout)
        lease = _WriteLease(slot, lock_key, time.monotonic() + wait)
        with self._locks.held(slot, wait) as got_thread:
            if not got_thread:
                yield False
                return
            mark = _WRITE_LEASE.set(lease)
            try:
                yield True
            finally:
                _WRITE_LEASE.reset(mark)
                if lease.state == _TAKEN:
                    with suppress(RedisError):  # the lease expires by itself
                        self._unlock(keys=[lock_key], args=[lease.token])

    def _lock_key(self, scope: str, scope_id: str, key: str) -> tuple[Slot, str]:
        slot = (str(scope), scope_id, key)
        return slot, self._names(slot)[2]

    def _lease(self, slot: Slot, lock_key: str, deadline: float) -> _LeaseSteps:
        """MEM-12's lease as Redis calls, without I/O: :meth:`lock` and :meth:`alock` run it.

        Yields ``("holder",)``, ``("set", token)``, ``("get",)``, ``("gone", value)``,
        ``("steal", value, token)`` and ``("sleep", seconds)``; returns whether the
        lease was taken and its token. A Redis error ends the wait unserialized.
        """
        got = False
        token = ""
        delay = _POLL_MIN
        next_check = time.monotonic() + _LIVENESS_EVERY
        while True:
            try:
                if not token:
                    holder = yield ("holder",)
                    token = f"{'-' if holder is None else holder}:{uuid.uuid4().hex}"
                got = bool((yield ("set", token)))
                if not got and time.monotonic() >= next_check:
                    next_check = time.monotonic() + _LIVENESS_EVERY
                    held = yield ("get",)
                    if held is not None and (yield ("gone", held)):
                        got = bool((yield ("steal", held, token)))
            except RedisError as exc:
                _log.warning(
                    "MEM-12: cannot take the lease on slot %s (%s)", slot_label(*slot), exc
                )
                break
            remaining = deadline - time.monotonic()
            if got or remaining <= 0:
                break
            yield ("sleep", min(delay, remaining))
            delay = min(delay * 2, _POLL_MAX)
        return got, token

    def _run_lease(self, steps: _LeaseSteps, lock_key: str) -> tuple[bool, str]:
        """:meth:`_lease` on the sync client."""
        lease = int(LEASE_SECONDS * 1000)
        reply: Any = None
        error: BaseException | None = None
        while True:
            try:
                call = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            reply, error = None, None
            op = call[0]
            try:
                if op == "set":
                    reply = self.client.set(lock_key, call[1], nx=True, px=lease)
                elif op == "get":
                    reply = self.client.get(lock_key)
                elif op == "gone":
                    reply = self._holder_gone(call[1])
                elif op == "steal":
                    reply = self._steal(keys=[lock_key], args=[call[1], call[2], lease])
                elif op == "sleep":
                    time.sleep(call[1])
                else:
                    reply = self._holder_id()
            except RedisError as exc:
                error = exc


def _record_seq(fields: dict[bytes, bytes], slot: Slot) -> int:
    """A journal stream entry's record number (``s``; older entries only have it in ``r``)."""
    try:
        if b"s" in fields:
            return int(fields[b"s"])
        return int(json.loads(fields[b"r"])["seq"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StorageError.for_slot(f"a journal entry has no record number ({exc})", slot) from exc


def _decode_entries(items: list[bytes], slot: Slot) -> list[Any]:
    """Every entry in one pass; on failure, name the bad one.

    A list element is exactly one entry: an element holding two JSON values
    (``{...},{...}``) would read as two once joined, so a count that differs
    from the list's length is decoded element by element, which names it. The
    bounds on depth and numbers are the other stores' (``decode_entries``).
    """
    return decode_entries(items, slot)


class _AsyncWriteLock:
    """:meth:`RedisStore.awrite_lock`'s block (a class: a generator-based one costs more CPU).

    Entered: the slot's task lock (at most ``wait``), then the block's lease
    is the task's :data:`_WRITE_LEASE`, which its apply takes with the write
    (MEM-12). Left: the lease released if it was taken, then the task lock.
    """

    __slots__ = ("_lease", "_mark", "_side", "_task_lock", "_wait")

    def __init__(self, side: _AsyncSide, lease: _WriteLease, task_lock: Any, wait: float) -> None:
        self._side, self._lease, self._task_lock, self._wait = side, lease, task_lock, wait
        self._mark: contextvars.Token[_WriteLease | None] | None = None

    async def __aenter__(self) -> bool:
        if not await acquire_within(self._task_lock, self._wait):
            return False
        self._mark = _WRITE_LEASE.set(self._lease)
        return True

    async def __aexit__(self, *exc_info: object) -> None:
        mark, self._mark = self._mark, None
        if mark is None:  # the task lock was not taken
            return
        _WRITE_LEASE.reset(mark)
        lease = self._lease
        try:
            if lease.state == _TAKEN:
                with suppress(RedisError):  # the lease expires by itself
                    await self._side.unlock(keys=[lease.lock_key], args=[lease.token])
        finally:
            self._task_lock.release()


class _AsyncSide:
    """A store's ``redis.asyncio`` client for one event loop, its scripts and task locks.

    Made from the sync client's connection settings, with a blocking pool of
    the store's ``async_workers`` connections: a hundred tasks wait for a
    connection instead of opening a hundred.
    """

    def __init__(self, store: RedisStore, loop: asyncio.AbstractEventLoop) -> None:
        import redis.asyncio as aredis

        self.generation = fork_generation()
        self.loop = loop
        self.closed = False
        sync_pool = store.client.connection_pool
        kind = getattr(aredis.connection, sync_pool.connection_class.__name__, None)
        kind = kind if kind is not None else aredis.Connection
        accepted: set[str] = set()
        for cls in kind.__mro__:
            init = cls.__dict__.get("__init__")
            if init is not None:
                accepted.update(inspect.signature(init).parameters)
        kwargs = {
            k: v
            for k, v in sync_pool.connection_kwargs.items()
            if k in accepted and k not in _SYNC_ONLY
        }
        self.client: Any = aredis.Redis(
            connection_pool=_gated_pool(
                kind,
                store.async_workers,
                max(30.0, float(kwargs.get("socket_timeout") or 0.0)),
                kwargs,
            )
        )
        self.apply = self.client.register_script(_APPLY)
        self.apply_leased = self.client.register_script(_APPLY_LEASED)
        self.read = self.client.register_script(_READ)
        self.unlock = self.client.register_script(_UNLOCK)
        self.steal = self.client.register_script(_STEAL)
        self.locks = SlotLocks(asyncio.Lock)
        self._holder: tuple[Any, int] | None = None
        self._holder_guard = asyncio.Lock()
        self._asides, self._asides_guard = store._asides, store._asides_guard
        self._closer = self.close_with_loop()
        with suppress(StopIteration):  # its first step runs to its yield: started on the loop
            self._closer.__anext__().send(None)

    async def close_with_loop(self) -> AsyncGenerator[None, None]:
        """Closes this side's connections when its loop shuts down, as ``asyncio.run`` ends.

        A loop's ``shutdown_asyncgens`` closes every async generator started on
        it, and this one is started when the side is made: its ``finally`` then
        runs on the loop while it still runs. A loop ended, its pool could
        never be used again, and another loop opens its own.
        """
        try:
            yield
        finally:
            if not self.closed and _running_loop() is self.loop:
                with self._asides_guard:
                    if self._asides.get(self.loop) is self:
                        del self._asides[self.loop]
                await self.aclose()

    async def aclose(self) -> None:
        """Close the pool's connections and the lease connection."""
        if self.closed:
            return
        self.closed = True
        holder, self._holder = self._holder, None
        try:
            if holder is not None:
                await holder[0].disconnect()
        finally:  # the pool is the side's own: the client does not close it by itself
            await self.client.aclose(close_connection_pool=True)

    def forget(self) -> None:
        """End :meth:`close_with_loop` without closing (a closed loop, a parent's or closed side)."""
        self.closed = True
        with suppress(StopIteration):
            self._closer.aclose().send(None)

    async def holder_id(self, store: RedisStore) -> int | None:
        """The CLIENT ID this loop's leases carry: of its own idle connection, opened once.

        :meth:`RedisStore._holder_id`'s twin: the connection lives as long as
        this loop's client, so a waiter sees a lease of a loop or process that
        is gone as free. ``None`` when CLIENT is refused (the lease expires).
        """
        if store._no_client:
            return None
        if self._holder is None:
            async with self._holder_guard:  # one connection, however many tasks ask at once
                if self._holder is None:
                    conn = self.client.connection_pool.make_connection()
                    await conn.connect()
                    try:
                        await conn.send_command("CLIENT", "ID")
                        ident = int(await conn.read_response())
                    except ResponseError as exc:  # NOPERM: an ACL user without CLIENT
                        await conn.disconnect()
                        store._no_client = True
                        _log.warning("MEM-12: Redis %s refuses CLIENT (%s)", store.server, exc)
                        return None
                    self._holder = (conn, ident)
        return self._holder[1]


def _gated_pool(kind: Any, size: int, wait: float, kwargs: dict[str, Any]) -> Any:
    """A ``redis.asyncio`` pool of at most ``size`` connections that tasks enter in turn.

    ``BlockingConnectionPool`` is not fair: a task giving a connection back
    takes it again for its next command before a waiter wakes, so with more
    tasks than connections some wait for seconds (measured: 2 s of a 2 s run).
    Here a FIFO ``asyncio.Semaphore`` of ``size`` is the queue and the pool
    behind it never runs out; a task waiting longer than ``wait`` gets the
    blocking pool's error.
    """
    import redis.asyncio as aredis
    from redis.exceptions import ConnectionError as NoConnection

    class GatedPool(aredis.ConnectionPool):
        def __init__(self) -> None:
            super().__init__(connection_class=kind, max_connections=size, **kwargs)
            self._turns = asyncio.Semaphore(size)

        async def get_connection(self, *args: Any, **options: Any) -> Any:
            if self._turns.locked():  # all in use: queue, at most ``wait``
                try:
                    async with asyncio.timeout(wait):
                        await self._turns.acquire()
                except TimeoutError as exc:
                    raise NoConnection("No connection available.") from exc
            else:  # a turn is free and nobody queues: taken without a timer
                await self._turns.acquire()
            try:
                return await super().get_connection(*args, **options)
            except BaseException:
                self._turns.release()
                raise

        async def release(self, connection: Any) -> None:
            try:
                await super().release(connection)
            finally:
                self._turns.release()

    return GatedPool()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop of this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
