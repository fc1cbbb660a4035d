"""ops.vmap (issue 13): a function written for one example applied to a batch. What a user relies
on: the result equals running the function once per example and stacking (every op with a
batching rule, ops run per example, in_axes/out_axes in every form), code that needs tensor values
still works (per-example fallback), gradients flow through vmap, and bad axes raise clear errors."""
import importlib
import unittest

import pijit as pj
from pijit import nn, ops

vmap_module = importlib.import_module("pijit.vmap")  # (pijit.vmap the name is the function)


def loop(fn, args, axes, out_axis=0):
    """The reference: fn per example (slices along each mapped axis), outputs stacked."""
    B = [a.shape[ax] for a, ax in zip(args, axes) if ax is not None][0]
    outs = []
    for i in range(B):
        sl = [a if ax is None else ops.stack([a], 0)[(slice(None),) * 1 + (slice(None),) * ax + (i,)][0]
              for a, ax in zip(args, axes)]
        outs.append(fn(*sl))
    if isinstance(outs[0], tuple):
        return tuple(ops.stack([o[k] for o in outs], out_axis) for k in range(len(outs[0])))
    return ops.stack(outs, out_axis)


class Matches(unittest.TestCase):
    def same(self, got, want):
        if isinstance(want, tuple):
            self.assertEqual(len(got), len(want))
            for g, w in zip(got, want):
                self.same(g, w)
            return
        self.assertEqual(tuple(got.shape), tuple(want.shape))
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.reshape((-1,)).tolist(), want.reshape((-1,)).tolist())

    def check(self, fn, args, in_axes, out_axes=0, path="batched"):
        """vmap equals the per-example loop, and ran the way `path` says (one batched graph, or
        once per example where fn needs values)."""
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        before = dict(vmap_module.stats)
        self.same(pj.vmap(fn, in_axes, out_axes)(*args), loop(fn, args, axes, out_axes))
        self.assertEqual(vmap_module.stats[path] - before[path], 1, path)

    def setUp(self):
        pj.set_seed(4)
        self.x = pj.randn(4, 3, 5)
        self.y = pj.randn(3, 5)
        self.v = pj.randn(5)

    def test_elementwise_and_broadcasting(self):
        self.check(lambda a, b: ops.tanh(a * b + 1) - ops.maximum(a, b), (self.x, self.y), (0, None))
        self.check(lambda a, b: ops.where(a > 0, a, b * 2), (self.x, self.x * 0.5), 0)
        self.check(lambda a, v: a * v, (self.v, self.x), (None, 0))  # the batched operand has the lower rank
        self.check(lambda a, v: (a.astype(pj.float64) + v).clamp(-1, 1), (self.x, self.v), (1, None))

    def test_reductions_and_softmax(self):
        for fn in (lambda a: a.sum(), lambda a: a.mean(axis=1), lambda a: a.max(axis=-1, keepdims=True),
                   lambda a: a.sum(axis=(0, 1)), lambda a: ops.argmax(a), lambda a: ops.argmax(a, dim=1),
                   lambda a: ops.softmax(a, axis=0), lambda a: ops.log_softmax(a), lambda a: a.std(axis=0),
                   lambda a: ops.cumsum(a, 1)):
            self.check(fn, (self.x,), 0)
            self.check(fn, (self.x,), 2)

    def test_shapes_and_indexing(self):
        for fn in (lambda a: a.reshape((5, 3)), lambda a: a.reshape((-1,)), lambda a: a.T, lambda a: a.transpose(1, 0),
                   lambda a: ops.expand_dims(a, 0), lambda a: ops.expand_dims(a, -1).squeeze(),
                   lambda a: ops.broadcast_to(a[0], (2, 5)), lambda a: a[1:, ::2], lambda a: a[-1],
                   lambda a: ops.concat((a, a * 2), axis=1), lambda a: ops.stack((a, a), axis=-1),
                   lambda a: ops.split(a, 1, axis=1)[0], lambda a: ops.tile(a, (2, 1)), lambda a: ops.flatten(a)):
            self.check(fn, (self.x,), 0)

    def test_matmul_and_dense(self):
        w, m = pj.randn(5, 2), pj.randn(2, 3)
        self.check(lambda a, w: ops.matmul(a, w), (self.x, w), (0, None))          # [3,5]@[5,2]
        self.check(lambda a, w: ops.matmul(w, a), (self.x, m), (0, None))          # [2,3]@[3,5]
        self.check(lambda a, b: ops.matmul(a, b), (self.x, pj.randn(4, 5, 2)), 0)  # both batched
        self.check(lambda v, w: ops.matmul(v, w), (pj.randn(4, 5), w), (0, None))  # batched vector @ matrix
        self.check(lambda w, v: ops.matmul(w, v), (pj.randn(2, 5), pj.randn(4, 5)), (None, 0))
        self.check(lambda v, u: ops.matmul(v, u), (pj.randn(4, 5), pj.randn(4, 5)), 0)  # dot products
        self.check(lambda a, b: ops.matmul(a, b), (pj.randn(4, 3, 5), pj.randn(2, 5, 6)), (0, None))  # batch dims
        dense = nn.Dense(5, 2)
        self.check(lambda a: dense(a), (self.x,), 0)

    def test_ops_without_a_rule_run_per_example(self):
        conv = nn.Conv2d(2, 3, 3, pad_mode="pad", padding=1, has_bias=True)
        imgs = pj.randn(3, 1, 2, 6, 6)
        self.check(lambda im: ops.relu(conv(im)), (imgs,), 0)

    def test_in_and_out_axes_forms(self):
        def f(pair, s):
            a, b = pair
            return a * s + b, (a - b).sum()
        a, b = pj.randn(3, 4), pj.randn(4, 3)
        got = pj.vmap(f, in_axes=((0, 1), None), out_axes=(1, 0))(
            (a, b), pj.Tensor(2.0))
        want0 = ops.stack([f((a[i], b[:, i]), pj.Tensor(2.0))[0] for i in range(3)], 1)
        want1 = ops.stack([f((a[i], b[:, i]), pj.Tensor(2.0))[1] for i in range(3)], 0)
        self.same(got, (want0, want1))
        # out_axes None: an output the mapped inputs do not reach, returned once
        s = pj.Tensor([1.0, 2.0, 3.0, 4.0])
        got, c = pj.vmap(lambda a, s: (a + s, s * 3), in_axes=(0, None), out_axes=(0, None))(a, s)
        self.assertEqual(c.tolist(), [3.0, 6.0, 9.0, 12.0])
        self.same(got, a + s)

    def test_values_needed_fall_back_to_one_run_per_example(self):
        def f(a):
            return a * 2 if float(a.sum()) > 0 else -a
        self.check(f, (self.x,), 0, path="per_example")

    def test_gradient_through_vmap(self):
        w = pj.Parameter(pj.Tensor([0.5, -1.0, 2.0, 1.5, 0.1]), name="w")

        def loss(xs):
            return pj.vmap(lambda x: (x * w).sum() ** 2)(xs).sum()
        gx, gw = pj.grad(loss, 0, w)(self.y)
        want_gw = sum(2 * float((self.y[i] * w).sum()) * self.y[i] for i in range(3))
        self.assertEqual([round(v, 4) for v in gw.tolist()], [round(v, 4) for v in want_gw.tolist()])
        self.assertEqual(tuple(gx.shape), (3, 5))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, r"different sizes \[3, 4\]"):
            pj.vmap(lambda a, b: a + b)(pj.randn(3, 2), pj.randn(4, 2))
        with self.assertRaisesRegex(ValueError, "maps no Tensor argument"):
            pj.vmap(lambda a: a, in_axes=None)(self.x)
        with self.assertRaisesRegex(ValueError, r"in_axes 3 is out of range for argument 0 with shape \(4, 3, 5\)"):
            pj.vmap(lambda a: a, in_axes=3)(self.x)
        with self.assertRaisesRegex(ValueError, "argument 1 is a float, which has no axis 0"):
            pj.vmap(lambda a, s: a * s)(self.x, 2.0)
        with self.assertRaisesRegex(ValueError, "out_axes is None for output, but it depends on the mapped inputs"):
            pj.vmap(lambda a: a + 1, out_axes=None)(self.x)
        with self.assertRaisesRegex(ValueError, "in_axes \\(0,\\) has 1 entries but the function got 2 arguments"):
            pj.vmap(lambda a, b: a, in_axes=(0,))(self.x, self.x)
        with self.assertRaisesRegex(TypeError, "fn must be callable"):
            pj.vmap(3)
        with self.assertRaisesRegex(TypeError, "outputs must be Tensors"):
            pj.vmap(lambda a: 1.0)(self.x)


if __name__ == "__main__":
    unittest.main()
