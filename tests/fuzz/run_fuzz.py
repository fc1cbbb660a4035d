"""Differential fuzzer: random programs (tests/fuzz/gen.py) run plainly and under pj.jit.

    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --seed 1 --count 200
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --seed 1 --count 2000 --quiet   # kinds only
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --program 100017 --minimize
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --file prog.py      # a program from a file
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --program 100017 --show
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --count 2000 --disable descriptor
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --count 2000 --objects 1   # user objects only
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --count 500 --exceptions 1   # also --generators,
                                                      # --contexts, --dunders (gen_features.py)
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --count 500 --self-check  # plain vs plain
    PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --count 500 --cache  # and again in a second
                                                      # process, from the compile cache
    PIJIT_STRESS=1 PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --seed 1 --count 50
    PIJIT_STRESS=3 PYTHONPATH=pyscripts python tests/fuzz/run_fuzz.py --seed 1 --count 50   # level 3

Each program's source is exec'd into two fresh module dicts; its drive(call) runs once calling
TARGET and once calling pj.jit(TARGET), with mutations between the calls (shapes, dtypes,
globals, attributes, closure cells, list/dict arguments, patched methods, rebound objects, the
caller writing into returned values). After every call the harness snapshots, as exact data:
the result or the exception (type, message, args, attributes, and the type and args of its
__cause__ and __context__), what the call printed, the arguments (after
the call), every global of the module (closure cells, defaults, class and instance attributes
included) and object identities (a value seen twice in one snapshot is a reference to the
first). Tensors compare by type, dtype, shape and the bit pattern of every element; floats by
repr (so -0.0 and nan count).

Programs run in worker subprocesses (--jobs of them; worker k runs programs k, k + jobs, ... in
order, so a run is reproducible), so a crash (segfault, abort, hang) is reported with its
program instead of ending the run. Under PIJIT_STRESS=1 every frame is captured: a reference
worker without stress runs the plain side, a stressed worker runs both the plain and the jitted
side, and both must equal the reference.

Each differing program is printed with the first difference and its kind (where: result,
exception, argument, a global; what: 'Tensor values', 'int vs float', 'ref vs list' = an identity
lost, ...); --minimize reduces the first program of each kind by removing and unwrapping
statements while the same kind of difference remains. Ends with "N programs, K differ, C
crashed"; exits 1 when K or C is not 0.
"""
import argparse
import contextlib
import io
import json
import os
import re
import select
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PYSCRIPTS = os.path.join(ROOT, "pyscripts")
sys.path.insert(0, HERE)

import gen  # noqa: E402

PROGRAM_MODULE = "fuzzprog"
PROGRAM_FILE = "<fuzz program>"
# Compare every one of the program's frames in the traceback of an exception a call raises (on
# by default since found/traceback_gains_a_frame_after_a_graph_break.py was fixed; --no-tracebacks
# compares only the innermost frame of each run of frames of one function).
TRACEBACKS = True
PROGRAMS_PER_SEED = 100000       # program ids of --seed S are S * 100000 + i
DEFAULT_TIMEOUT = 30.0           # seconds one program may take (both sides) before it is a hang
WORKER_MEMORY = 4 << 30         # address space of a worker process (RLIMIT_AS)


def program_id(seed, i):
    return seed * PROGRAMS_PER_SEED + i


# ================================================================================================
# Snapshots: exact, JSON-able images of values (run inside the worker)
# ================================================================================================
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


class Identities(object):
    """Serial numbers of the program's objects across the snapshots of one side: the first
    object seen gets 0, the next new one 1, ... An object is known by a weak reference, so a
    dead object's recycled address is a new object (and no object lives longer for being seen);
    objects that cannot be weakly referenced (__slots__ without __weakref__) get none."""

    def __init__(self):
        import weakref
        self.weakref = weakref
        self.refs = {}          # id -> (weak reference, serial)
        self.next = 0

    def serial(self, v):
        known = self.refs.get(id(v))
        if known is not None and known[0]() is v:
            return known[1]
        try:
            ref = self.weakref.ref(v)
        except TypeError:
            return None
        self.refs[id(v)] = (ref, self.next)
        self.next += 1
        return self.next - 1


def program_attrs(v):
    """(name, value) of an instance of a program class: its __dict__, then its slots (a slot
    with no value shows as '<unset>'), read without running the class's own attribute code."""
    out = []
    d = getattr(type(v), "__dictoffset__", 0) and object.__getattribute__(v, "__dict__")
    if d:
        out.extend(d.items())
    for cls in type(v).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in ([slots] if isinstance(slots, str) else slots):
            if name in ("__dict__", "__weakref__"):
                continue
            descr = cls.__dict__.get(name)
            try:
                out.append((name, descr.__get__(v, type(v))))
            except AttributeError:
                out.append((name, _UNSET))
    return out


class _Unset(object):
    def __repr__(self):
        return "<unset>"


