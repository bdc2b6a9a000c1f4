"""The third fresh corpus (coding-agent sessions, trajectories, OTel examples): pinned.

``sample_data/fresh3/`` holds 42 public recordings not in the other sample
folders (sources in its ``SOURCES.md``). ``scripts/corpus_report.py`` imports
each one with format detection and classifies it (``lossless``, ``notes``,
``error``, ``wrong``); this test pins each file's class and message count, so
a reader change that alters what a real recording gets fails here. Before the
readers of this round, 29 of the 42 were refused (every Gemini CLI session and
SWE-agent trajectory). See ``docs/recordings.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from import_helpers import corpus_report

ROOT = Path(__file__).resolve().parents[2]
FRESH3 = ROOT / "sample_data" / "fresh3"


report = corpus_report()

#: file -> (class, number of messages imported)
EXPECTED: dict[str, tuple[str, int]] = {
    "claude_code_log_edge_cases.jsonl": ("notes", 11),
    "claude_code_log_session_b.jsonl": ("lossless", 3),
    "claude_code_log_todowrite_examples.jsonl": ("notes", 11),
    "gemini_cli_logs_ah-ha.json": ("notes", 19),  # two sessions: a note where the second starts
    "gemini_cli_logs_yesand.json": ("lossless", 4),
    "gemini_cli_session-2025-11-21T20-38-8016034b.json": ("notes", 4),
    "gemini_cli_session-2025-12-03T04-04-ff205d73.json": ("error", 0),
    "gemini_cli_session-2025-12-03T04-27-e0f6ebe9.json": ("notes", 7),
    "gemini_cli_session-2025-12-03T04-51-dea67935.json": ("notes", 6),
    "gemini_cli_session-2025-12-08T17-31-f95ed11b.json": ("error", 0),
    "gemini_cli_session-2025-12-08T17-35-9fae96a8.json": ("error", 0),
    "gemini_cli_session-2025-12-12T20-56-d87dc00f.json": ("notes", 1),
    "gemini_cli_session-2025-12-12T21-35-89ad2f7c.json": ("notes", 1),
    "gemini_cli_session-2025-12-12T21-46-7c761c30.json": ("notes", 11),
    "gemini_cli_session-2025-12-13T18-50-ed4c9337.json": ("notes", 7),
    "gemini_cli_session-2025-12-13T19-01-049d9bb6.json": ("notes", 15),
    "gemini_cli_session-2025-12-20T05-22-34e0660b.json": ("error", 0),
    "gemini_cli_session-2025-12-28T04-02-3d0463e2.json": ("notes", 12),
    "gemini_cli_session-2025-12-30T01-16-3f9ce747.json": ("notes", 17),
    "gemini_cli_session-2025-12-30T07-24-a1c91f1a.json": ("notes", 11),
    "gemini_cli_session-2025-12-31T01-49-1593ed60.json": ("notes", 8),
    "gemini_cli_session-2026-01-01T06-04-e0af73a9.json": ("notes", 7),
    "gemini_cli_session-2026-01-01T22-12-2e883c59.json": ("notes", 15),
    "gemini_cli_session-2026-01-10T01-46-1deca764.json": ("notes", 9),
    "mini_swe_agent_github_issue.traj.json": ("lossless", 22),
    "mini_swe_agent_local.traj.json": ("wrong", 6),
    "otel_semconv_choices.json": ("lossless", 4),
    "otel_semconv_event.json": ("lossless", 3),
    "otel_semconv_instructions.json": ("lossless", 4),
    "otel_semconv_reasoning.json": ("notes", 3),
    "otel_semconv_simple.json": ("lossless", 3),
    "otel_semconv_tool_call_span_1.json": ("lossless", 2),
    "otel_semconv_tool_call_span_2.json": ("lossless", 4),
    "pi_assistant_message_with_thinking_code.json": ("notes", 1),
    "swe_agent_BabyEncryption.traj.json": ("notes", 31),
    "swe_agent_humanevalfix-python-0.traj.json": ("notes", 11),
    "swe_agent_networking_1.traj.json": ("notes", 9),
    "swe_agent_rock.traj.json": ("notes", 25),
    "swe_agent_swe-agent__test-repo-i1.traj.json": ("notes", 12),
    "swe_agent_warmup.traj.json": ("notes", 15),
    "vct_dsh_session.jsonl": ("error", 0),
    "vct_grok_updates.jsonl": ("error", 0),
}

#: The refusals: what each file is, in the first line of its message.
REFUSED = {
    "gemini_cli_session-2025-12-03T04-04-ff205d73.json": "\n- gemini-cli: messages: no 'user' or 'gemini' record",
    "vct_dsh_session.jsonl": "JSON Lines of 25 objects with keys 'type', 'seq', 'time'",
    "vct_grok_updates.jsonl": "JSON Lines of 19 objects with keys 'method', 'params', 'timestamp'",
}


def test_the_corpus_is_what_is_pinned_and_cited() -> None:
    names = {p.name for p in report.corpus(FRESH3)}
    assert names == set(EXPECTED) and len(names) >= 40
    sources = (FRESH3 / "SOURCES.md").read_text(encoding="utf-8")
    assert [name for name in EXPECTED if f"| `{name}` |" not in sources] == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_file_gets_its_pinned_class(name: str) -> None:
    result = report.classify(FRESH3 / name)
    assert (result.cls, result.messages) == EXPECTED[name], result


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refusal_says_what_the_file_is(name: str) -> None:
    from flowdrop_core.importers import ConversationFormatError, load_conversation

    assert report.classify(FRESH3 / name).cls == "error"
    with pytest.raises(ConversationFormatError) as info:
        load_conversation(FRESH3 / name)
    message = str(info.value)
    assert REFUSED[name] in message, message
    assert "Traceback" not in message and "not JSON" not in message


def test_a_swe_agent_step_the_history_lost_is_a_note() -> None:
    """BabyEncryption's trajectory step 8 (an edit that was retried) is in no history
    message: it was lost silently; now it is a located note with the step's text."""
    from flowdrop_core.importers import load_conversation

    got = load_conversation(FRESH3 / "swe_agent_BabyEncryption.traj.json")
    step = [n for n in got.notes if n.what == "a step the history does not hold"]
    assert [n.where for n in step] == ["trajectory[8]"]
    assert step[0].content.startswith("The changes have not been applied correctly")
