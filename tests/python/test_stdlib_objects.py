"""Objects of the standard library written in Python, in captured code (issue 18):
functools.partial read from the frame calls its function with its arguments and keywords (each
guarded where it was read: a partial rebuilt with other arguments recompiles), enum members'
.value and .name read their _value_ and _name_, collections.abc mixin methods (Mapping.get,
__contains__, keys) run as the user code they are, dataclasses.field(default_factory=...) makes a
fresh default each construction. Each test compares plain and jitted results and counts graphs
and breaks."""
import collections.abc
import dataclasses
import enum
import functools
import sys
import unittest

import pijit as pj
from jit_compare import same_bits, same_calls

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor


def scale_shift(x, k, shift=0.0, *, power=1):
    return (x * k + shift) ** power


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Table(collections.abc.Mapping):
    def __init__(self, d):
        self.d = dict(d)

    def __getitem__(self, k):
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


@dataclasses.dataclass
class Opts:
    lr: float = 0.1
    tags: list = dataclasses.field(default_factory=list)


HALF = functools.partial(scale_shift, k=0.5)
TWICE_PLUS = functools.partial(scale_shift, 2.0, shift=1.0)


def x3():
    return T([1.0, -2.0, 3.0])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class StdlibObjects(unittest.TestCase):
    def one_graph(self, st, graphs=1):
        self.assertEqual(st["break_reasons"], [])
        self.assertEqual((st["graphs"], st["breaks"]), (graphs, 0))

    def test_partial_arguments_and_keywords(self):
        def f(x):
            return HALF(x), TWICE_PLUS(x, power=2), TWICE_PLUS(x, shift=-1.0)
        _, st = same_calls(self, f, lambda: (x3(),))
        self.one_graph(st)

    def test_partial_argument_changed_recompiles(self):
        def f(p, x):
            return p(x)
        jf = pj.jit(f)
        for k in (0.5, 0.5, 4.0):
            p = functools.partial(scale_shift, k=k)
            self.assertTrue(same_bits(jf(p, x3()), f(p, x3())))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["break_reasons"]), (2, 0, []))

    def test_enum_value_name_and_comparison(self):
        def f(x, mode):
            k = 2.0 if mode is Mode.TRAIN else 1.0
            return x * k, mode.value, mode.name, Level.HIGH.value * x, mode == Mode.EVAL
        jf, st = same_calls(self, f, lambda: (x3(), Mode.TRAIN))
        self.one_graph(st)
        self.assertTrue(same_bits(jf(x3(), Mode.EVAL), f(x3(), Mode.EVAL)))

    def test_abc_mapping_mixins(self):
        def f(x, t):
            return x * t.get("a", 0.0) + t["b"], "a" in t, "z" in t, len(t), sorted(t)
        _, st = same_calls(self, f, lambda: (x3(), Table({"a": 2.0, "b": 1.0})))
        self.one_graph(st)

    def test_dataclass_default_factory_is_fresh(self):
        def f(x):
            a, b = Opts(), Opts(lr=0.5)
            a.tags.append("a")
            return x * a.lr + x * b.lr, a.tags, b.tags, a.tags is b.tags
        _, st = same_calls(self, f, lambda: (x3(),), view=lambda r: r)
        self.one_graph(st)


if __name__ == "__main__":
    unittest.main()
