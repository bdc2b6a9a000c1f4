"""Shared helpers of the MEM-12 concurrency tests (SQLite, memory and Redis alike).

A serialized history is one chain: every append records the turn it followed,
so walking the predecessors back from the last turn must visit every turn once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

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
