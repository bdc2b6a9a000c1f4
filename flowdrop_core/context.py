"""Execution context and scope resolution (MEM-6, MEM-7, MEM-8, MEM-13).

A buffer lives in a storage slot ``(scope, resolved_scope_id, key)``. This
module is the one place that turns a scope and an execution context into the
``resolved_scope_id`` of that slot, or into a refusal. Every consumer (the
conversation buffer, memory reads, the inspector) calls :func:`resolve_scope`,
so no two code paths can disagree about whose history a call touches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from flowdrop_core._ids import read_id, shown_value, usable_id

__all__ = [
    "IDENTITY_SCOPES",
    "ExecutionContext",
    "Scope",
    "ScopeResolution",
    "as_context",
    "as_scope",
    "resolve_scope",
]


class Scope(StrEnum):
    """Memory scopes of GR-MEM; ``session`` and ``user`` are identity scopes."""

    GLOBAL = "global"
    WORKFLOW = "workflow"
    PIPELINE = "pipeline"
    EXECUTION = "execution"
    SESSION = "session"
    USER = "user"


#: Scopes that refuse (MEM-7) rather than fall back to the shared ``""`` bucket.
IDENTITY_SCOPES = frozenset({Scope.SESSION, Scope.USER})

#: Non-identity scopes and the context field each resolves to (else ``""``).
_SHARED_FIELDS: dict[Scope, str | None] = {
    Scope.GLOBAL: None,
    Scope.WORKFLOW: "workflow_id",
    Scope.PIPELINE: "pipeline_id",
    Scope.EXECUTION: "execution_id",
}


class ExecutionContext(BaseModel):
    """Who and what an append runs for.

    Values are kept exactly as the caller passed them (``Any``): whether an id
    is usable is decided by :func:`flowdrop_core._ids.usable_id` at resolution
    time (MEM-6), never by coercion at validation time, so ``0`` stays ``0``
    and is refused instead of quietly becoming ``"0"`` or ``None``. Unknown
    keys are ignored, because a runtime's context usually carries more than
    the buffer needs.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    session_id: Any = None
    user_id: Any = None
    session_owner_id: Any = None
    workflow_id: Any = None
    pipeline_id: Any = None
    execution_id: Any = None
    node_id: Any = None


@dataclass(frozen=True, slots=True)
class ScopeResolution:
    """The outcome of resolving a scope.

    ``resolved_scope_id`` is ``""`` both for the shared bucket of a
    non-identity scope and for a refusal; only ``refused`` tells them apart
    (GR-MEM: refusing is not resolving to ``""``). ``source`` names the
    context field the id came from (``None`` for ``global`` and when absent);
    ``reason`` explains a refusal and cites its rule.
    """

    scope: Scope
    resolved_scope_id: str
    refused: bool = False
    reason: str | None = None
    source: str | None = None


def as_scope(scope: Scope | str) -> Scope:
    """Return ``scope`` as a :class:`Scope`; an unknown name is a configuration error."""
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, str):
        try:
            return Scope(scope.strip().lower())
        except ValueError:
            pass
    valid = ", ".join(s.value for s in Scope)
    raise ValueError(f"unknown memory scope {scope!r}; expected one of: {valid}")


def as_context(obj: ExecutionContext | Mapping[str, Any] | None) -> ExecutionContext | None:
    """Accept an :class:`ExecutionContext`, a plain mapping, or ``None`` (no context)."""
    if obj is None or isinstance(obj, ExecutionContext):
        return obj
    if isinstance(obj, Mapping):
        return ExecutionContext.model_validate(dict(obj))
    raise TypeError(
        f"execution context must be an ExecutionContext, a mapping or None, not {type(obj).__name__}"
    )


def _refuse(scope: Scope, why: str, source: str | None) -> ScopeResolution:
    return ScopeResolution(scope, "", refused=True, reason=why, source=source)


def resolve_scope(
    scope: Scope | str, context: ExecutionContext | Mapping[str, Any] | None
) -> ScopeResolution:
    """Resolve ``scope`` under ``context`` exactly per the GR-MEM scope table.

    - ``global`` resolves to ``""``; ``workflow`` / ``pipeline`` / ``execution``
      to the context's matching id, else ``""`` (an unusable id counts as
      absent there: those scopes are shared buckets and never refuse).
    Every id is read by :func:`flowdrop_core._ids.read_id` (trimmed, NFKC,
    invisible-only and zero-like spellings refused, number spellings
    canonical), so a refusal says why the id is not one.

    - ``session`` resolves to the usable ``session_id``; otherwise it refuses
      (MEM-6, MEM-7, MEM-13), including when there is no context.
    - ``user`` resolves to the usable ``user_id``, except MEM-8: when a
      session drives the run (a usable ``session_id``) or ``session_owner_id``
      is set (any value other than ``None``), the identity is the session's
      owner. A missing or unusable owner then refuses: the caller's
      ``user_id`` never stands in for it. Without a session, ``user_id`` is
      the identity.
    """
    sc = as_scope(scope)
    ctx = as_context(context)

    if sc not in IDENTITY_SCOPES:
        field = _SHARED_FIELDS[sc]
        if field is None or ctx is None:
            return ScopeResolution(sc, "")
        ident = usable_id(getattr(ctx, field))
        return ScopeResolution(sc, ident or "", source=field if ident else None)

    if sc is Scope.SESSION:
        field = "session_id"
    elif ctx is not None and (
        ctx.session_owner_id is not None or usable_id(ctx.session_id) is not None
    ):
        field = "session_owner_id"  # MEM-8: a session's user is its owner, never the caller
    else:
        field = "user_id"

    if ctx is None:
        return _refuse(sc, f"MEM-7: no execution context, so the {sc} scope has no identity", None)
    raw = getattr(ctx, field)
    reading = read_id(raw)
    if reading.id is not None:
        return ScopeResolution(sc, reading.id, source=field)
    if raw is None:
        why = f"MEM-7: the context has no {field}"
    else:
        why = f"MEM-6: {field} {shown_value(raw)} is not a usable identifier: {reading.problem}"
    if field == "session_owner_id":
        why += " (MEM-8: the caller's user_id does not stand in for the session owner)"
    return _refuse(sc, why, field)
