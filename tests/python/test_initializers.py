"""pijit.common.initializer against MindSpore's definitions (mindspore.common.initializer, 2.5):
fans for dense and convolution shapes, gains, the uniform variants' exact bounds, the normal
variants' standard deviations, TruncatedNormal's absolute bounds, determinism under set_seed on any
thread count, result dtypes, aliases, MindSpore-style subclasses, and the errors for bad arguments.
Statistics are taken over large samples with tolerances a few standard errors wide."""
import math
import unittest

import pijit as pj
from pijit import nn
from pijit.common import initializer as init_mod
from pijit.common.initializer import (Constant, HeNormal, HeUniform, Initializer, Normal, One,
                                      TruncatedNormal, Uniform, XavierNormal, XavierUniform, Zero,
                                      initializer)


def moments(t):
    t = t.astype(pj.float64)
    return t.mean().item(), t.std().item(), t.min().item(), t.max().item()


def f32(v):
    """v rounded to float32, as the bound of a float32 tensor is."""
    return pj.Tensor([v], pj.float32).item()


class TestFans(unittest.TestCase):
    def test_dense_and_convolution_shapes(self):
        fans = init_mod._calculate_fan_in_and_fan_out
        self.assertEqual(fans((256, 784)), (784, 256))              # Dense weight (out, in)
        self.assertEqual(fans((64, 16, 3, 3)), (16 * 9, 64 * 9))     # Conv2d (out, in, kh, kw)
        self.assertEqual(fans((8, 4, 5)), (20, 40))                  # Conv1d
        self.assertEqual(fans((4, 6, 2, 3, 3)), (6 * 18, 4 * 18))    # Conv3d
        self.assertEqual(init_mod._calculate_correct_fan((64, 16, 3, 3), "fan_out"), 576)
        self.assertEqual(init_mod._calculate_correct_fan((64, 16, 3, 3), "FAN_IN"), 144)

    def test_fewer_than_two_dims_is_refused(self):
        with self.assertRaisesRegex(ValueError, "fewer than 2 dimensions, got 1 dimension"):
            init_mod._calculate_fan_in_and_fan_out((10,))
        for init in (HeUniform(), HeNormal(), XavierUniform(), XavierNormal()):
            with self.assertRaisesRegex(ValueError, r"fewer than 2 dimensions.*shape \(10,\)"):
                initializer(init, (10,))

    def test_gains(self):
        gain = init_mod._calculate_gain
        for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "sigmoid"):
            self.assertEqual(gain(name), 1)
        self.assertAlmostEqual(gain("tanh"), 5.0 / 3)
        self.assertAlmostEqual(gain("relu"), math.sqrt(2))
        self.assertAlmostEqual(gain("leaky_relu"), math.sqrt(2 / (1 + 0.01 ** 2)))
        self.assertAlmostEqual(gain("leaky_relu", 0), math.sqrt(2))
        self.assertAlmostEqual(gain("leaky_relu", math.sqrt(5)), math.sqrt(1 / 3))


class TestUniformBounds(unittest.TestCase):
    CASES = [
        # (initializer, shape, MindSpore's bound)
        (Uniform(), (400, 500), 0.07),
        (Uniform(0.5), (1000, 200), 0.5),
        (HeUniform(), (64, 16, 3, 3), math.sqrt(2) * math.sqrt(3 / 144)),
        (HeUniform(math.sqrt(5)), (256, 784), 1 / math.sqrt(784)),  # nn.Dense's default
        (HeUniform(mode="fan_out", nonlinearity="relu"), (32, 8, 5, 5), math.sqrt(2) * math.sqrt(3 / 800)),
        (HeUniform(0.2, "FAN_OUT", "leaky_relu"), (300, 700), math.sqrt(2 / 1.04) * math.sqrt(3 / 300)),
        (HeUniform(nonlinearity="tanh"), (500, 400), 5 / 3 * math.sqrt(3 / 400)),
        (XavierUniform(), (256, 784), math.sqrt(6 / (784 + 256))),
        (XavierUniform(gain=2), (4, 6, 2, 3, 3), 2 * math.sqrt(6 / (108 + 72))),
    ]

    def test_every_value_in_bounds_and_the_bounds_reached(self):
        pj.set_seed(11)
        for init, shape, bound in self.CASES:
            for dtype in (pj.float32, pj.float64):
                x = initializer(init, shape, dtype)
                self.assertEqual(tuple(x.shape), shape)
                self.assertIs(x.dtype, dtype)
                mean, std, lo, hi = moments(x)
                b = f32(bound) if dtype is pj.float32 else bound
                what = "%r %s %s" % (init, shape, dtype)
                self.assertGreaterEqual(lo, -b, what)
                self.assertLessEqual(hi, b, what)
                n = x.size
                self.assertGreater(hi, b * (1 - 20.0 / n), what)  # reached to within a few gaps
                self.assertLess(lo, -b * (1 - 20.0 / n), what)
                self.assertAlmostEqual(mean, 0, delta=4 * bound / math.sqrt(3 * n), msg=what)
                self.assertAlmostEqual(std, bound / math.sqrt(3), delta=0.02 * bound, msg=what)

    def test_dense_and_conv_layers_use_mindspores_defaults(self):
        pj.set_seed(2)
        d = nn.Dense(784, 256)
        self.assertLessEqual(d.weight.abs().max().item(), f32(1 / 28))
        self.assertGreater(d.weight.abs().max().item(), 0.99 / 28)
        self.assertLessEqual(d.bias.abs().max().item(), f32(1 / 28))


