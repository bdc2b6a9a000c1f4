"""flowdrop_core: the FlowDrop GR-MEM conversation buffer, exactly and explainably.

The library behind the buffer inspector. It has no UI code: the Streamlit
pages and the command line only call it and render what it returns.
"""

from flowdrop_core.engine import AppendResult, Buffer, append_messages
from flowdrop_core.events import Event, EventKind, apply_events
from flowdrop_core.ids import usable_id
from flowdrop_core.messages import (
    InvalidMessagesError,
    Message,
    ToolCall,
    read_call_id,
)
from flowdrop_core.provider import Finding, NormalizeReport, lint, normalize, normalize_report
from flowdrop_core.text import text_to_message

__all__ = [
    "AppendResult",
    "Buffer",
    "Event",
    "EventKind",
    "Finding",
    "InvalidMessagesError",
    "Message",
    "NormalizeReport",
    "ToolCall",
    "append_messages",
    "apply_events",
    "lint",
    "normalize",
    "normalize_report",
    "read_call_id",
    "text_to_message",
    "usable_id",
]
