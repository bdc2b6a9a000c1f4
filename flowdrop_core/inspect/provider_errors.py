"""Paste the provider's error: which rule it is about, and which messages caused it.

OpenAI, Anthropic, Gemini and Bedrock each reject a bad tool history with
their own sentence. :func:`read_error` recognises those sentences (quoted as
providers return them, JSON-escaped or wrapped across lines as they are when
pasted from a log), names the GR-MEM rule the history broke and the kinds of
health finding that cause it, and picks out the call ids and the provider's
own message number when the text gives them. The sentence is found with or
without the SDK's wrapper around it (``Error code: 400 - {...}``, a Python
repr with ``\\'`` quotes, a JSON body, a log line).

:func:`check_ids` looks each named id up in a
:class:`~flowdrop_core.inspect.health.HealthReport`: at fault there (its
findings), answered there, or not in the recording at all, said plainly,
because an error pasted from another request must not be pinned on some
other call of this one. :func:`locate` returns only the findings of the
named ids; a text that names no id (Gemini never does) is located by the
kinds of finding that cause it, and :attr:`Diagnosis.others` offers those
kinds' findings when the named ids are not at fault, saying so.

The provider's ``messages.N`` counts the messages of the request it
received (system prompts moved out, turns merged), not necessarily the
recording's, so it is reported as the provider's number and the location
comes from the call ids or the finding kinds instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from flowdrop_core.inspect.health import HealthFinding, HealthReport

__all__ = [
    "PATTERNS",
    "Diagnosis",
    "ErrorPattern",
    "IdCheck",
    "ProviderError",
    "check_ids",
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
        "OpenAI",
        "function call without output (Responses API)",
        _p(r"no tool output found for function call (?P<ids>[A-Za-z0-9][A-Za-z0-9_\-:]*)"),
        "MEM-3",
        ("unanswered_call", "late_result"),
        "a function call has no function_call_output in the input",
    ),
    ErrorPattern(
        "OpenAI",
        "function call output without its call (Responses API)",
        _p(
            r"no tool call found for function call output with call_id "
            r"(?P<ids>[A-Za-z0-9][A-Za-z0-9_\-:]*)"
        ),
        "MEM-5",
        ("orphan_result", "orphaned_by_window", "late_result", "duplicate_result"),
        "a function_call_output answers no function call of the input",
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

    def explain(self, same_numbering: bool = False) -> str:
        """One line: provider, what the sentence means, the rule, and the ids it names.

        ``same_numbering``: the provider's ``messages.N`` is the file's ``messages[N]``
        (an Anthropic body: its system prompt is no message there either).
        """
        ids = f" Call id(s) named: {', '.join(self.call_ids)}." if self.call_ids else ""
        n = self.provider_index
        where = ""
        if n is not None:
            where = (
                f" The provider counts it as its messages.{n}, this file's messages[{n}]."
                if same_numbering
                else f" The provider counts it as its messages.{n} (its own request's "
                "numbering, not the recording's)."
            )
        return f"{self.pattern.provider}: {self.pattern.meaning} ({self.pattern.rule}).{ids}{where}"


def _flatten(text: str) -> str:
    """Undo the JSON escaping and line wrapping an error picks up on its way to a paste."""
    flat = text.replace('\\\\"', '"').replace('\\"', '"').replace("\\'", "'").replace("\\n", " ")
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
        named = match.groupdict().get("ids")
        ids = (named,) if named else _ids(flat, match.end())
        return ProviderError(pattern, ids, index, text)
    return None


def _by_id(error: ProviderError, report: HealthReport, cid: str) -> list[HealthFinding]:
    """The findings about ``cid``: those of the error's kinds, else any (the same call)."""
    about = [f for f in report.findings if f.call_id == cid]
    of_kind = [f for f in about if f.kind in error.pattern.kinds]
    return of_kind or about


def locate(error: ProviderError, report: HealthReport) -> list[HealthFinding]:
    """The findings that caused ``error``: those of the call ids it names, else by its kinds.

    A text that names ids is located by them only (findings of the error's
    kinds first, in recording order): an id that is answered here or not in
    the recording locates nothing, rather than some other call
    (:func:`check_ids` says which). A text that names no id (Gemini never
    does) gets every finding of the kinds that cause it.
    """
    if not error.call_ids:
        return [f for f in report.findings if f.kind in error.pattern.kinds]
    out: list[HealthFinding] = []
    for cid in error.call_ids:
        out.extend(f for f in _by_id(error, report, cid) if f not in out)
    return out


