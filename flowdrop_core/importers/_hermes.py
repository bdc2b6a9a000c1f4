"""Hermes / Qwen tool-call tags inside ShareGPT records, chat messages or ChatML text.

Function-calling data sets for Hermes, Qwen and their kin write calls as
``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` inside the
assistant's text (JSON, or a Python dict literal as in Hermes'
``{'arguments': ..., 'name': ...}``) and results as
``<tool_response>...</tool_response>`` inside a ``tool`` (or ``user``) turn.
The document is a ShareGPT record (``conversations: [{"from", "value"}]``),
a list of them, a bare list of turns, a list of chat messages
(``role`` / ``content``) or raw ChatML text (``<|im_start|>role ...
<|im_end|>``); JSON must hold at least one tag (else it is plain ShareGPT or
chat), ChatML text is claimed by its blocks. The source has no call
ids: a call's id is its origin (``conversations[2].tool_call[0]``), and a
response answers the oldest open call of the name it gives (else the oldest).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "hermes"
EXPECTS = (
    "ShareGPT turns, chat messages or ChatML text whose assistant turns hold "
    "<tool_call>...</tool_call> and tool turns <tool_response>...</tool_response>"
)

ROLES = {
    "system": "system",
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "observation": "tool",
    "ipython": "tool",
}
CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.S)
TAGS = ("<tool_call>", "<tool_response>")
BLOCK = re.compile(r"<\|im_start\|>([^\n]*)\n(.*?)(?:<\|im_end\|>|(?=<\|im_start\|>)|\Z)", re.S)


def _has_tag(text: Any) -> bool:
    return isinstance(text, str) and any(tag in text for tag in TAGS)


def _turns_of(document: Any) -> list[tuple[str, list[Any]]] | None:
    """(prefix, turns) of each conversation in the document, or None if not this shape."""
    if isinstance(document, dict) and isinstance(document.get("conversations"), list):
        return [("conversations", document["conversations"])]
    if (
        isinstance(document, list)
        and document
        and all(isinstance(r, dict) and isinstance(r.get("conversations"), list) for r in document)
    ):
        return [(f"[{i}].conversations", r["conversations"]) for i, r in enumerate(document)]
    if isinstance(document, list) and document and all(isinstance(t, dict) for t in document):
        return [("", document)]
    return None


def _speaker(turn: Any) -> tuple[Any, Any]:
    if isinstance(turn, dict) and "from" in turn:
        return turn.get("from"), turn.get("value")
    if isinstance(turn, dict):
        return turn.get("role"), turn.get("content")
    return None, None


def claims(document: Any) -> Verdict:
    """The signature: turns (ShareGPT or chat) of known speakers, one holding a tag."""
    conversations = _turns_of(document)
    if not conversations:
        return Miss("", "expected ShareGPT records or a list of turns")
    for prefix, turns in conversations:
        for i, turn in enumerate(turns):
            speaker, value = _speaker(turn)
            if not (isinstance(speaker, str) and speaker in ROLES and isinstance(value, str)):
                return Miss(f"{prefix}[{i}]", "not a turn of a known speaker with text", i)
    if not any(_has_tag(_speaker(t)[1]) for _, turns in conversations for t in turns):
        return Miss("", "no <tool_call> or <tool_response> tag in any turn", 1)
    return Claim("turns with tool-call tags")


def chatml_blocks(text: str) -> bool:
    """The signature of ChatML text: ``<|im_start|>role`` blocks (tags or not)."""
    return BLOCK.search(text) is not None


def read(document: Any, out: Out) -> None:
    """Read ShareGPT records or chat messages whose text holds tool-call tags."""
    if not isinstance(claims(document), Claim):
        raise Problem("", "expected ShareGPT or chat turns with <tool_call> / <tool_response> tags")
    conversations = _turns_of(document)
    assert conversations is not None
    for prefix, turns in conversations:
        pending = PendingCalls()
        for i, turn in enumerate(turns):
            speaker, value = _speaker(turn)
            _turn(ROLES[speaker], value, f"{prefix}[{i}]", out, pending)


def read_chatml(text: str, out: Out) -> None:
    """Read raw ChatML text: one turn per ``<|im_start|>role`` block."""
    if not chatml_blocks(text):
        raise Problem("", "no <|im_start|>role blocks")
    pending = PendingCalls()
    end = 0
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        where = f"line {line}"
        _outside(text[end : match.start()], where, out)
        end = match.end()
        speaker = match.group(1).strip()
        if speaker not in ROLES:
            raise Problem(where, f"unknown ChatML role {speaker!r}")
        _turn(ROLES[speaker], match.group(2).strip("\n"), where, out, pending)
    _outside(text[end:], "end of text", out)


def _outside(text: str, where: str, out: Out) -> None:
    if text.strip():
        out.note(where, "text outside a ChatML block", "no role says who wrote it", text.strip())


def _turn(role: str, value: str, where: str, out: Out, pending: PendingCalls) -> None:
    if role == "assistant":
        _assistant(value, where, out, pending)
    elif role == "tool" or RESPONSE.search(value):
        responses = RESPONSE.findall(value)
        rest = RESPONSE.sub("", value).strip() if responses else ""
        if not responses:  # a tool turn without tags: its whole text is the result
            responses = [value]
        for k, body in enumerate(responses):
            at = f"{where}.tool_response[{k}]" if len(responses) > 1 else where
            call_id = pending.answer(_name_of(body)) or pending.answer()
            if call_id is None:
                out.note(at, "tool response without a call", "no earlier tool call is open", "")
            out.add({"role": "tool", "content": body.strip(), "tool_call_id": call_id}, at)
        if rest and role == "tool":
            out.note(where, "text outside <tool_response>", "kept as a note", rest)
        elif rest:
            out.add({"role": role, "content": rest}, where)
    else:
        out.add({"role": role, "content": value}, where)


def _assistant(value: str, where: str, out: Out, pending: PendingCalls) -> None:
    calls: list[dict[str, Any]] = []
    texts = [CALL.sub("", value).strip("\n")]  # only the tags' line breaks: "T1: " keeps its space
    for k, body in enumerate(CALL.findall(value)):
        parsed = _parse(body)
        at = f"{where}.tool_call[{k}]"
        if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str):
            texts.append(body.strip())
            out.note(at, "tool_call that is not {name, arguments}", "kept as text", body.strip())
            continue
        call_id: str = parsed["id"] if isinstance(parsed.get("id"), str) else at
        if call_id == at:
            out.synthetic.add(at)
        pending.declare(call_id, parsed["name"])
        arguments = parsed.get("arguments", parsed.get("parameters"))
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": parsed["name"], "arguments": arguments_text(arguments)},
            }
        )
    text = "\n".join(t for t in texts if t.strip())
    message: Message = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        message["tool_calls"] = calls
    out.add(message, where)


def _parse(body: str) -> Any:
    """A tag's body as JSON, else as a Python literal (Hermes writes ``{'name': ...}``)."""
    text = body.strip()
    while text.startswith("\\n") or text.endswith("\\n"):  # escaped newlines kept as text
        text = text.removeprefix("\\n").removesuffix("\\n").strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _name_of(body: str) -> Any:
    parsed = _parse(body)
    return parsed.get("name") if isinstance(parsed, dict) else None
