"""pijit.explain, pijit.cache_entries and pijit.reset: what capture did, in the user's terms.

    report = pijit.explain(fn)(*args)      # runs the call under capture; returns the report
    report = wrapper(*other_args)          # the same wrapper: the report grows (recompiles show)
    print(report)                          # per captured code object: graphs, breaks, guards,
                                           # recompiles, time capturing / compiling / running
    report.graph_count, report.break_count, report.breaks, report.guards, report.recompiles,
    report.ops_per_graph, report.functions, report.outputs

A break is (id, name, message, file, line, function), e.g. ("B002", "DataDependent", "reads the data
of a tensor (...): float() reads the data of a tensor being captured", "f.py", 12, "f"), read from the
record capture made (jit_stats(f)["break_records"]), never parsed out of its text.
`python -m pijit explain script.py args...` prints the report of a whole script.
"""
import time

from pijit import _C

_START = time.time()


class Break(object):
    """One graph break or refusal: its reason id and name (capture/break_reasons.def), the message
    (what happened, then ": " and the specifics), the user's file, line and function, the inline
    chain (frames: (function, file, line) each; chain: the same as text), and its kind: "break" (a graph ran, the interpreter runs the rest), "refusal" (the frame
    runs eagerly) or "runtime" (refused at run time, e.g. the recompile limit: file, line and
    function are None). Built from a record of jit_stats(f)["break_records"]."""
    __slots__ = ("id", "name", "message", "detail", "file", "line", "function", "text", "chain", "frames", "kind")

    def __init__(self, record):
        self.id, self.name, self.kind = record["id"] or None, record["name"] or None, record["kind"]
        self.message, self.detail, self.text = record["message"], record["detail"], record["text"]
        self.file, self.line, self.function = record["file"], record["line"], record["function"]
        # inside inlined code: the calls that led there, outermost first, as (function, file, line)
        # and as shown ("f (a.py:10)", ...)
        self.frames = [tuple(f) for f in record["frames"]]
        self.chain = ["%s (%s:%d)" % f for f in self.frames]

    def __repr__(self):
        return "Break(%r)" % self.text

    def __str__(self):
        return self.text


class FunctionReport(object):
    """What capture did for one code object (a function, a resume function, a loop body)."""

    def __init__(self, row, earlier_recompiles=0):
        self.code = row["code"]
        self.function, self.file, self.line = row["function"], row["file"], row["line"]
        self.kind = "resume function" if row["resume"] else "loop body" if row["loop_body"] else "function"
        self.compiles, self.graphs, self.recompile_count = row["compiles"], row["graphs"], row["recompiles"]
        self.breaks = [Break(b) for b in row["break_records"]]
        # (the recompiles before the report's first call are another story: code the calls merely
        # ran, an audit hook, may have recompiled long before)
        self.recompiles = list(row["recompile_reasons"])[earlier_recompiles:]
        self.guards = list(row["guards"])  # per cache entry, readable
        self.dynamic = list(row["dynamic"])  # per cache entry: symbolic sizes, lifted numbers, and why
        self.ops_per_graph = list(row["ops_per_graph"])
        self.cache_hits, self.graph_runs = row["cache_hits"], row["graph_runs"]
        self.capture_ms, self.compile_ms, self.run_ms = row["capture_ms"], row["compile_ms"], row["run_ms"]
        self.skip_reason = row["skip_reason"]

    def __str__(self):
        head = "%s %s (%s:%d): %d graph(s) %s, %d break(s), %d recompile(s), %d cache hit(s)" % (
            self.kind, self.function, self.file, self.line, self.graphs,
            "with %s ops" % "/".join(map(str, self.ops_per_graph)) if self.ops_per_graph else "",
            len(self.breaks), len(self.recompiles), self.cache_hits)
        lines = [head, "  time: capture %.2f ms, compile %.2f ms, graphs %.2f ms over %d run(s)"
                 % (self.capture_ms, self.compile_ms, self.run_ms, self.graph_runs)]
        if self.skip_reason:
            lines.append("  runs eagerly: %s" % self.skip_reason)
        for b in self.breaks:
            lines.append("  break %s" % b)
            if b.chain:
                lines.append("    inlined: %s" % " -> ".join(b.chain))
        for r in self.recompiles:
            lines.append("  recompiled: %s" % r)
        for i, gs in enumerate(self.guards):
            lines.append("  guards of entry %d:" % i)
            lines.extend("    %s" % g for g in gs)
            if i < len(self.dynamic) and self.dynamic[i]:
                lines.append("  dynamic in entry %d:" % i)
                lines.extend("    %s" % n for n in self.dynamic[i])
        return "\n".join(lines)


class ExplainReport(object):
    """The report pijit.explain returns: one FunctionReport per code object the calls captured."""

    def __init__(self):
        self.functions = []
        self.outputs = []  # what each call returned

    def _refresh(self, codes, earlier=None):
        """earlier: id(code) -> its recompiles before the report's calls first touched it."""
        rows = {id(r["code"]): r for r in _C.capture_summary(codes)}
        earlier = earlier or {}
        self.functions = [FunctionReport(rows[id(c)], earlier.get(id(c), 0)) for c in codes if id(c) in rows]

    graph_count = property(lambda self: sum(f.graphs for f in self.functions))
    break_count = property(lambda self: sum(len(f.breaks) for f in self.functions))
    breaks = property(lambda self: [b for f in self.functions for b in f.breaks])
    recompiles = property(lambda self: [r for f in self.functions for r in f.recompiles])
    guards = property(lambda self: [g for f in self.functions for gs in f.guards for g in gs])
    ops_per_graph = property(lambda self: [n for f in self.functions for n in f.ops_per_graph])

    def __str__(self):
        head = "pijit.explain: %d graph(s), %d break(s), %d recompile(s) in %d code object(s)" % (
            self.graph_count, self.break_count, len(self.recompiles), len(self.functions))
        return "\n".join([head] + [str(f) for f in self.functions])

    __repr__ = __str__


