"""``python -m flowdrop_core``: the ``flowdrop-buffer`` command line (see :mod:`flowdrop_core.cli`)."""

import sys

from flowdrop_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
