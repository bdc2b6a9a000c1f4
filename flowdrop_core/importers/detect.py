"""Detection of a nested value, for readers whose input holds other formats.

A JSONL file's lines and a Langfuse observation's input and output are
themselves recorded conversations in some format. Their readers need the
registry's detection, but the registry imports every reader: importing it
back would be a cycle. So the registry installs its detection here when it
is imported (``flowdrop_core.importers`` always imports it first), and the
readers call :func:`detect_value`; this module imports only
:mod:`~flowdrop_core.importers.base`.
"""

from __future__ import annotations

from typing import Any, Protocol

from flowdrop_core.importers.base import Out

__all__ = ["Detector", "detect_value", "install", "json_formats"]


class Detector(Protocol):
    """The registry's ``detect_value``: read ``value`` in the best of ``formats``."""

    def __call__(
        self, value: Any, formats: tuple[str, ...], prefix: str, *, numbers: list[int] | None = None
    ) -> Out: ...


_installed: dict[str, Any] = {}


def install(detector: Detector, formats: tuple[str, ...]) -> None:
    """Called once by the registry: its detection and the formats that read a JSON value."""
    _installed["detector"] = detector
    _installed["formats"] = formats


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