_UNSET = _Unset()


class Shower(object):
    """show(v) -> nested lists of strings; one instance per snapshot, so identities within a
    snapshot (returned list is the argument list, the same tensor twice) show as ["ref", n].
    Objects of the program's classes show their class, attributes (own dict and slots) and,
    with `ids` (an Identities shared by the snapshots of one side), their serial number: an
    object returned or stored by two calls is one object or two, as in plain Python."""

    def __init__(self, pj, ids=None):
        self.pj = pj
        self.ids = ids
        self.memo = {}
        self.keep = []

    def show(self, v, depth=0):
        if depth > 40:
            return ["<deep>"]
        if v is None or isinstance(v, (bool, int, str, bytes)):
            return [type(v).__name__, repr(v)]
        if isinstance(v, float):
            return [type(v).__name__, repr(v)]
        if isinstance(v, complex):
            return ["complex", repr(v)]
        key = id(v)
        if key in self.memo:
            return ["ref", self.memo[key]]
        self.memo[key] = len(self.memo)
        self.keep.append(v)
        d = depth + 1
        pj = self.pj
        if isinstance(v, pj.Tensor):
            out = [type(v).__name__, str(v.dtype), list(v.shape), tensor_bits(v)]
            extra = getattr(v, "__dict__", None)
            if extra:
                out.append([[k, self.show(x, d)] for k, x in extra.items()])
            return out
        if isinstance(v, (list, tuple)):
            return [type(v).__name__, [self.show(x, d) for x in v]] + self.extra(v, d)
        if isinstance(v, dict):
            return [type(v).__name__, [[self.show(k, d), self.show(x, d)] for k, x in v.items()]] \
                + self.extra(v, d)
        if isinstance(v, (set, frozenset)):
            items = [Shower(pj, self.ids).show(x) for x in v]
            return [type(v).__name__, sorted(items, key=json.dumps)]
        if isinstance(v, BaseException):
            out = ["exception", type(v).__name__, safe_str(v), self.show(v.args, d)]
            if type(v).__module__ == PROGRAM_MODULE:
                out.append([[k, self.show(x, d)] for k, x in program_attrs(v)])
            return out
        if isinstance(v, type):
            if v.__module__ != PROGRAM_MODULE:
                return ["type", "%s.%s" % (v.__module__, v.__qualname__)]
            attrs = [[k, self.show(x, d)] for k, x in sorted(v.__dict__.items())
                     if not (k.startswith("__") and k.endswith("__"))]
            return ["class", v.__qualname__, attrs]
        if type(v).__name__ == "module":
            return ["module", v.__name__]
        if isinstance(v, property):
            return ["property", getattr(v.fget, "__qualname__", "?")]
        if callable(v) and hasattr(v, "__code__"):        # Python functions
            if getattr(v, "__module__", None) != PROGRAM_MODULE:
                return ["function", v.__qualname__]
            cells = []
            for c in v.__closure__ or ():
                try:
                    cells.append(self.show(c.cell_contents, d))
                except ValueError:
                    cells.append(["<empty cell>"])
            return ["function", v.__qualname__, self.show(v.__defaults__, d),
                    self.show(v.__kwdefaults__, d), cells,
                    [[k, self.show(x, d)] for k, x in v.__dict__.items()]]
        if hasattr(v, "__self__") and hasattr(v, "__func__"):    # bound methods
            return ["method", self.show(v.__self__, d), self.show(v.__func__, d)]
        if type(v).__module__ == PROGRAM_MODULE or isinstance(v, pj.nn.Cell):
            out = ["object", type(v).__qualname__,
                   [[k, self.show(x, d)] for k, x in program_attrs(v)]]
            if self.ids is not None:
                out.append(self.ids.serial(v))
            return out
        return [type(v).__name__, _ADDR.sub(" at 0x?", safe_repr(v))]

    def extra(self, v, d):
        """The attributes of a list, tuple or dict of a program class (class Rf(dict), MyL)."""
        t = type(v)
        if t is list or t is tuple or t is dict or t.__module__ != PROGRAM_MODULE:
            return []
        attrs = program_attrs(v)
        return [[[k, self.show(x, d)] for k, x in attrs]] if attrs else []


