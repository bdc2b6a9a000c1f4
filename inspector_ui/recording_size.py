"""Refuse a recording with too many messages before decoding it, at a cost of its bytes only.

Decoding a JSON recording builds a Python object per value: a 19.9 MB file of
482,196 short messages costs ~500 MB before anything can count its messages.
:func:`too_many_items` counts instead, walking the bytes with one regular
expression (strings are skipped whole, so a bracket inside content counts for
nothing) and keeping only a counter per open list: it stops as soon as one
list holds more items, or the file more top-level values (JSONL lines), than
the limit. A recording's messages are the items of one list (or the lines of a
JSONL file) in every format the importers read, so a file refused here holds
more messages than the limit; one that passes is decoded, and its exact count
checked after (:mod:`inspector_ui.cache`).
"""

from __future__ import annotations

import re

#: A JSON string (escapes included), or one structural byte.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')


def too_many_items(data: bytes, limit: int) -> str | None:
    """Why ``data`` holds more than ``limit`` messages (a list of more items, or more
    top-level values), read only as far as needed; ``None`` when no list is that long."""
    stack: list[int] = []  # per open container: -1 for an object, else the list's commas
    top = 0  # values at depth 0 (the lines of a JSONL file)
    for match in _TOKEN.finditer(data):
        char = match.group()[:1]
        if char == b"[" or char == b"{":
            if not stack:
                top += 1
                if top > limit:
                    return (
                        f"holds more than {limit:,} top-level values (one per line, read "
                        f"to byte {match.start():,})"
                    )
            stack.append(0 if char == b"[" else -1)
        elif char == b"]" or char == b"}":
            if stack:
                stack.pop()
        elif char == b",":
            if stack and stack[-1] >= 0:
                stack[-1] += 1
                if stack[-1] >= limit:  # limit commas: limit + 1 items
                    return (
                        f"holds a list of more than {limit:,} items (read to byte "
                        f"{match.start():,})"
                    )
        elif not stack:  # a string at depth 0: one JSONL line holding a string
            top += 1
    return None
