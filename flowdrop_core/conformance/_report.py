"""This implementation's standing against the GR-MEM rules, in the form an implementation publishes.

MEM-14's text ends: "This specification carries no implementation status:
each implementation publishes its own standing against these rules."
:func:`flowdrop_core.conformance.conformance_report` builds that standing by running the conformance
kit (:mod:`flowdrop_core.conformance.kit`: the example scenarios plus the
cases for the rules no scenario expresses) against this library in process,
through the same protocol another implementation's adapter speaks
(:func:`standing_of` does it for any implementation's results): every rule
MEM-1 to MEM-16, the examples that cite it, the decisions this project took
where the text is open, and a status:

- ``pass``: every example citing the rule meets its expectations;
- ``fail``: at least one does not;
- ``no example``: implemented, but no kit case cites it (the evidence names
  where the project tests it instead);
- ``not covered``: outside what this project implements (GR-MEM.md does not
  restate the rule).

The report is data (:meth:`ConformanceReport.to_dict`), JSON and Markdown;
the CLI's ``conformance`` command and the Conformance page only render it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from flowdrop_core._errors import FlowdropError
from flowdrop_core.replay import RULE_SUMMARIES

__all__ = [
    "DECISIONS",
    "IMPLEMENTED",
    "RULES",
    "ConformanceReport",
    "ExampleResult",
    "RuleStanding",
    "StandingError",
    "compare_standings",
    "read_standing",
    "standing_of",
]

Status = Literal["pass", "fail", "no example", "not covered"]

SPECIFICATION = "FlowDrop Workflow Specification 1.0-draft, family GR-MEM"

#: Every rule id of the family, in order.
RULES: tuple[str, ...] = tuple(f"MEM-{n}" for n in range(1, 17))

#: The rules this project implements (the ones GR-MEM.md restates).
IMPLEMENTED: frozenset[str] = frozenset(RULE_SUMMARIES)

#: Where a rule with no example in the kit is exercised instead.
EVIDENCE: dict[str, str] = {}

#: The project's decisions where the specification's text is open, by rule.
DECISIONS: dict[str, tuple[str, ...]] = {
    "MEM-1": (
        "Only a real result answers a call; a healed placeholder does not.",
        "An incoming message marked healed never replaces anything; it is a duplicate when "
        "its id already has an entry.",
    ),
    "MEM-3": (
        "Several placeholders for one turn keep the order in which the turn declared the calls.",
        "Placeholders go directly after the first turn that declared the call, ahead of any "
        "real results of the same turn.",
        "A result evicted while its declaring turn stays re-opens the call.",
    ),
    "MEM-4": (
        "A value that is neither a message nor a list of messages is an error naming the input "
        "and its position; nothing is assembled.",
        "An input holding null contributes nothing, like an unwired one.",
    ),
    "MEM-5": (
        "Only non-objects and entries without a usable role are dropped at coercion; a "
        "malformed field is coerced away with a finding and the message kept.",
        "The drop count is the repair pass's own tally of entries and calls removed, each a "
        "finding with its location.",
    ),
    "MEM-6": (
        "Numbers: a positive whole number is an id (7 and 7.0 are '7'); zero, negatives, "
        "fractions and non-finite numbers are not.",
        "Text that spells a refused number is refused like it ('-1', '0.0', '00').",
        "Text is NFKC-normalized and trimmed of whitespace and invisible characters; an id "
        "with an invisible character inside is unusable.",
    ),
    "MEM-7": ("A refusal emits exactly one warning and touches no storage.",),
    "MEM-8": (
        "When a session drives the run or a session owner is given, the user identity is the "
        "session's owner; a missing owner refuses the user scope.",
    ),
    "MEM-9": (
        "A store or a session is opened to view, to drive or to administer; viewing never "
        "writes, and an append at the view tier is denied before any storage access.",
        "The served inspector gives a visitor the view tier unless the operator grants more.",
    ),
    "MEM-11": (
        "A blank id or '0' is no id; a tool result without a usable id is appended "
        "with a warning event, since it cannot be deduplicated.",
    ),
    "MEM-12": (
        "Every write is conditional on the slot revision the append read; a conflict re-reads "
        "and re-applies, so the report is what was stored.",
        "Past the bounded wait the append proceeds unserialized with a warning and an event, "
        "still through the conditional write, so it never overwrites another turn.",
    ),
    "MEM-14": (
        "The window applies at the end of every append, including a pure read.",
        "An entry appended and evicted by the same call still counts as appended.",
    ),
    "MEM-15": (
        "MEM-10's replacement of a healed placeholder is part of the append, not an edit.",
        "Clearing a slot, a repair of a framework's store, a delete and a journal prune need the "
        "administrative tier, asked for explicitly (--admin, a store the operator marked admin); "
        "below it they are denied before any change.",
        "Each is named before it is made and recorded: a clear as a record in the slot's "
        "journal, a repair in FILE.flowdrop-repairs.jsonl beside its backup.",
    ),
    "MEM-16": (
        "A user message with empty content (None, blank, empty list) is a pure read: nothing "
        "appended, nothing healed.",
        "A role that is not one of the four strings becomes user.",
    ),
}


@dataclass(frozen=True)
class ExampleResult:
    """One example scenario, replayed and checked: its verdicts and any mismatch."""

    name: str
    title: str
    passed: bool
    verdicts: tuple[str, ...]
    mismatches: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "name": self.name,
            "title": self.title,
            "passed": self.passed,
            "verdicts": list(self.verdicts),
            "mismatches": list(self.mismatches),
        }


@dataclass(frozen=True)
class RuleStanding:
    """One rule: what it says (in our words), its examples, our decisions, and its status."""

    rule: str
    summary: str
    status: Status
    examples: tuple[ExampleResult, ...] = ()
    decisions: tuple[str, ...] = ()
    evidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "rule": self.rule,
            "summary": self.summary,
            "status": self.status,
            "examples": [e.to_dict() for e in self.examples],
            "decisions": list(self.decisions),
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class ConformanceReport:
    """The standing of this implementation against every GR-MEM rule."""

    rules: tuple[RuleStanding, ...]
    implementation: str = "flowdrop-buffer-inspector"
    specification: str = SPECIFICATION
    totals: dict[str, int] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """No rule fails."""
        return all(r.status != "fail" for r in self.rules)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the implementation, the specification, totals by status, every rule."""
        return {
            "implementation": self.implementation,
            "specification": self.specification,
            "passed": self.passed,
            "totals": dict(self.totals),
            "rules": [r.to_dict() for r in self.rules],
        }

    def to_json(self) -> str:
        """Strict JSON, indented."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def to_markdown(self) -> str:
        """The report as a Markdown page: a summary table, then each rule's examples and decisions.

        Example titles and mismatches come from scenario files, so they are put in code
        spans with backticks removed: a hostile file cannot add markup to the page.
        """
        lines = [
            f"# {self.implementation}: standing against GR-MEM",
            "",
            f"Specification: {self.specification}. "
            + ", ".join(f"{n} {status}" for status, n in self.totals.items() if n),
            "",
            "| rule | status | examples | summary |",
            "|---|---|---|---|",
        ]
        for r in self.rules:
            passed = sum(1 for e in r.examples if e.passed)
            counts = f"{passed}/{len(r.examples)}" if r.examples else "-"
            lines.append(f"| {r.rule} | {r.status} | {counts} | {r.summary} |")
        for r in self.rules:
            lines += ["", f"## {r.rule}: {r.status}", "", r.summary]
            if r.examples:
                lines += ["", "Examples:"]
                for e in r.examples:
                    mark = "pass" if e.passed else "FAIL"
                    lines.append(
                        f"- {mark}: {_code(e.title or e.name)} ({_code(e.name)}), verdicts "
                        + ", ".join(e.verdicts)
                    )
                    lines += [f"  - {_code(m)}" for m in e.mismatches]
            if r.evidence:
                lines += ["", f"Evidence: {r.evidence}"]
            if r.decisions:
                lines += ["", "Decisions where the text is open:"]
                lines += [f"- {d}" for d in r.decisions]
        return "\n".join(lines) + "\n"


class StandingError(FlowdropError, ValueError):
    """A standing file that is not the JSON ``conformance --json`` writes; names the place."""


_STATUSES = ("pass", "fail", "no example", "not covered")


def _field(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise StandingError(f"{where}.{name}: missing or of the wrong type")
    return value


def read_standing(text: str, source: str = "standing") -> ConformanceReport:
    """A standing from the JSON ``flowdrop-buffer conformance [--against ...] --json`` prints.

    Raises :class:`StandingError` naming the file and the first field that is
    not what that JSON holds; nothing is half read.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StandingError(
            f"{source}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise StandingError(f"{source}: not a standing (a JSON object with 'rules')")
    rules = []
    for index, item in enumerate(_field(data, "rules", list, source)):
        where = f"{source}: rules[{index}]"
        if not isinstance(item, dict):
            raise StandingError(f"{where}: not an object")
        status = item.get("status")
        if status not in _STATUSES:
            raise StandingError(f"{where}.status: {status!r} is not one of {', '.join(_STATUSES)}")
        examples = []
        for k, e in enumerate(_field(item, "examples", list, where)):
            at = f"{where}.examples[{k}]"
            if not isinstance(e, dict):
                raise StandingError(f"{at}: not an object")
            examples.append(
                ExampleResult(
                    name=_field(e, "name", str, at),
                    title=str(e.get("title", "")),
                    passed=_field(e, "passed", bool, at),
                    verdicts=tuple(str(v) for v in e.get("verdicts", ())),
                    mismatches=tuple(str(m) for m in e.get("mismatches", ())),
                )
            )
        rules.append(
            RuleStanding(
                rule=_field(item, "rule", str, where),
                summary=str(item.get("summary", "")),
                status=status,
                examples=tuple(examples),
                decisions=tuple(str(d) for d in item.get("decisions", ())),
                evidence=str(item.get("evidence", "")),
            )
        )
    totals = {s: sum(r.status == s for r in rules) for s in _STATUSES}
    return ConformanceReport(
        rules=tuple(rules),
        implementation=str(data.get("implementation") or source),
        specification=str(data.get("specification", SPECIFICATION)),
        totals=totals,
    )


def compare_standings(ours: ConformanceReport, theirs: ConformanceReport) -> list[dict[str, Any]]:
    """One row per rule MEM-1..MEM-16: each side's status and examples passed, and whether they differ.

    The columns are fixed (``ours``, ``ours examples``, ``theirs``, ``theirs
    examples``, ``same``): two implementations may well carry the same name.
    """

    def cell(report: ConformanceReport) -> dict[str, tuple[str, str]]:
        return {
            r.rule: (
                r.status,
                f"{sum(e.passed for e in r.examples)}/{len(r.examples)}" if r.examples else "-",
            )
            for r in report.rules
        }

    mine, other = cell(ours), cell(theirs)
    absent = ("absent", "-")
    return [
        {
            "rule": rule,
            "ours": mine.get(rule, absent)[0],
            "ours examples": mine.get(rule, absent)[1],
            "theirs": other.get(rule, absent)[0],
            "theirs examples": other.get(rule, absent)[1],
            "same": mine.get(rule, absent)[0] == other.get(rule, absent)[0],
        }
        for rule in RULES
    ]


def _code(text: str) -> str:
    """Text as an inline code span: no Markdown inside is read."""
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def standing_of(
    results: Iterable[tuple[Mapping[str, Any], ExampleResult]],
    *,
    implementation: str = "flowdrop-buffer-inspector",
) -> ConformanceReport:
    """Each rule MEM-1..MEM-16's standing from the kit cases that cite it and how each went."""
    by_rule: dict[str, list[ExampleResult]] = {rule: [] for rule in RULES}
    for case, example in results:
        for rule in dict.fromkeys(case.get("rules", ())):
            if rule in by_rule:
                by_rule[rule].append(example)
    standings = tuple(_standing(rule, by_rule[rule]) for rule in RULES)
    totals: dict[str, int] = {s: 0 for s in ("pass", "fail", "no example", "not covered")}
    for s in standings:
        totals[s.status] += 1
    return ConformanceReport(rules=standings, totals=totals, implementation=implementation)


def _standing(rule: str, examples: Sequence[ExampleResult]) -> RuleStanding:
    """One rule's standing from the examples that cite it."""
    status: Status
    if rule not in IMPLEMENTED:
        status = "not covered"
        summary = "Not restated by this project's GR-MEM.md; not implemented here."
    else:
        summary = RULE_SUMMARIES[rule]
        if not examples:
            status = "no example"
        elif all(e.passed for e in examples):
            status = "pass"
        else:
            status = "fail"
    return RuleStanding(
        rule=rule,
        summary=summary,
        status=status,
        examples=tuple(examples),
        decisions=DECISIONS.get(rule, ()),
        evidence=EVIDENCE.get(rule, ""),
    )
