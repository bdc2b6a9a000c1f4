"""The navigator's timeline rows: one compact row per step, rule and reason included.

Ten columns that fit a 1280 px window next to the sidebar: the step, what
came in (a readable label), the MEM-14 report, the step's decisions, the
rules they cite and every reason in full (the page clips long cells with a
note of what is left out, and shows the selected step's reasons whole). Rows are built for the
steps shown only, so a page of 25 rows costs 25 rows whatever the
timeline's length.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flowdrop_core.inspect.decisions import decision_cells
from flowdrop_core.inspect.labels import step_label
from flowdrop_core.replay import StepRecord, Timeline

__all__ = ["NAV_COLUMNS", "nav_row", "nav_rows"]

#: Column order of :func:`nav_row`.
NAV_COLUMNS = [
    "step",
    "incoming",
    "count",
    "change",
    "appended",
    "appended_any",
    "decisions",
    "rules",
    "reason",
    "origin",
]


def nav_row(record: StepRecord) -> dict[str, Any]:
    """One step as a row: report, decisions, rules, and the reasons joined in full."""
    cells = decision_cells(record)
    return {
        "step": record.step,
        "incoming": step_label(record.incoming, width=None),  # the page clips, with a note
        "count": record.count,
        "change": record.count_delta,
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
