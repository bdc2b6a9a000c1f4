"""GR-MEM for pydantic-ai: a history processor that dedups and heals ``list[ModelMessage]``.

pydantic-ai repairs an interrupted tail itself, and calls duplicate tool
results out of scope. :func:`gr_mem_history` runs the GR-MEM engine over
the parts that pair (a ``ToolCallPart`` of a ``ModelResponse`` declares a
call; a ``ToolReturnPart`` of a ``ModelRequest`` answers it) and rebuilds
the history:

- MEM-1: a second return for an answered ``tool_call_id`` is removed from
  its request (a request left with no part is removed);
- MEM-2: a response whose every tool call is declared already is removed;
- MEM-3: a call still unanswered when a user prompt arrives gets an
  ``outcome='interrupted'`` return in the request right after its response
  (``metadata={"gr_mem": {"healed": True}}``, not sent to the model);
- MEM-10: the late real return replaces that placeholder in place; a
  return pydantic-ai synthesized for an interrupted call (its
  ``pydantic_ai_synthesized_tool_return`` flag) is a placeholder too, so a
  late real return replaces it instead of making two results for one call.

Every other part (system prompts, instructions, native tool parts,
thinking, text) and every message left unchanged is passed on as the same
object. Use it as the capability :func:`gr_mem_capability` (or
``ProcessHistory(GRMemHistory())``): :class:`GRMemHistory` keeps the engine
buffer of the history it returned, so a request costs in proportion to its
new messages, and keeps each request's MEM-14 report. :func:`gr_mem_history`
is the stateless one-pass form; :func:`gr_mem_repair` makes the history of
a run cancelled mid-tool acceptable to a new run.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from flowdrop_core import telemetry
from flowdrop_core.engine import AppendResult, Buffer
from flowdrop_core.events import EventKind
from flowdrop_core.integrations import require
from flowdrop_core.messages import PLACEHOLDER_CONTENT

_m = require("pydantic_ai.messages", "pydantic-ai")

__all__ = ["HEALED_MARK", "GRMemHistory", "gr_mem_capability", "gr_mem_history", "gr_mem_repair"]

#: ``metadata`` of a healed placeholder return (pydantic-ai never sends metadata to a model).
HEALED_MARK = {"gr_mem": {"healed": True, "rule": "MEM-3"}}

_REF = "_pydantic_ai_ref"


def _is_result(part: Any) -> bool:
    if isinstance(part, _m.ToolReturnPart):
        return True
    retry = getattr(_m, "RetryPromptPart", None)  # deprecated; a hand-built one may still appear
    return retry is not None and isinstance(part, retry) and bool(getattr(part, "tool_name", None))


#: The ``metadata`` flag pydantic-ai puts on the return it synthesizes for an interrupted call.
SYNTHESIZED = "pydantic_ai_synthesized_tool_return"


def _is_healed(part: Any) -> bool:
    """A placeholder return: GR-MEM's own (MEM-3) or the one pydantic-ai synthesizes itself."""
    meta = getattr(part, "metadata", None)
    if not isinstance(meta, dict):
        return False
    mark = meta.get("gr_mem")
    return (isinstance(mark, dict) and mark.get("healed") is True) or meta.get(SYNTHESIZED) is True


def _rows(messages: Sequence[Any], offset: int = 0) -> list[dict[str, Any]]:
    """The parts that pair, and the turns, as GR-MEM rows pointing back at their source.

    A reference is ``(message index, part index)`` (``None`` for a response),
    message indexes counted from ``offset``.
    """
    rows: list[dict[str, Any]] = []
    for mi, msg in enumerate(messages, offset):
        if isinstance(msg, _m.ModelResponse):
            calls = [
                {"id": p.tool_call_id, "name": p.tool_name}
                for p in msg.parts
                if isinstance(p, _m.ToolCallPart)
            ]
            declared: dict[str, Any] = {"tool_calls": calls} if calls else {}
            rows.append(
                {
                    "role": "assistant",
                    "content": "[response]",
                    "metadata": declared,
                    _REF: (mi, None),
                }
            )
            continue
        for pi, part in enumerate(getattr(msg, "parts", ())):
            if _is_result(part):
                meta: dict[str, Any] = {"tool_call_id": part.tool_call_id}
                if _is_healed(part):
                    meta["healed"] = True
                rows.append(
                    {"role": "tool", "content": "[return]", "metadata": meta, _REF: (mi, pi)}
                )
            elif isinstance(part, _m.UserPromptPart):  # always a turn: MEM-3 heals here
                rows.append(
                    {"role": "user", "content": "[user prompt]", "metadata": {}, _REF: (mi, pi)}
                )
            elif isinstance(part, _m.SystemPromptPart):
                rows.append(
                    {"role": "system", "content": "[system prompt]", "metadata": {}, _REF: (mi, pi)}
                )
    return rows


