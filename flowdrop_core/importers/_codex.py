"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/.../rollout-*.jsonl``).

One JSON object per line, ``{"timestamp", "type", "payload"}``:
``session_meta`` (its ``instructions`` or ``base_instructions.text`` is the
system prompt), ``response_item`` (a Responses API item: ``message``,
``function_call`` / ``function_call_output``, ``custom_tool_call`` /
``custom_tool_call_output``, ``local_shell_call``, ``reasoning``, ...; read
as :mod:`.openai_responses` items), ``event_msg`` (what the CLI showed:
``user_message`` / ``agent_message`` repeat a message item and count once; one
that no item repeats is a message of its own; ``agent_reasoning`` is a note;
bookkeeping events such as ``token_count`` carry no conversation) and
``turn_context`` (settings). ``compacted`` (a summary that replaced older
history) is a note. Origins read ``line 3``.
"""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core.importers import _openai_responses as openai_responses
from flowdrop_core.importers._base import Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Line, LineProblem, Miss, Verdict
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "codex"
EXPECTS = "Codex CLI rollout JSON Lines {'timestamp', 'type': 'session_meta'|'response_item'|..., 'payload'}"

TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: Events with no conversation content (counts, lifecycle, settings).
BOOKKEEPING = frozenset(
    {
        "token_count",
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "turn_aborted",
        "session_configured",
    }
)
#: Events that repeat, as shown to the user, a message item of the same text.
SHOWN = {"user_message": "user", "agent_message": "assistant"}
_INDEX = re.compile(r"^\[(\d+)\]")


def _lines(text: str) -> list[tuple[int, Any]]:
    lines = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                lines.append((number, parse_json(line, column_only=True)))
            except JSONProblem as exc:
                raise Problem(f"line {number}", str(exc)) from None
    return lines


def claims(lines: list[Line]) -> Verdict:
    """The signature: every line is ``{"type", "payload"}`` and one is a ``session_meta``
    or a ``response_item``."""
    for k, (number, value) in enumerate(lines):
        if isinstance(value, LineProblem):
            return Miss(f"line {number}", value.what, k)
        if not (isinstance(value, dict) and "type" in value and "payload" in value):
            return Miss(f"line {number}", "not a {'type', 'payload'} rollout line", k)
    if not _claims(lines):
        return Miss("", "no session_meta or response_item line", len(lines))
    return Claim("a rollout")


def _claims(lines: list[tuple[int, Any]]) -> bool:
    return (
        bool(lines)
        and all(isinstance(v, dict) and "type" in v and "payload" in v for _, v in lines)
        and any(v["type"] in ("session_meta", "response_item") for _, v in lines)
    )


def read_text(text: str, out: Out) -> None:
    """Read a rollout: the system prompt, then the items in order."""
    lines = _lines(text)
    if not _claims(lines):
        raise Problem(
            "line 1" if lines else "",
            "not a Codex rollout: every line must be {'type', 'payload'}, "
            "with a session_meta or response_item line",
        )
    shown_texts = _message_texts(lines)
    items: list[tuple[Any, str]] = []
    for number, line in lines:
        where = f"line {number}"
        kind, payload = line["type"], line["payload"]
        if kind == "session_meta":
            _session(payload, where, out)
        elif kind == "response_item":
            if not isinstance(payload, dict):
                raise Problem(f"{where}.payload", f"expected an item, got {json_type(payload)}")
            items.append((payload, where))
        elif kind == "event_msg":
            item = _event(payload, where, shown_texts, out)
            if item is not None:
                items.append((item, where))
        elif kind == "compacted":
            message = payload.get("message") if isinstance(payload, dict) else payload
            out.note(where, "compacted history", "a summary that replaced older history", message)
        elif kind != "turn_context":
            out.note(where, f"{kind} line", f"{NAME} has no such line type", payload, unknown=True)
    read = Out()
    origins = [origin for _, origin in items]
    try:
        openai_responses._read_items([item for item, _ in items], "", read)
    except Problem as problem:  # located at its line, not at its index among the items
        raise Problem(_relocate(problem.where, origins), problem.what) from None
    out.extend(read, lambda origin: _relocate(origin, origins))
    if not any(m.get("role") != "system" for m in out.messages):
        raise Problem("", "no message or tool call in the rollout")


def _message_texts(lines: list[tuple[int, Any]]) -> set[tuple[str, str]]:
    """(role, text) of every message item, to tell which shown events repeat one."""
    seen: set[tuple[str, str]] = set()
    for _, line in lines:
        payload = line["payload"]
        if (
            line["type"] == "response_item"
            and isinstance(payload, dict)
            and payload.get("type") == "message"
            and isinstance(payload.get("content"), list)
        ):
            texts = [
                p["text"]
                for p in payload["content"]
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            role = str(payload.get("role"))
            seen.update((role, t.strip()) for t in texts)
            seen.add((role, "\n".join(texts).strip()))
    return seen


def _session(payload: Any, where: str, out: Out) -> None:
    if not isinstance(payload, dict):
        raise Problem(f"{where}.payload", f"expected an object, got {json_type(payload)}")
    instructions = payload.get("instructions")
    base = payload.get("base_instructions")
    if isinstance(instructions, str) and instructions:
        out.add({"role": "system", "content": instructions}, f"{where}.payload.instructions")
    elif isinstance(base, dict) and isinstance(base.get("text"), str) and base["text"]:
        out.add({"role": "system", "content": base["text"]}, f"{where}.payload.base_instructions")


def _event(payload: Any, where: str, shown: set[tuple[str, str]], out: Out) -> Any:
    """A shown message no item repeats becomes a message item; other events are notes."""
    if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
        raise Problem(f"{where}.payload", "event without a string 'type'")
    kind = payload["type"]
    if kind in SHOWN:
        text = payload.get("message")
        if not isinstance(text, str):
            raise Problem(f"{where}.payload.message", "expected a string")
        role = SHOWN[kind]
        if (role, text.strip()) in shown:
            return None
        part = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
    if kind in BOOKKEEPING:
        return None
    if kind in ("agent_reasoning", "agent_reasoning_raw_content"):
        out.note(
            where,
            "reasoning event",
            "model reasoning is not a conversation message",
            payload.get("text", payload),
        )
        return None
    out.note(where, f"{kind} event", "an event the CLI showed, not a conversation message", payload)
    return None


def _relocate(origin: str, origins: list[str]) -> str:
    pieces = []
    for piece in origin.split("+"):
        match = _INDEX.match(piece)
        if match and int(match.group(1)) < len(origins):
            rest = piece[match.end() :]
            base = origins[int(match.group(1))]
            pieces.append(f"{base}: payload{rest}" if rest else base)
        else:
            pieces.append(piece)
    return "+".join(pieces)
