"""Paste the provider's error: which rule it is about, and which messages caused it.

OpenAI, Anthropic, Gemini and Bedrock each reject a bad tool history with
their own sentence. :func:`read_error` recognises those sentences (quoted as
providers return them, JSON-escaped or wrapped across lines as they are when
pasted from a log), names the GR-MEM rule the history broke and the kinds of
health finding that cause it, and picks out the call ids and the provider's
own message number when the text gives them. :func:`locate` then finds the
causing messages in a :class:`~flowdrop_core.inspect.health.HealthReport`.

The provider's ``messages.N`` counts the messages of the request it
received (system prompts moved out, turns merged), not the recording, so it
is reported as the provider's number and the location comes from the call
ids or the finding kinds instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flowdrop_core.inspect.health import HealthFinding, HealthReport

__all__ = [
    "PATTERNS",
    "Diagnosis",
    "ErrorPattern",
    "ProviderError",
    "diagnose",
    "locate",
    "read_error",
]


@dataclass(frozen=True)
class ErrorPattern:
    """One provider sentence, the rule it is about and the finding kinds that cause it."""

    provider: str
    name: str
    regex: re.Pattern[str]
    rule: str
    kinds: tuple[str, ...]
    meaning: str


def _p(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


_Q = r"[`'\"]?"  # providers quote field names with backticks, quotes or nothing

#: Every sentence recognised, most specific first.
PATTERNS: tuple[ErrorPattern, ...] = (
    ErrorPattern(
        "Anthropic",
        "tool_use without tool_result",
        _p(
            rf"{_Q}tool_use{_Q} ids were found without {_Q}tool_result{_Q} blocks "
            r"immediately after"
        ),
        "MEM-3",
        ("unanswered_call", "late_result"),
        "a call has no result in the message right after it",
    ),
    ErrorPattern(
        "Anthropic",
        "tool_result blocks missing at the start",
        _p(r"did not find \d+ tool_result block\(s\) at the beginning of this message"),
        "MEM-3",
        ("unanswered_call", "late_result"),
        "the message after a call does not start with its results",
    ),
    ErrorPattern(
        "Anthropic",
        "tool_result without tool_use",
        _p(rf"unexpected {_Q}tool_use_id{_Q} found in {_Q}tool_result{_Q} blocks"),
        "MEM-5",
        ("orphan_result", "orphaned_by_window", "late_result", "duplicate_result"),
        "a result's call is not in the message right before it",
    ),
    ErrorPattern(
        "Anthropic",
        "several results for one tool_use",
        _p(r"each tool_use must have a single result"),
        "MEM-1",
        ("duplicate_result",),
        "a call was answered twice",
    ),
    ErrorPattern(
        "OpenAI",
        "tool message without a preceding tool_calls",
        _p(
            rf"messages with role {_Q}tool{_Q} must be a response to a prece+ding message "
            rf"with {_Q}tool_calls{_Q}"
        ),
        "MEM-5",
        ("orphan_result", "orphaned_by_window", "duplicate_result", "late_result"),
        "a tool message does not follow the assistant turn that called it",
    ),
    ErrorPattern(
        "OpenAI",
        "tool_calls without tool messages",
        _p(
            rf"assistant message with {_Q}tool_calls{_Q} must be followed by tool messages "
            rf"responding to each {_Q}tool_call_id{_Q}"
        ),
        "MEM-3",
        ("unanswered_call", "late_result"),
        "a call has no tool message right after its turn",
    ),
    ErrorPattern(
        "Gemini",
        "function response parts do not match function call parts",
        _p(
            r"number of function response parts is equal to the number of function call "
            r"parts"
        ),
        "MEM-1",
        ("duplicate_result", "unanswered_call", "orphan_result", "late_result"),
        "a function call turn and the response turn after it hold different numbers of parts",
    ),
    ErrorPattern(
        "Gemini",
        "function response turn not after a function call turn",
        _p(r"function response turn comes immediately after a function call turn"),
        "MEM-5",
        ("orphan_result", "orphaned_by_window", "late_result", "duplicate_result"),
        "a function response has no function call right before it",
    ),
    ErrorPattern(
        "Gemini",
        "function call turn not after a user or function response turn",
        _p(
            r"function call turn comes immediately after a user turn or after a function "
            r"response turn"
        ),
        "MEM-2",
        ("duplicate_call", "unanswered_call", "orphaned_by_window"),
        "a function call turn follows another model turn (a re-sent turn, or a call "
        "whose earlier turn lost its response)",
    ),
    ErrorPattern(
        "Bedrock",
        "toolResult blocks expected",
        _p(r"expected toolResult blocks at messages\.\d+\.content for the following ids"),
        "MEM-3",
        ("unanswered_call", "late_result"),
        "a toolUse has no toolResult in the next message",
    ),
    ErrorPattern(
        "Bedrock",
        "more toolResult than toolUse blocks",
        _p(
            r"number of toolResult blocks at messages\.\d+\.content exceeds the number of "
            r"toolUse blocks of previous turn"
        ),
        "MEM-1",
        ("duplicate_result", "orphan_result", "orphaned_by_window", "late_result"),
        "a toolResult answers no toolUse of the turn before it",
    ),
)

_PROVIDER_INDEX = re.compile(r"messages?\.\[?(\d+)\]?")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.:]*")
_LIST_END = re.compile(r"\.\s|['\"}\]]|\s[A-Za-z]+\s")


@dataclass(frozen=True)
class ProviderError:
    """A provider's error read: which sentence it is, the ids and message number it names."""

    pattern: ErrorPattern
    call_ids: tuple[str, ...]
    provider_index: int | None
    text: str

    @property
    def rule(self) -> str:
        return self.pattern.rule

    def explain(self) -> str:
        """One line: provider, what the sentence means, the rule, and the ids it names."""
        ids = f" Call id(s) named: {', '.join(self.call_ids)}." if self.call_ids else ""
        where = (
            f" The provider counts it as its messages.{self.provider_index} (its own request's "
            "numbering, not the recording's)."
            if self.provider_index is not None
            else ""
        )
        return f"{self.pattern.provider}: {self.pattern.meaning} ({self.pattern.rule}).{ids}{where}"


