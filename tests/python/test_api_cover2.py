"""MindSpore names no other suite calls by name: dtype aliases, communication group names, and a
handful of nn/numpy/mint/ops functions, each against MindSpore's documented values."""
import math
import unittest

import pijit as ms
from pijit import Tensor, nn, ops
import pijit.communication as comm
import pijit.mint as mint
import pijit.numpy as mnp


class Aliases(unittest.TestCase):
    def test_numpy_style_dtype_aliases(self):
        for name, want in (("intc", ms.int32), ("intp", ms.int64), ("uintc", ms.uint32), ("uintp", ms.uint64),
                           ("ushort", ms.uint16)):
            self.assertIs(getattr(ms, name), want, name)
            self.assertIs(getattr(ms.common, name), want, name)

    def test_world_group_names(self):
        self.assertEqual(comm.NCCL_WORLD_COMM_GROUP, "nccl_world_group")
        self.assertEqual(comm.MCCL_WORLD_COMM_GROUP, "mccl_world_group")


class NumpyAndMint(unittest.TestCase):
    def test_shapes_and_conversions(self):
        self.assertEqual(mnp.atleast_1d(Tensor(3.0)).tolist(), [3.0])
        self.assertEqual(mnp.atleast_2d(Tensor([1.0, 2.0])).shape, (1, 2))
        e = mnp.empty_like(Tensor([1, 2]))
        self.assertEqual((e.shape, e.dtype), ((2,), ms.int64))
        m = mint.empty_like(Tensor([[1.0, 2.0]]), dtype=ms.int32)
        self.assertEqual((m.shape, m.dtype), ((1, 2), ms.int32))
        self.assertAlmostEqual(mnp.radians(Tensor([180.0])).item(), math.pi, places=6)

    def test_triangle_indices(self):
        r, c = mnp.tril_indices(3)
        self.assertEqual((r.tolist(), c.tolist()), ([0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]))
        r, c = mnp.triu_indices_from(Tensor([[1.0, 2.0], [3.0, 4.0]]))
        self.assertEqual((r.tolist(), c.tolist()), ([0, 0, 1], [0, 1, 1]))


class Layers(unittest.TestCase):
    def test_fast_gelu(self):
        f = lambda x: x / (1 + math.exp(-1.702 * abs(x))) * math.exp(0.851 * (x - abs(x)))
        got = nn.FastGelu()(Tensor([1.0, -1.0, 0.5])).tolist()
        for g, x in zip(got, [1.0, -1.0, 0.5]):
            self.assertAlmostEqual(g, f(x), places=6)

    def test_channel_dropouts(self):
        d = nn.Dropout1d(p=0.5)
        x = ops.ones((2, 4, 3), ms.float32)
        self.assertEqual(d(x).tolist(), x.tolist())  # not training: the identity
        d.set_train(True)
        y = d(x).tolist()
        for batch in y:
            for channel in batch:  # a whole channel kept (scaled by 1/(1-p)) or zeroed
                self.assertIn(channel, ([2.0] * 3, [0.0] * 3))
        d3 = nn.Dropout3d(p=0.5)
        d3.set_train(True)
        out = d3(ops.ones((1, 3, 2, 2, 2), ms.float32)).tolist()[0]
        for channel in out:
            flat = [v for plane in channel for row in plane for v in row]
            self.assertIn(flat, ([2.0] * 8, [0.0] * 8))

    def test_instance_norm_3d_and_sync_batch_norm(self):
        y = nn.InstanceNorm3d(2)(Tensor([[[[[1.0, 3.0]]], [[[2.0, 6.0]]]]])).tolist()
        self.assertAlmostEqual(y[0][0][0][0][0], -1.0, places=4)
        self.assertAlmostEqual(y[0][1][0][0][1], 1.0, places=4)
        bn = nn.SyncBatchNorm(2, process_groups=[[0]])
        x = Tensor([[1.0, 2.0], [3.0, 6.0]])
        self.assertEqual(bn(x).tolist(), nn.BatchNorm1d(2)(x).tolist())  # one process: BatchNorm
        bn.set_train(True)
        out = bn(x).tolist()
        self.assertAlmostEqual(out[0][0], -1.0, places=4)
        self.assertAlmostEqual(bn.moving_mean.tolist()[1], 0.1 * 4.0, places=5)  # momentum 0.9
        with self.assertRaisesRegex(TypeError, "process_groups"):
            nn.SyncBatchNorm(2, process_groups=[0, 1])

    def test_transformer_decoder(self):
        ms.set_seed(1)
        layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0)
        dec = nn.TransformerDecoder(layer, num_layers=2)
        tgt, memory = ops.randn(3, 2, 8), ops.randn(4, 2, 8)
        out = dec(tgt, memory)
        self.assertEqual(out.shape, (3, 2, 8))
        self.assertEqual(ms.jit(dec)(tgt, memory).tolist(), out.tolist())


class Ops(unittest.TestCase):
    def test_csr_add_and_multi_label_margin_loss(self):
        a = ms.CSRTensor(Tensor([0, 1, 2], dtype=ms.int32), Tensor([0, 1], dtype=ms.int32), Tensor([2.0, 1.0]), (2, 4))
        b = ms.CSRTensor(Tensor([0, 1, 2], dtype=ms.int32), Tensor([0, 1], dtype=ms.int32), Tensor([1.0, 2.0]), (2, 4))
        c = ops.csr_add(a, b, Tensor(1.0), Tensor(2.0))
        self.assertEqual(c.values.tolist(), [4.0, 5.0])
        # MindSpore's documented MultilabelMarginLoss example: loss 0.325 for sample 0's labels [3, 0]
        loss = ops.multi_label_margin_loss(Tensor([[0.1, 0.2, 0.4, 0.8]]), Tensor([[3, 0, -1, 1]], dtype=ms.int32))
        want = (max(0, 1 - (0.8 - 0.2)) + max(0, 1 - (0.8 - 0.4)) + max(0, 1 - (0.1 - 0.2)) + max(0, 1 - (0.1 - 0.4))) / 4
        self.assertAlmostEqual(loss.item(), want, places=6)



class ComplexInputs(unittest.TestCase):
    def test_real_only_kernels_refuse_and_pad_copies(self):
        z = ops.complex(Tensor([1.0, 2.0]), Tensor([0.5, -1.0]))
        with self.assertRaisesRegex(TypeError, "softmax: the input must be a real tensor"):
            ops.softmax(z)
        z2 = ops.complex(Tensor([[1.0, 2.0]], ms.float64), Tensor([[0.5, -1.0]], ms.float64))
        p = ops.pad(z2, (1, 0))
        self.assertEqual(p.dtype, ms.complex128)
        self.assertEqual([complex(v) for v in p.tolist()[0]], [0j, 1 + 0.5j, 2 - 1j])
        h = ops.pad(Tensor([[1.0, 2.0]]).astype(ms.float16), (0, 1))
        self.assertEqual(h.tolist(), [[1.0, 2.0, 0.0]])


if __name__ == "__main__":
    unittest.main()
