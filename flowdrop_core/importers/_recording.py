"""A recording of one provider's API calls: request bodies, each followed by its response.

What an SDK test cassette holds once its bodies are taken out (pydantic-ai,
VCR): ``[request, response, request, response, ...]`` for Anthropic Messages,
Gemini ``generateContent``, Bedrock Converse or OpenAI Chat, maybe with an
error body (``{"error": ...}``) where the API refused a call. Every body is
read by the one provider format that claims all of them; a request (it has
``messages``, ``contents`` or ``input``) starts a call, a response completes
it. The conversation is what the last call saw, then its reply (what only an
earlier call held is a note); an error body is a located note.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import TOP_LEVEL, Out, Problem, json_type, last_call
from flowdrop_core.importers._claims import Claim, Miss, Verdict
from flowdrop_core.importers._detect import format_named

NAME = "api-recording"
EXPECTS = (
    "a list of one provider's API request bodies, each followed by its response "
    "(Anthropic, Gemini, Bedrock or OpenAI Chat; error bodies allowed)"
)

#: The provider formats whose bodies a recording may hold, in the order that breaks ties.
PROVIDERS = ("anthropic", "gemini", "bedrock", "openai-chat")
REQUEST_KEYS = ("messages", "contents", "input")


def _is_error(value: Any) -> bool:
    return isinstance(value, dict) and "error" in value and len(value) <= 3


def _is_request(value: dict[str, Any]) -> bool:
    return any(key in value for key in REQUEST_KEYS)


def _provider(document: Any) -> str | Miss:
    """The provider format that claims every body, or what is missing."""
    if not isinstance(document, list) or len(document) < 2:
        return Miss("", "expected a list of request and response bodies")
    bodies = [(k, v) for k, v in enumerate(document) if not _is_error(v)]
    if not any(isinstance(v, dict) and _is_request(v) for _, v in bodies):
        return Miss("", "no request body ('messages', 'contents' or 'input')")
    if all(isinstance(v, dict) and _is_request(v) for _, v in bodies):
        return Miss("", "no response body among the requests", 1)
    common = list(PROVIDERS)
    for k, body in bodies:
        common = [name for name in common if isinstance(format_named(name).claims(body), Claim)]
        if not common:
            return Miss(f"[{k}]", "no provider format claims every body", k)
    return common[0]


def claims(document: Any) -> Verdict:
    """The signature: requests and responses (and error bodies) all one provider claims."""
    found = _provider(document)
    return found if isinstance(found, Miss) else Claim(f"a recording of {found} calls")


def read(document: Any, out: Out) -> None:
    """Read each body in the provider's format; the conversation is the last call's."""
    provider = _provider(document)
    if isinstance(provider, Miss):
        raise Problem(provider.where, provider.what)
    reader = format_named(provider).read
    assert reader is not None and isinstance(document, list)
    calls: list[tuple[str, Out]] = []
    errors: list[tuple[str, Any]] = []
    for i, body in enumerate(document):
        where = f"[{i}]"
        if _is_error(body):
            errors.append((where, body))
            continue
        if not isinstance(body, dict):
            raise Problem(where, f"expected a request or response object, got {json_type(body)}")
        if _is_request(body) or not calls:
            calls.append((f"call {where}", Out()))
        part = Out()
        reader(body, part)
        calls[-1][1].extend(part, lambda origin, at=where: _under(at, origin))
    for where, body in errors:
        out.note(where, "error body", "the API answered this call with an error", body)
    last_call(calls, out, "an earlier call held it; the last call does not")


def _under(prefix: str, origin: str) -> str:
    if not origin or origin == TOP_LEVEL:
        return prefix
    return f"{prefix}{origin}" if origin.startswith("[") else f"{prefix}.{origin}"
