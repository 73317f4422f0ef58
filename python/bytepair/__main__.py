"""``python -m bytepair``: the same as the ``bytepair`` command."""

import sys

from bytepair.cli import main

if __name__ == "__main__":
    sys.exit(main())
