"""What pijit.Profiler's eager op spans cost (graph/op.cc: call_op checks trace::ops_on(), one
relaxed load and a branch, before running an op): eager op calls with no Profiler, inside a
recording Profiler, and again after it stopped, side by side in one process.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_profiler.py

The workload: ops.add on two 1-element tensors (the call is nearly all dispatch, so a per-call
cost shows at its largest) and a 256x256 matmul (a typical op). "after" must equal "off": the
switch leaves nothing behind. The off path's instructions are also listed from the built module
(objdump), to show the single load-and-branch.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import timeit

import pijit as pj
from pijit import Tensor, ops
from pijit.profiler import Profiler


def best(fn, number):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def measure():
    a, b = Tensor([1.0]), Tensor([2.0])
    x = pj.ones((256, 256))
    small = best(lambda: ops.add(a, b), 20000)
    mm = best(lambda: ops.matmul(x, x), 200)
    return small, mm


def off_path_listing():
    so = pj._C.__file__
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", so], capture_output=True, text=True,
                             timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return "(objdump not available)"
    lines, keep, tail = [], False, 0
    for line in out.splitlines():
        if line.endswith(">:"):
            keep = "pj::call_op(pj::OpDef const&" in line
        if keep and "g_ops" in line:
            tail = 4  # the load of the switch and the test and branch after it
        if keep and (tail or "run_op_profiled" in line):
            lines.append(line.strip()[:110])
            tail = max(0, tail - 1)
    return "\n".join(lines) or "(call_op not found)"


def main():
    pj.set_num_threads(1)
    off = measure()
    tmp = tempfile.mkdtemp(prefix="bench_prof_")
    try:
        prof = Profiler(output_path=tmp)
        on = measure()
        prof.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    after = measure()
    print("%-40s %14s %14s" % ("setting", "add 1-elem us", "matmul 256 us"))
    for name, (s, m) in (("no Profiler", off), ("Profiler recording", on), ("after stop", after)):
        print("%-40s %14.3f %14.3f" % (name, s, m))
    print("\ncall_op's instructions that read the switch or call the recording path:")
    print(off_path_listing())


if __name__ == "__main__":
    sys.exit(main())
