"""What the framework integrations cost per update, next to what the frameworks cost alone.

- LangGraph: reducer updates onto a state of N messages (1k, 10k, 100k) of a
  realistic agent conversation (turns, tool calls, 30% of results re-fired,
  5% of calls left unanswered), ``gr_mem_messages`` against LangGraph's own
  ``add_messages``, in CPU time, best of interleaved rounds. "chained" is each
  update onto the list the previous one returned, as a running graph does;
  "cold" is an update onto a list the reducer has not returned (after a
  checkpoint load), which reads every message once.
- Agents SDK: one ``add_items`` of a call and its output, ``GRMemSession`` on a
  SQLite store against the SDK's ``SQLiteSession``, on a session of N items.
- pydantic-ai: one history processor pass over N messages.

Run: ``python benchmarks/frameworks_bench.py`` (a few seconds; figures in ms).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import SQLiteSession
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph.message import add_messages
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from flowdrop_core.integrations.langgraph import gr_mem_messages
from flowdrop_core.integrations.openai_agents import GRMemSession
from flowdrop_core.integrations.pydantic_ai import gr_mem_history
from flowdrop_core.storage import SQLiteStore


def best(fn: Callable[[], Any], repeat: int = 5) -> float:
    """The best of ``repeat`` runs, in milliseconds (the least disturbed by the shared machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def agent_updates(n: int, start: int = 0) -> list[list[Any]]:
    """``n`` messages of an agent loop as reducer updates, one message each.

    Each round: a question, a turn calling two tools, their results; 30% of
    results come again (a re-fired tool node) and 5% of calls get none.
    """
    out: list[list[Any]] = []
    k = start
    while len(out) < n:
        calls = [{"id": f"c{k}-{j}", "name": "search", "args": {"q": k}} for j in range(2)]
        out.append([HumanMessage(f"question {k}", id=f"h{k}")])
        out.append([AIMessage("", id=f"a{k}", tool_calls=calls)])
        for j, call in enumerate(calls):
            if (k * 2 + j) % 20 == 7:  # 5%: never answered
                continue
            out.append([ToolMessage(f"result {k}-{j}", tool_call_id=call["id"], id=f"t{k}-{j}")])
            if (k * 2 + j) % 10 < 3:  # 30%: the tool node runs again
                out.append([ToolMessage("again", tool_call_id=call["id"], id=f"x{k}-{j}")])
        k += 1
    return out[:n]


def state_of(n: int) -> list[Any]:
    """A state of about ``n`` messages, built by the reducer the way a graph builds it."""
    state: list[Any] = []
    for update in agent_updates(n):
        state = gr_mem_messages(state, update)
    return state


def chain(reducer: Callable[[Any, Any], Any], left: list[Any], updates: list[list[Any]]) -> float:
    """CPU milliseconds per update, each onto the list the last one returned."""
    state = reducer(list(left), [HumanMessage("warm-up", id="warm")])
    start = time.process_time()
    for update in updates:
        state = reducer(state, update)
    return (time.process_time() - start) * 1000 / len(updates)


def langgraph(sizes: tuple[int, ...] = (1_000, 10_000, 100_000), rounds: int = 3) -> None:
    """The reducer's cost per chained update and per cold update, against add_messages."""
    print("LangGraph reducer, CPU ms per update onto a state of N messages (best of rounds):")
    for n in sizes:
        left = state_of(n)
        steps = max(20, min(200, 2_000_000 // max(n, 1) // 10))
        updates = agent_updates(steps, start=10**6)
        ours, theirs = [], []
        for _ in range(rounds):  # interleaved: the machine's load moves both alike
            ours.append(chain(gr_mem_messages, left, updates))
            theirs.append(chain(add_messages, left, updates))
        one: list[Any] = [HumanMessage("x", id="cold")]
        cold = best(lambda: gr_mem_messages(list(left), one), 3)  # noqa: B023
        plain = best(lambda: add_messages(list(left), one), 3)  # noqa: B023
        g, a = min(ours), min(theirs)
        print(
            f"  N={len(left):>6}: chained gr_mem_messages {g:8.3f}  add_messages {a:8.3f}  "
            f"ratio {g / a:5.2f}x   cold {cold:8.2f} vs {plain:8.2f} (wall ms)"
        )


def items(n: int) -> list[Any]:
    out: list[Any] = []
    for k in range(n // 2):
        out += [
            {"type": "function_call", "call_id": f"c{k}", "name": "s", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{k}", "output": f"r{k}"},
        ]
    return out


def pa_history(n: int) -> list[Any]:
    out: list[Any] = []
    for k in range(n // 2):
        out += [
            ModelResponse(parts=[ToolCallPart("s", {}, tool_call_id=f"c{k}")]),
            ModelRequest(parts=[ToolReturnPart("s", f"r{k}", tool_call_id=f"c{k}")]),
        ]
    return out


def main() -> None:
    langgraph()
    print("Agents SDK, add_items(call + output) on a session of N items, SQLite file (ms):")
    for n in (100, 1000):
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "gr.sqlite3")
            gr = GRMemSession("bench", store=store)
            sdk = SQLiteSession("bench", db_path=Path(tmp) / "sdk.sqlite")
            asyncio.run(gr.add_items(items(n)))
            asyncio.run(sdk.add_items(items(n)))
            counter = iter(range(10**6))

            def one(session: Any, counter: Any = counter) -> None:
                k = next(counter)
                asyncio.run(
                    session.add_items(
                        [
                            {
                                "type": "function_call",
                                "call_id": f"x{k}",
                                "name": "s",
                                "arguments": "{}",
                            },
                            {"type": "function_call_output", "call_id": f"x{k}", "output": "r"},
                        ]
                    )
                )

            ours = best(lambda: one(gr))  # noqa: B023
            theirs = best(lambda: one(sdk))  # noqa: B023
            print(f"  N={n:>5}: GRMemSession {ours:7.2f}  SQLiteSession {theirs:7.2f}")
            store.close()
            sdk.close()
    print("pydantic-ai history processor, one pass over N messages (ms):")
    for n in (100, 1000, 10000):
        history = pa_history(n)
        print(f"  N={n:>5}: gr_mem_history {best(lambda: gr_mem_history(history)):7.2f}")  # noqa: B023


if __name__ == "__main__":
    main()
