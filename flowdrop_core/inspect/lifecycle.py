"""Tool-call lifecycle: one row per call id, from declaration to its end, in one pass.

A person debugging a conversation asks about a call, not a step: where was
``call_Rf4m`` declared, was it answered, re-sent, healed (MEM-3), replaced
(MEM-10), evicted by the window, or is its result left orphaned? The
timeline's events already say all of it; :func:`lifecycle` reads them once,
in order (O(events), never a pass per call or per step), and keeps per call
id the step (1-based) and buffer position (0-based) of each fate.

Two window fates are kept apart on purpose, because a provider treats them
differently:

* a call **loses its result** when its result (real or placeholder) leaves
  the window: nothing answers the call any more;
* a result is **left orphaned** when it is still in the window at the end of
  a step whose call has left it: a provider rejects it, and MEM-5's
  provider view has to drop it.

:func:`what_if` turns two lifecycles (the settings a timeline was made with,
and other settings) into the compare view's whole-timeline summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from flowdrop_core._ids import usable_id
from flowdrop_core.events import EFFECTS, Event, LifeStep
from flowdrop_core.messages import _call_ids, read_call_id
from flowdrop_core.replay import StepRecord, Timeline

__all__ = [
    "LIFE_COLUMNS",
    "STATUSES",
    "CallLife",
    "Lifecycle",
    "entry_call_ids",
    "entry_result_id",
    "lifecycle",
    "steps_lifecycle",
    "what_if",
]

Status = Literal[
    "answered",
    "healed",
    "replaced",
    "unanswered",
    "orphan result",
    "lost its result",
    "result orphaned",
    "evicted",
]
#: Every status a call can end in, in the order the filter lists them.
STATUSES: tuple[Status, ...] = (
    "answered",
    "healed",
    "replaced",
    "unanswered",
    "orphan result",
    "lost its result",
    "result orphaned",
    "evicted",
)


def _field(entry: Mapping[str, Any], name: str) -> Any:
    """A field at top level or under ``metadata`` (where the stored row keeps it)."""
    value = entry.get(name)
    if value is not None:
        return value
    meta = entry.get("metadata")
    return meta.get(name) if isinstance(meta, Mapping) else None


def entry_call_ids(entry: Any) -> list[str] | tuple[str, ...]:
    """The usable call ids an entry declares, in order, without repeats (MEM-11).

    Read with the engine's own reader (its fast path for plain-dict calls),
    so an id means here what it meant to the append.
    """
    if not isinstance(entry, Mapping):
        return ()
    calls = entry.get("tool_calls")
    if calls is None:
        meta = entry.get("metadata")
        calls = meta.get("tool_calls") if isinstance(meta, Mapping) else None
    if not calls or not isinstance(calls, list):
        return ()
    fast = _call_ids(calls)
    if fast is not None:
        return fast
    out: list[str] = []
    for call in calls:
        cid = read_call_id(call) if isinstance(call, Mapping) else None
        if cid is not None and cid not in out:
            out.append(cid)
    return out


def entry_result_id(entry: Any) -> str | None:
    """The call id a tool entry answers, or ``None`` (not a result, or no usable id)."""
    if not isinstance(entry, Mapping) or entry.get("role") != "tool":
        return None
    return usable_id(_field(entry, "tool_call_id"))


@dataclass
class CallLife:
    """Everything that happened to one call id, each fate as a step (1-based)."""

    call_id: str
    declared_step: int | None = None
    declared_position: int | None = None
    answered_step: int | None = None
    answered_position: int | None = None
    duplicate_result_steps: list[int] = field(default_factory=list)
    duplicate_turn_steps: list[int] = field(default_factory=list)
    placeholder_step: int | None = None
    placeholder_position: int | None = None
    replaced_step: int | None = None
    evicted_step: int | None = None
    result_evicted_step: int | None = None
    orphaned_step: int | None = None
    orphan_result_step: int | None = None
    orphaned_at_end: bool = False

    @property
    def status(self) -> Status:
        """The call's fate in one word group (the last that matters wins)."""
        if self.declared_step is None:
            return "orphan result"
        if self.orphaned_at_end:
            return "result orphaned"
        if self.result_evicted_step is not None:
            return "lost its result"
        if self.evicted_step is not None:
            return "evicted"
        if self.replaced_step is not None:
            return "replaced"
        if self.placeholder_step is not None:
            return "healed"
        if self.answered_step is None:
            return "unanswered"
        return "answered"

    @property
    def first_step(self) -> int:
        """The first step the call id shows up in (declared, or its orphan result)."""
        steps = [
            s
            for s in (self.declared_step, self.orphan_result_step, self.answered_step)
            if s is not None
        ]
        return min(steps) if steps else 0

    def row(self) -> dict[str, Any]:
        """A flat table row; steps are 1-based, buffer positions 0-based, empty when none."""

        return {
            "call id": self.call_id,
            "status": self.status,
            "declared at step": (self.declared_step),
            "declared at buffer position (0-based)": (self.declared_position),
            "answered at step": (self.answered_step),
            "duplicates dropped at steps": ", ".join(
                str(s) for s in sorted(self.duplicate_result_steps + self.duplicate_turn_steps)
            ),
            "placeholder inserted at step": (self.placeholder_step),
            "placeholder replaced at step": (self.replaced_step),
            "call evicted at step": (self.evicted_step),
            "result evicted at step": (self.result_evicted_step),
            "result orphaned at step": (self.orphaned_step),
        }


