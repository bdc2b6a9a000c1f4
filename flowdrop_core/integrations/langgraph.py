"""GR-MEM for LangGraph state and LangChain v1 agents (extra ``langgraph``).

LangGraph's ``add_messages`` merges by message id only: a re-executed tool
node appends a second ``ToolMessage`` for a call already answered, and
nothing heals a call left unanswered. This module offers:

- :func:`gr_mem_messages`, a drop-in reducer for
  ``Annotated[list[AnyMessage], gr_mem_messages]``. It keeps
  ``add_messages``' own semantics (coercion, ids assigned, a message whose id
  is already in the state replaces it in place, ``RemoveMessage`` and
  ``REMOVE_ALL_MESSAGES``) and runs every *new* message through the GR-MEM
  engine: MEM-1 (a result for an answered call is dropped), MEM-2 (a turn
  whose every call is declared already is dropped), MEM-3 (an unanswered
  call is healed at the next human message, the placeholder right after its
  turn) and MEM-10 (the late real result replaces the placeholder at the
  same position).
- :func:`gr_mem_reducer`, the same with a window (``max_messages``) and the
  MEM-14 report of every update sent to a journal or a callback
  (:class:`ReducerJournal`, which can also write the flowdrop append
  journal of a store, so the Store page replays the graph's updates).
- :class:`GRMemMiddleware`, a LangChain v1 ``AgentMiddleware`` whose
  ``wrap_model_call`` sends the model the MEM-5 provider view
  (``request.override(messages=...)``), leaving the state untouched.

Messages convert to GR-MEM rows and back without loss:
:func:`message_to_row` keeps the whole message (``messages_to_dict`` form,
or the object itself inside the reducer), so ids, names, artifacts,
``additional_kwargs``, ``response_metadata`` and usage come back as they
were. A healed placeholder is a ``ToolMessage`` whose ``response_metadata``
carries ``{"gr_mem": {"healed": true}}``. The reducer costs what
``add_messages`` costs (one pass over the state: LangGraph hands a reducer
the whole list) plus the engine's O(new messages).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from flowdrop_core import telemetry
from flowdrop_core.engine import AppendResult, Buffer
from flowdrop_core.events import Event, EventKind
from flowdrop_core.integrations import require
from flowdrop_core.messages import PLACEHOLDER_CONTENT
from flowdrop_core.provider import Finding, normalize_report

require("langchain_core", "langgraph")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    ChatMessage,
    RemoveMessage,
    ToolMessage,
    convert_to_messages,
    message_chunk_to_message,
    message_to_dict,
    messages_from_dict,
)

if TYPE_CHECKING:
    from flowdrop_core.storage import Slot, Store

_log = logging.getLogger("flowdrop_core")

__all__ = [
    "HEALED_MARK",
    "REMOVE_ALL_MESSAGES",
    "GRMemMessages",
    "GRMemMiddleware",
    "ReducerJournal",
    "ReducerReport",
    "gr_mem_messages",
    "gr_mem_reducer",
    "last_report",
    "message_to_row",
    "provider_view",
    "row_to_message",
    "rows_to_messages",
]

#: LangGraph's marker id that clears the state (same value as ``langgraph.graph.message``).
REMOVE_ALL_MESSAGES = "__remove_all__"

#: Where a healed placeholder says what it is: ``response_metadata["gr_mem"]`` (never sent).
HEALED_MARK = "gr_mem"

#: The key of a stored row holding the whole message, ``message_to_dict`` form.
ROW_KEY = "langchain"
#: The key of a transient row (inside the reducer) holding the message object itself.
_OBJ = "_langchain_message"

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_CHAT_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
}


def _is_healed(msg: BaseMessage) -> bool:
    mark = msg.response_metadata.get(HEALED_MARK) if isinstance(msg, ToolMessage) else None
    return isinstance(mark, dict) and mark.get("healed") is True


def _role(msg: BaseMessage) -> str:
    """The GR-MEM role of a message; roles GR-MEM does not know become ``user`` (MEM-16)."""
    if isinstance(msg, ChatMessage):
        return _CHAT_ROLES.get(str(msg.role).lower(), "user")
    if msg.type == "function":  # a legacy function result: a tool result without a call id
        return "tool"
    return _ROLES.get(msg.type, "user")


def message_to_row(msg: BaseMessage, *, portable: bool = True) -> dict[str, Any]:
    """One LangChain message as a GR-MEM stored row, keeping the whole message.

    ``metadata.tool_calls`` lists an AI message's calls (valid and invalid:
    a provider is sent both) by ``id``; a ``ToolMessage`` answers
    ``metadata.tool_call_id``. With ``portable`` the message is kept as its
    ``message_to_dict`` form under ``"langchain"`` (JSON for a store);
    without, the object itself rides along (the reducer, no copy).
    """
    meta: dict[str, Any] = {}
    if isinstance(msg, AIMessage):
        calls = [
            {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}
            for c in [*msg.tool_calls, *msg.invalid_tool_calls]
        ]
        if calls:
            meta["tool_calls"] = calls
    elif isinstance(msg, ToolMessage):
        meta["tool_call_id"] = msg.tool_call_id
        if _is_healed(msg):
            meta["healed"] = True
    row: dict[str, Any] = {"role": _role(msg), "content": msg.content, "metadata": meta}
    if portable:
        row[ROW_KEY] = message_to_dict(msg)
    else:
        row[_OBJ] = msg
    return row


def _placeholder(call_id: str, name: str | None) -> ToolMessage:
    """The MEM-3 placeholder as a ``ToolMessage`` (a stable id: healing twice gives the same)."""
    return ToolMessage(
        content=PLACEHOLDER_CONTENT,
        tool_call_id=call_id,
        name=name,
        id=f"gr-mem-healed-{call_id}",
        status="error",
        response_metadata={HEALED_MARK: {"healed": True, "rule": "MEM-3"}},
    )


def row_to_message(row: dict[str, Any], names: dict[str, str] | None = None) -> BaseMessage:
    """A GR-MEM row back as the LangChain message it was (a placeholder as a ``ToolMessage``).

    ``names`` maps call ids to tool names, so a placeholder is named after its call.
    A row that never was a LangChain message (written by another runtime) is
    read in its provider-flat spelling.
    """
    obj = row.get(_OBJ)
    if obj is not None:
        return obj  # type: ignore[no-any-return]
    kept = row.get(ROW_KEY)
    if kept is not None:
        return messages_from_dict([kept])[0]
    meta = row.get("metadata") or {}
    if row.get("role") == "tool" and meta.get("healed") is True:
        cid = str(meta.get("tool_call_id"))
        return _placeholder(cid, (names or {}).get(cid))
    flat: dict[str, Any] = {"role": row["role"], "content": row.get("content") or ""}
    for name in ("tool_calls", "tool_call_id"):
        value = row.get(name, meta.get(name))
        if value is not None:
            flat[name] = value
    if "tool_calls" in flat:
        flat["tool_calls"] = [_openai_call(c) for c in flat["tool_calls"]]
    return convert_to_messages([flat])[0]


def _openai_call(call: dict[str, Any]) -> dict[str, Any]:
    import json

    from flowdrop_core.messages import read_call_function, read_call_id

    name, args = read_call_function(call)
    if not isinstance(args, str):
        args = json.dumps(args if args is not None else {})
    return {
        "id": read_call_id(call),
        "type": "function",
        "function": {"name": name, "arguments": args},
    }


def _call_names(rows: Iterable[dict[str, Any]]) -> dict[str, str]:
    names: dict[str, str] = {}
    for row in rows:
        for call in (row.get("metadata") or {}).get("tool_calls") or ():
            if isinstance(call, dict) and call.get("id") and call.get("name"):
                names.setdefault(str(call["id"]), str(call["name"]))
    return names


def rows_to_messages(rows: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """GR-MEM rows back as LangChain messages, placeholders named after their calls."""
    names = _call_names(rows)
    return [row_to_message(r, names) for r in rows]


def _coerce(value: Any) -> list[BaseMessage]:
    """A reducer operand as messages, the way ``add_messages`` coerces it (chunks merged)."""
    items = value if isinstance(value, list) else [value]
    if all(isinstance(m, BaseMessage) and not isinstance(m, BaseMessageChunk) for m in items):
        return list(items)
    return [
        message_chunk_to_message(m)  # type: ignore[arg-type]
        for m in convert_to_messages(items)
    ]


class _Merge:
    """One reducer call: ``add_messages``' id semantics, then GR-MEM on the new messages.

    Two paths give the same state. A *chained* update is onto the very list
    the previous update returned (LangGraph hands a reducer the list it
    returned last) and only appends: it reuses that update's engine buffer
    and the set of ids in the state, so its work is in proportion to the new
    messages (the returned list is one C-level copy of the old one plus the
    new). Every other update (a list the reducer did not return, e.g. after
    a checkpoint load, or one that replaces or removes messages by id) reads
    the whole state once, as ``add_messages`` does.
    """

    def __init__(self, left: Any, right: Any, max_messages: int) -> None:
        rhs = _coerce(right if right is not None else [])
        for m in rhs:
            if m.id is None:
                m.id = str(uuid.uuid4())
        live = _cache_take(left, max_messages)
        #: The list this update started from, when it is the one the last update returned.
        self._left: list[BaseMessage] | None = None
        self._ids: set[Any] | None = None  # the ids in the state, kept on the chained path
        if live is not None and _only_new(rhs, live[1]):
            self._left = left
            self.buffer, ids = live
            self._ids = ids
            self.rewritten = False
            self.before: list[BaseMessage] = left
            self.incoming = list({m.id: m for m in rhs}.values())  # a later copy of an id wins
        else:
            self._full(left, rhs, max_messages)
        self.result: AppendResult = self.buffer.append(
            [message_to_row(m, portable=False) for m in self.incoming]
        )

    def _full(self, left: Any, rhs: list[BaseMessage], max_messages: int) -> None:
        """Read the whole state: ``add_messages``' merge by id, then a fresh engine buffer."""
        lhs = _coerce(left if left is not None else [])
        for m in lhs:
            if m.id is None:
                m.id = str(uuid.uuid4())
        cut = next(
            (
                k
                for k in range(len(rhs) - 1, -1, -1)
                if isinstance(rhs[k], RemoveMessage) and rhs[k].id == REMOVE_ALL_MESSAGES
            ),
            None,
        )
        #: True when the state was changed besides the append (ids replaced, messages removed).
        self.rewritten = cut is not None
        if cut is not None:
            lhs, rhs = [], rhs[cut + 1 :]
        merged = list(lhs)
        at = {m.id: k for k, m in enumerate(merged)}
        removed: set[str] = set()
        fresh: dict[str, BaseMessage] = {}  # new ids, in arrival order (a later copy wins)
        for m in rhs:
            k = at.get(m.id)
            if k is not None:  # add_messages: an id already in the state is updated in place
                self.rewritten = True
                if isinstance(m, RemoveMessage):
                    removed.add(m.id)  # type: ignore[arg-type]
                else:
                    removed.discard(m.id)  # type: ignore[arg-type]
                    merged[k] = m
            elif isinstance(m, RemoveMessage):
                if m.id in fresh:
                    del fresh[m.id]  # type: ignore[arg-type]
                    continue
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{m.id}')"
                )
            else:
                fresh[m.id] = m  # type: ignore[index]
        if removed:
            merged = [m for m in merged if m.id not in removed]
        self.before = merged
        self.incoming = list(fresh.values())
        self.buffer = Buffer([message_to_row(m, portable=False) for m in merged], max_messages)

    def messages(self) -> GRMemMessages:
        """The state after the update, with its report (remembered for the next update)."""
        out = self._chained() if self._left is not None else None
        if out is None:
            rows = self.buffer.messages()
            if all(_OBJ in r for r in rows):
                out = GRMemMessages([r[_OBJ] for r in rows])
            else:
                out = GRMemMessages(rows_to_messages(rows))
                for r, m in zip(rows, out, strict=True):
                    if _OBJ not in r:  # a placeholder: the next update reads the same object
                        r[_OBJ] = m
            ids = {m.id for m in out}
        else:
            assert self._ids is not None
            ids = self._ids
        out.report = self.report()
        _cache_put(out, self.buffer, ids)
        if telemetry.ENABLED:
            telemetry.emit("langgraph", out.report)
        return out

    def report(self) -> ReducerReport:
        """This update's MEM-14 report (made once)."""
        made: ReducerReport | None = getattr(self, "_report", None)
        if made is None:
            made = self._report = ReducerReport.of(self)
        return made

    def _chained(self) -> GRMemMessages | None:
        """The new state as the old list plus what was appended, minus what the window evicted.

        ``None`` when the engine changed the list elsewhere (a placeholder
        inserted or replaced): the caller rebuilds it from the buffer.
        """
        left, ids = self._left, self._ids
        assert left is not None and ids is not None
        added: list[BaseMessage] = []
        evicted = 0
        for ev in self.result.events:
            kind = ev.kind
            if kind is _APPENDED:
                if evicted:  # the window applies last; anything else is rebuilt
                    return None
                obj = ev.entry[_OBJ]  # type: ignore[index]
                added.append(obj)
                ids.add(obj.id)
            elif kind is _EVICTED:
                if ev.position != 0:
                    return None
                gone = left[evicted] if evicted < len(left) else added[evicted - len(left)]
                ids.discard(gone.id)
                evicted += 1
            elif kind in _CHANGES_ELSEWHERE:
                return None
        out = GRMemMessages(left)
        out += added
        if evicted:
            del out[:evicted]
        return out


