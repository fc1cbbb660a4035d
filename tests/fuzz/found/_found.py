"""What every regression program in tests/fuzz/found/ shares: an exact, printable form of results
and the verdict (exit 0 when plain and jitted agree, 1 when they differ, 2 when they agree but
capture did not do what the program says it must). The programs run under
tests/python/test_fuzz.py (FoundPrograms) on each Python of the matrix.

Each program states what capture does with the functions it guards, as verdict's third argument:
captured("f", graphs=N) or refused("f", "B0xx"), read from pijit.jit_stats of the function of
that name the program gave pj.jit (or, for the stress3_* programs, defined at the top level; a
function's counters are its code's, so every closure of one def counts together). A program that
agrees only because capture was refused would otherwise prove nothing about what it guards.
"""
import sys

import pijit as pj

# The reference side is plain Python: under PIJIT_STRESS (the suite's stress run) every frame would
# be a capture candidate, the plain calls included, sharing their code's cache and counters with
# the jitted calls. (The stress3_* programs turn stress level 3 on around their jitted side.)
pj.set_stress(0)

_jitted = {}  # name -> what the program gave pj.jit (the last one of that name)
_jit = pj.jit


def _recording_jit(fn=None, *args, **kwargs):
    if fn is not None:
        _jitted[getattr(fn, "__name__", type(fn).__name__)] = fn
    return _jit(fn, *args, **kwargs)


pj.jit = _recording_jit


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


def captured(name, graphs):
    """The function `name` holds exactly `graphs` captured graphs (cache entries with a graph)."""
    return ("captured", name, graphs)


def refused(name, reason):
    """The function `name` holds no graph, and capture gave `reason` (a break-reason id, "B005") first."""
    return ("refused", name, reason)


def broke(name, reason, resume_graphs):
    """The function `name` breaks its graph, first for `reason` ("B002"), and the code after its
    breaks (resume functions) holds `resume_graphs` graphs."""
    return ("broke", name, (reason, resume_graphs))


def _capture_problems(expect):
    problems = []
    for kind, name, want in expect:
        fn = _jitted.get(name, getattr(sys.modules["__main__"], name, None))
        if fn is None:
            problems.append("%s: no function of that name was jitted or defined" % name)
            continue
        st = pj.jit_stats(fn)
        seen = "%s: %d graph(s), break reasons %s" % (name, st["graphs"], st["break_reasons"])
        print("capture:", seen)
        if kind == "captured" and st["graphs"] != want:
            problems.append("%s: expected %d graph(s)" % (seen, want))
        if kind == "refused" and (st["graphs"] != 0 or not st["break_reasons"]
                                  or not st["break_reasons"][0].startswith(want + " ")):
            problems.append("%s: expected no graph, refused with %s" % (seen, want))
        if kind == "broke" and (not st["break_reasons"] or not st["break_reasons"][0].startswith(want[0] + " ")
                                or st["resume_graphs"] != want[1]):
            problems.append("%s, %d resume graph(s): expected a break for %s and %d resume graph(s)"
                            % (seen, st["resume_graphs"], want[0], want[1]))
    return problems


def verdict(plain, jitted, expect):
    """expect: a non-empty list of captured(...), refused(...), broke(...)."""
    print("plain: ", plain)
    print("jitted:", jitted)
    problems = _capture_problems(expect) if expect else ["the program states no capture outcome"]
    for p in problems:
        print("CAPTURE NOT AS EXPECTED:", p)
    print("SAME" if plain == jitted else "DIFFERENT")
    sys.exit(1 if plain != jitted else 2 if problems else 0)