def exception_details(e, tracebacks=False):
    """What an exception raised out of a call carries besides its type and message: its args,
    its own attributes (a program's exception class), and the chain (the type and args of
    __cause__ and __context__, and __suppress_context__), all of which Python code can read;
    and the (function, line) of the program's frames in its traceback: every frame with
    `tracebacks`, else the innermost of each run of frames of one function (see TRACEBACKS)."""
    def link(x):
        return None if x is None else [type(x).__name__, x.args]
    attrs = program_attrs(e) if type(e).__module__ == PROGRAM_MODULE else []
    out = {"args": e.args, "attrs": attrs, "cause": link(e.__cause__),
           "context": link(e.__context__), "suppress_context": e.__suppress_context__}
    import traceback
    frames = [[fr.name, fr.lineno] for fr in traceback.extract_tb(e.__traceback__)
              if fr.filename == PROGRAM_FILE]
    if not tracebacks:
        frames = [fr for i, fr in enumerate(frames)
                  if i + 1 == len(frames) or frames[i + 1][0] != fr[0]]
    if sys.version_info[:2] == (3, 11) and isinstance(e, UnboundLocalError) and frames:
        # CPython 3.11 (3.11.2 here) misplaces this one once a code object is quickened (its 8th
        # call): a LOAD_FAST fused with the STORE_FAST before it (STORE_FAST__LOAD_FAST) raises
        # with the line of the store. Rewritten code reports the read's own line.
        frames[-1] = [frames[-1][0], None]
    out["frames"] = frames
    return out


def tensor_bits(t):
    """Every element exactly: floats as the hex of their IEEE bits in the tensor's width."""
    flat = t.reshape(-1).tolist()
    dt = str(t.dtype)
    if dt in ("Float32", "Float16", "BFloat16"):
        return " ".join("%r=%s" % (x, struct.pack(">f", x).hex()) for x in flat)
    if dt == "Float64":
        return " ".join("%r=%s" % (x, struct.pack(">d", x).hex()) for x in flat)
    return " ".join(repr(x) for x in flat)


def number_addresses(text):
    """Printed text with each object address (' at 0x7f..') replaced by its order of first
    appearance (' at 0x#1'): repr of the program's objects, the same object printed twice."""
    seen = {}

    def number(m):
        return " at 0x#%d" % seen.setdefault(m.group(0), len(seen) + 1)
    return _ADDR.sub(number, text)


def safe_str(e):
    try:
        return _ADDR.sub(" at 0x?", str(e))
    except Exception as x:                  # pragma: no cover - str() itself raising
        return "<str raised %s>" % type(x).__name__


def safe_repr(v):
    try:
        return repr(v)
    except Exception as x:
        return "<repr raised %s>" % type(x).__name__


# ================================================================================================
# One side of one program (inside the worker)
# ================================================================================================
def run_side(source, jit, tracebacks=False, module_file=None):
    """Executes the program in a fresh module dict and returns {trace, stats}. With module_file
    (--cache), the program is a module sys.modules holds, loaded from that file, as a user's
    program is: what the persistent compile cache stores can name its functions and classes."""
    import pijit as pj
    if module_file:
        import types
        mod = types.ModuleType(PROGRAM_MODULE)
        mod.__file__ = module_file
        sys.modules[PROGRAM_MODULE] = mod
        ns = mod.__dict__
    else:
        ns = {"__name__": PROGRAM_MODULE}
    info = pj._C.compile_cache_info()
    loaded_before, codes_before = info["entries_loaded"], info["codes_loaded"]
    trace = []
    stats = None
    try:
        exec(compile(source, module_file or PROGRAM_FILE, "exec"), ns)
    except Exception as e:
        return {"trace": [["module raised", type(e).__name__, safe_str(e)]], "stats": None}
    if "TARGET" not in ns or "drive" not in ns:
        return {"trace": [["module raised", "NameError", "no TARGET or drive"]], "stats": None}
    target = ns["TARGET"]
    fn = pj.jit(target) if jit else target
    ids = Identities()

    def call(*args, **kwargs):
        result = None
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                result = fn(*args, **kwargs)
            out = ["ok", result]
        except Exception as e:
            out = ["raise", type(e).__name__, safe_str(e), exception_details(e, tracebacks)]
        state = [[k, ns[k]] for k in sorted(ns)
                 if not k.startswith("__") and type(ns[k]).__name__ != "module"]
        sh = Shower(pj, ids)
        trace.append({"outcome": sh.show(out), "stdout": number_addresses(printed.getvalue()),
                      "args": sh.show(list(args)), "kwargs": sh.show(kwargs),
                      "state": [[k, sh.show(v)] for k, v in state]})
        return result

    try:
        ns["drive"](call)
    except Exception as e:
        trace.append(["drive raised", type(e).__name__, safe_str(e)])
    if jit:
        try:
            st = pj.jit_stats(fn)
            stats = {k: st.get(k) for k in ("compiles", "graphs", "frames_rewritten",
                                            "frames_default", "recompiles")}
            stats["break_reasons"] = [str(b) for b in st.get("break_reasons", [])]
            info = pj._C.compile_cache_info()
            stats["loaded"] = info["entries_loaded"] - loaded_before
            stats["codes"] = info["codes_loaded"] - codes_before  # (... with their rewritten bytecode)
        except Exception as e:
            stats = {"error": "%s: %s" % (type(e).__name__, e)}
    return {"trace": trace, "stats": stats}


