"""Messages in either accepted shape, read once and validated before any work.

GR-MEM accepts two spellings of a message:

* the **stored row** ``{"role", "content", "metadata": {"tool_calls", "tool_call_id", "healed"}}``
  (plus an optional ``timestamp``), which is what the buffer writes;
* the **provider-flat** shape (OpenAI Chat Completions), where ``tool_calls``
  (items ``{"id", "type", "function"}``) and ``tool_call_id`` sit at the top level.

:func:`read_message` is the single reader used by the pydantic models,
normalization and the importers' checks, and it defines what is valid.
:func:`read_row` is the engine's one-pass form of ``read_message`` followed by
:func:`to_stored_row`: it reads, validates and writes the stored row of the
common shapes in one go and hands anything unusual (and every invalid
message, for its exact problem text) to that pair, so the two can never
disagree. Both are hand-written rather than pydantic validators because they
run once per appended message on the engine's hot path (see
``benchmarks/append_bench.py``); the pydantic :class:`Message` and
:class:`ToolCall` models are built on top of them for callers who want typed
objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, model_validator

from flowdrop_core._errors import FlowdropError
from flowdrop_core._ids import usable_id
from flowdrop_core.nesting import MAX_MESSAGE_DEPTH, deeper_than

__all__ = [
    "PLACEHOLDER_CONTENT",
    "ROLES",
    "InvalidMessagesError",
    "Message",
    "MessageProblem",
    "ParsedMessage",
    "ToolCall",
    "content_is_empty",
    "make_placeholder",
    "read_call_function",
    "read_call_id",
    "read_dict_row",
    "read_message",
    "read_messages",
    "read_row",
    "to_stored_row",
]

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})
_ROLE_LIST = "system, user, assistant, tool"

#: Content of the synthetic result a user turn inserts for an unanswered call (MEM-3).
PLACEHOLDER_CONTENT = "Tool call was interrupted; no result."

_EMPTY: tuple[str, ...] = ()


def read_call_id(call: Mapping[str, Any]) -> str | None:
    """Return the usable id of one tool call under either spelling (MEM-11).

    The buffer's own spelling is ``tool_call_id``; the provider-flat spelling
    is ``id``. The first usable one wins. GR-MEM decision: a blank id or
    ``"0"`` is no id, so such a call is not a declaration (not healed, not
    counted by MEM-2). This is the only place a call's id is read.
    """
    found = call.get("tool_call_id")
    if found is not None:
        found = usable_id(found)
    if found is None:
        found = usable_id(call.get("id"))
    return found


def read_call_function(call: Mapping[str, Any]) -> tuple[Any, Any]:
    """``(name, arguments)`` of one tool call, under any spelling, as given.

    OpenAI nests them in ``function``; the buffer's own rows and LangChain
    keep ``name`` flat with ``arguments`` or ``args``; Anthropic's ``tool_use``
    says ``input``. The nested form wins when present. Like
    :func:`read_call_id`, this is the one place a call is read.
    """
    fn = call.get("function")
    if isinstance(fn, Mapping):
        return fn.get("name"), fn.get("arguments")
    for key in ("arguments", "args", "input"):
        if key in call:
            return call.get("name"), call[key]
    return call.get("name"), None


def content_is_empty(content: Any) -> bool:
    """True for content that carries no text: ``None``, a blank string or an empty list.

    GR-MEM step 5 and MEM-16: a user message with empty content is a pure read.
    """
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    return isinstance(content, list | dict) and not content


class MessageProblem(NamedTuple):
    """One thing wrong with one message: where it is and what is wrong."""

    where: str
    index: int  # type: ignore[assignment]  # the field's name (API) hides tuple.index
    problem: str

    def __str__(self) -> str:
        return f"{self.where}[{self.index}]: {self.problem}"


class InvalidMessagesError(FlowdropError, ValueError):
    """Raised before any work when one or more messages are malformed.

    The message names the index of each bad message and what is wrong, and
    ``problems`` holds them as data. Nothing has been changed when it is raised.
    """

    def __init__(self, problems: Iterable[MessageProblem]) -> None:
        self.problems: list[MessageProblem] = list(problems)
        n = len(self.problems)
        head = "1 invalid message" if n == 1 else f"{n} invalid messages"
        super().__init__(f"{head}: " + "; ".join(str(p) for p in self.problems))


class ParsedMessage(NamedTuple):
    """What the rules need to know about one message, read once.

    ``calls`` holds the usable ids an assistant turn declares, in declaration
    order and without repeats; it is empty for other roles (only an assistant
    turn declares calls). ``result_id`` is the usable id a ``tool`` message
    answers, else ``None``. ``raw`` is the message as given.
    """

    role: str
    content: Any
    calls: tuple[str, ...]
    result_id: str | None
    healed: bool
    raw: Mapping[str, Any]


_new_parsed = tuple.__new__


def _conflict(name: str) -> str:
    return f"'{name}' given both at top level and in metadata with different values"


def read_message(msg: Any) -> ParsedMessage | str:
    """Read one message in either shape; return a :class:`ParsedMessage` or a problem text.

    Returning the problem (instead of raising) lets callers collect every bad
    message of a batch into one :class:`InvalidMessagesError`. Written for
    speed: it runs once per appended message.
    """
    if type(msg) is not dict and not isinstance(msg, Mapping):
        return f"expected a message object, got {type(msg).__name__}"
    get = msg.get
    role = get("role")
    if type(role) is not str:
        if role is None:
            return "missing 'role'"
        if not isinstance(role, str):
            return f"'role' must be a string, got {type(role).__name__}"
    if role not in ROLES:
        return f"unknown role {role!r} (expected one of {_ROLE_LIST})"
    content = get("content")
    if content is not None and type(content) is not str and not isinstance(content, list | dict):
        return (
            "'content' must be text, a list of parts, an object or null, "
            f"got {type(content).__name__}"
        )
    raw_calls = get("tool_calls")
    raw_result = get("tool_call_id")
    healed = get("healed")
    meta = get("metadata")
    if meta is not None:
        if not isinstance(meta, Mapping):
            return f"'metadata' must be an object, got {type(meta).__name__}"
        inner = meta.get("tool_calls")
        if inner is not None:
            if raw_calls is not None and raw_calls != inner:
                return _conflict("tool_calls")
            raw_calls = inner
        inner = meta.get("tool_call_id")
        if inner is not None:
            if raw_result is not None and raw_result != inner:
                return _conflict("tool_call_id")
            raw_result = inner
        inner = meta.get("healed")
        if inner is not None:
            if healed is not None and healed != inner:
                return _conflict("healed")
            healed = inner
    if healed is not None and type(healed) is not bool:
        return f"'healed' must be true or false, got {healed!r}"

    calls: tuple[str, ...] = _EMPTY
    if raw_calls is not None:
        if type(raw_calls) is not list:
            return f"'tool_calls' must be a list, got {type(raw_calls).__name__}"
        ids: list[str] = []
        for j, call in enumerate(raw_calls):
            if type(call) is not dict and not isinstance(call, Mapping):
                return f"tool_calls[{j}] must be an object, got {type(call).__name__}"
            cid = read_call_id(call)
            if cid is not None and cid not in ids:
                ids.append(cid)
        if ids and role == "assistant":
            calls = tuple(ids)

    result_id = None
    if raw_result is not None:
        if type(raw_result) is not str and (
            type(raw_result) is bool or not isinstance(raw_result, int)
        ):
            return f"'tool_call_id' must be a string, got {type(raw_result).__name__}"
        if role == "tool":
            result_id = usable_id(raw_result)
    if type(msg) is not dict or len(msg) > 2 or type(content) is not str:
        deep = _too_deep(msg)
        if deep is not None:
            return deep
    return _new_parsed(ParsedMessage, (role, content, calls, result_id, healed is True, msg))


def _deep(field: Any) -> bool:
    """Whether a top-level field's value (level 2) nests past :data:`MAX_MESSAGE_DEPTH`."""
    return deeper_than(field, MAX_MESSAGE_DEPTH, 2) is not None


