"""Every MindSpore dtype: creation, rounding, printing, promotion, casting, buffers, checkpoints,
ops in compute dtypes (float16/bfloat16 in float32, small integers in int32/int64, rounded
once), autodiff and capture."""
import os
import tempfile
import unittest

import pijit as pj
import pijit as ms
from pijit import ops, nn
from jit_compare import CAPTURE_ON, assert_ran_eagerly

T = pj.Tensor
ALL = [ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint16, ms.uint32,
       ms.uint64, ms.float16, ms.bfloat16, ms.float32, ms.float64, ms.complex64, ms.complex128]


class Creation(unittest.TestCase):
    def test_every_dtype_from_list_zeros_ones_full(self):
        for dt in ALL:
            with self.subTest(dt=dt):
                t = T([1, 0, 1], dt)
                self.assertIs(t.dtype, dt)
                want = [True, False, True] if dt is ms.bool_ else [1, 0, 1]
                self.assertEqual(t.tolist(), want)
                self.assertEqual(ops.zeros((2,), dt).tolist(), [0, 0] if dt is not ms.bool_ else [False] * 2)
                self.assertIs(ops.ones((2, 2), dt).dtype, dt)
                self.assertEqual(ops.fill(dt, (2,), 1).tolist(), want[:1] * 2)
                self.assertEqual(t.itemsize, dt.itemsize)

    def test_placeholders_of_each_dtype(self):
        for dt in ALL:
            p = T(shape=[None, 3], dtype=dt)
            self.assertIs(p.dtype, dt)

    def test_float16_rounding_overflow_subnormals(self):
        x = T([0.1, 65504.0, 65520.0, 1e-7, -0.0, 2049.0], ms.float16)
        self.assertEqual(x.tolist(), [0.0999755859375, 65504.0, float("inf"), 1.1920928955078125e-07,
                                      -0.0, 2048.0])  # 2049 is a tie: rounds to even

    def test_bfloat16_rounding(self):
        x = T([0.1, 1.0 / 3, 3.0e38, 257.0], ms.bfloat16)
        self.assertEqual(x.tolist(), [0.10009765625, 0.333984375, 3.00405527047391e+38, 256.0])  # as torch's

    def test_integer_bounds_are_checked(self):
        with self.assertRaisesRegex(ValueError, "Python integer 300 out of bounds for uint8"):
            T([300], ms.uint8)
        with self.assertRaisesRegex(ValueError, "Python integer -1 out of bounds for uint64"):
            T([-1], ms.uint64)
        with self.assertRaisesRegex(ValueError, "out of bounds for int8"):
            T([-129], ms.int8)
        self.assertEqual(T([2 ** 64 - 1], ms.uint64).tolist(), [2 ** 64 - 1])
        self.assertEqual(T([-128, 127], ms.int8).tolist(), [-128, 127])

    def test_complex(self):
        c = T([1 + 2j, 3 - 1j])
        self.assertIs(c.dtype, ms.complex64)
        self.assertEqual(c.tolist(), [1 + 2j, 3 - 1j])
        self.assertEqual(T([1, 2j], ms.complex128).tolist(), [1 + 0j, 2j])
        with self.assertRaisesRegex(TypeError, "cannot convert a complex number to float32"):
            T([1j], ms.float32)

    def test_dtype_names_and_aliases(self):
        self.assertIs(ms.half, ms.float16)
        self.assertIs(ms.dtype.byte if hasattr(ms.dtype, "byte") else ms.int8, ms.int8)
        self.assertEqual([str(d) for d in ALL],
                         ["Bool", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
                          "UInt64", "Float16", "BFloat16", "Float32", "Float64", "Complex64",
                          "Complex128"])
        self.assertIs(T([1.0]).astype("float16").dtype, ms.float16)
        self.assertIs(T([1.0]).astype("uint8").dtype, ms.uint8)
        with self.assertRaisesRegex(TypeError, "not understood; pijit supports bool, int8"):
            T([1.0]).astype("float8")


