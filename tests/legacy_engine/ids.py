"""Identifier rules shared by scopes (MEM-6, MEM-13) and tool call ids (MEM-11).

One predicate decides what counts as an identifier anywhere in the library, so
a session id, a user id and a tool call id can never disagree about what
"no id" means.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NO_ID_VALUES", "usable_id"]

#: Strings that denote "no identity" once trimmed (GR-MEM decision: "0" is no id).
NO_ID_VALUES = frozenset({"", "0"})


def usable_id(value: Any) -> str | None:
    """Return ``value`` as a trimmed string id, or ``None`` when it is not usable.

    GR-MEM decision (MEM-6, MEM-11): ``None``, ``""``, whitespace-only strings,
    ``0``, ``"0"``, booleans, negative numbers and non-scalar values are not
    usable; any other integer or non-blank string is. Ids compare as trimmed
    strings, so ``7`` and ``" 7 "`` are the same id ``"7"``.
    """
    if type(value) is str or isinstance(value, str):
        text = value.strip()
        return None if text in NO_ID_VALUES else text
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return str(value) if value > 0 else None
