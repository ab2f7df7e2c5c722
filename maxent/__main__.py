"""``python -m maxent``: the ``maxent`` command."""
from maxent.cli import main

raise SystemExit(main())
