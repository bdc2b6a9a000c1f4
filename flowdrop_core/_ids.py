"""Identifier rules shared by scopes (MEM-6, MEM-13) and tool call ids (MEM-11).

One reader decides what counts as an identifier anywhere in the library, so a
session id, a user id and a tool call id can never disagree about what "no
id" means, and two spellings of one identity can never become two identities.

The rule (GR-MEM's usable-id decision, applied to every spelling alike; see
the README's Decisions):

1. Text is put in Unicode NFKC form, so compatibility spellings (fullwidth
   ``"\\uff17"``, a no-break space) are the characters they stand for.
2. Whitespace and invisible characters (controls, format characters such as
   ``U+200B`` and ``U+FEFF``, separators, private-use and unassigned code
   points, and letters that render blank such as ``U+3164``) are trimmed
   from both ends. Nothing left, or only combining marks: not an id, with
   the reason. A lone surrogate anywhere is not text: not an id.
3. An invisible character *inside* the id makes it unusable: ``"ad\\u200bmin"``
   would otherwise be a second identity that looks exactly like ``"admin"``.
4. Numbers follow one rule: a positive integer is an id, written as its
   decimal digits (``7`` and ``7.0`` are ``"7"``); zero, negative numbers,
   fractions, non-finite numbers and booleans are not. Text that spells a
   number this rule refuses (``"00"``, ``"0.0"``, ``"-1"``, ``"7.5"``, the
   fullwidth ``"\\uff10"``) is refused like that number. Any other text is compared
   as the trimmed text itself, as GR-MEM says: ``"07"``, ``"+7"`` and
   ``"7.0"`` are three ids, none of them ``"7"``. Reading them as one number
   would merge identities (two users, or two provider call ids such as
   ``"01"`` and ``"1"``) that the runtime keeps apart; refusing the spellings
   of "no one" is safe, merging is not.
5. Any other non-empty text is the id; other values (``None``, lists,
   objects) are not ids.

:func:`read_id` returns the id or the reason it is not one; :func:`usable_id`
is the same rule returning only the id (it runs on the engine's hot path, so
plain ASCII ids take a short path).
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal
from typing import Any, NamedTuple

__all__ = ["NO_ID_VALUES", "IdReading", "id_problem", "read_id", "shown_value", "usable_id"]

#: Strings that denote "no identity" once trimmed (GR-MEM decision: "0" is no id).
#: Every other spelling of zero ("00", "0.0", fullwidth "\uff10") is refused by the number rule.
NO_ID_VALUES = frozenset({"", "0"})

#: Unicode categories that never show as a visible character: controls, format
#: characters, surrogates, private use, unassigned, and space/line/paragraph separators.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})

#: Letters and marks that render as nothing (Hangul fillers, Braille blank,
#: combining grapheme joiner, Khmer inherent vowels, variation selectors).
_BLANK_CHARACTERS = frozenset(
    "\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180b\u180c\u180d\u180f"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)

#: A decimal number spelling: optional sign, digits (any script), optional fraction, exponent.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

#: Above this many digits a number spelling is not an id (Python's own int/str limit).
_MAX_DIGITS = 4300

#: Positive integers below this take the short path (str() of them never hits the digit limit).
_SHORT_INT_LIMIT = 10**100

#: ASCII characters a short-path id may start with: anything that cannot begin a number.
_NUMBER_START = frozenset("0123456789+-.")


class IdReading(NamedTuple):
    """An identifier as read: ``id`` (``None`` when not usable) and why it is not usable."""

    id: str | None
    problem: str | None = None


def _invisible(ch: str) -> bool:
    return ch in _BLANK_CHARACTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def _codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _read_number(value: int | float | Decimal, shown: str) -> IdReading:
    """The number rule: a positive integer is an id in canonical decimal; nothing else is."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return IdReading(None, f"{shown} is not a finite number")
        if not value.is_integer():
            return IdReading(None, f"{shown} is not a whole number")
        value = int(value)
    elif isinstance(value, Decimal):  # a text spelling: _NUMBER only matches finite ones
        if value != value.to_integral_value():
            return IdReading(None, f"{shown} is not a whole number")
        if value.adjusted() >= _MAX_DIGITS:
            return IdReading(None, f"{shown} has more than {_MAX_DIGITS} digits")
        value = int(value)
    if value < 0:
        return IdReading(None, f"{shown} is negative")
    if value == 0:
        return IdReading(None, f"{shown} is zero, which denotes no identity")
    try:
        return IdReading(str(value))
    except ValueError:  # more digits than Python converts to text
        return IdReading(None, f"{shown} has more than {_MAX_DIGITS} digits")


