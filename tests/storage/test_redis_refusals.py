"""Redis refuses what would lose turns: evicting policies, vanished keys, users without commands.

Each test starts its own real ``redis-server`` on a free local port, because it
changes the server's configuration (``maxmemory``, ``maxmemory-policy``, ACL users).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis_server import RedisServer, require_redis_server

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import StorageError
from flowdrop_core.storage.redis_store import NEEDED_COMMANDS, RedisStore, slot_keys

EVICTING = ["allkeys-lru", "allkeys-lfu", "allkeys-random"]
VOLATILE = ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own."""
    srv = RedisServer(require_redis_server(), tmp_path / "redis")
    srv.start()
    yield srv
    srv.stop()


def admin_of(server: RedisServer) -> Any:
    """A plain redis client to the server (no store checks)."""
    import redis

    return redis.Redis.from_url(server.url)


def big(text: str) -> dict[str, Any]:
    """A user turn of about 8 KB, so a few hundred fill a small maxmemory."""
    return {"role": "user", "content": text + " " + "x" * 8000}


def small_maxmemory(admin: Any, policy: str, room: int = 3_000_000) -> None:
    admin.config_set("maxmemory-policy", policy)
    admin.config_set("maxmemory", str(int(admin.info("memory")["used_memory"]) + room))


def fill(store: RedisStore, slots: int, per_slot: int) -> tuple[dict[str, list[str]], list[str]]:
    """Append to ``slots`` slots in turn; each slot's acknowledged turns, and every error."""
    buf = ConversationBuffer(store=store, journal=1000)
    acked: dict[str, list[str]] = {f"s{n}": [] for n in range(slots)}
    errors: list[str] = []
    for j in range(per_slot):
        for sid, turns in acked.items():
            try:
                buf.append(big(f"{sid}:{j}"), {"session_id": sid})
            except StorageError as exc:
                assert f"scope_id='{sid}'" in str(exc)  # a failure names the slot
                errors.append(str(exc))
                continue
            turns.append(f"{sid}:{j}")
    return acked, errors


def check_no_acknowledged_turn_lost(store: RedisStore, acked: dict[str, list[str]]) -> int:
    """Every slot reads whole, or as an error naming eviction; never short, never empty.

    Returns how many slots read as the eviction error.
    """
    errors = 0
    for sid, turns in acked.items():
        slot = ("session", sid, "chat_history")
        try:
            value, found = store.get(*slot)
        except StorageError as exc:
            assert f"scope_id='{sid}'" in str(exc) and "evict" in str(exc), str(exc)
            assert "noeviction" in str(exc)  # and the fix
            errors += 1
            continue
        got = [m["content"].split(" ")[0] for m in value] if found else []
        assert got == turns, (sid, len(got), len(turns))
    return errors


# -- an evicting policy ----------------------------------------------------------------------


@pytest.mark.parametrize("policy", EVICTING)
def test_an_evicting_policy_is_an_error_at_connect(server: RedisServer, policy: str) -> None:
    """allkeys-* may evict any key, and every key of a slot has no TTL: refused, with the fix."""
    admin = admin_of(server)
    small_maxmemory(admin, policy)
    started = time.monotonic()
    with pytest.raises(StorageError) as err:
        RedisStore(server.url)
    assert time.monotonic() - started < 2
    text = str(err.value)
    assert f"maxmemory-policy {policy}" in text and "refuses to connect" in text
    assert "CONFIG SET maxmemory-policy noeviction" in text
    # The store that skips the check at connect still writes nothing under that policy.
    store = RedisStore(server.url, check_policy=False)
    assert store.policy == policy
    slot = ("session", "s", "chat_history")
    with pytest.raises(StorageError, match=f"maxmemory-policy {policy}.*nothing was written"):
        store.set(*slot, [{"role": "user", "content": "a"}])
    with pytest.raises(StorageError, match=f"maxmemory-policy {policy}.*read an empty slot"):
        ConversationBuffer(store=store).append(
            {"role": "user", "content": "a"}, {"session_id": "s"}
        )
    assert admin.keys("flowdrop:*") == []


@pytest.mark.parametrize("policy", VOLATILE)
def test_a_volatile_policy_is_accepted_and_evicts_no_turn(server: RedisServer, policy: str) -> None:
    """volatile-* evicts only keys with a TTL; the store's keys have none, so nothing is lost."""
    admin = admin_of(server)
    small_maxmemory(admin, policy)
    store = RedisStore(server.url)
    assert store.policy == policy
    acked, errors = fill(store, slots=4, per_slot=150)
    assert errors and all("OutOfMemoryError" in e and "nothing was written" in e for e in errors)
    assert check_no_acknowledged_turn_lost(store, acked) == 0
    assert all(acked.values())


