"""pijit's command line.

    python -m pijit run script.py [args...]   run an unchanged script under pijit
    python -m pijit info                      build, threads and registry facts

`run` executes the script as __main__ (sys.argv as the script expects). When the real MindSpore is
not installed, `import mindspore` (and its submodules) resolves to pijit, so MindSpore programs run
unchanged; when numpy is not installed, `import numpy` resolves to pijit's numpy stand-in
(pijit.numpy_lite), which covers what such programs do with numpy (--no-numpy-lite turns it off).
Functions and Cells the script hands to pijit.jit (ms_function, GRAPH_MODE) are captured; capture of
every frame of the script arrives with the graph-break issue.
"""
import argparse
import os
import runpy
import sys


def _run(args):
    from pijit import alias
    script = args.script
    if not os.path.exists(script):
        print("pijit run: no such file: %s" % script, file=sys.stderr)
        return 2
    if not args.no_alias:
        alias.install_mindspore_alias()
    if not args.no_numpy_lite:
        alias.install_numpy_lite()
    sys.argv = [script] + list(args.args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


def _info(args):
    import pijit
    from pijit import _C
    print("pijit %s on Python %s" % (pijit.__version__, sys.version.split()[0]))
    print("extension: %s" % _C.__file__)
    print("threads: %d" % _C.get_num_threads())
    print("ops in registry: %d" % len(_C.registered_ops()))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pijit")
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run a script under pijit")
    r.add_argument("--no-alias", action="store_true", help="do not map `import mindspore` to pijit")
    r.add_argument("--no-numpy-lite", action="store_true",
                   help="do not serve pijit's numpy stand-in when numpy is not installed")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("info", help="print build facts")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return _run(args)
    if args.cmd == "info":
        return _info(args)
    ap.print_help()
    return 2
