"""The conformance kit: GR-MEM's examples as language-neutral cases, one JSON file per rule.

A case is a name, a title, the rules it shows, and a list of exchanges
``{"send": REQUEST, "expect": FIELDS}`` in the protocol of
:mod:`flowdrop_core.conformance.protocol`. The cases come from two places:

- every scenario file (``sample_data/*.json``: the specification's examples
  and recorded ones), turned into a ``begin`` and one ``append`` per step,
  expecting what the scenario's ``expect`` says (plus a ``normalize`` where it
  expects a provider view);
- :data:`EXTRA_CASES`, written here from GR-MEM.md's examples for the rules
  a scenario file cannot express (MEM-4, MEM-9, MEM-12, MEM-15, and MEM-7's
  "touches no storage").

The kit ships as package data (``flowdrop_core/conformance/kit/``), written
by :func:`export_kit`; a test keeps the shipped files equal to what the
scenarios make, so they never drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from flowdrop_core.conformance._report import RULES
from flowdrop_core.replay import RULE_SUMMARIES, replay
from flowdrop_core.scenario import Scenario, step_context

__all__ = ["EXTRA_CASES", "KIT_VERSION", "build_kit", "export_kit", "load_kit", "scenario_case"]

KIT_VERSION = 1

Case = dict[str, Any]

_APPEND_FIELDS = (
    "count",
    "appended",
    "appended_any",
    "refused",
    "resolved_scope_id",
    "found",
    "verdict",
    "messages",
)


def scenario_case(scenario: Scenario) -> Case:
    """One scenario as a kit case: ``begin`` with its starting buffer, then one ``append`` per step."""
    config = scenario.config
    exchanges: list[dict[str, Any]] = [
        {
            "send": {
                "op": "begin",
                "config": {
                    "scope": config.scope,
                    "key": config.key,
                    "max_messages": config.max_messages,
                },
                "context": scenario.context,
                "buffer": scenario.buffer,
                "then": [step_context(scenario, step) for step in scenario.steps],
            },
            "expect": {},
        }
    ]
    timeline = None
    for k, step in enumerate(scenario.steps):
        want = scenario.expect[k] if k < len(scenario.expect) else None
        fields = want.model_dump(exclude_none=True) if want is not None else {}
        provider = fields.pop("provider", None)
        exchanges.append(
            {
                "send": {
                    "op": "append",
                    "context": step_context(scenario, step),
                    "messages": step.append,
                },
                "expect": {f: fields[f] for f in _APPEND_FIELDS if f in fields},
            }
        )
        if provider:
            buffer = fields.get("messages")
            if buffer is None:  # the scenario checks the view, not the buffer: ours is the input
                timeline = timeline or replay(scenario)
                buffer = timeline.buffer_after(k + 1)
            exchanges.append(
                {"send": {"op": "normalize", "messages": buffer}, "expect": dict(provider)}
            )
    return {
        "name": scenario.name,
        "title": scenario.title,
        "rules": list(dict.fromkeys(scenario.rules)),
        "exchanges": exchanges,
    }


def _begin(**fields: Any) -> dict[str, Any]:
    return {"send": {"op": "begin", **fields}, "expect": {}}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


_SESSION = {"config": {"scope": "session"}, "context": {"session_id": "s1"}}
_STORED = [
    {"role": "user", "content": "book a table", "metadata": {}},
    {"role": "assistant", "content": "For how many?", "metadata": {}},
]
_SENTINEL = [{"role": "user", "content": "a stranger's message", "metadata": {}}]

#: GR-MEM.md's examples for the rules no scenario file expresses, with hand-written expectations.
EXTRA_CASES: tuple[Case, ...] = (
    {
        "name": "mem-4-declared-order",
        "title": "Ports declared b then a assemble b's message, then a's",
        "rules": ["MEM-4"],
        "exchanges": [
            {
                "send": {
                    "op": "assemble",
                    "inputs": [
                        {"port": "b", "value": _user("second-declared-first")},
                        {"port": "a", "value": _user("first-declared-second")},
                    ],
                },
                "expect": {
                    "messages": [_user("second-declared-first"), _user("first-declared-second")],
                    "verdict": "assembled",
                },
            }
        ],
    },
    {
        "name": "mem-4-unwired-input",
        "title": "An unwired input and an input without a value add nothing, and leave no gap",
        "rules": ["MEM-4"],
        "exchanges": [
            {
                "send": {
                    "op": "assemble",
                    "inputs": [
                        {"port": "in_1", "value": _user("a")},
                        {"port": "in_2"},
                        {"port": "in_3", "value": _user("c")},
                    ],
                },
                "expect": {"messages": [_user("a"), _user("c")]},
            },
            {
                "send": {
                    "op": "assemble",
                    "inputs": [
                        {"port": "history", "value": [_user("x"), _user("y")]},
                        {"port": "extra", "value": None},
                        {"port": "prompt", "value": _user("z")},
                    ],
                },
                "expect": {"messages": [_user("x"), _user("y"), _user("z")]},
            },
        ],
    },
    {
        "name": "mem-4-not-a-message",
        "title": "An input holding neither a message nor a list of messages is an error",
        "rules": ["MEM-4"],
        "exchanges": [
            {
                "send": {
                    "op": "assemble",
                    "inputs": [
                        {"port": "in_1", "value": _user("a")},
                        {"port": "in_2", "value": "just text"},
                    ],
                },
                "expect": {"error": True},
            }
        ],
    },
    {
        "name": "mem-7-refused-scope-reads-no-slot",
        "title": "A refused user scope reads no stored slot, not even the blank or '0' one",
        "rules": ["MEM-7", "MEM-13"],
        "exchanges": [
            _begin(
                config={"scope": "user"},
                context={"user_id": 0},
                slots=[
                    {"scope_id": "", "messages": _SENTINEL},
                    {"scope_id": "0", "messages": _SENTINEL},
                    {"scope_id": "None", "messages": _SENTINEL},
                ],
            ),
            {
                "send": {"op": "append", "context": {"user_id": 0}, "messages": _user("")},
                "expect": {
                    "refused": True,
                    "found": False,
                    "count": 0,
                    "appended": 0,
                    "resolved_scope_id": "",
                    "messages": [],
                },
            },
            {
                "send": {"op": "read", "context": {"user_id": None}},
                "expect": {"refused": True, "found": False, "count": 0, "messages": []},
            },
        ],
    },
    {
        "name": "mem-9-view-tier-cannot-append",
        "title": "A visitor given the view tier of a session cannot append to it",
        "rules": ["MEM-9"],
        "exchanges": [
            _begin(**_SESSION, buffer=_STORED, tier="view"),
            {
                "send": {"op": "append", "context": {"session_id": "s1"}, "messages": _user("4")},
                "expect": {"denied": True},
            },
            {
                "send": {"op": "read", "context": {"session_id": "s1"}},
                "expect": {"count": 2, "messages": _STORED},
            },
        ],
    },
    {
        "name": "mem-9-absent-identities-never-match",
        "title": "A principal and a session that both lack an owner id do not match",
        "rules": ["MEM-9", "MEM-6"],
        "exchanges": [
            {"send": {"op": "owns", "principal": None, "owner": None}, "expect": {"owns": False}},
            {"send": {"op": "owns", "principal": "", "owner": " "}, "expect": {"owns": False}},
            {"send": {"op": "owns", "principal": 0, "owner": "0"}, "expect": {"owns": False}},
            {"send": {"op": "owns", "principal": "7", "owner": 7}, "expect": {"owns": True}},
            {"send": {"op": "owns", "principal": "7", "owner": "8"}, "expect": {"owns": False}},
        ],
    },
    {
        "name": "mem-12-concurrent-appends-keep-every-turn",
        "title": "Eight appends to one slot at once: every turn is kept",
        "rules": ["MEM-12"],
        "exchanges": [
            _begin(**_SESSION),
            {
                "send": {
                    "op": "concurrent",
                    "context": {"session_id": "s1"},
                    "appends": [_user(f"turn {n}") for n in range(8)],
                },
                "expect": {
                    "count": 8,
                    "entries_any_order": [
                        {"role": "user", "content": f"turn {n}", "metadata": {}} for n in range(8)
                    ],
                },
            },
        ],
    },
    {
        "name": "mem-12-unserialized-when-the-wait-runs-out",
        "title": "When the slot lock is not had in time, the append goes on unserialized, warned",
        "rules": ["MEM-12"],
        "exchanges": [
            _begin(**_SESSION, buffer=_STORED),
            {
                "send": {
                    "op": "append",
                    "context": {"session_id": "s1"},
                    "messages": _user("4 people"),
                    "lock_held": True,
                    "lock_timeout": 0.05,
                },
                "expect": {
                    "count": 3,
                    "appended": 1,
                    "serialized": False,
                    "warnings": ["unserialized"],
                },
            },
        ],
    },
    {
        "name": "mem-15-clear-needs-the-admin-tier",
        "title": "Clearing stored messages at the drive tier is denied, and changes nothing",
        "rules": ["MEM-15"],
        "exchanges": [
            _begin(**_SESSION, buffer=_STORED),
            {"send": {"op": "clear", "context": {"session_id": "s1"}}, "expect": {"denied": True}},
            {
                "send": {"op": "read", "context": {"session_id": "s1"}},
                "expect": {"count": 2, "messages": _STORED},
            },
        ],
    },
    {
        "name": "mem-15-admin-clears",
        "title": "At the administrative tier, asked for explicitly, a clear empties the slot",
        "rules": ["MEM-15"],
        "exchanges": [
            _begin(**_SESSION, buffer=_STORED, tier="admin"),
            {"send": {"op": "clear", "context": {"session_id": "s1"}}, "expect": {"cleared": True}},
            {
                "send": {"op": "read", "context": {"session_id": "s1"}},
                "expect": {"count": 0, "found": False, "messages": []},
            },
        ],
    },
    {
        "name": "mem-16-text-op",
        "title": "Text becomes one message; an unknown role is user; no text is no message",
        "rules": ["MEM-16"],
        "exchanges": [
            {
                "send": {"op": "text", "text": "hello", "role": "operator"},
                "expect": {"message": {"role": "user", "content": "hello"}},
            },
            {
                "send": {"op": "text", "text": "hi", "role": "user", "tool_call_id": "c1"},
                "expect": {"message": {"role": "user", "content": "hi"}},
            },
            {"send": {"op": "text", "text": "", "role": "user"}, "expect": {"message": None}},
        ],
    },
)


def build_kit(scenarios: Iterable[Scenario], extra: Iterable[Case] = EXTRA_CASES) -> list[Case]:
    """Every case: one per scenario, then the extra cases; names are unique."""
    cases = [scenario_case(s) for s in scenarios] + [dict(c) for c in extra]
    seen: set[str] = set()
    for case in cases:
        if case["name"] in seen:
            raise ValueError(f"two kit cases are named {case['name']!r}")
        seen.add(case["name"])
    return cases


def kit_files(cases: Iterable[Case]) -> dict[str, dict[str, Any]]:
    """The kit as files: ``MEM-n.json`` for every rule with a case, each holding the cases citing it."""
    by_rule: dict[str, list[Case]] = {}
    for case in cases:
        for rule in case["rules"]:
            by_rule.setdefault(rule, []).append(case)
    return {
        f"{rule}.json": {
            "kit": "GR-MEM conformance kit",
            "version": KIT_VERSION,
            "rule": rule,
            "summary": RULE_SUMMARIES.get(rule, ""),
            "cases": by_rule[rule],
        }
        for rule in RULES
        if rule in by_rule
    }


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def export_kit(folder: str | Path, cases: Iterable[Case]) -> list[Path]:
    """Write the kit's files into ``folder`` (made if missing); return their paths."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in kit_files(cases).items():
        path = root / name
        path.write_text(_dump(data), encoding="utf-8")
        written.append(path)
    return written


def _cases_of(files: Iterable[Mapping[str, Any]]) -> list[Case]:
    """The distinct cases of the kit's files (a case citing two rules is in both files)."""
    cases: dict[str, Case] = {}
    for data in files:
        for case in data.get("cases", ()):
            cases.setdefault(case["name"], case)
    return list(cases.values())


def _rule_number(path: Any) -> tuple[int, str]:
    """Sort key of a kit file: MEM-2 before MEM-10."""
    number = path.name.removeprefix("MEM-").removesuffix(".json")
    return (int(number) if number.isdigit() else 99, path.name)


def load_kit(folder: str | Path | None = None) -> list[Case]:
    """The kit's cases from ``folder``, or the kit shipped with this package."""
    if folder is None:
        root = resources.files("flowdrop_core.conformance") / "kit"
        paths: Iterable[Any] = [p for p in root.iterdir() if p.name.startswith("MEM-")]
    else:
        paths = Path(folder).glob("MEM-*.json")
    texts = [p.read_text(encoding="utf-8") for p in sorted(paths, key=_rule_number)]
    if not texts:
        raise FileNotFoundError(f"no kit files (MEM-*.json) in {folder or 'the package'}")
    return _cases_of(json.loads(t) for t in texts)
