"""`python -m worldtrace ...`, the same as the `worldtrace` console script."""

import sys

from worldtrace.cli import main

sys.exit(main())