_APPENDED, _EVICTED = EventKind.APPENDED, EventKind.EVICTED
#: Decisions that change the state somewhere other than its end: rebuilt from the buffer.
_CHANGES_ELSEWHERE = frozenset({EventKind.PLACEHOLDER_INSERTED, EventKind.PLACEHOLDER_REPLACED})


def _only_new(rhs: list[BaseMessage], ids: set[Any]) -> bool:
    """Whether an update only brings messages whose ids the state does not hold (no removal)."""
    return not any(isinstance(m, RemoveMessage) or m.id in ids for m in rhs)


# The live cache: the list a reducer returned, with the engine buffer it came from and the
# ids it holds, so the next update onto that very list appends to the buffer instead of
# re-reading every message (O(new messages); LangGraph hands the reducer the list it
# returned last). An entry is used once (taken out), only for the same list object at the
# same length and last message; an update that replaced or removed messages by id reads
# the whole state again.
_CACHE: dict[int, tuple[list[BaseMessage], Buffer, int, Any, set[Any]]] = {}
_CACHE_GUARD = threading.Lock()
_CACHE_SLOTS = 16


def _cache_take(left: Any, max_messages: int) -> tuple[Buffer, set[Any]] | None:
    if not isinstance(left, list):
        return None
    with _CACHE_GUARD:
        entry = _CACHE.pop(id(left), None)
    if entry is None:
        return None
    kept, buf, size, last, ids = entry
    if kept is not left or len(left) != size or (left and left[-1] is not last):
        return None
    if buf.max_messages != max_messages or len(buf) != size:
        return None
    return buf, ids


