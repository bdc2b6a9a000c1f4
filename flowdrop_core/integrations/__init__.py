"""GR-MEM inside the agent frameworks: one module per framework, each an optional extra.

- :mod:`flowdrop_core.integrations.langgraph` (extra ``langgraph``): the
  ``gr_mem_messages`` reducer for ``Annotated[list[AnyMessage], ...]``, a
  windowed reducer that reports each update (MEM-14), and a LangChain v1
  ``AgentMiddleware`` that sends the model the MEM-5 provider view.
- :mod:`flowdrop_core.integrations.openai_agents` (extra ``openai-agents``):
  ``GRMemSession``, the Agents SDK ``Session`` protocol over a
  :class:`~flowdrop_core.conversation.ConversationBuffer` on any store.
- :mod:`flowdrop_core.integrations.pydantic_ai` (extra ``pydantic-ai``): a
  history processor (and capability) applying GR-MEM to ``list[ModelMessage]``.
- :mod:`flowdrop_core.integrations._responses_items` (no extra): Responses
  input items to GR-MEM rows and back, without loss; the Agents SDK session
  and the ``SQLiteSession`` store reader share it.

This package imports none of them: importing :mod:`flowdrop_core` never
pulls a framework in, and each module imports its framework when it is
imported itself, failing with :class:`FrameworkMissingError` naming the extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from flowdrop_core._errors import FlowdropError as _FlowdropError

__all__ = ["FrameworkMissingError", "require"]


class FrameworkMissingError(_FlowdropError, ImportError):
    """A framework integration was used without its package: names the pip extra to install."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`FrameworkMissingError` saying which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise FrameworkMissingError(
            f"{module} is not installed; install it with "
            f"pip install 'flowdrop-buffer-inspector[{extra}]' ({exc})"
        ) from exc
