"""Storage backends and the scoped buffer: MEM-7 refusals, MEM-13 reads, writes only on change."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.context import Scope
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult, read_memory
from flowdrop_core.events import EventKind
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import (
    DB_ENV,
    Delta,
    MemoryStore,
    Snapshot,
    SQLiteStore,
    StorageError,
    Store,
    default_db_path,
)


class SpyStore:
    """Records every backend call, delegating to a real MemoryStore."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        self.calls.append(("get", (scope, scope_id, key)))
        return self.inner.get(scope, scope_id, key, default)

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        self.calls.append(("read", (scope, scope_id, key)))
        return self.inner.read(scope, scope_id, key)

    def set(self, scope: str, scope_id: str, key: str, value: Any, **kw: Any) -> str:
        self.calls.append(("set", (scope, scope_id, key)))
        return self.inner.set(scope, scope_id, key, value, **kw)

    def apply(self, scope: str, scope_id: str, key: str, delta: Delta, **kw: Any) -> str:
        self.calls.append(("apply", (scope, scope_id, key)))
        return self.inner.apply(scope, scope_id, key, delta, **kw)

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        self.calls.append(("revision", (scope, scope_id, key)))
        return self.inner.revision(scope, scope_id, key)

    def delete(self, scope: str, scope_id: str, key: str, **kw: Any) -> bool:
        self.calls.append(("delete", (scope, scope_id, key)))
        return self.inner.delete(scope, scope_id, key, **kw)

    def lock(
        self, scope: str, scope_id: str, key: str, timeout: float
    ) -> AbstractContextManager[bool]:
        self.calls.append(("lock", (scope, scope_id, key)))
        return self.inner.lock(scope, scope_id, key, timeout)

    def kinds(self) -> list[str]:
        return [c[0] for c in self.calls]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# -- the Store protocol, both backends ------------------------------------------------------


def test_backends_satisfy_protocol(store: Store) -> None:
    assert isinstance(store, Store)
    assert isinstance(SpyStore(), Store)


def test_get_set_delete_and_found_flag(store: Store) -> None:
    assert store.get("session", "s1", "k") == (None, False)
    assert store.get("session", "s1", "k", default="d") == ("d", False)
    store.set("session", "s1", "k", [{"role": "user", "content": "hi"}])
    assert store.get("session", "s1", "k", default="d") == (
        [{"role": "user", "content": "hi"}],
        True,
    )
    # falsy stored values are still found
    store.set("global", "", "empty", [])
    assert store.get("global", "", "empty", default="d") == ([], True)
    # slots are independent
    assert store.get("session", "s2", "k")[1] is False
    assert store.get("user", "s1", "k")[1] is False
    assert store.delete("session", "s1", "k") is True
    assert store.delete("session", "s1", "k") is False
    assert store.get("session", "s1", "k") == (None, False)


def test_stored_list_is_a_snapshot(store: Store) -> None:
    """Both backends: the list given to ``set`` and the list ``get`` returns are the caller's.

    Appending to, replacing items of or clearing either list never reaches
    the store, and a later ``set`` never changes a list read earlier. (Entry
    dicts are immutable by contract; MemoryStore shares them, see below.)
    """
    hi = {"role": "user", "content": "hi", "metadata": {}}
    value = [hi]
    store.set("session", "s1", "k", value)
    value.append(user("appended after set"))
    value[0] = user("replaced after set")
    got, _ = store.get("session", "s1", "k")
    assert got == [hi]
    got.append(user("appended after get"))
    earlier, _ = store.get("session", "s1", "k")
    got.clear()
    assert store.get("session", "s1", "k")[0] == [hi]
    store.set("session", "s1", "k", [user("other")])
    assert earlier == [hi]
    assert store.get("session", "s1", "k")[0] == [user("other")]


def test_sqlite_copies_entries_deeply(tmp_path: Path) -> None:
    """SQLite stores JSON text, so even a mutated entry dict cannot reach the stored value."""
    with SQLiteStore(tmp_path / "db.sqlite3") as store:
        value = [{"role": "user", "content": "hi", "metadata": {}}]
        store.set("session", "s1", "k", value)
        value[0]["content"] = "mutated after set"
        got, _ = store.get("session", "s1", "k")
        got[0]["metadata"]["x"] = "mutated after get"
        assert store.get("session", "s1", "k")[0] == [
            {"role": "user", "content": "hi", "metadata": {}}
        ]


