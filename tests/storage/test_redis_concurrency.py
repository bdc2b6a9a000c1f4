"""MEM-12 on a real Redis: threads and processes lose no turn, killed writers tear nothing."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from concurrency_helpers import (
    LONG_WAIT,
    MARGIN,
    append_from_threads,
    check_one_chain,
    user,
)
from concurrency_helpers import python_child as _python

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.events import EventKind
from flowdrop_core.storage.redis_store import LEASE_SECONDS, RedisStore

CTX = {"session_id": "s1"}


def test_eight_threads_lose_no_turn(redis_url: str) -> None:
    """8 x 250 appends to one slot (a window of 50, as the SQLite test, to keep it fast)."""
    threads, per_thread, window = 8, 250, 50
    buf = ConversationBuffer(
        store=RedisStore(redis_url), lock_timeout=LONG_WAIT, max_messages=window
    )
    run = append_from_threads(buf, CTX, threads, per_thread)
    assert run.unserialized == 0
    assert run.appended == threads * per_thread
    final = [m["content"] for m in RedisStore(redis_url).get("session", "s1", "chat_history")[0]]
    check_one_chain(run.links, final, threads, per_thread, window)


WORKER = """
import json, os, sys, time
import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.events import EventKind
from flowdrop_core.storage.redis_store import RedisStore
url, wid, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
buf = ConversationBuffer(store=RedisStore(url), lock_timeout=float(sys.argv[5]))
ctx = {"session_id": "s1"}
buf.store.revision("session", "s1", "chat_history")  # connected
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
links, appended, unserialized = {}, 0, 0
for j in range(n):
    res = buf.append({"role": "user", "content": f"{wid}:{j}"}, ctx)
    appended += res.appended
    unserialized += not res.serialized
    msgs = res.messages
    links[msgs[-1]["content"]] = msgs[-2]["content"] if len(msgs) > 1 else None
print(json.dumps({"appended": appended, "unserialized": unserialized, "links": links}), flush=True)
"""


@pytest.mark.parametrize(
    ("per_proc", "lock_timeout"),
    [(250, LONG_WAIT), (100, 0.0)],
    ids=["serialized", "compare-and-set-only"],
)
def test_four_processes_lose_no_turn(
    redis_url: str, tmp_path: Path, per_proc: int, lock_timeout: float
) -> None:
    """4 processes append to one slot; with ``lock_timeout=0`` most run unserialized and
    only the conditional writes keep the history one chain."""
    procs = 4
    go = tmp_path / "go"
    children = [
        _python(WORKER, redis_url, str(p), str(per_proc), str(go), str(lock_timeout))
        for p in range(procs)
    ]
    for c in children:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
    go.touch()
    links: dict[str, str | None] = {}
    reports = []
    for c in children:
        out, err = c.communicate(timeout=300)
        assert c.returncode == 0, err
        report = json.loads(out.strip().splitlines()[-1])
        links.update(report["links"])
        reports.append(report)
    if lock_timeout:
        assert sum(r["unserialized"] for r in reports) == 0
    assert sum(r["appended"] for r in reports) == procs * per_proc
    final = [m["content"] for m in RedisStore(redis_url).get("session", "s1", "chat_history")[0]]
    check_one_chain(links, final, procs, per_proc)


HOLDER = """
import sys, time
from flowdrop_core.storage.redis_store import RedisStore
store = RedisStore(sys.argv[1])
with store.lock("session", "s1", "chat_history", 5.0) as held:
    print("held" if held else "not held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_lease_held_by_a_live_process_is_a_bounded_wait(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Past the bound the append lands unserialized (warning + event), as with SQLite."""
    holder = _python(HOLDER, redis_url, str(10 * LONG_WAIT))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        buf = ConversationBuffer(store=RedisStore(redis_url), lock_timeout=0.3)
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
            res = buf.append(user("while another process holds the lease"), CTX)
        assert 0.25 < time.monotonic() - start < MARGIN  # its own bound, not the holder's
        assert res.serialized is False and (res.appended, res.appended_any) == (1, True)
        assert (res.events[0].kind, res.events[0].rule) == (EventKind.UNSERIALIZED, "MEM-12")
        assert any("MEM-12" in r.getMessage() for r in caplog.records)
        assert buf.append(user("other slot"), {"session_id": "s2"}).serialized is True
    finally:
        holder.kill()
        holder.wait()
    # the killed holder's lease is taken over at once, not sat out
    start = time.monotonic()
    res = ConversationBuffer(store=RedisStore(redis_url), lock_timeout=LONG_WAIT).append(
        user("after"), CTX
    )
    assert res.serialized is True and time.monotonic() - start < LEASE_SECONDS / 2
    assert [m["content"] for m in res.messages or []] == [
        "while another process holds the lease",
        "after",
    ]
