"""MEM-9 and MEM-15 in the store browser, on every backend: view reads, drive appends,
admin clears, and a clear is a journal record the replay starts after."""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal.truth import journal_gap
from flowdrop_core.storage import Store
from flowdrop_core.store_browser import StoreBrowser
from flowdrop_core.tiers import Tier, TierDenied

SLOT = ("session", "s1", "chat_history")


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _filled(store: Store) -> ConversationBuffer:
    buf = ConversationBuffer(store=store, journal=10)
    for text in ("one", "two", "three"):
        buf.append(_user(text), {"session_id": "s1"})
    return buf


def test_each_tier_does_only_its_own_acts(store: Store) -> None:
    _filled(store)
    viewer, driver = StoreBrowser(store), StoreBrowser(store, writable=True)
    assert (viewer.tier, driver.tier) == (Tier.VIEW, Tier.DRIVE)
    with pytest.raises(TierDenied, match="MEM-9: an append to slot .* needs the drive tier"):
        viewer.append(SLOT, _user("hijack"))
    for browser in (viewer, driver):
        with pytest.raises(TierDenied, match=r"MEM-15: clearing slot .* needs the admin tier"):
            browser.clear(SLOT)
    assert [m["content"] for m in viewer.buffer(SLOT)] == ["one", "two", "three"]
    assert [r.seq for r in viewer.records(SLOT)] == [1, 2, 3]
    with pytest.raises(AttributeError):
        viewer.tier = Tier.ADMIN  # type: ignore[misc]  # no attribute raises the tier
    assert driver.append(SLOT, _user("four")).appended == 1


def test_an_admin_clear_is_recorded_and_the_journal_replays_after_it(store: Store) -> None:
    _filled(store)
    admin = StoreBrowser(store, tier="admin")
    done = admin.clear(SLOT, by="a test")
    assert (done.found, done.removed, done.record) == (True, 3, 4)
    assert admin.buffer(SLOT) == []
    records = admin.records(SLOT)
    assert [(r.seq, r.action) for r in records] == [
        (1, "append"),
        (2, "append"),
        (3, "append"),
        (4, "clear"),
    ]  # the clear kept every earlier record
    assert records[-1].removed == 3 and records[-1].by == "a test"
    assert journal_gap(store.revision(*SLOT), records) is None  # the clear is in the journal
    admin.append(SLOT, _user("after"), journal=10)
    replayed = admin.replay(SLOT)
    assert replayed.check.passed and replayed.first_seq == 5
    assert [s.count for s in replayed.timeline.steps] == [1]
    assert any("record 4: the slot was cleared at the admin tier" in n for n in replayed.notes)
    assert str(admin.clear(("session", "nobody", "chat_history"))).startswith(
        "the slot was already empty"
    )