def test_memory_store_shares_entries_without_copying() -> None:
    """MemoryStore's documented contract: no encoding, entries shared (they are immutable)."""
    store = MemoryStore()
    entry = {"role": "user", "content": "hi"}
    store.set("session", "s1", "k", [entry])
    assert store.get("session", "s1", "k")[0][0] is entry
    odd = {"not json": object()}  # any value is accepted; only SQLite requires JSON
    store.set("user", "7", "k", odd)
    assert store.get("user", "7", "k") == (odd, True)


def test_unserializable_value_is_an_error_naming_the_slot(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "db.sqlite3") as store:
        with pytest.raises(StorageError, match=r"scope='user', scope_id='7', key='k'"):
            store.set("user", "7", "k", {"bad": object()})
        assert store.get("user", "7", "k")[1] is False
        assert store.revision("user", "7", "k") is None


# -- revisions --------------------------------------------------------------------------------


def test_revision_tokens(store: Store) -> None:
    assert store.revision("session", "s1", "k") is None
    seen: set[str] = set()
    for i in range(3):
        token = store.set("session", "s1", "k", [user(str(i))])
        assert isinstance(token, str) and token not in seen
        assert store.revision("session", "s1", "k") == token
        seen.add(token)
    other = store.set("session", "s2", "k", [user("x")])
    assert other not in seen and store.revision("session", "s1", "k") == token
    assert store.delete("session", "s1", "k") is True
    assert store.revision("session", "s1", "k") is None
    again = store.set("session", "s1", "k", [user("0")])  # same value, after a delete
    assert again not in seen | {other}


def test_sqlite_revision_does_not_read_the_value(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with SQLiteStore(path) as store:
        store.set("session", "s1", "k", [user("hi")])
        raw = sqlite3.connect(path)
        raw.execute("UPDATE entry SET body='{corrupt'")
        raw.execute("UPDATE slot SET rev='r-manual' WHERE scope_id='s1'")
        raw.commit()
        raw.close()
        assert store.revision("session", "s1", "k") == "r-manual"  # no decode, no error
        with pytest.raises(StorageError, match="stored entry 0 is corrupt"):
            store.get("session", "s1", "k")


@pytest.mark.parametrize("with_rev", [False, True], ids=["no-rev", "rev"])
def test_sqlite_migrates_a_version_1_file(tmp_path: Path, with_rev: bool) -> None:
    """A file of the first layout (one JSON value per slot) is moved to one row per entry."""
    path = tmp_path / "old.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute(
        "CREATE TABLE slots (scope TEXT NOT NULL, scope_id TEXT NOT NULL, key TEXT NOT NULL, "
        "value TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, scope_id, key)) "
        "WITHOUT ROWID"
    )
    if with_rev:
        raw.execute("ALTER TABLE slots ADD COLUMN rev TEXT")
    raw.execute(
        "INSERT INTO slots (scope, scope_id, key, value, updated_at) "
        "VALUES ('session', 's1', 'chat_history', ?, 0)",
        ('[{"role":"user","content":"old"},{"role":"assistant","content":"hi"}]',),
    )
    raw.execute(
        "INSERT INTO slots (scope, scope_id, key, value, updated_at) "
        "VALUES ('global', '', 'note', '{\"x\": 1}', 0)"
    )
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store:
        assert isinstance(store.revision("session", "s1", "chat_history"), str)
        assert store.get("global", "", "note") == ({"x": 1}, True)
        buf = ConversationBuffer(store=store)
        res = buf.append(user("new"), {"session_id": "s1"})
        assert [m["content"] for m in res.messages or []] == ["old", "hi", "new"]
    with SQLiteStore(path) as store:  # reopening an up-to-date file changes nothing
        assert store.get("session", "s1", "chat_history")[0][-1]["content"] == "new"
    raw = sqlite3.connect(path)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"slot", "entry", "journal"}
    assert raw.execute("SELECT count(*) FROM entry").fetchone()[0] == 3  # one row per entry
    raw.close()


