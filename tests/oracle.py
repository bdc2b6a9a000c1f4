"""A naive, obviously-correct model of the GR-MEM append, for differential tests.

It follows ``shared/spec/GR-MEM.md`` step by step on a plain list, scanning
the whole buffer for every decision. It is O(buffer) per message and shares
nothing with the engine but the message reader (tested on its own), so when
the indexed engine and this model agree on random conversations, the indexes
are right.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.messages import content_is_empty, make_placeholder, read_message, to_stored_row


def _info(entry: dict[str, Any]) -> tuple[str, tuple[str, ...], str | None, bool]:
    parsed = read_message(entry)
    assert not isinstance(parsed, str), parsed
    return parsed.role, parsed.calls, parsed.result_id, parsed.healed


def naive_append(
    entries: list[dict[str, Any]], incoming: list[dict[str, Any]], max_messages: int = 0
) -> tuple[list[dict[str, Any]], int]:
    """Return ``(buffer after, appended)`` by the letter of GR-MEM."""
    buf = list(entries)
    appended = 0
    for msg in incoming:
        parsed = read_message(msg)
        assert not isinstance(parsed, str), parsed
        role = parsed.role
        if role == "tool":
            rid = parsed.result_id
            holders = [k for k, e in enumerate(buf) if rid is not None and _info(e)[2] == rid]
            if not holders:
                buf.append(to_stored_row(parsed))
                appended += 1
            elif all(_info(buf[k])[3] for k in holders) and not parsed.healed:
                buf[holders[0]] = to_stored_row(parsed)  # MEM-10: replace in place
            # else: MEM-1 duplicate
        elif role == "assistant":
            declared = {c for e in buf for c in _info(e)[1]}
            if parsed.calls and all(c in declared for c in parsed.calls):
                continue  # MEM-2 duplicate
            buf.append(to_stored_row(parsed))
            appended += 1
        elif role == "user" and content_is_empty(parsed.content):
            continue  # pure read
        else:
            if role == "user":
                answered = {_info(e)[2] for e in buf} - {None}
                first_declarer: dict[str, int] = {}
                for k, e in enumerate(buf):
                    for c in _info(e)[1]:
                        first_declarer.setdefault(c, k)
                todo: dict[int, list[str]] = {}
                for c, k in first_declarer.items():
                    if c not in answered:
                        todo.setdefault(k, []).append(c)
                for k in sorted(todo, reverse=True):  # back to front keeps indexes valid
                    order = [c for c in _info(buf[k])[1] if c in todo[k]]
                    buf[k + 1 : k + 1] = [make_placeholder(c) for c in order]
            buf.append(to_stored_row(parsed))
            appended += 1
    while max_messages and len(buf) > max_messages:
        buf.pop(0)
    return buf, appended
