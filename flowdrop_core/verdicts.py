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

from flowdrop_core.events import EventKind

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

    A step that both appends and heals is "healed" (the spec's MEM-3 example:
    the placeholder is inserted and the user turn appended); a replacement
    with nothing appended is "replaced"; duplicates with nothing appended are
    "dropped".
    """
    if refused:
        return "refused"
    seen = {str(k) for k in kinds}
    if appended > 0:
        return "healed" if str(EventKind.PLACEHOLDER_INSERTED) in seen else "appended"
    if str(EventKind.PLACEHOLDER_REPLACED) in seen:
        return "replaced"
    if seen & {str(EventKind.DUPLICATE_RESULT), str(EventKind.DUPLICATE_TURN)}:
        return "dropped"
    if str(EventKind.PURE_READ) in seen:
        return "pure read"
    return "unchanged"