def _cache_put(out: list[BaseMessage], buf: Buffer, ids: set[Any]) -> None:
    with _CACHE_GUARD:
        _CACHE[id(out)] = (out, buf, len(out), out[-1] if out else None, ids)
        while len(_CACHE) > _CACHE_SLOTS:
            del _CACHE[next(iter(_CACHE))]


def gr_mem_messages(left: Any, right: Any) -> GRMemMessages:
    """Merge two lists of messages the GR-MEM way (a drop-in for ``add_messages``).

    ``Annotated[list[AnyMessage], gr_mem_messages]``: a message whose id is
    in the state replaces it in place and ``RemoveMessage`` removes, as with
    ``add_messages``; every other message is appended under MEM-1, MEM-2,
    MEM-3, MEM-10 and MEM-16 (an empty human message is not a turn). The
    list returned carries the update's MEM-14 report (:func:`last_report`).
    """
    return _Merge(left, right, 0).messages()


class ReducerReport:
    """The MEM-14 report of one reducer update, with the events that explain it.

    ``appended`` counts the incoming messages that became new entries (never
    the change in length); ``events`` are the engine's, positions in the
    state after the update. ``rewritten`` is true when the update also
    replaced or removed messages by id (``add_messages`` semantics).
    """

    __slots__ = ("_events", "_result", "appended", "at", "count", "incoming", "rewritten")

    def __init__(
        self,
        count: int,
        appended: int,
        events: tuple[Event, ...] | None,
        incoming: list[BaseMessage],
        rewritten: bool,
        result: AppendResult | None = None,
    ) -> None:
        self.count, self.appended = count, appended
        self._events, self._result = events, result  # events made from the result when read
        self.incoming, self.rewritten = incoming, rewritten
        self.at = time.time()

    @classmethod
    def of(cls, merge: _Merge) -> ReducerReport:
        """The report of ``merge``; its events are made only when read."""
        res = merge.result
        return cls(res.count, res.appended, None, merge.incoming, merge.rewritten, res)

    @property
    def events(self) -> tuple[Event, ...]:
        """The engine's decisions for this update, in order."""
        if self._events is None:
            assert self._result is not None
            self._events, self._result = self._result.events, None
        return self._events

    @property
    def appended_any(self) -> bool:
        return self.appended > 0

    def summary(self) -> dict[str, Any]:
        """The three MEM-14 fields."""
        return {"count": self.count, "appended": self.appended, "appended_any": self.appended_any}

    def to_dict(self) -> dict[str, Any]:
        """The report as data: the MEM-14 fields, ``rewritten``, and each decision with its rule."""
        return {
            **self.summary(),
            "rewritten": self.rewritten,
            "decisions": [{"kind": str(e.kind), "rule": e.rule} for e in self.events],
        }

    def __repr__(self) -> str:
        kinds = ", ".join(str(e.kind) for e in self.events)
        return f"ReducerReport({self.summary()}, events=[{kinds}])"


