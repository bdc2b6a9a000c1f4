"""Shared helpers of the MEM-12 concurrency tests (SQLite, memory and Redis alike).

A serialized history is one chain: every append records the turn it followed,
so walking the predecessors back from the last turn must visit every turn once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parents[1]
#: A lock timeout (or a holder's hold) that no append in these tests should sit through.
LONG_WAIT = 30.0
#: Elapsed time that proves an append did not sit through LONG_WAIT, with room to spare.
MARGIN = 10.0


def user(text: str) -> dict[str, Any]:
    """A user turn with ``text``."""
    return {"role": "user", "content": text}


def python_child(code: str, *args: str) -> subprocess.Popen[str]:
    """Start a child interpreter running ``code`` with the repository importable."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def walk_chain(links: dict[str, str | None], last: str) -> list[str]:
    """Follow each append's predecessor back from ``last``; a serialized history is one chain."""
    chain: list[str] = []
    node: str | None = last
    while node is not None:
        chain.append(node)
        node = links[node]
    return chain[::-1]


class ThreadedAppends(NamedTuple):
    """What :func:`append_from_threads` saw: each turn's predecessor and the summed counts."""

    links: dict[str, str | None]
    appended: int
    unserialized: int


def append_from_threads(
    buf: Any, ctx: dict[str, str], threads: int, per_thread: int
) -> ThreadedAppends:
    """``threads`` x ``per_thread`` appends of the turns ``"t:j"`` to one buffer, started together.

    Each append records the turn before its own in the buffer it returned (the
    turn it followed), for :func:`check_one_chain`. An append that raised fails
    the caller, naming the first error.
    """
    links: dict[str, str | None] = {}
    appended = [0] * threads
    unserialized = [0] * threads
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def work(t: int) -> None:
        try:
            barrier.wait()
            for j in range(per_thread):
                res = buf.append(user(f"{t}:{j}"), ctx)
                appended[t] += res.appended
                unserialized[t] += not res.serialized
                msgs = res.messages or []
                links[msgs[-1]["content"]] = msgs[-2]["content"] if len(msgs) > 1 else None
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise AssertionError(f"{len(errors)} append(s) raised, the first: {errors[0]!r}")
    return ThreadedAppends(links, sum(appended), sum(unserialized))


def check_one_chain(
    links: dict[str, str | None], final: list[str], writers: int, n: int, window: int = 0
) -> None:
    """One chain through every append (no two read the same buffer), each writer in order.

    ``final`` is the stored buffer's turns: the whole chain, or its last
    ``window`` turns for a bounded buffer.
    """
    total = writers * n
    chain = walk_chain(links, final[-1])
    assert len(links) == total, f"{len(links)} appends recorded, {total} made"
    # A lost update forks the chain (two appends followed one turn) and shortens it.
    assert len(chain) == total, f"the chain holds {len(chain)} of {total} appends"
    expected = chain[-window:] if window else chain
    assert final == expected, f"stored {final[:3]}...{final[-3:]}, chain {expected[:3]}..."
    for w in range(writers):
        mine = [c for c in chain if c.startswith(f"{w}:")]
        assert mine == [f"{w}:{j}" for j in range(n)], f"writer {w}'s turns out of order"
