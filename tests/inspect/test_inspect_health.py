"""Recording health: every finding with both numberings, GR-MEM's action and the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.compare import plan_keys
from flowdrop_core.inspect.health import health, recording_of
from flowdrop_core.replay import replay_conversation
from flowdrop_core.scenario import ScenarioConfig

IMPORTS = Path(__file__).resolve().parents[2] / "sample_data" / "imports"
BROKEN = IMPORTS / "broken_history.json"


def _rows(path: Path, **kwargs: object) -> tuple[list[tuple[object, ...]], bool]:
    rows: list[tuple[object, ...]]
    report = health(replay_conversation(load_conversation(path), **kwargs))  # type: ignore[arg-type]
    rows = [(f.kind, f.rule, f.index, f.step, f.call_id, f.action) for f in report.findings]
    return rows, report.provider_rejects


def test_every_kind_of_trouble_is_found_where_the_file_has_it() -> None:
    report = health(replay_conversation(load_conversation(BROKEN)))
    assert [f.to_dict() for f in report.findings] == [
        {
            "kind": "duplicate_result",
            "rule": "MEM-1",
            "index": 3,
            "step": 4,
            "call_id": "call_a1",
            "action": "dropped",
            "message": "second result for call 'call_a1'; GR-MEM dropped it as a duplicate at "
            "step 4 (the first is at buffer position 2, 0-based)",
        },
        {
            "kind": "unanswered_call",
            "rule": "MEM-3",
            "index": 4,
            "step": 5,
            "call_id": "call_Rf4m",
            "action": "healed",
            "message": "call 'call_Rf4m' has no result in the recording; GR-MEM healed it at "
            "step 6 with a placeholder at buffer position 4 (0-based), before the next user turn",
        },
        {
            "kind": "orphan_result",
            "rule": "MEM-5",
            "index": 6,
            "step": 7,
            "call_id": "call_zz9",
            "action": "nothing",
            "message": "result for call 'call_zz9' with no call declared before it; GR-MEM kept "
            "it; MEM-5's provider view has to repair it",
        },
        {
            "kind": "duplicate_call",
            "rule": "MEM-2",
            "index": 7,
            "step": 8,
            "call_id": "call_a1",
            "action": "dropped",
            "message": "tool_calls[0] repeats call id 'call_a1', already declared by an earlier "
            "turn; GR-MEM dropped it as a duplicate at step 8 (the first is at buffer position "
            "1, 0-based)",
        },
        {
            "kind": "empty_turn",
            "rule": "MEM-5",
            "index": 7,
            "step": 8,
            "call_id": "call_a1",
            "action": "dropped",
            "message": "assistant turn with no content and no usable tool call; GR-MEM dropped "
            "it as a duplicate at step 8 (the first is at buffer position 1, 0-based)",
        },
        {
            "kind": "idless_result",
            "rule": "MEM-11",
            "index": 8,
            "step": 9,
            "call_id": None,
            "action": "nothing",
            "message": "tool result with no usable tool_call_id (MEM-11); GR-MEM appended it "
            "anyway, with a warning: it cannot be deduplicated",
        },
        {
            "kind": "late_result",
            "rule": "MEM-10",
            "index": 12,
            "step": 13,
            "call_id": "call_late",
            "action": "replaced",
            "message": "result for call 'call_late' comes after another turn, not right after "
            "its call; GR-MEM had healed the call, and this result replaced its placeholder in "
            "place at step 13 (buffer position 10, 0-based)",
        },
    ]
    assert report.provider_rejects is True
    assert report.to_dict()["provider_rejects"] is True
    healed = report.findings[1]
    assert healed.jump_step == 6 and healed.position == 4
    assert healed.where == "messages[4] · step 5"  # the file's own place, and the step


REAL: list[tuple[str, list[tuple[object, ...]], bool]] = [
    (
        "claude_code_streamed_progress.jsonl",
        [("unanswered_call", "MEM-3", 0, 1, "toolu_01BWgwmyj8gGuqFNHMPqqtN2", "nothing")],
        True,
    ),
    ("deepseek_reasoning_cassette.json", [], False),
    ("groq_tool_error_cassette.json", [], False),
    (
        "langchain_llm_result.json",
        [("unanswered_call", "MEM-3", 0, 1, "toolu_01XexPzAVknT3gRmUB5PK5BP", "nothing")],
        True,
    ),
    (
        "langfuse_claude_agent_sdk_trace.json",
        [("late_result", "MEM-5", 4, 5, "toolu_01TKoqQLvY2UWuC49qnD48y7", "nothing")],
        True,
    ),
    (
        "otel_pydantic_ai_tool_results.json",
        [("orphan_result", "MEM-5", 4, 5, "call_2", "nothing")],
        True,
    ),
    ("pydantic_ai_message_history.json", [], False),
    (
        "openai_chat.json",
        [
            ("duplicate_result", "MEM-1", 5, 6, "call_Lq3aW0xTn9", "dropped"),
            ("unanswered_call", "MEM-3", 8, 9, "call_Pz7mD4eR1c", "healed"),
        ],
        True,
    ),
    (
        "anthropic_messages.json",
        [
            ("duplicate_result", "MEM-1", 5, 6, "toolu_01LqW3aXn9TsA", "dropped"),
            ("unanswered_call", "MEM-3", 8, 9, "toolu_01Pz7mDe4R1cK", "healed"),
        ],
        True,
    ),
    (
        "conversation.jsonl",
        [
            ("unanswered_call", "MEM-3", 7, 8, "call_Pz7mD4eR1c", "healed"),
            ("duplicate_result", "MEM-1", 8, 9, "call_Lq3aW0xTn9", "dropped"),
        ],
        True,
    ),
    (
        "langchain_dumpd.json",
        [
            ("unanswered_call", "MEM-3", 0, 1, "baz", "nothing"),
            ("unanswered_call", "MEM-3", 0, 1, "booz", "nothing"),
        ],
        True,
    ),
    (
        "openai_chat_completion.json",
        [("unanswered_call", "MEM-3", 0, 1, "call_abc123", "nothing")],
        True,
    ),
    (
        "anthropic_server_tools.json",
        [("unanswered_call", "MEM-3", 0, 1, "toolu_01XYZ789", "nothing")],
        True,
    ),
    ("bedrock_converse.json", [], False),
    ("gemini_function_calling.json", [], False),
    ("claude_code_session.jsonl", [], False),
    ("sharegpt_glaive.json", [], False),
    ("langfuse_openai_agents_trace.json", [], False),
    ("otel_genai_otlp.json", [], False),
    (
        "langchain_messages.json",
        [
            ("duplicate_result", "MEM-1", 5, 6, "call_Lq3aW0xTn9", "dropped"),
            ("unanswered_call", "MEM-3", 8, 9, "call_Pz7mD4eR1c", "healed"),
        ],
        True,
    ),
    (
        "openai_responses.json",
        [
            ("duplicate_result", "MEM-1", 5, 6, "call_Lq3aW0xTn9", "dropped"),
            ("unanswered_call", "MEM-3", 8, 9, "call_Pz7mD4eR1c", "healed"),
        ],
        True,
    ),
    ("langfuse_google_adk_trace.json", [], False),
    ("langfuse_langgraph_js_trace.json", [], False),
    ("langfuse_vercel_aisdk_trace.json", [], False),
    ("langgraph_stream_values.json", [], False),
    ("openai_chat_image_input.json", [], False),
    ("openai_responses_web_search.json", [], False),
    ("otel_genai_builtin_tools.json", [], False),
    ("claude_code_rewound.jsonl", [], False),
    ("gemini_cli_cancelled_call.json", [], False),
    ("gemini_cli_session.json", [], False),
    ("gemini_cli_session.jsonl", [], False),
    ("glaive_v2_detect_language.json", [], False),
    ("glaive_v2_news_headlines.json", [], False),
    ("mini_swe_agent_gitconfig.traj.json", [], False),
    (
        # the run submitted with this call: mini-SWE-agent records its output as the exit
        # message (a note), not as the call's result
        "mini_swe_agent_toolcall.traj.json",
        [("unanswered_call", "MEM-3", 8, 9, "call_00_0yKPVZ7Jm6cEwsBTs4Lx0555", "nothing")],
        True,
    ),
    ("otel_genai_reasoning_output.json", [], False),
    ("pi_session_large.jsonl", [], False),
    ("pi_session_refactor.jsonl", [], False),
]


@pytest.mark.parametrize(("name", "rows", "rejects"), REAL)
def test_real_imports(name: str, rows: list[tuple[object, ...]], rejects: bool) -> None:
    got, verdict = _rows(IMPORTS / name)
    assert got == rows
    assert verdict is rejects


def test_every_import_sample_is_covered() -> None:
    covered = {name for name, _, _ in REAL}
    on_disk = {p.name for p in IMPORTS.iterdir() if p.suffix in (".json", ".jsonl")}
    # broken_history: asserted field by field above; the fine-tuning file: per line below
    assert on_disk - covered == {"broken_history.json", "openai_finetune_drone.jsonl"}


def test_each_conversation_of_a_fine_tuning_file_has_its_own_findings() -> None:
    from flowdrop_core.importers import load_conversations

    reports = [
        health(replay_conversation(c))
        for c in load_conversations(IMPORTS / "openai_finetune_drone.jsonl")
    ]
    assert [[(f.kind, f.index, f.step) for f in r.findings] for r in reports] == [
        [("unanswered_call", 2, 3)]
    ] * 3


def test_per_turn_keeps_the_recording_index_and_numbers_steps_by_turn() -> None:
    conv = load_conversation(BROKEN)
    report = health(replay_conversation(conv, per="turn"))
    first = report.findings[0]
    assert (first.kind, first.index) == ("duplicate_result", 3)
    # messages 0-3 are one turn of the recording (the user asks, the call, two results)
    assert first.step == next(k for k, turn in enumerate(conv.turns, start=1) if 3 in turn)


def test_a_refire_mode_does_not_count_its_own_resends_as_the_recordings() -> None:
    conv = load_conversation(BROKEN)
    timeline = replay_conversation(conv, refire="results")
    keys = plan_keys(conv.messages, "results")
    messages, _, places = recording_of(timeline, keys)
    assert messages == conv.messages
    report = health(timeline, keys)
    assert [f.index for f in report.findings] == [3, 4, 6, 7, 7, 8, 12]
    # without the keys, the re-sent results would be findings of the recording
    assert len(health(timeline).findings) > len(report.findings)
    assert places[3].step is not None and places[3].step > 4  # re-fires shift the steps


def test_a_window_leaves_a_result_orphaned_in_the_buffer() -> None:
    conv = load_conversation(IMPORTS / "openai_chat.json")
    report = health(replay_conversation(conv, config=ScenarioConfig(max_messages=2)))
    orphaned = report.of_kind("orphaned_by_window")
    assert orphaned, "a window of 2 evicts a call while its result stays"
    # only what the buffer still holds after the last step; the three results orphaned for a
    # while and then evicted too are the lifecycle's (and the what-if line's), not findings
    assert [(f.call_id, f.index) for f in orphaned] == [("call_Hk2sN8wQ5t", 11)]
    assert len(report.lifecycle.orphaned()) == 4
    one = orphaned[0]
    assert one.source == "buffer" and one.action == "evicted" and one.rejects is False
    life = report.lifecycle.get(one.call_id or "")
    assert life is not None and one.jump_step == life.orphaned_step
    assert conv.messages[one.index or 0]["tool_call_id"] == one.call_id
    assert "still there after the last step" in one.message


def test_a_clean_recording_says_so() -> None:
    report = health(replay_conversation(load_conversation(IMPORTS / "bedrock_converse.json")))
    assert report.findings == [] and not report.provider_rejects
    assert report.summary().startswith("No findings")