# -- SQLite specifics -----------------------------------------------------------------------


def test_sqlite_is_a_wal_file_and_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "db.sqlite3"
    with SQLiteStore(path) as s:
        s.set("session", "s1", "chat_history", [user("persisted")])
    assert path.is_file()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    buf = ConversationBuffer(store=SQLiteStore(path))
    assert buf.read({"session_id": "s1"}).messages == [user("persisted")]


def test_sqlite_path_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "env" / "from_env.sqlite3"
    monkeypatch.setenv(DB_ENV, str(target))
    with SQLiteStore() as s:
        assert s.path == target.resolve()
    assert target.is_file()
    explicit = tmp_path / "explicit.sqlite3"
    with SQLiteStore(explicit) as s:  # the argument wins over the environment
        assert s.path == explicit.resolve()


def test_sqlite_default_path_under_user_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DB_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "flowdrop" / "buffers.sqlite3"
    with SQLiteStore() as s:
        assert s.path == (tmp_path / "xdg" / "flowdrop" / "buffers.sqlite3").resolve()
        assert s.path.is_file()
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (
        default_db_path() == tmp_path / "home" / ".local" / "share" / "flowdrop" / "buffers.sqlite3"
    )


def test_sqlite_rejects_memory_path() -> None:
    with pytest.raises(ValueError, match="MemoryStore"):
        SQLiteStore(":memory:")


@pytest.mark.parametrize(
    "garbage", ["{not json", b"\xff\xfe\x00binary", ""], ids=["text", "blob", "empty"]
)
def test_corrupt_value_raises_naming_slot_never_empty_buffer(tmp_path: Path, garbage: Any) -> None:
    path = tmp_path / "db.sqlite3"
    store = SQLiteStore(path)
    buf = ConversationBuffer(scope="session", key="chat_history", store=store)
    buf.append(user("hello"), {"session_id": "s1"})
    raw = sqlite3.connect(path)
    raw.execute("UPDATE entry SET body=?", (garbage,))
    raw.commit()
    raw.close()
    slot = r"scope='session', scope_id='s1', key='chat_history'"
    with pytest.raises(StorageError, match=slot) as err:
        buf.read({"session_id": "s1"})
    assert str(path) in str(err.value)
    with pytest.raises(StorageError, match=slot):
        buf.append(user("again"), {"session_id": "s1"})
    raw = sqlite3.connect(path)  # the corrupt entry was not overwritten by an empty buffer
    assert raw.execute("SELECT body FROM entry").fetchall() == [(garbage,)]
    raw.close()


@pytest.mark.parametrize("value", [{"role": "user"}, "text", None, [1, 2]], ids=repr)
def test_stored_non_buffer_raises_naming_slot(store: Store, value: Any) -> None:
    store.set("session", "s1", "chat_history", value)
    buf = ConversationBuffer(store=store)
    with pytest.raises(StorageError, match=r"scope_id='s1', key='chat_history'.*"):
        buf.read({"session_id": "s1"})


# -- MEM-7: refusal touches nothing and warns exactly once ----------------------------------

REFUSING = [
    ("user", {"user_id": 0, "node_id": "n7", "pipeline_id": "p3", "workflow_id": "wf9"}),
    ("user", {"user_id": "0", "node_id": "n7", "pipeline_id": "p3", "workflow_id": "wf9"}),
    (
        "user",
        {
            "user_id": "caller",
            "session_owner_id": "",
            "node_id": "n7",
            "pipeline_id": "p3",
            "workflow_id": "wf9",
        },
    ),
    ("session", {"session_id": "  ", "node_id": "n7", "pipeline_id": "p3", "workflow_id": "wf9"}),
    ("session", None),
]


def _flowdrop_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "flowdrop_core" and r.levelno == logging.WARNING]


