"""Cross-version differential of the capture stage: random programs (tests/fuzz/gen.py) captured by
the simulator alone (_C._capture_probe) on two Pythons, which must capture the same thing.

    PYTHONPATH=pyscripts /usr/bin/python3 tests/fuzz/stage_diff.py --seed 1 --count 300 \\
        --against $(pyenv prefix 3.9)/bin/python

For each program the first call of TARGET (a function, a Cell's construct, a method) is probed:
the graph's text, the guards and the reason capture stopped (a break or a refusal, as explain
shows it) are recorded; the calls then go on plainly, as drive() makes them. The run under
--against writes its records to a file and the two are compared program by program (addresses
and the count of pijit's module namespaces normalised). The programs are the same on both sides:
gen.py draws them from random.Random(seed), whose streams every Python 3 shares. What a version
legitimately does differently (an error message CPython words anew) shows as a difference to
read, not one to hide: the report names the field and the program; KNOWN lists those read and
found to be the bytecode's (reported, not counted). Ends with "N programs, K differ"; exits 1 when
K is not 0.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402

PROGRAMS_PER_SEED = 100000

# Differences read and found to be the versions' bytecode, not capture: program -> why.
_MODULE_CALLS = ("3.11 calls a function of an imported module (ops.cat(...)) through LOAD_GLOBAL's NULL and "
                 "LOAD_ATTR, where 3.9's LOAD_METHOD leaves a method pair on the stack while the arguments are "
                 "computed: a break inside them can run through the failing call on 3.11, not on 3.9")
KNOWN = {100237: _MODULE_CALLS, 200833: _MODULE_CALLS, 300331: _MODULE_CALLS, 300703: _MODULE_CALLS}


def _norm(text):
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    return re.sub(r"pijit's \d+ module namespaces", "pijit's N module namespaces", text)


def probe_program(pid):
    """The record of program pid's first call of TARGET under the probe."""
    from pijit import _C
    source = gen.generate(pid)
    ns = {"__name__": "fuzzprog"}
    try:
        exec(compile(source, "<fuzz program>", "exec"), ns)
    except Exception as e:
        return {"module": "%s: %s" % (type(e).__name__, e)}
    target = ns.get("TARGET")
    rec = {}

    def call(*args, **kwargs):
        if rec:
            return target(*args, **kwargs)
        fn, pre = target, ()
        if hasattr(fn, "__func__"):  # a bound method: its function with self
            fn, pre = fn.__func__, (fn.__self__,)
        elif not hasattr(fn, "__code__"):  # a Cell: its construct's frame, as jit captures it
            fn, pre = type(fn).construct, (fn,)
        try:
            result, r = _C._capture_probe(fn, pre + tuple(args), dict(kwargs))
        except Exception as e:
            rec["raised"] = type(e).__name__
            raise
        stopped = r["reason"] and (r["broke"] or not r["ok"])
        # The guards as a set (their order follows the bytecode's order of reads, which versions
        # change without changing what is read), and where capture stopped as the reason's id
        # and function, not its text (CPython words its exceptions anew, stdlib lines move);
        # the graph exactly.
        rec.update(graph=_norm(r["graph"]), guards=sorted(_norm(g) for g in r["guards"]),
                   stop="%s in %s%s" % (r["reason"], r["function"], " (a break)" if r["broke"] else "")
                   if stopped else "", effects=r["effects"])
        return result

    try:
        ns["drive"](call)
    except Exception:
        pass  # (the programs raise on purpose; only the capture is compared)
    return rec


def records(seed, count):
    out = {}
    for i in range(count):
        pid = seed * PROGRAMS_PER_SEED + i
        out[str(pid)] = probe_program(pid)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--against", help="the other Python (its records are computed in a child)")
    ap.add_argument("--out", help="write this Python's records as JSON here and stop")
    knobs = dict(gen.FEATURE_P, objects="OBJ_PROGRAM_P")  # (run_fuzz.py's: shares of programs with a feature)
    for name in sorted(knobs):
        ap.add_argument("--" + name, type=float, default=None, metavar="P", help="as run_fuzz.py's --" + name)
    a = ap.parse_args(argv)
    shares = []
    for name, knob in sorted(knobs.items()):
        if getattr(a, name) is not None:
            setattr(gen, knob, getattr(a, name))
            shares += ["--" + name, str(getattr(a, name))]
    mine = records(a.seed, a.count)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(mine, f)
        return 0
    if not a.against:
        ap.error("--against PYTHON or --out FILE")
    path = os.path.join(tempfile.mkdtemp(prefix="pijit_stage_diff_"), "other.json")
    proc = subprocess.run([a.against, os.path.abspath(__file__), "--seed", str(a.seed), "--count", str(a.count),
                           "--out", path] + shares, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        print(proc.stdout.decode(errors="replace"))
        print("0 programs, 1 differ (the run under %s failed)" % a.against)
        return 1
    with open(path) as f:
        other = json.load(f)
    here = "%d.%d" % sys.version_info[:2]
    differ = 0
    for pid in sorted(mine, key=int):
        m, o = mine[pid], other.get(pid)
        if m == o:
            continue
        if int(pid) in KNOWN:
            print("program %s differs as known: %s" % (pid, KNOWN[int(pid)]))
            continue
        differ += 1
        fields = sorted(k for k in set(m) | set(o or {}) if (o or {}).get(k) != m.get(k))
        print("program %s differs in %s:" % (pid, ", ".join(fields)))
        for k in fields:
            print("  %s (%s): %s\n  %s (other): %s" % (k, here, json.dumps(m.get(k))[:600], k,
                                                    json.dumps((o or {}).get(k))[:600]))
    print("%d programs, %d differ" % (len(mine), differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
