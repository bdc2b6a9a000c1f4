"""The navigator's timeline rows: one compact row per step, rule and reason included.

Eleven columns that fit a 1280 px window next to the sidebar: the step, what
came in (a readable label), the MEM-14 report with the parts of the count's
change (appended + placeholders inserted - evicted), the step's decisions, the
rules they cite and every reason in full (the page clips long cells with a
note of what is left out, and shows the selected step's reasons whole). Rows are built for the
steps shown only, so a page of 25 rows costs 25 rows whatever the
timeline's length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flowdrop_core.events import tally_parts
from flowdrop_core.inspect.decisions import decision_cells
from flowdrop_core.inspect.labels import step_label
from flowdrop_core.replay import StepRecord, Timeline

__all__ = ["NAV_COLUMNS", "CountParts", "count_flag", "count_parts", "nav_row", "nav_rows"]

#: Column order of :func:`nav_row`.
NAV_COLUMNS = [
    "step",
    "incoming",
    "count",
    "change",
    "parts",
    "appended",
    "appended_any",
    "decisions",
    "rules",
    "reason",
    "origin",
]


@dataclass(frozen=True)
class CountParts:
    """What a step's change in count is made of (MEM-14): appended + inserted - evicted.

    ``replaced`` and ``dropped`` change nothing in the count; they are here
    because they are why an incoming message did not add an entry.
    """

    appended: int
    inserted: int
    evicted: int
    replaced: int
    dropped: int

    @property
    def delta(self) -> int:
        """The change in count these parts make (always the step's ``count_delta``)."""
        return self.appended + self.inserted - self.evicted

    def text(self) -> str:
        """``1 + 0 - 1``: appended + placeholders inserted - evicted."""
        return f"{self.appended} + {self.inserted} - {self.evicted}"


def count_parts(record: StepRecord) -> CountParts:
    """The parts of the step's count change, read off its events in one pass (``EFFECTS``)."""
    parts = tally_parts(record.events)
    return CountParts(parts.appended, parts.inserted, parts.evicted, parts.replaced, parts.dropped)


def count_flag(record: StepRecord) -> str | None:
    """Why this step's row deserves the MEM-14 highlight, or ``None``.

    MEM-14's point is that the count's change does not say what landed. In a
    full window every plain append reads "count +0" (one in, one evicted): the
    parts column already explains that row (``1 + 0 - 1``), and lighting it
    would light every row of a long replay. What does stand out is a row
    where the count says something the incoming messages did not do: a heal
    grows the count beyond what was appended (placeholders are not
    incoming), and a replaced or dropped result is an incoming message that
    adds nothing (its zero looks like a lost turn).
    """
    parts = count_parts(record)
    if parts.inserted:
        return (
            f"heal: {parts.inserted} placeholder(s) grew the count beyond the "
            f"{parts.appended} appended (MEM-3)"
        )
    if parts.replaced:
        return f"{parts.replaced} result(s) replaced a placeholder in place: counts 0 (MEM-10)"
    if parts.dropped:
        return f"{parts.dropped} duplicate(s) dropped: count 0 for them (MEM-1, MEM-2)"
    return None


def nav_row(record: StepRecord) -> dict[str, Any]:
    """One step as a row: report, decisions, rules, and the reasons joined in full."""
    cells = decision_cells(record)
    return {
        "step": record.step,
        "incoming": step_label(record.incoming, width=None),  # the page clips, with a note
        "count": record.count,
        "change": record.count_delta,
        "parts": count_parts(record).text(),
        "appended": record.appended,
        "appended_any": record.appended_any,
        "decisions": cells["decisions"],
        "rules": cells["rules"],
        "reason": cells["reasons"].replace("\n", " · "),
        "origin": ", ".join(record.origins) or record.label,
    }


def nav_rows(timeline: Timeline, steps: Iterable[int]) -> list[dict[str, Any]]:
    """Rows for the given step numbers only (1-based)."""
    return [nav_row(timeline.steps[s - 1]) for s in steps]
