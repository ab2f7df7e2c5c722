"""``python -m maxent.evaluate``: the ``maxent evaluate`` command."""
from maxent.cli.evaluate import main

raise SystemExit(main(prog="python -m maxent.evaluate"))
