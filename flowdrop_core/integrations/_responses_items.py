"""OpenAI Responses input items as GR-MEM rows and back, without loss (no framework needed).

The Agents SDK keeps a session as a list of Responses input items. Each
item becomes one stored row that keeps the whole item under
``"responses_item"``, so reading the rows back gives the items exactly as
they were (reasoning with its encrypted content, hosted tool items, ids,
statuses). What GR-MEM reads is the pairing:

- a client-side call (``function_call``, ``custom_tool_call``,
  ``computer_call``, ``local_shell_call``, ... anything with a ``call_id``
  the client answers) is an assistant row declaring that ``call_id``;
- its ``*_output`` item is a tool row answering it (MEM-1 dedups on it);
- a ``message`` (or an easy input message) keeps its role (``developer`` is
  ``system``); a user message is the human turn where MEM-3 heals;
- reasoning, hosted tools the provider ran itself (web search, file search,
  code interpreter, MCP, ...) and item types this module does not know are
  assistant rows with a visible marker as content: kept, never paired.

A healed placeholder comes back as the output item its call expects
(``function_call_output`` for a function call, ``custom_tool_call_output``
for a custom tool call, ...) carrying the interrupted text; an output item
that carries exactly that text is read back as a placeholder (MEM-10: a late
real result replaces it), whoever stored it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flowdrop_core.importers._base import marker
from flowdrop_core.importers._openai_responses import HOSTED
from flowdrop_core.messages import (
    PLACEHOLDER_CONTENT,
    InvalidMessagesError,
    MessageProblem,
)
from flowdrop_core.provider import Finding, normalize_report

__all__ = [
    "ITEM_KEY",
    "item_to_row",
    "items_to_rows",
    "provider_items",
    "row_to_item",
    "rows_to_items",
]

#: The key of a stored row that holds the whole Responses item.
ITEM_KEY = "responses_item"

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
#: The output item type that answers each call type (a placeholder is written in it).
OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}


def _problem(where: str, index: int, text: str) -> InvalidMessagesError:
    return InvalidMessagesError([MessageProblem(where, index, text)])


def _is_call(kind: str, item: Mapping[str, Any]) -> bool:
    return kind.endswith("_call") and kind not in HOSTED and "call_id" in item


def _is_output(kind: str, item: Mapping[str, Any]) -> bool:
    return kind.endswith("_output") and kind not in HOSTED and "call_id" in item


def _summary(item: Mapping[str, Any]) -> str:
    texts = [
        s.get("text")
        for s in item.get("summary") or ()
        if isinstance(s, Mapping) and isinstance(s.get("text"), str)
    ]
    return "\n".join(t for t in texts if t)


def item_to_row(item: Any, index: int = 0, where: str = "items") -> dict[str, Any]:
    """One Responses input item as a GR-MEM row; a malformed one raises, naming ``where[index]``."""
    if not isinstance(item, Mapping):
        raise _problem(where, index, f"expected an item object, got {type(item).__name__}")
    kept = dict(item)
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        raise _problem(where, index, f"'type' must be a string, got {type(kind).__name__}")
    if kind in (None, "message") and "role" in item:
        role = item["role"]
        if role not in _ROLES:
            raise _problem(
                where, index, f"unknown message role {role!r} (user, assistant, system, developer)"
            )
        content = item.get("content")
        if content is not None and not isinstance(content, str | list):
            raise _problem(
                where,
                index,
                f"'content' must be text or a list of parts, got {type(content).__name__}",
            )
        return {"role": _ROLES[role], "content": content, "metadata": {}, ITEM_KEY: kept}
    if kind is None:
        raise _problem(where, index, "an item needs a 'type' (or a 'role' for a message)")
    call_id = item.get("call_id")
    if (_is_call(kind, item) or _is_output(kind, item)) and not isinstance(call_id, str | int):
        raise _problem(where, index, f"{kind}: 'call_id' must be a string, got {call_id!r}")
    if _is_call(kind, item):
        name = item.get("name") or kind.removesuffix("_call")
        call = {"id": call_id, "name": name, "type": kind}
        return {
            "role": "assistant",
            "content": None,
            "metadata": {"tool_calls": [call]},
            ITEM_KEY: kept,
        }
    if _is_output(kind, item):
        output = item.get("output")
        if output is not None and not isinstance(output, str | list | dict):
            output = json.dumps(output)
        meta: dict[str, Any] = {"tool_call_id": call_id}
        if output == PLACEHOLDER_CONTENT:  # written by a heal: a late real result replaces it
            meta["healed"] = True
        return {"role": "tool", "content": output, "metadata": meta, ITEM_KEY: kept}
    if kind == "reasoning":
        text = _summary(item)
        content = f"[reasoning] {text}" if text else "[reasoning]"
    else:  # hosted tools, item references, compaction and unknown types: shown, never paired
        body = {
            k: v for k, v in item.items() if k not in ("type", "id", "encrypted_content", "result")
        }
        content = marker(kind, item.get("id"), body)
    return {"role": "assistant", "content": content, "metadata": {}, ITEM_KEY: kept}


def items_to_rows(items: Iterable[Any], where: str = "items") -> list[dict[str, Any]]:
    """Every item as a row; one :class:`InvalidMessagesError` names every bad index."""
    rows: list[dict[str, Any]] = []
    problems: list[MessageProblem] = []
    for k, item in enumerate(items):
        try:
            rows.append(item_to_row(item, k, where))
        except InvalidMessagesError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidMessagesError(problems)
    return rows


def _call_types(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    types: dict[str, str] = {}
    for row in rows:
        for call in (row.get("metadata") or {}).get("tool_calls") or ():
            if isinstance(call, Mapping) and call.get("id") is not None:
                types.setdefault(str(call["id"]), str(call.get("type") or "function_call"))
    return types


def row_to_item(row: Mapping[str, Any], call_types: Mapping[str, str] | None = None) -> list[Any]:
    """A row back as its item(s): the kept item, a placeholder's output, or a plain row's spelling.

    A row another runtime wrote (no kept item) is spelled as Responses input:
    a message, one ``function_call`` per declared call, a ``function_call_output``.
    """
    kept = row.get(ITEM_KEY)
    if kept is not None:
        return [kept]
    meta = row.get("metadata") or {}
    role = row.get("role")
    content = row.get("content")
    if role == "tool":
        cid = meta.get("tool_call_id", row.get("tool_call_id"))
        kind = OUTPUT_OF.get(
            (call_types or {}).get(str(cid), "function_call"), "function_call_output"
        )
        output = PLACEHOLDER_CONTENT if meta.get("healed") is True else content
        if not isinstance(output, str | list):
            output = "" if output is None else json.dumps(output)
        return [{"type": kind, "call_id": cid, "output": output}]
    items: list[Any] = []
    if content not in (None, "", []):
        items.append({"role": "developer" if role == "system" else role, "content": content})
    for call in meta.get("tool_calls", row.get("tool_calls")) or ():
        fn = call.get("function") if isinstance(call.get("function"), Mapping) else call
        args = fn.get("arguments", fn.get("args", "{}"))
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id", call.get("tool_call_id")),
                "name": fn.get("name"),
                "arguments": args if isinstance(args, str) else json.dumps(args),
            }
        )
    return items


def rows_to_items(rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Rows back as Responses input items, in order (placeholders typed after their calls)."""
    types = _call_types(rows)
    return [item for row in rows for item in row_to_item(row, types)]