#: Column order of :meth:`CallLife.row`.
LIFE_COLUMNS = list(CallLife("").row())


@dataclass
class Lifecycle:
    """Every call id of a timeline, in the order each first shows up."""

    calls: dict[str, CallLife]
    steps: int

    def __iter__(self) -> Iterator[CallLife]:
        return iter(self.calls.values())

    def __len__(self) -> int:
        return len(self.calls)

    def get(self, call_id: str) -> CallLife | None:
        return self.calls.get(call_id)

    def rows(
        self, status: str | None = None, text: str = "", call_ids: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """The rows, filtered by status, by a piece of the call id, or by exact ids."""
        wanted = set(call_ids) if call_ids is not None else None
        needle = text.strip().lower()
        out = []
        for life in self.calls.values():
            if wanted is not None and life.call_id not in wanted:
                continue
            if status and life.status != status:
                continue
            if needle and needle not in life.call_id.lower():
                continue
            out.append(life.row())
        return out

    def status_counts(self) -> dict[str, int]:
        """How many calls end in each status (zeros left out)."""
        counts: dict[str, int] = {}
        for life in self.calls.values():
            counts[life.status] = counts.get(life.status, 0) + 1
        return {s: counts[s] for s in STATUSES if s in counts}

    def lost(self) -> list[CallLife]:
        """Calls whose result left the window, in the order that happened."""
        found = [c for c in self.calls.values() if c.result_evicted_step is not None]
        return sorted(found, key=lambda c: c.result_evicted_step or 0)  # stable: first-seen order

    def orphaned(self) -> list[CallLife]:
        """Calls whose result was left in the window after the call left it."""
        found = [c for c in self.calls.values() if c.orphaned_step is not None]
        return sorted(found, key=lambda c: c.orphaned_step or 0)  # stable: first-seen order

    def summary(self) -> str:
        """One line: how many calls lose their result and how many results are left orphaned."""
        lost, orphaned = self.lost(), self.orphaned()
        parts = []
        if lost:
            parts.append(
                f"{len(lost)} call(s) lose their result, the first at step "
                f"{lost[0].result_evicted_step}"
            )
        else:
            parts.append("no call loses its result")
        if orphaned:
            still = sum(1 for c in orphaned if c.orphaned_at_end)
            text = (
                f"{len(orphaned)} result(s) left orphaned (call evicted, result kept; a "
                f"provider rejects them), the first at step {orphaned[0].orphaned_step}"
            )
            if still:
                text += f", {still} still at the last step"
            parts.append(text)
        else:
            parts.append("no result left orphaned")
        return "; ".join(parts)


Slot = tuple[str, str, str]


def lifecycle(timeline: Timeline) -> Lifecycle:
    """One pass over the timeline's events: each call id's declaration, answers and fates.

    The starting buffer of each slot counts as step 0 (declared or answered
    before the first step). Presence in the window is tracked per slot, so a
    call evicted from one slot is not confused with the same id in another.
    What each event does to a call is its kind's ``lifecycle`` in
    :data:`~flowdrop_core.events.EFFECTS`, done by the :class:`_Tracker`
    method of that name.
    """
    tracker = _Tracker()
    for slot, entries in timeline.starting_buffers().items():
        tracker.start(slot, entries)
    for record in timeline.steps:
        if not record.refused and record.events:
            tracker.step(record)
    tracker.finish()
    return Lifecycle(tracker.calls, len(timeline.steps))


def steps_lifecycle(
    records: Iterable[StepRecord], seen: Callable[[StepRecord], None] | None = None
) -> tuple[Lifecycle, int]:
    """:func:`lifecycle` of a replay whose records are read once, none kept, and their count.

    For a replay with no starting buffer (a recorded conversation): each
    record's events are read as it comes; ``seen`` is shown each record too.
    """
    tracker = _Tracker()
    steps = 0
    for record in records:
        steps += 1
        if not record.refused and record.events:
            tracker.step(record)
        if seen is not None:
            seen(record)
    tracker.record = None  # keep no record past its step
    tracker.finish()
    return Lifecycle(tracker.calls, steps), steps


class _Tracker:
    """The state of :func:`lifecycle`'s pass: every call's life, and what each slot's window holds.

    One method per :data:`LifeStep` (what an event does to a call), so a
    kind's lifecycle in ``EFFECTS`` names the method that handles it.
    """

    def __init__(self) -> None:
        self.calls: dict[str, CallLife] = {}
        self.present_calls: dict[Slot, set[str]] = {}
        self.present_results: dict[Slot, set[str]] = {}
        # the step being read: its number, record, slot's window and calls evicted in it
        self.number = 0
        self.record: StepRecord | None = None
        self.have_calls: set[str] = set()
        self.have_results: set[str] = set()
        self.evicted_now: list[str] = []

    def life(self, cid: str) -> CallLife:
        """The life of ``cid``, made the first time it shows up."""
        found = self.calls.get(cid)
        if found is None:
            found = self.calls[cid] = CallLife(cid)
        return found

    def window(self, slot: Slot) -> None:
        """Make ``slot``'s window the current one."""
        self.have_calls = self.present_calls.setdefault(slot, set())
        self.have_results = self.present_results.setdefault(slot, set())

    def start(self, slot: Slot, entries: Sequence[Any]) -> None:
        """A slot's starting buffer: its calls are declared, its results answer, at step 0."""
        self.window(slot)
        for position, entry in enumerate(entries):
            for cid in entry_call_ids(entry):
                one = self.life(cid)
                if one.declared_step is None:
                    one.declared_step, one.declared_position = 0, position
                self.have_calls.add(cid)
            rid = entry_result_id(entry)
            if rid is not None:
                one = self.life(rid)
                if _field(entry, "healed"):
                    one.placeholder_step, one.placeholder_position = 0, position
                elif one.answered_step is None:
                    one.answered_step, one.answered_position = 0, position
                self.have_results.add(rid)

    def step(self, record: StepRecord) -> None:
        """One step's events, in order; then the results its evictions left orphaned."""
        self.number, self.record = record.step, record
        self.window((record.scope, record.resolved_scope_id, record.key))
        self.evicted_now = []
        for ev in record.events:
            what = EFFECTS[ev.kind].lifecycle
            if what is not None:
                _HANDLERS[what](self, ev)
        for cid in self.evicted_now:  # at the end of the step: is its result still in the window?
            if cid in self.have_results:
                one = self.calls[cid]
                if one.orphaned_step is None:
                    one.orphaned_step = self.number

    def added(self, ev: Event) -> None:
        """An entry came in: a result answers its call, a turn declares its calls."""
        step = self.number
        entry: Any = ev.entry
        rid = ev.tool_call_id or entry_result_id(entry)
        if rid is not None:
            one = self.life(rid)
            if one.declared_step is None:
                if one.orphan_result_step is None:
                    one.orphan_result_step = step
            elif rid not in self.have_calls and one.orphaned_step is None:
                one.orphaned_step = step  # its call already left the window
            if one.answered_step is None:
                one.answered_step, one.answered_position = step, ev.position
            self.have_results.add(rid)
            return
        for cid in entry_call_ids(entry):
            one = self.life(cid)
            if one.declared_step is None:
                one.declared_step, one.declared_position = step, ev.position
            self.have_calls.add(cid)

    def duplicate_result(self, ev: Event) -> None:
        """A result dropped as a duplicate (MEM-1)."""
        if ev.tool_call_id is not None:
            self.life(ev.tool_call_id).duplicate_result_steps.append(self.number)

    def duplicate_turn(self, ev: Event) -> None:
        """A turn dropped as a duplicate (MEM-2): every call it declares saw it."""
        index = ev.incoming_index
        incoming = self.record.incoming[index] if self.record and index is not None else None
        for cid in entry_call_ids(incoming) or ([ev.tool_call_id] if ev.tool_call_id else []):
            self.life(cid).duplicate_turn_steps.append(self.number)

    def placeholder(self, ev: Event) -> None:
        """A healed placeholder answers the call (MEM-3)."""
        if ev.tool_call_id is not None:
            one = self.life(ev.tool_call_id)
            if one.placeholder_step is None:
                one.placeholder_step, one.placeholder_position = self.number, ev.position
            self.have_results.add(ev.tool_call_id)

    def replaced(self, ev: Event) -> None:
        """A real result replaced the call's placeholder (MEM-10)."""
        if ev.tool_call_id is not None:
            one = self.life(ev.tool_call_id)
            one.replaced_step = self.number
            if one.answered_step is None:
                one.answered_step, one.answered_position = self.number, ev.position

    def removed(self, ev: Event) -> None:
        """An entry left the window: a result leaves its call, a turn takes its calls away."""
        step = self.number
        entry: Any = ev.entry
        rid = ev.tool_call_id or entry_result_id(entry)
        if rid is not None:
            one = self.life(rid)
            if one.result_evicted_step is None:
                one.result_evicted_step = step
            self.have_results.discard(rid)
            return
        for cid in entry_call_ids(entry):
            one = self.life(cid)
            if one.evicted_step is None:
                one.evicted_step = step
            self.have_calls.discard(cid)
            self.evicted_now.append(cid)

    def finish(self) -> None:
        """Results still in a window whose call left it: orphaned at the end."""
        for slot, results in self.present_results.items():
            have_calls = self.present_calls.get(slot, set())
            for rid in results:
                one = self.calls[rid]
                if one.orphaned_step is not None and rid not in have_calls:
                    one.orphaned_at_end = True


class _Handlers(dict[str, Callable[[_Tracker, Event], None]]):
    """The handlers' dict: a lifecycle step without a method is a loud ``KeyError``."""

    def __missing__(self, what: str) -> Callable[[_Tracker, Event], None]:
        raise KeyError(
            f"EFFECTS names the lifecycle step {what!r}, which inspect/lifecycle.py has no "
            "method for"
        )


#: The handler of each :data:`~flowdrop_core.events.LifeStep` (every one a method above).
_HANDLERS = _Handlers({what: getattr(_Tracker, what) for what in get_args(LifeStep)})


def what_if(base: Lifecycle, other: Lifecycle, label: str) -> list[str]:
    """The compare view's whole-timeline summary: ``label`` is the other settings, e.g. ``window 50``.

    One line for the other settings and, when it differs, one for the
    settings the timeline was made with, in the same words.
    """
    lines = [f"{label}: {other.summary()}."]
    made = base.summary()
    if made != other.summary():
        lines.append(f"as made: {made}.")
    return lines


def statuses_of(lives: Sequence[CallLife]) -> list[str]:
    """The distinct statuses of ``lives``, in :data:`STATUSES` order (for a filter)."""
    have = {life.status for life in lives}
    return [s for s in STATUSES if s in have]
