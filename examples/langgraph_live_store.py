"""Watch a LangGraph agent while it runs: each state update's GR-MEM decisions, as it lands.

A small agent (a fake chat model, scripted: a tool call, then an answer)
runs a few turns on a LangGraph ``StateGraph`` whose ``messages`` use
``gr_mem_reducer``; every update's MEM-14 report goes to the append journal
of a flowdrop SQLite store (``ReducerJournal``). Its tool node runs twice on
every other turn (a retried node), so ``add_messages`` would keep a second
result for the same call; GR-MEM drops it (MEM-1), and the journal says so.

Two terminals::

    python examples/langgraph_live_store.py agent.sqlite3
    flowdrop-buffer store agent.sqlite3 --follow

With a path the turns are 2 s apart (``--pause``), to be watched. Without
one the store goes to a temporary folder, removed at the end, and the turns
run straight through (as the tests do).
"""

import argparse
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from flowdrop_core.integrations.langgraph import ReducerJournal, gr_mem_reducer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage import SQLiteStore

SLOT = ("session", "demo", "messages")
QUESTIONS = ["find cats", "and dogs?", "any parrots?", "how about fish?"]


def scripted_model(turns: int) -> GenericFakeChatModel:
    """A fake chat model: per turn, a tool call, then the answer once the result is in."""
    replies: list[AIMessage] = []
    for n in range(turns):
        call = {"id": f"call_{n + 1}", "name": "search", "args": {"q": QUESTIONS[n % 4]}}
        replies += [AIMessage("", tool_calls=[call]), AIMessage(f"Here is what I found ({n + 1}).")]
    return GenericFakeChatModel(messages=iter(replies))


def build(store: SQLiteStore, turns: int) -> Any:
    journal = ReducerJournal(store=store, slot=SLOT)

    class State(TypedDict):  # the reducer is made here, so no postponed annotations
        messages: Annotated[list[AnyMessage], gr_mem_reducer(journal=journal)]

    model = scripted_model(turns)

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def tool(state: Any) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]
        return {
            "messages": [ToolMessage(f"Found 3 ({call['args']['q']})", tool_call_id=call["id"])]
        }

    def retried(state: Any) -> dict[str, Any]:
        """Every other turn the tool node runs again: the same result for the same call."""
        last_ai = next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))
        turn = sum(isinstance(m, HumanMessage) for m in state["messages"])
        if not last_ai.tool_calls or turn % 2:
            return {}
        return tool({"messages": [last_ai]})

    g: StateGraph[Any] = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("tool", tool)
    g.add_node("retried", retried)
    g.add_node("answer", agent)
    # Fixed edges: a conditional edge would read the state "fresh", running the reducer
    # (and so its journal) once more for the same update.
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "retried")
    g.add_edge("retried", "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=InMemorySaver())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", nargs="?", help="the SQLite store file (default: a temp folder)")
    parser.add_argument("--turns", type=int, default=4, help="user turns to run")
    parser.add_argument(
        "--pause", type=float, default=None, help="seconds between turns (default 2 with a path)"
    )
    args = parser.parse_args()
    if args.store:
        run(Path(args.store), args.turns, 2.0 if args.pause is None else args.pause)
        return
    with tempfile.TemporaryDirectory(prefix="flowdrop-live-") as folder:
        run(Path(folder) / "agent.sqlite3", args.turns, args.pause or 0.0)


def run(path: Path, turns: int, pause: float) -> None:
    """Run ``turns`` user turns, ``pause`` seconds apart, journaled into the store at ``path``."""
    store = SQLiteStore(path)
    print(f"writing to {path}; follow it with: flowdrop-buffer store {path} --follow")
    graph = build(store, turns)
    config = {"configurable": {"thread_id": "demo"}}
    results = 0
    for n in range(turns):
        time.sleep(pause)
        state = graph.invoke({"messages": [HumanMessage(QUESTIONS[n % 4])]}, config)
        results = sum(isinstance(m, ToolMessage) for m in state["messages"])
        print(f"turn {n + 1}: {len(state['messages'])} messages, {results} tool results")
    records = journal_for(store).read(SLOT)
    dropped = sum(e["kind"] == "duplicate_result" for r in records for e in r.events)
    print(
        f"{len(records)} journaled updates; add_messages would have kept {dropped} second "
        f"result(s) for an answered call, gr_mem_reducer dropped them (MEM-1)"
    )
    assert dropped == turns // 2 and results == turns
    store.close()


if __name__ == "__main__":
    main()
