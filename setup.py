"""Build hook: the C extensions (declared in pyproject.toml) are required; without a C compiler
the install fails with one message saying what to install."""
import shutil

from setuptools import setup
from setuptools.command.build_ext import build_ext

NEEDS_CC = ("maxent-ir needs a C compiler to build from source; on Debian/Ubuntu: "
            "apt-get install build-essential python3-dev")


class BuildExt(build_ext):
    def build_extensions(self):
        cc = getattr(self.compiler, "compiler_so", None)     # unix compilers: the command line
        if cc and shutil.which(cc[0]) is None:
            raise SystemExit(f"error: {NEEDS_CC} (no compiler {cc[0]!r} found)")
        super().build_extensions()


setup(cmdclass={"build_ext": BuildExt})
