"""A session in a link: round trip, size limit, and every bad link a clear error."""

from __future__ import annotations

import base64
import contextlib
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowdrop_core.inspect.session_url import (
    MAX_JSON_BYTES,
    SessionUrlError,
    decode_session,
    encode_session,
)

RECIPE = {
    "name": "playground",
    "title": "",
    "rules": [],
    "description": "",
    "buffer": [],
    "steps": [
        {"label": "pasted (1 message)", "append": {"role": "user", "content": f"m{i}"}}
        for i in range(1, 7)
    ]
    + [{"label": "re-fire", "append": {"role": "user", "content": "m6"}, "refire": True}],
    "source": "mem-14-full-window",
    "extra_context": {},
}


def _raw(payload: object) -> str:
    packed = zlib.compress(json.dumps(payload).encode())
    return "1." + base64.urlsafe_b64encode(packed).decode().rstrip("=")


def test_round_trip_keeps_every_append_and_the_settings() -> None:
    enc = encode_session(RECIPE, {"max_messages": 3, "scope": "user"})
    assert enc.fits and enc.value is not None and enc.value.startswith("1.")
    back = decode_session(enc.value)
    assert back.steps == RECIPE["steps"]
    assert back.settings == {"max_messages": 3, "scope": "user"}
    recipe = back.recipe()
    assert recipe["source"] is None  # a link is not a sample file
    assert {k: v for k, v in recipe.items() if k != "source"} == {
        k: v for k, v in RECIPE.items() if k != "source"
    }


def test_a_session_past_the_limit_says_so_instead_of_a_value() -> None:
    big = dict(
        RECIPE, steps=[{"append": {"role": "user", "content": str(i) * 50}} for i in range(400)]
    )
    enc = encode_session(big, limit=2_000)
    assert not enc.fits and enc.value is None and enc.size > 2_000
    assert "scenario file" in enc.message and "2,000" in enc.message


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("", "empty"),
        ("garbage", "not a session link"),
        ("2.abcd", "version '2'"),
        ("1.@@@@", "base64url"),
        ("1." + base64.urlsafe_b64encode(b"not zlib").decode(), "decompress"),
        ("1." + base64.urlsafe_b64encode(zlib.compress(b"{"))[:-6].decode(), "cut"),
        ("1." + base64.urlsafe_b64encode(zlib.compress(b"{nope")).decode(), "not JSON"),
        (_raw([1, 2]), "should hold an object"),
        (_raw({"steps": "x"}), "steps should be a list"),
        (_raw({"steps": [{"append": 3}]}), "step 1 append"),
        (_raw({"steps": [], "evil": 1}), "unknown field(s) evil"),
        (_raw({"steps": [], "settings": {"max_messages": -1}}), "settings.max_messages"),
        (_raw({"steps": [], "rules": [1]}), "rules should be a list of strings"),
    ],
)
def test_bad_links_are_named_errors(value: str, words: str) -> None:
    with pytest.raises(SessionUrlError) as info:
        decode_session(value)
    assert words in str(info.value)
    assert str(info.value).startswith("URL parameter 'appends':")


def test_a_decompression_bomb_is_refused() -> None:
    bomb = zlib.compress(b'{"steps":[' + b" " * (MAX_JSON_BYTES + 10) + b"]}")
    value = "1." + base64.urlsafe_b64encode(bomb).decode()
    with pytest.raises(SessionUrlError, match="larger than"):
        decode_session(value)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_decoding_never_raises_anything_else(value: str) -> None:
    with contextlib.suppress(SessionUrlError):
        decode_session(value)
