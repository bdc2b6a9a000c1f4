"""The provider view (MEM-5): a read-only repair of a buffer into what a provider accepts.

Chat-completion providers reject a conversation whose tool pairing is off: a
result with no call before it, a call with no result right after its turn, a
call id declared twice, a call with no id, a conversation that opens with a
tool message. The buffer itself keeps such entries (it records what
happened); this module turns a copy into the provider-flat shape, repairs it,
and reports every entry and every call it dropped and every result it
synthesized, with where it came from. It never modifies its input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from flowdrop_core._ids import usable_id
from flowdrop_core.messages import PLACEHOLDER_CONTENT, ROLES, read_call_function, read_call_id

__all__ = ["Finding", "NormalizeReport", "lint", "normalize", "normalize_report"]

FindingKind = Literal[
    "not_a_message",
    "malformed_calls",
    "idless_call",
    "misplaced_call",
    "orphan_result",
    "duplicate_result",
    "idless_result",
    "empty_turn",
    "duplicate_call",
    "unanswered_call",
]


class Finding(BaseModel):
    """One thing a provider would reject, where it is, and what MEM-5 did about it.

    ``index`` is the position of the entry in the buffer given to
    :func:`normalize_report`; ``call_index`` is the position of the call in
    that entry's ``tool_calls`` when the finding is about one call. ``dropped``
    is true when an entry or a call was removed (each counts one drop); an
    unanswered call gets a synthetic result instead, and a malformed
    ``tool_calls`` field is ignored without removing the message.
    """

    index: int
    kind: FindingKind
    message: str
    tool_call_id: str | None = None
    call_index: int | None = None
    dropped: bool = False
    rule: str = "MEM-5"

    def __str__(self) -> str:
        where = f"entry {self.index}"
        if self.call_index is not None:
            where += f", tool_calls[{self.call_index}]"
        return f"{where}: {self.message}"


class NormalizeReport(BaseModel):
    """The provider view of a buffer: the repaired messages and every repair made."""

    messages: list[dict[str, Any]]
    dropped: int
    findings: list[Finding]

    @property
    def drops(self) -> list[Finding]:
        """Only the findings that removed an entry or a call (their count is ``dropped``)."""
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


#: The calls of an entry or a turn that has none: one shared empty list, only ever read,
#: instead of new lists per entry. A pass over 10,000 entries made about 30,000 lists
#: that lived to its end; each object that outlives the collector's young generations
#: brings its next sweep of the whole process nearer (0.3 s beside a 20,000-step replay).
_NO_CALLS: list[Any] = []


class _Item:
    """A coerced message, the buffer index it came from, and its calls as given.

    ``raw_calls`` holds every item of the entry's ``tool_calls`` list as
    given; :func:`_repair` decides which of them survive into ``calls`` (the
    usable ids kept) and the message's provider ``tool_calls``.
    """

    __slots__ = ("calls", "index", "msg", "raw_calls", "result_id", "role")

    def __init__(
        self, index: int, msg: dict[str, Any], raw_calls: list[Any], result_id: str | None
    ) -> None:
        self.index = index
        self.msg = msg
        self.role: str = msg["role"]
        self.raw_calls = raw_calls
        self.calls: list[str] = _NO_CALLS
        self.result_id = result_id


def _coerce(entries: Iterable[Any], findings: list[Finding]) -> list[_Item]:
    """Step 1: every entry to the flat shape; drop only what is not a message at all.

    Lenient on purpose (this is a repair, not validation): an entry is
    dropped only when it is not an object or has no usable role. A malformed
    ``tool_calls``, ``metadata`` or result id is coerced away (with a finding
    where something is lost) and the message kept; ids are read by the shared
    readers (MEM-11). Calls are judged by :func:`_repair`.
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
        raw_calls = entry.get("tool_calls") or meta.get("tool_calls") or _NO_CALLS
        if not isinstance(raw_calls, list):
            findings.append(
                Finding(
                    index=index,
                    kind="malformed_calls",
                    message=f"tool_calls is not a list ({type(raw_calls).__name__}); ignored",
                )
            )
            raw_calls = []
        result_id = None
        if role == "tool":
            raw_id = entry.get("tool_call_id")
            result_id = usable_id(raw_id if raw_id is not None else meta.get("tool_call_id"))
            if result_id is not None:
                msg["tool_call_id"] = result_id
        items.append(_Item(index, msg, raw_calls, result_id))
    return items


