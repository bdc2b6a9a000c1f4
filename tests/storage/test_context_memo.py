"""ConversationBuffer remembers its last context's resolution; it must never reuse a stale one."""

from __future__ import annotations

import logging

import pytest

from flowdrop_core import ConversationBuffer, ExecutionContext
from flowdrop_core.storage import MemoryStore


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_the_same_dict_changed_in_place_resolves_afresh() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store)
    ctx = {"session_id": "a"}
    assert buf.append(_user("1"), ctx).resolved_scope_id == "a"
    ctx["session_id"] = "b"  # the caller reuses its dict for another session
    assert buf.append(_user("2"), ctx).resolved_scope_id == "b"
    ctx["user_id"] = "u"  # a key added: not the same context either
    assert buf.append(_user("3"), ctx).resolved_scope_id == "b"
    assert [m["content"] for m in store.get("session", "a", "chat_history")[0]] == ["1"]
    assert [m["content"] for m in store.get("session", "b", "chat_history")[0]] == ["2", "3"]


def test_an_equal_value_of_another_type_is_not_the_same_context(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``True == 1``, but MEM-6 refuses a boolean id while ``1`` is the id "1"."""
    buf = ConversationBuffer(scope="user")
    assert buf.append(_user("1"), {"user_id": 1}).resolved_scope_id == "1"
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        refused = buf.append(_user("2"), {"user_id": True})
    assert refused.refused and "MEM-6" in (refused.refusal_reason or "")
    assert buf.append(_user("3"), {"user_id": 1}).count == 2


def test_a_refusal_is_remembered_but_warns_on_every_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """MEM-7: one warning per refused call, also when the resolution is reused."""
    buf = ConversationBuffer()
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        for _ in range(3):
            assert buf.append(_user("x"), {"session_id": "  "}).refused
    assert sum("MEM-" in r.getMessage() for r in caplog.records) == 3


def test_a_mutable_value_is_never_remembered() -> None:
    """A list is not an id (MEM-6 refuses it); changing it in place must be seen afresh."""
    buf = ConversationBuffer(scope="workflow")
    ids = ["w"]
    ctx = {"workflow_id": ids}
    first = buf.append(_user("1"), ctx)
    assert buf._memo is None  # nothing kept for a context holding a mutable value
    assert first.resolved_scope_id == buf.append(_user("2"), ctx).resolved_scope_id


def test_an_execution_context_and_none_are_remembered_by_identity() -> None:
    buf = ConversationBuffer(scope="global")
    ctx = ExecutionContext(session_id="s")
    assert buf.append(_user("1"), ctx).resolved_scope_id == ""
    assert buf._memo is not None and buf._memo.key is ctx
    assert buf.append(_user("2"), ctx).count == 2
    assert buf.append(_user("3")).count == 3  # no context: the global scope still resolves
    session = ConversationBuffer()
    assert session.append(_user("x")).refused  # and an identity scope still refuses
    assert session.append(_user("y"), {"session_id": "s"}).count == 1
