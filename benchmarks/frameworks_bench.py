"""What the framework integrations cost per update, next to what the frameworks cost alone.

- LangGraph: one reducer update (one new message onto a state of N messages),
  ``gr_mem_messages`` against LangGraph's own ``add_messages`` (both walk the
  state: a reducer is handed the whole list). "cold" is an update onto a list
  the reducer has not returned (every message read); "a graph's updates" is
  each update onto the list the previous one returned, as LangGraph does
  (the live cache: the engine appends to the buffer it kept).
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


def lc_state(n: int) -> list[Any]:
    out: list[Any] = []
    for k in range(n // 3):
        out += [
            HumanMessage(f"q{k}", id=f"h{k}"),
            AIMessage("", id=f"a{k}", tool_calls=[{"id": f"c{k}", "name": "s", "args": {}}]),
            ToolMessage(f"r{k}", tool_call_id=f"c{k}", id=f"t{k}"),
        ]
    return out


def chain(reducer: Callable[[Any, Any], Any], left: list[Any], steps: int = 50) -> float:
    """Milliseconds per update over ``steps`` updates, each onto the list the last returned."""
    state = reducer(left, [HumanMessage("warm-up", id="w")])
    start = time.perf_counter()
    for k in range(steps):
        state = reducer(state, [HumanMessage(f"m{k}", id=f"m{k}")])
    return (time.perf_counter() - start) * 1000 / steps


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
    print("LangGraph reducer, one update onto N messages (ms):")
    for n in (99, 999, 9999):
        left = lc_state(n)
        new: list[Any] = [HumanMessage("next", id="new")]
        ours = best(lambda: gr_mem_messages(left, new))  # noqa: B023
        theirs = best(lambda: add_messages(left, new))  # noqa: B023
        print(f"  N={n:>5}: gr_mem_messages {ours:7.2f}  add_messages {theirs:7.2f}  (cold)")
        warm = chain(gr_mem_messages, left)
        plain = chain(add_messages, left)
        print(
            f"  N={n:>5}: gr_mem_messages {warm:7.2f}  add_messages {plain:7.2f}  (a graph's updates)"
        )
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
