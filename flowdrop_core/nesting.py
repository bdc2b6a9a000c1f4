"""How deep a message or a stored entry may nest, and where a value goes deeper.

One bound for the whole library, so that nothing that validates, copies,
encodes, decodes or compares an entry can run out of the interpreter's stack
(a bare ``RecursionError``): a message deeper than :data:`MAX_MESSAGE_DEPTH`
is refused when appended, with the JSON path where it goes too deep; a
stored entry deeper than :data:`MAX_ENTRY_DEPTH` is refused when written and
is a bad stored entry when read. The walk is iterative, so a value nested a
million levels is measured without recursion. Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_ENTRY_DEPTH", "MAX_MESSAGE_DEPTH", "deep_offset", "deeper_than", "text_may_nest"]

#: Levels a message may nest (the message object is level 1, its content list level 2...),
#: the same bound input files have (``scenario.MAX_JSON_DEPTH``). Real messages stay far
#: below it: content parts and a tool call's arguments are a handful of levels.
MAX_MESSAGE_DEPTH = 100

#: Levels a stored entry may nest: a message's stored row moves ``tool_calls`` under
#: ``metadata``, one level deeper, so every message accepted is read back.
MAX_ENTRY_DEPTH = MAX_MESSAGE_DEPTH + 1


def deeper_than(value: Any, limit: int, start: int = 1) -> str | None:
    """Where ``value`` (at level ``start``) first nests past ``limit`` levels, else ``None``.

    Only dicts, lists and tuples are levels. The place is a JSON path from the
    value (``extra[0].a``). Level by level, without recursion, and the path is
    only looked for once the value is known to go too deep.
    """
    if _within(value, limit, start):
        return None
    # (container, its level, its parent's frame, the key it sits under)
    stack: list[tuple[Any, int, Any, Any]] = [(value, start, None, None)]
    while stack:
        frame = stack.pop()
        node, level = frame[0], frame[1]
        if level > limit:
            return _path(frame)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list | tuple):
                stack.append((child, level + 1, frame, key))
    return None  # pragma: no cover - _within said it goes too deep


def _within(value: Any, limit: int, level: int) -> bool:
    """Whether ``value`` at ``level`` nests ``limit`` levels or fewer (the fast pass)."""
    if level > limit:
        return not isinstance(value, dict | list | tuple)
    frontier = [value]
    while True:
        below = []
        for node in frontier:
            if type(node) is dict:
                children: Any = node.values()
            elif type(node) is list or type(node) is tuple:
                children = node
            elif isinstance(node, dict):
                children = node.values()
            elif isinstance(node, list | tuple):
                children = node
            else:
                continue  # a leaf
            for child in children:
                kind = type(child)
                if kind is not str and child is not None and kind is not int:
                    below.append(child)  # a container, or a leaf sorted out above
        if not below:
            return True
        level += 1
        if level > limit and any(isinstance(node, dict | list | tuple) for node in below):
            return False
        frontier = below


def _path(frame: tuple[Any, int, Any, Any]) -> str:
    keys = []
    while frame[2] is not None:
        keys.append(frame[3])
        frame = frame[2]
    out = ""
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def text_may_nest(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` can nest past ``limit`` levels: a fast, C-speed pre-check.

    A value nests no deeper than its count of opening brackets, so text with
    ``limit`` or fewer (the usual entry) needs no walk.
    """
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{") > limit
    return text.count("[") + text.count("{") > limit


_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def deep_offset(text: str, limit: int) -> int | None:
    """The character offset where JSON ``text`` opens its level ``limit + 1``, else ``None``.

    For text too deep to decode at all (the decoder ran out of stack), so the
    place is still named; strings are skipped, so brackets inside them do not count.
    """
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None
