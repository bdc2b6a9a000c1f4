"""Search over a timeline: content, call ids (both spellings), tool names, arguments."""

from __future__ import annotations

from typing import Any

from flowdrop_core.inspect.search import search_incoming

STEPS: list[tuple[int, list[dict[str, Any]]]] = [
    (1, [{"role": "user", "content": "Weather in Paris?"}]),
    (
        2,
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_Rf4m",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            }
        ],
    ),
    (
        3,
        [
            {
                "role": "tool",
                "content": [{"type": "text", "text": "Sunny"}],
                "tool_call_id": "call_Rf4m",
            }
        ],
    ),
    (
        4,
        [
            {"role": "user", "content": "thanks"},
            {
                "role": "assistant",
                "content": "",
                "metadata": {"tool_calls": [{"tool_call_id": "c9", "name": "web_search"}]},
            },
        ],
    ),
]


def test_every_field_kind_is_found_with_its_step_and_message() -> None:
    assert [(h.step, h.message, h.field) for h in search_incoming(STEPS, "call_rf4M")] == [
        (2, 0, "call id"),
        (3, 0, "result id"),
    ]
    assert [(h.step, h.field, h.excerpt) for h in search_incoming(STEPS, "paris")] == [
        (1, "content", "Weather in Paris?"),
        (2, "arguments", '{"city": "Paris"}'),
    ]
    assert [(h.step, h.message, h.field) for h in search_incoming(STEPS, "web_search")] == [
        (4, 1, "tool name")
    ]
    assert [h.step for h in search_incoming(STEPS, "sunny")] == [3]
    assert [h.field for h in search_incoming(STEPS, "c9")] == ["call id"]


def test_blank_queries_and_limits() -> None:
    assert search_incoming(STEPS, "   ") == []
    assert len(search_incoming(STEPS, "a", limit=2)) == 2
    long: list[tuple[int, list[dict[str, Any]]]] = [
        (1, [{"role": "user", "content": "x" * 200 + "needle" + "y" * 200}])
    ]
    (hit,) = search_incoming(long, "needle")
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…") and "needle" in hit.excerpt
    assert len(hit.excerpt) <= 82
    assert hit.row() == {"step": 1, "incoming message": 0, "field": "content", "text": hit.excerpt}
