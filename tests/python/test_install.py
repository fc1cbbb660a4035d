"""`pip install --no-build-isolation .` works offline: pyproject.toml names the in-tree backend
tools/pep517/pijit_backend.py (standard library only), whose wheel carries the right tag, a RECORD
pip verifies, every file of the package and the _C built for this interpreter, and installs into
a folder from which pijit imports and jits outside the repository.

The fast tests pack the in-place pyscripts/pijit/_C of this interpreter (PIJIT_PREBUILT_C) instead
of building it. The full build through CMake takes minutes on two cores, so it runs only with
PIJIT_TEST_INSTALL=1 (otherwise it skips and says so).
"""
import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import unittest
import zipfile

# Under PIJIT_STRESS the backend's own Python (zip, hashes, tar) then runs as rewritten code here,
# and a wheel written in this process must equal, byte for byte, one written by a plain child.
import pijit  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKEND_DIR = os.path.join(ROOT, "tools", "pep517")
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
IN_PLACE_C = os.path.join(ROOT, "pyscripts", "pijit", "_C" + EXT_SUFFIX)


def load_backend():
    spec = importlib.util.spec_from_file_location("pijit_backend",
                                                  os.path.join(BACKEND_DIR, "pijit_backend.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pijit_version():
    with io.open(os.path.join(ROOT, "pyscripts", "pijit", "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def clean_env(**extra):
    """The environment of a user's shell: no PYTHONPATH into the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIJIT_PREBUILT_C")}
    env.update(extra)
    return env


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def build_wheel_in_subprocess(out_dir, prebuilt):
    """Calls the backend's build_wheel as pip's hook runner does: a fresh interpreter, cwd the
    tree, the backend found through backend-path."""
    env = clean_env(PYTHONPATH=BACKEND_DIR)
    if prebuilt:
        env["PIJIT_PREBUILT_C"] = prebuilt
    p = run([sys.executable, "-c", "import sys, pijit_backend as b; "
             "print(b.build_wheel(sys.argv[1]))", out_dir], cwd=ROOT, env=env)
    if p.returncode != 0:
        raise AssertionError("build_wheel failed:\n" + p.stdout[-4000:] + p.stderr[-4000:])
    return os.path.join(out_dir, p.stdout.strip().splitlines()[-1])


# What the installed copy and the in-tree copy both print: values, and what the jit did with them.
PROBE = r"""
import json, sys
import pijit
def f(x, y):
    return x * y + 1
jf = pijit.jit(f)
t = pijit.Tensor([1.0, 2.0, 3.0])
first, second = jf(t, t).tolist(), jf(t, t).tolist()
s = pijit.jit_stats(jf)
print(json.dumps({"file": pijit.__file__, "c_file": pijit._C.__file__, "eager": f(t, t).tolist(),
                  "first": first, "second": second, "mode": s["mode"], "graphs": s["graphs"],
                  "compiles": s["compiles"], "cache_hits": s["cache_hits"]}))
"""


class WheelChecks(object):
    """Checks a built wheel: name, tag, file list, RECORD; then installs and imports it."""

    def check_wheel(self, wheel, backend):
        py, abi, plat = backend.wheel_tag()
        version = pijit_version()
        self.assertEqual(os.path.basename(wheel), "pijit-%s-%s-%s-%s.whl" % (version, py, abi, plat))
        dist_info = "pijit-%s.dist-info" % version
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            data = {n: zf.read(n) for n in names}
        self.assertEqual(len(names), len(set(names)), "duplicate entries")
        # the tag: one this interpreter's pip accepts (pip's own tag list, not ours)
        self.assertIn("Tag: %s-%s-%s\n" % (py, abi, plat), data[dist_info + "/WHEEL"].decode())
        self.assertIn("Root-Is-Purelib: false\n", data[dist_info + "/WHEEL"].decode())
        from pip._vendor.packaging import tags
        self.assertIn("%s-%s-%s" % (py, abi, plat), [str(t) for t in tags.sys_tags()])
        meta = data[dist_info + "/METADATA"].decode()
        self.assertIn("Name: pijit\n", meta)
        self.assertIn("Version: %s\n" % version, meta)
        self.assertIn("Requires-Python: >=3.7\n", meta)
        self.assertIn("pijit = pijit.cli:main", data[dist_info + "/entry_points.txt"].decode())
        # the package: every file git tracks under pyscripts/pijit (data files and the
        # pijit/_paths/ folders without __init__.py too), one _C, the one this Python imports
        tracked = run(["git", "ls-files", "pyscripts/pijit"], cwd=ROOT)
        if tracked.returncode == 0:
            want = {n[len("pyscripts/"):] for n in tracked.stdout.split()}
            want = {n for n in want if os.path.exists(os.path.join(ROOT, "pyscripts", n))}
            self.assertFalse(want - set(names), "files of pyscripts/pijit missing from the wheel")
        self.assertIn("pijit/_paths/nn_loss/loss.py", names)
        self.assertIn("pijit/__main__.py", names)
        c_files = [n for n in names if re.match(r"^pijit/_C\.", n)]
        self.assertEqual(c_files, ["pijit/_C" + EXT_SUFFIX])
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        self.assertFalse([n for n in names if not (n.startswith("pijit/") or
                                                   n.startswith(dist_info + "/"))])
        # RECORD: every entry once, with the sha256 and size of the bytes stored
        rows = list(csv.reader(io.StringIO(data[dist_info + "/RECORD"].decode())))
        self.assertEqual(sorted(r[0] for r in rows), sorted(names))
        for path, digest, size in rows:
            if path == dist_info + "/RECORD":
                self.assertEqual((digest, size), ("", ""))
                continue
            want_digest = "sha256=" + base64.urlsafe_b64encode(
                hashlib.sha256(data[path]).digest()).rstrip(b"=").decode()
            self.assertEqual((digest, int(size)), (want_digest, len(data[path])), path)
        return data

    def install_and_probe(self, wheel, prebuilt_bytes=None):
        target = tempfile.mkdtemp(prefix="pijit_target_")
        elsewhere = tempfile.mkdtemp(prefix="pijit_cwd_")
        self.addCleanup(shutil.rmtree, target, True)
        self.addCleanup(shutil.rmtree, elsewhere, True)
        p = run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                 "--disable-pip-version-check", "--target", target, wheel], env=clean_env(),
                cwd=elsewhere)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        installed_c = os.path.join(target, "pijit", "_C" + EXT_SUFFIX)
        if prebuilt_bytes is not None:
            with open(installed_c, "rb") as f:
                self.assertEqual(f.read(), prebuilt_bytes)
        self.assertTrue(os.path.exists(os.path.join(target, "bin", "pijit")), "no console script")

        got = run([sys.executable, "-c", PROBE], env=clean_env(PYTHONPATH=target), cwd=elsewhere)
        self.assertEqual(got.returncode, 0, got.stderr[-3000:])
        got = json.loads(got.stdout.strip().splitlines()[-1])
        self.assertEqual(got["file"], os.path.join(target, "pijit", "__init__.py"))
        self.assertEqual(got["c_file"], installed_c)
        self.assertEqual(got["first"], [2.0, 5.0, 10.0])
        self.assertEqual(got["second"], [2.0, 5.0, 10.0])
        self.assertEqual(got["eager"], [2.0, 5.0, 10.0])
        # the installed copy jits as the tree does on this interpreter (captures where it captures)
        ref = run([sys.executable, "-c", PROBE],
                  env=clean_env(PYTHONPATH=os.path.join(ROOT, "pyscripts")), cwd=elsewhere)
        self.assertEqual(ref.returncode, 0, ref.stderr[-3000:])
        ref = json.loads(ref.stdout.strip().splitlines()[-1])
        for key in ("mode", "graphs", "compiles", "cache_hits"):
            self.assertEqual(got[key], ref[key], key)
        if sys.version_info[:2] in ((3, 7), (3, 9)):
            self.assertEqual((got["mode"], got["graphs"], got["cache_hits"]), ("compiled", 1, 1))

        # `python -m pijit run` maps an unchanged MindSpore program onto the installed copy
        prog = os.path.join(elsewhere, "prog.py")
        with open(prog, "w") as f:
            f.write("import mindspore as ms\nfrom mindspore import ops\n"
                    "a = ms.Tensor([1.0, 2.0, 3.0], ms.float32)\n"
                    "print('sum', ops.add(a, a).tolist(), ms.__name__)\n")
        p = run([sys.executable, "-m", "pijit", "run", prog], env=clean_env(PYTHONPATH=target),
                cwd=elsewhere)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("sum [2.0, 4.0, 6.0] pijit", p.stdout)


class TestBackendFast(unittest.TestCase, WheelChecks):
    def test_pyproject_names_the_in_tree_backend_with_no_requirements(self):
        with io.open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
        self.assertRegex(text, r'(?m)^requires = \[\]$')
        self.assertRegex(text, r'(?m)^build-backend = "pijit_backend"$')
        self.assertRegex(text, r'(?m)^backend-path = \["tools/pep517"\]$')

    def test_backend_imports_with_the_standard_library_alone(self):
        # -S -I: no site-packages (pyenv's 3.12 has no setuptools, no machine here has `wheel`)
        p = run([sys.executable, "-S", "-I", "-c",
                 "import sys; sys.path.insert(0, %r); import pijit_backend as b; "
                 "print(sorted(m for m in ('setuptools', 'wheel', 'pip') if m in sys.modules)); "
                 "print(b.get_requires_for_build_wheel(), b.get_requires_for_build_sdist())"
                 % BACKEND_DIR], cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split("\n")[:2], ["[]", "[] []"])

    def test_get_requires_are_empty(self):
        b = load_backend()
        self.assertEqual(b.get_requires_for_build_wheel(), [])
        self.assertEqual(b.get_requires_for_build_wheel({"jobs": "1"}), [])
        self.assertEqual(b.get_requires_for_build_sdist(), [])

    def test_prepare_metadata_matches_the_wheel(self):
        b = load_backend()
        out = tempfile.mkdtemp(prefix="pijit_meta_")
        self.addCleanup(shutil.rmtree, out, True)
        name = b.prepare_metadata_for_build_wheel(out)
        self.assertEqual(name, "pijit-%s.dist-info" % pijit_version())
        self.assertEqual(sorted(os.listdir(os.path.join(out, name))),
                         ["METADATA", "WHEEL", "entry_points.txt", "top_level.txt"])
        wheels = tempfile.mkdtemp(prefix="pijit_whl_")
        self.addCleanup(shutil.rmtree, wheels, True)
        wheel = os.path.join(wheels, b.write_wheel(wheels, IN_PLACE_C))
        with zipfile.ZipFile(wheel) as zf:
            for fn in os.listdir(os.path.join(out, name)):
                with open(os.path.join(out, name, fn), "rb") as f:
                    self.assertEqual(zf.read(name + "/" + fn), f.read(), fn)

    def test_prebuilt_c_of_another_python_is_refused(self):
        b = load_backend()
        other = tempfile.mkdtemp(prefix="pijit_other_")
        self.addCleanup(shutil.rmtree, other, True)
        wrong = os.path.join(other, "_C.cpython-36m-x86_64-linux-gnu.so")
        open(wrong, "wb").close()
        with self.assertRaisesRegex(RuntimeError, r"is not _C%s, the name this Python" %
                                    re.escape(EXT_SUFFIX)):
            b.build_wheel(other, {"prebuilt-c": wrong})
        with self.assertRaisesRegex(RuntimeError, "does not exist"):
            b.build_wheel(other, {"prebuilt-c": os.path.join(other, "_C" + EXT_SUFFIX)})
        self.assertEqual(os.listdir(other), [os.path.basename(wrong)])

    def test_wheel_from_prebuilt_c_installs_and_imports_outside_the_repo(self):
        self.assertTrue(os.path.exists(IN_PLACE_C), "build pijit first (tools/build.sh): no %s"
                        % IN_PLACE_C)
        b = load_backend()
        out = tempfile.mkdtemp(prefix="pijit_whl_")
        self.addCleanup(shutil.rmtree, out, True)
        wheel = build_wheel_in_subprocess(out, IN_PLACE_C)
        self.check_wheel(wheel, b)
        with open(IN_PLACE_C, "rb") as f:
            self.install_and_probe(wheel, f.read())
        # the same inputs give the same wheel, byte for byte
        again = tempfile.mkdtemp(prefix="pijit_whl_")
        self.addCleanup(shutil.rmtree, again, True)
        self.assertEqual(b.write_wheel(again, IN_PLACE_C), os.path.basename(wheel))
        with open(wheel, "rb") as f1, open(os.path.join(again, os.path.basename(wheel)), "rb") as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_sdist_holds_the_tree_without_build_outputs(self):
        b = load_backend()
        out = tempfile.mkdtemp(prefix="pijit_sdist_")
        self.addCleanup(shutil.rmtree, out, True)
        name = b.build_sdist(out)
        base = "pijit-%s" % pijit_version()
        self.assertEqual(name, base + ".tar.gz")
        with tarfile.open(os.path.join(out, name)) as tar:
            names = set(tar.getnames())
            pkg_info = tar.extractfile(base + "/PKG-INFO").read().decode()
        for must in ("PKG-INFO", "pyproject.toml", "setup.py", "CMakeLists.txt",
                     "tools/pep517/pijit_backend.py", "pyscripts/pijit/__init__.py",
                     "pyscripts/pijit/_paths/nn_loss/loss.py", "runtime", "py/pyport.h"):
            self.assertTrue(any(n == base + "/" + must or n.startswith(base + "/" + must + "/")
                                for n in names), must)
        self.assertIn("Version: %s\n" % pijit_version(), pkg_info)
        leaked = [n for n in names if re.match(r"^[^/]+/(build[^/]*|\.git)(/|$)", n) or
                  "__pycache__" in n or re.search(r"/pijit/_C\.[^/]*$", n)]
        self.assertEqual(leaked, [])


class TestBackendFullBuild(unittest.TestCase, WheelChecks):
    """build_wheel as pip calls it, CMake included (minutes): PIJIT_TEST_INSTALL=1 runs it."""

    def setUp(self):
        if os.environ.get("PIJIT_TEST_INSTALL") != "1":
            self.skipTest("the CMake build of a wheel takes minutes: set PIJIT_TEST_INSTALL=1")

    def test_cmake_wheel_installs_and_imports_outside_the_repo(self):
        b = load_backend()
        out = tempfile.mkdtemp(prefix="pijit_whl_")
        self.addCleanup(shutil.rmtree, out, True)
        wheel = build_wheel_in_subprocess(out, None)
        self.check_wheel(wheel, b)
        built = os.path.join(ROOT, "build", "setup-py%d%d" % sys.version_info[:2],
                             "py%d%d" % sys.version_info[:2], "pijit", "_C" + EXT_SUFFIX)
        with open(built, "rb") as f:
            self.install_and_probe(wheel, f.read())


if __name__ == "__main__":
    unittest.main()