def provider_items(rows: Sequence[Mapping[str, Any]]) -> tuple[list[Any], list[Finding]]:
    """MEM-5 on stored rows: the Responses input a provider accepts, and every repair made.

    With nothing to repair the items are exactly the stored ones, in order.
    Otherwise the repair of :func:`~flowdrop_core.provider.normalize_report`
    is applied to the items themselves: an orphan or duplicate output and a
    re-declared call are left out, each output follows the item that declared
    its call, an unanswered call gets an interrupted output of its type, and
    system (developer) messages come first. Kept items are the stored ones.
    """
    unanswered = _unanswered_only(rows)  # one cheap pass: the common cases
    if unanswered is not None and not unanswered:
        return rows_to_items(rows), []
    if unanswered is not None:  # only open calls: each gets its output right after it
        return _close_calls(rows, unanswered)
    report = normalize_report(rows)
    if not report.findings:
        return rows_to_items(rows), []
    types = _call_types(rows)
    dropped = {f.index for f in report.findings if f.dropped and f.call_index is None}
    kept = [k for k in range(len(rows)) if k not in dropped]
    kept.sort(key=lambda k: rows[k].get("role") != "system")  # stable: system first (MEM-5)
    results: dict[str, int] = {}
    order: list[int] = []
    for k in kept:
        if rows[k].get("role") == "tool":
            cid = (rows[k].get("metadata") or {}).get("tool_call_id", rows[k].get("tool_call_id"))
            results.setdefault(str(cid), k)
        else:
            order.append(k)
    out: list[Any] = []
    walk = iter(order)
    for flat in report.messages:
        if flat["role"] == "tool":
            cid = str(flat["tool_call_id"])
            found = results.get(cid)
            if found is not None:
                out.extend(row_to_item(rows[found], types))
            else:
                kind = OUTPUT_OF.get(types.get(cid, "function_call"), "function_call_output")
                out.append({"type": kind, "call_id": cid, "output": PLACEHOLDER_CONTENT})
            continue
        row = rows[next(walk)]
        ids = [str(c["id"]) for c in flat.get("tool_calls") or ()]
        calls = (row.get("metadata") or {}).get("tool_calls", row.get("tool_calls")) or ()
        have = [str(c.get("id")) for c in calls if isinstance(c, Mapping)]
        if have != ids and row.get(ITEM_KEY) is None:  # a plain row declaring several calls
            meta = dict(row.get("metadata") or {})
            meta["tool_calls"] = [c for c in calls if str(c.get("id")) in ids]
            row = {**row, "metadata": meta}
        out.extend(row_to_item(row, types))
    return out, list(report.findings)