def _too_deep(value: Any, start: int = 1) -> str | None:
    """The problem text of a message (or a field at level ``start``) nested past the bound.

    Checked so that nothing downstream (a store's JSON, the journal, a comparison)
    runs out of stack: any depth is one located error, never a ``RecursionError``.
    """
    if not isinstance(value, dict) and isinstance(value, Mapping):
        value = dict(value)
    where = deeper_than(value, MAX_MESSAGE_DEPTH, start)
    if where is None:
        return None
    return f"nested more than {MAX_MESSAGE_DEPTH} levels (at {where or 'the message'})"


def read_messages(messages: Iterable[Any], where: str = "incoming") -> list[ParsedMessage]:
    """Read a batch; raise one :class:`InvalidMessagesError` naming every bad index."""
    parsed: list[ParsedMessage] = []
    problems: list[MessageProblem] = []
    for i, msg in enumerate(messages):
        result = read_message(msg)
        if type(result) is str:
            problems.append(MessageProblem(where, i, result))
        else:
            parsed.append(result)  # type: ignore[arg-type]
    if problems:
        raise InvalidMessagesError(problems)
    return parsed


_ROW_KEYS = frozenset({"role", "content", "metadata", "tool_calls", "tool_call_id", "healed"})


def to_stored_row(msg: ParsedMessage) -> dict[str, Any]:
    """Write a message the way the buffer stores it: ``{"role", "content", "metadata"}``.

    ``tool_calls``, ``tool_call_id`` and ``healed`` move under ``metadata``
    (values kept as given); any other top-level field (``timestamp``, ``name``
    ...) is kept as it is. The input is not modified.
    """
    raw = msg[5]
    get = raw.get
    meta = get("metadata")
    meta = {} if meta is None else dict(meta)
    value = get("tool_calls")
    if value is not None:
        meta["tool_calls"] = value
    value = get("tool_call_id")
    if value is not None:
        meta["tool_call_id"] = value
    value = get("healed")
    if value is not None:
        meta["healed"] = value
    row: dict[str, Any] = {"role": msg[0], "content": msg[1], "metadata": meta}
    if not raw.keys() <= _ROW_KEYS:
        for name, value in raw.items():
            if name not in _ROW_KEYS:
                row[name] = value
    return row


