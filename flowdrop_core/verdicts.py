"""The specification's verdict words for one append: appended, dropped, replaced, healed, refused.

MEM-14's examples name each outcome with one word (``verdict="appended"``,
``verdict="dropped"``) and GR-MEM's examples say "is dropped", "replaces it
in place", "inserts the placeholder", "refused". :func:`step_verdict` gives a
step that word from its report and its events, so the spec-examples page, the
guided walk and a scenario's ``expect`` speak the specification's language.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from flowdrop_core.events import EFFECTS

__all__ = ["VERDICTS", "Verdict", "step_verdict"]

Verdict = Literal["refused", "healed", "appended", "replaced", "dropped", "pure read", "unchanged"]

#: Every verdict word with what it means, in the order they are decided.
VERDICTS: dict[str, str] = {
    "refused": "the identity scope refused: nothing read or written, count 0, appended 0 "
    "(MEM-7, MEM-14 point 4)",
    "healed": "a user turn landed and unanswered calls got placeholders first: the count "
    "grows by more than appended (MEM-3)",
    "appended": "at least one incoming message became a new entry (MEM-14)",
    "replaced": "a real result replaced its placeholder in place: no new entry, appended 0 "
    "(MEM-10, MEM-14 point 3)",
    "dropped": "every incoming message was a duplicate: appended 0 (MEM-1, MEM-2, MEM-14 point 3)",
    "pure read": "an empty user turn: nothing appended, nothing healed (MEM-16)",
    "unchanged": "nothing came in and nothing changed",
}


def step_verdict(refused: bool, appended: int, kinds: Iterable[str]) -> Verdict:
    """The verdict word of one append, from its refusal, its ``appended`` and its event kinds.

    Each kind gives the word its row of :data:`~flowdrop_core.events.EFFECTS`
    names, and the first word of :data:`VERDICTS` given wins. "healed" and
    "appended" need ``appended > 0``: a step that both appends and heals is
    "healed" (the spec's MEM-3 example: the placeholder is inserted and the
    user turn appended); a replacement with nothing appended is "replaced";
    duplicates with nothing appended are "dropped". A kind with no row (a
    string the library never wrote) gives no word.
    """
    if refused:
        return "refused"
    table = EFFECTS
    words = {table[k].verdict for k in {str(k) for k in kinds} if k in table}
    if appended > 0:
        words.add("appended")
    else:
        words -= _NEED_APPENDED
    words.discard("refused")  # only the refusal itself says refused
    words.discard(None)
    if not words <= _KNOWN:  # a row giving a word this module does not order: say so
        raise ValueError(f"verdict words {sorted(map(str, words - _KNOWN))} are not in VERDICTS")
    return next((word for word in _ORDER if word in words), "unchanged")


#: The words that say something was appended (see :func:`step_verdict`).
_NEED_APPENDED = {"healed", "appended"}
#: The verdict words in the order they are decided.
_ORDER: tuple[Verdict, ...] = tuple(VERDICTS)  # type: ignore[arg-type]
_KNOWN: set[str | None] = set(VERDICTS)


def _check() -> None:
    """Every verdict word of the table is one of :data:`VERDICTS` (checked at import)."""
    unknown = {e.verdict for e in EFFECTS.values()} - set(VERDICTS) - {None}
    if unknown:  # pragma: no cover - a row with a word this module does not know
        raise ValueError(f"EFFECTS gives verdict words {sorted(map(str, unknown))} not in VERDICTS")


_check()