def worker_main():
    """Reads jobs (JSON lines: {id, source, modes}) on stdin; answers one JSON line each on the
    original stdout. Programs' own output goes to stderr."""
    import faulthandler
    import resource
    faulthandler.enable()            # a crash leaves the Python stack in the report
    # A program whose tensors grow without bound (x = outer(x, x) in a loop) meets MemoryError,
    # plain and jitted alike, instead of the machine's OOM killer taking the worker.
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import pijit  # noqa: F401  (import once, before timing anything)
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        t0 = time.time()
        res = {"id": job["id"]}
        module_file = None
        if job.get("cache"):  # the program as a file of its own, for both its jitted runs
            module_file = os.path.join(job["cache"], "prog_%s.py" % job["id"])
            if not os.path.exists(module_file):  # (written once: its stamp is part of what is stored)
                with open(module_file, "w") as f:
                    f.write(job["source"])
        for mode in job["modes"]:
            try:
                res[mode] = run_side(job["source"], jit=mode == "jit",
                                     tracebacks=job.get("tracebacks", False), module_file=module_file)
            except Exception as e:          # the harness itself failed: never a silent pass
                res[mode] = {"trace": [["harness error", type(e).__name__, safe_str(e)],
                                       mode], "stats": None}
        res["time"] = time.time() - t0
        proto.write(json.dumps(res) + "\n")
        proto.flush()


# ================================================================================================
# Workers seen from the driver
# ================================================================================================
class Worker(object):
    """A worker subprocess; run(job) returns its answer, or {"crash": why, "stderr": tail}."""

    def __init__(self, stress, timeout, cache=None, hash_seed="0"):
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = PYSCRIPTS + os.pathsep + self.env.get("PYTHONPATH", "")
        self.env["PYTHONHASHSEED"] = hash_seed
        # the persistent compile cache: --cache's folder, else off (a run must not read another's)
        self.env["PIJIT_CACHE_DIR"] = cache or ""
        level = self.env.pop("PIJIT_STRESS", "")
        if stress:   # the caller's level (2 and 3 are pijit's stronger stress modes), else 1
            self.env["PIJIT_STRESS"] = level if level in ("2", "3") else "1"
        self.timeout = timeout
        self.p = None
        self.buf = b""

    def start(self):
        import tempfile
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([sys.executable, "-W", "ignore", os.path.abspath(__file__),
                                   "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=self.env, cwd=ROOT)
        self.buf = b""

    def stderr_tail(self):
        try:
            self.err.seek(0)
            return self.err.read().decode("utf-8", "replace")[-3000:]
        except Exception:
            return ""

    def run(self, job):
        if self.p is None or self.p.poll() is not None:
            self.start()
        try:
            self.p.stdin.write((json.dumps(job) + "\n").encode())
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            return self.dead("worker pipe broke")
        deadline = time.time() + self.timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                self.p.kill()
                self.p.wait()
                out = {"crash": "hang, no answer in %.0f s" % self.timeout,
                       "stderr": self.stderr_tail()}
                self.reap()
                return out
            r, _, _ = select.select([fd], [], [], min(left, 1.0))
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self.dead("worker exited")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line.decode())

    def dead(self, what):
        rc = self.p.wait()
        sig = ""
        if rc < 0:
            import signal
            try:
                sig = signal.Signals(-rc).name
            except ValueError:
                pass
        out = {"crash": "%s, %s (rc %d)" % (sig or "rc=%d" % rc, what, rc),
               "stderr": self.stderr_tail()}
        self.reap()
        return out

    def reap(self):
        """Ends the process (it has exited or is killed) and closes its pipes and files."""
        if self.p is None:
            return
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.err):
            try:
                f.close()
            except OSError:
                pass
        self.p = None

    close = reap


# ================================================================================================
# Comparing traces
# ================================================================================================
def first_difference(a, b, path="", nodes=()):
    """(path, a_part, b_part, nodes) of the first place two snapshots differ, or None; nodes are
    the shown values ([tag, ...] lists) on the way down, innermost last, with the index of the
    field that differs in each."""
    if a == b:
        return None
    is_node = isinstance(a, list) and a and isinstance(a[0], str)
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                here = nodes + ((a, b, i),) if is_node else nodes
                return first_difference(x, y, "%s[%d]" % (path, i), here)
        here = nodes + ((a, b, None),) if is_node else nodes
        return (path + " (length %d vs %d)" % (len(a), len(b)), a, b, here)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b or a[k] != b[k]:
                return first_difference(a[k], b.get(k), "%s.%s" % (path, k), nodes)
    return (path, a, b, nodes)


_FIELDS = {"Tensor": {1: "dtype", 2: "shape", 3: "values", 4: "attributes"},
           "Parameter": {1: "dtype", 2: "shape", 3: "values", 4: "attributes"},
           "function": {2: "__defaults__", 3: "__kwdefaults__", 4: "closure cell",
                        5: "attributes"},
           "object": {2: "attribute", 3: "identity across calls"},
           "class": {2: "class attribute"}}


