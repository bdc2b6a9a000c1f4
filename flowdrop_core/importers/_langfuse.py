"""A tracing tool's trace export (Langfuse): what the last generation saw, then its output.

A trace object with ``observations`` (``GET /api/public/traces/{id}``), an
export ``{"trace": {...}, "observations": [...]}``, an observations page
(``{"data": [...]}``) or a bare list of observations. ``input`` and
``output`` may be JSON text (exports keep them so), read as the JSON they hold. The
``GENERATION`` observations are ordered by ``startTime``; the conversation is
the last one's ``input`` (messages in any JSON format this package reads)
followed by its ``output``. Messages of earlier generations that the last one
does not hold are notes. Spans and events are the application's own steps,
not model messages; one holding text the conversation lacks is a note. When no
generation carries input or output, the trace's own ``output`` (else
``input``) is read instead: some framework integrations record the model's
view only there. An ``AGENT`` observation or the trace whose input and output
hold every generation's messages and more is the conversation instead
(:func:`_framework_view`), and a final answer only the trace holds ends it
(:func:`_final_answer`).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    Problem,
    as_text,
    json_text,
    json_type,
    last_call,
    message_key,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each
from flowdrop_core.importers._detect import detect_value, json_formats
from flowdrop_core.importers._otel_legacy import _content_calls
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "langfuse"
EXPECTS = (
    "a trace export with 'observations' (or {'data': [...]}) whose GENERATION observations "
    "carry 'input' messages and 'output'"
)


def claims(document: Any) -> Verdict:
    """A trace (``observations``), a ``{trace, observations}`` export, an observations page
    (``data``) or a list of observations: objects with ``id`` and a string ``type``, at
    least one a ``GENERATION``."""
    if isinstance(document, dict) and isinstance(document.get("trace"), dict):
        items = document.get("observations", document["trace"].get("observations"))
        prefix = "observations" if "observations" in document else "trace.observations"
    elif isinstance(document, dict) and "observations" in document:
        items, prefix = document["observations"], "observations"
    elif isinstance(document, dict) and "data" in document:
        items, prefix = document["data"], "data"
    elif isinstance(document, list):
        items, prefix = document, ""
    else:
        return Miss("", f"expected a trace with 'observations' or a list of observations, "
                    f"got {json_type(document)}")  # fmt: skip
    verdict = each(items, prefix, observation_miss, "a trace", score=2 if prefix else 1)
    if isinstance(verdict, Claim) and not any(o["type"] == "GENERATION" for o in items):
        return Miss(prefix, "no GENERATION observation", 1)
    return verdict


def observation_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like an observation (``id``, upper-case string ``type``)."""
    if not isinstance(item, dict) or "id" not in item:
        return Miss(where, "expected an observation with 'id'")
    kind = item.get("type")
    if not isinstance(kind, str) or not kind.isupper():
        return Miss(where, "an observation's 'type' is an upper-case string (GENERATION, SPAN)")
    return None


