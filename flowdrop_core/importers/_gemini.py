"""Google Gemini ``contents`` as google-genai and ADK send them (camelCase or snake_case).

Contents are ``{"role": "user"|"model", "parts": [...]}``; parts carry
``text``, ``functionCall`` (``name``, ``args``, optional ``id``),
``functionResponse`` (``name``, ``response``, optional ``id``), media
(``inlineData``, ``fileData``), code execution, or thoughts. The top level
is a request body (``contents``, ``systemInstruction``), a response
(``candidates[0].content``), or a bare list of contents. A call without an
``id`` gets its origin as id; a response without one answers the oldest open
call of its name.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_text,
    json_type,
    marker,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss

NAME = "gemini"
EXPECTS = (
    "Gemini contents {'role': 'user'|'model', 'parts': [{'text'|'functionCall'|"
    "'functionResponse': ...}]}, a request with 'contents' or a response with 'candidates'"
)

ROLES = {"user": "user", "model": "assistant", "function": "user", "system": "system"}
MEDIA = ("inlineData", "inline_data", "fileData", "file_data")
CODE = ("executableCode", "executable_code", "codeExecutionResult", "code_execution_result")
#: Part fields that carry nothing a person reads (opaque signatures, metadata).
QUIET = frozenset(
    {"thoughtSignature", "thought_signature", "videoMetadata", "video_metadata", "thought",
     "partMetadata", "part_metadata", "mediaResolution", "media_resolution"}
)  # fmt: skip


#: Part fields a Gemini part carries (each part has at least one).
PART_KEYS = frozenset(
    {"text", "functionCall", "function_call", "functionResponse", "function_response", *MEDIA,
     *CODE}
)  # fmt: skip


def claims(document: Any) -> Verdict:
    """Gemini contents (``parts`` of untyped parts, ``role`` user, model, function or
    system), in a request (``contents``) or a response (``candidates[].content``), or bare
    with at least one part carrying ``text``, ``functionCall``, ``functionResponse``, media
    or code. pydantic-ai messages (``kind``, parts with ``part_kind``) are not Gemini's."""
    if isinstance(document, list):
        contents, verdict = document, each(document, "", content_miss, "a list of contents")
    elif not isinstance(document, dict):
        return Miss("", f"expected a list of contents or a request, got {json_type(document)}")
    elif "contents" in document and _text_contents(document["contents"]):
        return Claim("a google-genai request whose contents is text")
    elif "contents" in document:
        contents = document["contents"]
        verdict = each(contents, "contents", content_miss, "a request", score=2)
    elif "candidates" in document:
        candidates = document["candidates"]
        if not isinstance(candidates, list) or not candidates:
            return Miss("candidates", "expected a non-empty list of candidates", 1)
        missed = key_miss(candidates[0], "candidates[0]", ("content",), "a candidate object")
        missed = missed or content_miss(candidates[0]["content"], "candidates[0].content")
        if missed is not None:
            return Miss(missed.where, missed.what, 2)
        contents, verdict = [candidates[0]["content"]], Claim("a response")
    else:
        return Miss("", "no 'contents' or 'candidates' at the top level")
    if (
        isinstance(verdict, Claim)
        and isinstance(document, list)
        and not any(
            PART_KEYS.intersection(part) for content in contents for part in content["parts"]
        )
    ):
        return Miss("", f"no part carries any of {', '.join(sorted(PART_KEYS))}", 1)
    return verdict


def _text_contents(contents: Any) -> bool:
    """google-genai's ``generate_content(contents="...")``: a string is one user turn's
    text (the SDK turns it into ``Content(role="user", parts=[Part(text=...)])``)."""
    return isinstance(contents, str) and bool(contents.strip())


