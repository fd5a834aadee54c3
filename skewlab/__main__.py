"""``python -m skewlab`` runs the CLI."""

import sys

from skewlab.cli import main

sys.exit(main())
