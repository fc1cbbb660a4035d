"""PIJIT_DUMP_DIR, PIJIT_TRACE and PIJIT_CAPTURED_LIST: what a run leaves on disk (issue 15).

PIJIT_DUMP_DIR=DIR gives every captured code object a folder DIR/NNN_name_file_line/ (the runtime
writes each graph's IR after every pass, its Graphviz form and its fused kernels' assembly; this
module writes the bytecode: original, rewritten and resume functions, dis-style and as
pseudo-source, and each cache entry's guards), and at exit DIR/run.json (what the run captured,
per function, with the source lines each graph came from: `python -m pijit report DIR` reads it),
DIR/trace.json (unless PIJIT_TRACE names another file) and an SVG per graph when Graphviz's `dot`
is installed. PIJIT_TRACE=out.json writes the Chrome/Perfetto trace-event timeline of capture,
guards, compile stages, graph launches, kernels and eager frames. PIJIT_CAPTURED_LIST=path appends
`module:name` of each code object that got a graph (what `python -m pijit bisect` bisects over).

A dump never changes the program: a failure to write is said on stderr once and ignored.
"""
import atexit
import dis
import io
import json
import os
import shutil
import subprocess
import sys
import time

from pijit import _C
from pijit.explain import Break
from pijit.pseudo import pseudo_source

_START = time.time()
_state = {"dir": None, "trace": None, "said": False, "original": set()}


def _say(msg):
    if not _state["said"]:
        _state["said"] = True
        print("pijit: dump: %s" % msg, file=sys.stderr)


def _write(path, text):
    try:
        # (a code object's file or name may hold a lone surrogate, from a file name that is not
        # UTF-8: written as \udcff, as pijit's logs show it)
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
    except OSError as e:
        _say("cannot write %s: %s" % (path, e))


def _dis_text(code):
    buf = io.StringIO()
    dis.dis(code, file=buf)
    return buf.getvalue()


def _on_entry(folder, entry, code, rewritten, resumes, guards, reason):
    """The runtime's hook: one new cache entry of the code object whose folder this is."""
    if folder not in _state["original"]:
        _state["original"].add(folder)
        _write(os.path.join(folder, "original.dis"), _dis_text(code))
    base = os.path.join(folder, "entry%d" % entry)
    _write(base + ".guards.txt", "".join(g + "\n" for g in guards))
    if reason:
        _write(base + ".reason.txt", reason + "\n")
    if rewritten is not None:
        _write(base + ".rewritten.dis", _dis_text(rewritten))
        _write(base + ".rewritten.py", pseudo_source(rewritten))
    for k, rc in enumerate(resumes):
        _write("%s.resume%d.dis" % (base, k), _dis_text(rc))
        _write("%s.resume%d.py" % (base, k), pseudo_source(rc))


def _last_line(code):
    lines = [line for _, line in dis.findlinestarts(code) if line is not None]
    return max(lines + [code.co_firstlineno])


def _break_dict(record):
    b = Break(record)  # the record's fields, as explain shows them (no text is parsed)
    return {"id": b.id, "name": b.name, "message": b.message, "detail": b.detail, "file": b.file,
            "line": b.line, "function": b.function, "text": b.text, "chain": b.chain,
            "frames": [list(f) for f in b.frames], "kind": b.kind}


def run_summary():
    """What run.json holds (a dict): the run, and per captured code object its graphs, breaks,
    guards, recompiles, entries, lines and files."""
    rows = _C.capture_summary()
    fns = []
    for r in rows:
        code = r["code"]
        breaks = [_break_dict(b) for b in r["break_records"]]
        key = r["dump_key"]
        folder = os.path.join(_state["dir"], key) if _state["dir"] and key else None
        files = sorted(os.listdir(folder)) if folder and os.path.isdir(folder) else []
        try:
            entries = _C.jit_stats(code).get("entries", [])
        except Exception:  # noqa: BLE001 - entries are extra detail
            entries = []
        # in the order they were compiled: entry["serial"] names its files (entry<serial>.*)
        entries = sorted(entries, key=lambda e: e.get("serial", 0))
        fns.append({
            "key": key, "function": r["function"], "qualname": getattr(code, "co_qualname", r["function"]),
            "module": r["module"], "file": r["file"], "line": r["line"], "last_line": _last_line(code),
            # "file" is pijit's text of the name (as breaks show it: a lone surrogate reads \udcff);
            # "path" the file itself, to read the source from
            "path": code.co_filename if isinstance(code.co_filename, str) else r["file"],
            "kind": "resume function" if r["resume"] else "loop body" if r["loop_body"] else "function",
            "compiles": r["compiles"], "cache_hits": r["cache_hits"], "graph_runs": r["graph_runs"],
            "graphs": r["graphs"], "ops_per_graph": list(r["ops_per_graph"]), "breaks": breaks,
            "recompiles": list(r["recompile_reasons"]),
            "guards": [list(e.get("guards", [])) for e in entries] if entries else [list(g) for g in r["guards"]],
            "entries": [{"serial": e.get("serial"), "guards": list(e.get("guards", [])), "hits": e.get("hits", 0),
                         "ops": e.get("ops", 0),
                         "reason": e.get("reason"), "graph_break": e.get("graph_break"),
                         "effects": list(e.get("effects", []))} for e in entries],
            "graph_lines": list(r["graph_lines"]),
            "break_lines": sorted({b["line"] for b in breaks if b["line"] and b["file"] == r["file"]}),
            "skip_reason": r["skip_reason"], "capture_ms": r["capture_ms"], "compile_ms": r["compile_ms"],
            "run_ms": r["run_ms"], "files": files})
    totals = {"functions": len(fns), "graphs": sum(f["graphs"] for f in fns),
              "breaks": sum(len(f["breaks"]) for f in fns), "recompiles": sum(len(f["recompiles"]) for f in fns),
              "capture_ms": sum(f["capture_ms"] for f in fns), "compile_ms": sum(f["compile_ms"] for f in fns),
              "graph_ms": sum(f["run_ms"] for f in fns), "graph_runs": sum(f["graph_runs"] for f in fns)}
    import pijit
    return {"format": 1, "python": sys.version.split()[0], "pijit": pijit.__version__, "argv": list(sys.argv),
            "cwd": os.getcwd(), "wall_ms": (time.time() - _START) * 1e3, "totals": totals, "functions": fns}


