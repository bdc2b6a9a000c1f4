"""The inspector's sample data: scenarios and recorded conversations in ``sample_data/``.

The folder sits next to the app (it is the repository's, not the library's),
so finding it is the UI's business; the library reads the files it is given.
In a clone it is the repository's ``sample_data/``; an installed wheel carries
a copy beside the app in ``inspector_ui/app/`` (see ``setup.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flowdrop_core.replay import RULE_SUMMARIES
from flowdrop_core.scenario import Scenario, ScenarioError, load_scenario

__all__ = [
    "SAMPLE_DIR",
    "SampleScenario",
    "conversation_samples",
    "group_by_rule",
    "rule_summary",
    "sample_scenarios",
]

_PACKAGE = Path(__file__).resolve().parent
_INSTALLED = _PACKAGE / "app" / "sample_data"

#: Where the sample scenarios and recorded conversations live (installed copy, else the clone's).
SAMPLE_DIR = _INSTALLED if _INSTALLED.is_dir() else _PACKAGE.parent / "sample_data"


@dataclass(frozen=True)
class SampleScenario:
    """A scenario file from ``sample_data/`` (or the problem reading it)."""

    path: Path
    scenario: Scenario | None
    error: str | None = None

    @property
    def name(self) -> str:
        return self.scenario.name if self.scenario else self.path.stem

    @property
    def rules(self) -> list[str]:
        return list(self.scenario.rules) if self.scenario else []


def sample_scenarios(folder: Path = SAMPLE_DIR) -> list[SampleScenario]:
    """Every ``*.json`` scenario directly in ``folder``, sorted by file name."""
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            out.append(SampleScenario(path, load_scenario(path)))
        except (ScenarioError, OSError) as exc:
            out.append(SampleScenario(path, None, str(exc)))
    return out


def _rule_key(rule: str) -> tuple[str, int]:
    family, _, number = rule.rpartition("-")
    return (family, int(number)) if number.isdigit() else (rule, 0)


def group_by_rule(samples: Iterable[SampleScenario]) -> dict[str, list[SampleScenario]]:
    """Scenarios that cite a rule, grouped under the first rule each cites, rules in order."""
    groups: dict[str, list[SampleScenario]] = {}
    for sample in samples:
        if sample.rules:
            groups.setdefault(sample.rules[0], []).append(sample)
    return {rule: groups[rule] for rule in sorted(groups, key=_rule_key)}


def rule_summary(rule: str) -> str:
    """The rule in one sentence (from the library), or a plain fallback."""
    return RULE_SUMMARIES.get(rule, f"{rule} (see the GR-MEM specification)")


def conversation_samples(folder: Path = SAMPLE_DIR) -> list[Path]:
    """Recorded conversations to replay: ``sample_data/imports/*`` and ``*.jsonl``."""
    imports = sorted(p for p in (folder / "imports").glob("*") if p.is_file())
    return imports + sorted(folder.glob("*.jsonl"))
