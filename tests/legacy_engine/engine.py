"""The append engine: GR-MEM's buffer rules as a pure, indexed data structure.

:class:`Buffer` holds the entries of one buffer together with the indexes the
rules need (who declares each call id, who answers it, which calls are still
open), so an append costs O(incoming + evictions + placeholders inserted) and
never walks the buffer. :func:`append_messages` is the pure form used by
scopes, storage and replay: build a buffer, append, return the new list.

Rules implemented here (see ``shared/spec/GR-MEM.md``): MEM-1 and MEM-10
(tool results: dedup and placeholder replacement), MEM-2 (assistant-turn
dedup), MEM-3 (healing at a user turn), MEM-11 (one reader of call ids, in
:mod:`flowdrop_core.messages`), MEM-14 (the report), MEM-16 / step 5 (an empty
user message is a pure read) and the window (step 6). No I/O happens here.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from .events import Event, EventKind
from .messages import (
    InvalidMessagesError,
    MessageProblem,
    ParsedMessage,
    content_is_empty,
    make_placeholder,
    read_message,
    read_messages,
    to_stored_row,
)

__all__ = ["AppendResult", "Buffer", "append_messages", "as_batch", "check_window"]

_APPENDED = EventKind.APPENDED
_EVICTED = EventKind.EVICTED
_CHANGES = frozenset(
    {
        EventKind.APPENDED,
        EventKind.PLACEHOLDER_INSERTED,
        EventKind.PLACEHOLDER_REPLACED,
        EventKind.EVICTED,
    }
)


class AppendResult(BaseModel):
    """What one append reports (MEM-14), with the events that explain it.

    ``appended`` counts incoming messages that became new entries; it is
    never derived from the change in ``count``, because eviction can hide an
    append and healing can grow the buffer with no append at all. ``messages``
    is the buffer after the call; :meth:`Buffer.append` leaves it ``None`` to
    stay O(1) (call :meth:`Buffer.messages` when you need it).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    count: int
    appended: int
    appended_any: bool
    messages: list[dict[str, Any]] | None = None
    events: tuple[Event, ...] = ()
    max_messages: int = 0

    @property
    def changed(self) -> bool:
        """True when the buffer after differs from the buffer before."""
        return any(ev.kind in _CHANGES for ev in self.events)

    def tally(self) -> Counter[str]:
        """How many events of each kind this append produced (for timelines)."""
        return Counter(str(ev.kind) for ev in self.events)

    def summary(self) -> dict[str, Any]:
        """The three MEM-14 fields as a plain dict."""
        return {"count": self.count, "appended": self.appended, "appended_any": self.appended_any}


_FIELDS = {"count", "appended", "appended_any", "messages", "events", "max_messages"}
_new_object = object.__new__
_set_dict = object.__setattr__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _result(
    count: int,
    appended: int,
    events: list[Event],
    max_messages: int,
) -> AppendResult:
    """Build an :class:`AppendResult` without re-validating what the engine computed.

    Equivalent to ``AppendResult.model_construct`` with every field given, at
    a third of its cost; the engine calls it once per append, and the
    benchmark shows it is the single largest cost of a one-message append.
    """
    res = _new_object(AppendResult)
    _set_dict(
        res,
        "__dict__",
        {
            "count": count,
            "appended": appended,
            "appended_any": appended > 0,
            "messages": None,
            "events": tuple(events),
            "max_messages": max_messages,
        },
    )
    _set_fields_set(res, _FIELDS.copy())  # pydantic updates this set in place (model_copy)
    _set_extra(res, None)
    _set_private(res, None)
    return res


# A node is a small list rather than an object: the engine makes one per
# appended message, and a list costs a third of a slotted instance.
# Layout: [entry, seq, calls, result_id, healed]. ``seq`` is dense: the node at
# position p has seq == head seq + p, so a position is one subtraction away.
_ENTRY, _SEQ, _CALLS, _RID, _HEALED = range(5)
_Node = list  # type alias for readability: list[Any] in the layout above

# Events on the hot path (appended, evicted) are built with tuple.__new__,
# which skips the named tuple's Python-level constructor.
_new_event = tuple.__new__


def as_batch(incoming: Any) -> list[Any]:
    """One message or a list of messages, as a list (the input is not modified)."""
    if isinstance(incoming, Mapping):
        return [incoming]
    if isinstance(incoming, list | tuple):
        return list(incoming)
    raise InvalidMessagesError(
        [
            MessageProblem(
                "incoming",
                0,
                f"expected a message object or a list of messages, got {type(incoming).__name__}",
            )
        ]
    )


def check_window(max_messages: int) -> int:
    """The window (GR-MEM step 6): an integer >= 0, where 0 means no cap."""
    if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 0:
        raise ValueError(f"max_messages must be an integer >= 0 (0 = no cap), got {max_messages!r}")
    return max_messages


