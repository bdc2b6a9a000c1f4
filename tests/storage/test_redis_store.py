"""RedisStore on a real redis-server: key namespacing, isolation, connection failures."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis_server import RedisServer, require_redis_server

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import (
    Delta,
    Op,
    RevisionConflict,
    Snapshot,
    StorageError,
    Store,
    apply_ops,
)
from flowdrop_core.storage.redis_store import REDIS_ENV, RedisStore, slot_keys, slot_prefix

CTX = {"session_id": "s1"}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# -- key encoding ------------------------------------------------------------------------------

#: Parts chosen to collide under any naive join: separators, quotes, escapes, NUL, unicode.
TRICKY = ["a", "a:b", "a:", ":b", "", "[", '"', '","', "\\", "\x00", "a\x00b", "é", "e\u0301", "😀"]


def test_no_two_triples_share_a_key() -> None:
    """Every triple over the tricky parts gets its own prefix and its own keys."""
    triples = list(itertools.product(TRICKY, repeat=3))
    prefixes = {slot_prefix(t) for t in triples}
    assert len(prefixes) == len(triples)
    all_keys = [k for t in triples for k in slot_keys(t)]
    assert len(set(all_keys)) == len(all_keys)
    # and the prefix gives the triple back: nothing is lost in the encoding
    for t in triples[:: len(TRICKY)]:
        assert tuple(json.loads(slot_prefix(t).split(":", 1)[1][1:-1])) == t


def test_no_key_is_a_prefix_collision_with_another_slot() -> None:
    """One slot's keys never start with another slot's prefix plus ':' (the suffix space)."""
    triples = list(itertools.product(["a", "a:b", "b", "\x00", ""], repeat=3))
    prefixes = {t: slot_prefix(t) + ":" for t in triples}
    for t, keys in ((t, slot_keys(t)) for t in triples):
        for other, prefix in prefixes.items():
            if other != t:
                assert not any(k.startswith(prefix) for k in keys), (t, other)


@pytest.mark.parametrize("part", [0, 1, 2])
@pytest.mark.parametrize(("left", "right"), [("a:b", "a\x00b"), ("é", "e\u0301"), ("x", "x ")])
def test_tricky_parts_are_separate_slots_on_the_server(
    redis_url: str, part: int, left: str, right: str
) -> None:
    """Two triples differing in one part only, by a separator, NUL or normalization, stay apart."""
    store = RedisStore(redis_url)
    a = ["user", "7", "chat"]
    b = list(a)
    a[part], b[part] = left, right
    store.set(*a, [user("left")])
    store.set(*b, [user("right")])
    assert store.get(*a) == ([user("left")], True)
    assert store.get(*b) == ([user("right")], True)
    assert sorted(store.slots()) == sorted([tuple(a), tuple(b)])
    assert store.delete(*a) is True
    assert store.get(*b)[1] is True and store.get(*a)[1] is False


def test_namespace_separates_deployments(redis_url: str) -> None:
    one, two = RedisStore(redis_url, namespace="one"), RedisStore(redis_url, namespace="two")
    one.set("session", "s", "k", [user("one")])
    assert two.get("session", "s", "k") == (None, False)
    assert two.slots() == [] and one.slots() == [("session", "s", "k")]


@pytest.mark.parametrize("namespace", ["", "a:b"])
def test_bad_namespace_is_rejected(namespace: str) -> None:
    with pytest.raises(ValueError, match="namespace"):
        RedisStore("redis://127.0.0.1:1/0", namespace=namespace)


def test_url_from_environment(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REDIS_ENV, redis_url)
    store = RedisStore()
    store.set("global", "", "k", {"a": 1})
    assert RedisStore(redis_url).get("global", "", "k") == ({"a": 1}, True)


def test_no_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REDIS_ENV, raising=False)
    with pytest.raises(ValueError, match=REDIS_ENV):
        RedisStore()


def test_values_that_are_not_lists_round_trip(redis_url: str) -> None:
    store = RedisStore(redis_url)
    for value in ({"a": [1, 2]}, "text", 3, None, []):
        store.set("global", "", "v", value)
        assert store.get("global", "", "v") == (value, True)


def test_slot_times_are_last_writes(redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.set("session", "a", "k", [user("1")])
    store.set("session", "b", "k", [user("2")])
    times = dict(store.slot_times())
    assert times[("session", "a", "k")] <= times[("session", "b", "k")]


# -- isolation through the buffer (the shared fixture runs these for every backend too) --------


def test_two_sessions_and_two_keys_never_see_each_other(store: Store) -> None:
    a = ConversationBuffer(scope="session", key="chat", store=store)
    b = ConversationBuffer(scope="session", key="notes", store=store)
    a.append(user("s1 chat"), {"session_id": "s1"})
    a.append(user("s2 chat"), {"session_id": "s2"})
    b.append(user("s1 notes"), {"session_id": "s1"})
    assert [m["content"] for m in a.messages({"session_id": "s1"})] == ["s1 chat"]
    assert [m["content"] for m in a.messages({"session_id": "s2"})] == ["s2 chat"]
    assert [m["content"] for m in b.messages({"session_id": "s1"})] == ["s1 notes"]
    assert b.messages({"session_id": "s2"}) == []


# -- connection failures -------------------------------------------------------------------------


@pytest.fixture
def own_server(tmp_path: Path) -> Any:
    """A server of the test's own, which the test may stop and start again."""
    server = RedisServer(require_redis_server(), tmp_path / "redis", persist=True)
    server.start()
    yield server
    server.stop()