def read(document: Any, out: Out) -> None:
    """Read a trace, a ``{"trace", "observations"}`` export, an observations page or a list."""
    trace: dict[str, Any] | None = None
    if isinstance(document, dict) and isinstance(document.get("trace"), dict):
        trace = document["trace"]
        if isinstance(document.get("observations"), list):
            items, prefix = document["observations"], "observations"
        else:
            items, prefix = trace.get("observations"), "trace.observations"
    elif isinstance(document, dict) and isinstance(document.get("observations"), list):
        trace, items, prefix = document, document["observations"], "observations"
    elif isinstance(document, dict) and isinstance(document.get("data"), list):
        items, prefix = document["data"], "data"
    elif isinstance(document, list):
        items, prefix = document, ""
    else:
        raise Problem(
            "",
            "expected a trace with 'observations' or a list of observations, "
            f"got {json_type(document)}",
        )
    if not isinstance(items, list):
        raise Problem(prefix, "expected a list of observations")
    generations = []
    tools = []
    for k, item in enumerate(items):
        if not (isinstance(item, dict) and isinstance(item.get("type"), str) and "id" in item):
            raise Problem(f"{prefix}[{k}]", "expected an observation with 'id' and 'type'")
        if item["type"] == "GENERATION":
            generations.append((f"{prefix}[{k}]", item))
        elif item["type"] == "TOOL":
            tools.append((f"{prefix}[{k}]", item))
    if not generations:
        raise Problem(prefix, "no GENERATION observation")
    generations.sort(key=lambda g: str(g[1].get("startTime", "")))
    calls = []
    starts = []
    for where, generation in generations:
        call = _generation(generation, where)
        if call.messages or call.notes:
            calls.append((f"generation {generation.get('name') or where!r}", call))
            starts.append(str(generation.get("startTime", "")))
    trace_at = "trace" if trace is not None and "trace" in document else ""
    view = _framework_view(trace, trace_at, items, prefix, calls)
    if view is not None:
        out.extend(view)
        for _, call in calls:  # what the generations held is in the view; their notes stay
            out.notes.extend(n for n in call.notes if n not in out.notes)
        for where, tool in sorted(tools, key=lambda t: str(t[1].get("startTime", ""))):
            _tool_into_history(where, tool, out)
    elif calls and tools and not _carries_history(calls) and _pairs_a_tool(calls, tools):
        _chronological(list(zip(starts, calls, strict=True)), tools, out)
    else:
        if not calls and trace is not None:
            # Some integrations record the model's view only on the trace (a framework's
            # final state): read the trace's output, else its input.
            fallback = _trace_io(trace, trace_at)
            if fallback is not None:
                calls.append(("the trace", fallback))
        if not calls:
            raise Problem(prefix, "no GENERATION observation with input or output messages")
        last_call(calls, out, "an earlier generation held it; the last generation does not")
        for where, tool in sorted(tools, key=lambda t: str(t[1].get("startTime", ""))):
            _tool_into_history(where, tool, out)
        if trace is not None and not _has_output(generations[-1][1], calls):
            _final_answer(trace, trace_at, out)
    _unheld_step_texts(trace, trace_at, items, prefix, out)


def _has_output(generation: dict[str, Any], calls: list[tuple[str, Out]]) -> bool:
    """Whether the last generation (by start) recorded an output, or the last call read one."""
    if _decoded(generation.get("output")) not in (None, "", [], {}):
        return True
    return bool(calls) and any(".output" in origin for origin in calls[-1][1].origins)


def _final_answer(trace: dict[str, Any], prefix: str, out: Out) -> None:
    """The trace's output as the final assistant message, when the generations recorded
    none: BeeAI records each model call's input only, and its answer on the trace as a
    Python ``repr`` of its ``AssistantMessage`` (``{'role': 'assistant', 'text': ...}``).

    Only an object that says it is an assistant message is taken; anything else of the
    trace is left to :func:`_unheld_step_texts`.
    """
    where = f"{prefix}.output" if prefix else "output"
    value = _literal(_decoded(trace.get("output")))
    if not (isinstance(value, dict) and value.get("role") == "assistant"):
        return
    text = value.get("text", value.get("content"))
    if not isinstance(text, str) or not text.strip():
        return
    message = {"role": "assistant", "content": text}
    if message_key(message, set()) not in {message_key(m, out.synthetic) for m in out.messages}:
        out.add(message, where)


#: Longest text parsed as a Python literal (a framework's ``repr`` of a message).
_LITERAL_LIMIT = 1_000_000


def _literal(value: Any) -> Any:
    """A string holding a Python ``repr`` of a dict (``{'role': ...}``) as that dict.

    ``ast.literal_eval`` evaluates literals only (no names, calls or operators), so a
    recording cannot run code through it; anything it refuses stays the string.
    """
    if not isinstance(value, str) or len(value) > _LITERAL_LIMIT:
        return value
    text = value.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return value
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return value
    return parsed if isinstance(parsed, dict) else value