def _read_row_slowly(msg: Any) -> list[Any] | str:
    """:func:`read_row` for any input: :func:`read_message`, then :func:`to_stored_row`."""
    parsed = read_message(msg)
    if type(parsed) is str:
        return parsed
    return [to_stored_row(parsed), parsed[2], parsed[3], parsed[4], 0]  # type: ignore[index,arg-type]


def _call_ids(raw_calls: list[Any]) -> tuple[str, ...] | None:
    """The usable ids a list of plain-dict calls declares, in order, without repeats.

    ``None`` for any call but the common shape, ``{"id", "type", "function":
    {"name", "arguments"}}`` holding text (an ``id`` may be a number):
    :func:`read_message` then reads the message, its nesting depth included,
    while the common call, three levels deep, needs no walk. Its id is
    usually a plain ASCII name (``call_abc123``), which
    :func:`~flowdrop_core._ids.usable_id` returns as it is (not a number
    spelling, nothing to trim or normalize), so that case is answered here
    without the two calls; any other id goes through :func:`read_call_id`
    (MEM-11).
    """
    ids: list[str] = []
    try:
        for call in raw_calls:
            if type(call) is not dict or len(call) != 3:
                return None
            fn = call["function"]  # with "type" and "id" below: exactly the three keys
            if (
                type(fn) is not dict
                or len(fn) != 2
                or type(call["type"]) is not str
                or type(fn["name"]) is not str
                or type(fn["arguments"]) is not str
            ):
                return None
            cid = call["id"]
            if type(cid) is not str or not (cid.isascii() and cid.isidentifier()):
                if type(cid) is not str and type(cid) is not int:
                    return None
                cid = read_call_id(call)
                if cid is None:
                    continue  # not a declaration (MEM-11)
            if cid not in ids:
                ids.append(cid)
    except KeyError:  # a key of the common shape is missing
        return None
    return tuple(ids)


