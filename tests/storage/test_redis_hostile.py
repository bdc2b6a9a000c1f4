"""A hostile Redis store: a list element holding two JSON values is one bad entry, named,
never two entries; garbage in the slot index is a clear error."""

from __future__ import annotations

import json

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import StorageError
from flowdrop_core.storage.redis_store import RedisStore, slot_keys
from flowdrop_core.store_browser import open_browser

SLOT = ("session", "s1", "chat_history")


def test_a_list_element_holding_two_objects_is_one_bad_entry(redis_url: str) -> None:
    store = RedisStore(redis_url)
    ConversationBuffer(scope="session", store=store).append(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        {"session_id": "s1"},
    )
    entries, _meta, _journal = slot_keys(SLOT, store.namespace)
    store.client.lset(
        entries, 1, b'{"role": "user", "content": "x"},{"role": "user", "content": "y"}'
    )
    with pytest.raises(StorageError) as err:
        store.get(*SLOT)
    assert "stored entry 1 is corrupt" in str(err.value)
    assert "session" in str(err.value) and "s1" in str(err.value)


def test_garbage_in_the_slot_index_is_a_clear_error(redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.client.zadd(store.index_key, {b"not json at all": 1.0})
    with pytest.raises(StorageError, match="holds a member that is not a slot"):
        open_browser(redis_url).slots()


@pytest.mark.parametrize(
    ("element", "message"),
    [
        (
            b'{"role":"user","content":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "bad stored entry: stored entry 1 is nested more than 101 levels (at character 125)",
        ),
        (b'{"role":"user","content":"x","n":NaN}', "stored entry 1 holds NaN, which is not"),
        (b'{"role":"user","content":"x","n":1e400}', "holds a number out of range (1e400)"),
    ],
    ids=["100000-deep", "nan", "1e400"],
)
def test_a_deep_or_out_of_range_element_is_a_located_bad_stored_entry(
    redis_url: str, element: bytes, message: str
) -> None:
    store = RedisStore(redis_url)
    ConversationBuffer(scope="session", store=store).append(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        {"session_id": "s1"},
    )
    entries, _meta, _journal = slot_keys(SLOT, store.namespace)
    store.client.lset(entries, 1, element)
    with pytest.raises(StorageError) as err:
        store.get(*SLOT)
    assert message in str(err.value)
    assert "s1" in str(err.value)


@pytest.mark.parametrize("score", [1e300, float("inf"), -5.0])
def test_a_last_write_out_of_range_in_the_index_is_a_located_error(
    redis_url: str, score: float
) -> None:
    store = RedisStore(redis_url)
    ConversationBuffer(scope="session", store=store).append(
        {"role": "user", "content": "a"}, {"session_id": "s1"}
    )
    store.client.zadd(store.index_key, {json.dumps(list(SLOT), separators=(",", ":")): score})
    with pytest.raises(StorageError, match=r"bad stored entry: last write .* is out of range"):
        open_browser(redis_url).slots()