def _unanswered_only(rows: Sequence[Mapping[str, Any]]) -> set[str] | None:
    """The calls left unanswered, when that is all MEM-5 would repair; else ``None``.

    Conservative (unsure means ``None``, the full repair): system messages
    first; every call declared once with a string id by an assistant row,
    answered at most once after it; no empty assistant turn.
    """
    declared: set[str] = set()
    answered: set[str] = set()
    others = False
    for row in rows:
        role = row.get("role")
        meta = row.get("metadata")
        if not isinstance(meta, Mapping) or "tool_calls" in row or "tool_call_id" in row:
            return None
        if role == "system":
            if others or "tool_calls" in meta:
                return None
            continue
        others = True
        if role == "tool":
            cid = meta.get("tool_call_id")
            if not isinstance(cid, str) or not cid or cid not in declared or cid in answered:
                return None
            answered.add(cid)
        elif role == "assistant":
            calls = meta.get("tool_calls")
            if calls:
                for call in calls:
                    cid = call.get("id") if isinstance(call, Mapping) else None
                    if not isinstance(cid, str) or not cid or cid in declared:
                        return None
                    declared.add(cid)
            else:
                content = row.get("content")
                if not content or (isinstance(content, str) and not content.strip()):
                    return None
        elif role != "user" or "tool_calls" in meta:
            return None
    return declared - answered


def _already_valid(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether MEM-5 would find nothing to repair (conservative)."""
    return _unanswered_only(rows) == set()


def _close_calls(
    rows: Sequence[Mapping[str, Any]], unanswered: set[str]
) -> tuple[list[Any], list[Finding]]:
    """The stored items with an interrupted output right after each open call (MEM-5)."""
    types = _call_types(rows)
    out: list[Any] = []
    findings: list[Finding] = []
    for k, row in enumerate(rows):
        out.extend(row_to_item(row, types))
        for call in (row.get("metadata") or {}).get("tool_calls") or ():
            cid = call.get("id")
            if cid in unanswered:
                kind = OUTPUT_OF.get(types.get(cid, "function_call"), "function_call_output")
                out.append({"type": kind, "call_id": cid, "output": PLACEHOLDER_CONTENT})
                findings.append(
                    Finding(
                        index=k,
                        kind="unanswered_call",
                        tool_call_id=cid,
                        message=f"call {cid!r} has no result; a synthetic interrupted result "
                        "was placed right after its turn",
                    )
                )
    return out, findings