@pytest.mark.parametrize(("scope", "ctx"), REFUSING)
def test_refused_append_makes_zero_backend_calls(
    scope: str, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    spy = SpyStore()
    buf = ConversationBuffer(scope=scope, max_messages=3, store=spy)
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        res = buf.append([user("one"), user("two")], ctx)
    assert spy.calls == []
    assert isinstance(res, ScopedAppendResult)
    assert (res.count, res.appended, res.appended_any, res.messages) == (0, 0, False, [])
    assert (res.resolved_scope_id, res.refused, res.scope, res.key) == (
        "",
        True,
        Scope(scope),
        "chat_history",
    )
    assert [(e.kind, e.rule) for e in res.events] == [(EventKind.REFUSED, "MEM-7")]
    assert res.changed is False
    warnings = _flowdrop_warnings(caplog)
    assert len(warnings) == 1
    msg = warnings[0].getMessage()
    assert "MEM-7" in msg
    if ctx is not None:
        assert "'n7'" in msg and "'p3'" in msg and "'wf9'" in msg


@pytest.mark.parametrize(("scope", "ctx"), REFUSING)
def test_refused_read_and_clear_make_zero_backend_calls(
    scope: str, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    spy = SpyStore()
    buf = ConversationBuffer(scope=scope, store=spy, tier="admin")
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        res = buf.read(ctx)
        assert len(_flowdrop_warnings(caplog)) == 1
        assert buf.clear(ctx) is False
        assert len(_flowdrop_warnings(caplog)) == 2
    assert spy.calls == []
    assert (res.count, res.messages, res.refused, res.resolved_scope_id) == (0, [], True, "")


@pytest.mark.parametrize(("scope", "ctx"), REFUSING)
def test_mem7_memory_read_refused_returns_default(
    scope: str, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    spy = SpyStore()
    spy.inner.set(scope, "", "prefs", {"leaked": True})  # the shared bucket must not be read
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        res = read_memory(spy, scope, "prefs", {"default": 1}, ctx)
    assert spy.calls == []
    assert (res.value, res.found, res.resolved_scope_id, res.refused) == (
        {"default": 1},
        False,
        "",
        True,
    )
    assert res.scope == Scope(scope)
    assert len(_flowdrop_warnings(caplog)) == 1


def test_memory_read_found(store: Store) -> None:
    store.set("user", "7", "prefs", {"lang": "fr"})
    res = read_memory(store, "user", "prefs", None, {"user_id": 7})
    assert (res.value, res.found, res.resolved_scope_id, res.refused) == (
        {"lang": "fr"},
        True,
        "7",
        False,
    )
    miss = read_memory(store, "user", "prefs", "dflt", {"user_id": 8})
    assert (miss.value, miss.found, miss.resolved_scope_id) == ("dflt", False, "8")


def test_accepted_call_warns_nothing(caplog: pytest.LogCaptureFixture) -> None:
    buf = ConversationBuffer(scope="user")
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        buf.append(user("hi"), {"user_id": "7"})
        buf.read({"user_id": "7"})
    assert _flowdrop_warnings(caplog) == []


# -- isolation -------------------------------------------------------------------------------


def test_two_users_never_see_each_other(store: Store) -> None:
    buf = ConversationBuffer(scope="user", store=store)
    a = buf.append(user("alice's secret"), {"user_id": "alice", "workflow_id": "shared"})
    b = buf.append(user("bob's secret"), {"user_id": "bob", "workflow_id": "shared"})
    assert (a.resolved_scope_id, b.resolved_scope_id) == ("alice", "bob")
    assert a.messages is not None and b.messages is not None
    assert [m["content"] for m in b.messages] == ["bob's secret"]
    assert [m["content"] for m in buf.messages({"user_id": "alice"})] == ["alice's secret"]
    assert [m["content"] for m in buf.messages({"user_id": "bob"})] == ["bob's secret"]
    # an anonymous caller is refused, not given the shared bucket
    assert buf.read({"user_id": 0}).messages == []
    assert store.get("user", "", "chat_history")[1] is False


def test_mem8_shared_session_without_owner_refuses_both_callers() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(scope="user", store=spy)
    for caller in ("alice", "bob"):
        res = buf.append(
            user(f"{caller} in a shared session"), {"user_id": caller, "session_id": "s"}
        )
        assert (res.refused, res.count, res.resolved_scope_id) == (True, 0, "")
    assert spy.calls == []


def test_mem8_session_owner_bucket_not_callers(store: Store) -> None:
    buf = ConversationBuffer(scope="user", store=store)
    res = buf.append(user("driven by a guest"), {"user_id": "guest", "session_owner_id": "owner"})
    assert res.resolved_scope_id == "owner"
    assert buf.messages({"user_id": "guest"}) == []
    assert buf.messages({"user_id": "owner"})[0]["content"] == "driven by a guest"


# -- writes only on change ---------------------------------------------------------------------


def test_call_that_changes_nothing_writes_nothing() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy)
    ctx = {"session_id": "s1"}
    declare = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function"}]}
    result = {"role": "tool", "content": "Found 3 cats", "tool_call_id": "c1"}
    assert buf.append([declare, result], ctx).appended == 2
    assert spy.kinds().count("apply") == 1

    spy.calls.clear()
    dup = buf.append({"role": "tool", "content": "re-fired", "tool_call_id": "c1"}, ctx)
    assert (dup.appended, dup.changed) == (0, False)
    assert "apply" not in spy.kinds()  # a duplicate writes nothing

    spy.calls.clear()
    pure = buf.append(user(""), ctx)  # an empty user message is a pure read
    assert (pure.appended, pure.changed) == (0, False)
    assert "apply" not in spy.kinds()

    spy.calls.clear()
    empty = buf.append([], ctx)
    assert (empty.appended, empty.count) == (0, 2)
    assert "apply" not in spy.kinds()


def test_placeholder_replacement_appends_zero_but_is_written() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy)
    ctx = {"session_id": "s1"}
    declare = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function"}]}
    buf.append([declare, user("anything?")], ctx)  # heals c1 with a placeholder
    spy.calls.clear()
    res = buf.append({"role": "tool", "content": "Found 3 cats", "tool_call_id": "c1"}, ctx)
    assert (res.appended, res.changed) == (0, True)
    assert spy.kinds().count("apply") == 1
    stored = buf.messages(ctx)
    assert stored[1] == {
        "role": "tool",
        "content": "Found 3 cats",
        "metadata": {"tool_call_id": "c1"},
    }


def test_invalid_message_changes_nothing() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy)
    ctx = {"session_id": "s1"}
    buf.append(user("kept"), ctx)
    spy.calls.clear()
    with pytest.raises(InvalidMessagesError):
        buf.append([user("would land"), {"content": "no role"}], ctx)
    assert "set" not in spy.kinds()
    assert [m["content"] for m in buf.messages(ctx)] == ["kept"]


