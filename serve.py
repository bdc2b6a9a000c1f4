"""Serve the inspector with its upload guard: ``streamlit run serve.py`` (what ``make run`` runs).

``st.App`` is Streamlit's supported hook for server middleware: the UI stays
the classic multipage app (``app.py`` + ``pages/``), and
:class:`inspector_ui.upload_guard.UploadGuard` sits in front of the upload
endpoint from the first request on (no bytes stored for a session that has not
given ``$FLOWDROP_TOKEN``; upload bytes capped per session and in total). See
docs/serving.md.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from inspector_ui.upload_guard import UploadGuard

app = st.App(str(Path(__file__).resolve().parent / "app.py"), middleware=[Middleware(UploadGuard)])
