"""LangGraph: a re-executed tool node appends a second result; GR-MEM keeps one.

A real ``StateGraph`` runs ``agent -> tool -> tool_again``: the tool node runs
twice (a retry policy, a resumed run), and each run emits a ``ToolMessage``
for the same ``tool_call_id``. ``add_messages`` dedups by message id only,
so the state holds two results and the next provider call is rejected
("each tool_use must have a single result"). With ``gr_mem_messages`` the
second result is dropped (MEM-1), and a call left unanswered is healed at
the next human message (MEM-3). No network, no model: the nodes are scripted.

Run: ``python examples/langgraph_refired_tool_node.py``
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from flowdrop_core.integrations.langgraph import gr_mem_messages

CALL = {"id": "call_1", "name": "search", "args": {"q": "cats"}}


class Plain(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class WithGRMem(TypedDict):
    messages: Annotated[list[AnyMessage], gr_mem_messages]


def build(state: type) -> Any:
    def agent(_: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=[CALL])]}

    def tool(_: Any) -> dict[str, Any]:
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="call_1")]}

    g = StateGraph(state)
    g.add_node("agent", agent)
    g.add_node("tool", tool)
    g.add_node("tool_again", tool)  # the same node, executed a second time
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", END)
    return g.compile()


def results(messages: list[AnyMessage]) -> int:
    return sum(isinstance(m, ToolMessage) for m in messages)


def main() -> None:
    start = {"messages": [HumanMessage("find cats")]}
    plain = build(Plain).invoke(start)["messages"]
    fixed = build(WithGRMem).invoke(start)["messages"]
    print(f"add_messages:    {results(plain)} results for call_1 (a provider rejects this)")
    print(f"gr_mem_messages: {results(fixed)} result for call_1")
    assert results(plain) == 2 and results(fixed) == 1

    healed = gr_mem_messages(
        [HumanMessage("find dogs"), AIMessage("", tool_calls=[{**CALL, "id": "call_2"}])],
        [HumanMessage("anything?")],
    )
    print(f"healed at the next human message: {healed[2].content!r} for {healed[2].tool_call_id}")
    assert healed[2].tool_call_id == "call_2"


if __name__ == "__main__":
    main()
