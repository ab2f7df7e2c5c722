"""``python -m maxent.compare``: the ``maxent compare`` command."""
from maxent.cli.compare import main

raise SystemExit(main(prog="python -m maxent.compare"))
