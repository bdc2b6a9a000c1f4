"""Conformance to GR-MEM: our standing, the language-neutral kit, and a runner for any implementation.

- :mod:`~flowdrop_core.conformance._report`: the standing, rule by rule, as data, JSON and Markdown;
- :mod:`~flowdrop_core.conformance.kit`: the examples as JSON cases, one file per rule;
- :mod:`~flowdrop_core.conformance.protocol`: the JSON Lines protocol an adapter speaks;
- :mod:`~flowdrop_core.conformance.runner`: runs the kit in process or against a command;
- :mod:`~flowdrop_core.conformance.reference`: this library behind the protocol;
- ``python -m flowdrop_core.conformance.adapter``: that, on stdin and stdout.
"""

from collections.abc import Iterable

from flowdrop_core.conformance._report import (
    DECISIONS,
    IMPLEMENTED,
    RULES,
    ConformanceReport,
    ExampleResult,
    RuleStanding,
    StandingError,
    compare_standings,
    read_standing,
    standing_of,
)
from flowdrop_core.scenario import Scenario

__all__ = [
    "DECISIONS",
    "IMPLEMENTED",
    "RULES",
    "ConformanceReport",
    "ExampleResult",
    "RuleStanding",
    "StandingError",
    "compare_standings",
    "conformance_report",
    "read_standing",
    "standing_of",
]


def conformance_report(scenarios: Iterable[Scenario]) -> ConformanceReport:
    """This library's standing: the kit made from ``scenarios`` (and the extra cases), run here."""
    from flowdrop_core.conformance.kit import build_kit
    from flowdrop_core.conformance.runner import InProcess, run_kit

    return run_kit(build_kit(scenarios), InProcess(), implementation="flowdrop-buffer-inspector")