def difference_kind(d):
    """What differs, in words: 'Tensor values', 'float vs int', 'ref vs list' (an identity
    lost), 'list length', 'closure cell: int vs float', ..."""
    path, a, b, nodes = d
    if not nodes:
        return "%s vs %s" % (type(a).__name__, type(b).__name__)
    words = []
    for na, nb, i in nodes[:-1]:
        field = _FIELDS.get(na[0], {}).get(i)
        if field and na[0] in ("function", "class"):
            words.append(field)
    na, nb, i = nodes[-1]
    if na[0] != nb[0]:
        words.append("%s vs %s" % (na[0], nb[0]))
    elif i is None or (na[0] in ("list", "tuple", "dict") and len(na[1]) != len(nb[1])):
        words.append("%s length" % na[0])
    elif na[0] in _FIELDS and i in _FIELDS[na[0]]:
        words.append("%s %s" % (na[0], _FIELDS[na[0]][i]))
    elif na[0] in ("float", "int", "bool", "str", "NoneType", "complex"):
        words.append("%s value" % na[0])
    else:
        words.append("%s contents" % na[0])
    return ": ".join(words)


def describe_path(trace_a, trace_b, path):
    """'call 2: result' etc. for a path into a trace."""
    m = re.match(r"\[(\d+)\](.*)", path)
    if not m:
        return path
    k, rest = int(m.group(1)), m.group(2)
    entry = trace_a[k] if k < len(trace_a) else trace_b[k] if k < len(trace_b) else None
    where = rest
    m2 = re.match(r"\.state\[(\d+)\](.*)", rest)
    if m2 and isinstance(entry, dict):
        i = int(m2.group(1))
        name = entry["state"][i][0] if i < len(entry["state"]) else "?"
        where = "global %s%s" % (name, re.sub(r"^\[1\]", "", m2.group(2)))
    elif rest.startswith(".outcome"):
        where = "result/exception" + rest[len(".outcome"):]
    elif rest.startswith(".args"):
        where = "argument" + rest[len(".args"):]
    return "call %d: %s" % (k + 1, where)


def signature(trace_a, trace_b):
    """A coarse kind of the first difference, for grouping and for --minimize: where it is
    (result, exception, an argument, a global, the number of calls) and what differs."""
    d = first_difference(trace_a, trace_b)
    if d is None:
        return None
    path = d[0]
    m = re.match(r"\[(\d+)\]\.(\w+)", path)
    if not m:
        return "calls: %s" % difference_kind(d)
    k, section = int(m.group(1)), m.group(2)
    if section == "state":
        i = int(re.match(r"\[\d+\]\.state\[(\d+)\]", path).group(1))
        section = "global " + trace_a[k]["state"][i][0]
    elif section == "args":
        section = "argument"
    if section == "outcome":
        ka, kb = outcome_kind(trace_a[k]["outcome"]), outcome_kind(trace_b[k]["outcome"])
        if ka != kb:
            return "outcome: %s vs %s" % (ka, kb)
        if ka != "ok":
            # [k].outcome[1][2] is the message, [k].outcome[1][3] the args, attributes, chain
            m2 = re.match(r"\[\d+\]\.outcome\[1\]\[(\d+)\]", path)
            what = "exception details" if m2 and m2.group(1) == "3" else "exception message"
            return "%s (%s)" % (what, ka[len("raise "):])
        return "result: %s" % difference_kind(d)
    return "%s: %s" % (section, difference_kind(d))


def outcome_kind(o):
    """'ok' or 'raise TypeName' from a shown outcome list."""
    try:
        items = o[1]
        if items[0][1] == "'raise'":
            return "raise " + items[1][1].strip("'")
        return "ok"
    except (IndexError, TypeError):
        return "?"


def short(v, n=400):
    s = json.dumps(v)
    return s if len(s) <= n else s[:n] + "..."


class Verdict(object):
    """The comparison of one program: status is 'same', 'differ' or 'crash'."""

    def __init__(self, pid, source):
        self.pid = pid
        self.source = source
        self.status = "same"
        self.detail = ""
        self.kind = None
        self.stats = None
        self.time = 0.0
        self.invalid = False      # the program itself does not run (a generator bug)
        self.out_of_memory = False  # it ran out of memory plainly: not compared
        self.loaded = None        # --cache: entries its second jitted run took from the compile cache
        self.codes = None         # ... and of them, those whose rewritten bytecode came from it too


