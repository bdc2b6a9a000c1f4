"""Positive detection: what makes a document one format's own.

Every importer module declares ``claims(document) -> Claim | Miss`` next to
its reader: the keys and shapes a document must have to be that format
(a request body with ``messages`` whose items carry ``role`` and
``content``, Gemini ``contents`` whose parts carry ``text`` or
``functionCall``, ...). Only formats that claim a document are read; a
document no format claims is an error naming the nearest formats and what
each found missing (:class:`Miss`). A claim is about shape, not validity:
the reader still reports the first problem it meets, located.

A :class:`Miss` has a ``score``: how much of the signature matched before it
failed (the number of items that matched, roughly). The error lists the
formats with the highest scores as the nearest ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flowdrop_core.scenario import _json_type

__all__ = ["Claim", "Line", "Miss", "Verdict", "each", "key_miss", "lines_of"]


@dataclass(frozen=True, slots=True)
class Claim:
    """The document has the format's signature; ``shape`` names which one."""

    shape: str


@dataclass(frozen=True, slots=True)
class Miss:
    """The document lacks the format's signature: where, what is missing, how near it came."""

    where: str
    what: str
    score: int = 0

    def __str__(self) -> str:
        return f"{self.where}: {self.what}" if self.where else self.what


Verdict = Claim | Miss
#: A check of one item: ``None`` when it matches, else the :class:`Miss` naming what it lacks.
Check = Callable[[Any, str], Miss | None]
#: A non-blank line of a JSON Lines file: its number and its value (a ``LineProblem`` if not JSON).
Line = tuple[int, Any]


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line that is not JSON, as line formats' ``claims`` see it."""

    what: str


def each(
    items: Any,
    prefix: str,
    check: Check,
    shape: str,
    *,
    score: int = 1,
    plain: Callable[[Any], bool] | None = None,
) -> Verdict:
    """Every item of the list ``items`` passes ``check``; a miss is scored by how many did.

    An empty list is a miss: no item shows the signature. ``plain``, when
    given, is a quick test that is true only of items ``check`` passes (the
    commonest shape): when every item is plain, the claim is made without
    locating each item (a 100,000-message file); otherwise ``check`` runs on
    every item, so a miss is the same, located.
    """
    if not isinstance(items, list):
        return Miss(prefix, f"expected a list, got {_json_type(items)}", score - 1)
    if not items:
        return Miss(prefix, "an empty list", score)
    if plain is not None and all(map(plain, items)):
        return Claim(shape)
    for k, item in enumerate(items):
        missed = check(item, f"{prefix}[{k}]")
        if missed is not None:
            return Miss(missed.where, missed.what, score + k + missed.score)
    return Claim(shape)


def key_miss(item: Any, where: str, keys: Iterable[str], what: str = "object") -> Miss | None:
    """``None`` when ``item`` is an object holding every key of ``keys``."""
    if not isinstance(item, dict):
        return Miss(where, f"expected {what}, got {_json_type(item)}")
    for key in keys:
        if key not in item:
            return Miss(where, f"missing {key!r}")
    return None


def lines_of(text: str) -> list[Line]:
    """The non-blank lines of ``text`` parsed as JSON (split on ``\\n`` only, as readers do).

    All lines are decoded at once when none can be a problem
    (:func:`~flowdrop_core.scenario.parse_json_lines`: the same values, at a
    fraction of the cost of a long file's 100,000 checked parses); otherwise
    line by line, each problem kept as the line's :class:`LineProblem`.
    """
    from flowdrop_core.scenario import JSONProblem, parse_json, parse_json_lines

    numbered = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    values = parse_json_lines([line for _, line in numbered])
    if values is not None:
        return list(zip([n for n, _ in numbered], values, strict=True))
    lines: list[Line] = []
    for number, line in numbered:
        try:
            lines.append((number, parse_json(line, column_only=True)))
        except JSONProblem as exc:
            lines.append((number, LineProblem(str(exc))))
    return lines
