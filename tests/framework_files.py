"""Files written by the real frameworks, with seeded defects, for the store reader tests.

The ``SQLiteSession`` file is written by the Agents SDK (``add_items`` and
``Runner.run`` with its ``ScriptedModel``); the checkpoint file by a real
LangGraph ``StateGraph`` with ``SqliteSaver`` and ``add_messages``.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.extensions.memory import AdvancedSQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt

set_tracing_disabled(True)  # no trace export: the tests have no network


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def agents_file(path: Path) -> Path:
    """Three sessions: a retried tool output, an unanswered call then a user turn, a clean one."""

    async def write() -> None:
        retried = SQLiteSession("retried", db_path=path)
        await retried.add_items(
            [
                {"role": "user", "content": "find cats"},
                {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"},
            ]
        )
        await retried.add_items(
            [{"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"}]
        )
        retried.close()
        interrupted = SQLiteSession("interrupted", db_path=path)
        await interrupted.add_items(
            [
                {"role": "user", "content": "grep"},
                {"type": "function_call", "call_id": "g1", "name": "grep", "arguments": "{}"},
                {"role": "user", "content": "anything?"},
            ]
        )
        interrupted.close()
        clean = SQLiteSession("clean", db_path=path)
        agent = Agent(name="a", model=ScriptedModel([[assistant_message("hello")]]))
        await Runner.run(agent, "hi", session=clean)
        clean.close()

    asyncio.run(write())
    return path


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


CALL = {"id": "c1", "name": "search", "args": {"q": "cats"}}


def graph_of(saver: SqliteSaver) -> Any:
    """agent -> tool -> tool again (a re-executed tool node), with LangGraph's add_messages."""

    def agent(state: Any) -> dict[str, Any]:
        if isinstance(state["messages"][-1], HumanMessage) and len(state["messages"]) == 1:
            return {"messages": [AIMessage("", id="ai-1", tool_calls=[CALL])]}
        return {"messages": [AIMessage("3 cats")]}

    def run_tool(state: Any) -> dict[str, Any]:
        last_ai = next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))
        if not last_ai.tool_calls:
            return {}
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="c1", name="search")]}

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("tool", run_tool)
    g.add_node("tool_again", run_tool)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", END)
    return g.compile(checkpointer=saver)


def langgraph_file(path: Path) -> Path:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = graph_of(saver)
    graph.invoke({"messages": [HumanMessage("find cats")]}, {"configurable": {"thread_id": "t1"}})
    graph.update_state(  # a thread where trim_messages left a leading orphan result
        {"configurable": {"thread_id": "t2"}},
        {"messages": [ToolMessage("stale", tool_call_id="gone"), HumanMessage("hi")]},
    )
    conn.close()
    return path


def folder_state(folder: Path) -> dict[str, str]:
    """Every file in the folder with its content's digest."""
    return {p.name: digest(p) for p in sorted(folder.iterdir()) if p.is_file()}


_DEAD_WRITERS = {
    "openai-agents": (
        "import asyncio, os, sys\n"
        "from agents import SQLiteSession\n"
        "s = SQLiteSession('clean', db_path=sys.argv[1])\n"
        "s._get_connection().execute('PRAGMA wal_autocheckpoint=0')\n"
        "asyncio.run(s.add_items([{'role': 'user', 'content': 'late line'}]))\n"
        "os._exit(0)\n"
    ),
    "advanced": (
        "import asyncio, os, sys\n"
        "from agents.extensions.memory import AdvancedSQLiteSession\n"
        "s = AdvancedSQLiteSession(session_id='adv-1', db_path=sys.argv[1])\n"
        "s._get_connection().execute('PRAGMA wal_autocheckpoint=0')\n"
        "asyncio.run(s.add_items([{'role': 'user', 'content': 'late line'}]))\n"
        "os._exit(0)\n"
    ),
    "langgraph": (
        "import os, sqlite3, sys\n"
        "from langchain_core.messages import HumanMessage\n"
        "from langgraph.checkpoint.sqlite import SqliteSaver\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from framework_files import graph_of\n"
        "conn = sqlite3.connect(sys.argv[1], check_same_thread=False)\n"
        "conn.execute('PRAGMA wal_autocheckpoint=0')\n"
        "graph = graph_of(SqliteSaver(conn))\n"
        "graph.update_state({'configurable': {'thread_id': 't3'}},\n"
        "                   {'messages': [HumanMessage('late line')]})\n"
        "os._exit(0)\n"
    ),
}


def left_by_a_dead_writer(path: Path, kind: str) -> None:
    """The framework writes once more and its process dies: ``-wal`` and ``-shm`` stay."""
    here = str(Path(__file__).resolve().parent)
    subprocess.run([sys.executable, "-c", _DEAD_WRITERS[kind], str(path), here], check=True)
    assert Path(f"{path}-wal").stat().st_size > 0 and Path(f"{path}-shm").exists()


def parallel_calls_file(path: Path) -> Path:
    """A clean ``SQLiteSession`` where the model called two tools at once (one item per call)."""

    async def write() -> None:
        session = SQLiteSession("parallel", db_path=path)
        model = ScriptedModel(
            [
                [
                    function_call("weather", {"city": "Paris"}, call_id="c1"),
                    function_call("weather", {"city": "Rome"}, call_id="c2"),
                ],
                [assistant_message("sunny in both")],
            ]
        )
        await Runner.run(Agent(name="a", model=model, tools=[weather]), "weather?", session=session)
        session.close()

    asyncio.run(write())
    return path


@function_tool
def weather(city: str) -> str:
    """The weather in a city (a fake tool)."""
    return f"sunny in {city}"


