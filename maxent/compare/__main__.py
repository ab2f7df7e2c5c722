"""``python -m maxent.compare``: the ``maxent compare`` command."""
from maxent.compare import main

raise SystemExit(main())
