"""f(x, **{1: 2}) on Python 3.7 (CALL_FUNCTION_EX with the mapping as it is; 3.9 goes through
DICT_MERGE, which checks the keys): capture binds the keyword in inline_call, where
PyUnicode_Compare fails on the int key and the "unexpected keyword argument" message is built from
PyUnicode_AsUTF8(key) == NULL: the interpreter segfaults. A **kwargs callee instead gets the int
key in its dict, where CPython raises "keywords must be strings". Exits 1 when plain and jitted
differ (here: the child dies).

    PYTHONPATH=pyscripts python tests/python/opdiff_found/call_ex_non_string_keyword.py
"""
import os
import subprocess
import sys

import pijit as pj


def add_scaled(a, b=1.0, *, scale=1.0):
    return (a + b) * scale


def star_all(*a, **k):
    return len(a), sorted(k)


def f(x, kw):
    return add_scaled(x, **kw)


def g(x, kw):
    return star_all(x, **kw)


def run(fn):
    try:
        return ("returned", fn(pj.Tensor([1.0]), {1: 2}))
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))


if len(sys.argv) > 1:
    fn = {"g": g, "f": f}[sys.argv[2]]
    print(run(pj.jit(fn) if sys.argv[1] == "jit" else fn))
    sys.exit(0)

differ = False
for fn in ("f", "g"):
    results = []
    for mode in ("plain", "jit"):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), mode, fn], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        results.append((p.returncode, p.stdout.decode().strip()))
    print(fn, "plain: ", results[0])
    print(fn, "jitted:", results[1])
    differ = differ or results[0] != results[1]
sys.exit(1 if differ else 0)
