"""The LangGraph reducer and the LangChain v1 middleware, run inside real graphs and agents.

Every graph here is a real ``StateGraph`` (with a real checkpointer where a
thread spans several invocations); every model is LangChain's own fake chat
model. Nothing of LangGraph or LangChain is mocked.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict, cast

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from flowdrop_core.events import EventKind
from flowdrop_core.integrations.langgraph import (
    REMOVE_ALL_MESSAGES,
    GRMemMiddleware,
    ReducerJournal,
    gr_mem_messages,
    gr_mem_reducer,
    last_report,
    message_to_row,
    provider_view,
    row_to_message,
)
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.replay import replay_journal
from flowdrop_core.messages import PLACEHOLDER_CONTENT
from flowdrop_core.storage import MemoryStore

CALL = {"id": "c1", "name": "search", "args": {"q": "cats"}}


class GRState(TypedDict):
    messages: Annotated[list[AnyMessage], gr_mem_messages]


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _refire_graph(state_type: type) -> Any:
    """agent -> tool -> tool again: the tool node re-executes and re-emits its result."""

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="ai-1", tool_calls=[CALL])]}

    def run_tool(state: Any) -> dict[str, Any]:
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="c1", name="search")]}

    g: StateGraph[Any] = StateGraph(state_type)
    g.add_node("agent", agent)
    g.add_node("tool", run_tool)
    g.add_node("tool_again", run_tool)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", END)
    return g.compile()


def _results(messages: list[AnyMessage], call_id: str = "c1") -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]


def test_a_re_executed_tool_node_leaves_one_result() -> None:
    """MEM-1 in a real graph: add_messages keeps both results, gr_mem_messages keeps one."""
    plain = _refire_graph(PlainState).invoke({"messages": [HumanMessage("find cats")]})
    assert len(_results(plain["messages"])) == 2  # the failure, reproduced
    out = _refire_graph(GRState).invoke({"messages": [HumanMessage("find cats")]})
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert _results(out["messages"])[0].content == "Found 3 cats"


def _thread_graph() -> Any:
    """One node that returns whatever the invocation put in ``pending`` (a scripted model)."""

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], gr_mem_messages]

    def echo(state: Any) -> dict[str, Any]:
        return {}

    g = StateGraph(State)
    g.add_node("echo", echo)
    g.add_edge(START, "echo")
    g.add_edge("echo", END)
    return g.compile(checkpointer=InMemorySaver())


def test_unanswered_call_is_healed_and_the_late_result_replaces_it_in_place() -> None:
    """MEM-3 at the next human message, then MEM-10: same position, healed mark gone."""
    graph = _thread_graph()
    cfg = {"configurable": {"thread_id": "t1"}}
    graph.invoke(
        {"messages": [HumanMessage("find cats"), AIMessage("", id="ai-1", tool_calls=[CALL])]},
        cfg,
    )
    healed = graph.invoke({"messages": [HumanMessage("anything?", id="h-2")]}, cfg)["messages"]
    assert [type(m).__name__ for m in healed] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    placeholder = healed[2]
    assert placeholder.tool_call_id == "c1"
    assert placeholder.content == PLACEHOLDER_CONTENT
    assert placeholder.name == "search"  # named after its call
    assert placeholder.response_metadata["gr_mem"]["healed"] is True

    late = ToolMessage("Found 3 cats", tool_call_id="c1", id="tool-late", artifact={"n": 3})
    after = graph.invoke({"messages": [late]}, cfg)["messages"]
    assert len(after) == 4
    assert after[2].id == "tool-late" and after[2].content == "Found 3 cats"
    assert after[2].artifact == {"n": 3}
    assert "gr_mem" not in after[2].response_metadata
    assert after[3].id == "h-2"
    # a second real result for the call is now a duplicate
    again = graph.invoke({"messages": [ToolMessage("again", tool_call_id="c1")]}, cfg)
    assert len(_results(again["messages"])) == 1


def test_duplicate_turn_and_empty_human_message() -> None:
    """MEM-2: an AI turn re-declaring only known calls is dropped; MEM-16: an empty human is no turn."""
    left = [HumanMessage("hi", id="h1"), AIMessage("", id="a1", tool_calls=[CALL])]
    out = gr_mem_messages(left, [AIMessage("", id="a2", tool_calls=[CALL]), HumanMessage("")])
    assert [m.id for m in out][:2] == ["h1", "a1"]
    assert len(out) == 2
    kept = gr_mem_messages(left, [AIMessage("", id="a3", tool_calls=[CALL, {**CALL, "id": "c2"}])])
    assert [m.id for m in kept] == ["h1", "a1", "a3"]


def test_add_messages_semantics_are_kept() -> None:
    """Same id replaces in place, RemoveMessage removes, REMOVE_ALL clears, missing ids assigned."""
    left = [HumanMessage("one", id="1"), AIMessage("two", id="2")]
    out = gr_mem_messages(left, [AIMessage("two, edited", id="2"), HumanMessage("three")])
    assert [m.content for m in out] == ["one", "two, edited", "three"]
    assert out[2].id  # an id was assigned, as add_messages does
    assert [m.id for m in gr_mem_messages(out, [RemoveMessage(id="1")])] == ["2", out[2].id]
    cleared = gr_mem_messages(out, [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("new")])
    assert [m.content for m in cleared] == ["new"]
    with pytest.raises(ValueError, match="doesn't exist"):
        gr_mem_messages(left, [RemoveMessage(id="nope")])
    # tuples and dicts are coerced like add_messages does
    coerced = gr_mem_messages([], [("user", "hello"), {"role": "assistant", "content": "hi"}])
    assert [type(m).__name__ for m in coerced] == ["HumanMessage", "AIMessage"]


def _rich_messages() -> list[AnyMessage]:
    return [
        SystemMessage("be brief", id="s", additional_kwargs={"cache": True}),
        HumanMessage([{"type": "text", "text": "find"}], id="h", name="alice"),
        AIMessage(
            "",
            id="a",
            name="bot",
            tool_calls=[CALL],
            invalid_tool_calls=[{"id": "bad", "name": "x", "args": "{", "error": "json"}],
            additional_kwargs={"reasoning": {"summary": []}},
            response_metadata={"model": "fake"},
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        ),
        ToolMessage("r", tool_call_id="c1", id="t", name="search", artifact=[1, 2], status="error"),
    ]


def test_messages_round_trip_without_loss() -> None:
    """Ids, names, artifacts, additional_kwargs, usage: through a portable row and back."""
    for msg in _rich_messages():
        row = message_to_row(msg)
        back = row_to_message(row)
        assert back == msg and type(back) is type(msg)
        assert back.model_dump() == msg.model_dump()
    # inside the reducer the objects themselves come back (no copy)
    rich = _rich_messages()
    out = gr_mem_messages([], rich)
    assert all(a is b for a, b in zip(out, rich, strict=True))


def test_window_and_journal_report_each_update() -> None:
    """gr_mem_reducer: window of 3, a report per update, written to a replayable journal."""
    store = MemoryStore()
    journal = ReducerJournal(store=store, slot=("execution", "thread-1", "messages"))
    reducer = gr_mem_reducer(max_messages=3, journal=journal)
    state = reducer(
        [], [HumanMessage("find cats", id="h1"), AIMessage("", id="a1", tool_calls=[CALL])]
    )
    state = reducer(state, [ToolMessage("Found 3 cats", tool_call_id="c1", id="t1")])
    state = reducer(state, [ToolMessage("Found 3 cats", tool_call_id="c1", id="t2")])
    state = reducer(state, [HumanMessage("thanks", id="h2")])
    assert [m.id for m in state] == ["a1", "t1", "h2"]
    reports = list(journal.reports)
    assert [r.summary() for r in reports] == [
        {"count": 2, "appended": 2, "appended_any": True},
        {"count": 3, "appended": 1, "appended_any": True},
        {"count": 3, "appended": 0, "appended_any": False},  # the re-fired result (MEM-14)
        {"count": 3, "appended": 1, "appended_any": True},  # appended while one was evicted
    ]
    assert reports[2].events[0].kind is EventKind.DUPLICATE_RESULT
    assert EventKind.EVICTED in {e.kind for e in reports[3].events}
    records = journal_for(store).read(("execution", "thread-1", "messages"))
    assert len(records) == 4
    replayed = replay_journal(records)
    assert replayed.check.passed, replayed.check.mismatches


def test_the_journal_never_writes_the_store_on_the_event_loop() -> None:
    """Under ``ainvoke`` the reducer runs on the event loop: its journal's store calls do not.

    Every record still lands, in order (``aflush`` waits for them), and replays.
    """
    import asyncio

    on_loop: list[str] = []

    def loop_running() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    class Watched(MemoryStore):
        def read(self, *slot: Any) -> Any:
            if loop_running():
                on_loop.append("read")
            return super().read(*slot)

        def apply(self, *args: Any, **kw: Any) -> str:
            if loop_running():
                on_loop.append("apply")
            return super().apply(*args, **kw)

    store = Watched()
    slot = ("execution", "thread-a", "messages")
    journal = ReducerJournal(store=store, slot=slot)

    reducer = gr_mem_reducer(journal=journal)
    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], reducer]})  # noqa: UP013

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("", id=f"a{len(state['messages'])}", tool_calls=[CALL])]}

    def tool_node(state: Any) -> dict[str, Any]:
        return {"messages": [ToolMessage("Found 3 cats", tool_call_id="c1", id="t1")]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tool", tool_node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "tool")
    graph.add_edge("tool", END)
    app = graph.compile()

    async def run() -> Any:
        out = await app.ainvoke({"messages": [HumanMessage("find cats", id="h1")]})
        await journal.aflush()
        return out

    out = asyncio.run(run())
    assert [m.id for m in out["messages"]] == ["h1", "a1", "t1"]
    assert on_loop == []
    records = journal_for(store).read(slot)
    assert [r.seq for r in records] == [1, 2, 3]
    assert replay_journal(records).check.passed


def test_journal_callback() -> None:
    """Any callable receives the report."""
    seen: list[Any] = []
    reducer = gr_mem_reducer(journal=seen.append)
    reducer([], [HumanMessage("x")])
    assert seen[0].appended == 1 and seen[0].count == 1


class _ToolFakeModel(GenericFakeChatModel):
    """LangChain's fake chat model, accepting tools (create_agent binds them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class _Seen(AgentMiddleware):  # type: ignore[misc]
    """Records what the model is sent (the innermost layer)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[AnyMessage]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(list(request.messages))
        return handler(request)


@tool
def search(q: str) -> str:
    """Search for q."""
    return f"Found 3 {q}"


def test_middleware_sends_the_provider_view() -> None:
    """A real create_agent: the state keeps the duplicate, the model never sees it (MEM-5)."""
    seen = _Seen()
    gr = GRMemMiddleware()
    model = _ToolFakeModel(messages=iter([AIMessage("3 cats", id="final")]))
    agent = create_agent(model, tools=[search], middleware=[gr, seen])
    history = [
        HumanMessage("find cats", id="h1"),
        AIMessage("", id="a1", tool_calls=[CALL]),
        ToolMessage("Found 3 cats", tool_call_id="c1", id="t1"),
        ToolMessage("Found 3 cats", tool_call_id="c1", id="t2"),
        ToolMessage("stray", tool_call_id="zz", id="t3"),
        HumanMessage("and dogs?", id="h2"),
    ]
    out = agent.invoke(cast(Any, {"messages": history}))
    assert [m.id for m in seen.requests[0]] == ["h1", "a1", "t1", "h2"]
    assert {f.kind for f in gr.last_findings} == {"duplicate_result", "orphan_result"}
    assert [m.id for m in out["messages"]][:6] == ["h1", "a1", "t1", "t2", "t3", "h2"]


def test_provider_view_synthesises_and_trims_calls() -> None:
    """An unanswered call gets a synthetic result after its turn; a re-declared call is cut."""
    msgs = [
        HumanMessage("x", id="h"),
        AIMessage("", id="a", tool_calls=[CALL]),
        AIMessage("again", id="b", tool_calls=[CALL, {**CALL, "id": "c2"}]),
        ToolMessage("two", tool_call_id="c2", id="t2"),
    ]
    view, findings = provider_view(msgs)
    assert [getattr(m, "id", None) for m in view] == ["h", "a", "gr-mem-healed-c1", "b", "t2"]
    trimmed, original = view[3], msgs[2]
    assert isinstance(trimmed, AIMessage) and isinstance(original, AIMessage)
    assert [c["id"] for c in trimmed.tool_calls] == ["c2"]
    assert original.tool_calls[0]["id"] == "c1"  # the input is not modified
    assert {f.kind for f in findings} == {"unanswered_call", "duplicate_call"}
    clean, none = provider_view(msgs[:1])
    assert none == [] and clean[0] is msgs[0]


def test_live_cache_follows_the_returned_list_only() -> None:
    """Each update onto the list the last returned reuses its buffer; anything else is read again."""
    from flowdrop_core.integrations import langgraph as lg

    s1 = gr_mem_messages(
        [], [HumanMessage("q", id="h1"), AIMessage("", id="a1", tool_calls=[CALL])]
    )
    s2 = gr_mem_messages(s1, [ToolMessage("r", tool_call_id="c1", id="t1")])
    s3 = gr_mem_messages(s2, [ToolMessage("again", tool_call_id="c1", id="t2")])
    assert [m.id for m in s3] == ["h1", "a1", "t1"]
    # branching from an older state (its cached buffer was used up) is read again, correctly
    branch = gr_mem_messages(s2, [HumanMessage("other", id="h9")])
    assert [m.id for m in branch] == ["h1", "a1", "t1", "h9"]
    assert [m.id for m in s3] == ["h1", "a1", "t1"]  # the other branch is untouched
    # a list changed behind the reducer's back is not trusted
    s3.append(ToolMessage("smuggled", tool_call_id="c1", id="t3"))
    after = gr_mem_messages(s3, [HumanMessage("next", id="h2")])
    assert [m.id for m in after] == ["h1", "a1", "t1", "t3", "h2"]  # read as it is now
    assert lg._cache_take(after, 0) is not None  # the returned list is remembered
    assert lg._cache_take(after, 0) is None  # and used once


def _random_update(rng: Any, k: int, open_calls: list[str], answered: list[str]) -> list[Any]:
    """One update of a realistic agent: a turn, calls, results, re-fires and dangling calls."""
    roll = rng.random()
    if roll < 0.25:
        return [HumanMessage(f"q{k}", id=f"h{k}")]
    if roll < 0.5:
        ids = [f"c{k}-{j}" for j in range(rng.randint(1, 2))]
        calls: list[Any] = [{"id": cid, "name": "s", "args": {}} for cid in ids]
        open_calls += ids
        return [AIMessage("", id=f"a{k}", tool_calls=calls)]
    if roll < 0.75 and open_calls:
        cid = open_calls.pop(rng.randrange(len(open_calls)))
        answered.append(cid)
        return [ToolMessage(f"r{k}", tool_call_id=cid, id=f"t{k}")]
    if roll < 0.9 and answered:  # a re-fired result, under a new message id
        return [ToolMessage(f"again{k}", tool_call_id=rng.choice(answered), id=f"x{k}")]
    if roll < 0.95:
        return [AIMessage(f"say {k}", id=f"s{k}")]
    return [HumanMessage(f"edited {k}", id=f"h{max(0, k - 3)}")]  # replaces an id in place


@pytest.mark.parametrize("window", [0, 7])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chained_updates_equal_a_full_read_of_every_state(
    window: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chained path (the list the last update returned) gives what reading it all gives."""
    import random

    from flowdrop_core.integrations import langgraph as lg

    rng = random.Random(seed)
    reducer = gr_mem_reducer(max_messages=window)
    full_reads = 0
    real_full = lg._Merge._full

    def counting(self: Any, *args: Any) -> None:
        nonlocal full_reads
        full_reads += 1
        real_full(self, *args)

    open_calls: list[str] = []
    answered: list[str] = []
    chained: list[Any] = []
    monkeypatch.setattr(lg._Merge, "_full", counting)
    for k in range(300):
        update = _random_update(rng, k, open_calls, answered)
        cold = reducer(list(chained), update)  # a copy: never the cached list
        chained = reducer(chained, update)
        assert [(type(m), m.id, m.content) for m in chained] == [
            (type(m), m.id, m.content) for m in cold
        ], f"update {k}"
    assert full_reads < 300 + 60  # the copies read it all; most chained updates do not


