"""Decisions per step: what kinds of decision a step holds, counted and indexed.

The inspector's navigator is built on this: the summary counts every kind,
the timeline filters by one, previous / next jump between steps of one.
Every kind is read off what the library already records for a step (its
events, its refusal and its MEM-14 flag); nothing is re-derived here.

:class:`DecisionIndex` keeps, per kind, the sorted step numbers holding it.
It is updated with only the steps added since its last update, so a
playground that grows by one append costs O(that append's events), and a
jump is a binary search.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from flowdrop_core.events import EFFECTS
from flowdrop_core.replay import StepRecord

__all__ = [
    "KIND_LABELS",
    "KIND_RULES",
    "Decision",
    "DecisionCount",
    "DecisionIndex",
    "decision_cells",
    "step_decisions",
]


class Decision(StrEnum):
    """A kind of decision a step can hold (one per event kind, plus the MEM-14 flags)."""

    APPENDED = "appended"
    DUPLICATE_RESULT = "duplicate_result"
    DUPLICATE_TURN = "duplicate_turn"
    PLACEHOLDER_INSERTED = "placeholder_inserted"
    PLACEHOLDER_REPLACED = "placeholder_replaced"
    EVICTED = "evicted"
    REFUSED = "refused"
    PURE_READ = "pure_read"
    HIDDEN_APPEND = "hidden_append"
    GROWTH_WITHOUT_APPEND = "growth_without_append"
    IDLESS_RESULT = "idless_result"
    UNSERIALIZED = "unserialized"


#: How each kind reads in the UI (sentence case, no markup).
KIND_LABELS: dict[Decision, str] = {
    Decision.APPENDED: "appended",
    Decision.DUPLICATE_RESULT: "duplicate result",
    Decision.DUPLICATE_TURN: "duplicate turn",
    Decision.PLACEHOLDER_INSERTED: "placeholder inserted",
    Decision.PLACEHOLDER_REPLACED: "placeholder replaced",
    Decision.EVICTED: "evicted",
    Decision.REFUSED: "refused",
    Decision.PURE_READ: "pure read",
    Decision.HIDDEN_APPEND: "hidden append (MEM-14)",
    Decision.GROWTH_WITHOUT_APPEND: "growth without append (MEM-14)",
    Decision.IDLESS_RESULT: "result without id",
    Decision.UNSERIALIZED: "unserialized",
}

#: The rule each kind is about (an event's own rule wins in a step's cells): an
#: event kind's is its row of :data:`~flowdrop_core.events.EFFECTS`.
KIND_RULES: dict[Decision, str] = {
    kind: EFFECTS[kind].rule if kind in EFFECTS else "MEM-14"  # the two MEM-14 flags
    for kind in Decision
}


class _OfEvent(dict[str, Decision]):
    """Event kind -> :class:`Decision`; a kind with no Decision (and label) fails loudly."""

    def __missing__(self, kind: str) -> Decision:
        try:
            found = Decision(str(kind))
        except ValueError:
            raise KeyError(
                f"decision kind {str(kind)!r} has no Decision and label in "
                "flowdrop_core/inspect/decisions.py (CONTRIBUTING.md: a new decision kind)"
            ) from None
        self[kind] = found
        return found


_OF_EVENT: dict[str, Decision] = _OfEvent()
_OF_FLAG = {
    "hidden append": Decision.HIDDEN_APPEND,
    "growth without append": Decision.GROWTH_WITHOUT_APPEND,
}


def decision_tally(record: StepRecord) -> dict[Decision, int]:
    """:func:`step_decisions` as a plain dict (cheap to build and to compare, for compare)."""
    out: dict[Decision, int] = {}
    for ev in record.events:
        kind = _OF_EVENT[ev.kind]
        out[kind] = out.get(kind, 0) + 1
    if record.refused and not out.get(Decision.REFUSED):
        out[Decision.REFUSED] = 1  # a refusal is reported even if no event says so
    flag = _OF_FLAG.get(record.mem14_flag or "")
    if flag is not None:
        out[flag] = 1
    return out


def step_decisions(record: StepRecord) -> Counter[Decision]:
    """How many decisions of each kind ``record`` holds (flags and refusal count once)."""
    return Counter(decision_tally(record))


def decision_cells(record: StepRecord) -> dict[str, str]:
    """The step's decisions as three table cells: kinds (with counts), rules, full reasons.

    ``reasons`` holds every event's reason in order, one per line, plus the
    refusal reason and the MEM-14 flag, so nothing a step decided is left out
    of its row.
    """
    tally = step_decisions(record)
    kinds = [
        f"{KIND_LABELS[kind]} ({n})" if n > 1 else KIND_LABELS[kind]
        for kind in Decision
        if (n := tally.get(kind, 0))
    ]
    rules: list[str] = []
    for ev in record.events:
        if ev.rule not in rules:
            rules.append(ev.rule)
    for kind in Decision:
        evented = any(_OF_EVENT[ev.kind] is kind for ev in record.events)
        if tally.get(kind) and not evented and KIND_RULES[kind] not in rules:
            rules.append(KIND_RULES[kind])
    reasons = [ev.reason for ev in record.events]
    if record.refused and record.refusal_reason:
        reasons.append(f"MEM-7: refused because {record.refusal_reason}.")
    if record.mem14_flag:
        reasons.append(
            f"MEM-14: {record.mem14_flag}: the count changed by {record.count_delta:+d} while "
            f"{record.appended} incoming message(s) became new entries."
        )
    return {
        "decisions": ", ".join(kinds) or "nothing",
        "rules": ", ".join(rules),
        "reasons": "\n".join(reasons),
    }


@dataclass(frozen=True)
class DecisionCount:
    """How many steps hold a kind, and how many decisions of it there are in all."""

    kind: Decision
    steps: int
    decisions: int

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


class DecisionIndex:
    """Per kind, the sorted numbers of the steps holding it; kept up to date incrementally.

    Call :meth:`update` with a timeline's steps after each change: only the
    steps added since the last call are read. If the steps were cut back
    (undo) or replaced, the index is rebuilt.
    """

    def __init__(self, steps: Sequence[StepRecord] = ()) -> None:
        self._steps: dict[Decision, list[int]] = {kind: [] for kind in Decision}
        self._decisions: Counter[Decision] = Counter()
        self._seen: list[StepRecord] = []
        self.update(steps)

    def __len__(self) -> int:
        return len(self._seen)

    def update(self, steps: Sequence[StepRecord]) -> DecisionIndex:
        """Index the steps added since the last update (rebuild if earlier ones changed)."""
        n = len(self._seen)
        if len(steps) < n or (n and steps[n - 1] is not self._seen[-1]):
            self.__init__()  # type: ignore[misc]
            n = 0
        for record in steps[n:]:
            for kind, count in step_decisions(record).items():
                self._steps[kind].append(record.step)
                self._decisions[kind] += count
            self._seen.append(record)
        return self

    def counts(self) -> list[DecisionCount]:
        """Every kind, in a fixed order, with its step and decision counts (zeros included)."""
        return [
            DecisionCount(kind, len(self._steps[kind]), self._decisions[kind]) for kind in Decision
        ]

    def steps_with(self, kind: Decision | str | None) -> list[int]:
        """The step numbers holding ``kind`` (every step for ``None``)."""
        if kind is None:
            return [record.step for record in self._seen]
        return list(self._steps[Decision(kind)])

    def steps_with_any(self, kinds: Iterable[Decision | str]) -> list[int]:
        """The step numbers holding at least one of ``kinds``, in order."""
        merged: set[int] = set()
        for kind in kinds:
            merged.update(self._steps[Decision(kind)])
        return sorted(merged)

    def next_step(self, kind: Decision | str, after: int) -> int | None:
        """The first step after ``after`` holding ``kind``, or ``None``."""
        found = self._steps[Decision(kind)]
        k = bisect_right(found, after)
        return found[k] if k < len(found) else None

    def previous_step(self, kind: Decision | str, before: int) -> int | None:
        """The last step before ``before`` holding ``kind``, or ``None``."""
        found = self._steps[Decision(kind)]
        k = bisect_left(found, before)
        return found[k - 1] if k > 0 else None

    def position(self, kind: Decision | str | None, step: int) -> tuple[int, int] | None:
        """``(k, n)``: ``step`` is the k-th (1-based) of the n steps holding ``kind``."""
        found = self.steps_with(kind) if kind is None else self._steps[Decision(kind)]
        k = bisect_left(found, step)
        if k < len(found) and found[k] == step:
            return k + 1, len(found)
        return None