class GRMemMessages(list):  # type: ignore[type-arg]
    """The messages state as the GR-MEM reducers return it: a list, carrying its update's report.

    Each thread's state is its own list, so ``state["messages"].report`` (or
    :func:`last_report`) in a node, in ``stream(stream_mode="values")`` or in
    ``invoke``'s result is the MEM-14 report of the update that made that
    thread's list: reports of concurrent threads never mix. A state loaded
    from a checkpoint is a plain list again (no report until its next update).
    """

    __slots__ = ("report",)

    report: ReducerReport


def last_report(messages: Any) -> ReducerReport | None:
    """The MEM-14 report of the reducer update that made ``messages`` (``None``: not ours)."""
    return getattr(messages, "report", None) if isinstance(messages, GRMemMessages) else None


class ReducerJournal:
    """Where :func:`gr_mem_reducer` sends its reports: the newest ``keep`` in memory.

    With ``store`` (any flowdrop store) and ``slot``, every update is also
    written to that store's append journal as a record the Store page and
    ``flowdrop-buffer store --journal`` replays step by step; an update that
    also replaced or removed messages by id is recorded as a write outside
    the journal, so the replay says where it may differ.

    LangGraph runs a reducer on the event loop under ``ainvoke``/``astream``,
    and a reducer cannot be awaited: there the record is written in order on
    the store's bounded executor (:mod:`flowdrop_core.storage._aio`) instead,
    so the loop never waits for the store. ``await journal.aflush()`` (or
    ``journal.flush()``) waits until every record is written and raises the
    first write that failed. Outside an event loop the record is written
    before the reducer returns, as ever.
    """

    def __init__(
        self,
        keep: int = 1000,
        *,
        store: Store | None = None,
        slot: Slot = ("execution", "langgraph", "messages"),
        limit: int = 1000,
    ) -> None:
        self.reports: deque[ReducerReport] = deque(maxlen=keep)
        self.store, self.slot, self.limit = store, slot, limit
        self._guard = threading.Condition()
        self._revision = 0
        self._last_count: int | None = None
        self._pending: deque[_Pending] = deque()  # records to write, oldest first
        self._draining = False
        self._failed: BaseException | None = None

    def __call__(self, report: ReducerReport, merge: _Merge | None = None) -> None:
        with self._guard:
            self.reports.append(report)
            if self.store is None or merge is None:
                return
            job = self._prepare(report, merge)
            if not self._pending and not _on_event_loop():
                self._write(job)
                return
            self._pending.append(job)  # after any still pending, so records keep their order
            if self._draining:
                return
            self._draining = True
        from flowdrop_core.storage._aio import submit_to_store

        submit_to_store(self.store, self._drain)

    @property
    def last(self) -> ReducerReport | None:
        """The newest report (``None`` before the first update)."""
        return self.reports[-1] if self.reports else None

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every record is written; raise the first write that failed."""
        with self._guard:
            if not self._guard.wait_for(lambda: not self._pending, timeout):
                raise TimeoutError(f"{len(self._pending)} journal records not written yet")
            self._raise_failed()

    async def aflush(self, timeout: float | None = None) -> None:
        """:meth:`flush` for async code (polls; the loop is never blocked)."""
        import asyncio

        async with asyncio.timeout(timeout):
            while self._pending:
                await asyncio.sleep(0.002)
        with self._guard:
            self._raise_failed()

    def _raise_failed(self) -> None:
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed

    def _drain(self) -> None:
        """Write the pending records in order (one drainer at a time, on the executor)."""
        while True:
            with self._guard:
                if not self._pending:
                    self._draining = False
                    self._guard.notify_all()
                    return
                job = self._pending[0]
            try:
                self._write(job)
            except BaseException as exc:  # kept for flush; the next records still go in
                _log.warning(
                    "the reducer journal could not write a record to %r: %s", self.store, exc
                )
                with self._guard:
                    self._failed = self._failed or exc
            with self._guard:
                self._pending.popleft()

    def _prepare(self, report: ReducerReport, merge: _Merge) -> _Pending:
        """What the record needs from this update, taken now (the write may come later)."""
        outside = merge.rewritten or self._last_count != len(merge.before)
        before = f"r{self._revision}"
        if outside:  # the state changed besides this journal's appends
            self._revision += 1
            before = f"r{self._revision}-outside"
        self._revision += 1
        self._last_count = report.count
        return _Pending(
            report,
            outside,
            before,
            f"r{self._revision}",
            list(merge.before),
            [message_to_row(m) for m in merge.incoming],
            merge.buffer.max_messages,
        )

    def _write(self, job: _Pending) -> None:
        from flowdrop_core.journal import CHECKPOINT_EVERY, JournalRecord, journal_for
        from flowdrop_core.storage import Delta, JournalConflict, RevisionConflict
        from flowdrop_core.storage._base import JournalWrite

        assert self.store is not None
        report = job.report
        every = max(1, min(CHECKPOINT_EVERY, self.limit // 2))
        scope, scope_id, key = self.slot
        events = [{k: v for k, v in ev.to_dict().items() if k != "reason"} for ev in report.events]
        for _ in range(100):  # another writer took the record number: number it again
            seq = journal_for(self.store).last_seq(self.slot) + 1
            base = None
            if job.outside or (seq - 1) % every == 0:
                base = [message_to_row(m) for m in job.before]
            record = JournalRecord(
                seq=seq,
                at=report.at,
                scope=scope,
                scope_id=scope_id,
                key=key,
                max_messages=job.max_messages,
                incoming=job.incoming,
                context={f"{scope}_id": scope_id} if scope in _ID_SCOPES else None,
                count=report.count,
                appended=report.appended,
                appended_any=report.appended_any,
                revision_before=job.revision_before,
                revision=job.revision,
                events=events,
                base=base,
            )
            value, found, revision = self.store.read(*self.slot)
            size = len(value) if found and isinstance(value, list) else 0
            # A record with no change to the slot: the store writes only the record.
            write = JournalWrite(seq, record.to_json(), self.limit, report.at, revision)
            try:
                self.store.apply(*self.slot, Delta((), size), expected=revision, journal=write)
            except (JournalConflict, RevisionConflict):
                continue
            break


class _Pending(NamedTuple):
    """One reducer update's record, as :meth:`ReducerJournal._write` needs it."""

    report: ReducerReport
    outside: bool
    revision_before: str
    revision: str
    before: list[BaseMessage]
    incoming: list[dict[str, Any]]
    max_messages: int


