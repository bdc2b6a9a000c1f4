"""A naive, by-the-letter model of GR-MEM, for differential tests.

Written from ``shared/spec/GR-MEM.md`` (and the README's decisions where the
spec is silent), not from the engine: it imports nothing from
``flowdrop_core``, so a bug in the engine's reader, its stored-row writer or
its placeholder cannot hide by being shared. It is slow and obvious on
purpose: every decision rescans the whole buffer as a plain list, so it is
O(buffer) per message and has no index to get wrong.

Three models:

* :func:`naive_append`: the append, step by step (MEM-1, MEM-2, MEM-3,
  MEM-10, MEM-11, MEM-14, MEM-16, the window), returning the buffer after,
  ``appended`` and the decisions (the events a reader should see).
* :func:`naive_normalize`: the provider view (MEM-5), returning the
  messages, the drop count and the located findings.
* :func:`sendable_problems`: what a provider would reject in a flat
  conversation (used to check the provider view's output).
"""

from __future__ import annotations

import json
from typing import Any

PLACEHOLDER_TEXT = "Tool call was interrupted; no result."
ROLES = ("system", "user", "assistant", "tool")

# --------------------------------------------------------------------------- reading


def usable(value: Any) -> str | None:
    """GR-MEM's identifier decision: a trimmed non-blank string other than "0", or an int > 0.

    None, "", whitespace, 0, "0", booleans, negative numbers and non-scalars
    are no id. Ids compare as trimmed strings.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if value == "" or value == "0":
            return None
        return value
    if isinstance(value, int):
        if value > 0:
            return str(value)
        return None
    return None


def field(entry: dict[str, Any], name: str) -> Any:
    """A field of an entry in either shape: top level (provider-flat) or under metadata (stored row)."""
    if entry.get(name) is not None:
        return entry[name]
    meta = entry.get("metadata")
    if isinstance(meta, dict):
        return meta.get(name)
    return None


def call_id(call: Any) -> str | None:
    """MEM-11: a call's id is its ``tool_call_id`` (buffer spelling) or its ``id`` (provider)."""
    if not isinstance(call, dict):
        return None
    first = usable(call.get("tool_call_id"))
    if first is not None:
        return first
    return usable(call.get("id"))


def role_of(entry: dict[str, Any]) -> str:
    return entry["role"]


def declared_by(entry: dict[str, Any]) -> list[str]:
    """The usable call ids an assistant turn declares, in order, each once (MEM-2, MEM-11)."""
    if role_of(entry) != "assistant":
        return []
    out: list[str] = []
    for call in field(entry, "tool_calls") or []:
        cid = call_id(call)
        if cid is not None and cid not in out:
            out.append(cid)
    return out


def answers(entry: dict[str, Any]) -> str | None:
    """The usable call id a tool result answers, else None."""
    if role_of(entry) != "tool":
        return None
    return usable(field(entry, "tool_call_id"))


def is_healed(entry: dict[str, Any]) -> bool:
    return field(entry, "healed") is True


def is_empty(content: Any) -> bool:
    """Empty content (GR-MEM step 5, MEM-16): None, blank text, an empty list or object."""
    if content is None:
        return True
    if isinstance(content, str):
        return content.strip() == ""
    if isinstance(content, list | dict):
        return len(content) == 0
    return False


def stored_row(msg: dict[str, Any]) -> dict[str, Any]:
    """What the buffer writes: role, content and metadata holding tool_calls, tool_call_id, healed.

    Fields given at the top level move under metadata; any other top-level
    field (timestamp, name) is kept as it is.
    """
    meta = dict(msg.get("metadata") or {})
    for name in ("tool_calls", "tool_call_id", "healed"):
        if msg.get(name) is not None:
            meta[name] = msg[name]
    row = {"role": msg["role"], "content": msg.get("content"), "metadata": meta}
    for name, value in msg.items():
        if name not in ("role", "content", "metadata", "tool_calls", "tool_call_id", "healed"):
            row[name] = value
    return row


def placeholder(cid: str) -> dict[str, Any]:
    """MEM-3's synthetic result for an unanswered call."""
    return {
        "role": "tool",
        "content": PLACEHOLDER_TEXT,
        "metadata": {"tool_call_id": cid, "healed": True},
    }


# --------------------------------------------------------------------------- the append

Decision = tuple[str, str, int | None, int | None, str | None]
"""(kind, rule, incoming index, buffer position at that moment, call id)"""


