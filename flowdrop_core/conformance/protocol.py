"""The conformance kit's wire protocol: JSON Lines requests and replies, and how replies are judged.

The runner starts an implementation's adapter once and writes one JSON
object per line to its stdin; the adapter answers each with one JSON object
per line on its stdout, in order. docs/conformance.md describes every op;
:data:`REQUEST_SCHEMA` and :data:`REPLY_SCHEMA` are the same as JSON Schema.

A kit case is a list of exchanges ``{"send": REQUEST, "expect": FIELDS}``.
:func:`mismatches` judges a reply: every field of ``expect`` must be in the
reply with an equal JSON value (``1`` is not ``true``, ``1`` equals ``1.0``
as JSON numbers do). Two expect fields are special: ``"error": true`` asks
for a non-empty ``error`` text (``false``: no ``error`` key), and
``"entries_any_order"`` compares the reply's ``messages`` as a multiset
(concurrent appends land in any order).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["OPS", "PROTOCOL_VERSION", "REPLY_SCHEMA", "REQUEST_SCHEMA", "mismatches"]

PROTOCOL_VERSION = 1

#: Every op, in the order docs/conformance.md describes them.
OPS: tuple[str, ...] = (
    "hello",
    "begin",
    "append",
    "read",
    "clear",
    "concurrent",
    "normalize",
    "text",
    "assemble",
    "owns",
)

_CONTEXT = {"type": ["object", "null"], "description": "An execution context (MEM-6..8)."}
_MESSAGES = {"type": "array", "items": {"type": "object"}}

#: JSON Schema of one request line.
REQUEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GR-MEM conformance kit request",
    "type": "object",
    "required": ["op"],
    "oneOf": [
        {"properties": {"op": {"const": "hello"}}},
        {
            "properties": {
                "op": {"const": "begin"},
                "config": {
                    "type": "object",
                    "properties": {
                        "scope": {
                            "enum": [
                                "global",
                                "workflow",
                                "pipeline",
                                "execution",
                                "session",
                                "user",
                            ]
                        },
                        "key": {"type": "string"},
                        "max_messages": {"type": "integer", "minimum": 0},
                    },
                    "additionalProperties": False,
                },
                "context": _CONTEXT,
                "buffer": {"type": "array"},
                "then": {"type": "array", "items": _CONTEXT},
                "slots": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["scope_id", "messages"],
                        "properties": {"scope_id": {"type": "string"}, "messages": _MESSAGES},
                    },
                },
                "tier": {"enum": ["view", "drive", "admin"]},
            },
        },
        {
            "required": ["messages"],
            "properties": {
                "op": {"const": "append"},
                "context": _CONTEXT,
                "messages": {"type": ["object", "array"]},
                "lock_held": {"type": "boolean"},
                "lock_timeout": {"type": "number", "minimum": 0},
            },
        },
        {"properties": {"op": {"enum": ["read", "clear"]}, "context": _CONTEXT}},
        {
            "required": ["appends"],
            "properties": {
                "op": {"const": "concurrent"},
                "context": _CONTEXT,
                "appends": {"type": "array", "items": {"type": ["object", "array"]}},
            },
        },
        {"required": ["messages"], "properties": {"op": {"const": "normalize"}, "messages": {}}},
        {
            "properties": {
                "op": {"const": "text"},
                "text": {"type": ["string", "null"]},
                "role": {},
                "tool_call_id": {},
            }
        },
        {
            "required": ["inputs"],
            "properties": {
                "op": {"const": "assemble"},
                "inputs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["port"],
                        "properties": {"port": {"type": "string"}, "value": {}},
                    },
                },
            },
        },
        {"properties": {"op": {"const": "owns"}, "principal": {}, "owner": {}}},
    ],
}

#: JSON Schema of one reply line (the fields each op answers with are in docs/conformance.md).
REPLY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "GR-MEM conformance kit reply",
    "type": "object",
    "properties": {
        "error": {"type": "string", "minLength": 1},
        "denied": {"type": "boolean"},
        "rule": {"type": "string"},
        "count": {"type": "integer", "minimum": 0},
        "appended": {"type": "integer", "minimum": 0},
        "appended_any": {"type": "boolean"},
        "refused": {"type": "boolean"},
        "resolved_scope_id": {"type": "string"},
        "found": {"type": "boolean"},
        "verdict": {"type": "string"},
        "serialized": {"type": "boolean"},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "messages": _MESSAGES,
        "dropped": {"type": "integer", "minimum": 0},
        "message": {"type": ["object", "null"]},
        "cleared": {"type": "boolean"},
        "owns": {"type": "boolean"},
    },
}


def _same(want: Any, got: Any) -> bool:
    """JSON equality: booleans are not numbers, and key order does not matter."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, int | float) and isinstance(got, int | float):
        return want == got
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_same(v, got[k]) for k, v in want.items())
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(map(_same, want, got))
    return type(want) is type(got) and want == got


def _first_difference(path: str, want: Any, got: Any) -> tuple[str, Any, Any]:
    """Where two unequal JSON values first differ: the deepest path that still differs."""
    if isinstance(want, list) and isinstance(got, list):
        for index, (w, g) in enumerate(zip(want, got, strict=False)):
            if not _same(w, g):
                return _first_difference(f"{path}[{index}]", w, g)
        if len(want) != len(got):
            return (f"{path} length", len(want), len(got))
    if (
        isinstance(want, dict)
        and isinstance(got, dict)
        and not isinstance(want, bool)
        and want.keys() == got.keys()
    ):
        for key, w in want.items():
            if not _same(w, got[key]):
                return _first_difference(f"{path}.{key}", w, got[key])
    return (path, want, got)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def mismatches(expect: Mapping[str, Any], reply: Any) -> list[tuple[str, Any, Any]]:
    """Each expected field the reply misses, as ``(path, expected, got)``; ``[]`` when it meets all.

    The path names the first place inside the field where the values differ
    (``messages[1].role``), so a long buffer's mismatch points at its entry.
    """
    if not isinstance(reply, dict):
        return [("reply", "a JSON object", reply)]
    out: list[tuple[str, Any, Any]] = []
    if "error" not in expect and "error" in reply:
        out.append(("error", "no error", reply["error"]))
    for field, want in expect.items():
        if field == "error":
            got_error = isinstance(reply.get("error"), str) and bool(reply["error"])
            if got_error is not bool(want):
                out.append(("error", "an error" if want else "no error", reply.get("error")))
        elif field == "entries_any_order":
            got = reply.get("messages")
            if not isinstance(got, list) or sorted(map(_canonical, want)) != sorted(
                map(_canonical, got)
            ):
                out.append(("messages (any order)", want, got))
        elif field not in reply:
            out.append((field, want, "(missing)"))
        elif not _same(want, reply[field]):
            out.append(_first_difference(field, want, reply[field]))
    return out
