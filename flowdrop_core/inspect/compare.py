"""Compare, don't rewrite: the same steps under other settings, step by step.

Changing the window, the scope, the identity or the re-fire mode does not
change what happened; it asks what *would* have happened. :func:`compare`
replays the same scenario under the other settings and lines the two
timelines up step by step (a re-fire mode adds steps, so steps are matched
by which scenario step and which pass they come from, not by number). A step
whose report or decisions differ is listed with the fields that differ.
:func:`call_fates` answers the question a window raises: after this step,
would the other settings still hold this call?
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from flowdrop_core.engine import as_batch
from flowdrop_core.inspect.decisions import decision_cells, decision_tally
from flowdrop_core.messages import read_call_id
from flowdrop_core.replay import StepRecord, Timeline, replay
from flowdrop_core.scenario import Scenario

__all__ = [
    "COMPARED_FIELDS",
    "CallFate",
    "Comparison",
    "Settings",
    "StepDiff",
    "call_fates",
    "compare",
    "compare_timelines",
    "plan_keys",
    "scenario_appends",
    "with_settings",
]

Refire = Literal["none", "steps", "results"]
#: What is compared per step: the MEM-14 report, the scope resolution and the decisions.
COMPARED_FIELDS = ("count", "appended", "appended_any", "refused", "resolved_scope_id", "decisions")

_UNSET: Any = object()


@dataclass(frozen=True)
class Settings:
    """The settings a timeline runs under: what the compare view lets a person change."""

    max_messages: int = 0
    scope: str = "session"
    key: str = "chat_history"
    context: dict[str, Any] | None = None
    refire: Refire = "none"

    @classmethod
    def of(cls, scenario: Scenario, refire: Refire = "none") -> Settings:
        cfg = scenario.config
        return cls(cfg.max_messages, str(cfg.scope), cfg.key, scenario.context, refire)

    def changed(self, other: Settings) -> list[str]:
        """The names of the settings that differ, in a fixed order."""
        names = ("max_messages", "scope", "key", "context", "refire")
        return [n for n in names if getattr(self, n) != getattr(other, n)]

    def describe(self) -> str:
        """One line: ``window 50 · scope user · context {...} · re-fire results``."""
        window = f"window {self.max_messages}" if self.max_messages else "no window"
        ctx = "no context" if not self.context else f"context {self.context}"
        refire = "" if self.refire == "none" else f" · re-fire {self.refire}"
        return f"{window} · scope {self.scope} · key {self.key} · {ctx}{refire}"


def with_settings(scenario: Scenario, settings: Settings) -> Scenario:
    """``scenario`` with its config and context replaced by ``settings`` (steps unchanged)."""
    config = scenario.config.model_copy(
        update={"max_messages": settings.max_messages, "scope": settings.scope, "key": settings.key}
    )
    return scenario.model_copy(update={"config": config, "context": settings.context})


def plan_keys(appends: Sequence[Any], refire: Refire = "none") -> list[tuple[int, int]]:
    """Per step of a replay of ``appends`` (one per scenario step): (step number, pass).

    Pass 0 is the step itself, pass 1 its re-fire. This mirrors the plan of
    :func:`~flowdrop_core.replay.replay` (a test holds the two together), so
    two replays with different re-fire modes can be lined up. ``appends`` is
    ``[step.append for step in scenario.steps]`` or a recording's messages
    (or turns), without building a scenario.
    """
    keys: list[tuple[int, int]] = []
    for number, append in enumerate(appends, start=1):
        keys.append((number, 0))
        if refire == "results" and any(
            isinstance(m, dict) and m.get("role") == "tool" for m in as_batch(append)
        ):
            keys.append((number, 1))
    if refire == "steps":
        keys += [(number, 1) for number, _ in keys]
    return keys


def scenario_appends(scenario: Scenario) -> list[Any]:
    """The appends of a scenario's steps, for :func:`plan_keys`."""
    return [step.append for step in scenario.steps]


def _value(record: StepRecord, name: str) -> Any:
    if name == "decisions":
        return decision_tally(record)
    return getattr(record, name)


def _shown(record: StepRecord, name: str, value: Any) -> Any:
    return decision_cells(record)["decisions"] if name == "decisions" else value


@dataclass(frozen=True)
class StepDiff:
    """One step whose report differs under the other settings (or exists under one only).

    ``names`` are the differing fields; their shown values (:attr:`fields`) are made
    only when asked for, so comparing two 20,000-step timelines formats nothing but
    the page of differences on screen.
    """

    key: tuple[int, int]
    base_step: int | None
    other_step: int | None
    label: str
    names: tuple[str, ...] = ()
    base_record: StepRecord | None = field(default=None, repr=False, compare=False)
    other_record: StepRecord | None = field(default=None, repr=False, compare=False)

    @property
    def fields(self) -> dict[str, tuple[Any, Any]]:
        """Each differing field, shown both ways (made, other)."""
        mine, theirs = self.base_record, self.other_record
        if mine is None or theirs is None:
            return {}
        return {
            name: (
                _shown(mine, name, _value(mine, name)),
                _shown(theirs, name, _value(theirs, name)),
            )
            for name in self.names
        }

    def row(self) -> dict[str, Any]:
        """A flat table row: both steps, what differs, and each differing field both ways."""
        out: dict[str, Any] = {
            "step": self.base_step,
            "other step": self.other_step,
            "label": self.label,
            "differs in": ", ".join(self.names) or "only under one",
        }
        fields = self.fields
        for name in COMPARED_FIELDS:
            base, other = fields.get(name, (None, None))
            out[f"{name} (made)"] = "" if name not in fields else str(base)
            out[f"{name} (other)"] = "" if name not in fields else str(other)
        return out


