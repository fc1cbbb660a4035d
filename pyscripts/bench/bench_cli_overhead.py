"""What `python -m pijit run` costs a program pijit cannot help: pure_python.py (recursion, dicts,
small objects; no tensors). In one process, the workload plain and with the script's directory a
capture candidate (what `pijit run` does), best of 5 each; then the whole command end to end
(which adds importing pijit, ~0.1 s), for the program as it is and repeated 10 times.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_cli_overhead.py
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "pure_python.py")
sys.path.insert(0, HERE)


def best(fn, n=5):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def work():
    import pure_python as p
    return p.fib(22), p.words(50000), p.points(50000)


def once(cmd):
    env = dict(os.environ)
    env.pop("PIJIT_STRESS", None)
    t = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, env=env).stdout
    return time.perf_counter() - t, out


def main():
    from pijit import _C
    expected = work()
    plain = captured = float("inf")
    for _ in range(3):  # interleaved: the machine's speed drifts
        plain = min(plain, best(work))
        _C.set_auto_capture([os.path.join(HERE, "")])
        try:
            assert work() == expected
            captured = min(captured, best(work))
        finally:
            _C.set_auto_capture([])
    print("pure-Python workload, Python %s, in process: plain %.1f ms, as a `pijit run` candidate %.1f ms (%.2fx)"
          % (sys.version.split()[0], plain * 1e3, captured * 1e3, captured / plain))
    # End to end, importing pijit included: a fixed cost (~0.05-0.1 s) a short program feels most.
    for repeat in ("1", "10"):
        a = b = float("inf")
        for _ in range(3):
            a = min(a, once([sys.executable, SCRIPT, repeat])[0])
            b = min(b, once([sys.executable, "-m", "pijit", "run", SCRIPT, repeat])[0])
        print("end to end, workload x%s: python %.2f s, python -m pijit run %.2f s (%.2fx)" % (repeat, a, b, b / a))


if __name__ == "__main__":
    main()
