"""Spec examples, field by field: what each step should report, what it did, under which rule.

The Spec examples page shows, per step of a scenario, one row per field
(count, appended, appended_any, messages, the MEM-5 provider view, the
refusal and the resolved scope id) with the expected value, the actual one,
a verdict and the rule the field is about. The actual provider view is
always computed, so a MEM-5 case shows what the provider would be sent even
where the file only checks the drop count. :func:`rule_index` is the table
of contents: every rule with its examples and how many pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowdrop_core.provider import normalize_report
from flowdrop_core.replay import RULE_SUMMARIES, CheckResult

__all__ = ["FIELD_RULES", "FieldCheck", "RuleEntry", "field_checks", "rule_index"]

#: The field of a step's report and the rule it is about.
FIELD_RULES: dict[str, str] = {
    "count": "MEM-14",
    "appended": "MEM-14",
    "appended_any": "MEM-14",
    "messages": "GR-MEM",
    "provider.messages": "MEM-5",
    "provider.dropped": "MEM-5",
    "refused": "MEM-7",
    "resolved_scope_id": "MEM-6",
    "found": "MEM-13",
    "verdict": "MEM-14",
}

PASS, FAIL, SHOWN = "pass", "fail", "not checked"
#: Shown on every step even where the file does not expect them.
_ALWAYS = ("verdict", "count", "appended", "appended_any")


@dataclass(frozen=True)
class FieldCheck:
    """One field of one step: expected (if the file says), actual, verdict, rule."""

    step: int
    field: str
    expected: Any
    actual: Any
    verdict: str
    rule: str

    @property
    def checked(self) -> bool:
        return self.verdict != SHOWN

    def row(self) -> dict[str, Any]:
        """Table cells; structured values are kept as values (the page shows them as JSON)."""
        return {
            "step": self.step,
            "field": self.field,
            "rule": self.rule,
            "expected": self.expected if self.checked else "(not checked)",
            "actual": self.actual,
            "verdict": self.verdict,
        }


def field_checks(result: CheckResult, *, with_messages: bool = True) -> list[FieldCheck]:
    """Every field of every step of a checked scenario, expected next to actual.

    A field the file does not expect is still shown (verdict "not checked")
    for the MEM-14 report, so expected and actual always have the same
    fields; ``messages`` and the provider view are shown when the file
    expects them or, for the provider view, when the scenario cites MEM-5.
    """
    scenario, timeline = result.scenario, result.timeline
    mem5 = "MEM-5" in scenario.rules
    mem13 = "MEM-13" in scenario.rules
    out: list[FieldCheck] = []
    for k, record in enumerate(timeline.steps):
        want = scenario.expect[k].model_dump(exclude_none=True) if k < len(scenario.expect) else {}
        provider_want = want.pop("provider", None) or {}
        actual: dict[str, Any] = {
            "verdict": record.verdict,
            "count": record.count,
            "appended": record.appended,
            "appended_any": record.appended_any,
            "refused": record.refused,
            "resolved_scope_id": record.resolved_scope_id,
            "found": record.found,
        }
        wanted_fields = ["verdict", "count", "appended", "appended_any"]
        need_buffer = with_messages and ("messages" in want or provider_want or mem5)
        if need_buffer:
            buffer = timeline.buffer_after(record.step)
            if "messages" in want:
                actual["messages"] = buffer
                wanted_fields.append("messages")
            if provider_want or mem5:
                report = normalize_report(buffer)  # MEM-5, always shown for its cases
                actual["provider.messages"] = report.messages
                actual["provider.dropped"] = report.dropped
                wanted_fields += ["provider.messages", "provider.dropped"]
                want.update({f"provider.{name}": v for name, v in provider_want.items()})
        wanted_fields += ["refused", "resolved_scope_id", "found"]
        for name in wanted_fields:
            got = actual[name]
            if name in want:
                verdict = PASS if want[name] == got else FAIL
                out.append(
                    FieldCheck(record.step, name, want[name], got, verdict, FIELD_RULES[name])
                )
            elif (
                name in _ALWAYS
                or name.startswith("provider")
                or (name == "refused" and got)
                or (name == "found" and mem13)
            ):
                out.append(FieldCheck(record.step, name, None, got, SHOWN, FIELD_RULES[name]))
    return out


@dataclass(frozen=True)
class RuleEntry:
    """A rule in the index: its summary, its examples and how many of them pass."""

    rule: str
    summary: str
    examples: tuple[str, ...]
    passed: int

    @property
    def anchor(self) -> str:
        """The page anchor of the rule's section (``mem-14``)."""
        return self.rule.lower()


def rule_index(
    groups: Mapping[str, Sequence[str]], passed: Mapping[str, bool] | None = None
) -> list[RuleEntry]:
    """The rule index: ``groups`` maps a rule to its example names, in display order."""
    passed = passed or {}
    return [
        RuleEntry(
            rule,
            RULE_SUMMARIES.get(rule, f"{rule} (see the GR-MEM specification)"),
            tuple(names),
            sum(1 for n in names if passed.get(n)),
        )
        for rule, names in groups.items()
    ]