def advanced_file(path: Path) -> Path:
    """``AdvancedSQLiteSession`` sessions written by the SDK, with usage and branches.

    - ``adv-1``: two turns, the first with parallel calls; clean (11 items);
    - ``adv-dup``: a tool result stored twice;
    - ``adv-cut``: a call left unanswered, then a user turn; branch ``retry``
      copied from it at turn 2 (sharing the first turn's rows) and run on.
    """

    async def write() -> None:
        agent_tools: list[Any] = [weather]
        clean = AdvancedSQLiteSession(session_id="adv-1", db_path=path, create_tables=True)
        model = ScriptedModel(
            [
                [
                    function_call("weather", {"city": "Paris"}, call_id="c1"),
                    function_call("weather", {"city": "Rome"}, call_id="c2"),
                ],
                [assistant_message("sunny in both")],
                [function_call("weather", {"city": "Oslo"}, call_id="c3")],
                [assistant_message("cold in Oslo")],
            ]
        )
        agent = Agent(name="a", model=model, tools=agent_tools)
        for text in ("weather?", "and Oslo?"):
            result = await Runner.run(agent, text, session=clean)
            await clean.store_run_usage(result)
        clean.close()
        dup = AdvancedSQLiteSession(session_id="adv-dup", db_path=path)
        await dup.add_items(
            [
                {"role": "user", "content": "find cats"},
                {"type": "function_call", "call_id": "d1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "d1", "output": "Found 3 cats"},
                {"type": "function_call_output", "call_id": "d1", "output": "Found 3 cats"},
            ]
        )
        dup.close()
        cut = AdvancedSQLiteSession(session_id="adv-cut", db_path=path)
        await cut.add_items(
            [
                {"role": "user", "content": "grep"},
                {"type": "function_call", "call_id": "g1", "name": "grep", "arguments": "{}"},
                {"role": "user", "content": "anything?"},
                {"role": "assistant", "content": "nothing yet"},
            ]
        )
        await cut.create_branch_from_turn(2, "retry")
        await cut.add_items(
            [{"role": "user", "content": "again?"}, {"role": "assistant", "content": "still no"}]
        )
        cut.close()

    asyncio.run(write())
    return path


def interrupted_graph_file(path: Path) -> Path:
    """A thread with a re-fired tool result, stopped at ``interrupt()``: a pending write."""

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="ai-1", tool_calls=[CALL])]}

    def tool(state: Any) -> dict[str, Any]:
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="c1", name="search")]}

    def ask(state: Any) -> dict[str, Any]:
        answer = interrupt("anything else?")
        return {"messages": [HumanMessage(str(answer))]}

    g = StateGraph(State)
    for name, node in (("agent", agent), ("tool", tool), ("tool_again", tool), ("ask", ask)):
        g.add_node(name, node)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", "ask")
    g.add_edge("ask", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = g.compile(checkpointer=SqliteSaver(conn))
    graph.invoke({"messages": [HumanMessage("find cats")]}, {"configurable": {"thread_id": "t"}})
    conn.close()
    return path


def database(server_url: str, name: str) -> str:
    """A fresh database on the test server (dropped first if left over): its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def langgraph_postgres(url: str) -> str:
    """A ``PostgresSaver`` checkpointer written by the real graph and ``update_state``.

    - ``t1``: the tool node ran twice (a re-fired result);
    - ``t2``: a leading orphan result (what ``trim_messages`` can leave);
    - ``t3``: a call left unanswered, then a user turn (a dangling call).
    """
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = graph_of(saver)  # type: ignore[arg-type]
        graph.invoke(
            {"messages": [HumanMessage("find cats")]}, {"configurable": {"thread_id": "t1"}}
        )
        graph.update_state(
            {"configurable": {"thread_id": "t2"}},
            {"messages": [ToolMessage("stale", tool_call_id="gone"), HumanMessage("hi")]},
        )
        graph.update_state(
            {"configurable": {"thread_id": "t3"}},
            {
                "messages": [
                    HumanMessage("grep", id="h1"),
                    AIMessage("", id="ai-g", tool_calls=[{"id": "g1", "name": "grep", "args": {}}]),
                    HumanMessage("anything?", id="h2"),
                ]
            },
        )
    return url


def agents_sqlalchemy(url: str) -> str:
    """``SQLAlchemySession`` tables written by the SDK (``add_items``, ``Runner.run``).

    - ``retried``: a tool result stored twice (a re-fired result);
    - ``interrupted``: a call left unanswered, then a user turn;
    - ``parallel``: two calls at once, clean.
    """
    from agents.extensions.memory import SQLAlchemySession

    async def write() -> None:
        def session(name: str) -> SQLAlchemySession:
            return SQLAlchemySession.from_url(name, url=url, create_tables=True)

        retried = session("retried")
        await retried.add_items(
            [
                {"role": "user", "content": "find cats"},
                {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"},
            ]
        )
        await retried.add_items(
            [{"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"}]
        )
        interrupted = session("interrupted")
        await interrupted.add_items(
            [
                {"role": "user", "content": "grep"},
                {"type": "function_call", "call_id": "g1", "name": "grep", "arguments": "{}"},
                {"role": "user", "content": "anything?"},
            ]
        )
        parallel = session("parallel")
        model = ScriptedModel(
            [
                [
                    function_call("weather", {"city": "Paris"}, call_id="p1"),
                    function_call("weather", {"city": "Rome"}, call_id="p2"),
                ],
                [assistant_message("sunny in both")],
            ]
        )
        await Runner.run(
            Agent(name="a", model=model, tools=[weather]), "weather?", session=parallel
        )
        for s in (retried, interrupted, parallel):
            await s._engine.dispose()

    asyncio.run(write())
    return url
