"""The inspector's library: what the pages show beyond a timeline, computed without a UI.

One module per part, each pure and tested on its own:

* :mod:`~flowdrop_core.inspect.decisions`: the decision kinds of each step,
  counted and indexed for filtering and previous / next jumps;
* :mod:`~flowdrop_core.inspect.labels`: readable step labels and tool calls;
* :mod:`~flowdrop_core.inspect.rows`: the navigator's timeline rows;
* :mod:`~flowdrop_core.inspect.session_url`: a playground session in a link;
* :mod:`~flowdrop_core.inspect.compare`: the same steps under other settings;
* :mod:`~flowdrop_core.inspect.spec`: spec examples field by field, the rule index;
* :mod:`~flowdrop_core.inspect.lifecycle`: one row per tool call id, what-if fates;
* :mod:`~flowdrop_core.inspect.health`: what is wrong with a recording, where, and what
  GR-MEM did about it;
* :mod:`~flowdrop_core.inspect.provider_errors`: a pasted provider error, its rule and cause.

:data:`PARTS` is the registry the pages and the docs read.
"""

from __future__ import annotations

from flowdrop_core.inspect import (
    compare,
    decisions,
    health,
    labels,
    lifecycle,
    provider_errors,
    rows,
    session_url,
    spec,
)

__all__ = [
    "PARTS",
    "compare",
    "decisions",
    "health",
    "labels",
    "lifecycle",
    "provider_errors",
    "rows",
    "session_url",
    "spec",
]

#: Part name -> (module, what it is for).
PARTS = {
    "decisions": (decisions, "decision kinds per step: counts, filter, previous / next"),
    "labels": (labels, "readable step labels and tool calls"),
    "rows": (rows, "the navigator's compact timeline rows with rules and reasons"),
    "session_url": (session_url, "a playground session in a link, versioned and size-limited"),
    "compare": (compare, "the same steps under other settings, differing steps marked"),
    "spec": (spec, "spec examples field by field, with a rule index"),
    "lifecycle": (lifecycle, "one row per tool call id: declared, answered, healed, evicted"),
    "health": (health, "what is wrong with a recording, where, and what GR-MEM did about it"),
    "provider_errors": (provider_errors, "a pasted provider error: its rule and its cause"),
}