class TestNormalVariants(unittest.TestCase):
    def test_standard_deviations(self):
        pj.set_seed(5)
        cases = [
            (Normal(), (500, 400), 0.0, 0.01),
            (Normal(0.02, 0.5), (500, 400), 0.5, 0.02),
            (HeNormal(), (256, 64, 3, 3), 0.0, math.sqrt(2) / math.sqrt(64 * 9)),
            (HeNormal(mode="fan_out", nonlinearity="relu"), (256, 64, 3, 3), 0.0,
             math.sqrt(2) / math.sqrt(256 * 9)),
            (XavierNormal(), (512, 256), 0.0, math.sqrt(2 / 768)),
            (XavierNormal(3), (16, 32, 5, 5), 0.0, 3 * math.sqrt(2 / (48 * 25))),
        ]
        for init, shape, want_mean, want_std in cases:
            for dtype in (pj.float32, pj.float64):
                x = initializer(init, shape, dtype)
                mean, std, lo, hi = moments(x)
                n = x.size
                what = "%r %s %s" % (init, shape, dtype)
                self.assertAlmostEqual(mean, want_mean, delta=5 * want_std / math.sqrt(n), msg=what)
                self.assertAlmostEqual(std, want_std, delta=0.01 * want_std, msg=what)
                # a normal's tails: about 4.6% beyond two standard deviations
                beyond = ((x.astype(pj.float64) - want_mean).abs() > 2 * want_std).astype(pj.float64)
                self.assertAlmostEqual(beyond.mean().item(), 0.0455, delta=0.004, msg=what)

    def test_zero_sigma_gives_the_mean(self):
        self.assertEqual(initializer(Normal(0.0, 1.5), (3,)).tolist(), [1.5, 1.5, 1.5])


class TestTruncatedNormal(unittest.TestCase):
    def test_default_bounds_are_absolute(self):
        # MindSpore's a=-2, b=2 are values, not sigmas: N(0, 0.01^2) is left as it is.
        pj.set_seed(3)
        x = initializer(TruncatedNormal(), (400, 500))
        mean, std, lo, hi = moments(x)
        self.assertAlmostEqual(std, 0.01, delta=0.0002)
        self.assertGreater(hi, 0.03)  # beyond two sigmas, as an untruncated normal is
        x = initializer(TruncatedNormal(1.0), (400, 500))
        mean, std, lo, hi = moments(x)
        self.assertGreaterEqual(lo, -2.0)
        self.assertLessEqual(hi, 2.0)
        self.assertAlmostEqual(std, 0.8796, delta=0.01)  # N(0, 1) on [-2, 2]

    def test_bounds_hold_and_moments_match(self):
        pj.set_seed(4)
        phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        Phi = lambda z: 0.5 * math.erfc(-z / math.sqrt(2))  # noqa: E731
        for sigma, mean, a, b in [(0.02, 0.1, 0.08, 0.12), (1.0, 0.0, 0.0, 10.0), (1.0, 0.0, 0.5, 0.6),
                                  (0.5, 2.0, -1.0, 0.0)]:
            al, be = (a - mean) / sigma, (b - mean) / sigma
            z = Phi(be) - Phi(al)
            want_mean = mean + sigma * (phi(al) - phi(be)) / z
            want_std = sigma * math.sqrt(1 + (al * phi(al) - be * phi(be)) / z
                                         - ((phi(al) - phi(be)) / z) ** 2)
            for dtype in (pj.float32, pj.float64):
                x = initializer(TruncatedNormal(sigma, mean, a, b), (500, 400), dtype)
                m, s, lo, hi = moments(x)
                what = "sigma %s mean %s [%s, %s] %s" % (sigma, mean, a, b, dtype)
                bound = f32 if dtype is pj.float32 else float
                self.assertGreaterEqual(lo, bound(a), what)
                self.assertLessEqual(hi, bound(b), what)
                self.assertAlmostEqual(m, want_mean, delta=0.01 * want_std, msg=what)
                self.assertAlmostEqual(s, want_std, delta=0.01 * want_std, msg=what)


