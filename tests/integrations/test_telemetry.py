"""Each append's MEM-14 report on the current OpenTelemetry span, from real framework runs.

The OpenTelemetry SDK's in-memory span exporter and metric reader record what
a tracing backend (Langfuse, Phoenix, ...) would receive.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flowdrop_core import telemetry
from flowdrop_core.integrations.langgraph import gr_mem_messages

_READER = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))


class State(TypedDict):
    messages: Annotated[list[AnyMessage], gr_mem_messages]


CALL = {"id": "c1", "name": "search", "args": {"q": "cats"}}


def _graph() -> Any:
    """agent -> tool -> tool again (a re-executed tool node re-emits its result)."""

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="ai-1", tool_calls=[CALL])]}

    def run_tool(state: Any) -> dict[str, Any]:
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="c1", name="search")]}

    g: StateGraph[Any] = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("tool", run_tool)
    g.add_node("tool_again", run_tool)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", END)
    return g.compile()


@pytest.fixture
def tracer() -> Iterator[tuple[Any, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter
    provider.shutdown()


def _sums() -> dict[str, int]:
    data = _READER.get_metrics_data()
    out: dict[str, int] = {}
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                points: Any = metric.data.data_points
                out[metric.name] = int(sum(p.value for p in points))
    return out


def _append(count: int, appended: int, decisions: list[str], rules: list[str]) -> dict[str, Any]:
    return {
        "gr_mem.append.source": "langgraph",
        "gr_mem.append.count": count,
        "gr_mem.append.appended": appended,
        "gr_mem.append.appended_any": appended > 0,
        "gr_mem.append.decisions": tuple(decisions),
        "gr_mem.append.rules": tuple(rules),
    }


def test_a_langgraph_run_puts_every_update_report_on_the_current_span(
    tracer: tuple[Any, InMemorySpanExporter],
) -> None:
    """One event per reducer update, exact attributes; the span keeps the latest; counters add up."""
    assert telemetry.ENABLED
    before = _sums()
    t, exporter = tracer
    with t.start_as_current_span("agent step"):
        out = _graph().invoke({"messages": [HumanMessage("find cats", id="h1")]})
    assert len(out["messages"]) == 3
    (span,) = exporter.get_finished_spans()
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [
        ("gr_mem.append", _append(1, 1, [], [])),  # the input
        ("gr_mem.append", _append(2, 1, [], [])),  # the agent's call
        ("gr_mem.append", _append(3, 1, [], [])),  # the tool's result
        ("gr_mem.append", _append(3, 0, ["duplicate_result"], ["MEM-1"])),  # re-fired
    ]
    assert dict(span.attributes or {}) == _append(3, 0, ["duplicate_result"], ["MEM-1"])
    after = _sums()
    assert after.get("gr_mem.appended", 0) - before.get("gr_mem.appended", 0) == 3
    dropped = after.get("gr_mem.duplicates_dropped", 0) - before.get("gr_mem.duplicates_dropped", 0)
    assert dropped == 1


def test_a_heal_is_counted_and_named_with_its_rule(
    tracer: tuple[Any, InMemorySpanExporter],
) -> None:
    """MEM-3: an unanswered call healed at the next human message shows as a heal."""
    before = _sums()
    t, exporter = tracer
    with t.start_as_current_span("turn"):
        state = gr_mem_messages(
            [], [HumanMessage("q", id="h1"), AIMessage("", id="a1", tool_calls=[CALL])]
        )
        gr_mem_messages(state, [HumanMessage("and?", id="h2")])
    (span,) = exporter.get_finished_spans()
    assert dict(span.events[-1].attributes or {}) == _append(
        4, 1, ["placeholder_inserted"], ["MEM-3"]
    )
    after = _sums()
    assert after.get("gr_mem.heals", 0) - before.get("gr_mem.heals", 0) == 1


def test_agents_add_items_and_pydantic_ai_requests_report_on_the_span(
    tracer: tuple[Any, InMemorySpanExporter],
) -> None:
    """The other two integrations: source-tagged events with their own MEM-14 figures."""
    import asyncio

    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from flowdrop_core.integrations.openai_agents import GRMemSession
    from flowdrop_core.integrations.pydantic_ai import GRMemHistory

    t, exporter = tracer
    session = GRMemSession("otel")
    out = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    call = {"type": "function_call", "call_id": "c1", "name": "s", "arguments": "{}"}
    processor = GRMemHistory()
    with t.start_as_current_span("step"):
        asyncio.run(session.add_items([call, out, dict(out)]))
        history = processor([ModelRequest(parts=[UserPromptPart("hi")])])
        processor([*history, ModelRequest(parts=[UserPromptPart("again")])])
    (span,) = exporter.get_finished_spans()
    got = [dict(e.attributes or {}) for e in span.events]
    assert got == [
        {**_append(2, 2, ["duplicate_result"], ["MEM-1"]), "gr_mem.append.source": "openai_agents"},
        {**_append(1, 1, [], []), "gr_mem.append.source": "pydantic_ai"},
        {**_append(2, 1, [], []), "gr_mem.append.source": "pydantic_ai"},
    ]
