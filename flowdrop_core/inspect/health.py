"""Recording health: what is wrong with a recording, where, and what GR-MEM did about it.

One report covers the recording as given (what a provider would reject if it
were sent as is, found by MEM-5's own repair pass) and the buffer GR-MEM
builds from it (a result the window left orphaned in the buffer after the last
step). Each finding names:

* its ``kind`` and the ``rule`` it is about;
* ``index``: the message index in the recording, 0-based, in the order the
  file holds its messages, and ``origin``: where in the file, as the user
  finds it there (``messages[75]``; for Anthropic the ``messages[i]`` its
  errors name, the system prompt not counted), and ``step``: the replay
  step, 1-based, that appended it;
* ``call_id``;
* ``action``: what GR-MEM did about it (``dropped``, ``healed``,
  ``replaced``, ``evicted`` or ``nothing``), with ``action_step`` the step it
  did so and ``position`` the buffer position (0-based) it concerns;
  ``did`` says it in a few words and ``message`` in full;
* ``rejects``: whether a provider would reject the recording because of it.

It is built from one pass over the recording (MEM-5's repair, plus the one
check it does not make: a result that comes after another turn instead of
right after its call) and one pass over the timeline's events (the call
lifecycle), so it costs O(messages + events).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from flowdrop_core.events import EFFECTS, Event, EventKind
from flowdrop_core.inspect.lifecycle import (
    Lifecycle,
    entry_call_ids,
    entry_result_id,
    lifecycle,
    steps_lifecycle,
)
from flowdrop_core.provider import Finding, normalize_report
from flowdrop_core.replay import StepRecord, Timeline

__all__ = [
    "ACTIONS",
    "KIND_RULES",
    "HealthFinding",
    "HealthReport",
    "Place",
    "health",
    "health_of_steps",
    "recording_of",
]

Action = Literal["dropped", "healed", "replaced", "evicted", "nothing"]
#: What GR-MEM can do about a finding.
ACTIONS: tuple[Action, ...] = ("dropped", "healed", "replaced", "evicted", "nothing")

#: The rule each kind of finding is about.
KIND_RULES: dict[str, str] = {
    "not_a_message": "MEM-5",
    "malformed_calls": "MEM-5",
    "idless_call": "MEM-11",
    "misplaced_call": "MEM-5",
    "orphan_result": "MEM-5",
    "duplicate_result": "MEM-1",
    "idless_result": "MEM-11",
    "empty_turn": "MEM-5",
    "duplicate_call": "MEM-2",
    "unanswered_call": "MEM-3",
    "late_result": "MEM-10",
    "orphaned_by_window": "MEM-5",
}

#: How each kind reads, for panels and text output.
KIND_TEXT: dict[str, str] = {
    "not_a_message": "not a message",
    "malformed_calls": "malformed tool_calls",
    "idless_call": "call without id",
    "misplaced_call": "call on a non-assistant message",
    "orphan_result": "orphan result",
    "duplicate_result": "re-sent result",
    "idless_result": "result without id",
    "empty_turn": "empty assistant turn",
    "duplicate_call": "repeated call id (duplicate turn)",
    "unanswered_call": "unanswered call",
    "late_result": "result not right after its call",
    "orphaned_by_window": "result left orphaned by the window",
}


@dataclass(frozen=True)
class Place:
    """Where a recording message was appended: the step (1-based) and its index in the batch.

    ``step`` is ``None`` for a message of the starting buffer (it was there
    before step 1).
    """

    step: int | None
    incoming: int | None


@dataclass(frozen=True)
class HealthFinding:
    """One thing wrong with the recording or the buffer built from it (see the module doc)."""

    kind: str
    rule: str
    index: int | None
    step: int | None
    call_id: str | None
    action: Action
    message: str
    origin: str = ""
    position: int | None = None
    action_step: int | None = None
    rejects: bool = True
    source: Literal["recording", "buffer"] = "recording"
    did: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``doctor --json`` object: exactly these seven keys."""
        return {
            "kind": self.kind,
            "rule": self.rule,
            "index": self.index,
            "step": self.step,
            "call_id": self.call_id,
            "action": self.action,
            "message": self.message,
        }

    @property
    def where(self) -> str:
        """One place a user finds in their file, plus the step: ``messages[3] · step 4``.

        The file's own name for the message (``origin``) is the one numbering
        shown; a finding about the buffer only (no message of the file) gives
        its buffer position instead, the one place it has.
        """
        parts = []
        if self.index is not None:
            parts.append(self.origin or f"message {self.index} (0-based)")
        if self.step is not None:
            parts.append(f"step {self.step}")
        elif self.index is not None:
            parts.append("starting buffer")
        if self.index is None and self.position is not None:
            parts.append(f"buffer position {self.position} (0-based)")
        return " · ".join(parts) or "whole recording"

    @property
    def jump_step(self) -> int | None:
        """The step a link should open: where GR-MEM acted, else where the message came in."""
        return self.action_step if self.action_step is not None else self.step

    @property
    def line(self) -> str:
        """The finding at a glance: where, kind, call id, rule, what GR-MEM did (once).

        ``messages[52] · step 53: duplicate_result [call_012x] (MEM-1): GR-MEM
        dropped it as a duplicate (the first is at buffer position 51)``: the
        doctor's line and the inspector's caption; ``message`` has the detail.
        """
        cid = f" [{self.call_id}]" if self.call_id else ""
        return f"{self.where}: {self.kind}{cid} ({self.rule}): {self.did or self.message}"

    def __str__(self) -> str:
        return self.line