class TestDeterminism(unittest.TestCase):
    INITS = [Normal(0.02), Uniform(), HeUniform(math.sqrt(5)), HeNormal(), XavierUniform(),
             XavierNormal(), TruncatedNormal(0.02), TruncatedNormal(1.0, 0.0, 1.0, 1.5)]

    def draw(self, seed):
        pj.set_seed(seed)
        return [initializer(i, (33, 7, 3)).tolist() for i in self.INITS]

    def test_same_seed_same_values_and_the_stream_advances(self):
        a, b = self.draw(1), self.draw(1)
        self.assertEqual(a, b)
        self.assertNotEqual(self.draw(2), a)
        pj.set_seed(1)
        first = initializer(Normal(), (50,)).tolist()
        self.assertNotEqual(initializer(Normal(), (50,)).tolist(), first)

    def test_thread_count_does_not_change_values(self):
        saved = pj.get_num_threads()
        try:
            pj.set_num_threads(1)
            pj.set_seed(8)
            one = [initializer(i, (300, 500)).tolist() for i in self.INITS[:3]]
            pj.set_num_threads(4)
            pj.set_seed(8)
            four = [initializer(i, (300, 500)).tolist() for i in self.INITS[:3]]
        finally:
            pj.set_num_threads(saved)
        self.assertEqual(one, four)

    def test_layers_built_under_a_seed_are_equal(self):
        pj.set_seed(6)
        a = nn.SequentialCell([nn.Dense(20, 30), nn.Conv2d(3, 8, 3)])
        pj.set_seed(6)
        b = nn.SequentialCell([nn.Dense(20, 30), nn.Conv2d(3, 8, 3)])
        for (na, pa), (nb, pb) in zip(a.parameters_and_names(), b.parameters_and_names()):
            self.assertEqual(na, nb)
            self.assertEqual(pa.tolist(), pb.tolist(), na)


class TestNumpySeeding(unittest.TestCase):
    """MindSpore's initialisers take one seed each from numpy's global generator: numpy.random.seed
    (or mindspore.set_seed, which seeds numpy) makes them reproducible, and each advances numpy's
    stream by exactly one randint(1, 2**63) draw."""

    def np(self):
        from pijit.common.initializer import _numpy
        return _numpy()

    def test_numpy_seed_reproduces_the_weights(self):
        np = self.np()
        np.random.seed(11)
        a = initializer(Normal(), (4, 5)).tolist()
        np.random.seed(11)
        self.assertEqual(initializer(Normal(), (4, 5)).tolist(), a)
        pj.set_seed(11)  # seeds numpy too
        self.assertEqual(initializer(Normal(), (4, 5)).tolist(), a)

    def test_each_initialiser_takes_one_numpy_draw(self):
        np = self.np()
        np.random.seed(3)
        np.random.randint(low=1, high=(1 << 63), dtype=np.int64)
        np.random.randint(low=1, high=(1 << 63), dtype=np.int64)
        want = float(np.random.rand())
        np.random.seed(3)
        initializer(Uniform(), (3, 3))
        initializer(HeNormal(), (3, 3))
        self.assertEqual(float(np.random.rand()), want)

    def test_set_seed_reseeds_numpy(self):
        np = self.np()
        pj.set_seed(5)
        a = float(np.random.rand())
        pj.set_seed(5)
        self.assertEqual(float(np.random.rand()), a)
        pj.set_seed(2 ** 40 + 5)  # beyond numpy's 32 bits: numpy takes it modulo 2**32
        self.assertEqual(float(np.random.rand()), a)

    def test_the_dataset_pipeline_imported_later_takes_the_seed(self):
        import os
        import subprocess
        import sys
        code = ("import pijit as ms\nms.set_seed(9)\nimport pijit.dataset as ds\n"
                "print(ds.config.get_seed())\nms.set_seed(12)\nprint(ds.config.get_seed())\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "pyscripts"))
        out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, check=True)
        self.assertEqual(out.stdout.decode().split(), ["9", "12"])


