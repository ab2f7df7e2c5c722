"""The ``maxent`` command: ``maxent evaluate`` (trec_eval's command line) and ``maxent
compare`` (significance tests between runs). ``python -m maxent.evaluate`` and ``python -m
maxent.compare`` run the same commands."""
from __future__ import annotations

import importlib
import sys

__all__ = ["main", "COMMANDS"]

COMMANDS = {
    "evaluate": ("maxent.cli.evaluate", "evaluate runs; trec_eval-compatible output"),
    "compare": ("maxent.cli.compare", "paired significance tests between runs"),
}

_USAGE = "usage: maxent {evaluate,compare} ...\n\ncommands:\n" + "".join(
    f"  {name:<10} {text}\n" for name, (_, text) in COMMANDS.items()
) + "\n`maxent COMMAND --help` describes a command."


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(_USAGE)
        return 0
    if not argv or argv[0] not in COMMANDS:
        what = f"unknown command {argv[0]!r}" if argv else "a command is required"
        print(f"{_USAGE}\nmaxent: error: {what}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:], prog=f"maxent {argv[0]}")
