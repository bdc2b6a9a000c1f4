"""A Redis store whose server is not there: every operation is one clear StorageError.

The server is really absent (a port nothing listens on), so the client's
own ``ConnectionError`` is what the store turns into a message naming the
server, the slot and, for writes, that nothing was written. The MEM-12
lease is not taken (``False``), never an exception.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from flowdrop_core.storage import Delta, Op, StorageError
from flowdrop_core.storage.redis_store import RedisStore

SLOT = ("session", "s1", "k")
SLOT_TEXT = "[slot (scope='session', scope_id='s1', key='k')]"


@pytest.fixture
def dead() -> tuple[RedisStore, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return RedisStore(f"redis://127.0.0.1:{port}/0"), f"127.0.0.1:{port}/0"


INSERT = Delta((Op("insert", 0, {"role": "user", "content": "a"}),), 1)

OPERATIONS: list[tuple[str, Callable[[RedisStore], Any], str, bool]] = [
    ("read", lambda s: s.read(*SLOT), "cannot read the slot", True),
    ("get", lambda s: s.get(*SLOT), "cannot read the slot", True),
    ("revision", lambda s: s.revision(*SLOT), "cannot read the slot's revision", True),
    ("set", lambda s: s.set(*SLOT, []), "cannot write the slot", True),
    ("apply", lambda s: s.apply(*SLOT, INSERT, expected=None), "cannot write the change", True),
    ("delete", lambda s: s.delete(*SLOT), "cannot write (delete) the slot", True),
    ("slots", lambda s: s.slots(), "cannot list the slots", False),
    ("slot_times", lambda s: s.slot_times(), "cannot list the slots", False),
    ("counts", lambda s: s.counts([SLOT]), "cannot list the slots", False),
]


@pytest.mark.parametrize(
    ("name", "operation", "what", "names_slot"), OPERATIONS, ids=[o[0] for o in OPERATIONS]
)
def test_every_operation_is_a_storage_error_naming_the_server(
    dead: tuple[RedisStore, str],
    name: str,
    operation: Callable[[RedisStore], Any],
    what: str,
    names_slot: bool,
) -> None:
    store, server = dead
    with pytest.raises(StorageError) as err:
        operation(store)
    text = str(err.value)
    assert text.startswith(f"{what} on Redis {server} (ConnectionError: ")
    assert "Connection refused" in text
    assert text.endswith(SLOT_TEXT) is names_slot
    if name in ("set", "apply", "delete"):
        assert "nothing was written" in text


def test_the_lease_is_not_taken_and_says_so(dead: tuple[RedisStore, str]) -> None:
    store, _ = dead
    with store.lock(*SLOT, timeout=0.1) as got:
        assert got is False