class Buffer:
    """An in-memory conversation buffer that keeps its own indexes.

    ``entries`` (either shape) are kept verbatim; what the engine writes is a
    stored row. ``append`` costs O(incoming + evictions + placeholders
    inserted): the indexes say who declares each call id (MEM-2, MEM-3), who
    answers it (MEM-1, MEM-10) and which calls are still open (MEM-3). The
    window is applied at the end of every append, so a buffer built over its
    cap is trimmed by its next append, with eviction events.
    """

    __slots__ = ("_answers", "_declared", "_next_seq", "_nodes", "_open", "max_messages")

    def __init__(self, entries: Iterable[Any] = (), max_messages: int = 0) -> None:
        self.max_messages = check_window(max_messages)
        self._nodes: deque[_Node] = deque()
        self._declared: dict[str, list[_Node]] = {}  # call id -> declaring turns, oldest first
        self._answers: dict[str, list[_Node]] = {}  # call id -> results, oldest first
        self._open: dict[str, None] = {}  # declared, answered nowhere (insertion-ordered set)
        self._next_seq = 0
        for msg in read_messages(entries, where="buffer"):
            self._push(msg, msg.raw)  # type: ignore[arg-type]  # kept verbatim

    # -- reading ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def messages(self) -> list[dict[str, Any]]:
        """The current entries, oldest first (the dicts themselves, not copies)."""
        return [node[_ENTRY] for node in self._nodes]

    def open_calls(self) -> list[str]:
        """Declared call ids with no result anywhere in the buffer (what MEM-3 would heal)."""
        return list(self._open)

    # -- the append ------------------------------------------------------------

    def append(self, incoming: Any) -> AppendResult:
        """Append one message or a list; return the MEM-14 report and its events.

        Every message is validated first: a malformed one raises
        :class:`InvalidMessagesError` and the buffer is unchanged.
        """
        if type(incoming) is dict:
            parsed = read_message(incoming)
            if type(parsed) is str:
                raise InvalidMessagesError([MessageProblem("incoming", 0, parsed)])
            batch: list[ParsedMessage] = [parsed]  # type: ignore[list-item]
        else:
            batch = read_messages(as_batch(incoming))
        events: list[Event] = []
        appended = 0
        for i, msg in enumerate(batch):
            role = msg[0]
            if role == "tool":
                appended += self._tool_result(i, msg, events)
            elif role == "assistant":
                appended += self._assistant_turn(i, msg, events)
            elif role == "user" and content_is_empty(msg[1]):
                events.append(Event(EventKind.PURE_READ, "MEM-16", i, None))
            else:
                if role == "user" and self._open:
                    self._heal(i, events)
                self._append_new(i, msg, events)
                appended += 1
        if not batch:
            events.append(Event(EventKind.PURE_READ, "MEM-16", None, None))
        if self.max_messages and len(self._nodes) > self.max_messages:
            self._evict(events)
        return _result(len(self._nodes), appended, events, self.max_messages)

    def _tool_result(self, i: int, msg: ParsedMessage, events: list[Event]) -> int:
        """MEM-1 / MEM-10: drop a duplicate, replace a placeholder, or append.

        An id counts as answered only by a real (not healed) result; a healed
        placeholder is replaced in place by the first real result, and an
        incoming message itself marked healed never replaces anything.
        """
        rid = msg[3]
        if rid is None:
            node = self._append_new(i, msg, events)
            events.append(
                Event(
                    EventKind.IDLESS_RESULT, "MEM-11", i, self._position(node), None, node[_ENTRY]
                )
            )
            return 1
        holders = self._answers.get(rid)
        if holders is None:
            self._append_new(i, msg, events)
            return 1
        real = next((n for n in holders if not n[_HEALED]), None)
        if real is None and not msg[4]:
            node = holders[0]
            node[_ENTRY] = to_stored_row(msg)
            node[_HEALED] = False
            events.append(
                Event(
                    EventKind.PLACEHOLDER_REPLACED,
                    "MEM-10",
                    i,
                    self._position(node),
                    rid,
                    node[_ENTRY],
                )
            )
            return 0
        held = holders[0] if real is None else real
        events.append(Event(EventKind.DUPLICATE_RESULT, "MEM-1", i, self._position(held), rid))
        return 0

    def _assistant_turn(self, i: int, msg: ParsedMessage, events: list[Event]) -> int:
        """MEM-2: a turn is a duplicate only when every call id it declares is declared."""
        calls = msg[2]
        declared = self._declared
        if calls and all(cid in declared for cid in calls):
            first = declared[calls[0]][0]
            events.append(
                Event(EventKind.DUPLICATE_TURN, "MEM-2", i, self._position(first), calls[0])
            )
            return 0
        self._append_new(i, msg, events)
        return 1

    def _heal(self, i: int, events: list[Event]) -> None:
        """MEM-3: insert a placeholder for every open call, right after its declaring turn.

        Several placeholders for one turn keep that turn's declaration order
        (GR-MEM decision). The entries from the earliest declaring turn on are
        re-laid once with the placeholders in place, so the cost is the length
        of that tail plus the placeholders. Open calls come from turns
        appended since the last user turn, so that tail is the current
        exchange, not the buffer (only a buffer loaded with stale open calls
        pays for its length, once).
        """
        by_turn: dict[int, set[str]] = {}
        for cid in self._open:
            by_turn.setdefault(self._declared[cid][0][_SEQ], set()).add(cid)
        self._open.clear()
        nodes = self._nodes
        first_seq = min(by_turn)
        tail = [nodes.pop() for _ in range(first_seq - nodes[0][_SEQ], len(nodes))]
        seq = first_seq
        answers = self._answers
        while tail:
            node = tail.pop()
            wanted = by_turn.get(node[_SEQ])
            node[_SEQ] = seq
            seq += 1
            nodes.append(node)
            if wanted is None:
                continue
            for cid in node[_CALLS]:
                if cid in wanted:
                    entry = make_placeholder(cid)
                    placeholder = [entry, seq, (), cid, True]
                    seq += 1
                    nodes.append(placeholder)
                    answers.setdefault(cid, []).append(placeholder)
                    events.append(
                        Event(
                            EventKind.PLACEHOLDER_INSERTED, "MEM-3", i, len(nodes) - 1, cid, entry
                        )
                    )
        self._next_seq = seq

    def _evict(self, events: list[Event]) -> None:
        """Window (GR-MEM step 6): drop the oldest entries down to ``max_messages``.

        Cited as MEM-14 because that rule is why eviction must not lower
        ``appended``; GR-MEM gives the window no rule id of its own.
        """
        nodes = self._nodes
        cap = self.max_messages
        while len(nodes) > cap:
            node = nodes.popleft()
            if node[_CALLS] or node[_RID] is not None:
                self._forget(node)
            events.append(
                _new_event(Event, (_EVICTED, "MEM-14", None, 0, node[_RID], node[_ENTRY], cap))
            )

    # -- bookkeeping -------------------------------------------------------------

    def _position(self, node: _Node) -> int:
        return node[_SEQ] - self._nodes[0][_SEQ]

    def _append_new(self, i: int, msg: ParsedMessage, events: list[Event]) -> _Node:
        """Append an incoming message as a stored row; record the event (counts 1)."""
        node = self._push(msg, to_stored_row(msg))
        events.append(
            _new_event(
                Event, (_APPENDED, "MEM-14", i, len(self._nodes) - 1, msg[3], node[_ENTRY], None)
            )
        )
        return node

    def _push(self, msg: ParsedMessage, entry: dict[str, Any]) -> _Node:
        """Add an entry at the end and index what it declares and answers."""
        calls = msg[2]
        rid = msg[3]
        node = [entry, self._next_seq, calls, rid, msg[4]]
        self._next_seq += 1
        self._nodes.append(node)
        for cid in calls:
            holders = self._declared.get(cid)
            if holders is None:
                self._declared[cid] = [node]
                if cid not in self._answers:
                    self._open[cid] = None
            else:
                holders.append(node)
        if rid is not None:
            answers = self._answers.get(rid)
            if answers is None:
                self._answers[rid] = [node]
                self._open.pop(rid, None)
            else:
                answers.append(node)
        return node

    def _forget(self, node: _Node) -> None:
        """Remove an evicted node from the indexes."""
        for cid in node[_CALLS]:
            holders = self._declared[cid]
            _remove(holders, node)
            if not holders:
                del self._declared[cid]
                self._open.pop(cid, None)
        rid = node[_RID]
        if rid is not None:
            answers = self._answers[rid]
            _remove(answers, node)
            if not answers:
                del self._answers[rid]
                if rid in self._declared:
                    self._open[rid] = None  # its declaring turn is still here: open again


def _remove(nodes: list[_Node], node: _Node) -> None:
    """Remove ``node`` by identity (lists compare by value, nodes must not)."""
    for k, other in enumerate(nodes):
        if other is node:
            del nodes[k]
            return


def append_messages(entries: Sequence[Any], incoming: Any, max_messages: int = 0) -> AppendResult:
    """Pure form of :meth:`Buffer.append`: return the result with ``messages`` set.

    The inputs are never mutated; untouched entries of ``entries`` appear in
    ``messages`` as the same dict objects.
    """
    buf = Buffer(entries, max_messages)
    return buf.append(incoming).model_copy(update={"messages": buf.messages()})
