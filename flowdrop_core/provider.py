"""The provider view (MEM-5): a read-only repair of a buffer into what a provider accepts.

Chat-completion providers reject a conversation whose tool pairing is off: a
result with no call before it, a call with no result right after its turn, a
call id declared twice, a conversation that opens with a tool message. The
buffer itself keeps such entries (it records what happened); this module turns
a copy into the provider-flat shape, repairs it, and reports every entry it
dropped and every result it synthesized, with where it came from. It never
modifies its input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from flowdrop_core.ids import usable_id
from flowdrop_core.messages import PLACEHOLDER_CONTENT, ROLES, read_call_function, read_call_id

__all__ = ["Finding", "NormalizeReport", "lint", "normalize", "normalize_report"]

FindingKind = Literal[
    "not_a_message",
    "malformed_calls",
    "orphan_result",
    "duplicate_result",
    "idless_result",
    "empty_turn",
    "duplicate_call",
    "unanswered_call",
    "leading_tool",
]


class Finding(BaseModel):
    """One thing a provider would reject, where it is, and what MEM-5 did about it.

    ``index`` is the position of the entry in the buffer given to
    :func:`normalize_report`. ``dropped`` is true when the entry was removed;
    an unanswered call gets a synthetic result instead, and a repeated call id
    is removed from the later turn only.
    """

    index: int
    kind: FindingKind
    message: str
    tool_call_id: str | None = None
    dropped: bool = False
    rule: str = "MEM-5"

    def __str__(self) -> str:
        return f"entry {self.index}: {self.message}"


class NormalizeReport(BaseModel):
    """The provider view of a buffer: the repaired messages and every repair made."""

    messages: list[dict[str, Any]]
    dropped: int
    findings: list[Finding]

    @property
    def drops(self) -> list[Finding]:
        """Only the findings that removed an entry (their count is ``dropped``)."""
        return [f for f in self.findings if f.dropped]


def _text(content: Any) -> str:
    """Provider content is text: non-scalar content is serialized, ``None`` is empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _provider_call(call: Mapping[str, Any], cid: str) -> dict[str, Any]:
    """A declared call in OpenAI's shape, whatever spelling it came in (MEM-11)."""
    name, args = read_call_function(call)
    if args is None:
        args = "{}"
    elif not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return {"id": cid, "type": "function", "function": {"name": name or "", "arguments": args}}


class _Item:
    """A coerced message and the buffer index it came from."""

    __slots__ = ("calls", "index", "msg", "result_id", "role")

    def __init__(self, index: int, msg: dict[str, Any], calls: list[str], result_id: str | None):
        self.index = index
        self.msg = msg
        self.role: str = msg["role"]
        self.calls = calls
        self.result_id = result_id


def _coerce(entries: Iterable[Any], findings: list[Finding]) -> list[_Item]:
    """Step 1: every entry to the flat shape; drop only what is not a message at all.

    Lenient on purpose (this is a repair, not validation): an entry is
    dropped only when it is not an object or has no usable role. A malformed
    ``tool_calls``, ``metadata`` or id is coerced away (with a finding) and
    the message kept; ids are read by the shared readers (MEM-11).
    """
    items: list[_Item] = []
    for index, entry in enumerate(entries):
        role = entry.get("role") if isinstance(entry, Mapping) else None
        if not isinstance(role, str) or role not in ROLES:
            if not isinstance(entry, Mapping):
                why = f"not a message object ({type(entry).__name__})"
            elif role is None:
                why = "no role"
            else:
                why = f"unknown role {role!r}"
            findings.append(
                Finding(index=index, kind="not_a_message", message=f"dropped: {why}", dropped=True)
            )
            continue
        meta = entry.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        msg: dict[str, Any] = {"role": role, "content": _text(entry.get("content"))}
        calls: list[str] = []
        result_id = None
        if role == "assistant":
            raw_calls = entry.get("tool_calls") or meta.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                findings.append(
                    Finding(
                        index=index,
                        kind="malformed_calls",
                        message=f"tool_calls is not a list ({type(raw_calls).__name__}); ignored",
                    )
                )
                raw_calls = []
            provider_calls = []
            for call in raw_calls:
                cid = read_call_id(call) if isinstance(call, Mapping) else None
                if cid is not None and cid not in calls:
                    calls.append(cid)
                    provider_calls.append(_provider_call(call, cid))
            if provider_calls:
                msg["tool_calls"] = provider_calls
        elif role == "tool":
            raw_id = entry.get("tool_call_id")
            result_id = usable_id(raw_id if raw_id is not None else meta.get("tool_call_id"))
            if result_id is not None:
                msg["tool_call_id"] = result_id
        items.append(_Item(index, msg, calls, result_id))
    return items


