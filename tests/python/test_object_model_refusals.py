"""What capture of Python's object model still refuses (issue 18), and that each refusal's
message names the real cause: the break-reason id and the construct, class or method at fault.
Every function here runs eagerly (or up to the break) with the same result as plain Python."""
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor


class Meta(type):
    def __call__(cls, *a):
        return super().__call__(*a)


class WithMeta(metaclass=Meta):
    def __init__(self, v):
        self.v = v


class WithNew:
    def __new__(cls, v):
        return super().__new__(cls)

    def __init__(self, v):
        self.v = v


class WithSetattr:
    def __init__(self, v):
        self.v = v

    def __setattr__(self, k, v):
        object.__setattr__(self, k, v)


class WithDel:
    def __init__(self, v):
        self.v = v

    def __del__(self):
        pass


class Lookup:
    def __getattribute__(self, k):
        return 2.0


class Fallback:
    def __getattr__(self, k):
        return 2.0


class Desc:
    def __get__(self, obj, owner):
        return 2.0

    def __set__(self, obj, v):
        pass


class HasDesc:
    x = Desc()


class L(list):
    pass


class P:
    def __init__(self, v):
        self.v = v


def gen(x):
    yield x


async def coro(x):
    return x


CASES = [
    # (name, function of x, reason id, text the reason must contain)
    ("metaclass __call__", lambda x: WithMeta(x).v, "B008", "constructs a WithMeta object: its metaclass Meta defines __call__"),
    ("__new__", lambda x: WithNew(x).v, "B008", "constructs a WithNew object: it defines __new__"),
    ("__setattr__", lambda x: WithSetattr(x).v, "B008", "it defines __setattr__ or __delattr__"),
    ("__del__", lambda x: WithDel(x).v, "B008", "it defines __del__"),
    ("C base class", lambda x: L([x])[0], "B008", "its base class list is written in C"),
    ("__getattribute__", lambda x, o=Lookup(): x * o.k, "B010", "Lookup customises __getattribute__"),
    ("__getattr__", lambda x, o=Fallback(): x * o.k, "B010", "Fallback defines __getattr__"),
    ("store through a user descriptor", lambda x, o=HasDesc(): setattr(o, "x", x) or x * o.x, "B005",
     "assigns attribute 'x' of a HasDesc"),
    ("C base's special method", lambda x, l=L([1.0]): l + [x], "B009", "L.__add__ is a wrapper_descriptor"),
    ("sorting user objects", lambda x: (sorted([P(2), P(1)], key=None), x), "B008", "sorted() on a list (or what it holds)"),
    ("str % user object", lambda x, p=P(1): ("%s" % p, x), "B009", "% between a str and a P"),
    ("tensor + user object", lambda x, p=P(1): x + p, "B009", "+ between a Tensor and a P"),
    ("generator .send", lambda x: gen(x).send(None), "B015", ".send of a generator"),
    ("coroutine", lambda x: coro(x), "B015", "calls coroutine function coro()"),
    ("exception holding a tensor", None, "B008", "constructs a ValueError holding a Tensor"),
]


def _exception_with_tensor(x):
    try:
        raise ValueError(x)
    except ValueError:
        return x


CASES[-1] = CASES[-1][:1] + (_exception_with_tensor,) + CASES[-1][2:]


def outcome(f, x):
    try:
        r = f(x)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return ("raised", type(e).__name__, str(e))
    if type(r).__name__ == "coroutine":
        r.close()
        return "coroutine"
    return ("value", r)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class ObjectModelRefusals(unittest.TestCase):
    def test_each_refusal_names_its_cause(self):
        for name, f, rid, text in CASES:
            with self.subTest(name):
                jf = pj.jit(f)
                with no_stress():
                    want = outcome(f, T([1.0, 2.0]))
                got = outcome(jf, T([1.0, 2.0]))
                self.assertTrue(same_bits(want, got), (name, want, got))
                reasons = pj.jit_stats(jf)["break_reasons"]
                self.assertTrue(any(r.startswith(rid) and text in r for r in reasons), (name, rid, text, reasons))


if __name__ == "__main__":
    unittest.main()