@dataclass(frozen=True)
class IdCheck:
    """One id the error names, looked up in the recording, and the sentence saying what it is.

    ``status``: ``"at fault"`` (it has findings here), ``"answered"`` (its call
    and its result are both here, with no finding), ``"in the recording"``
    (there, with no finding and no result) or ``"absent"`` (not in the
    recording at all).
    """

    call_id: str
    status: Literal["at fault", "answered", "in the recording", "absent"]
    findings: tuple[HealthFinding, ...]
    note: str


def check_ids(error: ProviderError, report: HealthReport) -> list[IdCheck]:
    """Each id ``error`` names, looked up in ``report`` (see :class:`IdCheck`), in its order."""
    out: list[IdCheck] = []
    for cid in error.call_ids:
        found = _by_id(error, report, cid)
        life = report.lifecycle.get(cid)
        if found:
            cause = found[0]
            other = (
                ""
                if cause.kind in error.pattern.kinds
                else f" (a {cause.kind}, not a kind that causes this error)"
            )
            out.append(
                IdCheck(
                    cid, "at fault", tuple(found), f"{cid}: {cause.kind} at {cause.where}{other}"
                )
            )
        elif life is None:
            out.append(
                IdCheck(
                    cid,
                    "absent",
                    (),
                    f"{cid} is not in this recording: is this the error of another request?",
                )
            )
        elif life.declared_step is not None and life.answered_step is not None:
            out.append(
                IdCheck(
                    cid,
                    "answered",
                    (),
                    f"{cid} is answered in this recording (called at step {life.declared_step}, "
                    f"answered at step {life.answered_step}), with nothing wrong: is this the "
                    "error of another request, or of a later version of this one?",
                )
            )
        else:
            out.append(
                IdCheck(
                    cid,
                    "in the recording",
                    (),
                    f"{cid} is in this recording (from step {life.first_step}) with no "
                    "finding: the history the provider got differs from it",
                )
            )
    return out


@dataclass(frozen=True)
class Diagnosis:
    """A pasted error read against a recording: the ids checked, the causes, their rules.

    ``findings`` are the causes (see :func:`locate`); ``checks`` say what each
    named id is here; ``others`` are the recording's findings of the kinds that
    cause the error when the ids it names are not at fault: other calls,
    offered as such, never as the cause.
    """

    error: ProviderError
    findings: list[HealthFinding]
    checks: tuple[IdCheck, ...] = ()
    others: tuple[HealthFinding, ...] = ()

    @property
    def rules(self) -> list[str]:
        """The rules of the causes found (the sentence's own rule when none is found)."""
        out: list[str] = []
        for f in self.findings:
            if f.rule not in out:
                out.append(f.rule)
        return out or [self.error.rule]

    def explain(self) -> str:
        """The error's meaning, what each named id is here, and the causes found."""
        n = self.error.provider_index
        head = self.error.explain(
            n is not None and any(f.origin.startswith(f"messages[{n}]") for f in self.findings)
        )
        checks = "".join(
            f" {c.note.rstrip('.?')}{'?' if c.note.endswith('?') else '.'}"
            for c in self.checks
            if c.status != "at fault" or "not a kind" in c.note
        )
        if not self.findings:
            if self.others:
                return (
                    f"{head}{checks} The id(s) it names are not at fault here; this recording's "
                    f"own {len(self.others)} finding(s) of the kinds that cause this error are "
                    "about other calls."
                )
            return f"{head}{checks} No finding of this recording matches it."
        where = "; ".join(f"{f.kind} at {f.where}" for f in self.findings[:5])
        more = f" (and {len(self.findings) - 5} more)" if len(self.findings) > 5 else ""
        unnamed = (
            ""
            if self.error.call_ids
            else " It names no call id: every finding of the kinds that cause it is listed."
        )
        return (
            f"{head}{checks}{unnamed} Caused by: {where}{more}. Rule(s): {', '.join(self.rules)}."
        )


def diagnose(text: str, report: HealthReport) -> Diagnosis | None:
    """:func:`read_error`, :func:`check_ids` and :func:`locate`: ``None`` for no known error."""
    error = read_error(text)
    if error is None:
        return None
    findings = locate(error, report)
    others: tuple[HealthFinding, ...] = ()
    if error.call_ids and not findings:
        others = tuple(f for f in report.findings if f.kind in error.pattern.kinds)
    return Diagnosis(error, findings, tuple(check_ids(error, report)), others)
