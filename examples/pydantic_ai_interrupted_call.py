"""pydantic-ai: an interrupted call's late result lands out of place; GR-MEM puts it back.

A crash left a tool call unanswered. pydantic-ai closes it itself in what
it sends (a synthesized "interrupted" return), but the stored history keeps
the call open. When the tool's real result arrives later (a background job
finishing, a resumed worker) and is appended, it sits two messages after
its call, and a provider rejects every request from then on (a tool result
must answer its call right after it). With ``gr_mem_capability()`` the call
is healed at the next user prompt (MEM-3) and the late result replaces that
placeholder at the same position (MEM-10). The model is a ``FunctionModel``
that checks pairing the way a provider does. No network.

Run: ``python examples/pydantic_ai_interrupted_call.py``
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from flowdrop_core.integrations.pydantic_ai import gr_mem_capability

SENT: list[list[Any]] = []


def strict_provider(messages: list[Any], info: AgentInfo) -> ModelResponse:
    """Answer, or fail like a provider: each call needs one return, in the very next request."""
    SENT.append(list(messages))
    for k, msg in enumerate(messages):
        calls = [p.tool_call_id for p in msg.parts if isinstance(p, ToolCallPart)]
        following = messages[k + 1].parts if calls and k + 1 < len(messages) else ()
        for cid in calls:
            n = sum(isinstance(p, ToolReturnPart) and p.tool_call_id == cid for p in following)
            if n != 1:
                raise RuntimeError(f"400: tool call {cid} must be answered once, right after it")
    return ModelResponse(parts=[TextPart(f"answered with {len(messages)} messages")])


def interrupted_history() -> list[Any]:
    """A crash left call_1 unanswered; pydantic-ai's next run sends a synthesized return."""
    crashed = [
        ModelRequest(parts=[UserPromptPart("find cats")]),
        ModelResponse(parts=[ToolCallPart("search", {"q": "cats"}, tool_call_id="call_1")]),
        ModelRequest(parts=[UserPromptPart("anything?")]),
    ]
    result = Agent(FunctionModel(strict_provider)).run_sync(None, message_history=crashed)
    return result.all_messages()


def main() -> None:
    history = interrupted_history()
    synthesized = [p for m in SENT[-1] for p in m.parts if isinstance(p, ToolReturnPart)]
    print(f"pydantic-ai closed the call itself: {synthesized[0].content!r}")
    late = ModelRequest(parts=[ToolReturnPart("search", "Found 3 cats", tool_call_id="call_1")])
    stored = [*history, late]  # the real result, delivered late, appended to the history
    try:
        Agent(FunctionModel(strict_provider)).run_sync("so?", message_history=list(stored))
    except RuntimeError as exc:
        print(f"without GR-MEM: {exc}")
    else:
        raise AssertionError("a result out of place should have been rejected")
    agent = Agent(FunctionModel(strict_provider), capabilities=[gr_mem_capability()])
    result = agent.run_sync("so?", message_history=list(stored))
    sent = result.all_messages()
    returns = [p for m in sent for p in m.parts if isinstance(p, ToolReturnPart)]
    print(f"with GR-MEM:    {result.output}; call_1 returned {returns[0].content!r}")
    assert len(returns) == 1 and returns[0].content == "Found 3 cats"


if __name__ == "__main__":
    main()
