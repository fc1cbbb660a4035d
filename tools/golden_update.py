"""Regenerates the golden capture fixtures (tests/python/golden/*.txt) for every Python that has a
built pijit: runs tests/python/test_capture_golden.py with PIJIT_GOLDEN_UPDATE=1 under each, so
each version rewrites its own blocks (a version block only where the shared one differs).

    python tools/golden_update.py                  # pyenv's 3.7 ... 3.11 that have pijit's _C
    python tools/golden_update.py 3.9 3.10         # those versions only

Run the version that should own the shared blocks first (3.9 by default order: the shared block is
written by the first version that finds none). Review the result with `git diff tests/python/golden`.
"""
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["3.9", "3.7", "3.8", "3.10", "3.11"]


def python_for(version):
    try:
        prefix = subprocess.run(["pyenv", "prefix", version], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    exe = os.path.join(prefix, "bin", "python")
    return exe if os.path.exists(exe) else None


def has_pijit(version):
    tag = version.replace(".", "")
    return bool(glob.glob(os.path.join(ROOT, "pyscripts", "pijit", "_C.cpython-%s*.so" % tag)))


def main(argv):
    versions = argv or DEFAULT
    failed = []
    for v in versions:
        exe = python_for(v)
        if not exe or not has_pijit(v):
            print("golden_update: Python %s: %s, left alone" % (v, "no pyenv build" if not exe else "no pijit _C built"))
            continue
        env = dict(os.environ, PIJIT_GOLDEN_UPDATE="1", PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        print("golden_update: Python %s (%s)" % (v, exe))
        rc = subprocess.call([exe, os.path.join(ROOT, "tests", "python", "run.py"), "-k", "capture_golden"],
                             env=env, cwd=ROOT)
        if rc:
            failed.append(v)
    if failed:
        print("golden_update: the run failed on %s (eager and jitted results differ, or a case raised): "
              "the blocks of those versions are not trustworthy" % ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
