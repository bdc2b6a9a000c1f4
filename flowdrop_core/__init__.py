"""flowdrop_core: the FlowDrop GR-MEM conversation buffer, exactly and explainably.

The library behind the buffer inspector. It has no UI code: the Streamlit
pages and the command line only call it and render what it returns.

Layers, inside out: :mod:`~flowdrop_core.messages` (reading either message
shape, MEM-11), :mod:`~flowdrop_core.engine` (the pure, indexed append:
MEM-1/2/3/10/14/16 and the window), :mod:`~flowdrop_core.context` (scopes,
MEM-6/7/8/13), :mod:`~flowdrop_core.storage` and
:mod:`~flowdrop_core.conversation` (stored, serialized appends, MEM-12),
:mod:`~flowdrop_core.replay` (timelines), plus the provider view
(:mod:`~flowdrop_core.provider`, MEM-5) and text to message (MEM-16).
Every error raised on purpose is a :class:`FlowdropError` (:mod:`~flowdrop_core._errors`).
"""

from typing import TYPE_CHECKING, Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core._ids import usable_id
from flowdrop_core.context import (
    ExecutionContext,
    Scope,
    ScopeResolution,
    as_context,
    resolve_scope,
)
from flowdrop_core.conversation import (
    ConversationBuffer,
    MemoryReadResult,
    ScopedAppendResult,
    read_memory,
)
from flowdrop_core.engine import AppendResult, Buffer, append_messages
from flowdrop_core.events import Event, EventKind, apply_events
from flowdrop_core.messages import InvalidMessagesError, Message, ToolCall, read_call_id
from flowdrop_core.provider import Finding, NormalizeReport, lint, normalize, normalize_report
from flowdrop_core.storage import MemoryStore, SQLiteStore, StorageError, Store
from flowdrop_core.text import text_to_message

if TYPE_CHECKING:
    from flowdrop_core.storage.redis_store import RedisStore

#: The package's version, the one place it is written: the build reads it
#: (pyproject.toml, ``dynamic``) and ``flowdrop-buffer --version`` prints it.
__version__ = "0.4.0"

__all__ = [
    "AppendResult",
    "Buffer",
    "ConversationBuffer",
    "Event",
    "EventKind",
    "ExecutionContext",
    "Finding",
    "FlowdropError",
    "InvalidMessagesError",
    "MemoryReadResult",
    "MemoryStore",
    "Message",
    "NormalizeReport",
    "RedisStore",
    "SQLiteStore",
    "Scope",
    "ScopeResolution",
    "ScopedAppendResult",
    "StorageError",
    "Store",
    "ToolCall",
    "__version__",
    "append_messages",
    "apply_events",
    "as_context",
    "lint",
    "normalize",
    "normalize_report",
    "read_call_id",
    "read_memory",
    "resolve_scope",
    "text_to_message",
    "usable_id",
]


def __getattr__(name: str) -> Any:
    """``RedisStore`` is imported on first use: ``import flowdrop_core`` needs no ``redis``.

    The Redis client is the optional extra ``redis``; without it, only using
    ``RedisStore`` fails (with the ``ImportError`` naming the missing package).
    """
    if name == "RedisStore":
        from flowdrop_core.storage.redis_store import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
