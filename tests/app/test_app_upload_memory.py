"""A 19.9 MB upload's server memory stays within the stated budget, and goes when the
session does (tracemalloc over a real Replay page run in AppTest)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from streamlit.testing.v1 import AppTest

from inspector_ui.cache import MAX_REPLAY_MESSAGES

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MB = 1_000_000
#: The stated budget (README, "Serving it to a team"): server memory per upload.
FILE_MULTIPLE = 12
PER_MESSAGE = 4_000


def recording(size: int) -> tuple[bytes, int]:
    """A JSONL recording of about ``size`` bytes: user and assistant turns of ~2 KB."""
    lines, total, n = [], 0, 0
    while total < size:
        role = "user" if n % 2 == 0 else "assistant"
        line = json.dumps({"role": role, "content": f"turn {n} " + "lorem ipsum " * 165})
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines).encode(), n


def test_a_19_9_mb_upload_stays_in_budget_and_is_returned() -> None:
    data, messages = recording(int(19.9 * MB))
    assert messages <= MAX_REPLAY_MESSAGES
    gc.collect()
    tracemalloc.start()
    try:
        at = AppTest.from_file(APP, default_timeout=300).run()
        at.switch_page("pages/replay.py").run()
        gc.collect()
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        at.file_uploader(key="r_upload").upload("big.jsonl", data, "application/jsonl").run()
        assert not at.exception, at.exception
        assert f"{messages} step(s)" in at.success[0].value
        _, peak = tracemalloc.get_traced_memory()
        budget = FILE_MULTIPLE * len(data) + PER_MESSAGE * messages
        print(
            f"\n{len(data) / MB:.1f} MB, {messages:,} messages: peak +{(peak - baseline) / MB:.0f} MB, budget {budget / MB:.0f} MB"
        )
        assert peak - baseline <= budget
        del at  # the session ends: its caches, its upload and its timelines go with it
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
        print(f"after the session: +{(after - baseline) / MB:.1f} MB")
        assert after - baseline < 0.1 * len(data)
    finally:
        tracemalloc.stop()
