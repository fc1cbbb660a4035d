"""pijit's command line.

    python -m pijit run script.py [args...]      run an unchanged script under pijit
    python -m pijit explain script.py [args...]  the same, then pijit.explain's report of every
                                                 function the script captured (on stderr)
    python -m pijit report DIR -o report.html    one HTML page of a run dumped with PIJIT_DUMP_DIR=DIR
    python -m pijit bisect -- command args...    the function whose capture makes a command fail
    python -m pijit info                         build, threads and registry facts
    python -m pijit sysinfo                      versions (Python, pijit, oneDNN, AsmJit, compiler),
                                                 the CPU's vector extensions, fused-kernel ISA, GPU

`run` executes the script as __main__ (sys.argv as the script expects). When the real MindSpore is
not installed, `import mindspore` (and its submodules) resolves to pijit, so MindSpore programs run
unchanged; when numpy is not installed, `import numpy` resolves to pijit's numpy stand-in
(pijit.numpy_lite), which covers what such programs do with numpy (--no-numpy-lite turns it off).
Every function of the script (and of modules imported from its directory, or from the
directories in PIJIT_CAPTURE_PATH, os.pathsep-separated) is a capture candidate, with no decorator:
its tensor work runs as graphs, with graph breaks where capture cannot go on; a function that does
no tensor work runs as it is from its second call on. --no-capture turns that off (functions the
script hands to pijit.jit are captured either way). --summary (or PIJIT_LOGS=summary) prints at
exit what capture did; --report FILE writes the HTML run report (docs/debugging.md).
"""
import argparse
import atexit
import os
import runpy
import sys


def _summary():
    from pijit import _C
    rows = sorted(_C.capture_summary(), key=lambda r: (r["file"], r["line"]))
    out = sys.stderr
    print("pijit summary: %d functions captured" % sum(1 for r in rows if not (r["resume"] or r["loop_body"])),
          file=out)
    for r in rows:
        what = ("resume of %s" % r["function"] if r["resume"] else
                "loop body of %s" % r["function"] if r["loop_body"] else r["function"])
        print("  %s (%s:%d): %d graphs, %d breaks, %d recompiles%s%s%s"
              % (what, os.path.basename(r["file"]), r["line"], r["graphs"], r["breaks"], r["recompiles"],
                 ", %d side effects replayed" % r["effects"] if r["effects"] else "",
                 ", %d loop(s) with the body run as a function" % r["loop_bodies"] if r["loop_bodies"] else "",
                 ", runs eagerly: " + r["skip_reason"] if r["skip_reason"] else ""), file=out)
        for reason in sorted(set(r["break_reasons"])):
            print("      " + reason, file=out)


_SCRIPT_GLOBALS = []


def _explain_report():
    from pijit import _C
    from pijit.explain import ExplainReport
    report = ExplainReport()
    rows = sorted(_C.capture_summary(), key=lambda r: (r["file"], r["line"]))
    report._refresh([r["code"] for r in rows])
    print(report, file=sys.stderr)


def _run_with_report(args, argv):
    """`run --report FILE`: the run in a child with PIJIT_DUMP_DIR on (read at start-up), then the page."""
    import subprocess
    import tempfile
    from pijit import report
    keep = os.environ.get("PIJIT_DUMP_DIR")
    tmp = None if keep else tempfile.mkdtemp(prefix="pijit-dump-")
    dump_dir = keep or tmp
    child = list(argv)
    i = child.index("--report") if "--report" in child else None
    if i is not None:
        del child[i:i + 2]
    else:
        child = [a for a in child if not a.startswith("--report=")]
    env = dict(os.environ, PIJIT_DUMP_DIR=dump_dir)
    try:
        rc = subprocess.call([sys.executable, "-m", "pijit"] + child, env=env)
        try:
            report.write_report(dump_dir, args.report)
        except report.ReportError as e:
            print("pijit run --report: no report: %s" % e, file=sys.stderr)
            return rc or 2
        print("pijit: report of the run written to %s" % args.report, file=sys.stderr)
    finally:
        if tmp:
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    return rc


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
    here = os.path.dirname(os.path.abspath(script))
    sys.path.insert(0, here)
    if getattr(args, "logs", None):
        from pijit.explain import set_logs
        try:
            set_logs(args.logs)
        except ValueError as e:
            print("pijit run: %s" % e, file=sys.stderr)
            return 2
    if getattr(args, "explain", False):
        from pijit import _C
        _C.set_graph_timing(True)
        atexit.register(_explain_report)
    elif args.summary or "summary" in os.environ.get("PIJIT_LOGS", ""):
        atexit.register(_summary)
    verify = getattr(args, "verify", None)
    if verify is not None:
        if verify < 0:
            print("pijit run: --verify takes a number of calls >= 0 (every Nth call is verified; 0: off)", file=sys.stderr)
            return 2
        os.environ["PIJIT_VERIFY"] = str(verify)  # the script's pj.jit functions
        from pijit import _C
        _C.set_auto_verify(verify)  # ... and the functions auto-capture runs
    if not args.no_capture:
        from pijit import _C
        extra = [os.path.abspath(p) for p in os.environ.get("PIJIT_CAPTURE_PATH", "").split(os.pathsep) if p]
        try:
            _C.set_auto_capture([os.path.join(here, "")] + [os.path.join(p, "") for p in extra])
        except NotImplementedError:
            pass  # a Python capture is not built for: the script runs as it is
    # an absolute path: code objects' co_filename is what capture matches against the script's directory
    # The script's globals live until the interpreter exits, as a __main__ module's do: atexit
    # handlers (the --summary and explain reports among them) see its functions whatever the
    # garbage collector did after its last line.
    _SCRIPT_GLOBALS.append(runpy.run_path(os.path.abspath(script), run_name="__main__"))
    return 0