def _framework_view(
    trace: dict[str, Any] | None,
    prefix: str,
    items: list[Any],
    at: str,
    calls: list[tuple[str, Out]],
) -> Out | None:
    """The whole run as the framework recorded it, when that holds more than the
    generations: an ``AGENT`` observation's (OTel GenAI ``invoke_agent``) or the trace's
    own input then output, if it holds every message any generation saw or produced, in
    their order, and more. Microsoft Agent Framework gives each model call only its new
    messages and keeps the system instructions only on its ``invoke_agent`` span; a
    LlamaIndex completion's prompt is only on the trace.
    """
    if not calls:
        return None
    wanted: dict[str, None] = {}  # every message key once, in first-seen order
    for _, call in calls:
        for message in call.messages:
            wanted.setdefault(message_key(message, call.synthetic))
    views: list[tuple[str, dict[str, Any]]] = [
        (f"{at}[{k}]", item)
        for k, item in enumerate(items)
        if isinstance(item, dict) and item.get("type") == "AGENT"
    ]
    if trace is not None:
        views.append((prefix, trace))
    for where, view in views:
        got = _generation(view, where)
        if len(got.messages) <= len(wanted):
            continue
        keys = iter(message_key(m, got.synthetic) for m in got.messages)
        if all(key in keys for key in wanted):  # every message, in order (a subsequence)
            return got
    return None


#: Keys whose strings are text an application step may hold (as the corpus check reads them).
_STEP_TEXT_KEYS = frozenset(
    {"content", "text", "value", "message", "arguments", "input", "output", "result",
     "response", "query", "summary", "reasoning", "thinking", "refusal", "answer"}
)  # fmt: skip
#: Shorter strings are not compared (flags, routing words such as ``end``, tiny ids).
_STEP_MIN = 6


def _unheld_step_texts(
    trace: dict[str, Any] | None, prefix: str, items: list[Any], at: str, out: Out
) -> None:
    """Application steps (``SPAN``, ``AGENT``, ``CHAIN``, ``EVENT`` observations and the
    trace itself) are not model messages, but one may hold text the conversation does not
    (a LangGraph routing decision, CrewAI's task summary, a tool input as a Python
    ``repr``). Such an input or output is a note with its value, so nothing of the trace
    is dropped silently; one whose every text the conversation holds adds nothing.
    """
    sources = [
        (f"{at}[{k}]", item)
        for k, item in enumerate(items)
        if isinstance(item, dict) and item.get("type") not in ("GENERATION", "TOOL")
    ]
    if trace is not None:
        sources.append((prefix, trace))
    held = _Held(out)
    for where, item in sources:
        for key in ("input", "output"):
            value = _decoded(item.get(key))
            if value in (None, "", [], {}):
                continue
            if all(held.holds(text) for text in _step_texts(value, key)):
                continue
            kind = "the trace" if item is trace else f"{item.get('type')} {item.get('name')!r}"
            out.note(
                f"{where}.{key}" if where else key,
                f"{kind} {key}",
                "an application step's data, not a model message; "
                "the conversation does not hold all of its text",
                value,
            )
            held.add(as_text(value))


#: Deepest nesting :func:`_step_texts` walks (JSON and literals inside strings add up);
#: below it a value is compared as one text, so a crafted trace cannot exhaust the stack.
_STEP_DEPTH = 200


