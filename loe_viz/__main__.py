"""``python -m loe_viz``: the ``loe-viz`` command."""

import sys

from .cli import main

sys.exit(main())