class Printing(unittest.TestCase):
    # numpy's text for the same arrays (numpy 1.24).
    def test_float16_digits_are_float16_shortest(self):
        self.assertEqual(str(T([0.1, 0.25, 3.3], ms.float16)), "[0.1  0.25 3.3 ]")
        self.assertEqual(str(T([0.1, 1.5, 65504, 70000.0], ms.float16)),
                         "[1.00e-01 1.50e+00 6.55e+04      inf]")
        self.assertEqual(str(T(0.1, ms.float16)), "0.1")
        self.assertEqual(repr(T([1.0, 2.5], ms.float16)),
                         "Tensor(shape=[2], dtype=Float16, value= [1.  2.5])")

    def test_bfloat16_and_small_ints(self):
        self.assertEqual(str(T([0.1], ms.bfloat16)), "[0.1]")
        self.assertEqual(str(T([-128, 5], ms.int8)), "[-128    5]")
        self.assertEqual(str(T([255, 0], ms.uint8)), "[255   0]")
        self.assertEqual(str(T(2 ** 64 - 1, ms.uint64)), "18446744073709551615")

    def test_complex(self):
        self.assertEqual(str(T([1 + 2j, 3 - 1j])), "[1.+2.j 3.-1.j]")
        self.assertEqual(str(T([-3 + 4j, -7 - 24j])), "[-3. +4.j -7.-24.j]")
        self.assertEqual(str(T([1.5, -2.25j, 3], ms.complex128)), "[ 1.5+0.j   -0. -2.25j  3. +0.j  ]")
        self.assertEqual(str(T(1 + 2j)), "(1+2j)")
        self.assertEqual(str(T(2j)), "2j")


class Promotion(unittest.TestCase):
    def dt(self, a, b):
        return (T([1], a) + T([1], b)).dtype

    def test_tensor_tensor_table(self):
        cases = [(ms.int8, ms.uint8, ms.int16), (ms.uint8, ms.int32, ms.int32),
                 (ms.bool_, ms.uint8, ms.uint8), (ms.int16, ms.int64, ms.int64),
                 (ms.float16, ms.bfloat16, ms.float32), (ms.int32, ms.float16, ms.float16),
                 (ms.int64, ms.float32, ms.float32), (ms.float16, ms.float32, ms.float32),
                 (ms.bfloat16, ms.float64, ms.float64), (ms.uint16, ms.uint32, ms.uint32),
                 (ms.uint64, ms.float16, ms.float16)]
        for a, b, want in cases:
            with self.subTest(a=a, b=b):
                self.assertIs(self.dt(a, b), want)
                self.assertIs(self.dt(b, a), want)

    def test_pairs_mindspore_does_not_promote(self):
        with self.assertRaisesRegex(TypeError, "the dtypes UInt16 and Int8 cannot be promoted"):
            T([1], ms.uint16) + T([1], ms.int8)
        with self.assertRaisesRegex(TypeError, "UInt64 and Int64 cannot be promoted"):
            T([1], ms.uint64) * T([1], ms.int64)

    def test_python_scalars_are_weak(self):
        self.assertIs((T([1.0], ms.float16) * 2.5).dtype, ms.float16)
        self.assertIs((T([1], ms.int8) + 1).dtype, ms.int8)
        self.assertIs((T([1], ms.int8) + 1.5).dtype, ms.float32)
        self.assertIs((T([1], ms.uint8) + True).dtype, ms.uint8)
        self.assertIs((T([True]) + 1).dtype, ms.int64)
        self.assertIs((T([1.0], ms.bfloat16) + 1).dtype, ms.bfloat16)


