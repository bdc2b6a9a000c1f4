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
    with pytest.raises(TierDenied, match=r"MEM-9: an append to slot .* needs the drive tier"):
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


def test_an_operator_grants_a_tier_per_store_and_nothing_else_does(tmp_path: Any) -> None:
    from flowdrop_core.store_targets import StoreTargetsError, configured_targets

    toml = tmp_path / "stores.toml"
    toml.write_text(
        '[stores.boss]\ntarget = "/b.sqlite3"\nadmin = true\n'
        '[stores.rw]\ntarget = "/rw.sqlite3"\nwritable = true\n',
        encoding="utf-8",
    )
    env = {
        "FLOWDROP_STORES": "team=/t.sqlite3; w=writable:/w.sqlite3; a=admin: /a.sqlite3",
        "FLOWDROP_STORES_FILE": str(toml),
        "FLOWDROP_DB": "/db.sqlite3",
        "FLOWDROP_ADMIN": "1",  # not a grant: only a store's own marking is
    }
    got = {t.name: (t.target, t.tier) for t in configured_targets(env)}
    assert got == {
        "FLOWDROP_DB": ("/db.sqlite3", Tier.VIEW),
        "team": ("/t.sqlite3", Tier.VIEW),
        "w": ("/w.sqlite3", Tier.DRIVE),
        "a": ("/a.sqlite3", Tier.ADMIN),
        "boss": ("/b.sqlite3", Tier.ADMIN),
        "rw": ("/rw.sqlite3", Tier.DRIVE),
    }
    assert [t.label() for t in configured_targets(env) if t.name == "a"] == [
        "a · /a.sqlite3 · admin"
    ]
    toml.write_text('[stores.x]\ntarget = "/x"\nadmin = "yes"\n', encoding="utf-8")
    with pytest.raises(StoreTargetsError, match=r"\[stores.x\]: admin must be true or false"):
        configured_targets({"FLOWDROP_STORES_FILE": str(toml)})


def test_no_attribute_or_environment_raises_a_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    from flowdrop_core.storage import MemoryStore

    monkeypatch.setenv("FLOWDROP_ADMIN", "1")
    monkeypatch.setenv("FLOWDROP_TIER", "admin")
    store = MemoryStore()
    buf = ConversationBuffer(store=store)
    buf.append(_user("kept"), {"session_id": "s1"})
    with pytest.raises(AttributeError):
        buf.tier = Tier.ADMIN  # type: ignore[misc]
    with pytest.raises(TierDenied, match="MEM-15: clear needs the admin tier"):
        buf.clear({"session_id": "s1"})
    assert StoreBrowser(store).tier is Tier.VIEW
    assert buf.read({"session_id": "s1"}).count == 1


@pytest.mark.parametrize(
    ("principal", "owner"),
    [(None, None), ("", ""), ("\u200b", "\u200b"), ("0", 0), ("\u3164", "\u3164"), ([], [])],
)
def test_two_absent_identities_never_match_in_any_spelling(principal: Any, owner: Any) -> None:
    from flowdrop_core.tiers import owns

    assert not owns(principal, owner)
    assert owns("\uff17", 7)  # one identity in two spellings (NFKC, the number rule) matches