def _flatten(text: str) -> str:
    """Undo the JSON escaping and line wrapping an error picks up on its way to a paste."""
    flat = text.replace('\\\\"', '"').replace('\\"', '"').replace("\\n", " ")
    return " ".join(flat.split())


def _ids(flat: str, end: int) -> tuple[str, ...]:
    """The call ids listed after the sentence: ``...: toolu_01A, toolu_01B. Each ...``."""
    colon = flat.find(":", end)
    if colon < 0 or colon - end > 80:
        return ()
    rest = flat[colon + 1 :]
    stop = _LIST_END.search(rest)
    listed = rest[: stop.start()] if stop else rest
    found: list[str] = []
    for raw in listed.split(","):
        word = raw.strip().rstrip(".")
        if not _ID.fullmatch(word) or word.lower().startswith("message"):
            continue
        if word not in found:
            found.append(word)
    return tuple(found)


def read_error(text: str) -> ProviderError | None:
    """The provider sentence in ``text``, or ``None`` when none is recognised."""
    flat = _flatten(text)
    for pattern in PATTERNS:
        match = pattern.regex.search(flat)
        if match is None:
            continue
        index_match = _PROVIDER_INDEX.search(flat)
        index = int(index_match.group(1)) if index_match else None
        return ProviderError(pattern, _ids(flat, match.end()), index, text)
    return None


def locate(error: ProviderError, report: HealthReport) -> list[HealthFinding]:
    """The findings that caused ``error``: by the call ids it names, else by its kinds.

    Findings of the error's kinds about a named call id come first; when the
    text names no id (Gemini never does) or none of its ids is found, every
    finding of those kinds is returned, in recording order.
    """
    kinds: Sequence[str] = error.pattern.kinds
    candidates = [f for f in report.findings if f.kind in kinds]
    if error.call_ids:
        named = [f for f in candidates if f.call_id in error.call_ids]
        if named:
            return named
        by_id = [f for f in report.findings if f.call_id in error.call_ids]
        if by_id:
            return by_id
    return candidates


@dataclass(frozen=True)
class Diagnosis:
    """A pasted error read against a recording: the sentence, its causes and their rules."""

    error: ProviderError
    findings: list[HealthFinding]

    @property
    def rules(self) -> list[str]:
        """The rules of the causes found (the sentence's own rule when none is found)."""
        out: list[str] = []
        for f in self.findings:
            if f.rule not in out:
                out.append(f.rule)
        return out or [self.error.rule]

    def explain(self) -> str:
        """The error's meaning, the rules broken and where, with both numberings labelled."""
        head = self.error.explain()
        if not self.findings:
            return f"{head} No finding of this recording matches it."
        where = "; ".join(f"{f.kind} at {f.where}" for f in self.findings[:5])
        more = f" (and {len(self.findings) - 5} more)" if len(self.findings) > 5 else ""
        return f"{head} Caused by: {where}{more}. Rule(s): {', '.join(self.rules)}."


def diagnose(text: str, report: HealthReport) -> Diagnosis | None:
    """:func:`read_error` then :func:`locate`: ``None`` when the text is no known error."""
    error = read_error(text)
    if error is None:
        return None
    return Diagnosis(error, locate(error, report))