def _render_svgs(root, limit=300):
    """An SVG beside each graph's .dot (the first `limit`), by one `dot` process for all of them (one
    per file made a run with many graphs wait seconds at exit); a .dot whose SVG is up to date is
    left alone (write_run may run more than once)."""
    dot = shutil.which("dot")
    if not dot:
        return
    stale = []
    for key in sorted(os.listdir(root)):
        folder = os.path.join(root, key)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".dot") or len(stale) >= limit:
                continue
            src, svg = os.path.join(folder, name), os.path.join(folder, name[:-4] + ".svg")
            if not os.path.exists(svg) or os.path.getmtime(svg) < os.path.getmtime(src):
                stale.append(src)
    if not stale:
        return
    finished = False
    try:  # -O: each input's SVG is written as INPUT.svg, renamed to the dump's NAME.svg after
        subprocess.run([dot, "-Tsvg", "-O"] + stale, timeout=300, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finished = True
    except (OSError, subprocess.SubprocessError) as e:
        _say("graphviz failed: %s" % e)
    for src in stale:  # (a run cut short may have left one half written: none of them is kept)
        if os.path.exists(src + ".svg"):
            if finished:
                os.replace(src + ".svg", src[:-4] + ".svg")
            else:
                os.remove(src + ".svg")


def write_run():
    """Writes DIR/run.json now (also done at exit); returns its path, or None without a dump dir."""
    root = _state["dir"]
    if not root:
        return None
    _render_svgs(root)
    path = os.path.join(root, "run.json")
    _write(path, json.dumps(run_summary(), indent=1, default=str))
    return path


def _captured_list(path):
    # A resume function or loop body has its function's name and module (and PIJIT_ONLY follows the
    # function): a function whose graphs are all in them is listed too.
    names = sorted({"%s:%s" % (r["module"], getattr(r["code"], "co_qualname", r["function"]))
                    for r in _C.capture_summary() if r["graphs"]})
    try:
        with open(path, "a") as f:
            f.writelines(n + "\n" for n in names)
    except OSError as e:
        _say("cannot write %s: %s" % (path, e))


def guard_perf_text():
    """PIJIT_LOGS=guard_perf's report: per guard, checks run, time and misses, costliest first."""
    rows = _C.guard_profile()
    if not rows:
        return "[pijit guard_perf] no guard was checked"
    total_ns = sum(r[4] for r in rows)
    lines = ["[pijit guard_perf] %d guard(s), %.3f ms checking in all" % (len(rows), total_ns / 1e6)]
    for code, entry, text, runs, ns, misses in sorted(rows, key=lambda r: -r[4])[:30]:
        lines.append("[pijit guard_perf]   %s:%d entry %d: %s: %d check(s), %.1f ns each, %d hit(s), %d miss(es)"
                     % (code.co_name, code.co_firstlineno, entry, text, runs, ns / max(runs, 1), runs - misses, misses))
    return "\n".join(lines)


def enable_guard_perf():
    """Prints guard_perf_text() at exit (once); the runtime times guards while the log names guard_perf."""
    if not _state.get("guard_perf"):
        _state["guard_perf"] = True
        atexit.register(lambda: print(guard_perf_text(), file=sys.stderr))


def _at_exit():
    # each writer on its own: one failing never costs the others
    writers = [write_run]
    if _state["trace"]:
        writers.insert(0, lambda: _C.trace_write(_state["trace"]))
    if os.environ.get("PIJIT_CAPTURED_LIST"):
        writers.append(lambda: _captured_list(os.environ["PIJIT_CAPTURED_LIST"]))
    for w in writers:
        try:
            w()
        except Exception as e:  # noqa: BLE001 - a dump never changes the program's exit
            _say("%s: %s" % (type(e).__name__, e))


def _setup():
    root = os.environ.get("PIJIT_DUMP_DIR")
    trace = os.environ.get("PIJIT_TRACE")
    if root:
        root = os.path.abspath(root)
        try:
            os.makedirs(root, exist_ok=True)
            _state["dir"] = root
            _C.set_dump_hook(_on_entry)
        except OSError as e:
            _say("cannot create %s: %s" % (root, e))
        if not trace:
            trace = os.path.join(root, "trace.json")
    if trace:
        _state["trace"] = os.path.abspath(trace)
        _C.trace_start()
    if root or trace or os.environ.get("PIJIT_CAPTURED_LIST"):
        _C.set_graph_timing(True)
        # registered after jit.py's release of the code states: atexit runs it first
        atexit.register(_at_exit)
    logs = [c.strip() for c in os.environ.get("PIJIT_LOGS", "").split(",")]
    if "guard_perf" in logs or "all" in logs:
        enable_guard_perf()


_setup()
