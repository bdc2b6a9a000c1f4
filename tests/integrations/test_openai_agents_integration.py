"""GRMemSession inside the real Agents SDK runner, on every store, and the item round trip.

The model is the SDK's own ``agents.testing.ScriptedModel``; the runner,
tools and session plumbing are the SDK's. Stores are a real SQLite file and
a real ``redis-server`` (the ``store`` fixture).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message, function_call

from flowdrop_core.integrations._responses_items import items_to_rows, rows_to_items
from flowdrop_core.integrations.openai_agents import GRMemSession
from flowdrop_core.messages import PLACEHOLDER_CONTENT, InvalidMessagesError
from flowdrop_core.storage import Store

set_tracing_disabled(True)  # no trace export: the tests have no network


@function_tool
def search(q: str) -> str:
    """Search for q."""
    return f"Found 3 {q}"


def _outputs(items: list[Any], call_id: str = "c1") -> list[Any]:
    return [
        i for i in items if i.get("type") == "function_call_output" and i.get("call_id") == call_id
    ]


def test_runner_given_the_same_tool_output_twice_stores_one(store: Store) -> None:
    """A retried tool output (re-sent as input) lands once; the SQLiteSession stores two."""

    async def run(session: Any) -> list[Any]:
        model = ScriptedModel(
            [
                [function_call("search", {"q": "cats"}, call_id="c1")],
                [assistant_message("3 cats")],
                [assistant_message("still 3 cats")],
            ]
        )
        agent = Agent(name="finder", model=model, tools=[search])
        await Runner.run(agent, "find cats", session=session)
        output = _outputs(await session.get_items())[0]
        await Runner.run(agent, [copy.deepcopy(output)], session=session)  # the retry
        return await session.get_items()

    assert len(_outputs(asyncio.run(run(SQLiteSession("s1"))))) == 2  # the failure
    session = GRMemSession("s1", store=store, journal=10)
    assert isinstance(session, Session)  # the SDK's runtime-checkable protocol
    items = asyncio.run(run(session))
    assert len(_outputs(items)) == 1
    assert items[-1]["content"][0]["text"] == "still 3 cats"


def _tool_round(task: int, n: int) -> list[Any]:
    cid = f"t{task}-{n}"
    return [
        {"type": "function_call", "call_id": cid, "name": "search", "arguments": "{}"},
        {"type": "function_call_output", "call_id": cid, "output": f"result {cid}"},
    ]


@pytest.mark.parametrize("shared", [True, False], ids=["one-session-object", "four-objects"])
def test_four_tasks_adding_to_one_session_lose_nothing(store: Store, shared: bool) -> None:
    """MEM-12: four asyncio tasks, 25 adds each, on one session id; every item is kept once."""
    one = GRMemSession("race", store=store)

    async def worker(task: int) -> None:
        session = one if shared else GRMemSession("race", store=store)
        for n in range(25):
            await session.add_items(_tool_round(task, n))

    async def main() -> list[Any]:
        await asyncio.gather(*(worker(t) for t in range(4)))
        return await one.get_items()

    items = asyncio.run(main())
    assert len(items) == 4 * 25 * 2
    for task in range(4):
        mine = [i["call_id"] for i in items if i["call_id"].startswith(f"t{task}-")]
        calls = mine[0::2]
        assert calls == [f"t{task}-{n}" for n in range(25)]  # each task's order kept
    assert len({(i["type"], i["call_id"]) for i in items}) == len(items)


RICH_ITEMS: list[Any] = [
    {"role": "developer", "content": "be brief"},
    {"role": "user", "content": [{"type": "input_text", "text": "find cats"}]},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "search first"}],
        "encrypted_content": "gAAAA...",
    },
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "cats"}},
    {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "search", "arguments": "{}"},
    {"type": "custom_tool_call", "id": "ct_1", "call_id": "c2", "name": "grep", "input": "cat"},
    {"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"},
    {"type": "custom_tool_call_output", "call_id": "c2", "output": "3 lines"},
    {"type": "mcp_call", "id": "mcp_1", "server_label": "s", "name": "n", "arguments": "{}"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "3 cats", "annotations": []}],
    },
    {"type": "item_reference", "id": "ref_1"},
]


def test_items_round_trip_without_loss(store: Store) -> None:
    """Reasoning, hosted tools, call_id pairing: the session gives back exactly what it got."""
    session = GRMemSession("rt", store=store)
    asyncio.run(session.add_items(copy.deepcopy(RICH_ITEMS)))
    assert asyncio.run(session.get_items()) == RICH_ITEMS
    assert asyncio.run(session.get_items(limit=2)) == RICH_ITEMS[-2:]
    assert asyncio.run(session.get_items(limit=0)) == []
    rows = session.rows()
    assert rows[4]["metadata"]["tool_calls"][0]["id"] == "c1"
    assert rows[6]["metadata"]["tool_call_id"] == "c1"
    assert rows[2]["content"] == "[reasoning] search first"
    assert session.last_result is not None and session.last_result.appended == len(RICH_ITEMS)


def test_healing_and_late_output(store: Store) -> None:
    """MEM-3: a user message heals the open call with the output type its call expects; MEM-10."""
    session = GRMemSession("heal", store=store)

    async def main() -> list[Any]:
        await session.add_items(
            [
                {"role": "user", "content": "grep"},
                {"type": "custom_tool_call", "call_id": "c9", "name": "grep", "input": "x"},
            ]
        )
        await session.add_items([{"role": "user", "content": "anything?"}])
        healed = await session.get_items()
        assert healed[2] == {
            "type": "custom_tool_call_output",
            "call_id": "c9",
            "output": PLACEHOLDER_CONTENT,
        }
        await session.add_items(
            [{"type": "custom_tool_call_output", "call_id": "c9", "output": "late"}]
        )
        return await session.get_items()

    items = asyncio.run(main())
    assert len(items) == 4
    assert items[2]["output"] == "late"


def test_a_stored_interrupted_output_is_a_placeholder_a_late_result_replaces(
    store: Store,
) -> None:
    """MEM-10 on items another GR-MEM writer (or a saved MEM-5 view) already healed.

    The interrupted output is the placeholder, not a real result: the late real
    output replaces it in place instead of being dropped as a second result.
    """
    session = GRMemSession("stored-heal", store=store)

    async def main() -> list[Any]:
        await session.add_items(
            [
                {"role": "user", "content": "search"},
                {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": PLACEHOLDER_CONTENT},
                {"role": "user", "content": "anything?"},
            ]
        )
        await session.add_items([{"type": "function_call_output", "call_id": "c1", "output": "3"}])
        return await session.get_items()

    items = asyncio.run(main())
    assert [i.get("output") for i in _outputs(items)] == ["3"]
    assert items.index(_outputs(items)[0]) == 2
    assert len(items) == 4


def test_pop_and_clear(store: Store) -> None:
    session = GRMemSession("pop", store=store)

    async def main() -> None:
        assert await session.pop_item() is None
        await session.add_items(
            [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        )
        assert await session.pop_item() == {"role": "user", "content": "b"}
        assert await session.get_items() == [{"role": "user", "content": "a"}]
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(main())


def test_bad_input_is_a_located_error() -> None:
    with pytest.raises(ValueError, match="session_id"):
        GRMemSession(" ")
    with pytest.raises(InvalidMessagesError, match=r"items\[1\].*type"):
        items_to_rows([{"role": "user", "content": "ok"}, {"content": "no type"}])
    with pytest.raises(InvalidMessagesError, match=r"items\[0\].*role"):
        items_to_rows([{"type": "message", "role": "robot", "content": "x"}])
    session = GRMemSession("bad")
    with pytest.raises(InvalidMessagesError):
        asyncio.run(session.add_items([{"role": "user", "content": "fine"}, 42]))
    assert asyncio.run(session.get_items()) == []  # nothing of the batch was written


def test_rows_from_another_runtime_read_as_items() -> None:
    """A plain GR-MEM row (no kept item) is spelled as Responses input."""
    rows: list[dict[str, Any]] = [
        {"role": "system", "content": "s", "metadata": {}},
        {
            "role": "assistant",
            "content": None,
            "metadata": {"tool_calls": [{"id": "k", "function": {"name": "f", "arguments": "{}"}}]},
        },
        {"role": "tool", "content": "r", "metadata": {"tool_call_id": "k"}},
    ]
    assert rows_to_items(rows) == [
        {"role": "developer", "content": "s"},
        {"type": "function_call", "call_id": "k", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "k", "output": "r"},
    ]


def test_pop_and_clear_are_edits_the_drive_tier_may_not_make() -> None:
    """MEM-15: a session opened to drive may append, but not pop or clear what is stored."""
    from flowdrop_core.tiers import TierDenied

    session = GRMemSession("s-tier", tier="drive")
    asyncio.run(session.add_items([{"role": "user", "content": "keep me"}]))
    with pytest.raises(TierDenied, match="MEM-15: pop_item needs the admin tier"):
        asyncio.run(session.pop_item())
    with pytest.raises(TierDenied, match="MEM-15: clear needs the admin tier"):
        asyncio.run(session.clear_session())
    assert len(asyncio.run(session.get_items())) == 1


def _orphans(items: list[Any]) -> list[Any]:
    """Outputs whose call the model was not sent before them (a provider answers 400)."""
    declared: set[str] = set()
    bad = []
    for item in items:
        if item.get("type") == "function_call":
            declared.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in declared:
            bad.append(item)
    return bad


async def _cancelled_mid_tool_then_continued(session: Any) -> list[Any]:
    """A streamed run cancelled while its tool runs; the tool's output stored late; next turn."""
    started, release = asyncio.Event(), asyncio.Event()

    @function_tool
    async def slow_search(q: str) -> str:
        """Search slowly."""
        started.set()
        await release.wait()
        return f"Found 3 {q}"

    model = ScriptedModel(
        [
            [function_call("slow_search", {"q": "cats"}, call_id="c1")],
            [assistant_message("dogs: 2")],
        ]
    )
    agent = Agent(name="finder", model=model, tools=[slow_search])
    result = Runner.run_streamed(agent, "find cats", session=session)
    async for event in result.stream_events():
        if event.type == "run_item_stream_event" and event.name == "tool_called":
            await started.wait()
            result.cancel()  # the user pressed stop mid-tool
    # The tool finished anyway and the app stored its output.
    await session.add_items([{"type": "function_call_output", "call_id": "c1", "output": "late"}])
    await Runner.run(agent, "and dogs?", session=session)
    return list(model.calls[-1].input)


