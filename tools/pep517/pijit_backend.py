"""pijit's in-tree PEP 517 build backend: `pip install --no-build-isolation .` works offline.

pip >= 23.1 no longer falls back to `setup.py install`; it asks setuptools for a wheel, and
setuptools needs the `wheel` package for that, which a machine without a registry may lack (and
pyenv's 3.12 has no setuptools at all). This backend needs the standard library alone: CMake builds
pijit._C for the running interpreter (the flow setup.py uses, in build/setup-pyXY so it never
touches ./build), and the wheel is written here with zipfile.

    PIJIT_PREBUILT_C=/path/to/_C.cpython-311-x86_64-linux-gnu.so  skip CMake, pack this file
    PIJIT_JOBS=N                                                   cmake --build -j N (default 2)
pip >= 22.1 may pass the same as --config-settings prebuilt-c=PATH / jobs=N.
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE_ROOT = os.path.join(ROOT, "pyscripts")  # holds the pijit package
NAME = "pijit"
SUMMARY = "A bytecode-capturing JIT for CPython with a MindSpore-style tensor API"
REQUIRES_PYTHON = ">=3.7"
ENTRY_POINTS = "[console_scripts]\npijit = pijit.cli:main\n"
# Never packed from the tree: caches, and the in-place _C builds (each wheel gets the one _C built
# for the interpreter running this backend).
_SKIP_DIRS = {"__pycache__"}
_IN_PLACE_C = re.compile(r"^_C\..*\.(so|pyd|dylib)(\.tmp)?$")


def version():
    """pijit's version, read from the one place that declares it (pijit/__init__.py)."""
    with io.open(os.path.join(PACKAGE_ROOT, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
    if not m:
        raise RuntimeError("pijit_backend: no __version__ in pyscripts/pijit/__init__.py")
    return m.group(1)


def _dist_info():
    return "%s-%s.dist-info" % (NAME, version())


# ---- tags -----------------------------------------------------------------------------------------

def wheel_tag():
    """(python, abi, platform) for the running interpreter, e.g. ('cp311', 'cp311', 'linux_x86_64').

    The abi comes from EXT_SUFFIX, the name the extension is built under, so the tag and the _C
    inside always agree (3.7's 'cp37m', a debug build's 'd')."""
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    py = "%s%d%d" % (impl, sys.version_info[0], sys.version_info[1])
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ""
    m = re.match(r"^\.cpython-(\d+[a-z]*)", suffix)
    abi = ("cp" + m.group(1)) if m else "none"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return py, abi, plat


def wheel_name():
    return "%s-%s-%s.whl" % (NAME, version(), "-".join(wheel_tag()))


# ---- metadata -------------------------------------------------------------------------------------

def _metadata_text():
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + version(),
             "Summary: " + SUMMARY, "Requires-Python: " + REQUIRES_PYTHON]
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with io.open(readme, encoding="utf-8") as f:
            body = f.read()
        return "\n".join(lines) + "\n\n" + body
    return "\n".join(lines) + "\n"


def _wheel_text():
    return ("Wheel-Version: 1.0\nGenerator: pijit_backend %s\nRoot-Is-Purelib: false\nTag: %s\n"
            % (version(), "-".join(wheel_tag())))


def _dist_info_files():
    """{name inside the dist-info directory: bytes}, RECORD excepted."""
    return {
        "METADATA": _metadata_text().encode("utf-8"),
        "WHEEL": _wheel_text().encode("utf-8"),
        "entry_points.txt": ENTRY_POINTS.encode("utf-8"),
        "top_level.txt": (NAME + "\n").encode("utf-8"),
    }


# ---- the package's files --------------------------------------------------------------------------

def package_files():
    """[(path inside the wheel, path on disk)] for every file of pyscripts/pijit (data files and
    namespace-style folders such as pijit/_paths/ included), the in-place _C builds excepted."""
    out = []
    base = os.path.join(PACKAGE_ROOT, NAME)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo")) or _IN_PLACE_C.match(fn):
                continue
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, PACKAGE_ROOT).replace(os.sep, "/")
            out.append((rel, full))
    return out


def extension_name():
    return "%s/_C%s" % (NAME, sysconfig.get_config_var("EXT_SUFFIX"))


