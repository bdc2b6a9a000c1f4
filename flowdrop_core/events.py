"""Events: one per decision the append engine makes, each citing its rule.

Events are the engine's explanation of a step. They carry enough to tell a
person why something happened (``reason``) and enough to rebuild the buffer
after a step from the buffer before it (:func:`apply_events`), without
re-running any rule. They are named tuples rather than pydantic models
because the engine creates one or two per appended message on its hot path,
where a tuple costs a fraction of a model.

:data:`EFFECTS` is the one table of what each kind does: to the buffer (and
so to a store's delta), to a step's counts (appended, placeholders inserted,
evictions, replacements, duplicates dropped), to a tool call's lifecycle,
which verdict word it gives a step, which rule it carries and how its reason
reads. Every layer that acts on a kind (replaying events, the timeline's
tallies and tags, the storage delta, the verdict, the call lifecycle, the
health report) reads this table, so a new kind is one row here (plus its
label and glossary entry in the inspector), and a kind without a row fails
loudly (:func:`effect_of`) instead of being skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NamedTuple

__all__ = [
    "EFFECTS",
    "Effect",
    "Event",
    "EventKind",
    "Parts",
    "apply_events",
    "apply_in_place",
    "effect_of",
    "tally_parts",
]


class EventKind(StrEnum):
    """What the engine decided about one message or one buffer entry."""

    APPENDED = "appended"
    DUPLICATE_RESULT = "duplicate_result"
    DUPLICATE_TURN = "duplicate_turn"
    PLACEHOLDER_REPLACED = "placeholder_replaced"
    PLACEHOLDER_INSERTED = "placeholder_inserted"
    EVICTED = "evicted"
    PURE_READ = "pure_read"
    IDLESS_RESULT = "idless_result"
    REFUSED = "refused"
    UNSERIALIZED = "unserialized"


class Event(NamedTuple):
    """One decision of an append.

    ``incoming_index`` is the index, in the call's incoming batch, of the
    message the decision concerns (``None`` for evictions and for an empty
    batch). ``position`` is the buffer position touched, counted in the buffer
    as it stands at the moment of the event, so applying a step's events in
    order to the buffer before the step yields the buffer after it. For a
    duplicate it is the position of the entry already holding the id.
    ``entry`` is the entry written (appended, inserted, replacement) or
    removed (evicted). ``max_messages`` is set on evictions.
    """

    kind: EventKind
    rule: str
    incoming_index: int | None = None
    position: int | None = None
    tool_call_id: str | None = None
    entry: dict[str, Any] | None = None
    max_messages: int | None = None

    @property
    def counts(self) -> int:
        """How much this event adds to ``appended`` (MEM-14): 1 for an appended message."""
        return 1 if effect_of(self.kind).part == "appended" else 0

    @property
    def reason(self) -> str:
        """A one-sentence, human-readable explanation citing the rule (its kind's ``explain``)."""
        return effect_of(self.kind).explain(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the reason spelled out."""
        return {
            "kind": str(self.kind),
            "rule": self.rule,
            "incoming_index": self.incoming_index,
            "position": self.position,
            "tool_call_id": self.tool_call_id,
            "entry": self.entry,
            "max_messages": self.max_messages,
            "reason": self.reason,
        }


#: The index of each :class:`Event` field, in an event or in a decision tuple laid
#: out like one (:meth:`~flowdrop_core.engine.AppendResult.decisions`): a layer that
#: reads tuples reads them by these names.
KIND, RULE, INCOMING, POSITION, CALL_ID, ENTRY, WINDOW = range(7)
assert Event._fields == (  # the names above follow the fields' order
    "kind",
    "rule",
    "incoming_index",
    "position",
    "tool_call_id",
    "entry",
    "max_messages",
)


#: What a kind does to the buffer: insert ``entry`` at ``position``, replace the
#: entry there, or delete it (the store operation of the same name, see
#: :mod:`flowdrop_core.storage._delta`). ``None``: the buffer is unchanged.
Change = Literal["insert", "replace", "delete"]
#: The count of a step a kind adds one to (MEM-14: count after = before +
#: appended + inserted - evicted; replaced and dropped say why an incoming
#: message added nothing).
Part = Literal["appended", "inserted", "evicted", "replaced", "dropped"]
#: What a kind does to a tool call's lifecycle (:mod:`flowdrop_core.inspect.lifecycle`):
#: ``added`` declares calls or answers one, ``removed`` takes them out of the window.
LifeStep = Literal[
    "added", "duplicate_result", "duplicate_turn", "placeholder", "replaced", "removed"
]


@dataclass(frozen=True, slots=True)
class Effect:
    """What one decision kind does, read by every layer that acts on events.

    ``rule``: the rule the kind carries (the engine cites it). ``change``:
    what it does to the buffer and to a store. ``part``: the count of a
    step it adds one to. ``lifecycle``: what it does to a call's lifecycle.
    ``verdict``: the verdict word it gives a step (:mod:`flowdrop_core.verdicts`
    decides between the words a step's kinds give). ``tag``: how the entry it
    writes (or, for a delete, removes) is tagged in a step's before / after
    view. ``explain``: the event's one-sentence reason.
    """

    rule: str
    change: Change | None
    part: Part | None
    lifecycle: LifeStep | None
    verdict: str | None
    tag: str | None
    explain: Callable[[Event], str]


def _where(ev: Event) -> str:
    return f" at buffer position {ev.position} (0-based)" if ev.position is not None else ""


def _cid(ev: Event) -> str:
    return f" {ev.tool_call_id!r}" if ev.tool_call_id else ""


def _explain_appended(ev: Event) -> str:
    role = (ev.entry or {}).get("role", "message")
    return f"{ev.rule}: new {role} entry appended{_where(ev)}; counts 1 toward appended."


def _explain_duplicate_result(ev: Event) -> str:
    return (
        f"{ev.rule}: tool result for call{_cid(ev)} dropped as a duplicate; "
        f"the call is already answered{_where(ev)}. Counts 0."
    )


def _explain_duplicate_turn(ev: Event) -> str:
    return (
        f"{ev.rule}: assistant turn dropped as a duplicate; every call it "
        f"declares is already declared (first{_where(ev)}). Counts 0."
    )


def _explain_replaced(ev: Event) -> str:
    return (
        f"{ev.rule}: real result for call{_cid(ev)} replaced the healed placeholder "
        f"in place{_where(ev)}. Counts 0: no new entry."
    )


def _explain_inserted(ev: Event) -> str:
    return (
        f"{ev.rule}: call{_cid(ev)} had no result before a user turn; a healed "
        f"placeholder was inserted{_where(ev)}, after its declaring turn. "
        "Not an incoming message: counts 0."
    )


def _explain_evicted(ev: Event) -> str:
    return (
        f"{ev.rule}: window of {ev.max_messages} evicted the oldest entry{_where(ev)}. "
        "Eviction never lowers appended."
    )


def _explain_pure_read(ev: Event) -> str:
    if ev.incoming_index is None:
        return f"{ev.rule}: empty batch; nothing appended."
    return (
        f"{ev.rule}: user message with empty content is a pure read, not a turn: "
        "nothing appended, nothing healed."
    )


def _explain_idless(ev: Event) -> str:
    return (
        f"{ev.rule}: tool result has no usable tool_call_id, so it cannot be "
        "deduplicated; it was appended anyway (warning)."
    )


def _explain_refused(ev: Event) -> str:
    return (
        f"{ev.rule}: identity scope refused (no usable id); storage was not "
        "touched and the buffer reads empty. Counts 0."
    )


def _explain_unserialized(ev: Event) -> str:
    return (
        f"{ev.rule}: the slot lock was not acquired within the bound; the append "
        "ran unserialized rather than fail or drop the turn (warning)."
    )


class _Table(dict[Any, Effect]):
    """The table's dict: a kind without a row is a loud ``KeyError`` naming where to add it."""

    def __missing__(self, kind: Any) -> Effect:
        raise KeyError(
            f"decision kind {str(kind)!r} has no row in flowdrop_core.events.EFFECTS "
            "(CONTRIBUTING.md: a new decision kind)"
        )


#: What each decision kind does (see :class:`Effect`): the one place it is written.
EFFECTS: dict[Any, Effect] = _Table(
    {
        # kind: Effect(rule, change, part, lifecycle, verdict, tag, explain)
        EventKind.APPENDED: Effect(
            "MEM-14", "insert", "appended", "added", "appended", "new", _explain_appended
        ),
        EventKind.DUPLICATE_RESULT: Effect(
            "MEM-1", None, "dropped", "duplicate_result", "dropped", None, _explain_duplicate_result
        ),
        EventKind.DUPLICATE_TURN: Effect(
            "MEM-2", None, "dropped", "duplicate_turn", "dropped", None, _explain_duplicate_turn
        ),
        EventKind.PLACEHOLDER_REPLACED: Effect(
            "MEM-10", "replace", "replaced", "replaced", "replaced", "replaced", _explain_replaced
        ),
        EventKind.PLACEHOLDER_INSERTED: Effect(
            "MEM-3",
            "insert",
            "inserted",
            "placeholder",
            "healed",
            "placeholder inserted",
            _explain_inserted,
        ),
        EventKind.EVICTED: Effect(
            "MEM-14", "delete", "evicted", "removed", None, "evicted", _explain_evicted
        ),
        EventKind.PURE_READ: Effect(
            "MEM-16", None, None, None, "pure read", None, _explain_pure_read
        ),
        EventKind.IDLESS_RESULT: Effect("MEM-11", None, None, None, None, None, _explain_idless),
        EventKind.REFUSED: Effect("MEM-7", None, None, None, "refused", None, _explain_refused),
        EventKind.UNSERIALIZED: Effect(
            "MEM-12", None, None, None, None, None, _explain_unserialized
        ),
    }
)


def effect_of(kind: Any) -> Effect:
    """The row of ``kind`` (an :class:`EventKind` or its string); a kind without one raises."""
    return EFFECTS[kind]


class Parts(NamedTuple):
    """A step's events counted by :attr:`Effect.part` (MEM-14: what the count change is made of)."""

    appended: int
    inserted: int
    evicted: int
    replaced: int
    dropped: int

    @property
    def growth(self) -> int:
        """The change in the buffer's length these events make: appended + inserted - evicted."""
        return self.appended + self.inserted - self.evicted


def tally_parts(events: Iterable[Any]) -> Parts:
    """Count a step's events (or decision tuples, kind first) by the part of the count they are.

    One pass, one table lookup per event (one event for most steps).
    """
    appended = inserted = evicted = replaced = dropped = 0
    table = EFFECTS
    for ev in events:
        part = table[ev[KIND]].part
        if part is None:
            continue
        if part == "appended":
            appended += 1
        elif part == "evicted":
            evicted += 1
        elif part == "inserted":
            inserted += 1
        elif part == "replaced":
            replaced += 1
        else:
            dropped += 1
    return Parts(appended, inserted, evicted, replaced, dropped)


def apply_events(
    entries: Iterable[dict[str, Any]], events: Iterable[Event]
) -> list[dict[str, Any]]:
    """Rebuild the buffer after a step from the buffer before it and the step's events.

    Only the kinds that change the buffer act, as :data:`EFFECTS` says: an
    insert puts ``entry`` at ``position``, a replace sets it there, a delete
    removes ``position``. Nothing is re-derived, so this is how the inspector
    travels through a timeline without storing every buffer.
    """
    out = list(entries)
    apply_in_place(out, events)
    return out


def apply_in_place(entries: list[dict[str, Any]], events: Iterable[Event]) -> None:
    """:func:`apply_events` on ``entries`` itself: O(events), no copy."""
    table = EFFECTS
    for ev in events:
        change = table[ev.kind].change
        if change is None:
            continue
        position: int = ev.position  # type: ignore[assignment]  # set on every change
        if change == "insert":
            if position == len(entries):
                entries.append(ev.entry)  # type: ignore[arg-type]
            else:
                entries.insert(position, ev.entry)  # type: ignore[arg-type]
        elif change == "replace":
            entries[position] = ev.entry  # type: ignore[assignment]
        else:
            del entries[position]


def _check(table: Mapping[Any, Effect]) -> None:
    """Every kind has its row (checked once, at import: a missing one is found at once)."""
    missing = [str(kind) for kind in EventKind if kind not in table]
    if missing:  # pragma: no cover - a kind added without its row
        raise KeyError(f"EventKind {missing} without a row in EFFECTS")


_check(EFFECTS)
