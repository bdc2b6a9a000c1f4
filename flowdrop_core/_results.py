"""Plain result objects: slotted classes that print, compare, copy and serialize by field.

The engine makes one result per append, so a result is a plain slotted object
(no validation, no model machinery) whose expensive fields are filled in only
when first read (see :class:`~flowdrop_core.engine.AppendResult`). This module
holds what every result class shares: equality, ``repr``, pickling and copying
by field, :meth:`PlainResult.replace`, :meth:`PlainResult.to_json`, and
:meth:`PlainResult.json_schema`, which is derived from a small pydantic model of
the dict :meth:`PlainResult.to_dict` returns (see
:mod:`flowdrop_core._result_schema`), so the documented shape cannot drift from
the code.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Self

__all__ = ["LazyValue", "PlainResult"]


class LazyValue:
    """A field value computed on first read: a result field holding one calls :meth:`get` once."""

    __slots__ = ()

    def get(self) -> Any:
        """The value (called once; the result keeps what it returns)."""
        raise NotImplementedError  # pragma: no cover - every subclass defines one


def _rebuild(cls: type[PlainResult], fields: dict[str, Any]) -> PlainResult:
    """Unpickle / copy: a result built from its fields (see :meth:`PlainResult.__reduce__`)."""
    return cls(**fields)


class PlainResult:
    """Shared behaviour of the result classes; subclasses name their fields in ``FIELDS``."""

    __slots__ = ()

    #: The public fields, in the order ``repr``, equality and :meth:`to_dict` use.
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **fields: Any) -> None:  # pragma: no cover - every subclass defines one
        raise NotImplementedError

    def fields(self) -> dict[str, Any]:
        """Every field by name, as Python values (events as :class:`~flowdrop_core.events.Event`)."""
        return {name: getattr(self, name) for name in self.FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (see the subclass); :meth:`json_schema` describes it."""
        raise NotImplementedError  # pragma: no cover - every subclass defines one

    def to_json(self) -> str:
        """:meth:`to_dict` as compact JSON text (UTF-8 characters kept, not escaped)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of :meth:`to_dict`'s output, from its pydantic model."""
        from flowdrop_core._result_schema import schema_model

        return schema_model(cls).model_json_schema()

    def replace(self, **changes: Any) -> Self:
        """A new result with ``changes`` applied (the original is left alone)."""
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        return type(self)(**{**self.fields(), **changes})

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in self.fields().items())
        return f"{type(self).__name__}({inner})"

    def __str__(self) -> str:
        return " ".join(f"{name}={value!r}" for name, value in self.fields().items())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle and copy by field, so lazy fields are built first and private state is not kept."""
        return (_rebuild, (type(self), self.fields()))
