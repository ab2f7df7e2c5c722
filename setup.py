"""Build hook: the C extensions (declared in pyproject.toml) are required; without a C compiler
the install fails with one message saying what to install. The engine's AVX2 and AVX-512
builds (maxent.solver._engine_avx2, _engine_avx512) are built only where the compiler targets
x86-64 and takes GCC's flags; elsewhere maxent.solver._engine, the baseline build, is the only
one. GCC's --param flags (pyproject.toml) are passed to GCC only. The extensions are compiled
in parallel, one per core.

With GCC the engine's builds are compiled with link-time optimisation (-flto at compile,
-flto=N at link, N the number of cores): each build is one translation unit, whose code
generation GCC then splits over every core at the link. Three builds on two cores otherwise
leave one core idle while the third compiles alone. It is the same optimisation of the same
unit (-O3, inlining decided over the whole unit), and the results are the same bit for bit.
Cython translates the .pyx sources to C beforehand, in parallel processes."""
import os
import shutil
import subprocess
import sysconfig

from setuptools import setup
from setuptools.command.build_ext import build_ext

NEEDS_CC = ("maxent-ir needs a C compiler to build from source; on Debian/Ubuntu: "
            "apt-get install build-essential python3-dev")
X86_64_ONLY = ("maxent.solver._engine_avx2", "maxent.solver._engine_avx512")


def targets_x86_64(compiler) -> bool:
    """Whether the extensions are compiled for x86-64 by a GCC-compatible compiler (one that
    takes -mavx2): the platform tag names the target, not the machine building."""
    if getattr(compiler, "compiler_type", "") != "unix":
        return False
    return sysconfig.get_platform().endswith(("x86_64", "amd64"))     # not universal2: arm64 too


def is_gcc(cc: str) -> bool:
    """Whether the C compiler is GCC (its --param tuning flags are GCC's own; clang's are not)."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in out and "clang" not in out.lower()


class BuildExt(build_ext):
    def build_extensions(self):
        cc = getattr(self.compiler, "compiler_so", None)     # unix compilers: the command line
        if cc and shutil.which(cc[0]) is None:
            raise SystemExit(f"error: {NEEDS_CC} (no compiler {cc[0]!r} found)")
        if not targets_x86_64(self.compiler):
            self.extensions = [e for e in self.extensions if e.name not in X86_64_ONLY]
        if not (cc and is_gcc(cc[0])):
            for ext in self.extensions:
                ext.extra_compile_args = [a for a in ext.extra_compile_args if not a.startswith("--param")]
        else:
            for ext in self.extensions:
                if ext.name.startswith("maxent.solver._engine"):
                    # the link takes the compile's flags too, so that code generation, which
                    # happens there, sees every one of them. GCC runs the partitions through
                    # make; without make it warns and compiles them one after another.
                    ext.extra_link_args = [*ext.extra_compile_args, f"-flto={os.cpu_count() or 1}"]
                    ext.extra_compile_args = [*ext.extra_compile_args, "-flto"]
        if not self.parallel:
            self.parallel = os.cpu_count() or 1
        # Cython translates the .pyx sources first, in parallel processes: translated in the
        # extension threads, they took turns on the interpreter's lock
        from Cython.Build import cythonize

        translated = cythonize(self.extensions, nthreads=self.parallel, quiet=True)
        for ext, new in zip(self.extensions, translated):
            ext.sources = new.sources
        super().build_extensions()


setup(cmdclass={"build_ext": BuildExt})
