"""The persistent compile cache (runtime/disk_cache.h), and `python -m pijit cache {info,clear}`.

What capture found for a function (its guards, graph and plan) is kept on disk, so that the next
process running the same program validates the guards and skips capture. On by default, in
$PIJIT_CACHE_DIR, else MindSpore's $MS_COMPILER_CACHE_PATH, else $XDG_CACHE_HOME/pijit, else
~/.cache/pijit (its graphs/ folder; GPU kernels' PTX sits beside it in cuda/).
PIJIT_CACHE_DIR="" or MS_COMPILER_CACHE_ENABLE=0 turns it off. The folder must be private to the
user (mode 0700, not a symbolic link), or pijit warns once and runs without it.

Each artifact is checked before it is used: its header names the hash of its key (the function's
bytecode and module, pijit's build, the Python version, the CPU's kernel ISA, oneDNN's version and
the jit options) and of its body; every class, function and module it names must resolve to the
same thing again (a module whose file changed makes its entries stale, and they are dropped); and
its guards must pass on the call, as every cached entry's do. `jit_stats(fn)["entries"][k]
["from_disk"]` says whether an entry came from disk.
"""
import os

from pijit import _C

FOLDERS = ("graphs", "cuda")


def root():
    """The cache's root folder as the environment names it, or None when the cache is off."""
    return _C.cache_root()


def _artifacts(folder):
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if not os.path.islink(os.path.join(folder, n))]


def info():
    """{"root", "enabled", "folders": {name: {"files", "bytes"}}, "process": this process's counters
    (artifacts read, entries loaded and written, stale entries, rejected files, entries refused and why)}."""
    r = root()
    folders = {}
    for name in FOLDERS:
        files = _artifacts(os.path.join(r, name)) if r else []
        folders[name] = {"files": len(files), "bytes": sum(os.path.getsize(f) for f in files if os.path.isfile(f))}
    return {"root": r, "enabled": r is not None, "folders": folders, "process": _C.compile_cache_info()}


def clear():
    """Removes every artifact of the cache (graphs/ and cuda/); returns how many files it removed."""
    r = root()
    removed = 0
    for name in FOLDERS if r else ():
        for f in _artifacts(os.path.join(r, name)):
            if os.path.isfile(f):
                os.unlink(f)
                removed += 1
    return removed


def add_parser(subparsers):
    p = subparsers.add_parser("cache", help="the persistent compile cache: info, clear")
    p.add_argument("action", choices=("info", "clear"))


def run_command(args):
    if args.action == "clear":
        r = root()
        if r is None:
            print("pijit cache: off (PIJIT_CACHE_DIR is empty or MS_COMPILER_CACHE_ENABLE=0): nothing to clear")
            return 0
        print("pijit cache: removed %d files from %s" % (clear(), r))
        return 0
    i = info()
    if not i["enabled"]:
        print("pijit cache: off (PIJIT_CACHE_DIR is empty or MS_COMPILER_CACHE_ENABLE=0)")
        return 0
    print("pijit cache: %s" % i["root"])
    for name, what in (("graphs", "compiled entries (capture results)"), ("cuda", "GPU kernels (PTX)")):
        f = i["folders"][name]
        print("  %-7s %5d files %10d bytes  %s" % (name + "/", f["files"], f["bytes"], what))
    print("  (PIJIT_CACHE_DIR, MS_COMPILER_CACHE_PATH or XDG_CACHE_HOME move it; PIJIT_CACHE_DIR= turns it off)")
    return 0

