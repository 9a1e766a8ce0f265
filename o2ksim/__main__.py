"""``python -m o2ksim`` runs the command-line interface."""

import sys

from o2ksim.cli import main

sys.exit(main())