def _on_event_loop() -> bool:
    """Whether this thread is running an event loop (a store call here would block it)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


_ID_SCOPES = frozenset({"session", "user", "workflow", "pipeline", "execution"})


def gr_mem_reducer(
    max_messages: int = 0,
    journal: ReducerJournal | Callable[[ReducerReport], None] | None = None,
) -> Callable[[Any, Any], list[BaseMessage]]:
    """A :func:`gr_mem_messages` reducer with a window and a MEM-14 report per update.

    ``max_messages`` > 0 keeps the newest entries (GR-MEM step 6). A reducer
    can only return the list, so each update's :class:`ReducerReport` goes to
    ``journal``: a :class:`ReducerJournal` or any callable.
    """
    from flowdrop_core.engine import check_window

    cap = check_window(max_messages)

    def reducer(left: Any, right: Any) -> list[BaseMessage]:
        merge = _Merge(left, right, cap)
        if journal is not None:
            report = merge.report()
            if isinstance(journal, ReducerJournal):
                journal(report, merge)
            else:
                journal(report)
        return merge.messages()

    reducer.__name__ = "gr_mem_reducer"
    reducer.__doc__ = gr_mem_reducer.__doc__
    return reducer


# -- MEM-5: what the model is sent ------------------------------------------------------------


def provider_view(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], list[Finding]]:
    """MEM-5 on LangChain messages: the repaired list and every finding, nothing else changed.

    The pairing repair of :func:`~flowdrop_core.provider.normalize_report`
    (orphan and duplicate results dropped, a call declared twice dropped from
    the later turn, an unanswered call given a synthetic result right after
    its turn, system messages first) is applied to the messages themselves:
    kept messages are the same objects, a turn that lost a call is a copy
    without it, and content is left as the model accepts it (MEM-5's text
    coercion is for provider-flat dicts).
    """
    rows = [message_to_row(m, portable=False) for m in messages]
    report = normalize_report(rows)
    dropped = {f.index for f in report.findings if f.dropped and f.call_index is None}
    kept = [k for k, r in enumerate(rows) if k not in dropped]
    kept.sort(key=lambda k: rows[k]["role"] != "system")  # stable: system first (MEM-5)
    results: dict[str, int] = {}
    order: list[int] = []
    for k in kept:
        if rows[k]["role"] == "tool":
            cid = (rows[k]["metadata"] or {}).get("tool_call_id")
            results.setdefault(str(cid), k)
        else:
            order.append(k)
    names = _call_names(rows)
    out: list[BaseMessage] = []
    walk = iter(order)
    for flat in report.messages:
        if flat["role"] == "tool":
            cid = flat["tool_call_id"]
            found = results.get(cid)
            out.append(messages[found] if found is not None else _placeholder(cid, names.get(cid)))
            continue
        k = next(walk)
        msg = messages[k]
        if isinstance(msg, AIMessage):
            ids = [c["id"] for c in flat.get("tool_calls") or ()]
            have = [c.get("id") for c in [*msg.tool_calls, *msg.invalid_tool_calls]]
            if have != ids:
                msg = _only_calls(msg, ids)
        out.append(msg)
    return out, list(report.findings)


def _only_calls(msg: AIMessage, ids: list[str]) -> AIMessage:
    """A copy of ``msg`` declaring only ``ids`` (first occurrence of each), in its order."""
    left = list(ids)

    def keep(call: Any) -> bool:
        cid = call.get("id")
        if cid in left:
            left.remove(cid)
            return True
        return False

    return msg.model_copy(
        update={
            "tool_calls": [c for c in msg.tool_calls if keep(c)],
            "invalid_tool_calls": [c for c in msg.invalid_tool_calls if keep(c)],
        }
    )


def _middleware_base() -> type:
    return require("langchain.agents.middleware", "langgraph").AgentMiddleware  # type: ignore[no-any-return]


class GRMemMiddleware(_middleware_base()):  # type: ignore[misc]
    """LangChain v1 agent middleware: the model is sent the MEM-5 provider view.

    ``create_agent(model, tools, middleware=[GRMemMiddleware()])``. Each model
    call's messages are repaired by :func:`provider_view` and passed on with
    ``request.override(messages=...)``; the agent's state keeps what
    happened. ``on_findings`` receives the findings of each call that had any.
    """

    def __init__(self, on_findings: Callable[[list[Finding]], None] | None = None) -> None:
        super().__init__()
        self.on_findings = on_findings
        #: The findings of the most recent model call (empty: nothing to repair).
        self.last_findings: list[Finding] = []

    def _view(self, request: Any) -> Any:
        messages, findings = provider_view(request.messages)
        self.last_findings = findings
        if findings and self.on_findings is not None:
            self.on_findings(findings)
        return request.override(messages=messages) if findings else request

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._view(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(self._view(request))