def compare(pid, source, answers, stress):
    """answers: {'main': worker answer} or, under stress, {'ref': ..., 'main': ...}."""
    v = Verdict(pid, source)
    for name, ans in answers.items():
        if "crash" in ans:
            v.status = "crash"
            v.kind = "crash: %s%s" % (ans["crash"].split(",")[0],
                                      " (reference)" if name == "ref" else "")
            v.detail = "%s%s\n--- stderr (tail) ---\n%s" % (
                "reference worker (no stress): " if name == "ref" else "", ans["crash"],
                ans.get("stderr", ""))
            return v
    main = answers["main"]
    v.time = main.get("time", 0.0)
    first = (answers.get("ref") or main)["plain"]["trace"][:1]
    v.invalid = bool(first) and isinstance(first[0], list) and first[0][0] == "module raised"
    if "jit" in main:
        v.stats = main["jit"]["stats"]
    if "again" in answers:
        v.loaded = (answers["again"]["jit"]["stats"] or {}).get("loaded", 0)
        v.codes = (answers["again"]["jit"]["stats"] or {}).get("codes", 0)
    # Where a plain run met MemoryError, how far each run got depends on what else held memory
    # (a graph's buffers, the stress mode's caches): nothing to compare.
    if "MemoryError" in json.dumps((answers.get("ref") or main)["plain"]["trace"]):
        v.out_of_memory = True
        return v
    if stress:
        ref = answers["ref"]["plain"]["trace"]
        pairs = [("plain (no stress)", ref, "plain under stress", main["plain"]["trace"]),
                 ("plain (no stress)", ref, "jitted under stress", main["jit"]["trace"])]
    elif "plain2" in main:
        pairs = [("plain", main["plain"]["trace"], "plain again", main["plain2"]["trace"])]
    elif "again" in answers:
        again = answers["again"]
        pairs = [("plain", main["plain"]["trace"], "jitted", main["jit"]["trace"]),
                 ("plain (another process)", again["plain"]["trace"], "jitted from the compile cache",
                  again["jit"]["trace"])]
    else:
        pairs = [("plain", main["plain"]["trace"], "jitted", main["jit"]["trace"])]
    for na, ta, nb, tb in pairs:
        d = first_difference(ta, tb)
        if d is None:
            continue
        path, a, b = d[:3]
        v.status = "differ"
        v.kind = signature(ta, tb) + ("" if not stress else " [%s]" % nb)
        v.detail = "first difference at %s (%s):\n  %-20s %s\n  %-20s %s" % (
            describe_path(ta, tb, path), path, na + ":", short(a), nb + ":", short(b))
        return v
    return v


# ================================================================================================
# Running many programs
# ================================================================================================
def run_programs(programs, jobs=2, stress=None, timeout=DEFAULT_TIMEOUT, self_check=False,
                 progress=None, cache=None):
    """programs: list of (id, source). Returns a list of Verdicts in the same order. cache: a
    private folder; each program then also runs in a second worker process (another hash seed),
    plainly and jitted from what the first worker left in the persistent compile cache."""
    if stress is None:
        stress = os.environ.get("PIJIT_STRESS", "") not in ("", "0")
    if self_check or cache:
        stress = False  # plain against plain in one worker: stress has nothing to compare
    modes = ["plain", "plain2"] if self_check else ["plain", "jit"]
    verdicts = [None] * len(programs)
    lock = threading.Lock()
    nthreads = max(1, min(jobs, len(programs)))

    def loop(k):
        # Worker k runs programs k, k + jobs, ... in order: a run is reproducible also when a
        # difference depends on what ran before it in the same process.
        main = Worker(stress, timeout, cache)
        ref = Worker(False, timeout) if stress else None
        # --cache: a second process, with another hash seed, runs each program plainly and jitted
        # from what the first left in the cache (as a user's next run does)
        again = Worker(False, timeout, cache, hash_seed=str(1000 + k)) if cache else None
        try:
            for i in range(k, len(programs), nthreads):
                pid, source = programs[i]
                answers = {"main": main.run({"id": pid, "source": source, "modes": modes,
                                             "tracebacks": TRACEBACKS, "cache": cache})}
                if ref is not None:
                    answers["ref"] = ref.run({"id": pid, "source": source, "modes": ["plain"],
                                              "tracebacks": TRACEBACKS})
                if again is not None:
                    answers["again"] = again.run({"id": pid, "source": source, "modes": ["plain", "jit"],
                                                  "tracebacks": TRACEBACKS, "cache": cache})
                verdicts[i] = compare(pid, source, answers, stress)
                if progress:
                    with lock:
                        progress(verdicts[i])
        finally:
            main.close()
            for w in (ref, again):
                if w is not None:
                    w.close()

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return verdicts


def summary_line(verdicts):
    n = len(verdicts)
    k = sum(v.status == "differ" for v in verdicts)
    c = sum(v.status == "crash" for v in verdicts)
    bad = sum(v.invalid for v in verdicts)
    oom = sum(v.out_of_memory for v in verdicts)
    return "%d programs, %d differ, %d crashed%s%s" % (
        n, k, c, " (%d programs did not even run plainly: a generator bug)" % bad if bad else "",
        " (%d ran out of memory plainly: not compared)" % oom if oom else "")


