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
object. Use it as ``Agent(..., history_processors=[gr_mem_history])`` or
as the capability :func:`gr_mem_capability`; ``GRMemHistory(on_result=...)``
also hands each run's MEM-14 report to a callback.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from flowdrop_core.engine import AppendResult, Buffer
from flowdrop_core.integrations import require
from flowdrop_core.messages import PLACEHOLDER_CONTENT

_m = require("pydantic_ai.messages", "pydantic-ai")

__all__ = ["HEALED_MARK", "GRMemHistory", "gr_mem_capability", "gr_mem_history"]

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


def _rows(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The parts that pair, and the turns, as GR-MEM rows pointing back at their source."""
    rows: list[dict[str, Any]] = []
    for mi, msg in enumerate(messages):
        if isinstance(msg, _m.ModelResponse):
            calls = [
                {"id": p.tool_call_id, "name": p.tool_name}
                for p in msg.parts
                if isinstance(p, _m.ToolCallPart)
            ]
            meta: dict[str, Any] = {"tool_calls": calls} if calls else {}
            rows.append(
                {"role": "assistant", "content": "[response]", "metadata": meta, _REF: (mi, None)}
            )
            continue
        for pi, part in enumerate(getattr(msg, "parts", ())):
            if _is_result(part):
                meta = {"tool_call_id": part.tool_call_id}
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


def _apply(messages: list[Any]) -> tuple[list[Any], AppendResult]:
    """GR-MEM over the history; the rebuilt history and the engine's report."""
    rows = _rows(messages)
    buf = Buffer()
    result = buf.append(rows)
    names = {
        c["id"]: c["name"] for r in rows for c in r["metadata"].get("tool_calls", ()) if c["id"]
    }
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
    return out, result


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


class GRMemHistory:
    """A history processor applying GR-MEM; ``on_result`` gets each run's MEM-14 report."""

    def __init__(self, on_result: Callable[[AppendResult], None] | None = None) -> None:
        self.on_result = on_result
        #: The report of the latest call (``None`` before the first).
        self.last_result: AppendResult | None = None

    def __call__(self, messages: list[Any]) -> list[Any]:
        out, result = _apply(list(messages))
        self.last_result = result
        if self.on_result is not None:
            self.on_result(result)
        return out


def gr_mem_history(messages: list[Any]) -> list[Any]:
    """``history_processors=[gr_mem_history]``: the history with GR-MEM applied."""
    return _apply(list(messages))[0]


def gr_mem_capability(on_result: Callable[[AppendResult], None] | None = None) -> Any:
    """The processor as a pydantic-ai capability (``Agent(..., capabilities=[...])``)."""
    process = require("pydantic_ai.capabilities.process_history", "pydantic-ai")
    return process.ProcessHistory(processor=GRMemHistory(on_result))
