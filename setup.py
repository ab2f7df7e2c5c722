"""Build hook for the C extensions declared in pyproject.toml: without a C compiler the install
fails with one message saying what to install. The engine's AVX2 and AVX-512 builds are built only
where the compiler targets x86-64 with GCC's flags; GCC's --param flags go to GCC only. With GCC
the engine's builds use link-time optimisation (-flto=N at link): code generation of each build,
one translation unit, is then split over every core, where three builds on two cores would leave
one core idle; the result is the same bit for bit. Cython translates the sources first, in
parallel processes, then the extensions compile in parallel, one per core."""
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
    """Whether a GCC-compatible compiler (taking -mavx2) compiles for x86-64: the platform tag
    names the target, not the machine building (and universal2 includes arm64)."""
    if getattr(compiler, "compiler_type", "") != "unix":
        return False
    return sysconfig.get_platform().endswith(("x86_64", "amd64"))


def is_gcc(cc: str) -> bool:
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
        gcc = cc and is_gcc(cc[0])
        for ext in self.extensions:
            if not gcc:
                ext.extra_compile_args = [a for a in ext.extra_compile_args if not a.startswith("--param")]
            elif ext.name.startswith("maxent.solver._engine"):
                # code generation happens at the link, so it takes the compile's flags too
                ext.extra_link_args = [*ext.extra_compile_args, f"-flto={os.cpu_count() or 1}"]
                ext.extra_compile_args = [*ext.extra_compile_args, "-flto"]
        if not self.parallel:
            self.parallel = os.cpu_count() or 1
        # translated in the extension threads, the sources took turns on the interpreter's lock
        from Cython.Build import cythonize

        translated = cythonize(self.extensions, nthreads=self.parallel, quiet=True)
        for ext, new in zip(self.extensions, translated):
            ext.sources = new.sources
        super().build_extensions()


setup(cmdclass={"build_ext": BuildExt})