@dataclass
class HealthReport:
    """Every finding, in recording order, and whether a provider rejects the recording."""

    findings: list[HealthFinding]
    messages: int
    steps: int
    lifecycle: Lifecycle = field(repr=False)

    @property
    def provider_rejects(self) -> bool:
        """A provider would reject the recording as it is (some finding says so)."""
        return any(f.rejects for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The ``doctor --json`` document."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "provider_rejects": self.provider_rejects,
        }

    def of_kind(self, *kinds: str) -> list[HealthFinding]:
        return [f for f in self.findings if f.kind in kinds]

    def kind_counts(self) -> dict[str, int]:
        """How many findings of each kind, in :data:`KIND_RULES` order."""
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.kind] = counts.get(f.kind, 0) + 1
        return {k: counts[k] for k in KIND_RULES if k in counts}

    def summary(self) -> str:
        """One line for a panel or the CLI."""
        if not self.findings:
            return (
                f"No findings: {self.messages} message(s), {self.steps} step(s); a provider "
                "accepts this recording as is."
            )
        kinds = ", ".join(f"{n} {KIND_TEXT.get(k, k)}" for k, n in self.kind_counts().items())
        verdict = (
            "a provider would reject the recording as it is"
            if self.provider_rejects
            else "a provider accepts the recording as is"
        )
        return f"{len(self.findings)} finding(s) in {self.messages} message(s): {kinds}; {verdict}."


def recording_of(
    timeline: Timeline, keys: Sequence[tuple[int, int]] | None = None
) -> tuple[list[Any], list[str], list[Place]]:
    """The recording a timeline replayed: its messages, their origins and where each went.

    The starting buffer comes first (no step), then each step's incoming
    messages. ``keys`` (from :func:`~flowdrop_core.inspect.compare.plan_keys`)
    marks the re-fired steps a re-fire mode added: those are not part of the
    recording and are skipped.
    """
    messages: list[Any] = []
    origins: list[str] = []
    places: list[Place] = []
    for entries in timeline.starting_buffers().values():
        for k, entry in enumerate(entries):
            messages.append(entry)
            origins.append(f"buffer[{k}]")
            places.append(Place(None, None))
        break  # the scenario's starting buffer is the first slot's; others are store reads
    for n, record in enumerate(timeline.steps):
        if keys is not None and n < len(keys) and keys[n][1] != 0:
            continue
        where = record.origins
        number = keys[n][0] if keys is not None and n < len(keys) else record.step
        many = len(record.incoming) > 1
        for j, msg in enumerate(record.incoming):
            messages.append(msg)
            # a recording names each message's place in its file; a scenario's step is its own
            fallback = f"steps[{number - 1}].append" + (f"[{j}]" if many else "")
            origins.append(where[j] if j < len(where) else fallback)
            places.append(Place(record.step, j))
    return messages, origins, places


