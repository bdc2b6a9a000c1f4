"""Detection of a nested value, for readers whose input holds other formats.

A JSONL file's lines and a Langfuse observation's input and output are
themselves recorded conversations in some format. Their readers need the
registry's detection, but the registry imports every reader: importing it
back would be a cycle. So the registry installs its detection here when it
is imported (``flowdrop_core.importers`` always imports it first), and the
readers call :func:`detect_value` (and :func:`nearest_miss`, the claim check);
this module imports only :mod:`~flowdrop_core.importers._base` and
:mod:`~flowdrop_core.importers._claims`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from flowdrop_core.importers._base import Out
from flowdrop_core.importers._claims import Miss

__all__ = ["Detector", "detect_value", "format_named", "install", "json_formats", "nearest_miss"]


class Detector(Protocol):
    """The registry's ``detect_value``: read ``value`` in the best of ``formats``."""

    def __call__(
        self, value: Any, formats: tuple[str, ...], prefix: str, *, numbers: list[int] | None = None
    ) -> Out: ...


_installed: dict[str, Any] = {}


def install(
    detector: Detector,
    formats: tuple[str, ...],
    nearest: Callable[[Any, tuple[str, ...]], Miss | None],
    by_name: Mapping[str, Any] | None = None,
) -> None:
    """Called once by the registry: its detection, the formats that read a JSON value, its
    claim check (``nearest_miss``) and its formats by name."""
    _installed["detector"] = detector
    _installed["formats"] = formats
    _installed["nearest"] = nearest
    _installed["by_name"] = by_name or {}


def format_named(name: str) -> Any:
    """The registry's format ``name`` (its ``claims`` and ``read``), for a reader that
    reads each part of a document in another format (an API recording)."""
    return _installed["by_name"][name]


def json_formats() -> tuple[str, ...]:
    """Every format that reads a JSON value, in the registry's detection order."""
    formats: tuple[str, ...] = _installed["formats"]
    return formats


def detect_value(
    value: Any, formats: tuple[str, ...], prefix: str, *, numbers: list[int] | None = None
) -> Out:
    """The registry's detection of a nested value (see ``registry.detect_value``)."""
    detector: Detector = _installed["detector"]
    return detector(value, formats, prefix, numbers=numbers)


def nearest_miss(value: Any, formats: tuple[str, ...]) -> Miss | None:
    """``None`` when one of ``formats`` claims ``value``; else the nearest miss (see
    ``registry.nearest_miss``)."""
    nearest: Callable[[Any, tuple[str, ...]], Miss | None] = _installed["nearest"]
    return nearest(value, formats)
