"""Option types and texts shared by the commands' parsers."""

from __future__ import annotations

import argparse

from flowdrop_core.importers import FORMATS

__all__ = [
    "CONVERSATION_HELP",
    "EPILOG",
    "FORMAT_HELP",
    "non_blank",
    "non_negative_int",
    "positive_int",
    "utf8_text",
]


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def utf8_text(text: str) -> str:
    """An option value that is text: bytes that are not UTF-8 arrive as lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError("not UTF-8 text") from None
    return text


def non_blank(text: str) -> str:
    if not utf8_text(text).strip():
        raise argparse.ArgumentTypeError("expected a non-blank string")
    return text


EPILOG = """\
exit status: 0 fine; 1 check found a mismatch, lint found something or doctor found
what a provider would reject;
2 bad input (missing file, bad JSON, unknown format, bad message, bad option).
"""

#: The help of every ``--format`` option.
FORMAT_HELP = f"input format (default: detect): {', '.join(FORMATS)}"

#: The help of every ``--conversation`` option.
CONVERSATION_HELP = (
    "which conversation of a file holding one per line (a fine-tuning JSONL file), from 1"
)