def _placeholder(call_id: str, name: str) -> Any:
    return _m.ToolReturnPart(
        tool_name=name,
        content=PLACEHOLDER_CONTENT,
        tool_call_id=call_id,
        metadata=HEALED_MARK,
        outcome="interrupted",
    )


def _names(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {
        c["id"]: c["name"] for r in rows for c in r["metadata"].get("tool_calls", ()) if c["id"]
    }


def _apply(messages: list[Any]) -> tuple[list[Any], AppendResult]:
    """GR-MEM over the history; the rebuilt history and the engine's report."""
    rows = _rows(messages)
    buf = Buffer()
    result = buf.append(rows)
    return _render(messages, buf, _names(rows)), result


def _render(messages: list[Any], buf: Buffer, names: dict[str, str]) -> list[Any]:
    """The history as the buffer keeps it: kept parts in place, placeholders where they go."""
    # Walk the buffer: each kept response opens a region; the parts after it belong to
    # the requests between it and the next kept response (pairing is by position, MEM-3).
    kept_responses: list[int] = []
    region_parts: dict[int, list[Any]] = {}  # response index (-1: before any) -> parts after it
    region = -1
    for row in buf.messages():
        ref = row.get(_REF)
        if ref is not None and ref[1] is None:
            region = ref[0]
            kept_responses.append(region)
            continue
        region_parts.setdefault(region, []).append(ref if ref is not None else row)
    out: list[Any] = []
    bounds = [-1, *kept_responses, len(messages)]
    for start, stop in itertools.pairwise(bounds):
        if start >= 0:
            out.append(messages[start])
        requests = [
            k for k in range(start + 1, stop) if not isinstance(messages[k], _m.ModelResponse)
        ]
        out.extend(_rebuild(messages, requests, region_parts.get(start, []), names))
    return out


def _rebuild(
    messages: list[Any],
    requests: list[int],
    parts: list[Any],
    names: dict[str, str],
) -> list[Any]:
    """The requests of one region with the engine's parts in place; unchanged ones as they were.

    ``parts`` are the region's buffer rows in order: a ``(message, part)`` reference of a
    kept part, or a placeholder row. A part lands in its own request when that request
    is in the region, else (a placeholder, a late result) in the region's first request,
    taking a replaced placeholder's place; a region with no request gets a new one.
    """
    own: dict[int, list[Any]] = {k: [] for k in requests}
    extras: list[Any] = []
    for item in parts:
        if isinstance(item, tuple) and item[0] in own:
            own[item[0]].append(item)
        elif isinstance(item, tuple):
            extras.append(messages[item[0]].parts[item[1]])
        else:
            cid = str(item["metadata"]["tool_call_id"])
            extras.append(_placeholder(cid, names.get(cid, "")))
    if not requests:
        return [_m.ModelRequest(parts=extras)] if extras else []
    out: list[Any] = []
    for n, k in enumerate(requests):
        msg = messages[k]
        survivors = {ref[1] for ref in own[k]}
        new_parts: list[Any] = []
        pending = extras if n == 0 else []
        for pi, part in enumerate(msg.parts):
            engine = _is_result(part) or isinstance(part, _m.UserPromptPart | _m.SystemPromptPart)
            if not engine or pi in survivors:
                new_parts.append(part)
                continue
            if _is_result(part) and _is_healed(part):  # MEM-10: the real return takes its place
                late = next(
                    (p for p in pending if _is_result(p) and p.tool_call_id == part.tool_call_id),
                    None,
                )
                if late is not None:
                    pending.remove(late)
                    new_parts.append(late)
        if pending:
            new_parts[0:0] = pending
        if len(new_parts) == len(msg.parts) and all(
            a is b for a, b in zip(new_parts, msg.parts, strict=True)
        ):
            out.append(msg)
        elif new_parts or not msg.parts:
            out.append(dataclasses.replace(msg, parts=new_parts))
    return out


_KEEP_AS_IS = frozenset({EventKind.APPENDED})
_DROPS = frozenset({EventKind.DUPLICATE_RESULT, EventKind.DUPLICATE_TURN})


class _Live:
    """The history a processor returned last, with the engine buffer it came from."""

    __slots__ = ("buffer", "names", "out", "size")

    def __init__(self, out: list[Any], buffer: Buffer, names: dict[str, str]) -> None:
        self.out, self.buffer, self.names = out, buffer, names
        self.size = len(out)  # a caller growing the returned list makes this entry unusable

    def prefix_of(self, messages: list[Any]) -> bool:
        """Whether ``messages`` starts with this very history (the same objects, in order)."""
        n = self.size
        if len(self.out) != n or len(messages) < n or (n and messages[n - 1] is not self.out[-1]):
            return False
        return messages[:n] == self.out  # C speed: identical objects compare by identity first


class GRMemHistory:
    """A history processor applying GR-MEM, one MEM-14 report per model request.

    pydantic-ai hands the processor the history it returned last plus the
    request's new messages, so the processor keeps the engine buffer of what
    it returned: a request costs in proportion to its new messages (a
    history it did not return, e.g. a new run's ``message_history``, costs
    one pass). Each report counts the request's new entries (MEM-14):
    :attr:`reports` keeps the latest ``keep`` (oldest first),
    :attr:`last_result` the newest, and ``on_result`` receives each. With the
    ``otel`` extra each report also goes on the current OpenTelemetry span.
    """

    def __init__(
        self, on_result: Callable[[AppendResult], None] | None = None, keep: int = 100
    ) -> None:
        self.on_result = on_result
        self.reports: deque[AppendResult] = deque(maxlen=max(1, keep))
        self._live: list[_Live] = []  # newest last; a few, for runs sharing this processor
        self._guard = threading.Lock()

    @property
    def last_result(self) -> AppendResult | None:
        """The report of the latest request (``None`` before the first)."""
        return self.reports[-1] if self.reports else None

    def _take(self, messages: list[Any]) -> _Live | None:
        with self._guard:
            for k in range(len(self._live) - 1, -1, -1):
                if self._live[k].prefix_of(messages):
                    return self._live.pop(k)
        return None

    def _put(self, live: _Live) -> None:
        with self._guard:
            self._live.append(live)
            del self._live[:-_LIVE_SLOTS]

    def __call__(self, messages: list[Any]) -> list[Any]:
        messages = list(messages)
        live = self._take(messages)
        if live is None:
            out, result, buf, names = _apply_full(messages)
        else:
            out, result, buf, names = _apply_new(live, messages)
        self._put(_Live(out, buf, names))
        with self._guard:
            self.reports.append(result)
        if telemetry.ENABLED:
            telemetry.emit("pydantic_ai", result)
        if self.on_result is not None:
            self.on_result(result)
        return out


_LIVE_SLOTS = 8


def _apply_full(messages: list[Any]) -> tuple[list[Any], AppendResult, Buffer, dict[str, str]]:
    rows = _rows(messages)
    buf = Buffer()
    result = buf.append(rows)
    names = _names(rows)
    return _render(messages, buf, names), result, buf, names


def _apply_new(
    live: _Live, messages: list[Any]
) -> tuple[list[Any], AppendResult, Buffer, dict[str, str]]:
    """The new messages appended to the live buffer; O(new) unless a decision reaches back.

    Plain appends and dropped duplicates change only the new messages; a heal
    (MEM-3) puts its placeholder at the front of the request right after the
    response that declared the call, found walking back from the end. A late
    return replacing a placeholder (MEM-10), or a heal with no request after
    its response, reads the history again (one pass). The report is the
    append's either way: it counts the request's new entries (MEM-14).
    """
    n = live.size
    rows = _rows(messages[n:], offset=n)
    buf, names = live.buffer, live.names
    names.update(_names(rows))
    result = buf.append(rows)
    dropped: set[tuple[int, int | None]] = set()
    heals: list[str] = []
    for ev in result.events:
        if ev.kind in _KEEP_AS_IS:
            continue
        if ev.kind in _DROPS and ev.incoming_index is not None:
            dropped.add(rows[ev.incoming_index][_REF])
        elif ev.kind == EventKind.PLACEHOLDER_INSERTED and ev.tool_call_id is not None:
            heals.append(str(ev.tool_call_id))
        else:
            return _reread(messages, result)
    if not dropped and not heals:
        return messages, result, buf, names
    out = messages[:n]
    for mi in range(n, len(messages)):
        msg = messages[mi]
        if (mi, None) in dropped:
            continue  # MEM-2: a response whose every call is declared already
        parts = [p for pi, p in enumerate(getattr(msg, "parts", ())) if (mi, pi) not in dropped]
        if len(parts) == len(getattr(msg, "parts", ())):
            out.append(msg)
        elif parts:
            out.append(dataclasses.replace(msg, parts=parts))
    fill: dict[int, list[Any]] = {}
    for cid in heals:
        k = _declared_at(out, cid)
        if k is None or k + 1 >= len(out) or not isinstance(out[k + 1], _m.ModelRequest):
            return _reread(messages, result)
        fill.setdefault(k + 1, []).append(_placeholder(cid, names.get(cid, "")))
    for k, placeholders in fill.items():
        out[k] = dataclasses.replace(out[k], parts=[*placeholders, *out[k].parts])
    return out, result, buf, names


def _declared_at(messages: list[Any], cid: str) -> int | None:
    """The index of the latest response declaring call ``cid`` (searched from the end)."""
    for k in range(len(messages) - 1, -1, -1):
        msg = messages[k]
        if isinstance(msg, _m.ModelResponse) and any(
            isinstance(p, _m.ToolCallPart) and p.tool_call_id == cid for p in msg.parts
        ):
            return k
    return None


def _reread(
    messages: list[Any], result: AppendResult
) -> tuple[list[Any], AppendResult, Buffer, dict[str, str]]:
    """The history read afresh (the buffer's references point into earlier lists); same report."""
    out, _, buf, names = _apply_full(messages)
    return out, result, buf, names


def gr_mem_history(messages: list[Any]) -> list[Any]:
    """``ProcessHistory(gr_mem_history)``: the history with GR-MEM applied (one pass, no state)."""
    return _apply(list(messages))[0]


def gr_mem_repair(messages: Sequence[Any]) -> list[Any]:
    """A history a new run accepts: GR-MEM applied and every unanswered call closed out (MEM-5).

    A run cancelled mid-tool leaves a response whose calls have no return;
    ``agent.run(prompt, message_history=...)`` refuses it with ``UserError``
    before any capability runs. Pass ``gr_mem_repair(history)`` instead: each
    open call gets an ``outcome='interrupted'`` placeholder return (marked
    healed, so the late real return replaces it, MEM-10) in the request right
    after its response, and duplicates are removed (MEM-1, MEM-2).
    """
    out, _ = _apply(list(messages))
    answered = {
        p.tool_call_id
        for m in out
        if isinstance(m, _m.ModelRequest)
        for p in m.parts
        if _is_result(p)
    }
    for k in range(len(out) - 1, -1, -1):
        msg = out[k]
        if not isinstance(msg, _m.ModelResponse):
            continue
        open_calls = [
            p
            for p in msg.parts
            if isinstance(p, _m.ToolCallPart) and p.tool_call_id not in answered
        ]
        if not open_calls:
            continue
        fill = [_placeholder(p.tool_call_id, p.tool_name) for p in open_calls]
        after = out[k + 1] if k + 1 < len(out) else None
        if isinstance(after, _m.ModelRequest):
            out[k + 1] = dataclasses.replace(after, parts=[*fill, *after.parts])
        else:
            out.insert(k + 1, _m.ModelRequest(parts=fill))
    return out


def gr_mem_capability(
    on_result: Callable[[AppendResult], None] | None = None,
) -> Any:
    """The processor as a pydantic-ai capability (``Agent(..., capabilities=[...])``).

    The capability's ``processor`` is the :class:`GRMemHistory` whose
    ``reports`` hold each request's MEM-14 report.
    """
    process = require("pydantic_ai.capabilities.process_history", "pydantic-ai")
    return process.ProcessHistory(processor=GRMemHistory(on_result))
