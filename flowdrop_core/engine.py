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

The append is lean: each incoming message is read, validated and written as
a stored row in one pass (:func:`~flowdrop_core.messages.read_row`), each
decision is recorded as a plain tuple laid out like an :class:`Event` (the
commonest one, a message appended as its append's first decision, and every
eviction as the node itself, described when first read), and the result is
a plain slotted :class:`AppendResult` whose ``Event`` objects are built only
when a caller reads ``events``; a result the caller has let go of is reused
by the next append (not a large batch's, so no append frees another's events). An independent oracle (``tests/oracle.py``) holds it to
the rules on random conversations.
"""

from __future__ import annotations

import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any, ClassVar, Self

from flowdrop_core._results import LazyValue, PlainResult
from flowdrop_core.events import EFFECTS, ENTRY, KIND, POSITION, Event, EventKind
from flowdrop_core.messages import (
    PLACEHOLDER_CONTENT,
    InvalidMessagesError,
    MessageProblem,
    make_placeholder,
    read_dict_row,
    read_messages,
    read_row,
)

__all__ = ["AppendResult", "Buffer", "append_messages", "as_batch", "check_window"]

_APPENDED = EventKind.APPENDED
_EVICTED = EventKind.EVICTED
_DUPLICATE_RESULT = EventKind.DUPLICATE_RESULT
_DUPLICATE_TURN = EventKind.DUPLICATE_TURN
_REPLACED = EventKind.PLACEHOLDER_REPLACED
_INSERTED = EventKind.PLACEHOLDER_INSERTED
_PURE_READ = EventKind.PURE_READ
_IDLESS = EventKind.IDLESS_RESULT

_new_object = object.__new__
_new_event = tuple.__new__

# Buffer.append reuses its previous result when nobody else holds it, as
# CPython's zip() and dict.items() reuse their result tuples: a reference count
# of 3 is the buffer's own reference, the local name and the argument of the
# count (``_COUNT_WHEN_FREE``). That holds only where a local name and an
# argument each hold a reference: proven for CPython 3.11 to 3.13 with its GIL
# running this module as source (``_reuse_proven``). CPython 3.14 may load a
# local without a reference, and a compiled (mypyc) engine does, so a held
# result could count 3 there and be overwritten: everywhere else every append
# makes a new result. Where it is allowed, the rule is also checked by
# behaviour once, at import (``_calibrated``): a held result is never reused,
# a released one is, or reuse is off.
_COUNT_WHEN_FREE = 3

#: A batch of more messages than this gets a result the buffer does not keep
#: (``None`` stands for it until it is made; its count is never 3): freeing a
#: kept result's events falls to the next append, which would pay for the
#: whole batch.
_KEEP_AT_MOST = 64


def _never_free(obj: object, /) -> int:
    """The count that turns result reuse off: no result ever counts as free."""
    return 0


def _reuse_proven(
    implementation: str = sys.implementation.name,
    version: tuple[int, int] = (sys.version_info[0], sys.version_info[1]),
    gil: bool | None = None,
    source: str = __file__,
) -> bool:
    """Whether the interpreter is one where the reference count rule above is proven."""
    if gil is None:
        gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    return (
        implementation == "cpython"
        and (3, 11) <= version < (3, 14)
        and gil
        and (source.endswith(".py"))
    )


def _decision(
    kind: EventKind,
    rule: str,
    incoming: int | None,
    position: int | None,
    call_id: str | None = None,
    entry: dict[str, Any] | None = None,
    window: int | None = None,
) -> tuple[Any, ...]:
    """One decision, recorded as a plain tuple laid out like :class:`Event`.

    The engine names every field it records through this function (a tuple
    costs a fraction of the named tuple's own constructor).
    """
    return (kind, rule, incoming, position, call_id, entry, window)


def _evicted(node: list[Any], cap: int) -> tuple[Any, ...]:
    """The ``EVICTED`` decision of a node the window dropped, laid out like :class:`Event`.

    The window records an eviction as the evicted node itself (cheaper than
    the tuple on the hot path); the node is detached by then, so its entry and
    id no longer change and the tuple can be made whenever it is first read.
    """
    return _decision(
        _EVICTED, "MEM-14", None, 0, call_id=node[_RID], entry=node[_ENTRY], window=cap
    )


def _appended(node: list[Any], length: int, n: int) -> tuple[Any, ...]:
    """The ``APPENDED`` decision recorded as its node: the first of ``n``, ``length`` after.

    The append records the message it appends as its first decision, the
    commonest one, as the node itself (see :meth:`Buffer.append`): then the
    message is incoming index 0, the decisions after it are the ``n - 1``
    evictions, so it went in at position ``length + n - 2``, and its entry
    and id never change (only a healed placeholder's entry is replaced, and
    those are recorded as tuples).
    """
    return _decision(_APPENDED, "MEM-14", 0, length + n - 2, call_id=node[_RID], entry=node[_ENTRY])


def _decision_tuples(decisions: list[Any], cap: int, length: int) -> list[tuple[Any, ...]]:
    """Every recorded decision as its tuple (see :func:`_events`)."""
    tuples = [d if type(d) is tuple else _evicted(d, cap) for d in decisions]
    if type(decisions[0]) is list:
        tuples[0] = _appended(decisions[0], length, len(decisions))
    return tuples


def _events(decisions: list[Any], cap: int, length: int) -> tuple[Event, ...]:
    """The :class:`Event` objects of recorded decisions (one or two is the common case).

    Every message, or an empty batch, decides something, so the first item
    is a rule's tuple or the appended node (:func:`_appended`); evicted nodes
    come last (:func:`_evicted`). ``length`` is the buffer's after the append.
    """
    n = len(decisions)
    first = decisions[0]
    if type(first) is list:
        first = _appended(first, length, n)
    if n == 1:
        return (_new_event(Event, first),)
    if n == 2:  # one message: its decision and, with a full window, one eviction
        last = decisions[1]
        if type(last) is list:
            last = _evicted(last, cap)
        return (_new_event(Event, first), _new_event(Event, last))
    return tuple(
        [_new_event(Event, first)]
        + [_new_event(Event, d if type(d) is tuple else _evicted(d, cap)) for d in decisions[1:]]
    )


class AppendResult(PlainResult):
    """What one append reports (MEM-14), with the events that explain it.

    ``appended`` counts incoming messages that became new entries; it is
    never derived from the change in ``count``, because eviction can hide an
    append and healing can grow the buffer with no append at all. ``messages``
    is the buffer after the call; :meth:`Buffer.append` leaves it ``None`` to
    stay O(1) (call :meth:`Buffer.messages` when you need it).

    A plain slotted object, made by the engine without ``__init__``: it sets
    the counts and keeps its decisions (tuples laid out like :class:`Event`,
    the appended message and the evictions as their nodes until first read);
    ``events`` is made from them the first time it is read. Fields may be
    assigned. :meth:`to_dict` is the JSON-ready form (:meth:`json_schema`
    describes it) and :meth:`from_dict` reads it back.
    """

    __slots__ = (
        "_events",
        "_length",
        "_messages",
        "appended",
        "appended_any",
        "count",
        "max_messages",
    )

    FIELDS: ClassVar[tuple[str, ...]] = (
        "count",
        "appended",
        "appended_any",
        "messages",
        "events",
        "max_messages",
    )

    count: int
    appended: int
    appended_any: bool
    max_messages: int
    # ``_events``: the events (a tuple) or, until ``events`` is first read, the
    # engine's decisions (a list), and ``_length`` the buffer's length they were
    # made at (``count`` may be reassigned); ``_messages``: a list, None, or a
    # LazyValue.
    _events: tuple[Event, ...] | list[Any]
    _length: int
    _messages: list[dict[str, Any]] | LazyValue | None

    def __init__(
        self,
        *,
        count: int,
        appended: int,
        appended_any: bool | None = None,
        messages: list[dict[str, Any]] | None = None,
        events: Iterable[Event] = (),
        max_messages: int = 0,
    ) -> None:
        self.count = count
        self.appended = appended
        self.appended_any = appended > 0 if appended_any is None else appended_any
        self._messages = messages
        self._events = tuple(events)
        self.max_messages = max_messages

    @property
    def events(self) -> tuple[Event, ...]:
        """The :class:`Event` of every decision, in order (made on first read, then kept)."""
        events = self._events
        if type(events) is tuple:
            return events
        built = _events(events, self.max_messages, self._length)  # type: ignore[arg-type]
        self._events = built
        return built

    @events.setter
    def events(self, value: Iterable[Event]) -> None:
        self._events = tuple(value)

    @property
    def messages(self) -> list[dict[str, Any]] | None:
        """The buffer after the append, or ``None`` (:meth:`Buffer.append` does not copy it)."""
        value = self._messages
        if isinstance(value, LazyValue):
            value = self._messages = value.get()
        return value

    @messages.setter
    def messages(self, value: list[dict[str, Any]] | None) -> None:
        self._messages = value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the fields, each event as :meth:`Event.to_dict` (with its reason)."""
        messages = self.messages
        return {
            "count": self.count,
            "appended": self.appended,
            "appended_any": self.appended_any,
            "messages": None if messages is None else list(messages),
            "events": [ev.to_dict() for ev in self.events],
            "max_messages": self.max_messages,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """A result read back from :meth:`to_dict` (validated; a bad field is a ``ValueError``)."""
        from flowdrop_core._result_schema import read_result

        return cls(**read_result(cls, data))

    def decisions(self) -> Sequence[tuple[Any, ...]]:
        """The events in order, without building :class:`Event` objects.

        For an engine result whose ``events`` were not read yet these are the
        tuples the events will be built from; otherwise, the events
        themselves. Either way each item is laid out like :class:`Event` (read
        it by the field indexes of :mod:`flowdrop_core.events`: ``KIND``,
        ``INCOMING``, ``POSITION``, ``CALL_ID``, ``ENTRY``), so a layer that only needs
        kinds and positions (a storage delta, a tally) can read them cheaply
        (the first read makes the tuples of the appended message and the
        evictions; later reads return the same list). Do not modify them.
        """
        try:
            decisions = self._events
        except AttributeError:
            return ()
        if type(decisions) is list and (type(decisions[0]) is list or type(decisions[-1]) is list):
            decisions = _decision_tuples(decisions, self.max_messages, self._length)
            self._events = decisions
        return decisions

    def appended_at_end(self) -> dict[str, Any] | None:
        """The entry written, when the append's only decision was one message appended at the end.

        The usual append (one message in, nothing dropped, healed or
        evicted): a runtime layer turns it into its one store insert at
        ``count - 1`` without reading the decisions. ``None`` for any other
        append (read :meth:`decisions` then).
        """
        decisions = self._events
        if len(decisions) != 1:
            return None
        first = decisions[0]
        if type(first) is list:  # the appended node (see _appended)
            return first[_ENTRY]  # type: ignore[no-any-return]
        if first[KIND] is _APPENDED and first[POSITION] == self.count - 1:
            return first[ENTRY]  # type: ignore[return-value]
        return None

    @property
    def changed(self) -> bool:
        """True when the buffer after differs from the buffer before."""
        return any(EFFECTS[d[KIND]].change is not None for d in self.decisions())

    def tally(self) -> Counter[str]:
        """How many events of each kind this append produced (for timelines)."""
        return Counter(str(d[KIND]) for d in self.decisions())

    def summary(self) -> dict[str, Any]:
        """The three MEM-14 fields as a plain dict."""
        return {"count": self.count, "appended": self.appended, "appended_any": self.appended_any}


# A node is a small list rather than an object: the engine makes one per
# appended message, and a list costs a third of a slotted instance. The reader
# (``read_row``) returns it ready-made. Layout: [entry, calls, result_id,
# healed, seq]. ``seq`` is dense: the node at position p has seq == head seq +
# p, so a position is one subtraction away.
_ENTRY, _CALLS, _RID, _HEALED, _SEQ = range(5)
_Node = list  # type alias for readability: list[Any] in the layout above


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

    __slots__ = (
        "_answers",
        "_declared",
        "_last",
        "_next_seq",
        "_nodes",
        "_open",
        "_result_class",
        "max_messages",
    )

    #: The class of the results :meth:`append` makes (a runtime layer may use a subclass).
    _result_type: ClassVar[type[AppendResult]] = AppendResult

    def __init__(self, entries: Iterable[Any] = (), max_messages: int = 0) -> None:
        self.max_messages = check_window(max_messages)
        self._nodes: deque[_Node] = deque()
        self._declared: dict[str, list[_Node]] = {}  # call id -> declaring turns, oldest first
        self._answers: dict[str, list[_Node]] = {}  # call id -> results, oldest first
        self._open: dict[str, None] = {}  # declared, answered nowhere (insertion-ordered set)
        self._next_seq = 0
        self._result_class = self._result_type  # an instance slot: read on every append
        # The last result made, reused by the next append once nobody else holds it.
        self._last: AppendResult = _new_object(self._result_class)
        for msg in read_messages(entries, where="buffer"):
            self._push([msg[5], msg[2], msg[3], msg[4], 0])  # the entry is kept verbatim

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
        :class:`InvalidMessagesError` and the buffer is unchanged. The result
        is built on demand (see :class:`AppendResult`); the decisions are
        recorded as tuples laid out like :class:`Event`, except the two
        commonest, kept as the node itself until first read: the message
        appended as the first decision of its append (:func:`_appended`) and
        an eviction (:func:`_evicted`). The result may be the object the
        previous append returned, when the caller no longer holds it: one
        allocation and one free fewer per append; a result anyone holds is
        never changed.

        Each message goes through the rules (:meth:`_place`), then the window
        (GR-MEM step 6). One message, the usual call, is placed without a loop
        over a batch: this is the hot path (``benchmarks/append_bench.py``).
        """
        events: list[Any] = []  # decision tuples, then evicted nodes
        if type(incoming) is dict:
            result: Any = self._last  # reused below when nobody holds it (None: not kept)
            node = read_dict_row(incoming)
            if type(node) is str:
                raise InvalidMessagesError([MessageProblem("incoming", 0, node)])
            appended = self._place(0, node, events)  # type: ignore[arg-type]
        else:
            batch = _read_batch(incoming)
            # A large batch's result is not kept for reuse: kept, its events
            # would be freed by the next append, a spike of milliseconds there.
            result = None if len(batch) > _KEEP_AT_MOST else self._last
            start = len(self._nodes)  # where the batch's first message goes, if appended
            appended = 0
            for i, node in enumerate(batch):
                appended += self._place(i, node, events)
            if not batch:  # MEM-16: an empty batch is a pure read (the window still applies)
                events.append(_decision(_PURE_READ, "MEM-16", None, None))
            elif len(batch) > 1 and type(events[0]) is list:  # the first message, appended
                first = events[0]  # its tuple now: _appended holds for one message only
                events[0] = _decision(
                    _APPENDED, "MEM-14", 0, start, call_id=first[_RID], entry=first[_ENTRY]
                )
        nodes = self._nodes
        # Window (GR-MEM step 6): drop the oldest entries down to max_messages.
        # Cited as MEM-14 because that rule is why eviction must not lower
        # ``appended``; GR-MEM gives the window no rule id of its own.
        cap = self.max_messages
        count = len(nodes)
        if count > cap and cap:
            answers = self._answers
            declared = self._declared
            while count > cap:
                node = nodes.popleft()
                count -= 1
                rid = node[_RID]
                if rid is not None:  # a result (only a tool entry answers; it declares nothing)
                    holders = answers[rid]
                    if len(holders) == 1:  # nearly always: its only answer
                        del answers[rid]
                        if rid in declared:
                            self._open[rid] = None  # its declaring turn is still here: open again
                    else:
                        _remove(holders, node)
                elif node[_CALLS]:
                    for cid in node[_CALLS]:  # a turn's declarations
                        holders = declared[cid]
                        if len(holders) == 1:  # nearly always: its only declaring turn
                            del declared[cid]
                            if cid in self._open:  # never answered: nothing left to heal
                                del self._open[cid]
                        else:
                            _remove(holders, node)
                events.append(node)  # its EVICTED decision is made when read (_evicted)
        if _refs(result) != _COUNT_WHEN_FREE:  # someone holds it (or reuse is off): a new one
            if result is None:  # only the caller holds it, and frees it when done
                result = _new_object(self._result_class)
            else:
                result = self._last = _new_object(self._result_class)
        result.count = result._length = count
        result.appended = appended
        result.appended_any = appended > 0
        result.max_messages = cap
        result._events = events
        result._messages = None
        return result

    def _place(self, i: int, node: _Node, events: list[Any]) -> int:
        """Apply the rules to incoming message ``i``, read as ``node``; 1 if it became an entry.

        The rules run inline, because this is the hot path: MEM-1 / MEM-10
        for a tool result, MEM-11 for one without a usable id, MEM-2 for an
        assistant turn, MEM-16 for an empty user message and MEM-3 before any
        other user turn; everything else is appended (MEM-14). Each decision
        goes to ``events``; the first, when it is this message appended, as
        the node itself (see :func:`_appended`).
        """
        nodes = self._nodes
        # Dispatch on what the reader found: only a tool entry has a result
        # id, only an assistant entry declares calls (MEM-11).
        rid = node[_RID]
        if rid is not None:
            answers = self._answers
            if rid in answers:  # MEM-1 / MEM-10: already answered here
                self._answered(i, node, answers[rid], events)
                return 0
            node[_SEQ] = self._next_seq  # a new result: appended and indexed
            self._next_seq += 1
            nodes.append(node)
            answers[rid] = [node]
            if rid in self._open:  # its call is answered now: no longer open (MEM-3)
                del self._open[rid]
            if events or node[_HEALED]:  # a healed one's entry may be replaced (MEM-10)
                events.append(
                    _decision(
                        _APPENDED, "MEM-14", i, len(nodes) - 1, call_id=rid, entry=node[_ENTRY]
                    )
                )
            else:
                events.append(node)  # the first decision: see _appended
            return 1
        calls = node[_CALLS]
        if calls:
            declared = self._declared
            for cid in calls:
                if cid not in declared:
                    break
            else:  # MEM-2: every call it declares is declared already
                first = declared[calls[0]][0]
                pos = first[_SEQ] - nodes[0][_SEQ]
                events.append(_decision(_DUPLICATE_TURN, "MEM-2", i, pos, call_id=calls[0]))
                return 0
            node[_SEQ] = self._next_seq  # a new turn: appended, its calls indexed
            self._next_seq += 1
            nodes.append(node)
            answers = self._answers
            for cid in calls:
                holders = declared.get(cid)
                if holders is None:
                    declared[cid] = [node]
                    if cid not in answers:
                        self._open[cid] = None
                else:
                    holders.append(node)
            if events:
                events.append(_decision(_APPENDED, "MEM-14", i, len(nodes) - 1, entry=node[_ENTRY]))
            else:
                events.append(node)  # the first decision: see _appended
            return 1
        entry = node[_ENTRY]
        role = entry["role"]
        if role == "user":
            content = entry["content"]  # MEM-16 / step 5: empty content is a pure read
            if not content or (type(content) is str and content.isspace()):
                events.append(_decision(_PURE_READ, "MEM-16", i, None))
                return 0
            if self._open:
                self._heal(i, events)
        elif role == "tool":  # MEM-11: no usable id, no dedup: appended, with a warning
            node[_SEQ] = self._next_seq
            self._next_seq += 1
            nodes.append(node)
            pos = len(nodes) - 1
            events.append(_decision(_APPENDED, "MEM-14", i, pos, entry=entry))
            events.append(_decision(_IDLESS, "MEM-11", i, pos, entry=entry))
            return 1
        node[_SEQ] = self._next_seq
        self._next_seq += 1
        nodes.append(node)
        if events:
            events.append(_decision(_APPENDED, "MEM-14", i, len(nodes) - 1, entry=entry))
        else:
            events.append(node)  # the first decision: see _appended
        return 1

    def _answered(
        self, i: int, node: _Node, holders: list[_Node], events: list[tuple[Any, ...]]
    ) -> None:
        """MEM-1 / MEM-10: a result for an id already answered: replace a placeholder or drop.

        An id counts as answered only by a real (not healed) result; a healed
        placeholder is replaced in place by the first real result, and an
        incoming message itself marked healed never replaces anything. Either
        way it counts 0 toward ``appended``.
        """
        rid = node[_RID]
        head = self._nodes[0][_SEQ]
        for held in holders:
            if not held[_HEALED]:
                break  # MEM-1: a real result answers it already
        else:
            held = holders[0]  # only healed placeholders (the first is the one to replace)
            if not node[_HEALED]:  # MEM-10: a real result replaces it in place
                entry = node[_ENTRY]
                held[_ENTRY] = entry
                held[_HEALED] = False
                events.append(
                    _decision(_REPLACED, "MEM-10", i, held[_SEQ] - head, call_id=rid, entry=entry)
                )
                return
        events.append(_decision(_DUPLICATE_RESULT, "MEM-1", i, held[_SEQ] - head, call_id=rid))

    def _heal(self, i: int, events: list[tuple[Any, ...]]) -> None:
        """MEM-3: insert a placeholder for every open call, right after its declaring turn.

        Several placeholders for one turn keep that turn's declaration order
        (GR-MEM decision). The entries from the earliest declaring turn on are
        re-laid once with the placeholders in place, so the cost is the length
        of that tail plus the placeholders. Open calls come from turns
        appended since the last user turn, so that tail is the current
        exchange, not the buffer (only a buffer loaded with stale open calls
        pays for its length, once). A single open call, the usual case, takes
        :meth:`_heal_one`, which inserts its placeholder in place instead.
        """
        opened = self._open
        if len(opened) == 1:  # nearly always: one open call (87% of the benchmark's heals)
            (cid,) = opened
            opened.clear()
            self._heal_one(i, cid, events)
            return
        by_turn: dict[int, set[str]] = {}
        for cid in opened:
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
                    placeholder = [entry, (), cid, True, seq]
                    seq += 1
                    nodes.append(placeholder)
                    answers.setdefault(cid, []).append(placeholder)
                    events.append(
                        _decision(_INSERTED, "MEM-3", i, len(nodes) - 1, call_id=cid, entry=entry)
                    )
        self._next_seq = seq

    def _heal_one(self, i: int, cid: str, events: list[tuple[Any, ...]]) -> None:
        """MEM-3 for a single open call: one placeholder right after its declaring turn.

        The common heal, done without re-laying the tail: the placeholder is
        inserted in place (``deque.insert`` near the end costs the few entries
        after it, in C) and only the entries after it get their sequence
        number moved on by one (the dense ``seq`` layout). Same entries,
        positions and event as :meth:`_heal` would give.
        """
        nodes = self._nodes
        seq = self._declared[cid][0][_SEQ] + 1  # the placeholder's, right after its turn
        pos = seq - nodes[0][_SEQ]
        entry = {  # make_placeholder(cid), inline on this path
            "role": "tool",
            "content": PLACEHOLDER_CONTENT,
            "metadata": {"tool_call_id": cid, "healed": True},
        }
        placeholder = [entry, (), cid, True, seq]
        nodes.insert(pos, placeholder)
        for node in islice(reversed(nodes), self._next_seq - seq):  # the entries after it
            node[_SEQ] += 1
        self._next_seq += 1
        self._answers[cid] = [placeholder]  # an open call has no result anywhere
        events.append(_decision(_INSERTED, "MEM-3", i, pos, call_id=cid, entry=entry))

    # -- bookkeeping -------------------------------------------------------------

    def _push(self, node: _Node) -> None:
        """Add a node at the end and index what it declares and answers."""
        node[_SEQ] = self._next_seq
        self._next_seq += 1
        self._nodes.append(node)
        for cid in node[_CALLS]:
            holders = self._declared.get(cid)
            if holders is None:
                self._declared[cid] = [node]
                if cid not in self._answers:
                    self._open[cid] = None
            else:
                holders.append(node)
        rid = node[_RID]
        if rid is not None:
            answers = self._answers.get(rid)
            if answers is None:
                self._answers[rid] = [node]
                self._open.pop(rid, None)
            else:
                answers.append(node)


def _read_batch(incoming: Any) -> list[_Node]:
    """Read a whole batch before any work; raise one error naming every bad index."""
    batch: list[_Node] = []
    problems: list[MessageProblem] = []
    for i, msg in enumerate(as_batch(incoming)):
        node = read_row(msg)
        if type(node) is str:
            problems.append(MessageProblem("incoming", i, node))  # type: ignore[arg-type]
        else:
            batch.append(node)  # type: ignore[arg-type]
    if problems:
        raise InvalidMessagesError(problems)
    return batch


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
    result = buf.append(incoming)
    result.messages = buf.messages()
    return result


def _calibrated(refs: Callable[[object], int]) -> Callable[[object], int]:
    """``refs`` if :meth:`Buffer.append`, counting with it, reuses only released results.

    Run once at import: with ``refs`` as the count, a result the caller
    holds must never be reused and one let go of must be; otherwise the
    count does not mean what :data:`_COUNT_WHEN_FREE` says on this
    interpreter, and :func:`_never_free` (always a new result) is returned.
    """
    global _refs
    saved, _refs = _refs, refs
    try:
        buf = Buffer()
        held = buf.append({"role": "user", "content": "held"})
        again = buf.append({"role": "user", "content": "again"})
        if again is held or held.events[0].entry["content"] != "held":  # type: ignore[index]
            return _never_free
        kept = id(again)  # ``again`` stays alive in the buffer, so its id stays its own
        del held, again
        released = buf.append({"role": "user", "content": "released"})
        return refs if id(released) == kept else _never_free
    finally:
        _refs = saved


_refs: Callable[[object], int] = _never_free
if _reuse_proven():
    _refs = _calibrated(sys.getrefcount)
