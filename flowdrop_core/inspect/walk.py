"""The guided walk through MEM-14: one example per point of the rule, each checked as it runs.

MEM-14 has four normative points. The walk gives each one an example from
``sample_data/`` and adds the case the rule's narrative warns about (healing
grows the buffer with one append). Every walk step runs the example's first
append through a live timeline and compares the report with what the example
file expects, in the specification's words, so the Learn page and presenter
mode only draw :class:`WalkOutcome`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowdrop_core.replay import StepRecord, Timeline, new_timeline
from flowdrop_core.scenario import Scenario, load_scenario, step_context

__all__ = [
    "MEM14_POINTS",
    "WALK",
    "WalkCheck",
    "WalkOutcome",
    "WalkStep",
    "load_walk_scenario",
    "run_walk_step",
    "walk_summary",
]

#: MEM-14's four normative points, verbatim (FlowDrop Workflow Specification 1.0-draft,
#: CC BY 4.0), so each walk step can quote the sentence it demonstrates.
MEM14_POINTS: tuple[str, ...] = (
    "A conversation-buffer append reports how many of the incoming messages were added as "
    "new entries, and whether that number is greater than zero, alongside the resulting "
    "buffer count.",
    "The number counts appends and not the change in buffer size, because a windowed buffer "
    "can evict as many older messages as the call added.",
    "A deduplicated message and a placeholder replacement each count as zero, since neither "
    "adds an entry.",
    "An append under a refused identity scope reports zero, together with its empty buffer.",
)


@dataclass(frozen=True)
class WalkStep:
    """One stop of the walk: which point of MEM-14 it shows, on which example."""

    key: str
    title: str
    point: int  # 1-based, into MEM14_POINTS
    sample: str  # scenario file stem in sample_data/
    intro: str
    lesson: str

    @property
    def sentence(self) -> str:
        """The rule's own sentence this step demonstrates."""
        return MEM14_POINTS[self.point - 1]


WALK: tuple[WalkStep, ...] = (
    WalkStep(
        key="window",
        title="A full window: the count stays, one message landed",
        point=2,
        sample="mem-14-full-window",
        intro="A three-message window already holds three entries. A new user message arrives, "
        "so the window evicts the oldest entry to make room.",
        lesson="The count is 3 before and after, yet appended is 1: one of the three entries is "
        "the message that just arrived. Eviction never lowers appended.",
    ),
    WalkStep(
        key="dedup",
        title="A re-fired result: nothing new, appended 0",
        point=3,
        sample="mem-14-refired-result",
        intro="The buffer holds an assistant turn that called tool c1 and its result. The same "
        "result is delivered again under the id the buffer already answers.",
        lesson="The count does not move either, but for the opposite reason: the result was "
        "dropped as a duplicate (MEM-1), which counts zero.",
    ),
    WalkStep(
        key="replace",
        title="A placeholder replaced in place: appended 0",
        point=3,
        sample="mem-1-mem-10-placeholder-replaced",
        intro="An earlier heal left a placeholder for call c1. The real result arrives.",
        lesson="The real result takes the placeholder's position and the healed marking goes "
        "away (MEM-10). No entry was added, so appended is 0 although the slot changed.",
    ),
    WalkStep(
        key="refuse",
        title="A refused scope: 0, with its empty buffer",
        point=4,
        sample="mem-6-user-id-zero",
        intro="The user scope is asked to append for user_id 0, which denotes no user (MEM-6).",
        lesson="The identity scope refuses: storage is not touched, the report is count 0 and "
        "appended 0, and the buffer returned is empty. Refusing never falls back to the "
        "shared global bucket.",
    ),
    WalkStep(
        key="heal",
        title="A heal: the count grows by two, appended is 1",
        point=2,
        sample="mem-3-heal-on-user-turn",
        intro="An assistant turn called c1 and never got a result. A user turn arrives.",
        lesson="Before the user turn lands, c1 gets a placeholder right after its turn (MEM-3). "
        "The count grows by 2 but only the user turn was incoming: appended is 1. The change "
        "in size over-reports, just as eviction under-reports.",
    ),
)


