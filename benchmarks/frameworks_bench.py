"""What the framework integrations cost per update, next to what the frameworks cost alone.

- LangGraph: reducer updates onto a state of N messages (1k, 10k, 100k) of a
  realistic agent conversation (turns, tool calls, 30% of results re-fired,
  5% of calls left unanswered), ``gr_mem_messages`` against LangGraph's own
  ``add_messages``, in CPU time, best of interleaved rounds. "chained" is each
  update onto the list the previous one returned, as a running graph does;
  "cold" is an update onto a list the reducer has not returned (after a
  checkpoint load), which reads every message once.
- pydantic-ai: one model request on a history of N messages of the same kind
  of conversation, ``GRMemHistory`` (the capability's processor, fed the list it
  returned plus the step's new messages, as pydantic-ai feeds it) against
  pydantic-ai's own per-request history handling (``_clean_message_history``,
  which every request runs), CPU time, best of interleaved rounds.
- Agents SDK: one step's ``add_items`` (a call and its output, 30% re-sent)
  and one ``get_items`` (what the runner sends), ``GRMemSession`` on a SQLite
  store against the SDK's ``SQLiteSession``, on a session of N items.

Run: ``python benchmarks/frameworks_bench.py`` (a minute or two; figures in ms).
``--sizes 1000,10000`` picks the sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import SQLiteSession
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph.message import add_messages
from pydantic_ai._agent_graph import _clean_message_history
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from flowdrop_core.integrations.langgraph import gr_mem_messages
from flowdrop_core.integrations.openai_agents import GRMemSession
from flowdrop_core.integrations.pydantic_ai import GRMemHistory, gr_mem_history
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


def pa_steps(n: int, start: int = 0) -> list[list[Any]]:
    """An agent conversation as pydantic-ai model requests: each step's new messages.

    Each round: a prompt; a response calling two tools and the request with
    their returns (30% of returns sent twice, 5% of calls never answered);
    the answer, then the next prompt.
    """
    steps: list[list[Any]] = []
    k = start
    size = 0
    while size < n:
        ids = [f"c{k}-{j}" for j in range(2)]
        returns: list[Any] = []
        for j, cid in enumerate(ids):
            if (k * 2 + j) % 20 == 7:  # 5%: never answered
                continue
            returns.append(ToolReturnPart("search", f"result {cid}", tool_call_id=cid))
            if (k * 2 + j) % 10 < 3:  # 30%: the same return again
                returns.append(ToolReturnPart("search", "again", tool_call_id=cid))
        calls = [ToolCallPart("search", {"q": k}, tool_call_id=cid) for cid in ids]
        steps.append([ModelResponse(parts=calls), ModelRequest(parts=returns)])
        steps.append(
            [
                ModelResponse(parts=[TextPart(f"answer {k}")]),
                ModelRequest(parts=[UserPromptPart(f"question {k + 1}")]),
            ]
        )
        size += 4
        k += 1
    return steps


def pa_history(n: int) -> list[Any]:
    """A history of about ``n`` messages, as the processor leaves it (one pass: the same result)."""
    history: list[Any] = [ModelRequest(parts=[UserPromptPart("question 0")])]
    return gr_mem_history([*history, *(m for step in pa_steps(n) for m in step)])


def pydantic_ai(sizes: tuple[int, ...], rounds: int = 3) -> None:
    """One model request's history handling, chained: GR-MEM against pydantic-ai's own."""
    print("pydantic-ai, CPU ms per model request on a history of N messages (best of rounds):")
    for n in sizes:
        base = pa_history(n)
        steps = pa_steps(max(20, min(200, 2_000_000 // max(n, 1) // 10)), start=10**6)

        def ours(base: list[Any] = base, steps: list[list[Any]] = steps) -> float:
            proc = GRMemHistory()
            history = proc(list(base))  # the run's first request: one pass (not timed)
            begin = time.process_time()
            for step in steps:
                history = proc([*history, *step])
            return (time.process_time() - begin) * 1000 / len(steps)

        def theirs(base: list[Any] = base, steps: list[list[Any]] = steps) -> float:
            history = list(base)
            begin = time.process_time()
            for step in steps:
                history = [*history, *step]
                _clean_message_history(list(history), repair_last_response=True)
            return (time.process_time() - begin) * 1000 / len(steps)

        mine, own = [], []
        for _ in range(rounds):
            mine.append(ours())
            own.append(theirs())
        cold = best(lambda: GRMemHistory()(list(base)), 3)  # noqa: B023
        g, a = min(mine), min(own)
        print(
            f"  N={len(base):>6}: GRMemHistory {g:8.3f}  pydantic-ai's own {a:8.3f}  "
            f"ratio {g / a:5.2f}x   cold (first request of a run) {cold:8.2f} (wall ms)"
        )


def items(n: int, start: int = 0) -> list[Any]:
    """``n`` Responses items of an agent conversation: prompts, calls, outputs (some re-sent)."""
    out: list[Any] = []
    k = start
    while len(out) < n:
        out.append({"role": "user", "content": f"question {k}"})
        cid = f"c{k}"
        out.append({"type": "function_call", "call_id": cid, "name": "s", "arguments": "{}"})
        if k % 20 != 7:  # 5%: never answered
            out.append({"type": "function_call_output", "call_id": cid, "output": f"r{k}"})
        out.append({"role": "assistant", "content": f"answer {k}"})
        k += 1
    return out[:n]


def agents(sizes: tuple[int, ...], rounds: int = 3) -> None:
    """One step's add_items and one get_items, GRMemSession against the SDK's SQLiteSession."""
    print("Agents SDK on a SQLite file, CPU ms on a session of N items (best of rounds):")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "gr.sqlite3")
            gr = GRMemSession("bench", store=store)
            sdk = SQLiteSession("bench", db_path=Path(tmp) / "sdk.sqlite")
            asyncio.run(gr.add_items(items(n)))
            asyncio.run(sdk.add_items(items(n)))
            counter = iter(range(10**6))

            def step(session: Any, counter: Any = counter) -> float:
                k = next(counter)
                call = {"type": "function_call", "call_id": f"x{k}", "name": "s", "arguments": "{}"}
                out = {"type": "function_call_output", "call_id": f"x{k}", "output": "r"}
                batch = [call, out, dict(out)] if k % 10 < 3 else [call, out]  # 30% re-sent
                begin = time.process_time()
                asyncio.run(session.add_items(batch))
                return (time.process_time() - begin) * 1000

            def read(session: Any) -> float:
                begin = time.process_time()
                asyncio.run(session.get_items())
                return (time.process_time() - begin) * 1000

            adds: dict[str, list[float]] = {"gr": [], "sdk": []}
            reads: dict[str, list[float]] = {"gr": [], "sdk": []}
            for _ in range(max(rounds, 5)):
                adds["gr"].append(step(gr))
                adds["sdk"].append(step(sdk))
            for _ in range(rounds):
                reads["gr"].append(read(gr))
                reads["sdk"].append(read(sdk))
            ga, sa = min(adds["gr"]), min(adds["sdk"])
            gg, sg = min(reads["gr"]), min(reads["sdk"])
            print(
                f"  N={n:>6}: add_items GRMemSession {ga:7.2f}  SQLiteSession {sa:7.2f}  "
                f"ratio {ga / sa:5.2f}x   get_items {gg:8.2f} vs {sg:8.2f}  ratio {gg / sg:5.2f}x"
            )
            store.close()
            sdk.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="history sizes, comma-separated"
    )
    parser.add_argument("--only", choices=("langgraph", "pydantic-ai", "agents"), default=None)
    args = parser.parse_args()
    sizes = tuple(int(x) for x in args.sizes.split(","))
    if args.only in (None, "langgraph"):
        langgraph(sizes)
    if args.only in (None, "pydantic-ai"):
        pydantic_ai(sizes)
    if args.only in (None, "agents"):
        agents(sizes)


if __name__ == "__main__":
    main()
