"""``python -m flowdrop_core``: the ``flowdrop-buffer`` command line (see :mod:`flowdrop_core.cli`)."""

from flowdrop_core.cli import console_main

if __name__ == "__main__":
    console_main()