def test_each_thread_reads_its_own_reports_while_threads_run_at_once() -> None:
    """MEM-14's report rides on each thread's own state list: concurrent threads never mix."""
    from concurrent.futures import ThreadPoolExecutor

    from langchain_core.runnables import RunnableConfig

    from flowdrop_core.integrations.langgraph import GRMemMessages, last_report

    seen: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    def agent(state: GRState, config: RunnableConfig) -> dict[str, Any]:
        thread = config["configurable"]["thread_id"]
        n = len(state["messages"])
        return {
            "messages": [AIMessage("", id=f"{thread}-a{n}", tool_calls=[{**CALL, "id": f"c{n}"}])]
        }

    def tool(state: GRState, config: RunnableConfig) -> dict[str, Any]:
        report = last_report(state["messages"])
        assert report is not None
        seen.setdefault(config["configurable"]["thread_id"], []).append(("agent", report.summary()))
        call = state["messages"][-1].tool_calls[0]["id"]  # type: ignore[union-attr]
        return {"messages": [ToolMessage("r", tool_call_id=call)]}

    def tool_again(state: GRState, config: RunnableConfig) -> dict[str, Any]:
        report = last_report(state["messages"])
        assert report is not None
        seen[config["configurable"]["thread_id"]].append(("tool", report.summary()))
        call = state["messages"][-2].tool_calls[0]["id"]  # type: ignore[union-attr]
        return {"messages": [ToolMessage("re-fired", tool_call_id=call)]}

    g: StateGraph[Any] = StateGraph(GRState)
    for name, node in (("agent", agent), ("tool", tool), ("tool_again", tool_again)):
        g.add_node(name, node)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "tool_again")
    g.add_edge("tool_again", END)
    app = g.compile(checkpointer=InMemorySaver())

    def run(thread: str) -> list[dict[str, Any]]:
        finals = []
        for turn in range(5):
            out = app.invoke(
                {"messages": [HumanMessage(f"{thread} turn {turn}")]},
                {"configurable": {"thread_id": thread}},
            )
            assert isinstance(out["messages"], GRMemMessages)
            report = last_report(out["messages"])
            assert report is not None
            finals.append(report.to_dict())
        return finals

    threads = [f"T{i}" for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        finals = dict(zip(threads, pool.map(run, threads), strict=True))
    for thread in threads:
        # turn k: the human message and the AI turn land (count 3k+2), then the result (3k+3)
        assert seen[thread] == [
            entry
            for k in range(5)
            for entry in (
                ("agent", {"count": 3 * k + 2, "appended": 1, "appended_any": True}),
                ("tool", {"count": 3 * k + 3, "appended": 1, "appended_any": True}),
            )
        ]
        # the re-fired result is the last update of every turn: dropped, MEM-1
        assert [f["appended"] for f in finals[thread]] == [0] * 5
        assert [f["count"] for f in finals[thread]] == [3 * k + 3 for k in range(5)]
        assert {d["rule"] for f in finals[thread] for d in f["decisions"]} == {"MEM-1"}


def test_create_agent_with_a_gr_mem_state_schema_reports_each_update() -> None:
    """LangChain v1 ``create_agent(state_schema=...)``: the messages channel uses gr_mem_messages."""
    from langchain.agents import AgentState

    class GRAgentState(AgentState):  # type: ignore[type-arg]
        messages: Annotated[list[AnyMessage], gr_mem_messages]

    model = _ToolFakeModel(
        messages=iter([AIMessage("", id="a1", tool_calls=[CALL]), AIMessage("3 cats", id="a2")])
    )
    agent = create_agent(model, tools=[search], state_schema=GRAgentState)
    out = agent.invoke({"messages": [HumanMessage("find cats", id="h1")]})
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    report = last_report(out["messages"])
    assert report is not None
    assert report.to_dict() == {
        "count": 4,
        "appended": 1,
        "appended_any": True,
        "rewritten": False,
        "decisions": [{"kind": "appended", "rule": "MEM-14"}],
    }
