"""One error tree: every exception the library and its command line raise on purpose.

Each class below subclasses :class:`FlowdropError`, so a caller (the command
line, the inspector) catches ``FlowdropError`` for "bad input or a refused
operation, reported as one clear message" instead of keeping a hand list.
Each also keeps the builtin base it always had, so code that catches
``ValueError``, ``RuntimeError`` or ``PermissionError`` still works.

This module is a leaf (standard library only): every module that defines an
error imports the base from here, and nothing here imports back::

    FlowdropError (Exception)
    ├── CliError                    flowdrop_core.cli._output: bad input the CLI itself found
    ├── InvalidMessagesError        flowdrop_core.messages (ValueError): MEM-11 entries refused
    ├── ScenarioError               flowdrop_core.scenario (ValueError): a bad scenario file
    ├── JSONProblem                 flowdrop_core.scenario (ValueError): strict JSON refused
    ├── ReplayError                 flowdrop_core.replay (ValueError): a replay cannot run
    ├── ConversationFormatError     flowdrop_core.importers._registry (ValueError): no format reads it
    ├── Problem                     flowdrop_core.importers._base: where a reader stopped, and why
    ├── InputProblem                flowdrop_core.importers.paste (ValueError): a bad paste
    ├── SessionUrlError             flowdrop_core.inspect.session_url (ValueError): a bad link
    ├── ReadOnlyError               flowdrop_core.store_browser (PermissionError): no --write
    ├── UnsafeUrlError              flowdrop_core.storage.urls (ValueError): a URL refused
    ├── StoreTargetsError           flowdrop_core.store_targets (ValueError): bad store config
    ├── FrameworkMissingError       flowdrop_core.integrations (ImportError): extra not installed
    ├── FrameworkStoreError         flowdrop_core.framework_stores (ValueError): not such a file
    ├── AssemblyError               flowdrop_core.assembly (ValueError): MEM-4 input not messages
    ├── TierDenied                  flowdrop_core.tiers (PermissionError): MEM-9/15 tier too low
    ├── StandingError               flowdrop_core.conformance (ValueError): not a standing file
    ├── AdapterError                flowdrop_core.conformance.runner (RuntimeError): adapter broke
    └── StorageError                flowdrop_core.storage._base (RuntimeError): a store failed
        ├── RevisionConflict        a conditional write lost the race (MEM-12)
        │   └── JournalConflict     the slot's journal moved on; nothing was written
        ├── StoreBusyError          the slot lock timed out (MEM-12)
        └── LockUnavailable         a write could not take the slot lock (MEM-12, caught)
"""

from __future__ import annotations

__all__ = ["FlowdropError"]


class FlowdropError(Exception):
    """The base of every error flowdrop_core raises on purpose (see the tree above)."""
