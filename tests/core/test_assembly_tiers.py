"""MEM-4 assembly, and MEM-9 / MEM-15 tiers in the library."""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core._errors import FlowdropError
from flowdrop_core.assembly import UNWIRED, AssemblyError, assemble_messages
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import MemoryStore
from flowdrop_core.tiers import Tier, TierDenied, as_tier, owns

CTX = {"session_id": "s1"}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_inputs_assemble_in_declared_order_not_by_name() -> None:
    got = assemble_messages([("b", _user("b")), ("a", _user("a"))])
    assert got == [_user("b"), _user("a")]
    assert assemble_messages({"z": _user("z"), "y": [_user("y1"), _user("y2")]}) == [
        _user("z"),
        _user("y1"),
        _user("y2"),
    ]


def test_unwired_and_empty_inputs_add_nothing() -> None:
    got = assemble_messages([("in_1", _user("a")), ("in_2", UNWIRED), ("in_3", None)])
    assert got == [_user("a")]
    assert assemble_messages([("only", UNWIRED)]) == []
    assert assemble_messages([("empty", [])]) == []


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("hi", "input 'x' (position 1): text is neither"),
        (3, "a number is neither"),
        (True, "a boolean is neither"),
        ([_user("ok"), "bad"], "input 'x' (position 1), item [1]: text is not a message object"),
    ],
)
def test_a_value_that_is_no_message_is_an_error_naming_the_input(value: Any, said: str) -> None:
    with pytest.raises(AssemblyError, match="MEM-4") as caught:
        assemble_messages([("first", _user("a")), ("x", value)])
    assert said in str(caught.value)
    assert isinstance(caught.value, FlowdropError)
    assert (caught.value.port, caught.value.position) == ("x", 1)


def test_two_absent_identities_never_own_each_other() -> None:
    assert not owns(None, None)
    assert not owns("", "  ")
    assert not owns(0, "0")
    assert not owns("7", None)
    assert owns("7", 7)
    assert not owns("7", "8")


class SpyStore(MemoryStore):
    """A memory store that records every call the buffer makes to it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        attr = super().__getattribute__(name)
        if callable(attr) and not name.startswith("_") and name != "calls":
            super().__getattribute__("calls").append(name)
        return attr


def test_the_view_tier_cannot_append_and_touches_no_storage() -> None:
    store = SpyStore()
    ConversationBuffer(store=store).append(_user("mine"), CTX)
    store.calls.clear()
    viewer = ConversationBuffer(store=store, tier="view")
    with pytest.raises(TierDenied, match="MEM-9: append needs the drive tier") as caught:
        viewer.append(_user("hijack"), CTX)
    with pytest.raises(TierDenied):
        viewer.append_resolved(_user("hijack"), viewer.resolve(CTX))
    assert caught.value.rule == "MEM-9"
    assert store.calls == []
    assert [m["content"] for m in viewer.messages(CTX)] == ["mine"]


def test_clearing_needs_the_admin_tier() -> None:
    store = MemoryStore()
    driver = ConversationBuffer(store=store)
    driver.append(_user("keep me"), CTX)
    for tier in ("view", "drive"):
        with pytest.raises(TierDenied, match="MEM-15: clear needs the admin tier"):
            ConversationBuffer(store=store, tier=tier).clear(CTX)
    assert driver.read(CTX).count == 1
    assert ConversationBuffer(store=store, tier=Tier.ADMIN).clear(CTX) is True
    assert driver.read(CTX).count == 0


def test_a_tier_is_named_or_refused() -> None:
    assert as_tier(" View ") is Tier.VIEW
    assert str(Tier.ADMIN) == "admin"
    with pytest.raises(ValueError, match="tier must be one of view, drive, admin"):
        ConversationBuffer(tier="owner")


def test_the_async_api_keeps_the_tiers() -> None:
    import asyncio

    store = MemoryStore()
    ConversationBuffer(store=store).append(_user("mine"), CTX)
    with pytest.raises(TierDenied, match="MEM-9"):
        asyncio.run(ConversationBuffer(store=store, tier="view").aappend(_user("x"), CTX))
    with pytest.raises(TierDenied, match="MEM-15"):
        asyncio.run(ConversationBuffer(store=store).aclear(CTX))
    assert asyncio.run(ConversationBuffer(store=store, tier="admin").aclear(CTX)) is True
