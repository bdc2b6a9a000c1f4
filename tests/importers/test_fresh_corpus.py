"""The fresh corpus of public recordings: each file's class and message count, pinned.

``sample_data/fresh/`` holds recordings written by others (sources in its
``SOURCES.md``). ``scripts/corpus_report.py`` imports each one with format
detection and classifies it (``lossless``, ``notes``, ``error``, ``wrong``);
this test pins the result so a change in any reader that alters what a real
recording gets fails here. When a reader improves a file, update its pin
(and the figures in ``docs/recordings.md`` and the README).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_helpers import corpus_report

from flowdrop_core.importers import ImportedConversation

ROOT = Path(__file__).resolve().parents[2]
FRESH = ROOT / "sample_data" / "fresh"


report = corpus_report()

#: file -> (class, number of messages imported)
EXPECTED: dict[str, tuple[str, int]] = {
    "cassette_anthropic_anthropic_tool_with_thinking.json": ("notes", 4),
    "cassette_anthropic_multiple_parallel_tool_calls.json": ("lossless", 8),
    "cassette_bedrock_bedrock_model_retry.json": ("lossless", 5),
    "cassette_bedrock_bedrock_moonshotai_tool_call.json": ("notes", 5),
    "cassette_cerebras_cerebras_thinking_part_survives_multiturn.json": ("notes", 4),
    "cassette_cohere_cohere_model_instructions.json": ("lossless", 3),
    "cassette_cohere_cohere_model_thinking_part.json": ("notes", 4),
    "cassette_cohere_request_simple_success_with_vcr.json": ("lossless", 2),
    "cassette_deepseek_deepseek_model_thinking_part.json": ("notes", 2),
    "cassette_google_google_model_retry.json": ("lossless", 7),
    "cassette_google_google_tool_output.json": ("lossless", 4),
    "cassette_groq_groq_model_thinking_part.json": ("notes", 5),
    "cassette_groq_tool_use_failed_error.json": ("notes", 7),
    "cassette_huggingface_hf_model_thinking_part.json": ("notes", 4),
    "cassette_mistral_mistral_model_thinking_part.json": ("notes", 4),
    "cassette_ollama_ollama_cloud_tool_output.json": ("notes", 4),
    "cassette_openai_compatible_api_with_tool_calls_without_id.json": ("lossless", 4),
    "cassette_openai_multiple_agent_tool_calls.json": ("lossless", 8),
    "cassette_openai_openai_model_thinking_part.json": ("lossless", 4),
    "cassette_openai_responses_background_mode_with_tool_vcr.json": ("lossless", 4),
    "cassette_openai_responses_openai_conversation_id_tool_call_continuation.json": ("lossless", 5),
    "cassette_openai_responses_openai_responses_history_with_combined_tool_call_id.json": (
        "notes",
        5,
    ),
    "claude_code_real_session.jsonl": ("notes", 2),
    "codex_golden_session.jsonl": ("notes", 6),
    "codex_real_session.jsonl": ("lossless", 5),
    "codex_tools_session.jsonl": ("notes", 8),
    "hermes_chatml_stock.txt": ("lossless", 4),
    "hermes_sharegpt_extraction.json": ("notes", 3),
    "hermes_sharegpt_flights.json": ("lossless", 5),
    "langfuse_agno_2025_06_11.json": ("notes", 2),
    "langfuse_autogen_2025_06_06.json": ("lossless", 2),
    "langfuse_beeai_2025_08_01.json": ("lossless", 5),
    "langfuse_claude_agent_2025_12_22.json": ("notes", 7),
    "langfuse_crewai_2025_07_11.json": ("notes", 3),
    # its final_result call is answered by the TOOL observation that ran it
    "langfuse_csharp_agent_with_gemini_2026_03_09.json": ("notes", 6),
    "langfuse_google_gemini_2025_08_01.json": ("lossless", 2),
    "langfuse_koog_2025_08_26.json": ("lossless", 7),
    "langfuse_langgraph_python_2025_08_22.json": ("notes", 5),
    "langfuse_llamaindex_2025_06_05.json": ("notes", 2),
    "langfuse_microsoft_agent_2025_12_17.json": ("lossless", 5),
    "langfuse_pydantic_ai_tools_2025_06_06.json": ("lossless", 3),
    "langfuse_pydantic_ai_tools_2025_12_04.json": ("notes", 3),
    "langfuse_pydantic_ai_with_gemini_2025_12_24.json": ("lossless", 2),
    "langfuse_vertex_ai_2025_08_01.json": ("lossless", 2),
    "openinference_span_input_output_only.json": ("lossless", 4),
    "openinference_span_tool_calls.json": ("lossless", 4),
    "openinference_spec_spans.json": ("lossless", 5),
    "otel_genai_deprecated_prompt_completion.json": ("lossless", 4),
    "otel_genai_span_tool_calls.json": ("lossless", 4),
    "otel_genai_tool_execution_span.json": ("error", 0),
    "otel_legacy_koog_first_call.json": ("lossless", 4),
    "otel_legacy_koog_trace.json": ("lossless", 7),
    "pydantic_ai_history_capability_load.json": ("lossless", 2),
    "pydantic_ai_history_tool_return.json": ("lossless", 3),
    "vercel_fixture_cohere_citations.json": ("notes", 1),
    "vercel_fixture_cohere_reasoning.json": ("notes", 1),
    "vercel_fixture_cohere_tool_call.json": ("lossless", 1),
    "vercel_model_messages_1627.json": ("lossless", 3),
    "vercel_model_messages_667.json": ("lossless", 2),
    "vercel_ui_messages_1142.json": ("lossless", 7),
    "vercel_ui_messages_1186.json": ("lossless", 8),
    "vercel_ui_messages_1290.json": ("lossless", 9),
    "vercel_ui_messages_1602.json": ("lossless", 3),
    "vercel_ui_messages_457.json": ("notes", 1),
    "xlam_giveaways.json": ("lossless", 2),
    "xlam_math_toolkit.json": ("lossless", 2),
}


def test_the_corpus_is_what_is_pinned() -> None:
    """Every corpus file is pinned and every pin names a file (at least 40 of them)."""
    names = {p.name for p in report.corpus(FRESH)}
    assert names == set(EXPECTED)
    assert len(names) >= 40


def test_every_file_is_cited() -> None:
    """SOURCES.md has a row for every file of the corpus."""
    sources = (FRESH / "SOURCES.md").read_text(encoding="utf-8")
    missing = [name for name in EXPECTED if f"| `{name}` |" not in sources]
    assert missing == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_file_gets_its_pinned_class(name: str) -> None:
    """The file imports to its pinned class and number of messages."""
    result = report.classify(FRESH / name)
    assert (result.cls, result.messages) == EXPECTED[name], result


def test_an_error_is_one_located_line_without_traceback() -> None:
    """A refused file gets a ConversationFormatError whose text names the file, not a crash."""
    errors = [n for n, (cls, _) in EXPECTED.items() if cls == "error"]
    for name in errors:
        result = report.classify(FRESH / name)
        assert name in result.error
        assert "Traceback" not in result.error


def test_the_loss_check_catches_a_dropped_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text in neither the messages nor the notes is reported lost: the class is ``wrong``."""
    path = tmp_path / "dropped.json"
    path.write_text(
        '[{"role": "user", "content": "hello there"},'
        ' {"role": "assistant", "content": "fine", "reasoning_content": "secret thoughts"}]',
        encoding="utf-8",
    )
    kept = ImportedConversation(
        name="dropped.json",
        format="openai-chat",
        messages=[{"role": "user", "content": "hello there"}],
        origins=["[0]"],
    )
    monkeypatch.setattr(report, "load_conversation", lambda *a, **k: kept)
    result = report.classify(path)
    assert (result.cls, result.lost) == ("wrong", ["secret thoughts"])


def test_texts_of_reads_nested_and_double_encoded_json() -> None:
    """JSON text inside strings (once or twice encoded) is searched for texts too."""
    inner = '{"content": "inner words here"}'
    doc = {"input": inner, "output": json.dumps(inner), "role": "assistant"}
    assert list(report.texts_of(doc)) == ["inner words here", "inner words here"]


def test_texts_of_reads_a_python_repr_by_its_texts() -> None:
    """A framework's ``str(dict)`` is read like JSON text: its texts are what must be kept."""
    doc = {"output": "{'role': 'assistant', 'text': 'the final answer'}"}
    assert list(report.texts_of(doc)) == ["the final answer"]
    # an expression is not a literal: the string itself is the text
    call = {"output": "{'text': __import__('os').getcwd()}"}
    assert list(report.texts_of(call)) == ["{'text': __import__('os').getcwd()}"]


def test_a_text_kept_as_ascii_json_escapes_is_found() -> None:
    """JSON text written with ``\\u`` escapes holds the same text."""
    haystack = '{"result": "23\\u00b0C in Tokyo"}'
    assert report._found("23°C in Tokyo", haystack)
    assert not report._found("24°C in Tokyo", haystack)