class ComputeDtypes(unittest.TestCase):
    def test_integers_wrap_as_their_width(self):
        self.assertEqual((T([250, 5], ms.uint8) + T([10, 5], ms.uint8)).tolist(), [4, 10])
        self.assertEqual((T([127], ms.int8) + T([1], ms.int8)).tolist(), [-128])
        self.assertEqual((T([0], ms.uint16) - T([1], ms.uint16)).tolist(), [65535])
        self.assertEqual((T([200], ms.uint8) * 2).dtype, ms.uint8)

    def test_float16_ops_round_each_result_once(self):
        a = T([[0.1, 0.2], [0.3, 0.4]], ms.float16)
        for name, f in [("exp", ops.exp), ("relu", ops.relu), ("sigmoid", ops.sigmoid),
                        ("softmax", lambda x: ops.softmax(x, -1)), ("matmul", lambda x: ops.matmul(x, x)),
                        ("sum", lambda x: x.sum(axis=1)), ("mean", lambda x: x.mean()),
                        ("mul", lambda x: x * x), ("div", lambda x: x / 3)]:
            with self.subTest(op=name):
                got = f(a)
                self.assertIs(got.dtype, ms.float16)
                want = f(a.astype(ms.float32)).astype(ms.float16)
                self.assertEqual(got.tolist(), want.tolist())

    def test_bfloat16_conv_and_dense(self):
        x = ops.ones((1, 2, 5, 5), ms.bfloat16) * 0.5
        conv = nn.Conv2d(2, 3, 3, weight_init="ones", has_bias=False)
        with self.assertRaisesRegex(TypeError, "weight dtype Float32 does not match input dtype BFloat16"):
            conv(x)  # as MindSpore's Conv2D, which wants x and w of one type
        y = ops.conv2d(x, ops.ones((3, 2, 3, 3), ms.bfloat16))
        self.assertIs(y.dtype, ms.bfloat16)
        self.assertEqual(y[0, 0, 1, 1].item(), 9.0)
        w = T([[1.0, 2.0]], ms.bfloat16)
        self.assertEqual(ops.matmul(T([[3.0, 4.0]], ms.bfloat16), w.T).tolist(), [[11.0]])

    def test_comparisons_and_reductions_on_small_ints(self):
        x = T([3, 250, 7], ms.uint8)
        self.assertEqual((x > 5).tolist(), [False, True, True])
        self.assertEqual(x.max().tolist(), 250)
        self.assertIs(x.max().dtype, ms.uint8)
        self.assertEqual(ops.argmax(x).tolist(), 1)
        self.assertEqual(ops.sort(T([3, -1, 2], ms.int8))[0].tolist(), [-1, 2, 3])

    def test_views_keep_their_dtype_and_storage(self):
        x = T([[1, 2], [3, 4]], ms.float16)
        v = x.T
        self.assertIs(v.dtype, ms.float16)
        self.assertEqual(v.tolist(), [[1, 3], [2, 4]])
        x[0, 0] = 9
        self.assertEqual(x.reshape(4).tolist(), [9, 2, 3, 4])

    def test_casts(self):
        self.assertEqual(T([-1.0, 256.5]).astype(ms.uint8).tolist(), [255, 0])
        self.assertEqual(T([0.0, 0.5]).astype(ms.bool_).tolist(), [False, True])
        self.assertEqual(T([1 + 2j]).astype(ms.float32).tolist(), [1.0])
        self.assertEqual(T([3.0]).astype(ms.complex128).tolist(), [3 + 0j])
        self.assertEqual(T([70000.0]).astype(ms.float16).astype(ms.float32).tolist(), [float("inf")])

    def test_complex_arithmetic_and_parts(self):
        c = T([1 + 2j, 3 - 4j])
        self.assertEqual((c * c).tolist(), [-3 + 4j, -7 - 24j])
        self.assertEqual((c + 1).tolist(), [2 + 2j, 4 - 4j])
        self.assertEqual((c / 2).tolist(), [0.5 + 1j, 1.5 - 2j])
        self.assertEqual((c == T([1 + 2j, 3 + 4j])).tolist(), [True, False])
        self.assertEqual(abs(T([3 + 4j])).tolist(), [5.0])
        self.assertIs(abs(c).dtype, ms.float32)
        self.assertEqual((c.real.tolist(), c.imag.tolist()), ([1.0, 3.0], [2.0, -4.0]))
        self.assertEqual(c.conj().tolist(), [1 - 2j, 3 + 4j])
        self.assertEqual(ops.complex(T([1.0]), T([2.0])).tolist(), [1 + 2j])
        self.assertIs((T([1.0], ms.float64) * 1j).dtype, ms.complex128)
        self.assertEqual(ops.imag(T([1.0, 2.0])).tolist(), [0.0, 0.0])
        e = ops.exp(T([1j * 3.141592653589793], ms.complex128)).tolist()[0]
        self.assertAlmostEqual(e.real, -1.0, places=12)
        jf = ms.jit(lambda x: x * x + 1)
        self.assertEqual(jf(c).tolist(), [-2 + 4j, -6 - 24j])

    def test_complex_refusals_name_the_op(self):
        with self.assertRaisesRegex(TypeError, "lt does not support dtype Complex64"):
            T([1j]) < T([2j])
        with self.assertRaisesRegex(TypeError, "relu does not support dtype Complex64"):
            ops.relu(T([1j]))
        with self.assertRaisesRegex(TypeError, "complex: real and imag must both be float32 or both float64"):
            ops.complex(T([1.0]), T([1.0], ms.float64))