def _snapshot():
    # (counters only: a call's cost must not grow with every code object the process captured)
    return {id(row[0]): row for row in _C.capture_counters()}


def explain(fn):
    """pijit.explain(fn): a wrapper whose calls run fn under capture (fn plain or already jitted)
    and return the ExplainReport of every call made through it so far."""
    from pijit.jit import jit
    _C.set_graph_timing(True)  # from now on every launch is timed (a few % of a tiny graph's)
    target = fn if isinstance(fn, _C.JitFunction) else jit(fn)
    report = ExplainReport()
    touched, earlier = [], {}

    def run(*args, **kwargs):
        before = _snapshot()
        report.outputs.append(target(*args, **kwargs))
        for key, (code, *counts) in _snapshot().items():
            was = before.get(key, (None, None, None, None, 0))
            if tuple(was[1:]) != tuple(counts) and all(c is not code for c in touched):
                touched.append(code)
                earlier[key] = was[4]
        report._refresh(touched, earlier)
        return report
    run.report = report
    return run


def cache_entries(fn):
    """The cache entries of fn's code (a function, method, Cell or jitted one): a list of dicts with
    the entry's guards (readable), hit count, ops of its graph (0: it runs eagerly, see reason),
    its graph break, its side effects, and what it cost to make: capture_ms (simulating the
    frame) and compile_ms (the graph's passes, kernels and plan, and the rewritten bytecode)."""
    from pijit.jit import jit_stats
    return [{"guards": e["guards"], "hits": e["hits"], "ops": e["ops"], "reason": e["reason"],
             "graph_break": e["graph_break"], "effects": e["effects"], "capture_ms": e["capture_ms"],
             "compile_ms": e["compile_ms"]} for e in jit_stats(fn)["entries"]]


def reset(fn=None):
    """pijit.reset(): forget every capture decision (caches, counters, reasons); pijit.reset(fn):
    only fn's code and the resume functions its breaks made. The next call captures again (this
    process no longer reads entries back from the persistent compile cache; it still writes them)."""
    _C.reset_capture(fn)


LOG_CATEGORIES = ("breaks", "guards", "recompiles", "recompiles_verbose", "dynamic", "bytecode", "graph", "passes",
                  "codegen", "side_effects", "perf", "guard_perf", "summary", "all")
_perf_registered = []


def set_logs(spec):
    """pijit.set_logs("breaks,guards"): PIJIT_LOGS at run time. Categories: breaks, guards (each
    guard set as it is installed), recompiles (the first failing guard), recompiles_verbose (every
    failing guard of every entry), bytecode (rewritten code, dis-style), graph (also "graphs": the
    captured IR, then the IR after each pass that changed it), passes (the IR after each pass alone), codegen (the fused kernels' machine code),
    side_effects (what each region replays), perf (at exit: time capturing, compiling and running
    graphs), guard_perf (at exit: per guard, checks, time, hits and misses), summary, all.
    "" turns logging off. Returns the categories now on."""
    if not isinstance(spec, str):
        raise TypeError("set_logs: expected a comma-separated str such as 'breaks,recompiles', got %s"
                        % type(spec).__name__)
    cats = [c.strip() for c in spec.split(",") if c.strip()]
    cats = ["graph" if c == "graphs" else c for c in cats]
    bad = [c for c in cats if c not in LOG_CATEGORIES]
    if bad:
        raise ValueError("set_logs: unknown log categor%s %s (known: %s)"
                         % ("y" if len(bad) == 1 else "ies", ", ".join(map(repr, bad)), ", ".join(LOG_CATEGORIES)))
    _C.set_jit_config(log=",".join(cats))
    if "perf" in cats or "all" in cats:
        enable_perf()
    if "guard_perf" in cats or "all" in cats:
        from pijit import dump
        dump.enable_guard_perf()
    return cats


def perf_text():
    """The perf log's text: time per phase over every code object, and the graphs' share."""
    rows = _C.capture_summary()
    cap = sum(r["capture_ms"] for r in rows)
    comp = sum(r["compile_ms"] for r in rows)
    run = sum(r["run_ms"] for r in rows)
    runs = sum(r["graph_runs"] for r in rows)
    wall = (time.time() - _START) * 1e3
    lines = ["[pijit perf] capture %.2f ms, compile %.2f ms, graphs %.2f ms over %d launch(es) in %d code object(s)"
             % (cap, comp, run, runs, len(rows)),
             "[pijit perf] graphs took %.1f%% of the %.1f ms since pijit was imported (the rest: the interpreter, "
             "capture and compile)" % (100.0 * run / wall if wall > 0 else 0.0, wall)]
    for r in sorted(rows, key=lambda r: -r["run_ms"])[:5]:
        if r["graph_runs"]:
            lines.append("[pijit perf]   %s (%s:%d): graphs %.2f ms over %d launch(es), capture %.2f ms, compile %.2f ms"
                         % (r["function"], r["file"], r["line"], r["run_ms"], r["graph_runs"], r["capture_ms"],
                            r["compile_ms"]))
    return "\n".join(lines)


def enable_perf():
    """Times every graph launch from now on and prints perf_text() at exit (once)."""
    import atexit
    import sys
    _C.set_graph_timing(True)
    if not _perf_registered:
        _perf_registered.append(True)
        atexit.register(lambda: print(perf_text(), file=sys.stderr))


__all__ = ["explain", "cache_entries", "reset", "set_logs", "ExplainReport", "FunctionReport", "Break"]