class TestDtypesAndAliases(unittest.TestCase):
    def test_result_dtypes(self):
        self.assertIs(initializer(Normal(), (4, 5)).dtype, pj.float32)
        for init in (Normal(), Uniform(), HeUniform(), TruncatedNormal(), Zero(), One(), Constant(2)):
            for dtype in (pj.float32, pj.float64, pj.float16):
                x = initializer(init, (6, 5), dtype)
                self.assertIs(x.dtype, dtype, repr(init))
                self.assertEqual(tuple(x.shape), (6, 5))
        self.assertEqual(initializer("ones", (2,), pj.int32).tolist(), [1, 1])
        self.assertIs(initializer("ones", (2,), pj.int32).dtype, pj.int32)
        self.assertEqual(initializer(3, (2,), pj.int64).tolist(), [3, 3])
        self.assertEqual(initializer(2.5, 3).tolist(), [2.5, 2.5, 2.5])
        self.assertEqual(initializer(Zero(), [2, 1]).tolist(), [[0.0], [0.0]])
        self.assertEqual(initializer(0.5, ()).tolist(), 0.5)

    def test_names_any_case(self):
        for name, cls in [("zeros", Zero), ("Zero", Zero), ("ones", One), ("one", One),
                          ("normal", Normal), ("Uniform", Uniform), ("he_uniform", HeUniform),
                          ("HeUniform", HeUniform), ("he_normal", HeNormal),
                          ("xavier_uniform", XavierUniform), ("XavierNormal", XavierNormal),
                          ("truncatedNormal", TruncatedNormal)]:
            self.assertIs(init_mod._INITIALIZER_ALIAS[name.lower()], cls)
            pj.set_seed(1)
            x = initializer(name, (8, 4))
            pj.set_seed(1)
            self.assertEqual(x.tolist(), initializer(cls(), (8, 4)).tolist(), name)

    def test_tensor_init_and_parameters(self):
        t = pj.Tensor([[1.0, 2.0]])
        self.assertEqual(initializer(t, (1, 2)).tolist(), [[1.0, 2.0]])
        self.assertEqual(initializer(t, [1, 2], pj.float64).dtype, pj.float64)
        p = pj.Parameter(initializer(Uniform(0.1), (3, 4)), name="w")
        self.assertEqual(tuple(p.shape), (3, 4))
        self.assertLessEqual(p.abs().max().item(), f32(0.1))

    def test_a_mindspore_style_subclass(self):
        class Threes(Initializer):
            def _initialize(self, arr):
                arr[:] = 3.0

        self.assertEqual(initializer(Threes(), (2, 3), pj.float64).tolist(), [[3.0] * 3] * 2)
        self.assertIs(initializer(Threes(), (2,), pj.float64).dtype, pj.float64)

        class Nothing(Initializer):
            pass

        with self.assertRaisesRegex(NotImplementedError, "Nothing must implement _initialize"):
            initializer(Nothing(), (2,))


class TestErrors(unittest.TestCase):
    def test_bad_init_shape_and_names(self):
        with self.assertRaisesRegex(ValueError, "unknown initializer 'bogus'; known: .*he_uniform"):
            initializer("bogus", (2,))
        with self.assertRaisesRegex(TypeError, "init must be a Tensor, a number, a str or an "
                                               "Initializer, got list"):
            initializer([1, 2], (2,))
        with self.assertRaisesRegex(ValueError, "shape is required unless init is a Tensor"):
            initializer("normal")
        for shape in ((2, 0), (-1,), (2.0, 3), (True, 2)):
            with self.assertRaisesRegex(ValueError, "every dimension of shape must be a positive "
                                                    "int, got"):
                initializer("normal", shape)
        with self.assertRaisesRegex(ValueError, r"the tensor has shape \(1, 2\) but shape \(2, 1\)"):
            initializer(pj.Tensor([[1.0, 2.0]]), (2, 1))

    def test_bad_parameters(self):
        with self.assertRaisesRegex(ValueError, r"'mode' 'fan_avg' is not supported, use one of "
                                                r"\['fan_in', 'fan_out'\]"):
            initializer(HeUniform(mode="fan_avg"), (4, 4))
        with self.assertRaisesRegex(ValueError, "nonlinearity must be one of .*got 'gelu'"):
            initializer(HeNormal(nonlinearity="gelu"), (4, 4))
        with self.assertRaisesRegex(ValueError, "negative_slope True is not a valid number"):
            initializer(HeUniform(negative_slope=True), (4, 4))
        with self.assertRaisesRegex(ValueError, "sigma < 0: the standard deviation must be >= 0, "
                                                "got -0.1"):
            initializer(Normal(-0.1), (4,))
        with self.assertRaisesRegex(ValueError, "sigma < 0"):
            initializer(TruncatedNormal(-1.0), (4,))
        with self.assertRaisesRegex(ValueError, "truncated normal initializer: sigma must be > 0, "
                                                "got 0"):
            initializer(TruncatedNormal(0.0), (4,))
        with self.assertRaisesRegex(ValueError, "truncated normal initializer: a must be less "
                                                "than b, got a = 1, b = -1"):
            initializer(TruncatedNormal(1.0, 0.0, 1.0, -1.0), (4,))

    def test_unbound_initializer(self):
        with self.assertRaisesRegex(ValueError, "Normal: no shape bound; use initializer"):
            Normal().init_data()


if __name__ == "__main__":
    unittest.main()
