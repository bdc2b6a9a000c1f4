"""OpenAI Agents SDK: a retried tool output is stored twice; GRMemSession stores one.

The caller re-sends a tool output after a timeout (the first delivery did
land). ``SQLiteSession`` stores both, so every later request carries two
outputs for one ``call_id``: the session is "bricked". ``GRMemSession`` runs
each ``add_items`` through GR-MEM and drops the second (MEM-1). The model is
the SDK's own ``ScriptedModel``: no network.

Run: ``python examples/openai_agents_retried_output.py``
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from flowdrop_core.integrations.openai_agents import GRMemSession

set_tracing_disabled(True)


@function_tool
def search(q: str) -> str:
    """Search for q."""
    return f"Found 3 {q}"


async def run(session: Any) -> int:
    model = ScriptedModel(
        [
            [function_call("search", {"q": "cats"}, call_id="call_1")],
            [assistant_message("3 cats")],
            [assistant_message("still 3 cats")],
        ]
    )
    agent = Agent(name="finder", model=model, tools=[search])
    await Runner.run(agent, "find cats", session=session)
    items = await session.get_items()
    output = next(i for i in items if i.get("type") == "function_call_output")
    await Runner.run(agent, [copy.deepcopy(output)], session=session)  # the retry
    items = await session.get_items()
    return sum(i.get("type") == "function_call_output" for i in items)


def main() -> None:
    plain = asyncio.run(run(SQLiteSession("demo")))
    fixed = asyncio.run(run(GRMemSession("demo")))
    print(f"SQLiteSession: {plain} outputs stored for call_1")
    print(f"GRMemSession:  {fixed} output stored for call_1")
    assert plain == 2 and fixed == 1


if __name__ == "__main__":
    main()