def test_a_streamed_run_cancelled_mid_tool_then_continued_sends_no_orphan(store: Store) -> None:
    """The SDK's session sends the late output with no call (a 400); GRMemSession does not."""
    sent = asyncio.run(_cancelled_mid_tool_then_continued(SQLiteSession("cancel")))
    assert len(_orphans(sent)) == 1  # the failure, reproduced with the SDK's own session
    session = GRMemSession("cancel", store=store)
    sent = asyncio.run(_cancelled_mid_tool_then_continued(session))
    assert _orphans(sent) == []
    assert [i.get("content") for i in sent] == ["find cats", "and dogs?"]
    assert [f.kind for f in session.last_findings] == ["orphan_result"]
    stored = asyncio.run(session.stored_items())  # storage keeps what happened
    assert [i.get("type", i.get("role")) for i in stored] == [
        "user",
        "function_call_output",
        "user",
        "message",
    ]
    # One report per add_items, each MEM-14: the orphan output was a new entry.
    assert [(r.count, r.appended) for r in session.reports] == [(1, 1), (2, 1), (3, 1), (4, 1)]


def test_get_items_reports_what_it_repaired() -> None:
    """get_items is the MEM-5 view; last_findings names the orphan it left out."""
    session = GRMemSession("view")

    async def main() -> list[Any]:
        await session.add_items([{"role": "user", "content": "hi"}])
        await session.add_items([{"type": "function_call_output", "call_id": "zz", "output": "x"}])
        return await session.get_items()

    assert asyncio.run(main()) == [{"role": "user", "content": "hi"}]
    assert [(f.kind, f.tool_call_id) for f in session.last_findings] == [("orphan_result", "zz")]
    assert len(asyncio.run(session.stored_items())) == 2


