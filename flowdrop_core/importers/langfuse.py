"""A tracing tool's trace export (Langfuse): what the last generation saw, then its output.

A trace object with ``observations`` (``GET /api/public/traces/{id}``), an
observations page (``{"data": [...]}``) or a bare list of observations. The
``GENERATION`` observations are ordered by ``startTime``; the conversation is
the last one's ``input`` (messages in any JSON format this package reads)
followed by its ``output``. Messages of earlier generations that the last one
does not hold are notes. Spans and events are the application's own steps,
not model messages.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers.base import Out, Problem, json_type, last_call

NAME = "langfuse"
EXPECTS = (
    "a trace export with 'observations' (or {'data': [...]}) whose GENERATION observations "
    "carry 'input' messages and 'output'"
)


def read(document: Any, out: Out) -> None:
    """Read a trace, an observations page or a list of observations."""
    if isinstance(document, dict) and isinstance(document.get("observations"), list):
        items, prefix = document["observations"], "observations"
    elif isinstance(document, dict) and isinstance(document.get("data"), list):
        items, prefix = document["data"], "data"
    elif isinstance(document, list):
        items, prefix = document, ""
    else:
        raise Problem(
            "",
            f"expected a trace with 'observations' or a list of observations, got {json_type(document)}",
        )
    generations = []
    for k, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "GENERATION":
            generations.append((f"{prefix}[{k}]", item))
        elif not (isinstance(item, dict) and isinstance(item.get("type"), str) and "id" in item):
            raise Problem(f"{prefix}[{k}]", "expected an observation with 'id' and 'type'")
    if not generations:
        raise Problem(prefix, "no GENERATION observation")
    generations.sort(key=lambda g: str(g[1].get("startTime", "")))
    calls = [
        (f"generation {g.get('name') or where!r}", _generation(g, where))
        for where, g in generations
    ]
    last_call(calls, out, "an earlier generation held it; the last generation does not")


def _generation(generation: dict[str, Any], where: str) -> Out:
    from flowdrop_core.importers.registry import JSON_FORMATS, detect_value

    call = Out()
    value = generation.get("input")
    if isinstance(value, str):
        call.add({"role": "user", "content": value}, f"{where}.input")
    elif isinstance(value, dict) and "role" in value:
        call.extend(detect_value([value], JSON_FORMATS, f"{where}.input"))
    elif value is not None:
        call.extend(detect_value(value, JSON_FORMATS, f"{where}.input"))
    output = generation.get("output")
    if isinstance(output, str):
        call.add({"role": "assistant", "content": output}, f"{where}.output")
    elif isinstance(output, dict) and "role" in output:
        call.extend(detect_value([output], JSON_FORMATS, f"{where}.output"))
    elif output is not None:
        call.extend(detect_value(output, JSON_FORMATS, f"{where}.output"))
    if not call.messages:
        raise Problem(where, "generation without input or output messages")
    return call
