"""How many of the example programs' functions pijit captures whole, with breaks, or not at all.

Runs each script under `python -m pijit run --summary` (the script's own functions are capture
candidates) in its own process and reads the summary: a function is *whole* when it ran captured
graphs with no graph break and was not given up, *partly* when it broke, *eager* when capture gave
it up. Compare two builds by pointing --pythonpath at another checkout's pyscripts:

    python pyscripts/bench/capture_coverage.py
    python pyscripts/bench/capture_coverage.py --pythonpath /tmp/old/pyscripts --label before
"""
import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
ROW = re.compile(r"^  (?P<what>.+?) \((?P<file>[^:]+):(?P<line>\d+)\): (?P<graphs>\d+) graphs, (?P<breaks>\d+) breaks")


def scripts():
    found = sorted(glob.glob(os.path.join(ROOT, "pyscripts", "examples", "*.py")))
    found += sorted(glob.glob(os.path.join(ROOT, "pyscripts", "examples", "seeds", "*.py")))
    return found


def run(script, pythonpath, timeout):
    env = dict(os.environ, PYTHONPATH=pythonpath, PIJIT_LOGS="")
    try:
        p = subprocess.run([sys.executable, "-m", "pijit", "run", "--summary", script], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=os.path.dirname(script), universal_newlines=True)
    except subprocess.TimeoutExpired:
        return None
    rows = []
    for line in p.stderr.splitlines():
        m = ROW.match(line)
        if not m or m.group("what").startswith(("resume of", "loop body of")):
            continue
        eager = "runs eagerly:" in line
        kind = "eager" if eager else "whole" if int(m.group("breaks")) == 0 and int(m.group("graphs")) > 0 else "partly"
        rows.append((m.group("what"), kind))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pythonpath", default=os.path.join(ROOT, "pyscripts"))
    ap.add_argument("--label", default="this build")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    total = {"whole": 0, "partly": 0, "eager": 0}
    for s in scripts():
        rows = run(s, os.path.abspath(args.pythonpath), args.timeout)
        if rows is None:
            print("%-50s timed out" % os.path.relpath(s, ROOT))
            continue
        counts = {k: sum(1 for _, kind in rows if kind == k) for k in total}
        for k in total:
            total[k] += counts[k]
        print("%-50s %d whole, %d with breaks, %d eager" % (os.path.relpath(s, ROOT), counts["whole"], counts["partly"],
                                                           counts["eager"]))
        if args.verbose:
            for what, kind in rows:
                print("    %-6s %s" % (kind, what))
    n = sum(total.values())
    print("%s: %d functions captured: %d whole (%.0f%%), %d with breaks, %d eager"
          % (args.label, n, total["whole"], 100.0 * total["whole"] / max(n, 1), total["partly"], total["eager"]))


if __name__ == "__main__":
    main()
