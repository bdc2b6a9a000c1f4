"""Edges of the identifier rule (MEM-6, MEM-11, MEM-13) that ordinary ids never reach.

Each case states what a caller sees: the id, or the exact reason it is not
one, and that ``usable_id`` (the engine's fast reader) agrees with
``read_id`` (the one that explains), as the module promises.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from flowdrop_core.ids import id_problem, read_id, shown_value, usable_id

REFUSED: list[tuple[Any, str]] = [
    (float("inf"), "it is not a finite number"),
    (float("-inf"), "it is not a finite number"),
    (float("nan"), "it is not a finite number"),
    # An exponent spelling of a whole number too long for Python's int/str limit.
    ("1e5000", "it spells a number that has more than 4300 digits"),
    # Digits alone past the limit.
    ("1" * 4301, "it spells a number with more than 4300 digits"),
    ("9" * 5000, "it spells a number with more than 4300 digits"),
    # A number type the reader does not take as a number (JSON never yields one).
    (Decimal("7"), "a value of type Decimal is not an id"),
    (b"7", "a value of type bytes is not an id"),
    (None, "it is null"),
]


@pytest.mark.parametrize(("value", "problem"), REFUSED, ids=lambda v: repr(v)[:20])
def test_refused_value_says_why(value: Any, problem: str) -> None:
    assert read_id(value) == (None, problem)
    assert id_problem(value) == problem


@pytest.mark.parametrize(("value", "problem"), REFUSED, ids=lambda v: repr(v)[:20])
def test_fast_reader_refuses_what_the_explaining_reader_refuses(value: Any, problem: str) -> None:
    """``usable_id`` is "the same rule returning only the id": no id where read_id has none."""
    assert usable_id(value) is None


def test_digits_at_the_limit_are_still_an_id() -> None:
    at_limit = "1" * 4300
    assert read_id(at_limit) == (at_limit, None)
    assert usable_id(at_limit) == at_limit
    assert id_problem(at_limit) is None


def test_a_number_too_long_to_print_is_shown_by_its_size() -> None:
    """An error message quoting a huge int neither fails nor floods."""
    assert shown_value(10**5000) == "<a number of about 5000 digits>"
    assert read_id(10**5000) == (None, "it has more than 4300 digits")
