"""The stores an operator offers for browsing: named targets, read-only unless marked writable.

The Store page (and anyone serving the inspector) connects only to these; a
visitor picks one by name and never types a path or URL unless the operator
switched local path entry on (:data:`PATHS_ENV`).

Each target grants a tier (:mod:`flowdrop_core.tiers`, MEM-9, MEM-15): ``view``
unless marked; ``writable`` grants ``drive`` (appends); ``admin`` grants the
administrative tier (a clear, a framework file's repair) and includes drive.
The visitor still switches a granted tier on, on the page.

Sources, all optional, merged in this order (a later name replaces an earlier):

* ``$FLOWDROP_DB`` and ``$FLOWDROP_REDIS_URL`` (the runtime's own store), read-only;
* ``$FLOWDROP_STORES``: entries separated by ``;`` or newlines, each
  ``name=target``; a target starting with ``writable:`` may be written, one
  starting with ``admin:`` may also be cleared or repaired;
* ``$FLOWDROP_STORES_FILE``: a TOML file of ``[stores.<name>]`` tables with
  ``target = "..."`` and optional ``writable = true`` or ``admin = true``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from flowdrop_core._errors import FlowdropError
from flowdrop_core.storage.urls import mask_url
from flowdrop_core.tiers import Tier

__all__ = [
    "FILE_ENV",
    "PATHS_ENV",
    "STORES_ENV",
    "StoreTarget",
    "StoreTargetsError",
    "configured_targets",
    "path_entry_enabled",
]

STORES_ENV = "FLOWDROP_STORES"
FILE_ENV = "FLOWDROP_STORES_FILE"
PATHS_ENV = "FLOWDROP_STORE_PATHS"
_WRITABLE = "writable:"
_ADMIN = "admin:"


class StoreTargetsError(FlowdropError, ValueError):
    """The operator's store configuration cannot be read; names the source and entry."""


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """One store the operator offers: its name, where it is, the tier it grants."""

    name: str
    target: str  # a SQLite path or a Redis URL; may hold a password: show :attr:`shown`
    writable: bool = False
    source: str = ""
    admin: bool = False  # the operator granted the administrative tier (MEM-15)

    @property
    def tier(self) -> Tier:
        """The most a visitor may switch on: admin, drive (writable) or view."""
        return Tier.ADMIN if self.admin else Tier.DRIVE if self.writable else Tier.VIEW

    @property
    def shown(self) -> str:
        """The target as it may be displayed (password masked)."""
        return mask_url(self.target)

    def label(self) -> str:
        """``name · where · read-only`` (or ``writable``, ``admin``) for a picker."""
        mode = "admin" if self.admin else "writable" if self.writable else "read-only"
        return f"{self.name} · {self.shown} · {mode}"


def _from_env_list(text: str) -> list[StoreTarget]:
    out = []
    for n, raw in enumerate(text.replace("\n", ";").split(";"), start=1):
        entry = raw.strip()
        if not entry:
            continue
        name, sep, target = entry.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name or not target:
            raise StoreTargetsError(
                f"${STORES_ENV} entry {n} ({mask_url(entry)!r}) is not name=target"
            )
        admin = target.startswith(_ADMIN)
        writable = admin or target.startswith(_WRITABLE)
        if writable:
            target = target[len(_ADMIN if admin else _WRITABLE) :].strip()
        out.append(StoreTarget(name, target, writable, f"${STORES_ENV} entry {n}", admin))
    return out


def _from_file(path: Path) -> list[StoreTarget]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StoreTargetsError(f"${FILE_ENV} {os.fspath(path)!r}: {exc}") from exc
    stores = data.get("stores", {})
    if not isinstance(stores, dict):
        raise StoreTargetsError(f"{os.fspath(path)!r}: [stores] must be a table of named stores")
    out = []
    for name, entry in stores.items():
        where = f"{os.fspath(path)!r} [stores.{name}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("target"), str):
            raise StoreTargetsError(f'{where}: needs target = "a SQLite path or a Redis URL"')
        writable = entry.get("writable", False)
        if not isinstance(writable, bool):
            raise StoreTargetsError(f"{where}: writable must be true or false")
        admin = entry.get("admin", False)
        if not isinstance(admin, bool):
            raise StoreTargetsError(f"{where}: admin must be true or false")
        out.append(StoreTarget(str(name), entry["target"].strip(), writable or admin, where, admin))
    return out


def configured_targets(env: dict[str, str] | None = None) -> list[StoreTarget]:
    """The operator's stores, by name (see the module's docstring for the sources)."""
    env = dict(os.environ) if env is None else env
    found: dict[str, StoreTarget] = {}
    for var, name in (("FLOWDROP_DB", "FLOWDROP_DB"), ("FLOWDROP_REDIS_URL", "FLOWDROP_REDIS_URL")):
        value = env.get(var, "").strip()
        if value:
            found[name] = StoreTarget(name, value, False, f"${var}")
    for target in _from_env_list(env.get(STORES_ENV, "")):
        found[target.name] = target
    file = env.get(FILE_ENV, "").strip()
    if file:
        for target in _from_file(Path(file).expanduser()):
            found[target.name] = target
    return list(found.values())


def path_entry_enabled(env: dict[str, str] | None = None) -> bool:
    """Whether the operator switched on typing a path or URL (``$FLOWDROP_STORE_PATHS=1``)."""
    env = dict(os.environ) if env is None else env
    return env.get(PATHS_ENV, "").strip().lower() in ("1", "true", "yes", "on")