@pytest.mark.parametrize("policy", EVICTING)
def test_a_policy_changed_after_connect_loses_no_acknowledged_turn(
    server: RedisServer, policy: str
) -> None:
    """The policy is switched under a connected writer, then another app fills the memory.

    Each write script reads the policy (INFO memory) before it writes, so no
    turn is acknowledged under the evicting policy; the turns acknowledged
    before the switch may then be evicted by other writers, and such a slot
    reads as an error naming eviction, never as a shorter or empty buffer.
    """
    admin = admin_of(server)
    small_maxmemory(admin, "noeviction", room=4_000_000)
    store = RedisStore(server.url)
    before, errors = fill(store, slots=8, per_slot=10)
    assert not errors and all(len(t) == 10 for t in before.values())
    admin.config_set("maxmemory-policy", policy)
    after, errors = fill(store, slots=8, per_slot=40)
    assert not any(after.values())  # not one turn acknowledged under the evicting policy
    assert len(errors) == 8 * 40 and all(f"maxmemory-policy {policy}" in e for e in errors)
    for n in range(1000):  # another application sharing the server: evicts our keys
        pipe = admin.pipeline(transaction=False)
        pipe.set(f"other:{n}", b"y" * 8000)
        for _ in range(30):  # hot keys, so allkeys-lfu prefers ours too
            pipe.get(f"other:{n}")
        pipe.execute()
    assert int(admin.info("stats")["evicted_keys"]) > 0
    acked = {sid: before[sid] + after[sid] for sid in before}
    evicted = check_no_acknowledged_turn_lost(store, acked)
    assert evicted > 0  # eviction did reach our slots: each one reads as the error


# -- a slot whose keys vanished --------------------------------------------------------------


@pytest.mark.parametrize("gone", ["entries", "meta", "entries+meta", "entries+meta+index"])
def test_a_slot_whose_keys_vanished_reads_as_eviction(server: RedisServer, gone: str) -> None:
    """Keys dropped one by one (as an eviction policy does) read as an error, never as empty."""
    admin = admin_of(server)
    store = RedisStore(server.url)
    slot = ("session", "s", "chat_history")
    buf = ConversationBuffer(store=store, journal=10)
    for n in range(3):
        buf.append({"role": "user", "content": str(n)}, {"session_id": "s"})
    entries, meta, _journal = slot_keys(slot)
    names = {"entries": entries, "meta": meta, "index": store.index_key}
    admin.config_set("maxmemory-policy", "allkeys-lru")  # the policy that dropped them
    admin.delete(*(names[part] for part in gone.split("+")))
    with pytest.raises(StorageError, match="evict") as err:
        store.get(*slot)
    assert "scope_id='s'" in str(err.value) and "noeviction" in str(err.value)
    with pytest.raises(StorageError, match="evict"):  # and no writer goes on into it
        buf.append({"role": "user", "content": "3"}, {"session_id": "s"})


# -- a user without a command the store needs ------------------------------------------------


def acl_user(admin: Any, name: str, *rules: str) -> None:
    admin.execute_command("ACL", "SETUSER", name, "reset", "on", ">pw", *rules)


@pytest.mark.parametrize(
    ("rules", "named"),
    [
        (["~*", "+@all", "-eval", "-evalsha"], "evalsha"),
        (["~*", "+@all", "-script"], "script"),
        (["~*", "+@all", "-xadd"], "XADD"),
        (["~*", "+@all", "-info"], "INFO"),
        (["~*", "+@read", "+@write"], "evalsha"),
        (["~other:*", "+@all"], "keys"),
    ],
)
def test_a_user_without_a_needed_command_is_told_at_connect(
    server: RedisServer, rules: list[str], named: str
) -> None:
    """One clear error at connect, in well under a second: no append waits, nothing written."""
    admin = admin_of(server)
    acl_user(admin, "app", *rules)
    url = f"redis://app:pw@127.0.0.1:{server.port}/0"
    started = time.monotonic()
    with pytest.raises(StorageError) as err:
        RedisStore(url)
    assert time.monotonic() - started < 2
    text = str(err.value)
    assert "Redis user 'app'" in text and named in text and "refuses to connect" in text
    assert "ACL SETUSER app" in text and "pw" not in text.replace("pwd", "")
    assert admin.keys("flowdrop:*") == []


def test_the_documented_commands_are_enough(server: RedisServer) -> None:
    """A user granted exactly what the error lists connects, appends, reads, lists and locks."""
    admin = admin_of(server)
    grants = ["+evalsha", "+script|load", *(f"+{c.lower()}" for c in NEEDED_COMMANDS)]
    acl_user(admin, "app", "~flowdrop:*", *grants)
    store = RedisStore(f"redis://app:pw@127.0.0.1:{server.port}/0")
    buf = ConversationBuffer(store=store, journal=10, lock_timeout=5)
    for n in range(3):
        result = buf.append({"role": "user", "content": str(n)}, {"session_id": "s"})
        assert result.serialized
    slot = ("session", "s", "chat_history")
    assert [m["content"] for m in store.get(*slot)[0]] == ["0", "1", "2"]
    assert store.listing() == {slot: (3, store.slot_times()[0][1])}
    assert store.journal_counts() == {slot: 3}
    assert store.delete(*slot) is True


def test_a_server_down_at_connect_is_checked_by_the_first_call_that_reaches_it(
    server: RedisServer,
) -> None:
    """Constructed while the server was down: the check runs, whole, on the first call."""
    server.stop()
    store = RedisStore(server.url, socket_timeout=1)
    with pytest.raises(StorageError, match=r"cannot read the slot.*ConnectionError"):
        ConversationBuffer(store=store).append(
            {"role": "user", "content": "a"}, {"session_id": "s"}
        )
    server.start()
    admin_of(server).execute_command("ACL", "SETUSER", "default", "-xadd")
    with pytest.raises(StorageError, match="XADD") as err:
        store.set("session", "s", "chat_history", [{"role": "user", "content": "a"}])
    assert "Redis user 'default'" in str(err.value)
    assert admin_of(server).keys("flowdrop:*") == []