def _read_text(value: str) -> IdReading:
    """Steps 1-5 of the module's rule for one string."""
    if value.isascii():
        text = value
    else:
        for ch in value:
            if "\ud800" <= ch <= "\udfff":
                return IdReading(
                    None, f"it holds the lone surrogate {_codepoint(ch)}, which is not text"
                )
        text = unicodedata.normalize("NFKC", value)
    start, end = 0, len(text)
    while start < end and (text[start].isspace() or _invisible(text[start])):
        start += 1
    while end > start and (text[end - 1].isspace() or _invisible(text[end - 1])):
        end -= 1
    if start == end:
        if not value:
            return IdReading(None, "it is empty")
        if all(ch.isspace() for ch in text):
            return IdReading(None, "it is only whitespace")
        hidden = sorted({_codepoint(ch) for ch in text if ch != " "})
        return IdReading(None, f"it is made only of invisible characters ({', '.join(hidden[:5])})")
    text = text[start:end]
    if all(unicodedata.category(ch)[0] == "M" for ch in text):
        codes = ", ".join(sorted({_codepoint(ch) for ch in text})[:5])
        return IdReading(None, f"it is made only of combining marks ({codes}), which show nothing")
    for index, ch in enumerate(text):
        if ch != " " and (ch < " " or ch > "~") and _invisible(ch):
            return IdReading(
                None,
                f"it holds the invisible character {_codepoint(ch)} at position {index}, "
                "so it would look like another id",
            )
    if _NUMBER.fullmatch(text):
        if sum(ch.isdigit() for ch in text) > _MAX_DIGITS:
            return IdReading(None, f"it spells a number with more than {_MAX_DIGITS} digits")
        refused = _read_number(Decimal(text), "it spells a number that").problem
        if refused is not None:  # the pattern only matches finite decimal spellings
            return IdReading(None, refused)
    return IdReading(text)


def read_id(value: Any) -> IdReading:
    """Read ``value`` as an identifier: the canonical id, or ``None`` and the reason.

    See the module docstring for the rule (MEM-6, MEM-11, MEM-13). The
    reason reads after the value: callers write
    ``f"{value!r} is not a usable id: {reading.problem}"``, e.g. ``'\\u200b' is
    not a usable id: it is made only of invisible characters (U+200B)``.
    """
    if isinstance(value, str):
        if value.isascii() and value.isprintable():  # the common id: nothing to normalize
            text = value.strip(" ")
            if text and text[0] not in _NUMBER_START:
                return IdReading(text)
        return _read_text(value)
    if isinstance(value, bool):
        return IdReading(None, "a boolean is not an id")
    if isinstance(value, int | float):
        return _read_number(value, "it")
    if value is None:
        return IdReading(None, "it is null")
    return IdReading(None, f"{_kind(value)} is not an id")


def _kind(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a value of type {type(value).__name__}"


def id_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable identifier, or ``None`` when it is one."""
    return read_id(value).problem


def usable_id(value: Any) -> str | None:
    """Return ``value`` as its canonical id, or ``None`` when it is not usable.

    GR-MEM decision (MEM-6, MEM-11), the module's rule: ``None``, blanks,
    invisible-only text, any spelling of zero or of a negative number,
    fractional numbers, booleans and non-scalar values are not usable;
    ``7``, ``7.0``, ``" 7 "`` and ``"\\uff17"`` (fullwidth 7) are the id
    ``"7"``, while ``"07"`` and ``"7.0"`` are ids of their own.
    """
    if type(value) is str:  # the common case first: the engine reads every id here
        if value.isascii() and value.isprintable():
            # Short path for the common ASCII id: no normalization, no invisible
            # characters other than spaces; only a number spelling needs more.
            text = value.strip(" ")
            if text and text[0] not in _NUMBER_START:
                return text
            if text.isdigit():  # ASCII digits: kept as written; zero or too long is no id
                return text if text.strip("0") and len(text) <= _MAX_DIGITS else None
    elif value is None:
        return None
    elif type(value) is int and 0 < value < _SHORT_INT_LIMIT:
        return str(value)
    return read_id(value).id


def shown_value(value: Any, limit: int = 40) -> str:
    """``repr(value)`` for a message, clipped to ``limit`` characters.

    Invisible characters show as escapes (``'\\u200b'``), which is the point
    of quoting a refused id; a huge value (an int past Python's digit limit,
    a long string) never makes the message itself fail or flood.
    """
    try:
        text = repr(value)
    except ValueError:  # an int with more digits than Python converts to text
        return f"<a number of about {int(value.bit_length() * 0.30103)} digits>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
