"""Replay: run a scenario's appends through a ConversationBuffer and keep the timeline.

A :class:`Timeline` is the record of a sequence of appends: per step the
incoming messages, the MEM-14 report, the scope resolution and the engine's
events. It is what the CLI prints, what the inspector's timeline shows, and
what the playground grows one append at a time. It does not keep a copy of
the buffer per step: it keeps the events, which rebuild any step from the one
before (:func:`~flowdrop_core.events.apply_events`), plus a checkpoint every
``checkpoint_every`` steps of a slot, so a 10,000-step replay stays small.
"""

from __future__ import annotations

import bisect
import copy
import json
import shutil
import tempfile
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from flowdrop_core._errors import FlowdropError
from flowdrop_core.context import ExecutionContext, ScopeResolution, as_context
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.engine import as_batch
from flowdrop_core.events import EFFECTS, Event, apply_in_place, tally_parts
from flowdrop_core.importers import ImportedConversation
from flowdrop_core.messages import InvalidMessagesError, read_messages, read_row
from flowdrop_core.provider import normalize_report
from flowdrop_core.scenario import Expectation, Scenario, ScenarioConfig, ScenarioStep, step_context
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store
from flowdrop_core.verdicts import step_verdict

__all__ = [
    "RULE_SUMMARIES",
    "CheckResult",
    "Mismatch",
    "PlannedStep",
    "ReplayError",
    "StepRecord",
    "Timeline",
    "check",
    "conversation_to_scenario",
    "incoming_summary",
    "new_timeline",
    "replay",
    "replay_conversation",
    "step_origins",
    "stream_replay",
]

Refire = Literal["none", "steps", "results"]
Per = Literal["message", "turn"]

#: One sentence per rule this project cites, for the UI and the CLI.
RULE_SUMMARIES: dict[str, str] = {
    "MEM-1": "A tool result whose call is already answered is dropped as a duplicate.",
    "MEM-2": "An assistant turn is dropped only when every call id it declares is already declared.",
    "MEM-3": "Before a user turn, every unanswered call gets a placeholder right after its turn.",
    "MEM-4": "Several inputs assemble in declared order; an unwired or empty input adds nothing.",
    "MEM-5": "The provider view repairs tool pairing and reports how many entries it dropped.",
    "MEM-6": "0, '0', blanks and booleans are not identities; '7' is.",
    "MEM-7": "An identity scope without a usable id refuses: no storage access, an empty buffer.",
    "MEM-8": "When a session drives the run, the user identity is the session's owner.",
    "MEM-9": "Viewing a session is not driving it; two absent identities never own each other.",
    "MEM-10": "A real result replaces its healed placeholder in place, adding no entry.",
    "MEM-11": "A call id is read under either spelling, tool_call_id or id; blank and '0' are no id.",
    "MEM-12": "Appends to one slot are serialized, with a bounded wait that never drops a turn.",
    "MEM-13": "A read under a refused identity scope returns its default, found false.",
    "MEM-14": "An append reports how many incoming messages became new entries, not the size change.",
    "MEM-15": "A denial is final; stored messages change other than by an append only at the admin tier.",
    "MEM-16": "Text becomes one message; empty text becomes none (an empty user turn is a pure read).",
}


_new_object = object.__new__
_set_dict = object.__setattr__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


class ReplayError(FlowdropError, ValueError):
    """A scenario step holds a malformed message; raised before any step runs."""


def incoming_summary(messages: Sequence[dict[str, Any]], width: int = 60) -> str:
    """One-line summary of a step's incoming messages, for tables."""
    if len(messages) == 1:  # the commonest step: one message, no list to join
        out = _one_line(messages[0])
    else:
        out = " | ".join([_one_line(msg) for msg in messages]) if messages else "(nothing)"
    return out if len(out) <= width else out[: width - 1] + "…"


#: The metadata of a message that has none (read only).
_NO_METADATA: dict[str, Any] = {}


def _one_line(msg: dict[str, Any]) -> str:
    """``role[call id]: text`` (or ``role[calls N]: ...``), whitespace runs made one space."""
    role = msg.get("role", "?")
    content = msg.get("content")
    if isinstance(content, str):
        text = content
    elif content is None:
        text = "null"  # what json.dumps writes, without the call (an assistant turn's calls)
    else:
        text = json.dumps(content, ensure_ascii=False)
    meta = msg.get("metadata")
    if not isinstance(meta, dict):
        meta = _NO_METADATA
    cid = msg.get("tool_call_id") or meta.get("tool_call_id")
    calls = msg.get("tool_calls") or meta.get("tool_calls")
    tag = f"[{cid}]" if cid else (f"[calls {len(calls)}]" if calls else "")
    return f"{role}{tag}: {' '.join((text or '').split())}"