def _step_texts(value: Any, key: str, depth: int = 0) -> Iterator[str]:
    """Every string under a text key of ``value`` (JSON text inside strings read too)."""
    if depth > _STEP_DEPTH:
        yield as_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _step_texts(v, str(k), depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _step_texts(v, key, depth + 1)
    elif isinstance(value, str):
        inner = _literal(_decoded(value))
        if isinstance(inner, dict | list | str) and inner != value:
            yield from _step_texts(inner, key, depth + 1)
        elif key in _STEP_TEXT_KEYS and len(value.strip()) >= _STEP_MIN:
            yield value.strip()


class _Held:
    """The text a conversation holds (messages, call names and arguments, notes), to ask
    whether it holds a string as it is, JSON-escaped, or with other spacing."""

    def __init__(self, out: Out) -> None:
        parts: list[str] = []
        for message in out.messages:
            if isinstance(message.get("content"), str):
                parts.append(message["content"])
            for call in message.get("tool_calls") or ():
                parts += [str(call["function"].get("name")), str(call["function"].get("arguments"))]
        parts += [note.content for note in out.notes]
        self.text = ""
        self.squeezed = ""
        self.found: set[str] = set()  # steps repeat the same state: each text is looked up once
        self.add("\n".join(parts))

    def add(self, text: str) -> None:
        self.text += "\n" + text
        self.squeezed += "".join(text.split())

    def holds(self, needle: str) -> bool:
        if needle in self.found:
            return True
        variants = (
            needle,
            json.dumps(needle, ensure_ascii=False)[1:-1],
            json.dumps(needle, ensure_ascii=True)[1:-1],
        )
        if any(v in self.text for v in variants) or "".join(needle.split()) in self.squeezed:
            self.found.add(needle)
            return True
        return False


def _tool_definitions(value: Any) -> list[int]:
    """Indexes of the tool definitions in an input list: Langfuse's LangChain handler
    records each tool given to the model as ``{"role": "tool", "content": {"type":
    "function", "function": {...}}}``, no result of any call (Langfuse's own chat view
    drops them: ``worker/src/__tests__/chatml/adapters/langgraph.test.ts``, "should
    filter out tool definitions"). Tool definitions are not conversation content."""
    if not isinstance(value, list):
        return []
    return [
        k
        for k, item in enumerate(value)
        if isinstance(item, dict)
        and item.get("role") == "tool"
        and "tool_call_id" not in item
        and isinstance(item.get("content"), dict)
        and item["content"].get("type") == "function"
        and isinstance(item["content"].get("function"), dict)
        and "name" in item["content"]["function"]
    ]


def _carries_history(calls: list[tuple[str, Out]]) -> bool:
    """Whether the last generation saw the earlier ones' messages (each call's input repeats
    the conversation so far, as chat APIs take it). Agent SDKs that record each turn's own
    input only, and their tool runs as ``TOOL`` observations (Claude Agent SDK), do not:
    then the conversation is the turns and the tool results in time order."""
    if len(calls) < 2:
        return True
    final = calls[-1][1]
    last = {message_key(m, final.synthetic) for m in final.messages}
    return any(
        message_key(m, call.synthetic) in last
        for _, call in calls[:-1]
        for m in call.messages
        if m.get("role") != "system"
    )


def _pairs_a_tool(calls: list[tuple[str, Out]], tools: list[tuple[str, Any]]) -> bool:
    """Whether some ``TOOL`` observation answers a call one of the generations made."""
    messages = [m for _, call in calls for m in call.messages]
    return any(_match_call(tool, messages) is not None for _, tool in tools)


def _chronological(
    generations: list[tuple[str, tuple[str, Out]]], tools: list[tuple[str, Any]], out: Out
) -> None:
    """Turns that each record only their own input: every generation's messages not yet
    seen, and every ``TOOL`` observation's result, in start order."""
    events: list[tuple[str, int, Any]] = [(start, 0, call) for start, call in generations]
    events += [(str(tool.get("startTime", "")), 1, (where, tool)) for where, tool in tools]
    seen: set[str] = set()
    for _, kind, event in sorted(events, key=lambda e: (e[0], e[1])):
        if kind == 1:
            _tool_result(event[0], event[1], out, len(out.messages))
            continue
        _, call = event
        out.synthetic |= call.synthetic
        out.notes.extend(call.notes)
        for message, origin in zip(call.messages, call.origins, strict=True):
            key = message_key(message, call.synthetic)
            if key not in seen:
                seen.add(key)
                out.add(message, origin)


def _tool_into_history(where: str, tool: dict[str, Any], out: Out) -> None:
    """A ``TOOL`` observation in a trace whose last generation holds the history: its result
    goes after its call when the conversation holds that call unanswered; a result the
    conversation already holds adds nothing; any other is a note."""
    held = _match_call(tool, out.messages, answered=True)
    answered = {json_text(m.get("tool_call_id")) for m in out.messages if m.get("role") == "tool"}
    if held is not None and json_text(held) in answered:
        return  # the call it answers (by name, and input when one matches) has its result
    call_id = _match_call(tool, out.messages)
    if call_id is None:
        _orphan_tool(where, tool, out)
        return
    at = next(
        k for k, m in enumerate(out.messages)
        if any(c.get("id") == call_id for c in m.get("tool_calls") or ())
    ) + 1  # fmt: skip
    while at < len(out.messages) and out.messages[at].get("role") == "tool":
        at += 1
    _tool_result(where, tool, out, at)


def _tool_result(where: str, tool: dict[str, Any], out: Out, at: int) -> None:
    """One ``TOOL`` observation as a tool message at index ``at``, answering its call."""
    call_id = _match_call(tool, out.messages[:at])
    if call_id is None:
        _orphan_tool(where, tool, out)
        return
    output = _decoded(tool.get("output"))
    message = {"role": "tool", "content": _tool_text(output), "tool_call_id": call_id}
    out.messages.insert(at, message)
    out.origins.insert(at, f"{where}.output")


def _orphan_tool(where: str, tool: dict[str, Any], out: Out) -> None:
    """A ``TOOL`` observation no call in the conversation made: a note with its output."""
    out.note(
        f"{where}.output",
        "TOOL observation without a call",
        "no call of this tool in the conversation is left to answer",
        _decoded(tool.get("output")),
    )


def _match_call(tool: dict[str, Any], messages: list[Message], *, answered: bool = False) -> Any:
    """The id of the call a ``TOOL`` observation answers: the first unanswered one (any one,
    with ``answered``) of its name whose arguments are the observation's input, else the
    first of its name."""
    done = (
        set()
        if answered
        else {json_text(m.get("tool_call_id")) for m in messages if m.get("role") == "tool"}
    )
    name = tool.get("name")
    if isinstance(name, str):  # OTel GenAI names a tool span 'execute_tool {tool name}'
        name = name.removeprefix("execute_tool ")
    given = _decoded(tool.get("input"))
    if isinstance(given, dict) and set(given) == {"input"}:
        given = given["input"]
    open_calls = [
        c for m in messages for c in m.get("tool_calls") or ()
        if c["function"]["name"] == name and json_text(c.get("id")) not in done
    ]  # fmt: skip
    for call in open_calls:
        if _decoded(call["function"]["arguments"]) == given:
            return call.get("id")
    return open_calls[0].get("id") if open_calls else None


def _tool_text(output: Any) -> str:
    """A tool's output as text: MCP / Anthropic ``{"content": [text blocks]}`` joined, a
    string as it is, anything else as JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("content"), list):
        texts = [b.get("text") for b in output["content"] if isinstance(b, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            text = "\n".join(t for t in texts if isinstance(t, str))
            return ERROR_PREFIX + text if output.get("isError") is True else text
    return json_text(output)


def _decoded(value: Any) -> Any:
    """An observation's ``input``/``output``: exports keep JSON as text, sometimes twice."""
    for _ in range(3):
        if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "[", '"'):
            return value
        try:
            value = parse_json(value)
        except JSONProblem:
            return value
    return value


