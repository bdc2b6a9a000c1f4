"""parse_json_lines: exactly parse_json of every line, or None when any line needs a closer look."""

from __future__ import annotations

import pytest

from flowdrop_core.scenario import JSONProblem, parse_json, parse_json_lines

CLEAN = ['{"role": "user", "content": "olá 1.08 e123"}', "[1, 2.5, -3e10]", '"x"', "null"]


def test_clean_lines_parse_as_parse_json_parses_each() -> None:
    values = parse_json_lines(CLEAN)
    assert values == [parse_json(line) for line in CLEAN]
    assert parse_json_lines([]) == []


@pytest.mark.parametrize(
    "bad",
    [
        '{"a": NaN}',
        "[Infinity]",
        '{"a": 1e999}',
        '{"a": "\\ud800"}',
        "\ufeff{}",
        "[1",
        "1, 2",
        "[" * 101 + "]" * 101,
        "9" * 5000,
    ],
)
def test_any_line_parse_json_refuses_or_doubts_gives_none(bad: str) -> None:
    """The caller then parses line by line, so the problem is the one parse_json names."""
    assert parse_json_lines([*CLEAN, bad]) is None
    if bad.startswith("\ufeff"):
        assert parse_json(bad) == {}  # a byte order mark is allowed, just not taken fast
    else:
        with pytest.raises(JSONProblem):
            parse_json(bad)


@pytest.mark.parametrize("line", [' {"a": 1}', '{"a": 1} ', '{"a": 1}\r', "\t[1]\t", " 2"])
def test_whitespace_around_a_value_is_what_parse_json_makes_of_it(line: str) -> None:
    # A CRLF file's lines end in "\r"; JSON allows space, tab, CR and LF around a value.
    assert parse_json_lines([*CLEAN, line]) == [*(parse_json(x) for x in CLEAN), parse_json(line)]


@pytest.mark.parametrize("line", ['{"a": 1}{}', "[1] x", '{"a": 1}\x0b', "1 2", "  ", "]"])
def test_a_value_followed_by_more_or_no_value_gives_none(line: str) -> None:
    # After a whole value only JSON whitespace may follow (not a vertical tab, not a 2nd value).
    assert parse_json_lines([*CLEAN, line]) is None
    with pytest.raises(JSONProblem):
        parse_json(line)
