"""The inspector's shared Streamlit code: everything the page scripts have in common.

The page scripts are ``app.py`` (the Playground, Streamlit's entry page) and
``pages/*.py``; each starts with :func:`inspector_ui.shell.page_shell`. This
package holds no buffer logic: it caches ``flowdrop_core`` calls and lays out
what they return. One module per part; the pages are listed once, in
:mod:`inspector_ui.registry`.
"""
