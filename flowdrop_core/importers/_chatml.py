"""Raw ChatML text (``<|im_start|>role\\n...<|im_end|>``), with Hermes / Qwen tool-call tags.

What a chat template renders and what many data sets and logs keep: one
block per turn. The blocks are read as :mod:`.hermes` turns (calls in
``<tool_call>`` tags, results in ``<tool_response>`` tags, ids from their
origin ``line N.tool_call[k]``); text outside any block is a note. Claimed by
its blocks, with or without tags.
"""

from __future__ import annotations

from flowdrop_core.importers import _hermes as hermes
from flowdrop_core.importers._base import Out
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "chatml"
EXPECTS = "ChatML text <|im_start|>role ... <|im_end|> (tool calls in <tool_call> tags)"


def claims_text(text: str) -> Verdict:
    """The signature: some ``<|im_start|>role`` block (ChatML is text, not JSON Lines)."""
    if hermes.chatml_blocks(text):
        return Claim("ChatML blocks")
    return Miss("", "no <|im_start|>role block")


def read_text(text: str, out: Out) -> None:
    """Read one turn per block."""
    hermes.read_chatml(text, out)
