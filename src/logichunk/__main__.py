"""``python -m logichunk …``: the same as the ``logichunk`` command."""

import sys

from .cli import main

sys.exit(main())
