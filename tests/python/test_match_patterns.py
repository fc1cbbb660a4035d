"""3.10's structural pattern matching under capture: each call jitted equals the call plain
(result or exception) while what the patterns read changes between calls: a class's
__match_args__, an attribute, a dict's value, its keys. The guards must see every such change.
`match` does not parse before 3.10: the function is compiled from source there, and the suite
skips on 3.7-3.9 (run.py's ALLOWED_SKIPS)."""
import sys
import unittest

import pijit as pj
from pijit import Tensor
from jit_compare import CAPTURE_ON, assert_ran_eagerly

SOURCE = '''
def f(x, p, d):
    match p:
        case P(a, b):
            r = x * a - b
        case _:
            r = x
    match d:
        case {"k": v, **rest}:
            r = r + v * len(rest)
        case {"j": w}:
            r = r - w
    return r
'''


class P(object):
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


def _outcome(fn, *args):
    try:
        return "ok", fn(*args).tolist()
    except Exception as e:  # the same exception, type and message, both ways
        return "raise", type(e).__name__, str(e)


@unittest.skipIf(sys.version_info < (3, 10), "structural pattern matching is 3.10+")
class MatchUnderMutation(unittest.TestCase):
    def setUp(self):
        self.saved = P.__dict__.get("__match_args__")

    def tearDown(self):
        P.__match_args__ = self.saved

    def test_changes_between_calls_are_guarded(self):
        ns = {"P": P}
        exec(compile(SOURCE, "<match>", "exec"), ns)
        f = ns["f"]
        jf = pj.jit(f)
        p, d = P(2.0, 3.0), {"k": 1.0, "z": 0}

        def swap_args():
            P.__match_args__ = ("y", "x")

        def set_attr():
            p.x = 10.0

        def set_value():
            d["k"] = 5.0

        def change_keys():
            del d["k"]
            d["j"] = 1.0

        def drop_args():
            del P.__match_args__

        seen = []
        for change in (None, swap_args, set_attr, set_value, change_keys, drop_args):
            if change:
                change()
            plain, jitted = _outcome(f, Tensor([1.0]), p, d), _outcome(jf, Tensor([1.0]), p, d)
            self.assertEqual(jitted, plain, change and change.__name__)
            seen.append(plain)
        self.assertEqual(seen, [("ok", [0.0]), ("ok", [2.0]), ("ok", [-6.0]), ("ok", [-2.0]), ("ok", [-8.0]),
                                ("raise", "TypeError", "P() accepts 0 positional sub-patterns (2 given)")])
        if CAPTURE_ON:
            st = pj.jit_stats(jf)
            self.assertEqual(st["compiles"], 6, st["break_reasons"])  # each change recompiled, none hit stale
            self.assertEqual(st["graphs"], 5, st["break_reasons"])    # the last raises: no graph, B007
            self.assertEqual([r["id"] for r in st["break_records"]], ["B007"])
        else:
            assert_ran_eagerly(self, jf)


if __name__ == "__main__":
    unittest.main()
