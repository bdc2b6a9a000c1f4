"""Hypothesis generators: incoming messages, and buffers a store can really hold.

A buffer loaded from a store was not necessarily built by this engine's
appends: another writer, an older version or a hand-edited file can leave two
results for one id, a placeholder away from its turn, a turn declaring an id
twice, a result ahead of its call, both spellings side by side, or more
entries than the window. :func:`stored_buffers` generates any mix of those,
limited only to what the message reader accepts (a malformed entry is an
error, tested elsewhere).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import Phase, settings
from hypothesis import strategies as st

#: ``scripts/mutate.py`` scales the property tests down (and derandomizes them)
#: so a mutant costs seconds; a normal run uses the full counts.
_SCALE = float(os.environ.get("FLOWDROP_EXAMPLES_SCALE", "1"))
if os.environ.get("FLOWDROP_MUTATE"):
    # No shrinking: a mutation run needs only "fails or not", and shrinking a
    # failure through the slow oracle can outlast the per-mutant timeout.
    settings.register_profile(
        "mutate",
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    settings.load_profile("mutate")


def examples(n: int) -> int:
    """``n`` examples, scaled for a mutation run (never fewer than 20)."""
    return n if _SCALE == 1 else max(20, int(n * _SCALE))


PLACEHOLDER_TEXT = "Tool call was interrupted; no result."

IDS: list[Any] = ["c1", "c2", "c3", "c4", "c5", "call_6", " c1 ", 7, "7"]
BAD_IDS: list[Any] = ["0", "", "   ", 0, -3]


def _shape(msg: dict[str, Any], stored: bool) -> dict[str, Any]:
    """Spell a flat message as a stored row (fields under ``metadata``) when ``stored``."""
    if not stored:
        return msg
    meta = {k: msg.pop(k) for k in ("tool_calls", "tool_call_id", "healed") if k in msg}
    return {**msg, "metadata": meta}


@st.composite
def calls(draw: st.DrawFn, ids: st.SearchStrategy[Any]) -> list[dict[str, Any]]:
    """1-3 calls in either spelling (MEM-11), ids possibly repeated or unusable."""
    out = []
    for cid in draw(st.lists(ids, min_size=1, max_size=3)):
        spell = draw(st.sampled_from(["id", "tool_call_id", "both"]))
        if spell == "id":
            out.append({"id": cid, "type": "function", "function": {"name": "search"}})
        elif spell == "tool_call_id":
            out.append({"tool_call_id": cid, "name": "lookup", "args": {"q": 1}})
        else:  # the buffer's spelling wins when usable, else the provider's
            out.append({"tool_call_id": draw(st.sampled_from(BAD_IDS)), "id": cid})
    return out


@st.composite
def messages(draw: st.DrawFn, usable_only: bool = False) -> dict[str, Any]:
    """One incoming message of any role, in either shape."""
    ids = st.sampled_from(IDS) if usable_only else st.sampled_from(IDS + BAD_IDS)
    kind = draw(st.sampled_from(["user", "assistant", "calls", "tool", "system"]))
    stored = draw(st.booleans())
    if kind == "user":
        content = draw(
            st.sampled_from(["hi", "more?", "", "  ", None, [], [{"type": "text", "text": "café"}]])
        )
        msg: dict[str, Any] = {"role": "user", "content": content}
    elif kind == "assistant":
        msg = {"role": "assistant", "content": draw(st.sampled_from(["ok", "", None]))}
    elif kind == "system":
        msg = {"role": "system", "content": draw(st.sampled_from(["be brief", ""]))}
    elif kind == "calls":
        msg = {"role": "assistant", "content": None, "tool_calls": draw(calls(ids))}
    else:
        msg = {"role": "tool", "content": draw(st.sampled_from(["r1", "r2"]))}
        msg["tool_call_id"] = draw(ids)
        if draw(st.integers(0, 5)) == 0:
            msg["healed"] = True
    if draw(st.integers(0, 6)) == 0:
        msg["timestamp"] = "2026-01-01T00:00:00Z"
    # Fields a role cannot use: calls on a non-assistant message, an answered
    # id on a non-tool message (kept verbatim, meaning nothing to the rules).
    if kind not in ("calls", "assistant") and draw(st.integers(0, 9)) == 0:
        msg["tool_calls"] = draw(calls(ids))
    if kind != "tool" and draw(st.integers(0, 9)) == 0:
        msg["tool_call_id"] = draw(ids)
    return _shape(msg, stored)


@st.composite
def stored_entries(draw: st.DrawFn) -> dict[str, Any]:
    """One entry as a store may hold it: any message, or a placeholder for any id."""
    if draw(st.integers(0, 4)) == 0:
        cid = draw(st.sampled_from(IDS))
        entry: dict[str, Any] = {
            "role": "tool",
            "content": PLACEHOLDER_TEXT,
            "tool_call_id": cid,
            "healed": True,
        }
        return _shape(entry, draw(st.booleans()))
    return draw(messages())


conversations = st.lists(messages(), max_size=25)
stored_buffers = st.lists(stored_entries(), max_size=30)
windows = st.integers(min_value=0, max_value=8)