def _info(args):
    import pijit
    from pijit import _C
    print("pijit %s on Python %s" % (pijit.__version__, sys.version.split()[0]))
    print("extension: %s" % _C.__file__)
    print("threads: %d" % _C.get_num_threads())
    print("ops in registry: %d" % len(_C.registered_ops()))
    return 0


def _sysinfo(args):
    import platform
    import pijit
    from pijit import _C
    info = _C.build_info()
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), model)
    except OSError:
        pass
    vector = [x for x in ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                          "avx512_bf16", "avx512_vnni") if x in flags]
    print("Python %s (%s)" % (sys.version.split()[0], sys.executable))
    print("pijit %s (%s)" % (pijit.__version__, _C.__file__))
    try:
        _C._simulated_opcodes()
        print("capture: on (pijit captures on Python 3.7-3.11; pj.jit simulates this interpreter's bytecode%s)"
              % ("; PIJIT_PY311_CAPTURE=0 would run functions eagerly" if sys.version_info[:2] == (3, 11) else ""))
    except NotImplementedError as e:
        print("capture: off, functions given to pj.jit run eagerly (%s)" % e)
    print("oneDNN %s (built with %s), AsmJit %s, compiler %s" % (info["onednn"], info["onednn_built_with"],
                                                                 info["asmjit"], info["compiler"]))
    print("CPU: %s, %d threads for kernels; vector extensions: %s" % (model, _C.get_num_threads(),
                                                                      " ".join(vector) or "none found"))
    print("fused elementwise kernels: %s" % _C.fused_backend())
    for name, c in sorted(_C.kernel_cache_stats().items()):
        print("cache of %s: %d of %d entries (%s), %d hits, %d misses, %d evicted"
              % (name, c["size"], c["capacity"], c["env"], c["hits"], c["misses"], c["evictions"]))
    print("freed tensor storage kept for reuse: %.1f MiB (PIJIT_STORAGE_CACHE_MB)" % (_C.cached_storage_bytes() / 2.0 ** 20))
    gpu = _C.gpu_info()
    if not gpu["built"]:
        print("GPU backend: not built (%s)" % gpu["why"])
        return 0
    found = ", ".join("%s %s" % (k, gpu[v] or "not found") for k, v in
                      (("CUDA runtime", "runtime"), ("driver for CUDA", "driver"), ("cuDNN", "cudnn"),
                       ("cuBLAS", "cublas"), ("NVRTC", "nvrtc")))
    print("GPU backend: built with %s; found: %s" % (gpu["built_with"], found))
    for d in gpu["devices"]:
        print("  GPU %d: %s, sm_%d%d, %.1f GiB, %d multiprocessors"
              % (d["index"], d["name"], d["capability"][0], d["capability"][1], d["total_memory"] / 2.0 ** 30,
                 d["multiprocessors"]))
    if not gpu["usable"]:
        print("  no usable GPU: %s" % gpu["why"])
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pijit")
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run a script under pijit")
    r.add_argument("--no-alias", action="store_true", help="do not map `import mindspore` to pijit")
    r.add_argument("--no-numpy-lite", action="store_true",
                   help="do not serve pijit's numpy stand-in when numpy is not installed")
    r.add_argument("--no-capture", action="store_true",
                   help="capture only what the script hands to pijit.jit")
    r.add_argument("--summary", action="store_true", help="print at exit what capture did")
    r.add_argument("--logs", default=None, help="log categories, as PIJIT_LOGS (pijit.set_logs)")
    r.add_argument("--verify", metavar="N", nargs="?", const=1, default=None, type=int,
                   help="every Nth call of each captured function (1 if N is left out) also runs as plain "
                        "Python from the same state; a difference stops the script with VerifyError")
    r.add_argument("--report", metavar="FILE", default=None,
                   help="write the HTML run report (python -m pijit report) of this run to FILE")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER)
    e = sub.add_parser("explain", help="run a script under pijit and print the explain report at exit")
    e.add_argument("script")
    e.add_argument("args", nargs=argparse.REMAINDER)
    from pijit import bisect, cache, report
    report.add_parser(sub)
    bisect.add_parser(sub)
    cache.add_parser(sub)
    sub.add_parser("info", help="print build facts")
    sub.add_parser("sysinfo", help="print versions, CPU vector extensions and the GPU's state")
    argv = sys.argv[1:] if argv is None else list(argv)
    # a bare --verify before the script: every call (argparse would take the script for its N)
    for i, a in enumerate(argv):
        if a == "--verify" and not (i + 1 < len(argv) and argv[i + 1].isdigit()):
            argv[i] = "--verify=1"
        if not a.startswith("-") and (i == 0 or argv[i - 1] not in ("--logs", "--report", "--verify")) and i > 0:
            break  # the script: what follows is its own
    args = ap.parse_args(argv)
    if args.cmd == "run" and args.report:
        return _run_with_report(args, argv)
    if args.cmd == "run":
        return _run(args)
    if args.cmd == "report":
        return report.run_command(args)
    if args.cmd == "bisect":
        return bisect.run_command(args)
    if args.cmd == "cache":
        return cache.run_command(args)
    if args.cmd == "explain":
        args.explain, args.summary = True, False
        args.no_alias = args.no_numpy_lite = args.no_capture = False
        return _run(args)
    if args.cmd == "info":
        return _info(args)
    if args.cmd == "sysinfo":
        return _sysinfo(args)
    ap.print_help()
    return 2
