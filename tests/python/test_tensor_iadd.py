"""`x += y` on a Tensor means what it means in MindSpore (pyext/augassign.h).

Default (MindSpore on CPU/GPU, and graph mode without its switch): an augmented assignment is the
plain operator: x is bound to a new tensor, promoted as `+` promotes, and every other name of the
old tensor keeps its values. MindSpore's compile config JIT_ENABLE_AUGASSIGN_INPLACE = '1' (pijit:
mindspore._extends.parse.compile_config, or MS_JIT=JIT_ENABLE_AUGASSIGN_INPLACE:1) makes += -= *=
/= //= write into x, in x's dtype (numpy's same_kind casting; TypeError past it); %= **= @= stay
plain. Tensor.add_() and the other methods ending in `_` always write. A Cell's `self.p += v`
writes p's values either way (Cell.__setattr__ hands the new tensor to p.set_data). Jitted code
computes what eager code computes in both modes, and flipping the switch recompiles.
"""
import os
import subprocess
import sys
import unittest

import pijit as pj
from pijit import nn
from pijit._extends.parse import compile_config
from jit_compare import eager, no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))


class Switch:
    """JIT_ENABLE_AUGASSIGN_INPLACE set for a block, restored after."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.saved = compile_config.JIT_ENABLE_AUGASSIGN_INPLACE
        compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = self.value

    def __exit__(self, *exc):
        compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = self.saved


def t(values, dtype=pj.float32):
    return pj.Tensor(values, dtype)


class DefaultOutOfPlace(unittest.TestCase):
    def test_default_is_off(self):
        self.assertEqual(compile_config.JIT_ENABLE_AUGASSIGN_INPLACE, '0')
        self.assertFalse(pj._C._augassign_inplace())

    def test_other_names_keep_the_old_tensor(self):
        for op, want in (("+=", [3.0, 4.0]), ("-=", [-1.0, 0.0]), ("*=", [2.0, 4.0]),
                         ("/=", [0.5, 1.0]), ("//=", [0.0, 1.0]), ("%=", [1.0, 0.0]),
                         ("**=", [1.0, 4.0])):
            x = t([1.0, 2.0])
            y = x
            ns = {"x": x}
            exec("x %s 2" % op, ns)
            self.assertIsNot(ns["x"], y, op)
            self.assertEqual(y.tolist(), [1.0, 2.0], op)  # the old tensor is untouched
            self.assertEqual(ns["x"].tolist(), want, op)

    def test_views_keep_their_values(self):
        x = t([[1.0, 2.0], [3.0, 4.0]])
        row = x[0]
        x += 10
        self.assertEqual(row.tolist(), [1.0, 2.0])
        self.assertEqual(x.tolist(), [[11.0, 12.0], [13.0, 14.0]])

    def test_promotes_as_the_operator_does(self):
        x = pj.Tensor([1, 2], pj.int32)
        x += 0.5
        self.assertIs(x.dtype, pj.float32)  # int32 + a Python float: float32, as x + 0.5
        self.assertEqual(x.tolist(), [1.5, 2.5])
        x = pj.Tensor([1, 2], pj.int32)
        x /= 2
        self.assertIs(x.dtype, pj.float32)
        self.assertEqual(x.tolist(), [0.5, 1.0])
        x = pj.Tensor([1.0, 2.0], pj.float32)
        x += pj.Tensor([1.0, 1.0], pj.float64)
        self.assertIs(x.dtype, pj.float64)
        x = t([1.0, 2.0])
        x += t([[1.0, 1.0], [2.0, 2.0]])  # broadcasts to a bigger shape, as x + y
        self.assertEqual(x.shape, (2, 2))

    def test_matmul_and_bitwise_stay_plain(self):
        a = t([[1.0, 2.0], [3.0, 4.0]])
        alias = a
        a @= t([[1.0], [1.0]])
        self.assertEqual((a.shape, alias.shape), ((2, 1), (2, 2)))
        b = pj.Tensor([True, False])
        c = b
        b &= pj.Tensor([False, False])
        self.assertEqual((b.tolist(), c.tolist()), ([False, False], [True, False]))

    def test_number_on_the_left(self):
        s = 1.0
        s += t([1.0, 2.0])
        self.assertEqual(s.tolist(), [2.0, 3.0])

    def test_parameter_local_name_is_rebound_to_a_tensor(self):
        p = pj.Parameter(t([1.0, 2.0]), name="p")
        q = p
        q += 1
        self.assertIs(type(q), pj.Tensor)  # the sum is a Tensor, as MindSpore's add gives
        self.assertEqual(p.tolist(), [1.0, 2.0])

    def test_cell_parameter_is_written_through_set_data(self):
        class Counter(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = pj.Parameter(t([1.0, 2.0]), name="w")

            def construct(self, v):
                self.w += v
                return self.w

        c = Counter()
        w = c.w
        out = c(t([1.0, 1.0]))
        self.assertIs(c.w, w)  # Cell.__setattr__ wrote the Parameter's values (set_data)
        self.assertIs(type(c.w), pj.Parameter)
        self.assertEqual(w.tolist(), [2.0, 3.0])
        self.assertEqual(out.tolist(), [2.0, 3.0])
        with self.assertRaises(TypeError):  # float64 into a float32 Parameter (set_data's rule)
            c(pj.Tensor([1.0, 1.0], pj.float64))
        self.assertEqual(w.tolist(), [2.0, 3.0])


class Methods(unittest.TestCase):
    """The methods ending in `_` write in place in both modes."""

    def check(self):
        x = t([1.0, 2.0])
        y = x
        self.assertIs(x.add_(1), x)
        x.sub_(t([0.5, 0.5]), alpha=2)
        x.mul_(4)
        x.div_(2)
        self.assertEqual(y.tolist(), [2.0, 4.0])
        x.floor_divide_(3)
        self.assertEqual(y.tolist(), [0.0, 1.0])
        x.add_(t([1.0, 1.0]), alpha=0.5)
        self.assertEqual(y.tolist(), [0.5, 1.5])
        x.div_(t([1.0, -1.0]), rounding_mode="floor")
        self.assertEqual(y.tolist(), [0.0, -2.0])
        x.copy_(t([7.0]))  # broadcast
        self.assertEqual(y.tolist(), [7.0, 7.0])
        x.fill_(3)
        self.assertEqual(y.tolist(), [3.0, 3.0])
        x.fill_(pj.Tensor(5, pj.int64))
        self.assertEqual(y.tolist(), [5.0, 5.0])
        x.zero_()
        self.assertEqual(y.tolist(), [0.0, 0.0])
        self.assertIs(y.dtype, pj.float32)
        v = x[1:]
        v.add_(9)  # a view writes into its base
        self.assertEqual(y.tolist(), [0.0, 9.0])
        x.assign_value(t([1.0, 1.0, 1.0]))
        self.assertEqual(y.tolist(), [1.0, 1.0, 1.0])

    def test_in_place_by_default(self):
        self.check()

    def test_in_place_with_the_switch(self):
        with Switch('1'):
            self.check()

    def test_same_kind_casting(self):
        i = pj.Tensor([1, 2], pj.int32)
        i.add_(pj.Tensor([1, 1], pj.int64))  # int64 result cast back into int32: same kind
        self.assertEqual((i.dtype, i.tolist()), (pj.int32, [2, 3]))
        with self.assertRaisesRegex(TypeError, "Cannot cast ufunc 'add' output from dtype\\('float32'\\) "
                                               "to dtype\\('int32'\\) with casting rule 'same_kind'"):
            i.add_(0.5)
        with self.assertRaisesRegex(ValueError, "non-broadcastable output operand with shape \\(2,\\) "
                                                "doesn't match the broadcast shape \\(2, 2\\)"):
            t([1.0, 2.0]).mul_(t([[1.0, 1.0], [1.0, 1.0]]))
        self.assertEqual(i.tolist(), [2, 3])
        x = t([1.5, 2.5])
        x.copy_(pj.Tensor([1, 2], pj.int64))  # copy_ casts whatever the dtypes
        self.assertEqual(x.tolist(), [1.0, 2.0])
        with self.assertRaises(TypeError):
            x.copy_([1.0, 2.0])
        with self.assertRaises(RuntimeError):
            x.fill_(t([1.0, 2.0]))


class InPlaceSwitch(unittest.TestCase):
    def setUp(self):
        self.switch = Switch('1')
        self.switch.__enter__()

    def tearDown(self):
        self.switch.__exit__()

    def test_switch_values(self):
        self.assertTrue(pj._C._augassign_inplace())
        for off in ('0', 0, False, ''):
            compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = off
            self.assertFalse(pj._C._augassign_inplace(), off)
        for on in ('1', 1, True):
            compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = on
            self.assertTrue(pj._C._augassign_inplace(), on)
        with self.assertRaisesRegex(ValueError, "JIT_ENABLE_AUGASSIGN_INPLACE must be '1'"):
            compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = 'yes'
        self.assertEqual(compile_config.JIT_ENABLE_AUGASSIGN_INPLACE, True)  # unchanged

    def test_five_operators_write_into_the_tensor(self):
        for op, want in (("+=", [3.0, 4.0]), ("-=", [-1.0, 0.0]), ("*=", [2.0, 4.0]),
                         ("/=", [0.5, 1.0]), ("//=", [0.0, 1.0])):
            x = t([1.0, 2.0])
            y = x
            ns = {"x": x}
            exec("x %s 2" % op, ns)
            self.assertIs(ns["x"], y, op)
            self.assertEqual(y.tolist(), want, op)

    def test_the_others_stay_plain(self):
        for op in ("%=", "**="):
            x = t([1.0, 2.0])
            y = x
            ns = {"x": x}
            exec("x %s 2" % op, ns)
            self.assertIsNot(ns["x"], y, op)
            self.assertEqual(y.tolist(), [1.0, 2.0], op)

    def test_dtype_is_kept_or_the_cast_refused(self):
        x = pj.Tensor([1, 2], pj.int32)
        y = x
        x += pj.Tensor([1, 1], pj.int64)
        self.assertIs(x, y)
        self.assertEqual((x.dtype, x.tolist()), (pj.int32, [2, 3]))
        with self.assertRaisesRegex(TypeError, "Cannot cast ufunc 'add' output from dtype\\('float32'\\) "
                                               "to dtype\\('int32'\\) with casting rule 'same_kind'"):
            x += 0.5
        with self.assertRaisesRegex(TypeError, "casting rule 'same_kind'"):
            x /= 2  # true division gives floats
        self.assertEqual(y.tolist(), [2, 3])
        f = t([1.0, 2.0])
        f += pj.Tensor([1.0, 1.0], pj.float64)  # float64 into float32: same kind
        self.assertIs(f.dtype, pj.float32)
        with self.assertRaisesRegex(ValueError, "non-broadcastable output operand"):
            f += t([[1.0, 1.0], [1.0, 1.0]])

    def test_views_see_the_write(self):
        x = t([[1.0, 2.0], [3.0, 4.0]])
        row = x[0]
        x += 10
        self.assertEqual(row.tolist(), [11.0, 12.0])

    def test_parameter_is_written(self):
        p = pj.Parameter(t([1.0, 2.0]), name="p")
        q = p
        q += 1
        self.assertIs(q, p)
        self.assertIs(type(q), pj.Parameter)
        self.assertEqual(p.tolist(), [2.0, 3.0])


def step(x, y):
    z = x * 1
    z += y
    z *= 2
    z -= 1
    z /= 2
    z //= 1
    z %= 3
    return z


def alias_step(x, y):
    z = x * 1
    w = z
    z += y
    return z, w


def on_argument(x, y):
    x += y
    return x * 2


class Stepper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = pj.Parameter(t([1.0, 2.0, 3.0]), name="w")
        self.seen = pj.Parameter(t([0.0, 0.0, 0.0]), name="seen")

    def construct(self, x):
        self.w += x
        self.seen -= 1
        return self.w * 2


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Captured(unittest.TestCase):
    def compare(self, f, make_args, calls=3):
        jf = pj.jit(f)
        for _ in range(calls):
            want = eager(f, *make_args())
            got = jf(*make_args())
            self.assertTrue(same_bits(want, got), (want, got))
        return jf, pj.jit_stats(jf)

    def both(self, f, make_args):
        """f jitted equals f eager in both modes; the jit_stats of each."""
        out = []
        for value in ('0', '1'):
            pj.reset(f)
            with Switch(value):
                out.append(self.compare(f, make_args)[1])
        return out

    def test_plain_arithmetic_one_graph_in_both_modes(self):
        args = lambda: (t([1.0, 2.0, 3.0]), t([4.0, 5.0, 6.0]))
        for st in self.both(step, args):
            self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0), st["break_reasons"])

    def test_aliases_differ_between_modes(self):
        args = lambda: (t([1.0, 2.0]), t([1.0, 1.0]))
        pj.reset(alias_step)
        jf = pj.jit(alias_step)
        z, w = jf(*args())
        self.assertEqual((z.tolist(), w.tolist()), ([2.0, 3.0], [1.0, 2.0]))  # w kept the old tensor
        with Switch('1'):
            z, w = jf(*args())
            self.assertEqual((z.tolist(), w.tolist()), ([2.0, 3.0], [2.0, 3.0]))  # one tensor
        for st in self.both(alias_step, args):
            self.assertEqual((st["graphs"], st["breaks"]), (1, 0), st["break_reasons"])

    def test_argument_plus_equals(self):
        args = lambda: (t([1.0, 2.0]), t([1.0, 1.0]))
        off, on = self.both(on_argument, args)
        # default: a plain add, captured whole
        self.assertEqual((off["graphs"], off["breaks"]), (1, 0), off["break_reasons"])
        # the switch writes into the caller's tensor: left to the interpreter (B004), as before
        self.assertTrue(on["break_reasons"] and on["break_reasons"][0].startswith("B004 "), on)
        x = t([1.0, 2.0])
        with Switch('1'):
            pj.jit(on_argument)(x, t([1.0, 1.0]))
        self.assertEqual(x.tolist(), [2.0, 3.0])
        x = t([1.0, 2.0])
        pj.jit(on_argument)(x, t([1.0, 1.0]))
        self.assertEqual(x.tolist(), [1.0, 2.0])

    def test_cell_parameter_plus_equals_in_both_modes(self):
        for value in ('0', '1'):
            pj.reset(Stepper.construct)
            with Switch(value):
                plain, jitted = Stepper(), Stepper()
                fast = pj.jit(jitted)
                for i in range(3):
                    x = t([float(i), 1.0, 2.0])
                    with no_stress():
                        want = plain(x)
                    got = fast(x)
                    self.assertTrue(same_bits(want, got), (value, want, got))
                    self.assertEqual(jitted.w.tolist(), plain.w.tolist())
                    self.assertEqual(jitted.seen.tolist(), plain.seen.tolist())
                    self.assertIs(type(jitted.w), pj.Parameter)
                st = pj.jit_stats(fast)
                self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0),
                                 (value, st["break_reasons"]))

    def test_cell_parameter_store_refuses_what_set_data_refuses(self):
        class Bad(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = pj.Parameter(t([1.0, 2.0]), name="w")

            def construct(self, x):
                self.w += x  # a float64 x: set_data refuses float64 data for a float32 Parameter
                return self.w

        net = Bad()
        fast = pj.jit(net)
        with self.assertRaises(TypeError):
            fast(pj.Tensor([1.0, 1.0], pj.float64))
        self.assertEqual(net.w.tolist(), [1.0, 2.0])

    def test_in_place_methods_captured(self):
        class M(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = pj.Parameter(t([1.0, 2.0]), name="w")
                self.b = pj.Parameter(pj.Tensor([5, 6], pj.int32), name="b")

            def construct(self, x):
                self.w.add_(x, alpha=2)
                self.w.mul_(0.5)
                self.b.sub_(1)
                self.b.floor_divide_(2)
                return self.w + 1

        plain, jitted = M(), M()
        fast = pj.jit(jitted)
        for i in range(3):
            x = t([float(i), 1.0])
            with no_stress():
                want = plain(x)
            self.assertTrue(same_bits(want, fast(x)))
            self.assertEqual((jitted.w.tolist(), jitted.b.tolist()), (plain.w.tolist(), plain.b.tolist()))
        st = pj.jit_stats(fast)
        self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0), st["break_reasons"])

    def test_flipping_the_switch_recompiles(self):
        def f(x, y):
            z = x * 1
            w = z
            z += y
            return w

        pj.reset(f)
        jf = pj.jit(f)
        args = lambda: (t([1.0, 2.0]), t([1.0, 1.0]))
        self.assertEqual(jf(*args()).tolist(), [1.0, 2.0])
        self.assertEqual(jf(*args()).tolist(), [1.0, 2.0])
        with Switch('1'):
            self.assertEqual(jf(*args()).tolist(), [2.0, 3.0])
            self.assertEqual(jf(*args()).tolist(), [2.0, 3.0])
        self.assertEqual(jf(*args()).tolist(), [1.0, 2.0])
        st = pj.jit_stats(jf)
        self.assertEqual(st["breaks"], 0, st["break_reasons"])
        self.assertGreaterEqual(st["recompiles"], 1, st)
        self.assertTrue(any("compile_config" in r for r in st["recompile_reasons"]), st["recompile_reasons"])


class Environment(unittest.TestCase):
    def run_with(self, ms_jit, code=None):
        env = dict(os.environ, MS_JIT=ms_jit, PYTHONPATH=os.pathsep.join(
            [os.path.join(HERE, "..", "..", "pyscripts")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
        code = code or ("import pijit as pj\n"
                        "x = pj.Tensor([1.0]); y = x; x += 1\n"
                        "from pijit._extends.parse import compile_config as c\n"
                        "print(y.tolist(), repr(c.JIT_ENABLE_AUGASSIGN_INPLACE))\n")
        return subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)

    def test_mindspore_module_path(self):
        r = self.run_with("", "from pijit import alias\n"
                              "alias.install_mindspore_alias()\n"
                              "import mindspore as ms\n"
                              "from mindspore._extends.parse import compile_config\n"
                              "compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = '1'\n"
                              "x = ms.Tensor([1.0]); y = x; x += 1\n"
                              "print(y.tolist())\n")
        self.assertEqual(r.stdout.strip(), "[2.0]", r.stderr)

    def test_ms_jit_sets_the_switch_at_import(self):
        r = self.run_with("JIT_ENABLE_AUGASSIGN_INPLACE:1")
        self.assertEqual(r.stdout.strip(), "[2.0] '1'", r.stderr)
        r = self.run_with("COMPILE_PROFILE:1,JIT_ENABLE_AUGASSIGN_INPLACE:0")
        self.assertEqual(r.stdout.strip(), "[1.0] '0'", r.stderr)
        r = self.run_with("1")
        self.assertEqual(r.stdout.strip(), "[1.0] '0'", r.stderr)
        r = self.run_with("JIT_ENABLE_AUGASSIGN_INPLACE:on")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("MS_JIT: JIT_ENABLE_AUGASSIGN_INPLACE must be '1'", r.stderr)


if __name__ == "__main__":
    unittest.main()