@dataclass(frozen=True)
class WalkCheck:
    """One field of the walk step's report: what the example expects, what the buffer did."""

    field: str
    expected: Any
    actual: Any

    @property
    def ok(self) -> bool:
        """Whether the two agree (always true where the example does not say)."""
        return self.expected is None or self.expected == self.actual


@dataclass(frozen=True)
class WalkOutcome:
    """A walk step after its append: the buffers, the report and its checks."""

    step: WalkStep
    scenario: Scenario
    timeline: Timeline
    record: StepRecord

    @property
    def before(self) -> list[dict[str, Any]]:
        """The buffer before the append (the example's starting buffer)."""
        return self.timeline.buffer_after(0)

    @property
    def incoming(self) -> list[dict[str, Any]]:
        """The incoming message(s)."""
        return list(self.record.incoming)

    @property
    def after(self) -> list[dict[str, Any]]:
        """The buffer the append left (empty under a refusal: MEM-14 point 4)."""
        return [] if self.record.refused else self.timeline.buffer_after(self.record.step)

    def tagged(self) -> tuple[list[tuple[dict[str, Any], str]], list[tuple[dict[str, Any], str]]]:
        """Before and after with each entry tagged (kept, new, evicted, replaced, ...)."""
        before, after, _ = self.timeline.tagged(self.record.step)
        return before, ([] if self.record.refused else after)

    @property
    def checks(self) -> list[WalkCheck]:
        """Expected next to actual, in the specification's words: verdict first."""
        want = self.scenario.expect[0] if self.scenario.expect else None
        start = len(self.scenario.buffer)

        def exp(name: str) -> Any:
            return None if want is None else getattr(want, name)

        expected_delta = None if exp("count") is None else exp("count") - start
        if exp("refused"):
            expected_delta = None  # a refusal reads no buffer: its "before" is not the slot
        return [
            WalkCheck("verdict", exp("verdict"), self.record.verdict),
            WalkCheck("count", exp("count"), self.record.count),
            WalkCheck("count change", expected_delta, self.record.count_delta),
            WalkCheck("appended", exp("appended"), self.record.appended),
            WalkCheck("appended_any", exp("appended_any"), self.record.appended_any),
            WalkCheck("refused", exp("refused"), self.record.refused),
        ]

    @property
    def passed(self) -> bool:
        """Every field the example expects was met."""
        return all(c.ok for c in self.checks)


def load_walk_scenario(step: WalkStep, sample_dir: Path) -> Scenario:
    """The example file a walk step runs."""
    return load_scenario(sample_dir / f"{step.sample}.json")


def run_walk_step(step: WalkStep, sample_dir: Path, presses: int = 1) -> WalkOutcome | None:
    """Run a walk step's first append ``presses`` times (a re-fire after the first).

    With ``presses`` 0 nothing is appended and ``None`` is returned: the page
    shows the starting buffer and the button.
    """
    if presses <= 0:
        return None
    scenario = load_walk_scenario(step, sample_dir)
    timeline = new_timeline(scenario.config, scenario.context, scenario.buffer, name=scenario.name)
    first = scenario.steps[0]
    timeline.append_step(first.append, context=step_context(scenario, first), label=first.label)
    for _ in range(presses - 1):
        timeline.refire_last()
    return WalkOutcome(step, scenario, timeline, timeline.steps[-1])


def walk_summary(outcomes: Sequence[WalkOutcome]) -> list[dict[str, Any]]:
    """One row per walk step run so far: count change against appended, the MEM-14 contrast."""
    return [
        {
            "example": o.step.title,
            "MEM-14 point": o.step.point,
            "count change": o.record.count_delta,
            "appended": o.record.appended,
            "appended_any": o.record.appended_any,
            "verdict": o.record.verdict,
        }
        for o in outcomes
    ]