def build_extension(jobs=None):
    """Builds pijit._C for this interpreter with CMake; returns the built file's path."""
    tag = "py%d%d" % sys.version_info[:2]
    build_dir = os.path.join(ROOT, "build", "setup-" + tag)
    if shutil.which("cmake") is None:
        raise RuntimeError("pijit_backend: cmake not found (tools/deps.sh installs the build tools)")
    subprocess.check_call(
        ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
         "-DPIJIT_PYTHONS=" + sys.executable, "-DPIJIT_TESTS=OFF", "-DPIJIT_INPLACE=OFF"],
        stdout=sys.stderr)
    subprocess.check_call(
        ["cmake", "--build", build_dir, "-j", str(jobs or os.environ.get("PIJIT_JOBS", "2")),
         "--target", "pijit_C_" + tag], stdout=sys.stderr)
    built = os.path.join(build_dir, tag, extension_name())
    if not os.path.isfile(built):
        raise RuntimeError("pijit_backend: CMake finished but %s is missing" % built)
    return built


def _prebuilt(config_settings):
    path = (config_settings or {}).get("prebuilt-c") or os.environ.get("PIJIT_PREBUILT_C")
    if not path:
        return None
    if not os.path.isfile(path):
        raise RuntimeError("pijit_backend: the prebuilt _C %r does not exist" % path)
    want = "_C" + sysconfig.get_config_var("EXT_SUFFIX")
    if os.path.basename(path) != want:
        # Another interpreter's build would install and then fail to import; refuse it here.
        raise RuntimeError("pijit_backend: the prebuilt _C %r is not %s, the name this Python "
                           "(%s) imports" % (path, want, sys.version.split()[0]))
    return path


# ---- writing the wheel ----------------------------------------------------------------------------

def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _zip_info(name, executable=False):
    # A fixed date keeps wheels of the same inputs byte-identical.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_wheel(wheel_directory, extension):
    """Writes the wheel of the package's files plus `extension` (a built _C); returns its name."""
    os.makedirs(wheel_directory, exist_ok=True)
    name = wheel_name()
    dist_info = _dist_info()
    entries = []  # (name inside the wheel, bytes, executable)
    for rel, full in package_files():
        with open(full, "rb") as f:
            entries.append((rel, f.read(), False))
    with open(extension, "rb") as f:
        entries.append((extension_name(), f.read(), True))
    for fn, data in sorted(_dist_info_files().items()):
        entries.append((dist_info + "/" + fn, data, False))
    record = io.StringIO()
    for rel, data, _ in entries:
        record.write("%s,%s,%d\n" % (rel, _record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % dist_info)
    tmp = os.path.join(wheel_directory, name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for rel, data, executable in entries:
            zf.writestr(_zip_info(rel, executable), data)
        zf.writestr(_zip_info(dist_info + "/RECORD"), record.getvalue().encode("utf-8"))
    os.replace(tmp, os.path.join(wheel_directory, name))
    return name


# ---- PEP 517 hooks --------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = _dist_info()
    target = os.path.join(metadata_directory, dist_info)
    os.makedirs(target, exist_ok=True)
    for fn, data in _dist_info_files().items():
        with open(os.path.join(target, fn), "wb") as f:
            f.write(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    extension = _prebuilt(config_settings)
    if extension is None:
        extension = build_extension((config_settings or {}).get("jobs"))
    return write_wheel(wheel_directory, extension)


def sdist_files():
    """[(path relative to the tree, path on disk)]: the tree minus build outputs and VCS data."""
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = os.path.relpath(dirpath, ROOT)
        keep = []
        for d in sorted(dirnames):
            if d in _SKIP_DIRS or d.startswith(".git") or d.endswith(".egg-info"):
                continue
            if rel_dir == "." and (d.startswith("build") or d == "dist"):
                continue
            keep.append(d)
        dirnames[:] = keep
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo")) or _IN_PLACE_C.match(fn):
                continue
            full = os.path.join(dirpath, fn)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, version())
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    tmp = os.path.join(sdist_directory, name + ".tmp")
    with tarfile.open(tmp, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        pkg_info = _metadata_text().encode("utf-8")
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size, info.mode, info.mtime = len(pkg_info), 0o644, int(time.time())
        tar.addfile(info, io.BytesIO(pkg_info))
        for rel, full in sdist_files():
            tar.add(full, arcname=base + "/" + rel, recursive=False)
    os.replace(tmp, os.path.join(sdist_directory, name))
    return name
