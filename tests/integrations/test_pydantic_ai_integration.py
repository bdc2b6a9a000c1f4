"""The pydantic-ai history processor inside real agent runs (``FunctionModel``), and alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from flowdrop_core.integrations.pydantic_ai import (
    GRMemHistory,
    gr_mem_capability,
    gr_mem_history,
    gr_mem_repair,
)
from flowdrop_core.messages import PLACEHOLDER_CONTENT


def _returns(messages: list[Any], call_id: str = "c1") -> list[Any]:
    return [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.tool_call_id == call_id
    ]


def _agent(capabilities: list[Any]) -> tuple[Agent[None, str], list[list[Any]]]:
    """An agent whose model re-emits the same tool call once (a model retry), then answers."""
    sent: list[list[Any]] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        sent.append(list(messages))
        calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", ()))
        if len(sent) <= 2 and calls < 2:  # the same call, twice: the tool runs twice
            return ModelResponse(parts=[ToolCallPart("search", {"q": "cats"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("3 cats")])

    agent: Agent[None, str] = Agent(FunctionModel(model), capabilities=capabilities)

    @agent.tool_plain
    def search(q: str) -> str:
        return f"Found 3 {q}"

    return agent, sent


def test_the_model_is_never_sent_a_duplicate_result() -> None:
    """A real run where the tool answers the same call twice: without GR-MEM the model sees two."""
    plain, plain_sent = _agent([])
    plain.run_sync("find cats")
    assert max(len(_returns(s)) for s in plain_sent) == 2  # the failure, reproduced

    processor = GRMemHistory()
    agent, sent = _agent([ProcessHistory(processor)])
    result = agent.run_sync("find cats")
    assert result.output == "3 cats"
    assert all(len(_returns(s)) <= 1 for s in sent)
    assert len(_returns(sent[-1])) == 1
    assert processor.last_result is not None
    kinds = {str(e.kind) for e in processor.last_result.events}
    assert {"duplicate_turn", "duplicate_result"} <= kinds


def test_a_history_with_a_duplicate_result_goes_out_clean() -> None:
    """A stored history carrying a retried return, continued with the capability."""
    sent: list[list[Any]] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        sent.append(list(messages))
        return ModelResponse(parts=[TextPart("done")])

    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("find cats")]),
        ModelResponse(parts=[ToolCallPart("search", {"q": "cats"}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("search", "Found 3 cats", tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("search", "Found 3 cats", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("3 cats")]),
    ]
    agent = Agent(FunctionModel(model), capabilities=[gr_mem_capability()])
    agent.run_sync("and dogs?", message_history=history)
    assert len(_returns(sent[0])) == 1
    assert [type(m).__name__ for m in sent[0]] == [
        "ModelRequest",
        "ModelResponse",
        "ModelRequest",
        "ModelResponse",
        "ModelRequest",
    ]
    assert sent[0][2].parts[0].content == "Found 3 cats"
    assert gr_mem_history(history)[0] is history[0]  # an unchanged message is the same object


def test_healing_then_the_late_return_replaces_the_placeholder() -> None:
    """MEM-3 on the list itself, then MEM-10 in place."""
    history = [
        ModelRequest(parts=[SystemPromptPart("be brief"), UserPromptPart("grep")]),
        ModelResponse(
            parts=[
                TextPart("looking"),
                ToolCallPart("grep", {}, tool_call_id="g1"),
                ToolCallPart("grep", {}, tool_call_id="g2"),
            ]
        ),
        ModelRequest(parts=[UserPromptPart("anything?")]),
    ]
    healed = gr_mem_history(history)
    assert len(healed) == 3
    parts = healed[2].parts
    assert [type(p).__name__ for p in parts] == [
        "ToolReturnPart",
        "ToolReturnPart",
        "UserPromptPart",
    ]
    assert [p.tool_call_id for p in parts[:2]] == ["g1", "g2"]
    assert parts[0].content == PLACEHOLDER_CONTENT and parts[0].outcome == "interrupted"
    assert parts[0].tool_name == "grep" and parts[0].metadata["gr_mem"]["healed"] is True
    assert gr_mem_history(healed) == healed  # healing is idempotent

    late = [
        *healed,
        ModelResponse(parts=[TextPart("sorry")]),
        ModelRequest(parts=[ToolReturnPart("grep", "3 lines", tool_call_id="g1")]),
    ]
    after = gr_mem_history(late)
    assert len(after) == 4  # the late return's request is now empty: removed
    assert after[2].parts[0].content == "3 lines"  # in the placeholder's place
    assert after[2].parts[1].content == PLACEHOLDER_CONTENT  # g2 is still interrupted


def test_a_call_with_no_request_after_it_gets_one() -> None:
    """Placeholders for a response followed by another response land in a new request."""
    history = [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="x")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    out = gr_mem_history(history)
    assert [p.tool_call_id for p in out[2].parts[:1]] == ["x"]
    assert out[0] is history[0] and out[1] is history[1]


def test_pydantic_ais_own_synthesized_return_is_a_placeholder() -> None:
    """MEM-10 for the return pydantic-ai synthesizes: the late real one takes its place."""
    synthesized = ToolReturnPart(
        "search",
        "The tool call was interrupted before a result was produced.",
        tool_call_id="c1",
        metadata={"pydantic_ai_synthesized_tool_return": True},
        outcome="interrupted",
    )
    history = [
        ModelRequest(parts=[UserPromptPart("find")]),
        ModelResponse(parts=[ToolCallPart("search", {}, tool_call_id="c1")]),
        ModelRequest(parts=[synthesized, UserPromptPart("anything?")]),
        ModelResponse(parts=[TextPart("sorry")]),
        ModelRequest(parts=[ToolReturnPart("search", "Found 3 cats", tool_call_id="c1")]),
    ]
    out = gr_mem_history(history)
    assert len(out) == 4
    assert [getattr(p, "content", None) for p in out[2].parts] == ["Found 3 cats", "anything?"]


def test_each_request_report_counts_its_new_entries_by_hand() -> None:
    """MEM-14 per model request on a real run: appended counts new entries, not the history.

    Entries are the parts that pair and the turns: a user prompt, a response,
    a tool return. Hand count, request by request:
    1. the prompt: count 1, appended 1;
    2. the response calling c1 and c1's return: count 3, appended 2;
    3. the same call again and its second return (a model retry): both dropped
       (MEM-2, MEM-1): count 3, appended 0;
    then a second run on the first's history:
    4. the first run's final answer and the new prompt: count 5, appended 2.
    """
    processor = GRMemHistory()
    agent, sent = _agent([ProcessHistory(processor)])
    first = agent.run_sync("find cats")
    agent.run_sync("and dogs?", message_history=first.all_messages())
    got = [(r.count, r.appended, r.appended_any) for r in processor.reports]
    assert got == [(1, 1, True), (3, 2, True), (3, 0, False), (5, 2, True)]
    assert [str(e.kind) for e in processor.reports[2].events] == [
        "duplicate_turn",
        "duplicate_result",
    ]
    # What the model was sent equals the one-pass processor's view of the same history.
    for messages in sent:
        assert messages == gr_mem_history(messages)
    assert max(len(_returns(s)) for s in sent) == 1


def _shape(messages: list[Any]) -> list[Any]:
    """Messages as what a model reads (a placeholder's timestamp is when it was made)."""
    return [
        (
            type(m).__name__,
            [
                (type(p).__name__, getattr(p, "content", None), getattr(p, "tool_call_id", None))
                for p in m.parts
            ],
        )
        for m in messages
    ]


def test_the_live_processor_matches_one_pass_on_every_request() -> None:
    """Heals, late returns and duplicates on a growing history: chained output == one pass."""
    processor = GRMemHistory()
    history: list[Any] = []
    steps: list[list[Any]] = [
        [ModelRequest(parts=[UserPromptPart("q1")])],
        [
            ModelResponse(
                parts=[
                    ToolCallPart("s", {}, tool_call_id="a"),
                    ToolCallPart("s", {}, tool_call_id="b"),
                ]
            )
        ],
        [ModelRequest(parts=[ToolReturnPart("s", "ra", tool_call_id="a")])],
        [ModelRequest(parts=[ToolReturnPart("s", "ra again", tool_call_id="a")])],
        [ModelResponse(parts=[TextPart("done")]), ModelRequest(parts=[UserPromptPart("q2")])],
        [ModelRequest(parts=[ToolReturnPart("s", "rb late", tool_call_id="b")])],
        [ModelResponse(parts=[TextPart("ok")]), ModelRequest(parts=[UserPromptPart("q3")])],
    ]
    appended = []
    for step in steps:
        expected = gr_mem_history([*history, *step])
        history = processor([*history, *step])
        assert _shape(history) == _shape(expected)
        assert processor.last_result is not None
        appended.append(processor.last_result.appended)
    assert appended == [1, 1, 1, 0, 2, 0, 2]  # the late return replaced its placeholder (MEM-10)
    assert _returns(history, "b")[0].content == "rb late"


def test_a_run_cancelled_mid_tool_can_be_continued_with_gr_mem_repair() -> None:
    """An app saves the history at each step; the run is cancelled while its tool runs.

    pydantic-ai refuses the saved history with a new prompt (``UserError``:
    unprocessed tool calls) before any capability runs; ``gr_mem_repair``
    closes the open call with a healed placeholder and the next run goes
    through, the model seeing the call answered.
    """
    started = asyncio.Event()
    sent: list[list[Any]] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        sent.append(list(messages))
        if len(sent) == 1:
            return ModelResponse(parts=[ToolCallPart("search", {"q": "cats"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("2 dogs")])

    agent: Agent[None, str] = Agent(FunctionModel(model), capabilities=[gr_mem_capability()])

    @agent.tool_plain
    async def search(q: str) -> str:
        started.set()
        await asyncio.sleep(60)
        return f"Found 3 {q}"

    saved: list[Any] = []

    async def first_run() -> None:
        async with agent.iter("find cats") as run:
            async for _node in run:
                saved[:] = run.ctx.state.message_history  # the app persists each step

    async def main() -> Any:
        task = asyncio.create_task(first_run())
        await started.wait()
        task.cancel()  # the user pressed stop mid-tool
        with pytest.raises(asyncio.CancelledError):
            await task
        assert isinstance(saved[-1], ModelResponse)  # the call, with no return
        with pytest.raises(UserError, match="unprocessed tool calls"):
            await agent.run("and dogs?", message_history=list(saved))
        return await agent.run("and dogs?", message_history=gr_mem_repair(saved))

    result = asyncio.run(main())
    assert result.output == "2 dogs"
    (placeholder,) = _returns(sent[-1])
    assert placeholder.content == PLACEHOLDER_CONTENT
    assert placeholder.outcome == "interrupted"


def test_the_live_processor_matches_one_pass_on_random_conversations() -> None:
    """Seeded random agent loops (re-sent returns, re-sent calls, open calls, late returns)."""
    import random

    rng = random.Random(11)
    for _ in range(60):
        processor = GRMemHistory()
        history: list[Any] = [ModelRequest(parts=[UserPromptPart("q")])]
        history = processor(history)
        issued: list[str] = []
        for k in range(rng.randint(1, 12)):
            ids = [f"c{k}-{j}" for j in range(rng.randint(1, 2))]
            if issued and rng.random() < 0.15:
                ids = [rng.choice(issued)]  # the model re-sends a call (MEM-2)
            issued += ids
            calls = [ToolCallPart("s", {}, tool_call_id=c) for c in ids]
            returns: list[Any] = []
            for c in ids:
                if rng.random() < 0.2:
                    continue  # never answered (healed at the next prompt)
                returns.append(ToolReturnPart("s", f"r {c}", tool_call_id=c))
                if rng.random() < 0.3:
                    returns.append(ToolReturnPart("s", "again", tool_call_id=c))
            if issued and rng.random() < 0.2:  # a late return for an earlier call (MEM-10)
                returns.append(ToolReturnPart("s", "late", tool_call_id=rng.choice(issued)))
            steps = [
                [ModelResponse(parts=calls), ModelRequest(parts=returns or [UserPromptPart("?")])],
                [ModelResponse(parts=[TextPart("a")]), ModelRequest(parts=[UserPromptPart("q")])],
            ]
            for step in steps:
                expected = gr_mem_history([*history, *step])
                history = processor([*history, *step])
                assert _shape(history) == _shape(expected)
