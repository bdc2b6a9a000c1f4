"""A link may carry at most what the app writes (MAX_URL_CHARS characters) and opening it
replays at most MAX_URL_MESSAGES messages."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from flowdrop_core.inspect.session_url import (
    MAX_URL_CHARS,
    MAX_URL_MESSAGES,
    SessionUrlError,
    decode_session,
    encode_session,
)
from flowdrop_core.replay import replay
from flowdrop_core.scenario import Scenario, ScenarioStep


def _raw(payload: object) -> str:
    packed = zlib.compress(json.dumps(payload).encode(), 9)
    return "1." + base64.urlsafe_b64encode(packed).decode().rstrip("=")


def recipe(steps: list[dict[str, object]]) -> dict[str, object]:
    return {"name": "playground", "buffer": [], "steps": steps, "extra_context": {}}


def test_the_largest_link_the_app_writes_replays_within_the_budget() -> None:
    steps: list[dict[str, object]] = [
        {"label": "pasted", "append": {"role": "user", "content": f"m{i % 7}"}}
        for i in range(MAX_URL_MESSAGES)
    ]
    enc = encode_session(recipe(steps), {"max_messages": 50})
    assert enc.fits and enc.value is not None and len(enc.value) <= MAX_URL_CHARS
    back = decode_session(enc.value)
    scenario = Scenario(
        name="link", buffer=back.buffer, steps=[ScenarioStep.model_validate(s) for s in back.steps]
    )
    timeline = replay(scenario)
    assert len(timeline.steps) == MAX_URL_MESSAGES


def test_one_message_more_is_not_written_and_not_read() -> None:
    steps: list[dict[str, object]] = [
        {"append": {"role": "user", "content": "x"}} for _ in range(MAX_URL_MESSAGES + 1)
    ]
    enc = encode_session(recipe(steps))
    assert not enc.fits and enc.value is None
    assert f"{MAX_URL_MESSAGES + 1:,} messages" in enc.message
    crafted = _raw({"v": "1", "steps": steps})
    assert len(crafted) < MAX_URL_CHARS  # short enough, but too many appends
    with pytest.raises(SessionUrlError, match=f"appends {MAX_URL_MESSAGES + 1:,} messages"):
        decode_session(crafted)


def test_a_crafted_link_of_many_steps_is_refused() -> None:
    steps = [{"append": {"role": "user", "content": "x"}}] * 30_000
    crafted = _raw({"v": "1", "steps": steps})
    with pytest.raises(SessionUrlError, match="30,000 messages"):
        decode_session(crafted)
    batch = _raw({"v": "1", "steps": [{"append": [{"role": "user", "content": "x"}] * 5_000}]})
    with pytest.raises(SessionUrlError, match="5,000 messages"):
        decode_session(batch)


def test_a_link_longer_than_the_app_writes_is_refused() -> None:
    steps = [{"append": {"role": "user", "content": f"{i}-{i * 7919}"}} for i in range(1_500)]
    value = _raw({"v": "1", "steps": steps})
    assert len(value) > MAX_URL_CHARS
    with pytest.raises(SessionUrlError, match="longer than the 6,000 this app writes"):
        decode_session(value)