def content_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a Gemini content (untyped parts)."""
    missed = key_miss(item, where, ("parts",), "a content object")
    if missed is not None:
        return missed
    if "kind" in item:
        return Miss(where, "a message with 'kind' (pydantic-ai's, not a Gemini content)")
    if "role" in item and not (isinstance(item["role"], str) and item["role"] in ROLES):
        return Miss(where, f"role {item['role']!r} (Gemini roles: user, model)")
    parts = item["parts"]
    if not isinstance(parts, list):
        return Miss(f"{where}.parts", "expected a list of parts")
    for k, part in enumerate(parts):
        at = f"{where}.parts[{k}]"
        if not isinstance(part, dict):
            return Miss(at, "expected a part object")
        if "type" in part or "part_kind" in part:
            return Miss(at, "a typed part (Gemini parts have no 'type' or 'part_kind')")
    return None


def read(document: Any, out: Out) -> None:
    """Read a request, a response, or a list of contents."""
    pending = PendingCalls()
    if isinstance(document, list):
        _contents(document, "", out, pending)
        return
    if not isinstance(document, dict):
        raise Problem(
            "", f"expected a list of contents or a request object, got {json_type(document)}"
        )
    if not any(k in document for k in ("contents", "candidates")):
        raise Problem("", "no 'contents' or 'candidates' at the top level")
    config = document.get("config")
    holders = [(document, "")]
    if isinstance(config, dict):  # google-genai / ADK: GenerateContentConfig
        holders.append((config, "config."))
    for holder, prefix in holders:
        for key in ("systemInstruction", "system_instruction"):
            if key not in holder or holder[key] is None:
                continue
            system, where = holder[key], f"{prefix}{key}"
            if isinstance(system, str):
                out.add({"role": "system", "content": system}, where)
            else:
                # The API ignores a system instruction's role; pydantic-ai sends "user".
                first = len(out.messages)
                _content(system, where, out, pending, default_role="system")
                for k in range(first, len(out.messages)):
                    out.messages[k] = {**out.messages[k], "role": "system"}
    if "contents" in document and _text_contents(document["contents"]):
        out.add({"role": "user", "content": document["contents"]}, "contents")
    elif "contents" in document:
        contents = document["contents"]
        if not isinstance(contents, list):
            raise Problem("contents", f"expected a list, got {json_type(contents)}")
        _contents(contents, "contents", out, pending)
    if "candidates" in document:
        candidates = document["candidates"]
        if not isinstance(candidates, list):
            raise Problem("candidates", f"expected a list, got {json_type(candidates)}")
        for k, candidate in enumerate(candidates):
            where = f"candidates[{k}].content"
            if not isinstance(candidate, dict) or "content" not in candidate:
                raise Problem(f"candidates[{k}]", "expected a candidate with 'content'")
            if k == 0:
                _content(candidate["content"], where, out, pending)
            else:
                out.note(
                    where,
                    "another candidate",
                    "alternative completions are not one conversation; candidates[0] is imported",
                    candidate["content"],
                )


def _contents(items: list[Any], prefix: str, out: Out, pending: PendingCalls) -> None:
    for i, item in enumerate(items):
        _content(item, f"{prefix}[{i}]", out, pending)


def _content(
    item: Any, where: str, out: Out, pending: PendingCalls, default_role: str = "user"
) -> None:
    if not isinstance(item, dict):
        raise Problem(where, f"expected a content object, got {json_type(item)}")
    if "parts" not in item:
        raise Problem(where, "missing 'parts'")
    raw_role = item.get("role", default_role)
    if not isinstance(raw_role, str) or raw_role not in ROLES:
        shown = repr(raw_role)
        raise Problem(where, f"unknown role {shown} (expected user or model)")
    role = ROLES[raw_role]
    out.foreign(item, where, ("role", "parts"), NAME)
    parts = item["parts"]
    if not isinstance(parts, list):
        raise Problem(f"{where}.parts", f"expected a list, got {json_type(parts)}")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results = 0
    for k, part in enumerate(parts):
        at = f"{where}.parts[{k}]"
        if not isinstance(part, dict):
            raise Problem(at, f"expected a part object, got {json_type(part)}")
        if "type" in part:
            raise Problem(at, "a part with 'type' is not a Gemini part")
        call = part.get("functionCall", part.get("function_call"))
        response = part.get("functionResponse", part.get("function_response"))
        if isinstance(part.get("text"), str) and part.get("thought") is True:
            out.note(
                at, "thought part", "model reasoning is not a conversation message", part["text"]
            )
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(call, dict):
            given_id = call.get("id")
            call_id: str = given_id if isinstance(given_id, str) and given_id else at
            if call_id == at:
                out.synthetic.add(at)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": call.get("name"),
                        "arguments": arguments_text(call.get("args")),
                    },
                }
            )
            pending.declare(call_id, call.get("name"))
        elif isinstance(response, dict):
            given = response.get("id")
            answers = (
                given if isinstance(given, str) and given else pending.answer(response.get("name"))
            )
            if answers is None:
                out.note(
                    at,
                    "function response without a call",
                    "no earlier functionCall of that name is open",
                    response.get("name") or "",
                )
            body = response.get("response")
            content = body if isinstance(body, str) else json_text(body)
            out.add({"role": "tool", "content": content, "tool_call_id": answers}, at)
            results += 1
        elif any(k in part for k in MEDIA):
            key = next(k for k in MEDIA if k in part)
            data = part[key] if isinstance(part[key], dict) else {}
            texts.append(marker(key, data.get("mimeType", data.get("mime_type"))))
        elif any(k in part for k in CODE):
            key = next(k for k in CODE if k in part)
            texts.append(marker(key, None, part[key]))
        else:
            unknown = {k: v for k, v in part.items() if k not in QUIET}
            if unknown:
                out.note(
                    at,
                    "unknown part",
                    f"{NAME} reads no field of it ({', '.join(unknown)})",
                    part,
                    unknown=True,
                )
                texts.append(f"[{next(iter(unknown))}]")  # visible: never an empty message
    if results and not texts and not calls:
        return
    message: Message = {"role": role, "content": "\n".join(texts) if texts or not calls else None}
    if calls:
        if role != "assistant":
            raise Problem(
                where, f"functionCall in a {raw_role} content; only the model calls tools"
            )
        message["tool_calls"] = calls
    out.add(message, where)
