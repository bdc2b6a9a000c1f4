"""Store URLs shown without their secrets, and Redis URLs reduced to where they point.

A Redis URL may carry a password (``redis://:s3cret@host:6379/0``) and
connection options (``?socket_timeout=20``). Anything shown to a person
(a page, a CLI line, an error message) goes through :func:`mask_url`; a URL
a visitor typed goes through :func:`plain_redis_url` before a connection is
made, so the visitor picks where to connect, never how (timeouts, pools,
TLS options stay the operator's), and cannot smuggle protocol lines in a
user name or password.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

from flowdrop_core._errors import FlowdropError
from flowdrop_core.storage._base import mask_url

__all__ = ["MASK", "UnsafeUrlError", "mask_url", "plain_redis_url", "plain_store_url"]

#: What a password is shown as (by :func:`~flowdrop_core.storage._base.mask_url`).
MASK = "***"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEMES = ("redis", "rediss", "unix")
_POSTGRES = ("postgresql", "postgres")


class UnsafeUrlError(FlowdropError, ValueError):
    """A store URL that cannot be used as given (control characters, a bad port, ...)."""


def plain_redis_url(url: str) -> str:
    """The Redis (or Postgres) URL with only scheme, credentials, host, port and database kept.

    The query (connection options) and fragment are dropped, except ``db`` for a
    ``unix://`` socket (its only way to name a database). Control characters
    anywhere (decoded or not) are refused: a password is never a way to send
    extra protocol lines.
    """
    text = url.strip()
    if _CONTROL.search(text) or _CONTROL.search(unquote(text)):
        raise UnsafeUrlError(f"the store URL {mask_url(text)!r} holds control characters")
    try:
        parts = urlsplit(text)
        port = parts.port  # validates
    except ValueError as exc:
        raise UnsafeUrlError(f"not a usable store URL {mask_url(text)!r} ({exc})") from exc
    if parts.scheme not in _SCHEMES + _POSTGRES:
        raise UnsafeUrlError(
            f"not a store URL {mask_url(text)!r} (redis://, rediss://, unix://, postgresql://)"
        )
    query = ""
    if parts.scheme in _POSTGRES:
        pass  # libpq options (host=, sslmode=, options=...) in the query are the operator's
    elif parts.scheme == "unix":
        db = [p for p in parts.query.split("&") if p.startswith("db=")]
        query = db[0] if db and db[0][3:].isdigit() else ""
    elif parts.path not in ("", "/") and not parts.path.lstrip("/").isdigit():
        raise UnsafeUrlError(f"the store URL {mask_url(text)!r}: the database must be a number")
    if port is not None and not 0 < port < 65536:
        raise UnsafeUrlError(f"the store URL {mask_url(text)!r}: port out of range")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


#: The same reduction for any store URL (Redis or Postgres).
plain_store_url = plain_redis_url