def _drop_call(
    findings: list[Finding], item: _Item, j: int, kind: Any, why: str, cid: str | None = None
) -> None:
    """Record one call removed from a turn (counts one drop)."""
    findings.append(
        Finding(
            index=item.index,
            kind=kind,
            call_index=j,
            tool_call_id=cid,
            dropped=True,
            message=f"dropped: tool_calls[{j}] {why}",
        )
    )


def _keep_calls(item: _Item, declared: set[str], findings: list[Finding]) -> None:
    """Keep the calls of one turn a provider accepts; every other call is a located drop.

    A call is removed when it is not an object or has no usable id (MEM-11),
    repeats an id earlier in the same turn, or repeats an id an earlier turn
    declared. Only an assistant turn declares calls: calls on any other role
    are removed.
    """
    calls: list[str] = []
    provider_calls: list[dict[str, Any]] = []
    for j, call in enumerate(item.raw_calls):
        if item.role != "assistant":
            _drop_call(findings, item, j, "misplaced_call", f"on a {item.role} message")
            continue
        cid = read_call_id(call) if isinstance(call, Mapping) else None
        if cid is None:
            if isinstance(call, Mapping):
                why = "has no usable id (MEM-11: blank and '0' are no id)"
            else:
                why = f"is not a call object ({type(call).__name__})"
            _drop_call(findings, item, j, "idless_call", why)
        elif cid in calls:
            _drop_call(
                findings, item, j, "duplicate_call", f"repeats call id {cid!r} of this turn", cid
            )
        elif cid in declared:
            _drop_call(
                findings,
                item,
                j,
                "duplicate_call",
                f"repeats call id {cid!r}, already declared by an earlier turn",
                cid,
            )
        else:
            calls.append(cid)
            provider_calls.append(_provider_call(call, cid))
    item.calls = calls or _NO_CALLS  # an empty list per turn need not outlive this call
    if provider_calls:
        item.msg["tool_calls"] = provider_calls
    declared.update(calls)


def _repair(items: list[_Item], findings: list[Finding]) -> list[_Item]:
    """Step 3: pair every call with exactly one result, right after its turn.

    A result counts only if its call was declared before it; a later second
    result for the same id is a duplicate; a call id declared again is removed
    from the later turn; an unanswered call gets a synthetic result. Each
    result is placed right after the turn that declared its call, so the
    output never opens with a ``tool`` message (GR-MEM's "strip leading tool
    messages and repair again" has nothing left to do; the property tests
    check it).
    """
    declared: set[str] = set()
    results: dict[str, _Item] = {}
    kept: list[_Item] = []
    for item in items:
        _keep_calls(item, declared, findings)
        if item.role == "assistant":
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
            kind: FindingKind
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
                result = _Item(item.index, synthetic, _NO_CALLS, cid)
            out.append(result)
    return out


def normalize_report(entries: Iterable[Any]) -> NormalizeReport:
    """MEM-5: the provider view of ``entries`` with every drop and repair explained.

    Steps, as GR-MEM states them: coerce each entry to the flat shape (drop
    non-objects and role-less entries, serialize non-scalar content); move
    ``system`` messages to the front (both groups keep their order); repair
    tool pairing. The drop count is the passes' own tally, entries and calls
    alike (an entry removed, a call removed from a turn, a turn removed
    because nothing is left of it), never derived from lengths: a call and
    its result both spelled ``"0"`` cost three drops.
    """
    findings: list[Finding] = []
    items = _coerce(entries, findings)
    items = [i for i in items if i.role == "system"] + [i for i in items if i.role != "system"]
    items = _repair(items, findings)
    dropped = sum(1 for f in findings if f.dropped)
    # Built by the passes above, so not validated again: validation would copy every message.
    return NormalizeReport.model_construct(
        messages=[i.msg for i in items], dropped=dropped, findings=findings
    )


def normalize(entries: Iterable[Any]) -> tuple[list[dict[str, Any]], int]:
    """MEM-5: ``(messages, dropped)``, the provider view and how many entries and calls it dropped."""
    report = normalize_report(entries)
    return report.messages, report.dropped


def lint(entries: Iterable[Any]) -> list[Finding]:
    """What a provider would reject in ``entries``, with locations, in buffer order."""
    return sorted(normalize_report(entries).findings, key=lambda f: f.index)
