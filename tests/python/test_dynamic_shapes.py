"""Dynamic shapes (issue 17): a tensor size that changes between calls becomes a symbol on the
recompile, and later sizes reuse the graph (planned once per new size); a size Python code reads is
specialised again, with the reason; sizes 0 and 1 stay exact. Every call's result equals eager
Python's exactly; compiles, recompiles, eager calls and plans per size are asserted."""
import sys
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import eager as plainly, no_stress, same_bits as same

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402


class Seq(nn.Cell):
    """A construct of its own (SequentialCell's serves other suites too): its counters, and what
    capture learnt about its sizes, are this suite's; each test starts them afresh (pj.reset)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.CellList(layers)


class Net(Seq):
    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def seq_class():
    pj.reset(Net.construct)
    return Net


def counts(jf):
    st = pj.jit_stats(jf)
    return st, (st["compiles"], st["recompiles"], st["frames_default"])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class AutomaticDynamicSizes(unittest.TestCase):
    def run_sizes(self, fn, make_args, sizes, jf=None):
        jf = jf or pj.jit(fn)
        for n in sizes:
            args = make_args(n)
            self.assertTrue(same(jf(*args), plainly(fn, *args)), "size %r" % (n,))
        return jf

    def test_mlp_over_batch_sizes_compiles_twice(self):
        pj.set_seed(0)
        net = seq_class()([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 4), nn.Sigmoid()])
        jf = pj.jit(net)
        sizes = [32, 16, 7, 32, 5, 12, 64, 9, 16, 33, 2, 48]
        for n in sizes:
            x = pj.randn(n, 8)
            self.assertTrue(same(jf(x), plainly(net, x)), n)
        st, (compiles, recompiles, eager) = counts(jf)
        self.assertEqual((compiles, recompiles, eager), (2, 1, 0))
        dyn = [e for e in st["entries"] if e["dynamic"]]
        self.assertEqual(len(dyn), 1)
        self.assertEqual(dyn[0]["dynamic"], ["s0 = x.shape[0] is dynamic (traced with 16)"])
        self.assertIn("x: Tensor Float32[s0, 8] (dynamic: s0 >= 2)", dyn[0]["guards"])
        # one plan per distinct size it ran (16 captured, then 7 5 12 64 9 33 2 48; 32 once more)
        self.assertEqual(dyn[0]["shape_plans"]["plans"], 10)
        self.assertEqual(st["recompile_reasons"], ["x.shape[0]: 32 -> 16"])

    def test_cnn_over_batch_sizes(self):
        pj.set_seed(1)
        net = seq_class()([nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                           nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(4 * 4 * 4, 5)])
        net.set_train(False)
        jf = pj.jit(net)
        for n in [4, 6, 3, 8, 6, 2]:
            x = pj.randn(n, 3, 8, 8)
            self.assertTrue(same(jf(x), plainly(net, x)), n)
        self.assertEqual(counts(jf)[1], (2, 1, 0))

    def test_group_norm_and_pooling_keep_the_batch_dynamic(self):
        pj.set_seed(3)
        # (Conv2d pads "same" by default: the library reads only the input's height and width)
        net = seq_class()([nn.Conv2d(2, 4, 3), nn.GroupNorm(2, 4), nn.ReLU(), nn.AvgPool2d(2, 2),
                           nn.AdaptiveAvgPool2d(1), nn.Flatten()])
        jf = pj.jit(net)
        for n in [3, 5, 2, 7]:
            x = pj.randn(n, 2, 6, 6)
            self.assertTrue(same(jf(x), plainly(net, x)), n)
        st, c = counts(jf)
        self.assertEqual(c, (2, 1, 0))
        self.assertEqual([n for e in st["entries"] for n in e["dynamic"]], ["s0 = x.shape[0] is dynamic (traced with 5)"])

    def test_sizes_one_and_zero_stay_exact(self):
        def f(x, y):
            return x * 2 + y
        jf = pj.jit(f)
        y = pj.Tensor([1.0, 2.0, 3.0])
        for n in [4, 5, 1, 6, 1, 0, 7]:
            x = ops.ones((n, 3), pj.float32) * n
            self.assertTrue(same(jf(x, y), plainly(f, x, y)), n)
        st, c = counts(jf)
        # 4; 5 makes s0 dynamic; 1 and 0 each a static entry; 6 and 7 reuse the dynamic graph
        self.assertEqual(c, (4, 3, 0))
        self.assertIn("x.shape[0]: s0 >= 2 -> 1", st["recompile_reasons"])

    def test_size_read_by_python_is_specialised(self):
        def f(x):
            n = x.shape[0]
            return x.reshape((n, 2, -1)) * n
        jf = pj.jit(f)
        for n in [4, 6, 4, 6, 8]:
            x = ops.ones((n, 4), pj.float32)
            self.assertTrue(same(jf(x), plainly(f, x)), n)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))  # 4, 6 (specialised again), 8
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        op = "CALL" if sys.version_info >= (3, 11) else "CALL_METHOD"  # (the instruction dis shows)
        self.assertTrue(any("s0 = x.shape[0] specialised to 6: a size used by Python (%s) at" % op in n for n in notes), notes)

    def test_a_size_compared_with_a_constant_is_a_relational_guard(self):
        def f(x, w):
            if x.shape[0] > 4:
                return ops.relu(x @ w)
            return x @ w * 2
        pj.set_seed(3)
        w = pj.randn(3, 2)
        jf = self.run_sizes(f, lambda n: (pj.randn(n, 3), w), [8, 6, 9, 3, 2, 16, 4, 5, 1])
        st, c = counts(jf)
        # 8; 6 makes s0 dynamic (guarded s0 > 4); 3 takes the other branch (s0 <= 4); 1 exact;
        # 9, 2, 16, 4 and 5 reuse those entries
        self.assertEqual(c, (4, 3, 0))
        self.assertEqual(st["recompile_reasons"],
                         ["x.shape[0]: 8 -> 6", "x.shape[0]: s0 > 4 -> 3", "x.shape[0]: s0 >= 2 -> 1"])
        guards = [g for e in st["entries"] for g in e["guards"]]
        self.assertIn("x: Tensor Float32[s0, 3] (dynamic: s0 >= 2, s0 > 4)", guards)
        self.assertIn("x: Tensor Float32[s0, 3] (dynamic: s0 >= 2, s0 <= 4)", guards)
        line = f.__code__.co_firstlineno + 1
        self.assertIn("s0 > 4 (x.shape[0], compared at %s:%d): a guard, not a specialisation"
                      % (__file__.replace(".pyc", ".py"), line), [n for e in st["entries"] for n in e["dynamic"]])

    def test_comparisons_in_both_directions_and_equality(self):
        def f(x):
            n = x.shape[0]
            if 10 <= n:
                return x - 1
            if n == 5:
                return x * 5
            return x + 1
        jf = self.run_sizes(f, lambda n: (ops.ones((n, 2), pj.float32) * n,), [7, 3, 5, 12, 10, 5, 6, 11, 9])
        st, c = counts(jf)
        self.assertEqual(c[2], 0)
        self.assertEqual(c[0], 4)  # 7 static; then s0 < 10 and s0 != 5; s0 == 5; s0 >= 10
        guards = [g for e in st["entries"] for g in e["guards"]]
        self.assertIn("x: Tensor Float32[s0, 2] (dynamic: s0 >= 2, s0 < 10, s0 != 5)", guards)
        self.assertIn("x: Tensor Float32[s0, 2] (dynamic: s0 >= 2, s0 >= 10)", guards)

    def test_static_sizes_read_keep_the_batch_dynamic(self):
        def f(x):
            if x.shape[1] != 3:  # only the static size is used
                raise ValueError("bad")
            b, c = x.shape  # unpacked, the batch size is never used
            return x * c
        jf = pj.jit(f)
        self.run_sizes(f, lambda n: (ops.ones((n, 3), pj.float32),), [2, 5, 9, 4], jf)
        self.assertEqual(counts(jf)[1], (2, 1, 0))

    def test_returned_size_is_specialised(self):
        def f(x):
            return x + 1, x.shape[0]
        jf = pj.jit(f)
        self.run_sizes(f, lambda n: (ops.ones((n,), pj.float32),), [3, 4, 5, 4], jf)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        self.assertIn("(RETURN_VALUE)", " ".join(notes))

    def test_len_and_library_reads_specialise(self):
        def f(x):
            return x.sum() / len(x)
        jf = pj.jit(f)
        self.run_sizes(f, lambda n: (ops.ones((n, 2), pj.float32) * n,), [3, 5, 7, 5], jf)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        self.assertTrue(any("specialised to 5: len() read by library code at" in n or
                            "specialised to 5: a size used by Python" in n for n in notes), notes)

    def test_broadcasting_between_two_dynamic_tensors(self):
        def f(x, y):
            return x * y - x
        jf = pj.jit(f)
        for a, b in [(4, 4), (5, 5), (6, 6), (6, 1), (7, 7)]:
            x, y = pj.randn(a, 3), pj.randn(b, 3)
            self.assertTrue(same(jf(x, y), plainly(f, x, y)), (a, b))
        with self.assertRaises(ValueError):  # the graph would reject 8 vs 5: the call runs eagerly
            jf(pj.randn(8, 3), pj.randn(5, 3))
        st, c = counts(jf)
        # both sizes changed together at the first recompile: one symbol each, one recompile;
        # 6 vs 1 is a static entry of its own (1 stays exact); the rejected call ran eagerly
        self.assertEqual(c, (3, 2, 1))
        self.assertEqual(st["graph_failures"], 1)
        dyn = [e for e in st["entries"] if e["dynamic"]][0]
        self.assertEqual(dyn["dynamic"], ["s0 = x.shape[0] is dynamic (traced with 5)",
                                          "s1 = y.shape[0] is dynamic (traced with 5)"])
        self.assertEqual(dyn["shape_plans"]["rejected"], 1)

    def test_unused_op_rejecting_new_sizes_still_raises(self):
        def f(x, y):
            unused = y / x - x  # never read: eagerly it still raises when the sizes do not broadcast
            return x * 2
        jf = pj.jit(f)
        for a, b in [(3, 3), (4, 4), (5, 5)]:
            x, y = pj.randn(a), pj.randn(b)
            self.assertTrue(same(jf(x, y), x * 2))
        with self.assertRaises(ValueError):  # fuzz 5400050: the graph returned x * 2
            jf(pj.randn(3), pj.randn(2))
        st, c = counts(jf)
        self.assertEqual(c, (2, 1, 1))
        self.assertEqual([e["shape_plans"]["rejected"] for e in st["entries"] if e["dynamic"]], [1])

    def test_rejected_sizes_run_eagerly_every_time(self):
        def f(x, y):
            return ops.matmul(x, y)
        jf = pj.jit(f, dynamic=1)  # every size a symbol: the guards pass K=3 against K=4
        w = pj.randn(3, 2)
        for n in [4, 5, 6]:
            x = pj.randn(n, 3)
            # (eager via ops, not f: under PIJIT_STRESS a plain f call would use f's cache too)
            self.assertTrue(same(jf(x, w), ops.matmul(x, w)))
        for _ in range(2):
            with self.assertRaises(ValueError):
                jf(pj.randn(6, 3), pj.randn(4, 2))
        st, c = counts(jf)
        self.assertEqual(c, (1, 0, 2))
        self.assertEqual(st["graph_failures"], 2)  # each rejected call ran eagerly and raised there
        plans = st["entries"][0]["shape_plans"]
        # planned for 4 (at capture; its call a hit), 5, 6 (misses); the rejected sizes a miss, then a hit
        self.assertEqual((plans["plans"], plans["rejected"], plans["misses"], plans["hits"]), (3, 1, 3, 2))

    def test_dynamic_zero_keeps_every_size_exact(self):
        def f(x):
            return x * 3
        jf = pj.jit(f, dynamic=0)
        self.run_sizes(f, lambda n: (ops.ones((n,), pj.float32),), [2, 3, 4, 5], jf)
        st, c = counts(jf)
        self.assertEqual(c, (4, 3, 0))
        self.assertEqual([e["dynamic"] for e in st["entries"]], [[], [], [], []])

    def test_dynamic_one_is_symbolic_from_the_first_call(self):
        def f(x, w):
            return ops.matmul(x, w) + 1
        jf = pj.jit(f, dynamic=1)
        w = pj.randn(4, 3)
        for n in [2, 9, 5]:
            x = pj.randn(n, 4)
            self.assertTrue(same(jf(x, w), plainly(f, x, w)))
        st, c = counts(jf)
        self.assertEqual(c, (1, 0, 0))
        self.assertEqual(st["entries"][0]["shape_plans"]["plans"], 3)

    def test_bad_dynamic_argument(self):
        with self.assertRaises(ValueError):
            pj.jit(lambda x: x, dynamic=2)
        with self.assertRaises(ValueError):
            pj.jit(lambda x: x, dynamic=True)

    def test_training_step_over_batch_sizes(self):
        def make():
            pj.set_seed(2)
            net = nn.Dense(4, 2)
            loss = nn.WithLossCell(net, nn.MSELoss())
            return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), learning_rate=0.1)), net
        plain, pnet = make()
        step, jnet = make()
        pj.reset(type(step).construct)
        jstep = pj.jit(step)
        pj.set_seed(5)
        for n in [8, 6, 8, 5, 7, 2, 9]:
            x, y = pj.randn(n, 4), pj.randn(n, 2)
            self.assertTrue(same(jstep(x, y), plainly(plain, x, y)), n)
            self.assertTrue(same(jnet.weight, pnet.weight), n)
            self.assertTrue(same(jnet.bias, pnet.bias), n)
        # The gradient inside the graph is emitted again for each new size (graph::replay_sweep)
        st, c = counts(jstep)
        self.assertEqual(c, (2, 1, 0))
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        self.assertTrue(any(n.endswith("is emitted again for each new size") for n in notes), notes)
        plans = [e["shape_plans"] for e in st["entries"] if e["shape_plans"]["plans"]]
        self.assertEqual(plans[0]["plans"], 6)  # 6, 8 (it is checked first now), 5, 7, 2, 9

    def test_classifier_training_over_batch_sizes_matches_eager(self):
        def make():
            pj.set_seed(7)
            net = nn.SequentialCell([nn.Dense(6, 5), nn.ReLU(), nn.Dense(5, 3)])
            opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
            return nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt), net
        plain, pnet = make()
        step, jnet = make()
        pj.reset(type(step).construct)  # (what other suites' training steps learnt is theirs)
        jstep = pj.jit(step)
        pj.set_seed(11)
        for n in [4, 5, 7, 3, 16, 2, 5, 9]:
            x, y = pj.randn(n, 6), pj.randint(0, 3, (n,)).astype(pj.int32)
            self.assertTrue(same(jstep(x, y), plainly(plain, x, y)), n)
        for a, b in zip(jnet.trainable_params(), pnet.trainable_params()):
            self.assertTrue(same(a, b), a.name)
        st, c = counts(jstep)
        self.assertEqual((c[0], c[2]), (2, 0))

    def test_training_loop_with_new_batch_sizes_and_learning_rates(self):
        # The loop: every step a batch size of the 12 and a new learning rate
        def make():
            pj.set_seed(0)
            net = Net([nn.Dense(20, 16), nn.ReLU(), nn.Dense(16, 4)])
            weights = tuple(net.trainable_params())
            grad_fn = pj.value_and_grad(nn.WithLossCell(net, nn.CrossEntropyLoss()), None, weights)

            def train_step(x, y, lr):
                loss, grads = grad_fn(x, y)
                for p, g in zip(weights, grads):
                    ops.assign(p, p - lr * g)
                return loss
            return train_step, net
        seq_class()
        plain, pnet = make()
        step, jnet = make()
        jstep = pj.jit(step)
        pj.set_seed(3)
        for i, n in enumerate([32, 16, 7, 32, 5, 12, 64, 9, 16, 33, 2, 48]):
            x, y = pj.randn(n, 20), pj.randint(0, 4, (n,)).astype(pj.int32)
            lr = 0.1 * 0.9 ** i
            with no_stress():  # (the plain step shares the jitted one's code object, and its counters)
                want = plain(x, y, lr)
            self.assertTrue(same(jstep(x, y, lr), want), n)
        for a, b in zip(jnet.trainable_params(), pnet.trainable_params()):
            self.assertTrue(same(a, b), a.name)
        st, c = counts(jstep)
        self.assertEqual(c, (2, 1, 0))
        self.assertEqual(st["recompile_reasons"], ["x.shape[0]: 32 -> 16"])  # (lr changed too: lifted at once)
        notes = st["entries"][0]["dynamic"]
        self.assertIn("lr is a graph input (a Python float, traced with 0.09000000000000001, as Float32)", notes)

    def test_a_gradient_of_a_gradient_specialises(self):
        def f(x):
            return (ops.tanh(x) * x).sum()
        g2 = pj.grad(pj.grad(f))

        def h(x):
            return g2(x) * 2
        pj.reset(h)
        jh = self.run_sizes(h, lambda n: (pj.randn(n, 2),), [3, 4, 5, 4])
        st, c = counts(jh)
        self.assertEqual(c, (3, 2, 0))  # the outer sweep records the inner one: every size its own graph
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        self.assertTrue(any("a gradient of a gradient is taken inside the graph" in n for n in notes), notes)

    def test_grad_of_a_function_over_batch_sizes(self):
        def loss(x, w):
            return ops.tanh(x @ w).sum() / 3.0
        grad = pj.grad(loss, grad_position=(0, 1))

        def f(x, w):
            gx, gw = grad(x, w)
            return gx * 2, gw
        pj.reset(f)
        jf = pj.jit(f)
        w = pj.randn(3, 2)
        self.run_sizes(f, lambda n: (pj.randn(n, 3), w), [4, 6, 5, 9, 2, 6], jf)
        self.assertEqual(counts(jf)[1], (2, 1, 0))

if __name__ == "__main__":
    unittest.main()