class StepRecord:
    """One append of a timeline: what came in, what MEM-14 reported, and why.

    A plain slotted class (no validation): a timeline makes one per step from
    values the library computed itself, and a long replay makes 100,000 of
    them, so building, reading and freeing one must cost next to nothing. The
    event tallies a table row shows are counted once, when the record is made.
    """

    __slots__ = (
        "appended",
        "appended_any",
        "context",
        "count",
        "count_before",
        "duplicates",
        "events",
        "evicted",
        "incoming",
        "inserted",
        "key",
        "label",
        "origins",
        "refire",
        "refusal_reason",
        "refused",
        "replaced",
        "resolved_scope_id",
        "scope",
        "step",
    )

    step: int
    label: str
    incoming: list[dict[str, Any]]
    origins: list[str]
    context: dict[str, Any] | None
    refire: bool
    count_before: int
    count: int
    appended: int
    appended_any: bool
    refused: bool
    refusal_reason: str | None
    scope: str
    key: str
    resolved_scope_id: str
    events: tuple[Event, ...]
    #: Events of the step by kind, counted once: dropped duplicates (MEM-1, MEM-2),
    #: placeholders replaced (MEM-10) and inserted (MEM-3), entries evicted by the window.
    duplicates: int
    replaced: int
    inserted: int
    evicted: int

    def __init__(
        self,
        *,
        step: int,
        incoming: list[dict[str, Any]],
        count_before: int,
        count: int,
        appended: int,
        appended_any: bool,
        refused: bool,
        scope: str,
        key: str,
        resolved_scope_id: str,
        label: str = "",
        origins: list[str] | None = None,
        context: dict[str, Any] | None = None,
        refire: bool = False,
        refusal_reason: str | None = None,
        events: tuple[Event, ...] = (),
    ) -> None:
        self.step = step
        self.label = label
        self.incoming = incoming
        self.origins = [] if origins is None else origins
        self.context = context
        self.refire = refire
        self.count_before = count_before
        self.count = count
        self.appended = appended
        self.appended_any = appended_any
        self.refused = refused
        self.refusal_reason = refusal_reason
        self.scope = scope
        self.key = key
        self.resolved_scope_id = resolved_scope_id
        self.events = events
        parts = tally_parts(events)
        self.duplicates, self.replaced = parts.dropped, parts.replaced
        self.inserted, self.evicted = parts.inserted, parts.evicted

    def __eq__(self, other: object) -> bool:
        if type(other) is not StepRecord:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _RECORD_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _RECORD_FIELDS)
        return f"StepRecord({fields})"

    @property
    def count_delta(self) -> int:
        """Change in buffer size; *not* what was appended (MEM-14 point 2)."""
        return self.count - self.count_before

    @property
    def tally(self) -> dict[str, int]:
        """Events of each kind in this step."""
        return dict(Counter(str(ev.kind) for ev in self.events))

    @property
    def verdict(self) -> str:
        """The specification's word for this append: appended, dropped, replaced, healed, ..."""
        return step_verdict(self.refused, self.appended, (ev.kind for ev in self.events))

    @property
    def found(self) -> bool:
        """Whether the step's read found a stored buffer (MEM-13: never under a refusal)."""
        return not self.refused and self.count_before > 0

    @property
    def mem14_flag(self) -> str | None:
        """Mark the steps MEM-14 is about: where the size change misleads."""
        if self.appended > 0 and self.count == self.count_before:
            return "hidden append"
        if self.appended == 0 and self.count > self.count_before:
            return "growth without append"
        return None

    def row(self) -> dict[str, Any]:
        """A flat timeline row (tables, CSV)."""
        return {
            "step": self.step,
            "label": self.label,
            "incoming": incoming_summary(self.incoming),
            "count": self.count,
            "count_delta": self.count - self.count_before,
            "appended": self.appended,
            "appended_any": self.appended_any,
            "duplicates": self.duplicates,
            "replaced": self.replaced,
            "inserted": self.inserted,
            "evicted": self.evicted,
            "refused": self.refused,
            "resolved_scope_id": self.resolved_scope_id,
            "mem14_flag": self.mem14_flag or "",
        }

    def to_json(self) -> str:
        """The CLI's ``--json`` line for this step (strict JSON, as :meth:`Timeline.to_json_lines`)."""
        return _STRICT_JSON.encode(self.to_dict())

    def to_dict(self, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """JSON-ready form (the CLI's ``--json`` line), optionally with the buffer after."""
        out: dict[str, Any] = {
            "step": self.step,
            "label": self.label,
            "incoming": self.incoming,
            "origins": self.origins,
            "count": self.count,
            "count_before": self.count_before,
            "appended": self.appended,
            "appended_any": self.appended_any,
            "refused": self.refused,
            "refusal_reason": self.refusal_reason,
            "scope": self.scope,
            "key": self.key,
            "resolved_scope_id": self.resolved_scope_id,
            "refire": self.refire,
            "mem14_flag": self.mem14_flag,
            "events": [ev.to_dict() for ev in self.events],
        }
        if messages is not None:
            out["messages"] = messages
        return out


#: The fields of a StepRecord given when it is made, in order (the rest are its event tallies).
_RECORD_FIELDS: tuple[str, ...] = (
    "step",
    "label",
    "incoming",
    "origins",
    "context",
    "refire",
    "count_before",
    "count",
    "appended",
    "appended_any",
    "refused",
    "refusal_reason",
    "scope",
    "key",
    "resolved_scope_id",
    "events",
)


Slot = tuple[str, str, str]


class Timeline:
    """A sequence of appends to a :class:`ConversationBuffer`, recorded step by step.

    Built by :func:`replay` or :func:`new_timeline` (the playground). Each
    slot's buffer is recoverable at any step from its checkpoints and events.
    """

    def __init__(
        self,
        scenario: Scenario,
        buffer: ConversationBuffer,
        checkpoint_every: int = 256,
        *,
        keep_steps: bool = True,
    ) -> None:
        self.scenario = scenario
        self.buffer = buffer
        self.steps: list[StepRecord] = []
        #: ``False``: each step's record is returned and forgotten (a command printing
        #: as it goes); ``steps`` stays empty and no step's buffer can be rebuilt.
        self.keep_steps = keep_steps
        self._made = 0  # steps made, kept or not
        self.checkpoint_every = max(1, checkpoint_every)
        self._slot_of: list[Slot | None] = []  # per step: the slot it touched (None: refused)
        self._slot_steps: dict[Slot, list[int]] = {}  # slot -> step numbers touching it
        self._checkpoints: dict[Slot, dict[int, list[dict[str, Any]]]] = {}  # step -> after
        self._since: dict[Slot, int] = {}  # slot -> its steps since its last checkpoint
        self._ctx_memo: tuple[Any, ExecutionContext | None, ScopeResolution | None] = (
            object(),
            None,
            None,
        )
        self._start = self._seed()

    # -- building ---------------------------------------------------------------------

    def _seed(self) -> dict[Slot, list[dict[str, Any]]]:
        """Write the scenario's starting buffer to its slot.

        The slot is the one the scenario's context resolves to or, when that
        refuses (or there is none), the first step's that does. A starting
        buffer with no slot at all is an error: it would be silently lost.
        """
        start: dict[Slot, list[dict[str, Any]]] = {}
        first = self.buffer.resolve(self.scenario.context)
        res: ScopeResolution | None = first
        if first.refused:  # look further only when needed: one resolution per step is O(steps)
            contexts = (step_context(self.scenario, step) for step in self.scenario.steps)
            res = next((r for r in map(self.buffer.resolve, contexts) if not r.refused), None)
        if res is None:
            if self.scenario.buffer:
                raise ReplayError(
                    f"{self.scenario.name}: buffer: no context of the scenario or its steps "
                    f"resolves the {self.buffer.scope} scope, so the starting buffer has no "
                    f"slot ({first.reason})"
                )
            return start
        slot = (str(res.scope), res.resolved_scope_id, self.buffer.key)
        entries = list(self.scenario.buffer)
        if entries:
            read_messages(entries, where="buffer")  # fail early, naming the entry
            self.buffer.store.set(*slot, entries)
        else:
            self.buffer.store.delete(*slot)
        start[slot] = entries
        return start

    def append_step(
        self,
        messages: Any,
        *,
        context: dict[str, Any] | None = None,
        label: str = "",
        refire: bool = False,
        origins: list[str] | None = None,
    ) -> StepRecord:
        """Append one step and record it.

        ``context`` overrides the timeline's context key by key (``None``: use
        it as is). A malformed message raises :class:`InvalidMessagesError`
        and changes nothing, the timeline included.
        """
        # One message (the commonest step) is its own batch; as_batch reads anything else.
        batch = [messages] if type(messages) is dict else as_batch(messages)
        base = self.scenario.context
        if context is None:
            context = base  # the same object step after step: validated once (below)
        elif base is not None:
            context = {**base, **context}  # the step overrides key by key
        ctx, resolution = self._resolved(context)
        slot = (
            None
            if resolution.refused
            else (str(resolution.scope), resolution.resolved_scope_id, self.buffer.key)
        )
        if slot is not None and slot not in self._start and slot not in self._slot_steps:
            # First touch of a slot the scenario did not seed: remember what the
            # store already held, so every step of it can be rebuilt.
            self._start[slot] = self.buffer.read(ctx).messages or []
        # One message goes to the engine as it is (its one-message path; the same decisions).
        one = messages if type(messages) is dict else batch
        res = self.buffer.append_resolved(one, resolution, ctx)
        return self._record(res, batch, context, label, refire, origins or [])

    def _resolved(
        self, context: dict[str, Any] | None
    ) -> tuple[ExecutionContext | None, ScopeResolution]:
        """The validated context and the scope it resolves to, reused while steps share a dict."""
        memo, ctx, resolution = self._ctx_memo
        if context is memo and resolution is not None:
            return ctx, resolution
        ctx = as_context(context)
        resolution = self.buffer.resolve(ctx)
        self._ctx_memo = (context, ctx, resolution)
        return ctx, resolution

    def _slot(self, context: ExecutionContext | dict[str, Any] | None) -> Slot | None:
        res = self.buffer.resolve(context)
        return None if res.refused else (str(res.scope), res.resolved_scope_id, self.buffer.key)

    def _record(
        self,
        res: ScopedAppendResult,
        batch: list[Any],
        context: dict[str, Any] | None,
        label: str,
        refire: bool,
        origins: list[str],
    ) -> StepRecord:
        number = len(self.steps) + 1 if self.keep_steps else self._made + 1
        self._made = number
        events = res.events
        record = _new_object(StepRecord)  # every field set here: no defaults to fill
        record.step = number
        record.label = label
        record.incoming = batch
        record.origins = origins
        record.context = context
        record.refire = refire
        # The size before, read off the events (what the step grew by).
        parts = tally_parts(events)
        record.count_before = res.count - parts.growth
        record.count = res.count
        record.appended = res.appended
        record.appended_any = res.appended_any
        record.refused = res.refused
        record.refusal_reason = res.refusal_reason
        record.scope = str(res.scope)
        record.key = res.key
        record.resolved_scope_id = res.resolved_scope_id
        record.events = events
        record.duplicates = parts.dropped
        record.replaced = parts.replaced
        record.inserted = parts.inserted
        record.evicted = parts.evicted
        if not self.keep_steps:
            return record
        self.steps.append(record)
        slot = None if res.refused else (str(res.scope), res.resolved_scope_id, res.key)
        if self._slot_of and slot == self._slot_of[-1]:
            slot = self._slot_of[-1]  # one tuple for a run of steps on the same slot
        self._slot_of.append(slot)
        if slot is not None:
            self._slot_steps.setdefault(slot, []).append(number)
            since = self._since.get(slot, 0) + 1
            # A checkpoint every ``checkpoint_every`` steps, and never more often
            # than every count/2 steps: copying the buffer then costs O(1) per step
            # amortized and all checkpoints of a growing buffer hold O(n) entries.
            if since >= max(self.checkpoint_every, res.count // 2) and res.messages is not None:
                self._checkpoints.setdefault(slot, {})[number] = list(res.messages)
                since = 0
            self._since[slot] = since
        return record

    def refire_last(self) -> StepRecord | None:
        """Send the last step's messages again, under the same context (MEM-14's re-fire)."""
        if not self.steps:
            return None
        last = self.steps[-1]
        return self.append_step(
            copy.deepcopy(last.incoming),
            context=last.context,
            label=f"re-fire of step {last.step}",
            refire=True,
            origins=last.origins,
        )

    def undo(self) -> StepRecord | None:
        """Drop the last step and restore its slot to the buffer before it."""
        if not self.steps:
            return None
        record = self.steps.pop()
        slot = self._slot_of.pop()
        if slot is not None:
            self._slot_steps[slot].pop()
            self._checkpoints.get(slot, {}).pop(record.step, None)
            self._since[slot] = max(0, self._since.get(slot, 0) - 1)
            before = self._buffer_of(slot, record.step - 1)
            if before:
                self.buffer.store.set(*slot, before)
            else:
                self.buffer.store.delete(*slot)
        return record

    # -- reading ------------------------------------------------------------------------

    def starting_buffers(self) -> dict[Slot, list[dict[str, Any]]]:
        """Per slot ``(scope, resolved_scope_id, key)``, what it held before its first step.

        Read-only views for a pass over the whole timeline (the call
        lifecycle, the health report); do not modify them.
        """
        return dict(self._start)

    def _buffer_of(self, slot: Slot, step: int) -> list[dict[str, Any]]:
        """The buffer of ``slot`` after ``step`` (0 = the start): checkpoint + events."""
        touched = self._slot_steps.get(slot, [])
        marks = self._checkpoints.get(slot, {})
        base_step = max((s for s in marks if s <= step), default=0)
        entries = list(marks[base_step]) if base_step else list(self._start.get(slot, ()))
        # the slot's steps after the checkpoint, up to ``step`` (its steps are sorted), applied
        # to that one copy: O(buffer + events), not a copy of the buffer per step
        for s in touched[
            bisect.bisect_right(touched, base_step) : bisect.bisect_right(touched, step)
        ]:
            apply_in_place(entries, self.steps[s - 1].events)
        return entries

    def buffer_after(self, step: int) -> list[dict[str, Any]]:
        """The buffer the given step saw after it ran (0: the starting buffer).

        A refused step's buffer is empty (MEM-7). For step 0 the slot is the
        one the scenario's context resolves to.
        """
        if step <= 0:
            return list(next(iter(self._start.values()), []))
        slot = self._slot_of[step - 1]
        return [] if slot is None else self._buffer_of(slot, step)

    def buffer_before(self, step: int) -> list[dict[str, Any]]:
        """The buffer of the slot the given step touched, just before it ran."""
        slot = self._slot_of[step - 1]
        return [] if slot is None else self._buffer_of(slot, step - 1)

    def tagged(
        self, step: int
    ) -> tuple[list[tuple[dict[str, Any], str]], list[tuple[dict[str, Any], str]], list[Event]]:
        """The entries before and after ``step``, each tagged, and the dropped duplicates.

        Tags before: ``kept``, ``evicted``, ``replaced`` (a placeholder the step
        replaced). Tags after: ``kept``, ``new``, ``placeholder inserted``,
        ``replaced`` (the real result now in the placeholder's place). All of
        it is read off the step's events: nothing is re-derived.
        """
        record = self.steps[step - 1]
        before = self.buffer_before(step)
        tags_before = ["kept"] * len(before)
        live: list[tuple[dict[str, Any], str, int | None]] = [
            (e, "kept", k) for k, e in enumerate(before)
        ]
        for ev in record.events:
            effect = EFFECTS[ev.kind]  # what the kind does to the buffer, and its tag
            change = effect.change
            if change is None:
                continue
            tag = effect.tag or change
            position: int = ev.position  # type: ignore[assignment]  # set on every change
            if change == "insert":
                live.insert(position, (ev.entry, tag, None))  # type: ignore[arg-type]
                continue
            _, _, origin = live.pop(position) if change == "delete" else live[position]
            if origin is not None:
                tags_before[origin] = tag
            if change == "replace":
                live[position] = (ev.entry, tag, origin)  # type: ignore[assignment]
        dropped = [ev for ev in record.events if EFFECTS[ev.kind].part == "dropped"]
        return (
            list(zip(before, tags_before, strict=True)),
            [(entry, tag) for entry, tag, _ in live],
            dropped,
        )

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per step, for tables and CSV."""
        return [record.row() for record in self.steps]

    def buffers_after(self) -> Iterator[list[dict[str, Any]]]:
        """The buffer after each step, in order, rebuilt from the events in one pass.

        Each yielded list is the caller's own (a copy, O(buffer) per step).
        """
        for entries in self._live_buffers():
            yield list(entries)

    def _live_buffers(self) -> Iterator[list[dict[str, Any]]]:
        """Like :meth:`buffers_after`, but the same list changed in place: read it before the next."""
        current = {slot: list(entries) for slot, entries in self._start.items()}
        for record, slot in zip(self.steps, self._slot_of, strict=True):
            if slot is None:
                yield []
                continue
            entries = current.setdefault(slot, [])
            apply_in_place(entries, record.events)
            yield entries

    def to_json_lines(self, include_messages: bool = False) -> Iterator[str]:
        """One JSON object per step (the CLI's ``--json``); the buffer after it only when asked.

        A line's ``events`` are the step's delta: each carries its kind,
        position and entry, and applying them in order to the buffer before
        the step gives the buffer after it, so the lines cost O(what changed)
        each. With ``include_messages`` each line also carries the whole
        buffer under ``messages`` (O(buffer) per line): the buffers are
        rebuilt incrementally from the events, and each entry is serialized
        once and reused while it stays in the buffer. The output is strict
        JSON: a non-finite number a library caller put in a message raises
        ``ValueError`` rather than writing ``NaN``.
        """
        encoded: dict[int, tuple[dict[str, Any], str]] = {}
        encode_strict = _STRICT_JSON.encode  # json.dumps(..., the same options), one encoder

        def encode(entry: dict[str, Any]) -> str:
            hit = encoded.get(id(entry))
            if hit is not None and hit[0] is entry:
                return hit[1]
            text = encode_strict(entry)
            encoded[id(entry)] = (entry, text)
            return text

        buffers: Iterator[list[dict[str, Any]] | None] = (
            self._live_buffers() if include_messages else iter([None] * len(self.steps))
        )
        for record, messages in zip(self.steps, buffers, strict=True):
            head = encode_strict(record.to_dict())
            if messages is None:
                yield head
                continue
            body = ", ".join(encode(entry) for entry in messages)
            yield f'{head[:-1]}, "messages": [{body}]}}'
            if len(encoded) > 4 * (len(messages) + 64):  # forget entries long gone
                live = {id(entry) for entry in messages}
                encoded = {k: v for k, v in encoded.items() if k in live}

    def to_scenario(self, name: str | None = None, title: str = "") -> Scenario:
        """This timeline as a scenario file: same start, same steps, expect = what happened."""
        base = self.scenario
        steps = []
        for record in self.steps:
            ctx = record.context
            steps.append(
                ScenarioStep(
                    label=record.label, append=record.incoming, context=ctx, refire=record.refire
                )
            )
        expect = [
            Expectation(
                count=r.count,
                appended=r.appended,
                appended_any=r.appended_any,
                refused=r.refused,
                resolved_scope_id=r.resolved_scope_id,
            )
            for r in self.steps
        ]
        return Scenario(
            name=name or base.name,
            title=title or base.title,
            rules=base.rules,
            description=base.description,
            config=base.config,
            context=base.context,
            buffer=base.buffer,
            steps=steps,
            expect=expect,
        )


#: ``json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)`` as one encoder
#: made once: ``json.dumps`` with options makes a new encoder per call (100,000 lines).
_STRICT_JSON = json.JSONEncoder(ensure_ascii=False, default=str, allow_nan=False)


def _store_for(config: ScenarioConfig) -> Store:
    """The backend a scenario asks for: ``memory`` or ``sqlite`` (a fresh temporary file)."""
    kind = config.storage.strip().lower()
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="flowdrop-replay-"))
        store = SQLiteStore(folder / "replay.sqlite3")
        # The file lives as long as the store: removed with its folder when the
        # store (and so the timeline holding it) is garbage collected.
        weakref.finalize(store, shutil.rmtree, folder, ignore_errors=True)
        return store
    raise ReplayError(
        f"config.storage: unknown storage {config.storage!r} (expected memory or sqlite)"
    )


def new_timeline(
    config: ScenarioConfig | None = None,
    context: dict[str, Any] | None = None,
    buffer: list[Any] | None = None,
    *,
    store: Store | None = None,
    name: str = "playground",
) -> Timeline:
    """An empty timeline to append to step by step (the playground)."""
    config = config or ScenarioConfig()
    scenario = Scenario(name=name, config=config, context=context, buffer=buffer or [], steps=[])
    return _timeline(scenario, store)


def _timeline(scenario: Scenario, store: Store | None, *, keep_steps: bool = True) -> Timeline:
    cfg = scenario.config
    conv = ConversationBuffer(
        scope=cfg.scope,
        key=cfg.key,
        max_messages=cfg.max_messages,
        store=store if store is not None else _store_for(cfg),
    )
    try:
        return Timeline(scenario, conv, keep_steps=keep_steps)
    except InvalidMessagesError as exc:
        raise ReplayError(f"{scenario.name}: {exc}") from None


def _validate(scenario: Scenario) -> None:
    """Read every step's messages before running any (no partial replay)."""
    problems = []
    for number, step in enumerate(scenario.steps, start=1):
        append = step.append
        if type(append) is dict and type(read_row(append)) is not str:
            continue  # one valid message (the commonest step): read once, cheaply
        try:
            read_messages(as_batch(append))
        except InvalidMessagesError as exc:
            problems.append(f"step {number}: {exc}")
    if problems:
        raise ReplayError(f"{scenario.name}: " + "; ".join(problems))


def replay(
    scenario: Scenario,
    *,
    refire: Refire = "none",
    store: Store | None = None,
    progress: Callable[[int, int], None] | None = None,
    origins: list[list[str]] | None = None,
    validated: bool = False,
) -> Timeline:
    """Run every step of ``scenario`` and return its timeline.

    ``refire="steps"`` runs all steps a second time after the first pass;
    ``refire="results"`` re-sends each step that carries a tool result right
    after it (what an orchestrator re-delivering results does). Both are the
    MEM-14 situation: the count looks the same, ``appended`` tells.
    Every step's messages are read before any step runs (no partial replay),
    unless ``validated``: the caller has read them all already, with its own
    located errors (the CLI's ``check_messages``), so they are not read twice.
    """
    if not validated:
        _validate(scenario)
    timeline = _timeline(scenario, store)
    plan: list[tuple[ScenarioStep, bool, list[str]]] = []
    for k, step in enumerate(scenario.steps):
        where = origins[k] if origins and k < len(origins) else []
        plan.append((step, False, where))
        if refire == "results" and any(m.get("role") == "tool" for m in as_batch(step.append)):
            plan.append((step, True, where))
    if refire == "steps":
        plan += [(step, True, where) for step, _, where in plan]
    total = len(plan)
    for done, (step, again, where) in enumerate(plan, start=1):
        timeline.append_step(
            copy.deepcopy(step.append) if again else step.append,
            context=step.context,  # append_step lays it over the scenario's context
            label=(f"re-fire: {step.label}" if again else step.label),
            refire=again or step.refire,
            origins=where,
        )
        if progress is not None:
            progress(done, total)
    return timeline


#: One step to run: what it appends, its own context, label, re-fire flag and origins.
PlannedStep = tuple[Any, dict[str, Any] | None, str, bool, list[str]]


def _planned(
    steps: Callable[[], Iterable[PlannedStep]], refire: Refire
) -> tuple[int, Iterator[PlannedStep]]:
    """The steps :func:`replay` runs, made as they are run, and how many there are.

    ``refire`` as in :func:`replay`: a re-fired step is a deep copy of the
    step's messages, made when it runs, labelled ``re-fire: ...``.
    """

    def again(step: PlannedStep) -> PlannedStep:
        append, context, label, _, where = step
        return (copy.deepcopy(append), context, f"re-fire: {label}", True, where)

    def tool(step: PlannedStep) -> bool:
        return any(m.get("role") == "tool" for m in as_batch(step[0]))

    def run() -> Iterator[PlannedStep]:
        for step in steps():
            yield step
            if refire == "results" and tool(step):
                yield again(step)
        if refire == "steps":
            yield from map(again, steps())

    total = sum(1 for _ in steps())
    if refire == "steps":
        total *= 2
    elif refire == "results":
        total += sum(1 for step in steps() if tool(step))
    return total, run()


def stream_replay(
    scenario: Scenario,
    steps: Callable[[], Iterable[PlannedStep]] | None = None,
    *,
    refire: Refire = "none",
    store: Store | None = None,
    progress: Callable[[int, int], None] | None = None,
    validated: bool = False,
) -> tuple[Timeline, Iterator[StepRecord]]:
    """Like :func:`replay`, but each step's record is yielded as it is made and not kept.

    For a command that prints each step and forgets it, so memory does not
    grow with the records. The timeline returned keeps no steps (its buffers
    cannot be rebuilt); its store holds the buffer. ``steps`` makes the steps
    afresh each call (``(append, context, label, refire, origins)``), for a
    caller that has the messages and no :class:`ScenarioStep` per message;
    ``None``: the scenario's steps. Nothing runs until the records are read.
    """
    if steps is None:
        if not validated:
            _validate(scenario)

        def steps() -> Iterator[PlannedStep]:
            for step in scenario.steps:
                yield (step.append, step.context, step.label, step.refire, [])

    timeline = _timeline(scenario, store, keep_steps=False)
    total, plan = _planned(steps, refire)

    def records() -> Iterator[StepRecord]:
        for done, (append, context, label, again, where) in enumerate(plan, start=1):
            yield timeline.append_step(
                append, context=context, label=label, refire=again, origins=where
            )
            if progress is not None:
                progress(done, total)

    return timeline, records()


def _groups(conv: ImportedConversation, per: Per) -> list[list[int]]:
    if per == "message":
        return [[k] for k in range(len(conv.messages))]
    if per == "turn":
        return conv.turns
    raise ReplayError(f"per: expected 'message' or 'turn', got {per!r}")


def step_origins(conv: ImportedConversation, per: Per = "message") -> list[list[str]]:
    """Per step of :func:`conversation_to_scenario`, where its messages came from in the file."""
    return [[conv.origins[k] for k in group] for group in _groups(conv, per)]


def _step(label: str, append: dict[str, Any] | list[dict[str, Any]]) -> ScenarioStep:
    """``ScenarioStep.model_construct(label=label, append=append)``, made directly.

    The importer's messages are message objects already, and one step per
    message makes this the replay's setup cost.
    """
    step = _new_object(ScenarioStep)
    _set_dict(
        step,
        "__dict__",
        {"label": label, "append": append, "context": None, "text": None, "refire": False},
    )
    _set_fields_set(step, {"label", "append"})
    _set_extra(step, None)
    _set_private(step, None)
    return step  # type: ignore[no-any-return]


def conversation_to_scenario(
    conv: ImportedConversation,
    *,
    per: Per = "message",
    config: ScenarioConfig | None = None,
    context: dict[str, Any] | None = None,
    name: str | None = None,
    copies: bool = True,
) -> Scenario:
    """Turn a recorded conversation into appends: one per message, or one per recorded turn.

    Each step's label says where its messages came from in the file. Without
    a context, the steps run under ``{"session_id": "replay"}`` so the default
    ``session`` scope resolves. ``copies``: each step appends a shallow copy of
    its message, so the scenario aliases nothing of ``conv``; a caller that owns
    the import and changes neither (the command line) passes ``False`` and keeps
    one dict per message, not two.
    """
    messages, origins = conv.messages, conv.origins
    if per == "message":  # the commonest: one step per message, labelled by its origin
        steps = [
            _step(origin, dict(message) if copies else message)
            for message, origin in zip(messages, origins, strict=True)
        ]
    else:
        steps = []
        for group in _groups(conv, per):
            where = [origins[k] for k in group]
            label = where[0] if len(where) == 1 else f"{where[0]} … {where[-1]}"
            # Shallow copies, as validating ``append`` would make: no alias of the import.
            steps.append(_step(label, [dict(messages[k]) for k in group]))
    return Scenario(
        name=name or conv.name,
        title=f"{conv.name} ({conv.format}, one append per {per})",
        config=config or ScenarioConfig(),
        context=context if context is not None else {"session_id": "replay"},
        steps=steps,
    )


def replay_conversation(
    conv: ImportedConversation,
    *,
    per: Per = "message",
    config: ScenarioConfig | None = None,
    context: dict[str, Any] | None = None,
    refire: Refire = "none",
    store: Store | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Timeline:
    """Replay a recorded conversation, keeping each step's origins in the file."""
    scenario = conversation_to_scenario(conv, per=per, config=config, context=context)
    return replay(
        scenario, refire=refire, store=store, progress=progress, origins=step_origins(conv, per)
    )


class Mismatch(BaseModel):
    """One expectation a step did not meet."""

    scenario: str
    step: int
    field: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return (
            f"{self.scenario}: step {self.step}: {self.field}: expected "
            f"{json.dumps(self.expected, ensure_ascii=False)}, got {json.dumps(self.got, ensure_ascii=False)}"
        )


class CheckResult(BaseModel):
    """A scenario replayed against its ``expect`` list."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scenario: Scenario
    timeline: Timeline
    mismatches: list[Mismatch]

    @property
    def passed(self) -> bool:
        return not self.mismatches


def check(scenario: Scenario, *, store: Store | None = None) -> CheckResult:
    """Replay ``scenario`` and compare each step with ``expect[i]`` (fields given only)."""
    timeline = replay(scenario, store=store)
    mismatches: list[Mismatch] = []
    for k, expected in enumerate(scenario.expect):
        record = timeline.steps[k]
        wanted = expected.model_dump(exclude_none=True)
        provider = wanted.pop("provider", None)
        got_fields: dict[str, Any] = {}
        if "messages" in wanted or provider:
            buffer = timeline.buffer_after(k + 1)
            got_fields["messages"] = buffer
            if provider:
                report = normalize_report(buffer)  # MEM-5
                got_fields["provider.messages"] = report.messages
                got_fields["provider.dropped"] = report.dropped
                wanted.update({f"provider.{name}": v for name, v in provider.items()})
        for field, want in wanted.items():
            got = got_fields[field] if field in got_fields else getattr(record, field)
            if got != want:
                mismatches.append(
                    Mismatch(
                        scenario=scenario.name, step=k + 1, field=field, expected=want, got=got
                    )
                )
    return CheckResult(scenario=scenario, timeline=timeline, mismatches=mismatches)
