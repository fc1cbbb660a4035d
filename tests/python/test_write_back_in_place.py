"""Parameters assigned in a graph are computed in their own storage (graph/plan.h, alias): a
training step writes its new weights and optimizer state where they live instead of into fresh
outputs copied back after the graph. What a user relies on: the weights, printed values, returned
tensors and exceptions are those of eager execution; the in-place path is taken only where nothing
can tell (no effect before the write that could show the old bytes, no other use of the value, no
op after it that can raise, no gradient tape recording), and the plan says how many outputs it
wrote in place."""
import contextlib
import io
import sys
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402


def in_place(jf):
    """How many outputs the function's graphs wrote into their Parameters (0 when none)."""
    n = 0
    for e in pj.jit_stats(jf)["entries"]:
        plan = e["plan"] or ""
        if "written in their Parameter" in plan:
            n += int(plan.split(", ")[-1].split(" ")[0])
    return n


def index_error(plain, fn, *args):
    """The IndexError text a call raises (None when none); a plain call runs without stress."""
    try:
        with no_stress() if plain else contextlib.nullcontext():
            fn(*args)
    except IndexError as e:
        return str(e)
    return None


def net_and_step(seed):
    pj.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(20, 16), nn.ReLU(), nn.Dense(16, 4)])
    opt = nn.SGD(net.trainable_params(), 0.05, momentum=0.9)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class WriteBackInPlace(unittest.TestCase):
    def assertCaptured(self, jf, in_place_outputs, eager_calls=0):
        """One graph, no break or recompile; `eager_calls` calls whose graph failed ran eagerly;
        the plan wrote `in_place_outputs` outputs into their Parameters."""
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0))
        self.assertEqual((st["frames_default"], st["graph_failures"]), (eager_calls, eager_calls))
        self.assertEqual(in_place(jf), in_place_outputs)

    def test_training_step_updates_weights_in_place_bit_for_bit(self):
        pj.reset(nn.TrainOneStepCell.construct)  # (other suites' steps share its code object)
        plain_net, plain_step = net_and_step(3)
        net, step = net_and_step(3)
        jstep = pj.jit(step)
        pj.set_seed(5)
        data = [(pj.randn(8, 20), pj.randint(0, 4, (8,)).astype(pj.int32)) for _ in range(6)]
        ids = [id(p) for p in net.trainable_params()]
        for x, y in data:
            with no_stress():
                want = plain_step(x, y)
            got = jstep(x, y)
            self.assertTrue(same_bits(got, want))
        for p, q in zip(net.trainable_params(), plain_net.trainable_params()):
            self.assertTrue(same_bits(p, q), p.name)
        self.assertEqual([id(p) for p in net.trainable_params()], ids)
        st = pj.jit_stats(jstep)
        self.assertEqual((st["graphs"], st["breaks"]), (1, 0))
        # 4 weights and biases, 4 momentum buffers and the optimizer's step counter
        self.assertEqual(in_place(jstep), 9)
        self.assertCaptured(jstep, 9)

    def test_a_print_before_the_assign_shows_the_old_weights(self):
        w = pj.Parameter(pj.tensor([1.0, 2.0, 3.0]), name="w")
        out = io.StringIO()

        def f(x):
            print("before", w, file=out)
            ops.assign(w, w * 0.5 + x)
            return x * 2

        jf = pj.jit(f)
        for k in range(3):
            with no_stress():
                f(pj.tensor([1.0, 1.0, 1.0]))
        want = out.getvalue()
        w.set_data(pj.tensor([1.0, 2.0, 3.0]))
        out.seek(0)
        out.truncate()
        for k in range(3):
            jf(pj.tensor([1.0, 1.0, 1.0]))
        self.assertEqual(out.getvalue(), want)
        self.assertEqual(w.tolist(), [1.875, 2.0, 2.125])
        self.assertEqual(in_place(jf), 0)
        self.assertCaptured(jf, 0)

    def test_a_returned_new_value_is_a_tensor_of_its_own(self):
        # assign copies the value into the Parameter: the copy is what the graph writes in place,
        # the product stays the returned tensor's own
        w = pj.Parameter(pj.tensor([4.0, 8.0]), name="w")

        def f(x):
            new = w * x
            ops.assign(w, new)
            return new

        jf = pj.jit(f)
        results = [jf(pj.tensor([0.5, 0.5])) for _ in range(3)]
        ops.assign(w, pj.tensor([100.0, 100.0]))
        self.assertEqual([r.tolist() for r in results], [[2.0, 4.0], [1.0, 2.0], [0.5, 1.0]])
        self.assertEqual(in_place(jf), 1)
        self.assertCaptured(jf, 1)

    def test_a_value_kept_on_an_object_is_a_tensor_of_its_own(self):
        # A value stored on an object beside the assign: the object keeps a tensor of its own
        # (the assigned copy is what the graph writes in place).
        w = pj.Parameter(pj.tensor([4.0, 8.0]), name="w")
        box = type("Box", (), {})()

        def f(x):
            ops.assign(w, w * x)
            box.last = w + 0
            return x

        jf = pj.jit(f)
        for _ in range(3):
            jf(pj.tensor([0.5, 0.5]))
        kept = box.last
        ops.assign(w, pj.tensor([100.0, 100.0]))
        self.assertEqual(kept.tolist(), [0.5, 1.0])
        self.assertCaptured(jf, 1)

    def test_reading_the_parameter_after_the_assign_sees_the_new_value(self):
        w = pj.Parameter(pj.tensor([1.0, -2.0]), name="w")
        v = pj.Parameter(pj.tensor([1.0, -2.0]), name="v")

        def step(p, x):
            ops.assign(p, p - x)
            return p * 3 + 1

        jf = pj.jit(step)
        for k in range(4):
            x = pj.tensor([0.25 * k, 1.0])
            with no_stress():
                want = step(v, x)
            self.assertTrue(same_bits(jf(w, x), want))
            self.assertTrue(same_bits(w, v))
        self.assertCaptured(jf, 1)

    def test_an_error_after_the_assign_leaves_the_weights_eager_leaves(self):
        w = pj.Parameter(pj.ones(3), name="w")
        v = pj.Parameter(pj.ones(3), name="v")

        def f(p, x, idx):
            ops.assign(p, p - 1.0)
            return x[idx]

        jf = pj.jit(f)
        x = pj.ones(4)
        for idx in ([1], [2], [7], [0]):
            self.assertEqual(index_error(True, f, v, x, pj.tensor(idx)), index_error(False, jf, w, x, pj.tensor(idx)))
            self.assertTrue(same_bits(w, v), idx)
        self.assertCaptured(jf, 0, eager_calls=1)  # (the index may raise after the update)

    def test_under_a_gradient_the_tape_keeps_the_old_weights(self):
        # An outer gradient records the jitted call: the graph's write must not reach the bytes
        # the tape saved (the in-place path is off while a tape records).
        def make():
            pj.set_seed(2)
            net = nn.Dense(3, 2)
            return net, nn.SGD(net.trainable_params(), 0.1)

        def loss_of(net, opt):
            def loss(x):
                out = (net(x) * net(x)).sum()
                opt(ops.GradOperation(get_by_list=True)(lambda y: (net(y) ** 2).sum(), opt.parameters)(x))
                return out
            return loss

        plain_net, plain_opt = make()
        net, opt = make()
        jloss = pj.jit(loss_of(net, opt))
        ploss = loss_of(plain_net, plain_opt)
        for k in range(3):
            x = pj.tensor([[1.0, -1.0, 0.5 * k]])
            with no_stress():
                want = ops.GradOperation()(ploss)(x)
            got = ops.GradOperation()(jloss)(x)
            self.assertTrue(same_bits(got, want))
            for p, q in zip(net.trainable_params(), plain_net.trainable_params()):
                self.assertTrue(same_bits(p, q), p.name)
        self.assertCaptured(jloss, 3)  # (planned; off at run time under the tape)

    def test_two_parameters_assigned_one_never_read(self):
        # assign's checks read q (a graph input, so the plan checks it shares no memory with p);
        # both are written in place and end as eagerly.
        p = pj.Parameter(pj.tensor([1.0, 2.0]), name="p")
        q = pj.Parameter(pj.tensor([0.0, 0.0]), name="q")

        def f(x):
            ops.assign(q, x * 2)
            ops.assign(p, p + x)
            return x

        jf = pj.jit(f)
        for k in range(3):
            jf(pj.tensor([1.0, 0.5 * k]))
        self.assertEqual((p.tolist(), q.tolist()), ([4.0, 3.5], [2.0, 2.0]))
        self.assertEqual(in_place(jf), 2)
        self.assertCaptured(jf, 2)

    def test_an_error_caught_before_the_assign_runs_the_call_eagerly(self):
        # The failing index comes before the Parameter's update: the launch wrote nothing, and
        # the call runs again eagerly, where the except clause catches it (review F1).
        p = pj.Parameter(pj.tensor([0.0, 0.0, 0.0]), name="p")
        q = pj.Parameter(pj.tensor([0.0, 0.0, 0.0]), name="q")

        def f(w, x, idx):
            try:
                y = x[idx]
            except IndexError:
                y = x * 0.0
            ops.assign(w, w + y)
            return y

        jf = pj.jit(f)
        x = pj.tensor([1.0, 2.0, 3.0])
        for idx in ([0, 1, 2], [2, 1, 0], [0, 1, 7], [1, 1, 1]):
            with no_stress():
                want = f(q, x, pj.tensor(idx))
            self.assertTrue(same_bits(jf(p, x, pj.tensor(idx)), want), idx)
            self.assertTrue(same_bits(p, q), idx)
        self.assertCaptured(jf, 1, eager_calls=1)

    def test_a_node_that_checks_after_writing_is_not_given_the_parameter(self):
        # index_put copies its input into its output, then checks the indices: an out-of-range
        # index must leave the Parameter as eager leaves it (review F2).
        p = pj.Parameter(pj.tensor([1.0, 2.0, 3.0]), name="p")
        q = pj.Parameter(pj.tensor([1.0, 2.0, 3.0]), name="q")

        def f(w, idx, v):
            t = pj.zeros(3)
            t[idx] = v
            ops.assign(w, t)
            return v

        jf = pj.jit(f)
        for idx in ([0], [2], [7], [1]):
            v = pj.tensor([5.0])
            self.assertEqual(index_error(True, f, q, pj.tensor(idx), v),
                             index_error(False, jf, p, pj.tensor(idx), v))
            self.assertTrue(same_bits(p, q), idx)
        self.assertCaptured(jf, 0, eager_calls=1)

    def test_a_parameter_assigned_twice_ends_with_the_second_value(self):
        p = pj.Parameter(pj.tensor([1.0, 2.0]), name="p")

        def f(x):
            ops.assign(p, x * 3)
            ops.assign(p, x + 1)
            return x

        jf = pj.jit(f)
        for k in range(3):
            jf(pj.tensor([float(k), 1.0]))
            self.assertEqual(p.tolist(), [k + 1.0, 2.0])
        self.assertCaptured(jf, 0)

    def test_under_a_tape_the_assigned_parameter_carries_the_new_value_s_gradient(self):
        # Eager assign rebinds the Parameter to the value written (t[...] = v under a tape): a
        # later use carries gradients through it. The replayed write-back does the same (it gave
        # zeros).
        p = pj.Parameter(pj.tensor([1.0, 2.0]), name="p")
        q = pj.Parameter(pj.tensor([1.0, 2.0]), name="q")

        def f(w, x):
            ops.assign(w, w * x)
            return x.sum()

        jf = pj.jit(f)

        def loss_of(fn, w):
            def loss(x):
                fn(w, x)
                return (w * w).sum()
            return loss

        for k in range(3):
            x = pj.tensor([1.5, 0.5 + k])
            with no_stress():  # (both: under stress the loss itself would be captured, f inlined)
                want = ops.GradOperation()(loss_of(f, q))(x)
                got = ops.GradOperation()(loss_of(jf, p))(x)
            self.assertTrue(same_bits(got, want), (got, want))
            self.assertTrue(same_bits(p, q))
        self.assertCaptured(jf, 1)

    def test_graph_text_names_what_is_written_back(self):
        w = pj.Parameter(pj.zeros(2), name="w")

        def f(x):
            ops.assign(w, w + x)
            return x.sum()

        jf = pj.jit(f)
        for _ in range(2):
            jf(pj.ones(2))
        e = pj.jit_stats(jf)["entries"][0]
        self.assertRegex(e["compiled"], r"# writes back %\d+ -> %\d+")
        self.assertIn("1 written in their Parameter", e["plan"])
        self.assertCaptured(jf, 1)
        self.assertEqual(w.tolist(), [2.0, 2.0])


if __name__ == "__main__":
    unittest.main()
