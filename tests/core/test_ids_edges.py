"""Edges of the identifier rule (MEM-6, MEM-11, MEM-13) that ordinary ids never reach.

Each case states what a caller sees: the id, or the exact reason it is not
one, and that ``usable_id`` (the engine's fast reader) agrees with
``read_id`` (the one that explains), as the module promises.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from flowdrop_core._ids import NO_ID_VALUES, id_problem, read_id, shown_value, usable_id

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


def test_the_fast_reader_refuses_an_int_too_long_to_print() -> None:
    """``usable_id``'s short path for ints stays below the digit limit: no ValueError."""
    assert usable_id(10**5000) is None
    assert usable_id(-(10**5000)) is None
    assert usable_id(10**4299) == str(10**4299)


def test_the_empty_string_is_refused_as_empty() -> None:
    assert read_id("") == (None, "it is empty")
    assert usable_id("") is None


@pytest.mark.parametrize("value", ["0", "0.0", "00", 0, 0.0, "\uff10"])
def test_zero_in_any_spelling_denotes_no_identity(value: Any) -> None:
    problem = id_problem(value) or ""
    assert problem.endswith("is zero, which denotes no identity")
    assert usable_id(value) is None


@pytest.mark.parametrize("value", ["-1", "-0.5e1", -1, -7.0])
def test_a_negative_number_is_refused_as_negative(value: Any) -> None:
    assert (id_problem(value) or "").endswith("is negative")
    assert usable_id(value) is None


def test_one_is_the_smallest_id() -> None:
    assert read_id(1) == ("1", None)
    assert read_id("1") == ("1", None)


def test_every_no_id_spelling_is_refused() -> None:
    """``NO_ID_VALUES``, the spellings of "no identity", are never ids for either reader."""
    assert NO_ID_VALUES
    for value in NO_ID_VALUES:
        assert read_id(value).id is None
        assert usable_id(value) is None


def test_a_huge_exponent_is_refused_without_building_the_number() -> None:
    """``1e999999999999`` is refused by its size; building the int would run out of memory."""
    problem = "it spells a number that has more than 4300 digits"
    assert read_id("1e999999999999") == (None, problem)
    assert usable_id("1e999999999999") is None


# Variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF) are combining marks that show
# nothing: alone they are invisible, not "combining marks", and inside an id they would
# make a second id that looks like the first.
VARIATION_SELECTORS = ["\ufe00", "\ufe0f", "\U000e0100", "\U000e01ef"]


@pytest.mark.parametrize("selector", VARIATION_SELECTORS, ids=lambda v: f"U+{ord(v):04X}")
def test_a_variation_selector_alone_is_invisible(selector: str) -> None:
    code = f"U+{ord(selector):04X}"
    assert read_id(selector) == (None, f"it is made only of invisible characters ({code})")
    assert usable_id(selector) is None


@pytest.mark.parametrize("selector", VARIATION_SELECTORS, ids=lambda v: f"U+{ord(v):04X}")
def test_a_variation_selector_inside_an_id_makes_it_unusable(selector: str) -> None:
    code = f"U+{ord(selector):04X}"
    assert read_id(f"ad{selector}min") == (
        None,
        f"it holds the invisible character {code} at position 2, so it would look like another id",
    )
    assert usable_id(f"ad{selector}min") is None


@pytest.mark.parametrize("value", ["é", "ж", "caf\u00e9", "\u0436\u0443\u043a", "a\ufe10b"])
def test_ordinary_non_ascii_letters_are_ids(value: str) -> None:
    """Letters outside the blank list are kept (U+FE10, a vertical comma, is NFKC ``","``)."""
    expected = value.replace("\ufe10", ",")
    assert read_id(value) == (expected, None)
    assert usable_id(value) == expected


def test_a_control_character_inside_an_id_makes_it_unusable() -> None:
    for value, code in [("a\tb", "U+0009"), ("a\x00b", "U+0000"), ("a\x7fb", "U+007F")]:
        assert read_id(value) == (
            None,
            f"it holds the invisible character {code} at position 1, so it would look like another id",
        )
        assert usable_id(value) is None


def test_an_invisible_only_id_names_its_characters_but_not_plain_spaces() -> None:
    assert read_id(" \u200b \t ") == (
        None,
        "it is made only of invisible characters (U+0009, U+200B)",
    )


def test_the_reason_names_at_most_five_invisible_characters() -> None:
    value = "\u2061\u200b\u200c\u200d\u2060\ufeff"  # six distinct, named in code point order
    assert read_id(value) == (
        None,
        "it is made only of invisible characters (U+200B, U+200C, U+200D, U+2060, U+2061)",
    )


def test_the_reason_names_at_most_five_combining_marks() -> None:
    value = "\u0305\u0304\u0303\u0302\u0301\u0300"  # six distinct, named in code point order
    assert read_id(value) == (
        None,
        "it is made only of combining marks (U+0300, U+0301, U+0302, U+0303, U+0304), "
        "which show nothing",
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([], "a list is not an id"),
        (["7"], "a list is not an id"),
        (("7",), "a list is not an id"),
        ({}, "an object is not an id"),
        ({"id": "7"}, "an object is not an id"),
    ],
    ids=repr,
)
def test_a_list_or_an_object_is_refused_by_its_kind(value: Any, problem: str) -> None:
    """JSON arrays and objects are named as such in the reason, not by their Python type."""
    assert read_id(value) == (None, problem)
    assert usable_id(value) is None
