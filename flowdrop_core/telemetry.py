"""Each append's MEM-14 report on the current OpenTelemetry span (extra ``otel``).

With ``opentelemetry-api`` installed, the framework integrations call
:func:`emit` after every append (a LangGraph reducer update, an Agents
``add_items``, a pydantic-ai model request). It puts the report on the
span current at that moment (the one a tracing setup, Langfuse, Phoenix or
LangSmith opened for the step), GenAI-style, under one prefix:

- attributes (the latest append of the span wins): ``gr_mem.append.source``
  (``langgraph``, ``openai_agents``, ``pydantic_ai``), ``gr_mem.append.count``,
  ``gr_mem.append.appended``, ``gr_mem.append.appended_any``,
  ``gr_mem.append.decisions`` (the kinds of every decision other than a plain
  append, in order) and ``gr_mem.append.rules`` (their rules, each once);
- one span event ``gr_mem.append`` per append with the same attributes;
- counters (``gr_mem.appended``, ``gr_mem.duplicates_dropped``,
  ``gr_mem.heals``, ``gr_mem.replacements``, ``gr_mem.evictions``,
  ``gr_mem.refusals``), each with the ``gr_mem.append.source`` attribute.

Without the package :data:`ENABLED` is ``False`` (resolved once, at import)
and an integration's call site is one ``if`` on it: nothing else runs.
With it but no span recording and no meter provider set, the API's no-op
objects make the cost a few attribute look-ups.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from flowdrop_core.events import EventKind

__all__ = ["ENABLED", "PREFIX", "AppendReport", "attributes", "emit"]

#: The prefix of every attribute, event and counter name.
PREFIX = "gr_mem"

try:  # resolved once: the integrations test this constant, nothing else
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised by the optional-imports test
    _metrics = _trace = None  # type: ignore[assignment]

#: True when ``opentelemetry-api`` is importable.
ENABLED: bool = _trace is not None


class AppendReport(Protocol):
    """What :func:`emit` reads: any MEM-14 report with its decisions."""

    count: int
    appended: int

    @property
    def events(self) -> Iterable[Any]: ...


#: Counter name per decision kind (a plain append counts in ``gr_mem.appended``).
_COUNTED = {
    EventKind.DUPLICATE_RESULT: "duplicates_dropped",
    EventKind.DUPLICATE_TURN: "duplicates_dropped",
    EventKind.PLACEHOLDER_INSERTED: "heals",
    EventKind.PLACEHOLDER_REPLACED: "replacements",
    EventKind.EVICTED: "evictions",
    EventKind.REFUSED: "refusals",
}
_COUNTERS: dict[str, Any] = {}


def _counter(name: str) -> Any:
    made = _COUNTERS.get(name)
    if made is None:
        assert _metrics is not None
        meter = _metrics.get_meter("flowdrop_core")
        made = _COUNTERS[name] = meter.create_counter(
            f"{PREFIX}.{name}", unit="{message}", description=f"GR-MEM appends: {name}"
        )
    return made


def attributes(source: str, report: AppendReport) -> dict[str, Any]:
    """The span attributes of one append's report (the names :func:`emit` writes)."""
    decisions: list[str] = []
    rules: list[str] = []
    for ev in report.events:
        if ev.kind == EventKind.APPENDED:
            continue
        decisions.append(str(ev.kind))
        if ev.rule not in rules:
            rules.append(ev.rule)
    key = f"{PREFIX}.append"
    return {
        f"{key}.source": source,
        f"{key}.count": report.count,
        f"{key}.appended": report.appended,
        f"{key}.appended_any": report.appended > 0,
        f"{key}.decisions": decisions,
        f"{key}.rules": rules,
    }


def emit(source: str, report: AppendReport) -> None:
    """Put ``report`` on the current span (attributes and one event) and count its decisions."""
    if _trace is None:
        return
    attrs = attributes(source, report)
    span = _trace.get_current_span()
    if span.is_recording():
        span.set_attributes(attrs)
        span.add_event(f"{PREFIX}.append", attrs)
    labels = {f"{PREFIX}.append.source": source}
    if report.appended:
        _counter("appended").add(report.appended, labels)
    tally: dict[str, int] = {}
    for kind in attrs[f"{PREFIX}.append.decisions"]:
        name = _COUNTED.get(EventKind(kind))
        if name is not None:
            tally[name] = tally.get(name, 0) + 1
    for name, n in tally.items():
        _counter(name).add(n, labels)