@dataclass
class Comparison:
    """Two timelines of the same steps, lined up; only the differing steps are kept."""

    base: Settings
    other: Settings
    steps_base: int
    steps_other: int
    differences: list[StepDiff] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return self.base.changed(self.other)

    @property
    def differing_steps(self) -> list[int]:
        """Base step numbers whose report differs (steps only under the other settings excluded)."""
        return [d.base_step for d in self.differences if d.base_step is not None]

    def summary(self) -> str:
        n = len(self.differences)
        if not n:
            return (
                f"All {self.steps_base} step(s) report the same under both settings "
                f"({', '.join(self.changed) or 'nothing'} changed)."
            )
        first = self.differences[0]
        where = first.base_step if first.base_step is not None else f"other {first.other_step}"
        return (
            f"{n} of {max(self.steps_base, self.steps_other)} step(s) report differently "
            f"under the other settings; the first is step {where}."
        )


def compare_timelines(
    base: Timeline,
    other: Timeline,
    base_keys: Sequence[tuple[int, int]] | None = None,
    other_keys: Sequence[tuple[int, int]] | None = None,
    *,
    base_settings: Settings | None = None,
    other_settings: Settings | None = None,
) -> Comparison:
    """Line ``base`` and ``other`` up by key (default: step number) and keep what differs."""
    bkeys = list(base_keys) if base_keys is not None else [(r.step, 0) for r in base.steps]
    okeys = list(other_keys) if other_keys is not None else [(r.step, 0) for r in other.steps]
    other_at = dict(zip(okeys, other.steps, strict=True))
    seen: set[tuple[int, int]] = set()
    out = Comparison(
        base_settings or Settings.of(base.scenario),
        other_settings or Settings.of(other.scenario),
        len(base.steps),
        len(other.steps),
    )
    for key, record in zip(bkeys, base.steps, strict=True):
        seen.add(key)
        twin = other_at.get(key)
        if twin is None:
            out.differences.append(StepDiff(key, record.step, None, record.label))
            continue
        names = tuple(n for n in COMPARED_FIELDS if _value(record, n) != _value(twin, n))
        if names:
            out.differences.append(
                StepDiff(key, record.step, twin.step, record.label, names, record, twin)
            )
    for key, twin in zip(okeys, other.steps, strict=True):
        if key not in seen:
            out.differences.append(StepDiff(key, None, twin.step, twin.label))
    return out


def compare(
    scenario: Scenario,
    base: Settings,
    other: Settings,
    *,
    base_timeline: Timeline | None = None,
    other_timeline: Timeline | None = None,
    origins: list[list[str]] | None = None,
) -> tuple[Timeline, Comparison]:
    """Replay ``scenario`` under ``other`` (and ``base`` unless given) and compare them.

    Returns the other timeline with the comparison, so the page can show it
    next to the base one and make it current if the person picks it.
    """
    if base_timeline is None:
        base_timeline = replay(with_settings(scenario, base), refire=base.refire, origins=origins)
    if other_timeline is None:
        other_timeline = replay(
            with_settings(scenario, other), refire=other.refire, origins=origins
        )
    comparison = compare_timelines(
        base_timeline,
        other_timeline,
        plan_keys(scenario_appends(scenario), base.refire),
        plan_keys(scenario_appends(scenario), other.refire),
        base_settings=base,
        other_settings=other,
    )
    return other_timeline, comparison


@dataclass(frozen=True)
class CallFate:
    """Whether a tool call is in each buffer after a step: declared and answered."""

    call_id: str
    in_base: bool
    in_other: bool
    answered_base: bool
    answered_other: bool

    @property
    def verdict(self) -> str:
        """The call's fate in words that tell the two window fates apart.

        A call evicted with its result is gone cleanly ("evicted with its
        result"); a call evicted while its result stays leaves a result a
        provider rejects ("result left orphaned").
        """
        if self.in_base == self.in_other:
            return "kept under both" if self.in_base else "gone under both"
        if self.in_other:
            return "kept only under the other settings"
        if self.answered_other:
            return "result left orphaned under the other settings (its call evicted)"
        if self.answered_base:
            return "evicted with its result under the other settings"
        return "evicted under the other settings"


def _calls(entries: Iterable[Any]) -> tuple[list[str], set[str]]:
    declared: list[str] = []
    answered: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        meta = entry["metadata"] if isinstance(entry.get("metadata"), dict) else {}
        calls = entry.get("tool_calls") or meta.get("tool_calls") or []
        if isinstance(calls, list):
            for call in calls:
                cid = read_call_id(call) if isinstance(call, dict) else None
                if cid is not None and cid not in declared:
                    declared.append(cid)
        rid = entry.get("tool_call_id", meta.get("tool_call_id"))
        if rid is not None:
            found = read_call_id({"tool_call_id": rid})
            if found is not None:
                answered.add(found)
    return declared, answered


def call_fates(base_entries: Iterable[Any], other_entries: Iterable[Any]) -> list[CallFate]:
    """Every call declared in either buffer: is it (and its result) in each of them?

    "Would a window of 50 have kept this call?" is the row for that call id,
    with the buffers after the same step under the two settings.
    """
    b_declared, b_answered = _calls(base_entries)
    o_declared, o_answered = _calls(other_entries)
    order = b_declared + [c for c in o_declared if c not in b_declared]
    bset, oset = set(b_declared), set(o_declared)
    return [
        CallFate(cid, cid in bset, cid in oset, cid in b_answered, cid in o_answered)
        for cid in order
    ]
