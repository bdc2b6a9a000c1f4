"""Conformance to GR-MEM: our standing, the language-neutral kit, and a runner for any implementation.

- :mod:`~flowdrop_core.conformance.report`: the standing, rule by rule, as data, JSON and Markdown;
- :mod:`~flowdrop_core.conformance.kit`: the examples as JSON cases, one file per rule;
- :mod:`~flowdrop_core.conformance.protocol`: the JSON Lines protocol an adapter speaks;
- :mod:`~flowdrop_core.conformance.runner`: runs the kit in process or against a command;
- :mod:`~flowdrop_core.conformance.reference`: this library behind the protocol;
- ``python -m flowdrop_core.conformance.adapter``: that, on stdin and stdout.
"""

from flowdrop_core.conformance.report import (
    DECISIONS,
    IMPLEMENTED,
    RULES,
    ConformanceReport,
    ExampleResult,
    RuleStanding,
    StandingError,
    compare_standings,
    conformance_report,
    read_standing,
    standing_of,
)

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
