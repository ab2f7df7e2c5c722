"""``python -m maxent.evaluate``: the ``maxent evaluate`` command."""
from maxent.evaluate import exit_now, main

exit_now(main())