def capture_line(verdicts):
    """How much capture the programs exercised (a fuzzer whose programs all fall back finds
    nothing): programs whose jitted frames ran rewritten code, graphs compiled."""
    st = [v.stats for v in verdicts if v.stats and "error" not in v.stats]
    rewritten = sum(1 for s in st if (s.get("frames_rewritten") or 0) > 0)
    graphs = sum(s.get("graphs") or 0 for s in st)
    breaks = {}
    for s in st:
        for b in s.get("break_reasons") or []:
            key = re.sub(r"\d+", "#", b.split(":")[0])[:60]
            breaks[key] = breaks.get(key, 0) + 1
    top = sorted(breaks.items(), key=lambda kv: -kv[1])[:5]
    line = "capture: %d of %d programs ran rewritten frames, %d graphs; top breaks: %s" % (
        rewritten, len(st), graphs, "; ".join("%s (%d)" % kv for kv in top) or "none")
    loaded = [v.loaded for v in verdicts if v.loaded is not None]
    if loaded:
        line += "\ncompile cache: %d of %d programs ran entries loaded from it (%d entries, %d with their bytecode)" % (
            sum(1 for n in loaded if n > 0), len(loaded), sum(loaded), sum(v.codes or 0 for v in verdicts))
    return line


def report(v, out=sys.stdout):
    out.write("=" * 100 + "\n")
    out.write("program %s %s: %s\n" % (v.pid, "CRASHED" if v.status == "crash" else "DIFFERS",
                                       v.kind))
    out.write("-" * 100 + "\n")
    out.write(v.source)
    out.write("-" * 100 + "\n")
    out.write(v.detail + "\n")


# ================================================================================================
# Minimising a program (line-based reduction, keeping the same kind of difference)
# ================================================================================================
def _units(lines):
    """(start, end) of every statement: a line and the more-indented lines after it."""
    out = []
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith(("else", "elif", "except", "finally", "import ", "from ")):
            continue
        ind = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > ind):
            j += 1
        out.append((i, j))
    return out


def _compiles(lines):
    try:
        compile("\n".join(lines) + "\n", "<candidate>", "exec")
        return True
    except SyntaxError:
        return False


def _candidates(lines):
    """Smaller variants: remove a statement (or replace it by pass), or unwrap a block header
    (its body dedented in its place); largest first."""
    units = _units(lines)
    for start, end in sorted(units, key=lambda u: u[0] - u[1]):
        yield lines[:start] + lines[end:]
        ind = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
        yield lines[:start] + [ind + "pass"] + lines[end:]
    for start, end in units:
        head = lines[start].strip()
        if head.endswith(":") and end > start + 1 and not head.startswith(("def ", "class ")):
            body = lines[start + 1:end]
            ind = len(lines[start]) - len(lines[start].lstrip())
            sub = len(body[0]) - len(body[0].lstrip())
            k = end
            while k < len(lines) and lines[k].strip().startswith(("else", "elif", "except",
                                                                  "finally")) and \
                    len(lines[k]) - len(lines[k].lstrip()) == ind:
                # drop the block's other clauses with it
                e2 = k + 1
                while e2 < len(lines) and (not lines[e2].strip() or
                                           len(lines[e2]) - len(lines[e2].lstrip()) > ind):
                    e2 += 1
                k = e2
            yield lines[:start] + [(" " * ind) + l[sub:] if l.strip() else l for l in body] + \
                lines[k:]


def minimize(pid, source, kind, stress=None, timeout=DEFAULT_TIMEOUT, log=None):
    """The smallest variant of source (by removing and unwrapping statements) that still shows
    a difference of the same kind (or still crashes)."""
    if stress is None:
        stress = os.environ.get("PIJIT_STRESS", "") not in ("", "0")
    main = Worker(stress, timeout)
    ref = Worker(False, timeout) if stress else None
    tries = [0]

    def interesting(lines):
        if not _compiles(lines):
            return False
        src = "\n".join(lines) + "\n"
        tries[0] += 1
        answers = {"main": main.run({"id": pid, "source": src, "modes": ["plain", "jit"],
                                     "tracebacks": TRACEBACKS})}
        if ref is not None:
            answers["ref"] = ref.run({"id": pid, "source": src, "modes": ["plain"],
                                      "tracebacks": TRACEBACKS})
        v = compare(pid, src, answers, stress)
        return v.status in ("differ", "crash") and v.kind == kind

    lines = [l for l in source.rstrip("\n").split("\n")]
    try:
        changed = True
        while changed:
            changed = False
            for cand in _candidates(lines):
                if len(cand) > len(lines) or cand == lines:
                    continue
                if interesting(cand):
                    lines = cand
                    changed = True
                    if log:
                        log("  minimize: %d lines after %d tries" % (len(lines), tries[0]))
                    break
    finally:
        main.close()
        if ref is not None:
            ref.close()
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(l for i, l in enumerate(lines)
                     if l.strip() or (i and lines[i - 1].strip())) + "\n"


