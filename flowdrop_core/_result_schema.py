"""pydantic models of the result dicts: their JSON Schema, and reading a dict back.

The result classes (:class:`~flowdrop_core.engine.AppendResult`,
:class:`~flowdrop_core.conversation.ScopedAppendResult`,
:class:`~flowdrop_core.conversation.MemoryReadResult`) are plain objects; the
models here describe what their ``to_dict()`` returns, so
``json_schema()`` and ``from_dict()`` come from one declaration and the
schema cannot drift from the output (a test dumps real results through them).
Imported only when a schema or a read-back is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from flowdrop_core.context import Scope
from flowdrop_core.events import Event, EventKind

__all__ = [
    "AppendResultDict",
    "EventDict",
    "MemoryReadResultDict",
    "ScopedAppendResultDict",
    "read_result",
    "schema_model",
]


class EventDict(BaseModel):
    """One event as :meth:`Event.to_dict` writes it (``reason`` is derived, not read back)."""

    model_config = ConfigDict(extra="forbid")

    kind: EventKind
    rule: str
    incoming_index: int | None = None
    position: int | None = None
    tool_call_id: str | None = None
    entry: dict[str, Any] | None = None
    max_messages: int | None = None
    reason: str = ""

    def event(self) -> Event:
        """The :class:`Event` this dict describes."""
        return Event(
            self.kind,
            self.rule,
            self.incoming_index,
            self.position,
            self.tool_call_id,
            self.entry,
            self.max_messages,
        )


class AppendResultDict(BaseModel):
    """``AppendResult.to_dict()``: the MEM-14 report, the buffer after (or null), the events."""

    model_config = ConfigDict(extra="forbid", title="AppendResult")

    count: int
    appended: int
    appended_any: bool
    messages: list[dict[str, Any]] | None = None
    events: list[EventDict] = []
    max_messages: int = 0


class ScopedAppendResultDict(AppendResultDict):
    """``ScopedAppendResult.to_dict()``: an append result plus its slot and MEM-7 / MEM-12 flags."""

    model_config = ConfigDict(extra="forbid", title="ScopedAppendResult")

    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool = False
    refusal_reason: str | None = None
    serialized: bool = True


class MemoryReadResultDict(BaseModel):
    """``MemoryReadResult.to_dict()``: a memory read (MEM-7, MEM-13)."""

    model_config = ConfigDict(extra="forbid", title="MemoryReadResult")

    value: Any = None
    found: bool
    scope: Scope
    key: str
    resolved_scope_id: str
    refused: bool = False
    refusal_reason: str | None = None


_MODELS: dict[str, type[BaseModel]] = {
    "AppendResult": AppendResultDict,
    "ScopedAppendResult": ScopedAppendResultDict,
    "MemoryReadResult": MemoryReadResultDict,
}


def schema_model(cls: type) -> type[BaseModel]:
    """The pydantic model of ``cls.to_dict()`` (the nearest described class in its MRO)."""
    for klass in cls.__mro__:
        model = _MODELS.get(klass.__name__)
        if model is not None:
            return model
    raise TypeError(f"no schema for {cls.__name__}")


def read_result(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor fields of ``cls`` from a ``to_dict()`` dict, validated by its model.

    A field of the wrong type, a missing one or an unknown one raises
    ``ValueError`` naming it.
    """
    model = schema_model(cls)
    try:
        parsed = model.model_validate(dict(data))
    except ValidationError as exc:
        raise ValueError(f"not a {cls.__name__} dict: {exc}") from None
    fields = {name: getattr(parsed, name) for name in type(parsed).model_fields}
    if "events" in fields:
        fields["events"] = tuple(ev.event() for ev in parsed.events)  # type: ignore[attr-defined]
    return fields
