"""A playground session in the URL: compact, versioned, size-limited, validated on the way in.

A session is its starting buffer and its appends (the "recipe"), plus
optionally the settings it ran under. :func:`encode_session` turns it into
one query parameter value, ``1.<base64url(zlib(json))>``; past
:data:`MAX_URL_CHARS` it says so instead (the page then offers the scenario
file download). :func:`decode_session` reads such a value back and never
raises anything but :class:`SessionUrlError`, whose message names what is
wrong and where: a link someone edited, truncated or made with a newer
version is a clear message, never a traceback, and never a half-loaded
session.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from flowdrop_core._errors import FlowdropError
from flowdrop_core.scenario import ScenarioConfig, ScenarioStep

__all__ = [
    "MAX_URL_CHARS",
    "MAX_URL_MESSAGES",
    "PARAM",
    "VERSION",
    "EncodedSession",
    "SessionUrlError",
    "UrlSession",
    "decode_session",
    "encode_session",
]

#: The query parameter holding the session.
PARAM = "appends"
#: The encoding's version, the value's prefix; a reader refuses any other.
VERSION = "1"
#: Longest value written: a URL past ~8 KB is cut by some proxies and chat tools.
MAX_URL_CHARS = 6_000
#: Largest decompressed payload accepted (a crafted link cannot blow up memory).
MAX_JSON_BYTES = 2_000_000
#: Most messages a link may make the server append when it opens (the starting buffer,
#: plus every message of every step): a 7 KB crafted link once replayed 45,000 steps.
#: The encoder refuses to write more, so every link the app writes opens.
MAX_URL_MESSAGES = 2_000

_RECIPE_KEYS = ("name", "title", "rules", "description", "buffer", "steps", "extra_context")


class SessionUrlError(FlowdropError, ValueError):
    """A session link that cannot be read; the message says what and where."""


@dataclass(frozen=True)
class UrlSession:
    """A session read back from a link: the recipe fields and the settings it carried."""

    name: str = "playground"
    title: str = ""
    rules: list[str] = field(default_factory=list)
    description: str = ""
    buffer: list[Any] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    extra_context: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def recipe(self) -> dict[str, Any]:
        """The playground recipe this session describes."""
        return {
            "name": self.name,
            "title": self.title,
            "rules": list(self.rules),
            "description": self.description,
            "buffer": list(self.buffer),
            "steps": [dict(s) for s in self.steps],
            "source": None,
            "extra_context": dict(self.extra_context),
        }


@dataclass(frozen=True)
class EncodedSession:
    """The URL value for a session, or why it does not fit."""

    value: str | None
    size: int
    limit: int
    messages: int = 0  # messages the session appends when opened

    @property
    def fits(self) -> bool:
        return self.value is not None

    @property
    def message(self) -> str:
        if self.fits:
            return f"The session is in the URL ({self.size:,} characters)."
        if self.messages > MAX_URL_MESSAGES:
            return (
                f"This session is too large for a link ({self.messages:,} messages, the limit "
                f"is {MAX_URL_MESSAGES:,}); download it as a scenario file to share or reopen it."
            )
        return (
            f"This session is too large for a link ({self.size:,} characters encoded, the "
            f"limit is {self.limit:,}); download it as a scenario file to share or reopen it."
        )


def encode_session(
    recipe: dict[str, Any],
    settings: dict[str, Any] | None = None,
    *,
    limit: int = MAX_URL_CHARS,
) -> EncodedSession:
    """The query parameter value for ``recipe`` (and ``settings``), or a too-large note.

    Only the recipe's own fields travel (``source`` does not: a link is not
    a sample file). Empty fields are left out to keep links short.
    """
    payload: dict[str, Any] = {"v": VERSION}
    for key in _RECIPE_KEYS:
        value = recipe.get(key)
        if value not in (None, "", [], {}) and not (key == "name" and value == "playground"):
            payload[key] = value
    if settings:
        payload["settings"] = settings
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    packed = zlib.compress(text.encode("utf-8"), 9)
    value = VERSION + "." + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    messages = session_messages(payload.get("buffer", []), payload.get("steps", []))
    if len(value) > limit or messages > MAX_URL_MESSAGES:
        return EncodedSession(None, len(value), limit, messages)
    return EncodedSession(value, len(value), limit, messages)


def session_messages(buffer: Any, steps: Any) -> int:
    """How many messages opening the session appends: the buffer's, then every step's."""
    total = len(buffer) if isinstance(buffer, list) else 0
    for step in steps if isinstance(steps, list) else []:
        append = step.get("append") if isinstance(step, dict) else None
        total += len(append) if isinstance(append, list) else 1
    return total


def _fail(problem: str) -> SessionUrlError:
    return SessionUrlError(f"URL parameter {PARAM!r}: {problem}")


def _unpack(value: str) -> Any:
    version, dot, body = value.partition(".")
    if not dot:
        raise _fail("not a session link (expected '<version>.<data>')")
    if version != VERSION:
        raise _fail(
            f"made with session link version {version!r}; this inspector reads version {VERSION!r}"
        )
    try:
        packed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise _fail("the data is not valid base64url (was the link cut or edited?)") from None
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, MAX_JSON_BYTES)
    except zlib.error:
        raise _fail("the data does not decompress (was the link cut or edited?)") from None
    if inflater.unconsumed_tail:
        raise _fail(f"the session is larger than {MAX_JSON_BYTES:,} bytes")
    if not inflater.eof:
        raise _fail("the data ends early (was the link cut?)")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _fail("the data is not JSON") from None


def _typed(payload: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = payload.get(key, default)
    if not isinstance(value, kind):
        raise _fail(f"{key} should be a {kind.__name__}, got {type(value).__name__}")
    return value


def decode_session(value: str) -> UrlSession:
    """Read a value made by :func:`encode_session`; raises only :class:`SessionUrlError`.

    Every step is checked the way a scenario file's steps are, and the
    settings the way a scenario's config is, so what loads is runnable.
    """
    if not isinstance(value, str) or not value.strip():
        raise _fail("empty")
    if len(value.strip()) > MAX_URL_CHARS:
        raise _fail(
            f"{len(value.strip()):,} characters, longer than the {MAX_URL_CHARS:,} this app "
            "writes; open the session from its scenario file instead"
        )
    payload = _unpack(value.strip())
    if not isinstance(payload, dict):
        raise _fail(f"should hold an object, got {type(payload).__name__}")
    unknown = sorted(set(payload) - {"v", "settings", *_RECIPE_KEYS})
    if unknown:
        raise _fail(f"unknown field(s) {', '.join(unknown)}")
    steps = _typed(payload, "steps", list, [])
    messages = session_messages(payload.get("buffer", []), steps)
    if messages > MAX_URL_MESSAGES:
        raise _fail(
            f"the session appends {messages:,} messages, more than the {MAX_URL_MESSAGES:,} a "
            "link may replay; open it from its scenario file instead"
        )
    problems = []
    for number, step in enumerate(steps, start=1):
        try:
            ScenarioStep.model_validate(step)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"step {number}{' ' + where if where else ''}: {first['msg']}")
    if problems:
        raise _fail("; ".join(problems))
    settings = _typed(payload, "settings", dict, {})
    if settings:
        config = {
            k: settings[k] for k in ("scope", "key", "max_messages", "storage") if k in settings
        }
        try:
            ScenarioConfig.model_validate(config)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise _fail(
                f"settings.{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
            ) from None
    rules = _typed(payload, "rules", list, [])
    if not all(isinstance(r, str) for r in rules):
        raise _fail("rules should be a list of strings")
    return UrlSession(
        name=_typed(payload, "name", str, "playground") or "playground",
        title=_typed(payload, "title", str, ""),
        rules=rules,
        description=_typed(payload, "description", str, ""),
        buffer=_typed(payload, "buffer", list, []),
        steps=steps,
        extra_context=_typed(payload, "extra_context", dict, {}),
        settings=settings,
    )