def _late_results(messages: Sequence[Any]) -> dict[int, str]:
    """Results that come after another message instead of right after their call's turn.

    One pass: after an assistant turn with calls, the tool messages that
    follow answer it; the first other message closes the block, and any of
    its calls answered later is answered late. Returns index -> call id for
    each late result (only the first result of an id counts).
    """
    late: dict[int, str] = {}
    waiting: set[str] = set()  # calls whose block was closed with no result yet
    block: set[str] = set()  # calls of the open block still unanswered
    answered: set[str] = set()
    for k, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role == "tool":
            rid = entry_result_id(msg)
            if rid is None or rid in answered:
                continue
            answered.add(rid)
            if rid in block:
                block.discard(rid)
            elif rid in waiting:
                waiting.discard(rid)
                late[k] = rid
            continue
        waiting |= block
        block = set()
        if role == "assistant":
            block = {c for c in entry_call_ids(msg) if c not in answered}
    return late


def _events_of(timeline: Timeline, place: Place) -> list[Event]:
    """The events of ``place``'s step about its message (by index in the batch)."""
    if place.step is None:
        return []
    record = timeline.steps[place.step - 1]
    return [ev for ev in record.events if ev.incoming_index == place.incoming]


def health(timeline: Timeline, keys: Sequence[tuple[int, int]] | None = None) -> HealthReport:
    """The health report of the recording ``timeline`` replayed (see the module doc).

    Three named steps: what MEM-5's repair pass finds in the recording and
    what GR-MEM did about each (:meth:`_Findings.repaired`), the results that
    come late (:meth:`_Findings.late`), and the results the window left
    orphaned in the buffer (:meth:`_Findings.orphaned_by_window`).
    """
    messages, origins, places = recording_of(timeline, keys)
    life = lifecycle(timeline)
    return _report(
        messages, origins, places, life, len(timeline.steps), lambda p: _events_of(timeline, p)
    )


def health_of_steps(
    records: Iterable[StepRecord],
    messages: Sequence[Any],
    origins: Sequence[str],
    places: Sequence[Place],
) -> HealthReport:
    """:func:`health` from a replay's records read once as they are made, none kept.

    ``messages``, ``origins`` and ``places`` are the recording (what
    :func:`recording_of` gives; a recording's own messages need no replay to
    know). MEM-5's repair pass runs on them first, so only the events of the
    steps holding one of its findings are kept; the call lifecycle is built
    step by step. The same report as :func:`health` of the kept timeline.
    """
    repair = normalize_report(list(messages)).findings
    wanted = {
        places[f.index].step
        for f in repair
        if not (f.kind == "unanswered_call" and f.tool_call_id is not None)
    }
    kept: dict[int, tuple[Event, ...]] = {}

    def seen(record: StepRecord) -> None:
        if record.step in wanted:
            kept[record.step] = record.events

    life, steps = steps_lifecycle(records, seen)

    def events_of(place: Place) -> list[Event]:
        if place.step is None:
            return []
        return [ev for ev in kept.get(place.step, ()) if ev.incoming_index == place.incoming]

    return _report(messages, origins, places, life, steps, events_of, repair)


def _report(
    messages: Sequence[Any],
    origins: Sequence[str],
    places: Sequence[Place],
    life: Lifecycle,
    steps: int,
    events_of: Callable[[Place], list[Event]],
    repair: list[Finding] | None = None,
) -> HealthReport:
    """The findings in recording order (``repair``: MEM-5's, when already found)."""
    out = _Findings(events_of, messages, origins, places, life)
    for f in normalize_report(list(messages)).findings if repair is None else repair:
        out.repaired(f)
    out.late()
    out.orphaned_by_window()
    out.findings.sort(
        key=lambda f: (
            f.index if f.index is not None else len(messages),
            f.step or 0,
            0 if f.source == "recording" else 1,
            f.kind,
        )
    )
    return HealthReport(out.findings, len(messages), steps, life)