def read_row(msg: Any) -> list[Any] | str:
    """Read, validate and write one incoming message in one pass.

    Returns ``[row, calls, result_id, healed, 0]`` (``row`` is what
    :func:`to_stored_row` writes; ``calls``, ``result_id`` and ``healed`` are
    :class:`ParsedMessage`'s fields; the last slot is the caller's, the engine
    keeps an entry's sequence number there) or the problem text of
    :func:`read_message`. The result is exactly ``read_message`` then
    ``to_stored_row``: a plain ``dict`` in a common shape (provider-flat, or a
    stored row with a plain ``metadata`` dict) is handled here, anything else,
    including every invalid message, by that pair. The engine calls it once per
    appended message. MEM-11 ids are read by :func:`read_call_id` and
    :func:`~flowdrop_core._ids.usable_id`, as everywhere, except the commonest
    spelling, a plain ASCII name, which those two return unchanged and which is
    taken as it is here (see :func:`_call_ids`).
    """
    if type(msg) is not dict:
        return _read_row_slowly(msg)
    return read_dict_row(msg)


def read_dict_row(msg: dict[str, Any]) -> list[Any] | str:
    """:func:`read_row` for a caller that has checked ``type(msg) is dict`` already (the engine)."""
    try:
        role = msg["role"]
    except KeyError:
        return _read_row_slowly(msg)
    if type(role) is not str or role not in ROLES:
        return _read_row_slowly(msg)
    content = msg.get("content")
    if content is None:  # absent, or an explicit null (an assistant turn's, with calls)
        rest = len(msg) - 2 if "content" in msg else len(msg) - 1  # keys besides these two
    else:
        kind = type(content)
        # A list of parts or an object is checked for depth here, once, for every shape.
        if kind is not str and ((kind is not list and kind is not dict) or _deep(content)):
            return _read_row_slowly(msg)  # it names the problem
        rest = len(msg) - 2
    if not rest:  # the commonest shape: {"role", "content"}
        return [{"role": role, "content": content, "metadata": {}}, _EMPTY, None, False, 0]
    if rest == 1 and "tool_call_id" in msg:  # provider-flat tool result
        raw_result = msg["tool_call_id"]
        kind = type(raw_result)
        if kind is str or kind is int:
            if role != "tool":
                result_id = None  # only a tool message answers a call
            elif kind is str and raw_result.isascii() and raw_result.isidentifier():
                result_id = raw_result  # a plain ASCII name is its own id (see _call_ids)
            else:
                result_id = usable_id(raw_result)
            row: dict[str, Any] = {
                "role": role,
                "content": content,
                "metadata": {"tool_call_id": raw_result},
            }
            return [row, _EMPTY, result_id, False, 0]
    elif rest == 1 and "tool_calls" in msg:  # provider-flat assistant turn with calls
        raw_calls = msg["tool_calls"]
        if type(raw_calls) is list:
            ids = _call_ids(raw_calls)
            if ids is not None:  # else a call is not the common shape: the general path below
                row = {"role": role, "content": content, "metadata": {"tool_calls": raw_calls}}
                return [row, ids if role == "assistant" else _EMPTY, None, False, 0]

    get = msg.get
    meta = get("metadata")
    if meta is None:
        raw_calls = get("tool_calls")
        raw_result = get("tool_call_id")
        healed = get("healed")
        meta = {}
        if raw_calls is not None:
            meta["tool_calls"] = raw_calls
            rest -= 1
        if raw_result is not None:
            meta["tool_call_id"] = raw_result
            rest -= 1
        if healed is not None:
            meta["healed"] = healed
            rest -= 1
    elif type(meta) is dict and "tool_calls" not in msg and "tool_call_id" not in msg:
        if "healed" in msg:
            return _read_row_slowly(msg)  # a field at both levels: the pair checks conflicts
        rest -= 1
        raw_calls = meta.get("tool_calls")
        raw_result = meta.get("tool_call_id")
        healed = meta.get("healed")
        meta = dict(meta)
    else:
        return _read_row_slowly(msg)
    if healed is not None and type(healed) is not bool:
        return _read_row_slowly(msg)

    calls: tuple[str, ...] | None = _EMPTY
    if raw_calls is not None:
        if type(raw_calls) is not list:
            return _read_row_slowly(msg)
        calls = _call_ids(raw_calls)
        if calls is None:
            return _read_row_slowly(msg)
        if role != "assistant":
            calls = _EMPTY

    result_id = None
    if raw_result is not None:
        kind = type(raw_result)
        if kind is not str and kind is not int:
            return _read_row_slowly(msg)
        if role == "tool":
            result_id = usable_id(raw_result)

    if deeper_than(msg, MAX_MESSAGE_DEPTH) is not None:
        return _read_row_slowly(msg)  # it names where
    row = {"role": role, "content": content, "metadata": meta}
    if rest:  # other top-level fields (timestamp, name ...) are kept as they are
        for name, value in msg.items():
            if name not in _ROW_KEYS:
                row[name] = value
    return [row, calls, result_id, healed is True, 0]


