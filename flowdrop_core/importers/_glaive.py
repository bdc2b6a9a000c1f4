"""Glaive function-calling rows (``glaiveai/glaive-function-calling-v2`` and v1).

A row is ``{"system": "SYSTEM: ...", "chat": "USER: ...\\n\\n\\nASSISTANT: ..."}``:
one text per side, turns marked ``USER:``, ``ASSISTANT:`` and
``FUNCTION RESPONSE:``, each ending ``<|endoftext|>`` (the training data's
end-of-turn token, dropped). An assistant turn ``<functioncall> {"name",
"arguments"}`` is a tool call; its ``arguments`` are often JSON text in
single quotes (``'{"country": "France"}'``), read as that text. The source has
no call ids: a call's id is its origin, and a ``FUNCTION RESPONSE`` answers the
oldest open call. The system text (the function definitions follow the
instruction) is the system message. Origins read ``chat[3]`` (turn 3 of the
chat text), ``[2].chat[3]`` in a list of rows.
"""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core.importers._base import Out, PendingCalls, Problem, json_text
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "glaive"
EXPECTS = (
    "Glaive rows {'system': 'SYSTEM: ...', 'chat': 'USER: ... ASSISTANT: ...'} or a list of them"
)

#: A turn marker: at the start, or after whitespace (rows separate turns by blank lines).
_TURN = re.compile(r"(?:^|(?<=\s))(USER|ASSISTANT|FUNCTION RESPONSE):[ \t]?")
_END = "<|endoftext|>"
_CALL = "<functioncall>"
#: ``"arguments": '...'`` as Glaive writes it: JSON text inside single quotes.
_QUOTED_ARGS = re.compile(r"""^(?P<head>\{.*"arguments"\s*:\s*)'(?P<args>.*)'\s*\}$""", re.S)
KNOWN = frozenset({"system", "chat"})


def _row_miss(item: Any, where: str) -> Miss | None:
    if not isinstance(item, dict) or not isinstance(item.get("chat"), str):
        return Miss(where, "not a row {'system', 'chat'}")
    if not _TURN.search(item["chat"]) or not item["chat"].lstrip().startswith("USER:"):
        return Miss(f"{where}.chat" if where else "chat", "no 'USER:' turn first", 1)
    if "system" in item and not isinstance(item["system"], str):
        return Miss(f"{where}.system" if where else "system", "expected text", 1)
    return None


def claims(document: Any) -> Verdict:
    """A row whose ``chat`` text starts with a ``USER:`` turn, or a list of such rows."""
    if isinstance(document, list):
        return each(document, "", _row_miss, "a list of rows", score=0)
    return _row_miss(document, "") or Claim("a row")


def read(document: Any, out: Out) -> None:
    """Read one row or a list of rows, one after another."""
    verdict = claims(document)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    rows = document if isinstance(document, list) else [document]
    for i, row in enumerate(rows):
        _row(row, f"[{i}]." if isinstance(document, list) else "", out)


def _row(row: dict[str, Any], prefix: str, out: Out) -> None:
    for key, value in row.items():
        if key not in KNOWN and value not in (None, "", [], {}):
            out.note(f"{prefix}{key}", f"field {key!r}", f"{NAME} does not read it", value,
                     unknown=True)  # fmt: skip
    system = row.get("system", "")
    if isinstance(system, str) and system.strip():
        text = system.strip()
        out.add({"role": "system", "content": text.removeprefix("SYSTEM:").strip()},
                f"{prefix}system")  # fmt: skip
    pending = PendingCalls()
    chat = row["chat"]
    marks = list(_TURN.finditer(chat))
    for k, mark in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(chat)
        body = chat[mark.end() : end].strip()
        body = body.removesuffix(_END).strip()
        where = f"{prefix}chat[{k}]"
        speaker = mark.group(1)
        if speaker == "USER":
            out.add({"role": "user", "content": body}, where)
        elif speaker == "FUNCTION RESPONSE":
            answers = pending.answer()
            if answers is None:
                out.note(where, "function response without a call",
                         "no earlier <functioncall> is open", body)  # fmt: skip
            out.add({"role": "tool", "content": body, "tool_call_id": answers}, where)
        elif _CALL in body:
            _call(body, where, out, pending)
        else:
            out.add({"role": "assistant", "content": body}, where)


def _call(body: str, where: str, out: Out, pending: PendingCalls) -> None:
    """An assistant turn with ``<functioncall> {...}``: the text before it, and the call."""
    before, _, raw = body.partition(_CALL)
    raw = raw.strip()
    call = _parse_call(raw)
    if call is None:
        out.note(where, "unreadable function call", "not {'name', 'arguments'} JSON; kept as text",
                 raw, unknown=True)  # fmt: skip
        out.add({"role": "assistant", "content": body}, where)
        return
    name, arguments = call
    out.synthetic.add(where)
    pending.declare(where, name)
    message = {
        "role": "assistant",
        "content": before.strip() or None,
        "tool_calls": [
            {"id": where, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }
    out.add(message, where)


def _parse_call(raw: str) -> tuple[str, str] | None:
    """``(name, arguments as JSON text)`` of ``{"name", "arguments"}``, the arguments as
    JSON, as JSON text or as JSON text in single quotes; ``None`` when it is none of these."""
    quoted = _QUOTED_ARGS.match(raw)
    if quoted:
        try:
            head = parse_json(quoted.group("head") + '""}')
        except JSONProblem:
            return None
        name = head.get("name") if isinstance(head, dict) else None
        return (name, quoted.group("args")) if isinstance(name, str) else None
    try:
        value = parse_json(raw)
    except JSONProblem:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        return value["name"], arguments
    return value["name"], json_text(arguments)
