"""A recording of OpenAI Responses API calls: request bodies and response objects in order.

What an SDK cassette or a proxy log holds: each ``POST /v1/responses`` body
(``input``, ``instructions``, maybe ``previous_response_id`` or
``conversation``) followed by its response object (``"object": "response"``,
``output``). The conversation is rebuilt in order: a stateful request
(``previous_response_id`` / ``conversation``) sends only new items, which are
appended; a stateless one repeats the history, so only the items past what is
already held are appended (if it does not start with the history, it starts
over and what it dropped is a note). A response's ``output`` items follow.
A response polled again (background mode: the same ``id`` queued, then
completed) counts once, its last version. An error body ``{"error": ...}``
is a located note. The items are then read as :mod:`.openai_responses` items.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flowdrop_core.importers import _openai_responses as openai_responses
from flowdrop_core.importers._base import Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "responses-log"
EXPECTS = (
    "a list of OpenAI Responses request bodies ('input') and response objects "
    "('object': 'response', 'output')"
)

#: Keys that differ between an item as the API returned it and as a client sends it back.
VOLATILE = frozenset({"id", "status", "annotations", "logprobs"})
_INDEX = re.compile(r"^\[(\d+)\]")


#: Keys of other APIs' bodies: a body holding one is not only a Responses body.
FOREIGN = ("messages", "contents", "content", "choices", "candidates", "message")


def _is_response(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("object") == "response"
        and not any(key in value for key in FOREIGN)
    )


def _is_request(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "input" in value
        and value.get("object") != "response"
        and not any(key in value for key in FOREIGN)
    )


def _is_error(value: Any) -> bool:
    return isinstance(value, dict) and "error" in value and len(value) <= 3


def claims(document: Any) -> Verdict:
    """The signature: a list of requests (``input``) and responses (``object: response``),
    at least one of each (error bodies may be among them)."""
    if not isinstance(document, list):
        return Miss("", "expected a list of requests and responses")
    for k, value in enumerate(document):
        if not (_is_response(value) or _is_request(value) or _is_error(value)):
            return Miss(
                f"[{k}]", "neither a request ('input') nor a response ('object': 'response')", k
            )
    if not any(_is_response(v) for v in document):
        return Miss("", "no response object ('object': 'response')", len(document))
    if not any(_is_request(v) for v in document):
        return Miss("", "no request body ('input')", len(document))
    return Claim("a recording of Responses calls")


def _key(item: Any) -> str:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(item), sort_keys=True, ensure_ascii=False)


def read(document: Any, out: Out) -> None:
    """Rebuild the conversation from the requests and responses, then read its items."""
    if not isinstance(document, list) or not isinstance(claims(document), Claim):
        raise Problem(
            "",
            "expected a list of Responses request bodies and response objects, "
            f"got {json_type(document)}",
        )
    last_of: dict[str, int] = {}
    for i, value in enumerate(document):
        if _is_response(value) and isinstance(value.get("id"), str):
            last_of[value["id"]] = i
    history: list[tuple[Any, str]] = []
    instructions: tuple[str, str] | None = None
    for i, value in enumerate(document):
        where = f"[{i}]"
        if _is_error(value):
            out.note(where, "error body", "the API answered this call with an error", value)
        elif _is_request(value):
            given = value.get("instructions")
            if (
                isinstance(given, str)
                and given
                and (instructions is None or instructions[0] != given)
            ):
                if instructions is not None:
                    out.note(
                        instructions[1],
                        "earlier instructions",
                        "a later call replaced them",
                        instructions[0],
                    )
                instructions = (given, f"{where}.instructions")
            _request(value, where, history, out)
        else:  # a response: claims() has checked that every value is one of the three
            polled = value.get("id")
            if isinstance(polled, str) and last_of.get(polled, i) != i:  # polled again later
                if value.get("output"):
                    out.note(
                        where,
                        "earlier poll of a response",
                        "a later poll replaces it",
                        value["output"],
                    )
                continue
            output = value.get("output")
            if not isinstance(output, list):
                raise Problem(
                    f"{where}.output", f"expected a list of items, got {json_type(output)}"
                )
            history.extend((item, f"{where}.output[{k}]") for k, item in enumerate(output))
    if instructions is not None:
        out.add({"role": "system", "content": instructions[0]}, instructions[1])
    items = Out()
    origins = [origin for _, origin in history]
    try:
        openai_responses._read_items([item for item, _ in history], "", items)
    except Problem as problem:  # located in the call that sent it, not at its history index
        raise Problem(_relocate(problem.where, origins), problem.what) from None
    out.extend(items, lambda origin: _relocate(origin, origins))
    if not out.messages:
        raise Problem("", "no request or response holds a conversation item")


def _request(value: dict[str, Any], where: str, history: list[tuple[Any, str]], out: Out) -> None:
    given = value["input"]
    if isinstance(given, str):
        items: list[tuple[Any, str]] = [({"role": "user", "content": given}, f"{where}.input")]
    elif isinstance(given, list):
        items = [(item, f"{where}.input[{k}]") for k, item in enumerate(given)]
    else:
        raise Problem(f"{where}.input", f"expected a string or a list, got {json_type(given)}")
    if value.get("previous_response_id") or value.get("conversation"):
        history.extend(items)
        return
    held = [_key(item) for item, _ in history]
    sent = [_key(item) for item, _ in items]
    if sent[: len(held)] == held:
        history.extend(items[len(held) :])
        return
    kept = set(sent)
    for item, origin in history:
        if _key(item) not in kept:
            out.note(
                origin, "item of an earlier call", "a later call's history does not hold it", item
            )
    history[:] = items


def _relocate(origin: str, origins: list[str]) -> str:
    """``[3].content[0]`` (index into the rebuilt items) -> ``[5].input[2].content[0]``."""
    pieces = []
    for piece in origin.split("+"):
        match = _INDEX.match(piece)
        if match and int(match.group(1)) < len(origins):
            rest = piece[match.end() :]
            pieces.append(origins[int(match.group(1))] + rest)
        else:
            pieces.append(piece)
    return "+".join(pieces)