def naive_append(
    entries: list[dict[str, Any]], incoming: list[dict[str, Any]], max_messages: int = 0
) -> tuple[list[dict[str, Any]], int, list[Decision]]:
    """Return ``(buffer after, appended, decisions)`` by the letter of GR-MEM."""
    buf = list(entries)
    appended = 0
    decisions: list[Decision] = []
    for i, msg in enumerate(incoming):
        role = role_of(msg)
        if role == "tool":
            rid = answers(msg)
            if rid is None:
                # MEM-11 decision: cannot be deduplicated; appended with a warning.
                buf.append(stored_row(msg))
                appended += 1
                decisions.append(("appended", "MEM-14", i, len(buf) - 1, None))
                decisions.append(("idless_result", "MEM-11", i, len(buf) - 1, None))
                continue
            holders = [k for k in range(len(buf)) if answers(buf[k]) == rid]
            real = [k for k in holders if not is_healed(buf[k])]
            if not holders:
                buf.append(stored_row(msg))
                appended += 1
                decisions.append(("appended", "MEM-14", i, len(buf) - 1, rid))
            elif not real and not is_healed(msg):
                # MEM-10: the real result replaces the placeholder in place.
                buf[holders[0]] = stored_row(msg)
                decisions.append(("placeholder_replaced", "MEM-10", i, holders[0], rid))
            else:
                # MEM-1: already answered (by a real result, or a healed message
                # meeting a placeholder): dropped.
                where = real[0] if real else holders[0]
                decisions.append(("duplicate_result", "MEM-1", i, where, rid))
        elif role == "assistant":
            calls = declared_by(msg)
            everywhere = [c for entry in buf for c in declared_by(entry)]
            if calls and all(c in everywhere for c in calls):
                first = next(k for k in range(len(buf)) if calls[0] in declared_by(buf[k]))
                decisions.append(("duplicate_turn", "MEM-2", i, first, calls[0]))
                continue
            buf.append(stored_row(msg))
            appended += 1
            decisions.append(("appended", "MEM-14", i, len(buf) - 1, None))
        elif role == "user" and is_empty(msg.get("content")):
            decisions.append(("pure_read", "MEM-16", i, None, None))
        else:
            if role == "user":
                buf = _heal(buf, i, decisions)
            buf.append(stored_row(msg))
            appended += 1
            decisions.append(("appended", "MEM-14", i, len(buf) - 1, None))
    if not incoming:
        decisions.append(("pure_read", "MEM-16", None, None, None))
    while max_messages and len(buf) > max_messages:
        gone = buf.pop(0)
        decisions.append(("evicted", "MEM-14", None, 0, answers(gone)))
    return buf, appended, decisions


def _heal(buf: list[dict[str, Any]], i: int, decisions: list[Decision]) -> list[dict[str, Any]]:
    """MEM-3: a placeholder for every declared call with no result anywhere in the buffer.

    Each goes directly after the first turn that declared the call, in that
    turn's declaration order.
    """
    answered = [answers(e) for e in buf]
    seen: list[str] = []
    out: list[dict[str, Any]] = []
    for entry in buf:
        out.append(entry)
        for cid in declared_by(entry):
            if cid in seen:
                continue  # only the first declaring turn gets the placeholder
            seen.append(cid)
            if cid not in answered:
                out.append(placeholder(cid))
                decisions.append(("placeholder_inserted", "MEM-3", i, len(out) - 1, cid))
    return out


# --------------------------------------------------------------------------- MEM-5

Found = tuple[int, int | None, str, str | None, bool]
"""(entry index, call index, kind, call id, dropped)"""


def _as_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _provider_call(call: dict[str, Any], cid: str) -> dict[str, Any]:
    """A call in OpenAI's shape: name and arguments from ``function`` or flat (name, arguments/args/input)."""
    if isinstance(call.get("function"), dict):
        name = call["function"].get("name")
        args = call["function"].get("arguments")
    else:
        name = call.get("name")
        args = None
        for key in ("arguments", "args", "input"):
            if key in call:
                args = call[key]
                break
    if args is None:
        args = "{}"
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return {"id": cid, "type": "function", "function": {"name": name or "", "arguments": args}}