def _trace_io(trace: dict[str, Any], prefix: str) -> Out | None:
    for key in ("output", "input"):
        value = _decoded(trace.get(key))
        if isinstance(value, dict | list) and value:
            where = f"{prefix}.{key}" if prefix else key
            try:
                return detect_value(value, json_formats(), where)
            except Problem:
                continue
    return None


def _generation(generation: dict[str, Any], where: str) -> Out:
    """A generation's input messages, then its output (either may be absent).

    A value no format reads (a framework's own argument list, say) is a note
    with its JSON, so a trace never fails on one odd observation.
    """
    call = Out()
    for key, role in (("input", "user"), ("output", "assistant")):
        value = _unwrap(_decoded(generation.get(key)))
        at = f"{where}.{key}" if where else key
        dropped = _tool_definitions(value) if key == "input" else []
        if dropped and len(dropped) == len(value):
            continue
        if isinstance(value, str):
            if value:
                call.add({"role": role, "content": value}, at)
            continue
        if value in (None, [], {}):
            continue
        try:
            got = detect_value([value] if _one_message(value) else value, json_formats(), at)
        except Problem as problem:
            call.note(
                at,
                f"generation {key} in no known format",
                f"no format reads it ({problem.what})",
                value,
                unknown=True,
            )
            continue
        if dropped:
            _without(got, [f"{at}[{k}]" for k in dropped])
        _calls_in_content(got)
        lead = 0
        if key == "output":  # a response echoes its system prompt: it belongs before the input
            while lead < len(got.messages) and got.messages[lead].get("role") == "system":
                lead += 1
        call.messages[:0] = got.messages[:lead]
        call.origins[:0] = got.origins[:lead]
        call.messages.extend(got.messages[lead:])
        call.origins.extend(got.origins[lead:])
        call.notes.extend(got.notes)
        call.synthetic |= got.synthetic
    return call