# ================================================================================================
# Command line
# ================================================================================================
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="programs seed*%d + 0..count-1"
                    % PROGRAMS_PER_SEED)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--program", type=int, action="append", default=[],
                    help="run only this program id (repeatable)")
    ap.add_argument("--file", action="append", default=[], help="run a program from a file")
    ap.add_argument("--show", action="store_true", help="print the program(s) and exit")
    ap.add_argument("--minimize", action="store_true",
                    help="minimise the first differing (or crashing) program of each kind")
    ap.add_argument("--jobs", type=int, default=2, help="parallel worker processes")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="seconds per program before it counts as a hang")
    ap.add_argument("--self-check", action="store_true",
                    help="plain vs plain (checks the generator and harness are deterministic)")
    ap.add_argument("--kinds", action="store_true", help="end with the count of each kind")
    ap.add_argument("--disable", default="", help="comma-separated generator features to leave "
                    "out, to look past known defects: %s" % ", ".join(gen.FEATURES))
    ap.add_argument("--quiet", action="store_true", help="only the summary and kinds")
    ap.add_argument("--objects", type=float, default=None, metavar="P",
                    help="share of programs with user classes made inside the function "
                    "(default %.2f; 1 for a campaign on them only)" % gen.OBJ_PROGRAM_P)
    for name, knob in sorted(gen.FEATURE_P.items()):
        ap.add_argument("--" + name, type=float, default=None, metavar="P",
                        help="share of programs with %s (default %.2f; see gen_features.py)"
                        % (name, getattr(gen, knob)))
    ap.add_argument("--tracebacks", action="store_true",
                    help="compare every one of the program's (function, line) frames in the "
                    "traceback of an exception a call raises (the default: see TRACEBACKS)")
    ap.add_argument("--no-tracebacks", action="store_true",
                    help="count a run of frames of one function in a traceback as its innermost")
    ap.add_argument("--with-open", action="store_true",
                    help="also the constructs of known open defects the generator leaves out "
                    "(gen_features.OPEN_DEFECTS: %s)" % ", ".join(sorted(gen.gen_features.OPEN_DEFECTS)))
    ap.add_argument("--cache", action="store_true",
                    help="also run each program in a second process (another hash seed), jitted from the "
                         "persistent compile cache the first filled (a private folder for the run)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    disabled = [f for f in args.disable.split(",") if f]
    if args.objects is not None:
        gen.OBJ_PROGRAM_P = args.objects
    for name, knob in gen.FEATURE_P.items():
        if getattr(args, name) is not None:
            setattr(gen, knob, getattr(args, name))
    gen.gen_features.WITH_OPEN = args.with_open
    global TRACEBACKS
    TRACEBACKS = (TRACEBACKS or args.tracebacks) and not args.no_tracebacks
    programs = [(os.path.basename(p), open(p).read()) for p in args.file]
    programs += [(p, gen.generate(p, disabled)) for p in args.program]
    if not programs:
        programs = [(program_id(args.seed, i), gen.generate(program_id(args.seed, i), disabled))
                    for i in range(args.count)]
    if args.show:
        for pid, src in programs:
            print("# program %s\n%s" % (pid, src))
        return 0
    stress = os.environ.get("PIJIT_STRESS", "") not in ("", "0")
    t0 = time.time()
    cache = None
    if args.cache:
        import shutil
        import tempfile
        cache = tempfile.mkdtemp(prefix="pijit-fuzz-cache-")
        stress = False
    try:
        verdicts = run_programs(programs, jobs=args.jobs, stress=stress, timeout=args.timeout,
                                self_check=args.self_check, cache=cache)
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    kinds = {}
    for v in verdicts:
        if v.status == "same":
            continue
        kinds.setdefault(v.kind, []).append(v.pid)
        if not args.quiet:
            report(v)
        if args.minimize and len(kinds[v.kind]) == 1:
            small = minimize(v.pid, v.source, v.kind, stress=stress, timeout=args.timeout,
                             log=lambda s: sys.stderr.write(s + "\n"))
            print("--- minimised (%s) ---" % v.kind)
            print(small)
    if args.kinds or args.quiet:
        print("difference kinds:")
        for k, ids in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            print("  %4d  %s   e.g. %s" % (len(ids), k, ", ".join(map(str, ids[:4]))))
    print(capture_line(verdicts))
    print("%s%s (%.1f s, Python %s)" % (summary_line(verdicts),
                                        " [PIJIT_STRESS]" if stress else
                                        " [self-check: plain vs plain]" if args.self_check else
                                        " [and in a second process, from the compile cache]" if cache else "",
                                        time.time() - t0, sys.version.split()[0]))
    return 0 if all(v.status == "same" for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
