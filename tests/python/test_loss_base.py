"""nn.LossBase as MindSpore users subclass it: get_loss (weights, reduction in float32, cast
back), get_axis, average/reduce, eager and jitted alike."""
import unittest

import pijit as ms
from pijit import nn, ops, Tensor


class AbsLoss(nn.LossBase):
    def __init__(self, reduction="mean"):
        super(AbsLoss, self).__init__(reduction)
        self.abs = ops.Abs()

    def construct(self, logits, labels):
        x = self.abs(logits - labels)
        return self.get_loss(x), self.get_axis(x)


class LossBaseForSubclasses(unittest.TestCase):
    def test_documented_example(self):
        out, axis = AbsLoss()(Tensor([1.0, 2.0, 3.0]), Tensor([1.0, 2.0, 2.0]))
        self.assertEqual(str(out), "0.33333334")
        self.assertEqual(axis, (0,))

    def test_reductions_weights_and_dtype(self):
        x, y = Tensor([[1.0, 2.0], [3.0, 4.0]]), Tensor([[0.0, 0.0], [0.0, 0.0]])
        self.assertEqual(AbsLoss("sum")(x, y)[0].item(), 10.0)
        self.assertEqual(AbsLoss("none")(x, y)[0].tolist(), [[1.0, 2.0], [3.0, 4.0]])
        base = nn.LossBase()
        self.assertEqual((base.average, base.reduce), (True, True))
        self.assertEqual((nn.LossBase("sum").average, nn.LossBase("none").reduce), (False, False))
        self.assertEqual(base.get_loss(x, Tensor([[1.0, 0.0], [1.0, 0.0]])).item(), 1.0)
        self.assertEqual(base.get_loss(x, 2.0).item(), 5.0)
        half = base.get_loss(x.astype(ms.float16))
        self.assertIs(half.dtype, ms.float16)
        self.assertEqual(half.item(), 2.5)

    def test_jitted_equals_eager_and_errors(self):
        net = AbsLoss()
        f = ms.jit(lambda a, b: net(a, b)[0])
        a, b = Tensor([1.0, -2.0, 3.5]), Tensor([0.5, 2.0, 2.0])
        self.assertEqual(f(a, b).item(), net(a, b)[0].item())
        with self.assertRaisesRegex(ValueError, "'reduction' must be in"):
            nn.LossBase("avg")
        with self.assertRaises(NotImplementedError):
            nn.LossBase()(a, b)


if __name__ == "__main__":
    unittest.main()