class Buffers(unittest.TestCase):
    def test_buffer_formats(self):
        for dt, fmt in [(ms.int8, "b"), (ms.uint8, "B"), (ms.int16, "h"), (ms.uint16, "H"),
                        (ms.uint32, "I"), (ms.uint64, "Q"), (ms.float16, "e"), (ms.complex64, "Zf"),
                        (ms.complex128, "Zd")]:
            self.assertEqual(memoryview(T([1, 2], dt)).format, fmt)
        with self.assertRaisesRegex(TypeError, "a BFloat16 tensor has no buffer format"):
            memoryview(T([1.0], ms.bfloat16))

    def test_uint8_buffers_stay_uint8(self):
        t = T(memoryview(bytearray([1, 2, 255])))
        self.assertIs(t.dtype, ms.uint8)
        self.assertEqual(t.tolist(), [1, 2, 255])


class Checkpoints(unittest.TestCase):
    def test_round_trip_every_dtype(self):
        params = {"p%d" % i: pj.Parameter(T([1, 0, 1], dt), name="p%d" % i) for i, dt in enumerate(ALL)}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "all.ckpt")
            ms.save_checkpoint([{"name": k, "data": v} for k, v in params.items()], path)
            back = ms.load_checkpoint(path)
        for k, v in params.items():
            self.assertIs(back[k].dtype, v.dtype)
            self.assertEqual(back[k].tolist(), v.tolist())


class AutodiffAndCapture(unittest.TestCase):
    def test_grad_in_float16(self):
        x = T([0.5, 1.5], ms.float16)
        g = ops.grad(lambda t: (t * t).sum())(x)
        self.assertIs(g.dtype, ms.float16)
        self.assertEqual(g.tolist(), [1.0, 3.0])

    def test_jitted_equals_eager_and_dtype_is_guarded(self):
        def f(x, w):
            return ops.relu(ops.matmul(x, w) + 1) * 0.5

        jf = ms.jit(f)
        x = T([[0.1, -0.7], [1.3, 0.25]], ms.float16)
        w = T([[0.5, 0.25], [-1.0, 2.0]], ms.float16)
        self.assertEqual(jf(x, w).tolist(), f(x, w).tolist())
        self.assertIs(jf(x, w).dtype, ms.float16)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
        else:
            assert_ran_eagerly(self, jf)
        y32 = jf(x.astype(ms.float32), w.astype(ms.float32))
        self.assertIs(y32.dtype, ms.float32)  # a dtype change recompiles, never reuses
        self.assertEqual(y32.tolist(), f(x.astype(ms.float32), w.astype(ms.float32)).tolist())
        if CAPTURE_ON:
            self.assertEqual(ms.jit_stats(jf)["compiles"], 2)
        else:
            assert_ran_eagerly(self, jf)

    def test_int8_jitted(self):
        def g(a, b):
            return (a + b) * 2

        jg = ms.jit(g)
        a, b = T([100, -3], ms.int8), T([27, 1], ms.int8)
        self.assertEqual(jg(a, b).tolist(), [-2, -4])
        self.assertIs(jg(a, b).dtype, ms.int8)
        if CAPTURE_ON:
            st = ms.jit_stats(jg)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
        else:
            assert_ran_eagerly(self, jg)


if __name__ == "__main__":
    unittest.main()
