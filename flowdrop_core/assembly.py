"""Assembling messages from several inputs in their declared order (MEM-4).

A step that joins several message sources (a node's input ports) into one
list takes its inputs in the order they were declared and flattens them: a
list contributes each of its messages in order, a single message contributes
one, and an input that is unwired or holds no value contributes nothing (no
placeholder, no empty message). The assembled list then goes through the
append like any other incoming list.

Decision (GR-MEM.md, "Assembly, ownership and edits"): a value that is
neither a message object nor a list of message objects is an error naming the
input and its position; nothing is assembled. Whether each message is a
*valid* message is the append's question (MEM-11, MEM-16), not this one's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from flowdrop_core._errors import FlowdropError

__all__ = ["UNWIRED", "AssemblyError", "assemble_messages"]


class _Unwired:
    """The value of an input port that nothing is connected to."""

    _instance: _Unwired | None = None

    def __new__(cls) -> _Unwired:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNWIRED"


#: An input that is declared but not wired: it contributes nothing (MEM-4).
UNWIRED: Final = _Unwired()


class AssemblyError(FlowdropError, ValueError):
    """An input holds something that is neither a message nor a list of messages (MEM-4).

    ``port`` is the input's name and ``position`` its 0-based place in the
    declared order (``index`` the list item, when one item is the problem).
    """

    def __init__(self, port: str, position: int, what: str, index: int | None = None) -> None:
        self.port = port
        self.position = position
        self.index = index
        where = f"input {port!r} (position {position})"
        if index is not None:
            where += f", item [{index}]"
        super().__init__(f"MEM-4: {where}: {what}; nothing was assembled")


def _kind(value: Any) -> str:
    """The JSON-ish kind of a value, for an error message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__}"


def assemble_messages(
    inputs: Mapping[str, Any] | Iterable[tuple[str, Any]],
) -> list[dict[str, Any]]:
    """The messages of ``inputs`` in declared order, flattened (MEM-4).

    ``inputs`` is the ports in their declared order: a mapping (insertion
    order is the declared order) or ``(name, value)`` pairs. A value is a
    message object (a dict), a list of them, ``None`` (no value) or
    :data:`UNWIRED`; the last two contribute nothing. Anything else raises
    :class:`AssemblyError` naming the input; nothing is returned then.
    """
    pairs = inputs.items() if isinstance(inputs, Mapping) else inputs
    out: list[dict[str, Any]] = []
    for position, (port, value) in enumerate(pairs):
        if value is None or value is UNWIRED:
            continue
        if isinstance(value, dict):
            out.append(value)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if not isinstance(item, dict):
                    raise AssemblyError(
                        str(port), position, f"{_kind(item)} is not a message object", index
                    )
            out.extend(value)
        else:
            raise AssemblyError(
                str(port),
                position,
                f"{_kind(value)} is neither a message object nor a list of message objects",
            )
    return out
