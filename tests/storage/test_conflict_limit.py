"""A slot another writer changes before every one of our writes: the append gives up, writing nothing.

The other writer is real (it writes the slot through the store each time,
moving its revision), so every conditional write of ours meets a
``RevisionConflict``; after the retry limit the caller gets a
``StorageError`` naming the slot, not an endless loop, and the other
writer's buffer is what the slot holds.
"""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import MemoryStore, StorageError


class AlwaysOvertaken(MemoryStore):
    """Before each of our writes, another writer replaces the slot (a fresh revision)."""

    apply_live = None  # type: ignore[assignment]  # no live appends: each takes the conditional write

    def __init__(self) -> None:
        super().__init__()
        self.overtaken = 0

    def apply(self, scope: str, scope_id: str, key: str, delta: Any, **kwargs: Any) -> str:
        self.overtaken += 1
        self.set(scope, scope_id, key, [{"role": "user", "content": f"other {self.overtaken}"}])
        return super().apply(scope, scope_id, key, delta, **kwargs)


def test_append_gives_up_after_the_conflict_limit_and_writes_nothing() -> None:
    store = AlwaysOvertaken()
    buf = ConversationBuffer(store=store, cache_slots=0)
    with pytest.raises(StorageError) as err:
        buf.append({"role": "user", "content": "mine"}, {"session_id": "s1"})
    assert str(err.value) == (
        "1000 conditional writes found the slot changed by another writer; nothing of this "
        "append was written [slot (scope='session', scope_id='s1', key='chat_history')]"
    )
    assert store.overtaken == 1000
    stored, _ = store.get("session", "s1", "chat_history")
    assert [m["content"] for m in stored] == ["other 1000"]
