"""A tracing tool's trace export (Langfuse): what the last generation saw, then its output.

A trace object with ``observations`` (``GET /api/public/traces/{id}``), an
export ``{"trace": {...}, "observations": [...]}``, an observations page
(``{"data": [...]}``) or a bare list of observations. ``input`` and
``output`` may be JSON text (exports keep them so), read as the JSON they hold. The
``GENERATION`` observations are ordered by ``startTime``; the conversation is
the last one's ``input`` (messages in any JSON format this package reads)
followed by its ``output``. Messages of earlier generations that the last one
does not hold are notes. Spans and events are the application's own steps,
not model messages. When no generation carries input or output, the trace's
own ``output`` (else ``input``) is read instead: some framework integrations
record the model's view only there.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers.base import Out, Problem, json_type, last_call
from flowdrop_core.importers.detect import detect_value, json_formats
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "langfuse"
EXPECTS = (
    "a trace export with 'observations' (or {'data': [...]}) whose GENERATION observations "
    "carry 'input' messages and 'output'"
)


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
    for k, item in enumerate(items):
        if not (isinstance(item, dict) and isinstance(item.get("type"), str) and "id" in item):
            raise Problem(f"{prefix}[{k}]", "expected an observation with 'id' and 'type'")
        if item["type"] == "GENERATION":
            generations.append((f"{prefix}[{k}]", item))
    if not generations:
        raise Problem(prefix, "no GENERATION observation")
    generations.sort(key=lambda g: str(g[1].get("startTime", "")))
    calls = []
    for where, generation in generations:
        call = _generation(generation, where)
        if call.messages or call.notes:
            calls.append((f"generation {generation.get('name') or where!r}", call))
    if not calls and trace is not None:
        # Some integrations record the model's view only on the trace (a framework's
        # final state): read the trace's output, else its input.
        fallback = _trace_io(trace, "trace" if "trace" in document else "")
        if fallback is not None:
            calls.append(("the trace", fallback))
    if not calls:
        raise Problem(prefix, "no GENERATION observation with input or output messages")
    last_call(calls, out, "an earlier generation held it; the last generation does not")


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
        at = f"{where}.{key}"
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
