"""ShareGPT-style ``conversations`` as function-calling data sets use them.

A record is ``{"conversations": [{"from", "value"}], "system"?, "tools"?}``;
the file is one record, a list of records (read one after another), or a bare
list of turns. ``from`` is ``human``/``user``, ``gpt``/``assistant``,
``system``, ``function_call`` (``value``: JSON ``{"name", "arguments"}`` or a
list of them) or ``observation`` (the result). The source has no call ids:
a call's id is its origin, and an observation answers the oldest open call.
``tools`` (the tool definitions) is not conversation content.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers import _hermes as hermes
from flowdrop_core.importers._base import (
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_type,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "sharegpt"
EXPECTS = (
    "ShareGPT records {'conversations': [{'from': 'human'|'gpt'|'function_call'|'observation', "
    "'value'}]} or a list of them"
)

ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "model": "assistant",
    "system": "system",
}
CALLS = frozenset({"function_call", "tool_call"})
RESULTS = frozenset({"observation", "function_response", "tool", "tool_response"})


def claims(document: Any) -> Verdict:
    """A record with ``conversations`` of ``{from, value}`` turns, a list of such records,
    or a bare list of turns; turns holding Hermes ``<tool_call>`` / ``<tool_response>``
    tags are :mod:`.hermes`'s (read here, their calls would be text)."""
    verdict = _claims(document)
    if isinstance(verdict, Claim) and isinstance(hermes.claims(document), Claim):
        return Miss("", "turns hold Hermes <tool_call> / <tool_response> tags (read as hermes)", 3)
    return verdict


def _claims(document: Any) -> Verdict:
    if isinstance(document, dict):
        if "conversations" not in document:
            return Miss("", "no 'conversations' list")
        return each(document["conversations"], "conversations", turn_miss, "a record", score=2)
    if (
        isinstance(document, list)
        and document
        and all(isinstance(r, dict) and "conversations" in r for r in document)
    ):
        return each(document, "", _record_miss, "a list of records", score=2)
    return each(document, "", turn_miss, "a list of turns")


def turn_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` is a ``{from, value}`` turn."""
    return key_miss(item, where, ("from", "value"), "a turn object")


def _record_miss(item: Any, where: str) -> Miss | None:
    verdict = each(item["conversations"], f"{where}.conversations", turn_miss, "")
    return verdict if isinstance(verdict, Miss) else None


def read(document: Any, out: Out) -> None:
    """Read one record, a list of records, or a bare list of turns."""
    if isinstance(document, dict):
        _record(document, "", out)
    elif (
        isinstance(document, list)
        and document
        and all(isinstance(r, dict) and "conversations" in r for r in document)
    ):
        for i, record in enumerate(document):
            _record(record, f"[{i}]", out)
    elif isinstance(document, list):
        _turns(document, "", out)
    else:
        raise Problem(
            "", f"expected a record with 'conversations' or a list, got {json_type(document)}"
        )


def _record(record: dict[str, Any], prefix: str, out: Out) -> None:
    if "conversations" not in record:
        raise Problem(prefix, "no 'conversations' list")
    system = record.get("system")
    at = f"{prefix}.system" if prefix else "system"
    if system is not None and not isinstance(system, str):
        raise Problem(at, f"expected a string, got {json_type(system)}")
    if system:
        out.add({"role": "system", "content": system}, at)
    turns = record["conversations"]
    where = f"{prefix}.conversations" if prefix else "conversations"
    if not isinstance(turns, list):
        raise Problem(where, f"expected a list, got {json_type(turns)}")
    _turns(turns, where, out)


def _turns(turns: list[Any], prefix: str, out: Out) -> None:
    pending = PendingCalls()
    for i, turn in enumerate(turns):
        where = f"{prefix}[{i}]"
        if not isinstance(turn, dict):
            raise Problem(where, f"expected a turn object, got {json_type(turn)}")
        for key in ("from", "value"):
            if key not in turn:
                raise Problem(where, f"missing {key!r}")
        speaker, value = turn["from"], turn["value"]
        if not isinstance(speaker, str):
            raise Problem(where, f"'from' must be a string, got {json_type(speaker)}")
        if not isinstance(value, str):
            raise Problem(f"{where}.value", f"expected a string, got {json_type(value)}")
        if speaker in ROLES:
            out.add({"role": ROLES[speaker], "content": value}, where)
        elif speaker in CALLS:
            calls = _calls(value, where, out)
            for call in calls:
                pending.declare(call["id"], call["function"]["name"])
            if calls:
                out.add({"role": "assistant", "content": None, "tool_calls": calls}, where)
        elif speaker in RESULTS:
            call_id = pending.answer()
            if call_id is None:
                out.note(
                    where,
                    "observation without a call",
                    "no earlier function_call is open; imported with no tool_call_id",
                    "",
                )
            out.add({"role": "tool", "content": value, "tool_call_id": call_id}, where)
        else:
            raise Problem(
                where,
                f"unknown 'from' {speaker!r} (expected human, gpt, system, function_call or observation)",
            )


def _calls(value: str, where: str, out: Out) -> list[dict[str, Any]]:
    """A ``function_call`` turn's calls; its value is JSON ``{name, arguments}`` (or a list)."""
    try:
        parsed = parse_json(value)
    except JSONProblem:
        parsed = None
    items = parsed if isinstance(parsed, list) else [parsed]
    if not items or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in items):
        out.add({"role": "assistant", "content": value}, where)
        out.note(
            where,
            "function_call that is not JSON {name, arguments}",
            "imported as the assistant's text, not as a call",
            value,
        )
        return []
    ids = [where] if len(items) == 1 else [f"{where}[{k}]" for k in range(len(items))]
    out.synthetic.update(ids)
    return [
        {
            "id": ids[k],
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": arguments_text(call.get("arguments", call.get("parameters"))),
            },
        }
        for k, call in enumerate(items)
    ]
