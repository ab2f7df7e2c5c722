"""What every command shares: the --help formatter, docstrings as plain text, error exits."""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Callable

from maxent.errors import MaxEntError, MeasureNameError, ParameterError

SCORE_PRECISION_HELP = ("how run scores are compared when ranking: single = as C floats, as "
                        "trec_eval 9.x, pytrec_eval and the official TREC result files (default); "
                        "double = as C doubles, as trec_eval 10.0")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's lines; appends "(default: X)" where the help states none and the
    default is a value."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if ("default" in text or d is None or d is False or d is argparse.SUPPRESS
                or not action.option_strings):
            return text
        return text + " (default: %(default)s)"


_TEX = (
    (r"\\Big", ""), (r"\\big", ""), (r"\\left", ""), (r"\\right", ""), (r"\\,", " "),
    (r"\\partial", "d"), (r"\\delta", "delta"), (r"\\exp", "exp"), (r"\\ln", "ln"),
    (r"\\log", "log"), (r"\\max", "max"), (r"\\min", "min"), (r"\\sum", "sum"),
    (r"\\prod", "prod"), (r"\\le", "<="), (r"\\ge", ">="), (r"\\cdot", "*"),
    (r"\\infty", "inf"), (r"\\mathrm", ""), (r"\\text", ""),
)


def plain_text(doc: str) -> str:
    """A numpydoc/reStructuredText docstring as plain terminal text, LaTeX made readable
    (``\\frac{a}{b}`` -> ``(a)/(b)``, ``\\sum_{n\\le k}`` -> ``sum_(n<=k)``)."""
    import inspect

    text = inspect.cleandoc(doc or "")
    text = re.sub(r"^(\s*)\.\. math::\s*(.*)$", lambda m: m.group(1) + "    " + m.group(2), text, flags=re.M)
    text = re.sub(r":(?:math|func|class|meth|data|attr|mod):`~?([^`]*)`", r"\1", text)
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(?<=[A-Za-z0-9)\]])\\(sum|prod|exp|ln|log|max|min|delta|partial)(?![A-Za-z])",
                  r" \\\1", text)                          # keep a space before words
    for tex, plain in _TEX:
        text = re.sub(tex + r"(?![A-Za-z])", plain, text)
    for _ in range(3):                                      # innermost braces first
        text = re.sub(r"_\{([^{}]*)\}", r"_(\1)", text)
        text = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", text)
    text = re.sub(r"\\frac\s*([A-Za-z0-9])\s*([A-Za-z0-9])", r"\1/\2 ", text)  # \frac1R
    text = re.sub(r"\\frac\s*([A-Za-z0-9])\s*\{", r"\1/{", text)
    for _ in range(3):
        text = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"(\1) / (\2)", text)
    text = text.replace("{", "(").replace("}", ")").replace("\\", "")
    return re.sub(r"(?<=\S)  +(?=\S)", " ", text)             # spaces left by removed macros


def split_names(text: str) -> list[str]:
    """Split a comma-separated list of names, keeping commas inside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [t for t in out if t]


def measure_names(values: list[str] | None, default: list[str], empty: str = "empty measure name") -> list[str]:
    """The measure names of ``-m`` options, each repeated or comma-separated: a comma inside
    parentheses (``GAP(g=0.5,0.5)``) stays, and so does one that starts a trec_eval parameter
    list's next value (``P.5,10``, ``utility.1,-1,0,0``: a number follows).
    An option that names nothing is a MeasureNameError saying ``empty``."""
    if not values:
        return list(default)
    out = []
    for text in values:
        items = []
        for item in split_names(text):
            if items and item.lstrip("+-")[:1] in tuple("0123456789."):
                items[-1] += "," + item
            else:
                items.append(item)
        if not items:
            raise MeasureNameError(empty)
        out += items
    return out


def add_measures(p: argparse.ArgumentParser, what: str, default: str) -> None:
    """``-m``/``--measures``/``--metrics``, repeatable, each a name or comma-separated names."""
    p.add_argument("-m", "--measures", "--metrics", dest="measures", action="append", metavar="MEASURES",
                   help=f"{what}; repeat the option or separate names with commas (default: {default})")


def add_inputs(p: argparse.ArgumentParser, qrels_help: str, runs_help: str) -> None:
    """The qrels and runs, as positional arguments (``QRELS RUN...``) or as ``--qrels``/``--runs``;
    :func:`resolve_inputs` joins the two forms."""
    p.add_argument("given", nargs="*", metavar="QRELS RUN", help=f"{qrels_help}, then {runs_help} "
                   "(or give them as --qrels and --runs)")
    p.add_argument("--qrels", default=None, help=qrels_help)
    p.add_argument("--runs", nargs="+", default=None, help=runs_help)


def resolve_inputs(args: argparse.Namespace) -> None:
    """``args.qrels`` and ``args.runs`` from either form of :func:`add_inputs`: positional
    arguments are the qrels then the runs, or only runs when ``--qrels`` is given."""
    given = list(args.given or [])
    if given and args.qrels is None:
        args.qrels = given.pop(0)
    if given:
        if args.runs is not None:
            raise ParameterError(f"runs given twice: as arguments ({' '.join(given)}) and as --runs")
        args.runs = given


def run_command(body: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``body(args)``'s exit code; a MaxEntError is one line ``error: ...`` and exit 1
    (``--debug``: the traceback); a closed pipe ends it quietly with 141, as trec_eval."""
    try:
        return body(args)
    except MaxEntError as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # no second error when Python flushes stdout at exit
        return 141


def check_options(args) -> None:
    """ParameterError naming the option for a ``-M`` or ``-l`` trec_eval would not take."""
    if args.depth is not None and args.depth < 1:
        raise ParameterError(f"-M: the depth must be >= 1 (default: no cut), got {args.depth}")
    if args.rel is not None and args.rel < 0:
        raise ParameterError(f"-l: the relevance level must be >= 0, got {args.rel}")