def make_placeholder(call_id: str) -> dict[str, Any]:
    """The synthetic result a user turn inserts for an unanswered call (MEM-3)."""
    return {
        "role": "tool",
        "content": PLACEHOLDER_CONTENT,
        "metadata": {"tool_call_id": call_id, "healed": True},
    }


class ToolCall(BaseModel):
    """One declared tool call, read from either spelling (MEM-11).

    ``id`` is the usable id (``None`` when the call has none, in which case it
    is not a declaration); ``raw`` keeps the call exactly as given.
    """

    model_config = ConfigDict(frozen=True)

    id: str | None
    name: str | None = None
    arguments: Any = None
    raw: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise ValueError(f"a tool call must be an object, got {type(data).__name__}")
        if "raw" in data and set(data) <= {"id", "name", "arguments", "raw"}:
            return data
        name, arguments = read_call_function(data)
        return {"id": read_call_id(data), "name": name, "arguments": arguments, "raw": dict(data)}


class Message(BaseModel):
    """A message in either accepted shape, as a typed object.

    Validation goes through :func:`read_message`, so the typed model and the
    engine accept and reject exactly the same inputs.
    """

    model_config = ConfigDict(frozen=True)

    role: Role
    content: Any = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    healed: bool = False
    raw: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        parsed = read_message(data)
        if isinstance(parsed, str):
            raise ValueError(parsed)
        meta = data.get("metadata") or {}
        calls = data.get("tool_calls") or meta.get("tool_calls") or []
        return {
            "role": parsed.role,
            "content": parsed.content,
            "tool_calls": [ToolCall.model_validate(c) for c in calls],
            "tool_call_id": parsed.result_id,
            "healed": parsed.healed,
            "raw": dict(data),
        }

    @property
    def declared_ids(self) -> tuple[str, ...]:
        """Usable call ids this message declares (assistant turns only)."""
        if self.role != "assistant":
            return ()
        return tuple(dict.fromkeys(c.id for c in self.tool_calls if c.id is not None))
