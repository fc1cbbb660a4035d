"""Installs pijit into the running interpreter:

    python -m pip install --no-build-isolation .

Works offline with only setuptools (no `wheel`, no pyproject backend): pip falls back to a legacy
`setup.py install`. The native part is built by CMake (which needs the Debian packages that
tools/deps.sh installs) for exactly this interpreter, and copied into the package.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        tag = "py%d%d" % sys.version_info[:2]
        build_dir = os.path.join(ROOT, "build", "setup-" + tag)
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DPIJIT_PYTHONS=" + sys.executable, "-DPIJIT_TESTS=OFF", "-DPIJIT_INPLACE=OFF"])
        subprocess.check_call(["cmake", "--build", build_dir, "-j", os.environ.get("PIJIT_JOBS", "2"),
                               "--target", "pijit_C_" + tag])
        built = os.path.join(build_dir, tag, "pijit", os.path.basename(self.get_ext_filename(ext.name)))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


setup(
    name="pijit",
    version="0.1.0",
    description="A bytecode-capturing JIT for CPython with a MindSpore-style tensor API",
    package_dir={"": "pyscripts"},
    packages=find_packages("pyscripts", include=["pijit", "pijit.*"]),
    ext_modules=[CMakeExtension("pijit._C")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.7",
    zip_safe=False,
)