class _Findings:
    """The findings of :func:`health`, made step by step from the recording and its timeline."""

    def __init__(
        self,
        events_of: Callable[[Place], list[Event]],
        messages: Sequence[Any],
        origins: Sequence[str],
        places: Sequence[Place],
        life: Lifecycle,
    ) -> None:
        self.events_of = events_of
        self.messages = messages
        self.origins = origins
        self.places = places
        self.life = life
        self.findings: list[HealthFinding] = []

    def add(
        self,
        kind: str,
        index: int | None,
        call_id: str | None,
        action: Action,
        text: str,
        *,
        position: int | None = None,
        action_step: int | None = None,
        rejects: bool = True,
        source: Literal["recording", "buffer"] = "recording",
        rule: str | None = None,
        step: int | None = None,
        did: str = "",
    ) -> None:
        """One finding about message ``index`` (``None``: about the buffer, at ``step``).

        ``text`` is the whole story (``doctor --json``'s message); ``did`` is what
        GR-MEM did in a few words, for the one-line form.
        """
        place = self.places[index] if index is not None else Place(step, None)
        self.findings.append(
            HealthFinding(
                kind=kind,
                rule=rule or KIND_RULES.get(kind, "MEM-5"),
                index=index,
                step=place.step,
                call_id=call_id,
                action=action,
                message=text,
                origin=self.origins[index] if index is not None else "",
                position=position,
                action_step=action_step,
                rejects=rejects,
                source=source,
                did=did,
            )
        )

    def repaired(self, f: Finding) -> None:
        """A finding of MEM-5's repair pass, with what GR-MEM did about its message."""
        if f.kind == "unanswered_call" and f.tool_call_id is not None:
            self.unanswered(f.index, f.tool_call_id)
            return
        place = self.places[f.index]
        events = self.events_of(place)
        text = f.message.removeprefix("dropped: ")
        dup = next((ev for ev in events if EFFECTS[ev.kind].part == "dropped"), None)
        if dup is not None:
            self.dropped(f, dup, place, text)
        else:
            self.kept(f, events, place, text)

    def unanswered(self, index: int, cid: str) -> None:
        """A call with no result in the recording: healed, evicted first, or left (MEM-3)."""
        one = self.life.get(cid)
        text = f"call {cid!r} has no result in the recording"
        kind = "unanswered_call"
        if one is not None and one.placeholder_step is not None:
            self.add(
                kind,
                index,
                cid,
                "healed",
                f"{text}; GR-MEM healed it at step {one.placeholder_step} with a placeholder "
                f"at buffer position {one.placeholder_position} (0-based), before the next "
                "user turn",
                position=one.placeholder_position,
                action_step=one.placeholder_step,
                did=f"GR-MEM healed it at step {one.placeholder_step} with a placeholder",
            )
        elif one is not None and one.evicted_step is not None:
            self.add(
                kind,
                index,
                cid,
                "evicted",
                f"{text}; the window evicted its turn at step {one.evicted_step} before a "
                "user turn could heal it",
                action_step=one.evicted_step,
                did=f"the window evicted its turn at step {one.evicted_step}, before a user "
                "turn could heal it",
            )
        else:
            self.add(
                kind,
                index,
                cid,
                "nothing",
                f"{text}; no user turn came after it, so GR-MEM did not heal it (MEM-3 heals "
                "only before a user turn); MEM-5's provider view adds a synthetic result",
                did="GR-MEM did nothing: no user turn came after it to heal it before",
            )

    def dropped(self, f: Finding, dup: Event, place: Place, text: str) -> None:
        """A message GR-MEM dropped as a duplicate (MEM-1, MEM-2)."""
        held = (
            f" (the first is at buffer position {dup.position}, 0-based)"
            if dup.position is not None
            else ""
        )
        rule = EFFECTS[dup.kind].rule
        first = f" (the first is at buffer position {dup.position})" if held else ""
        self.add(
            f.kind,
            f.index,
            f.tool_call_id or dup.tool_call_id,
            "dropped",
            f"{text}; GR-MEM dropped it as a duplicate at step {place.step}{held}",
            position=dup.position,
            action_step=place.step,
            rule=rule if f.kind in ("duplicate_result", "duplicate_call") else None,
            did=f"GR-MEM dropped it as a duplicate{first}",
        )

    def kept(self, f: Finding, events: list[Event], place: Place, text: str) -> None:
        """A message GR-MEM kept (or never saw): MEM-5's provider view repairs it."""
        appended = next((ev for ev in events if EFFECTS[ev.kind].part == "appended"), None)
        pos = appended.position if appended is not None else None
        if any(ev.kind is EventKind.IDLESS_RESULT for ev in events):
            why = "GR-MEM appended it anyway, with a warning: it cannot be deduplicated"
        elif f.kind == "duplicate_result" and appended is not None:
            why = "GR-MEM appended it: the first result had left the window"
        elif appended is not None:
            why = "GR-MEM kept it; MEM-5's provider view has to repair it"
        elif place.step is None:
            why = "it is in the starting buffer; MEM-5's provider view has to repair it"
        else:
            why = "GR-MEM did not append it"
        self.add(
            f.kind, f.index, f.tool_call_id, "nothing", f"{text}; {why}", position=pos, did=why
        )

    def late(self) -> None:
        """Results that come after another turn: replaced a placeholder (MEM-10) or left."""
        for index, cid in _late_results(self.messages).items():
            one = self.life.get(cid)
            text = f"result for call {cid!r} comes after another turn, not right after its call"
            if one is not None and one.replaced_step is not None:
                self.add(
                    "late_result",
                    index,
                    cid,
                    "replaced",
                    f"{text}; GR-MEM had healed the call, and this result replaced its "
                    f"placeholder in place at step {one.replaced_step} (buffer position "
                    f"{one.placeholder_position}, 0-based)",
                    position=one.placeholder_position,
                    action_step=one.replaced_step,
                    did=f"it replaced GR-MEM's placeholder in place at step {one.replaced_step}",
                )
            else:
                self.add(
                    "late_result",
                    index,
                    cid,
                    "nothing",
                    f"{text}; GR-MEM appended it where it came; MEM-5's provider view moves it",
                    rule="MEM-5",
                    did="GR-MEM appended it where it came; MEM-5's provider view moves it",
                )

    def orphaned_by_window(self) -> None:
        """Results still in the buffer after the window evicted their call's turn."""
        index_of_result: dict[str, int] = {}
        for k, msg in enumerate(self.messages):
            rid = entry_result_id(msg)
            if rid is not None and rid not in index_of_result:
                index_of_result[rid] = k
        for one in self.life:
            if one.declared_step is None or not one.orphaned_at_end:
                # an orphan of the recording itself is reported above; a result the window
                # left orphaned for a while and then evicted too is not in the buffer GR-MEM
                # built (the call lifecycle and the compare view's what-if line count those)
                continue
            healed = one.placeholder_step is not None and one.answered_step is None
            what = "its healed placeholder" if healed else "its result"
            self.add(
                "orphaned_by_window",
                None if healed else index_of_result.get(one.call_id),
                one.call_id,
                "evicted",
                f"the window evicted the turn declaring call {one.call_id!r} at step "
                f"{one.evicted_step or one.orphaned_step} and kept {what}: a provider rejects "
                "the buffer until it leaves too; it is still there after the last step",
                action_step=one.orphaned_step,
                rejects=False,
                source="buffer",
                step=one.orphaned_step,
                did=f"the window evicted its call's turn at step "
                f"{one.evicted_step or one.orphaned_step} and kept {what}, to the last step",
            )