def _calls_in_content(got: Out) -> None:
    """Koog writes a message's tool calls as its ``content``: JSON text of a list of
    OpenAI-shape calls, under any role (``tool`` in its later calls' input), and its
    results without ``tool_call_id``. Those become an assistant message's calls, and a
    result without an id answers the oldest open call (as ``otel-legacy`` reads Koog)."""
    open_calls: list[Any] = []
    for k, message in enumerate(got.messages):
        content = message.get("content")
        calls = None if message.get("tool_calls") else _content_calls(content, got.origins[k])
        if calls is not None:
            message = {"role": "assistant", "content": None, "tool_calls": calls}
            got.messages[k] = message
        open_calls += [call.get("id") for call in message.get("tool_calls") or ()]
        if message.get("role") != "tool":
            continue
        if message.get("tool_call_id") is not None:
            if message["tool_call_id"] in open_calls:
                open_calls.remove(message["tool_call_id"])
        elif open_calls:
            got.messages[k] = {**message, "tool_call_id": open_calls.pop(0)}


def _without(got: Out, places: list[str]) -> None:
    """Drop the messages read from ``places`` (and the notes about them) from ``got``."""

    def inside(origin: str) -> bool:
        return any(origin == p or origin.startswith((p + ".", p + "[")) for p in places)

    kept = [(m, o) for m, o in zip(got.messages, got.origins, strict=True) if not inside(o)]
    got.messages[:] = [m for m, _ in kept]
    got.origins[:] = [o for _, o in kept]
    got.notes[:] = [n for n in got.notes if not inside(n.where)]


def _one_message(value: Any) -> bool:
    """A single message object (Chat ``role``, or Gemini ``parts``)."""
    return (
        isinstance(value, dict)
        and ("role" in value or "parts" in value)
        and "messages" not in value
    )


def _unwrap(value: Any) -> Any:
    """A response's one choice (``{"message": ...}``) or candidate (``{"content": {...}}``)."""
    if isinstance(value, dict) and isinstance(value.get("message"), dict) and "role" not in value:
        return value["message"]
    if (
        isinstance(value, dict)
        and isinstance(value.get("content"), dict)
        and "parts" in value["content"]
        and "role" not in value
    ):
        return value["content"]
    return value