def test_the_quick_validity_pass_never_skips_a_repair() -> None:
    """provider_items' shortcut: whenever it says "nothing to repair", MEM-5 finds nothing."""
    import random

    from flowdrop_core.integrations._responses_items import (
        _already_valid,
        _unanswered_only,
        provider_items,
    )
    from flowdrop_core.provider import normalize_report

    rng = random.Random(7)
    kinds = ["user", "assistant", "system", "call", "output", "reasoning", "empty"]
    shortcuts = 0
    for _ in range(3000):
        items: list[Any] = []
        for _ in range(rng.randint(0, 8)):
            kind = rng.choice(kinds)
            cid = rng.choice(["a", "b", "c"])
            if kind in ("user", "assistant", "system"):
                items.append({"role": kind, "content": rng.choice(["hi", "", " "])})
            elif kind == "call":
                items.append(
                    {"type": "function_call", "call_id": cid, "name": "f", "arguments": "{}"}
                )
            elif kind == "output":
                items.append({"type": "function_call_output", "call_id": cid, "output": "x"})
            elif kind == "reasoning":
                items.append({"type": "reasoning", "id": "r", "summary": []})
            else:
                items.append({"role": "assistant", "content": []})
        rows = items_to_rows(items)
        if _already_valid(rows):
            shortcuts += 1
            assert normalize_report(rows).findings == [], items
        open_calls = _unanswered_only(rows)
        if open_calls:  # only open calls: the shortcut closes exactly those MEM-5 closes
            report = normalize_report(rows)
            assert {f.kind for f in report.findings} == {"unanswered_call"}, items
            assert {f.tool_call_id for f in report.findings} == open_calls
            got, findings = provider_items(rows)
            assert [f.tool_call_id for f in findings] == [f.tool_call_id for f in report.findings]
            assert _orphans(got) == [] and len(got) == len(report.messages)
    assert shortcuts > 100  # the shortcut was exercised
