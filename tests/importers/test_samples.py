"""Every sample in sample_data/imports/ is cited."""

from __future__ import annotations

from import_helpers import SAMPLES


def test_every_sample_is_cited() -> None:
    sources = (SAMPLES / "SOURCES.md").read_text(encoding="utf-8")
    own = {"openai_chat.json", "openai_responses.json", "anthropic_messages.json",
           "langchain_messages.json", "conversation.jsonl", "SOURCES.md"}  # fmt: skip
    for path in SAMPLES.iterdir():
        if path.name not in own:
            assert f"`{path.name}`" in sources, f"{path.name} has no source in SOURCES.md"
            assert path.stat().st_size < 16_000, f"{path.name} is not small"