def test_unreachable_server_is_an_error_naming_the_slot() -> None:
    from redis_server import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=1)
    buf = ConversationBuffer(store=store, lock_timeout=1)
    with pytest.raises(StorageError) as err:
        buf.append(user("hello"), CTX)
    text = str(err.value)
    assert "slot (scope='session', scope_id='s1', key='chat_history')" in text
    assert "Redis 127.0.0.1:" in text


def test_redis_stopped_mid_run_then_back(own_server: RedisServer) -> None:
    """Appends fail clearly while Redis is down, write nothing, and work again once it is back."""
    store = RedisStore(own_server.url, socket_timeout=1)
    buf = ConversationBuffer(store=store, lock_timeout=1)
    for k in range(3):
        assert buf.append(user(f"before {k}"), CTX).appended == 1
    own_server.stop()
    for k in range(3):
        with pytest.raises(StorageError) as err:
            buf.append(user(f"while down {k}"), CTX)
        text = str(err.value)
        assert f"on Redis 127.0.0.1:{own_server.port}/0 (ConnectionError" in text
        assert "slot (scope='session', scope_id='s1', key='chat_history')" in text
    own_server.start()  # same port, same append-only file: the data written before is back
    res = buf.append(user("after"), CTX)  # same store, same buffer object: no restart
    assert [m["content"] for m in res.messages or []] == [
        "before 0",
        "before 1",
        "before 2",
        "after",
    ]
    assert res.appended == 1


# -- the store protocol: conditional writes and deltas -------------------------------------------


def test_conditional_writes(redis_url: str) -> None:
    store = RedisStore(redis_url)
    slot = ("session", "s", "k")
    first = store.set(*slot, [user("a")], expected=None)
    with pytest.raises(RevisionConflict) as err:
        store.set(*slot, [user("b")], expected=None)
    assert (err.value.expected, err.value.actual) == (None, first)
    with pytest.raises(RevisionConflict):
        store.apply(*slot, Delta((Op("insert", 1, user("b")),), 2), expected="stale")
    with pytest.raises(RevisionConflict):
        store.delete(*slot, expected="stale")
    assert store.read(*slot) == Snapshot([user("a")], True, first)  # nothing written
    second = store.apply(*slot, Delta((Op("insert", 1, user("b")),), 2), expected=first)
    assert second != first and store.read(*slot) == Snapshot([user("a"), user("b")], True, second)
    assert store.delete(*slot, expected=second) is True
    assert store.read(*slot) == Snapshot(None, False, None)
    assert store.apply(*slot, Delta((Op("insert", 0, user("c")),), 1), expected=None)
    assert store.get(*slot) == ([user("c")], True)


def test_bad_delta_writes_nothing(redis_url: str) -> None:
    store = RedisStore(redis_url)
    slot = ("session", "s", "k")
    rev = store.set(*slot, [user("a"), user("b")])
    bad = [
        Delta((Op("insert", 1, user("x")), Op("delete", 5)), 2),  # out of range after a valid op
        Delta((Op("insert", 2, user("x")),), 2),  # count mismatch
        Delta((Op("replace", -1, user("x")),), 2),
    ]
    for delta in bad:
        with pytest.raises(StorageError, match="nothing was written"):
            store.apply(*slot, delta, expected=rev)
    assert store.read(*slot) == Snapshot([user("a"), user("b")], True, rev)
    store.set(*slot, {"plain": 1})
    with pytest.raises(StorageError, match="not a conversation buffer"):
        store.apply(*slot, Delta((Op("insert", 0, user("x")),), 1), expected=store.revision(*slot))


@st.composite
def _deltas(draw: st.DrawFn, size: int) -> Delta:
    ops = []
    for n in range(draw(st.integers(0, 6))):
        kinds = ["insert"] + (["replace", "delete"] if size else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "insert":
            pos = draw(st.integers(0, size))
            size += 1
        else:
            pos = draw(st.integers(0, size - 1))
            size -= kind == "delete"
        ops.append(Op(kind, pos, None if kind == "delete" else user(f"{kind}{n}")))
    return Delta(tuple(ops), size)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_apply_matches_the_reference_semantics(redis_url: str, data: st.DataObject) -> None:
    """Any delta, applied as Redis list operations, gives what apply_ops gives on a list."""
    store = RedisStore(redis_url)
    slot = ("session", "prop", "k")
    start = [user(f"e{k}") for k in range(data.draw(st.integers(0, 6)))]
    rev = store.set(*slot, start)
    expected = list(start)
    for _ in range(3):
        delta = data.draw(_deltas(len(expected)))
        rev = store.apply(*slot, delta, expected=rev)
        apply_ops(expected, delta.ops)
        assert store.read(*slot) == Snapshot(expected, True, rev)
