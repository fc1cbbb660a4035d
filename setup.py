"""The setuptools path to pijit, for tools that still run setup.py directly:

    python setup.py build_ext --inplace      # or: python setup.py install

`pip install --no-build-isolation .` does not come here: pyproject.toml names the in-tree backend
tools/pep517/pijit_backend.py, which needs no `wheel` and no setuptools and so works offline. Both
paths share that backend's name, version, file list rules and CMake flow (exactly this interpreter,
in build/setup-pyXY; CMake needs the Debian packages that tools/deps.sh installs).
"""
import os
import shutil
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tools", "pep517"))
import pijit_backend  # noqa: E402  (the one definition of the build; see its docstring)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        built = pijit_backend.build_extension(os.environ.get("PIJIT_JOBS"))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


setup(
    name=pijit_backend.NAME,
    version=pijit_backend.version(),
    description=pijit_backend.SUMMARY,
    package_dir={"": "pyscripts"},
    packages=find_packages("pyscripts", include=["pijit", "pijit.*"]),
    # pijit/_paths/<name>/ are folders without __init__.py that pijit adds to packages' __path__
    # (pijit/_import_paths.py); find_packages does not see them.
    package_data={"pijit": ["_paths/*/*.py"]},
    ext_modules=[CMakeExtension("pijit._C")],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["pijit = pijit.cli:main"]},
    python_requires=pijit_backend.REQUIRES_PYTHON,
    zip_safe=False,
)
