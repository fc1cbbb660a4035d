"""What every regression program in tests/fuzz/found/ shares: an exact, printable form of results
and the verdict (exit 0 when plain and jitted agree, 1 when they differ). The programs run under
tests/python/test_fuzz.py (FoundPrograms) on each Python of the matrix."""
import sys

import pijit as pj


def show(v):
    """Exact, printable: tensors with type/dtype/shape/bits (sign of zero visible), identities of lists."""
    if isinstance(v, pj.Tensor):
        return (type(v).__name__, str(v.dtype), v.shape, [repr(a) for a in v.reshape(-1).tolist()])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [show(a) for a in v])
    if isinstance(v, float):
        return repr(v)
    return repr(v)


def outcome(fn, *a, **k):
    try:
        return ("ok", show(fn(*a, **k)))
    except Exception as e:
        return ("raises", type(e).__name__, str(e))


def verdict(plain, jitted):
    print("plain: ", plain)
    print("jitted:", jitted)
    print("SAME" if plain == jitted else "DIFFERENT")
    sys.exit(0 if plain == jitted else 1)
