"""A frozen copy of the append engine as it was before the lean rewrite (issue 8).

This package is a **reference, not production code**: ``engine.py``,
``events.py``, ``messages.py`` and ``ids.py`` are verbatim copies of
``flowdrop_core`` at commit ba49d594 (only their imports changed, to point at
each other). ``test_equivalence.py`` runs random conversations through this
copy and through ``flowdrop_core`` and requires identical results, events,
reasons, buffers and errors, so the lean engine keeps exactly today's
behaviour. Do not edit these files to follow a change of behaviour: a
deliberate change of the engine's behaviour retires this reference (and its
test) instead.
"""