def test_window_and_report_through_storage(store: Store) -> None:
    buf = ConversationBuffer(max_messages=3, store=store)
    ctx = {"session_id": "s1"}
    buf.append([user("a"), user("b"), user("c")], ctx)
    res = buf.append(user("d"), ctx)  # MEM-14: full window of three, a new message
    assert res.summary() == {"count": 3, "appended": 1, "appended_any": True}
    assert (res.scope, res.key, res.resolved_scope_id, res.refused) == (
        Scope.SESSION,
        "chat_history",
        "s1",
        False,
    )
    assert [m["content"] for m in buf.messages(ctx)] == ["b", "c", "d"]


def test_clear_empties_the_slot(store: Store) -> None:
    buf = ConversationBuffer(store=store, tier="admin")
    buf.append(user("x"), {"session_id": "s1"})
    assert buf.clear({"session_id": "s1"}) is True
    assert buf.read({"session_id": "s1"}).count == 0
    assert buf.clear({"session_id": "s1"}) is False


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scope": "tenant"},
        {"key": ""},
        {"max_messages": -1},
        {"max_messages": True},
        {"lock_timeout": -1},
    ],
    ids=repr,
)
def test_bad_configuration_is_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ConversationBuffer(**kwargs)


def test_scoped_result_serializes() -> None:
    res = ConversationBuffer(scope="user").append(user("hi"), {"user_id": 7})
    data = json.loads(res.to_json())
    assert data == res.to_dict()
    assert data["scope"] == "user" and data["resolved_scope_id"] == "7" and data["refused"] is False
    assert (data["count"], data["appended"], data["appended_any"]) == (1, 1, True)
    assert res.changed is True