def _repair(items: list[_Item], findings: list[Finding]) -> list[_Item]:
    """Step 3: pair every call with exactly one result, right after its turn.

    A result counts only if its call was declared before it; a later second
    result for the same id is a duplicate; a call id declared again is removed
    from the later turn; an unanswered call gets a synthetic result.
    """
    declared: set[str] = set()
    results: dict[str, _Item] = {}
    kept: list[_Item] = []
    for item in items:
        if item.role == "assistant":
            fresh = [cid for cid in item.calls if cid not in declared]
            for cid in item.calls:
                if cid in declared:
                    findings.append(
                        Finding(
                            index=item.index,
                            kind="duplicate_call",
                            tool_call_id=cid,
                            message=f"call id {cid!r} was already declared by an earlier turn; "
                            "removed from this one",
                        )
                    )
            if fresh != item.calls:
                item.calls = fresh
                wanted = set(fresh)
                calls = [c for c in item.msg.get("tool_calls", []) if c["id"] in wanted]
                item.msg = {k: v for k, v in item.msg.items() if k != "tool_calls"}
                if calls:
                    item.msg["tool_calls"] = calls
            declared.update(fresh)
            if not item.calls and not item.msg["content"].strip():
                findings.append(
                    Finding(
                        index=item.index,
                        kind="empty_turn",
                        dropped=True,
                        message="dropped: assistant turn with no content and no usable tool call",
                    )
                )
                continue
            kept.append(item)
        elif item.role == "tool":
            cid = item.result_id
            if cid is None:
                kind, why = "idless_result", "tool result with no usable tool_call_id (MEM-11)"
            elif cid not in declared:
                kind, why = (
                    "orphan_result",
                    f"result for call {cid!r} with no call declared before it",
                )
            elif cid in results:
                kind, why = "duplicate_result", f"second result for call {cid!r}"
            else:
                results[cid] = item
                continue
            findings.append(
                Finding(
                    index=item.index,
                    kind=kind,
                    tool_call_id=cid,
                    dropped=True,
                    message=f"dropped: {why}",
                )
            )
        else:
            kept.append(item)

    out: list[_Item] = []
    for item in kept:
        out.append(item)
        for cid in item.calls:
            result = results.get(cid)
            if result is None:
                findings.append(
                    Finding(
                        index=item.index,
                        kind="unanswered_call",
                        tool_call_id=cid,
                        message=f"call {cid!r} has no result; a synthetic interrupted result "
                        "was placed right after its turn",
                    )
                )
                synthetic = {"role": "tool", "content": PLACEHOLDER_CONTENT, "tool_call_id": cid}
                result = _Item(item.index, synthetic, [], cid)
            out.append(result)
    return out


def normalize_report(entries: Iterable[Any]) -> NormalizeReport:
    """MEM-5: the provider view of ``entries`` with every drop and repair explained.

    Steps, as GR-MEM states them: coerce each entry to the flat shape (drop
    non-objects and role-less entries, serialize non-scalar content); move
    ``system`` messages to the front (both groups keep their order); repair
    tool pairing; strip leading ``tool`` messages and repair again. The drop
    count is counted by the passes that drop, not derived from lengths
    (synthetic results make the output longer).
    """
    findings: list[Finding] = []
    items = _coerce(entries, findings)
    items = [i for i in items if i.role == "system"] + [i for i in items if i.role != "system"]
    items = _repair(items, findings)
    while items and items[0].role == "tool":
        lead = items.pop(0)
        findings.append(
            Finding(
                index=lead.index,
                kind="leading_tool",
                tool_call_id=lead.result_id,
                dropped=True,
                message="dropped: a conversation cannot open with a tool message",
            )
        )
    items = _repair(items, findings)
    dropped = sum(1 for f in findings if f.dropped)
    return NormalizeReport(messages=[i.msg for i in items], dropped=dropped, findings=findings)


def normalize(entries: Iterable[Any]) -> tuple[list[dict[str, Any]], int]:
    """MEM-5: ``(messages, dropped)``, the provider view and how many entries it dropped."""
    report = normalize_report(entries)
    return report.messages, report.dropped


def lint(entries: Iterable[Any]) -> list[Finding]:
    """What a provider would reject in ``entries``, with locations, in buffer order."""
    return sorted(normalize_report(entries).findings, key=lambda f: f.index)