def naive_normalize(entries: list[Any]) -> tuple[list[dict[str, Any]], int, list[Found]]:
    """MEM-5 by the letter: coerce, systems first, repair pairing; count every drop.

    The drop count is the tally of every entry and every call removed. A call
    is removed when it sits on a message that is not an assistant turn, has
    no usable id, repeats an id of its own turn, or repeats an id an earlier
    turn declared. An assistant turn left with no call and blank content is
    removed. A result is removed when it has no usable id, its call was not
    declared before it, or its call already has a result. Every kept call
    gets its result (or a synthetic one) right after its turn.
    """
    found: list[Found] = []
    flat: list[tuple[int, dict[str, Any], list[Any], str | None]] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("role") not in ROLES:
            found.append((index, None, "not_a_message", None, True))
            continue
        meta: dict[str, Any] = entry["metadata"] if isinstance(entry.get("metadata"), dict) else {}
        calls = entry.get("tool_calls") or meta.get("tool_calls") or []
        if not isinstance(calls, list):
            found.append((index, None, "malformed_calls", None, False))
            calls = []
        rid = None
        if entry["role"] == "tool":
            raw = entry.get("tool_call_id")
            rid = usable(raw if raw is not None else meta.get("tool_call_id"))
        msg = {"role": entry["role"], "content": _as_text(entry.get("content"))}
        if rid is not None:
            msg["tool_call_id"] = rid
        flat.append((index, msg, calls, rid))

    systems = [f for f in flat if f[1]["role"] == "system"]
    others = [f for f in flat if f[1]["role"] != "system"]

    declared: list[str] = []
    result_of: dict[str, dict[str, Any]] = {}
    kept: list[tuple[int, dict[str, Any], list[str]]] = []
    for index, msg, calls, rid in systems + others:
        mine: list[str] = []
        provider_calls = []
        for j, call in enumerate(calls):
            cid = call_id(call)
            if msg["role"] != "assistant":
                found.append((index, j, "misplaced_call", None, True))
            elif cid is None:
                found.append((index, j, "idless_call", None, True))
            elif cid in mine or cid in declared:
                found.append((index, j, "duplicate_call", cid, True))
            else:
                mine.append(cid)
                provider_calls.append(_provider_call(call, cid))
        declared.extend(mine)
        if provider_calls:
            msg = {**msg, "tool_calls": provider_calls}
        if msg["role"] == "assistant" and not mine and msg["content"].strip() == "":
            found.append((index, None, "empty_turn", None, True))
        elif msg["role"] == "tool":
            if rid is None:
                found.append((index, None, "idless_result", None, True))
            elif rid not in declared:
                found.append((index, None, "orphan_result", rid, True))
            elif rid in result_of:
                found.append((index, None, "duplicate_result", rid, True))
            else:
                result_of[rid] = msg
        else:
            kept.append((index, msg, mine))

    out: list[dict[str, Any]] = []
    for index, msg, mine in kept:
        out.append(msg)
        for cid in mine:
            if cid in result_of:
                out.append(result_of[cid])
            else:
                found.append((index, None, "unanswered_call", cid, False))
                out.append({"role": "tool", "content": PLACEHOLDER_TEXT, "tool_call_id": cid})
    dropped = len([f for f in found if f[4]])
    return out, dropped, found


def sendable_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What a chat-completions provider would reject in a flat conversation.

    Every declared call is answered exactly once, right after its turn (only
    results between the turn and the next non-tool message); no result
    without its call there; no conversation opening with a tool message; no
    call id declared twice; no call without an id.
    """
    problems: list[str] = []
    if messages and messages[0]["role"] == "tool":
        problems.append("opens with a tool message")
    seen_ids: list[str] = []
    k = 0
    while k < len(messages):
        msg = messages[k]
        if msg["role"] == "tool":
            problems.append(f"message {k}: a tool result not right after its call's turn")
            k += 1
            continue
        ids = [c.get("id") for c in msg.get("tool_calls", [])]
        if ids and msg["role"] != "assistant":
            problems.append(f"message {k}: calls on a {msg['role']} message")
        for cid in ids:
            if usable(cid) is None:
                problems.append(f"message {k}: a call without an id")
            if cid in seen_ids:
                problems.append(f"message {k}: call {cid!r} declared twice")
            seen_ids.append(cid)
        k += 1
        got: list[str | None] = []
        while k < len(messages) and messages[k]["role"] == "tool":
            got.append(messages[k].get("tool_call_id"))
            k += 1
        if sorted(got, key=str) != sorted(ids, key=str):
            problems.append(f"turn before message {k}: calls {ids} answered by {got}")
    return problems
