"""mindspore.export / load / nn.GraphCell and ONNX export: the tutorials' "export the trained network,
load it, run inference" gives the network's own results; the files decode, with a wire-format
reader written here independently of pijit's, to what MindIR's and ONNX's schemas say."""
import os
import random
import shutil
import struct
import tempfile
import unittest

import pijit as ms
from pijit import nn, ops, _C
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON


# ---- an independent protobuf reader: field number -> [values] -----------------------------------

def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    out, i = {}, 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise AssertionError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def ints(values):
    """A repeated int64 field, packed (one bytes value) or not (several ints)."""
    out = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = _varint(v, i)
                out.append(x)
    return out


def text(values):
    return values[0].decode("utf-8") if values else None


def randn(shape, seed):
    rng = random.Random(seed)
    n = 1
    for d in shape:
        n *= d
    return ms.Tensor([rng.gauss(0.0, 1.0) for _ in range(n)], dtype=ms.float32).reshape(shape)


# ---- the networks -------------------------------------------------------------------------------

class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class ResidualBlock(nn.Cell):
    def __init__(self, ch=4):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, pad_mode="same", has_bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU()
        self.pool = nn.AvgPool2d(2, 2)
        self.fc = nn.Dense(ch * 4 * 4, 3)

    def construct(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        y = self.pool(self.relu(y + x))
        return self.fc(ops.reshape(y, (y.shape[0], -1)))


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Dense(8, 16, activation="relu")
        self.l2 = nn.Dense(16, 4)
        self.scale = ms.Parameter(ms.Tensor([0.5, 1.0, 2.0, 4.0]), name="scale")
        self.softmax = nn.Softmax()

    def construct(self, x):
        h = self.l2(self.l1(x)) * self.scale - 1.5
        return self.softmax(ops.tanh(h)), ops.reduce_mean(h, 1)


def _trained_bn(net):
    """BatchNorm statistics that are not the initial 0 / 1, so inference-mode BN is exercised."""
    for name, p in net.parameters_and_names():
        if "moving_mean" in name or "moving_variance" in name:
            n = p.shape[0]
            vals = [0.1 * (k + 1) for k in range(n)] if "mean" in name else [1.0 + 0.5 * k for k in range(n)]
            p.set_data(ms.Tensor(vals, dtype=ms.float32))


# (export captures the network as one graph: where capture is off it refuses, NotImplementedError)
class ExportLoadRun(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_export_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def roundtrip(self, net, shape, seed):
        net.set_train(False)
        path = ms.export(net, randn(shape, seed), file_name=os.path.join(self.dir, "net"),
                         file_format="MINDIR")
        self.assertEqual(path, os.path.join(self.dir, "net.mindir"))
        self.assertTrue(os.path.exists(path))
        cell = nn.GraphCell(ms.load(path))
        for k in range(2):  # new inputs, not the export's
            x = randn(shape, seed + 100 + k)
            want, got = net(x), cell(x)
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            self.assertEqual(len(want), len(got))
            for w, g in zip(want, got):
                self.assertEqual(tuple(w.shape), tuple(g.shape))
                self.assertEqual(w.tolist(), g.tolist())  # the same registry ops: the same bits
            run = ms.jit(lambda t: cell(t))
            ms.reset(run)
            jitted = run(x)
            entries = ms.jit_stats(run)["entries"]
            # the loaded graph captures whole: one entry, no break, every node in its graph
            self.assertEqual(len(entries), 1)
            self.assertEqual((entries[0]["graph_break"], entries[0]["reason"]), (None, None))
            self.assertEqual(entries[0]["ops"], len(cell._graph.program.steps))
            jitted = jitted if isinstance(jitted, tuple) else (jitted,)
            for w, g in zip(want, jitted):
                self.assertEqual(w.tolist(), g.tolist())
        return path

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_lenet(self):
        path = self.roundtrip(LeNet5(), (2, 1, 32, 32), 1)
        self.assertEqual(ms.load(path).inputs, [("input_0", "Float32", (2, 1, 32, 32))])

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_resnet_block_with_batchnorm(self):
        net = ResidualBlock()
        _trained_bn(net)
        self.roundtrip(net, (2, 4, 8, 8), 2)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_mlp_two_outputs(self):
        self.roundtrip(MLP(), (3, 8), 3)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_train_namespace_and_graphcell_checks(self):
        from pijit.train.serialization import export, load
        net = MLP()
        path = export(net, randn((3, 8), 0), file_name=os.path.join(self.dir, "m.mindir"))
        self.assertTrue(path.endswith("m.mindir") and not path.endswith(".mindir.mindir"))
        cell = nn.GraphCell(load(path))
        with self.assertRaisesRegex(ValueError, r"shape \(3, 8\)"):
            cell(randn((2, 8), 0))
        with self.assertRaisesRegex(ValueError, "takes 1 input"):
            cell(randn((3, 8), 0), randn((3, 8), 0))
        # params_init replaces a weight by name
        g = load(path)
        new = ms.Tensor([1.0, 1.0, 1.0, 1.0])
        a = nn.GraphCell(g, params_init={"scale": new})(randn((3, 8), 5))
        net.scale.set_data(new)
        b = net(randn((3, 8), 5))
        self.assertEqual(a[0].tolist(), b[0].tolist())
        with self.assertRaisesRegex(ValueError, "nope"):
            nn.GraphCell(g, params_init={"nope": new})

    def test_errors(self):
        net = MLP()
        x = randn((3, 8), 0)
        with self.assertRaisesRegex(RuntimeError, "Ascend"):
            ms.export(net, x, file_name=os.path.join(self.dir, "a"), file_format="AIR")
        with self.assertRaisesRegex(ValueError, "file_format"):
            ms.export(net, x, file_name=os.path.join(self.dir, "a"), file_format="PB")
        with self.assertRaisesRegex(ValueError, "should end with '.mindir'"):
            ms.load(os.path.join(self.dir, "a.onnx"))
        with self.assertRaisesRegex(ValueError, "does not exist"):
            ms.load(os.path.join(self.dir, "missing.mindir"))
        with self.assertRaises(TypeError):
            nn.GraphCell(net)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_unknown_primitive_is_refused_by_name(self):
        path = ms.export(MLP(), randn((3, 8), 0), file_name=os.path.join(self.dir, "m"))
        model = ms.load_mindir(path)
        relu = [n for n in model.graph.node if n.op_type == "Tanh"][0]
        relu.op_type = "MyCustomTanh"
        other = os.path.join(self.dir, "edited")
        ms.save_mindir(model, other)
        with self.assertRaisesRegex(ValueError, "MyCustomTanh"):
            ms.load(other + ".mindir")

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_save_mindir_rewrites_the_same_bytes(self):
        path = ms.export(LeNet5(), randn((1, 1, 32, 32), 0), file_name=os.path.join(self.dir, "l"))
        with open(path, "rb") as f:
            original = f.read()
        ms.save_mindir(ms.load_mindir(path), os.path.join(self.dir, "copy"))
        with open(os.path.join(self.dir, "copy.mindir"), "rb") as f:
            self.assertEqual(f.read(), original)

    def test_graph_break_is_refused(self):
        class Breaks(nn.Cell):
            def construct(self, x):
                if float(x.sum()) > 0:  # reads a value: not one graph
                    return x * 2
                return x

        with self.assertRaises(Exception) as cm:
            ms.export(Breaks(), randn((2,), 0), file_name=os.path.join(self.dir, "b"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "b.mindir")))
        self.assertIn("graph", str(cm.exception).lower())


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (export captures the network)
class MindIRFileDecodes(unittest.TestCase):
    """mind_ir.proto: ModelProto.graph = 7; GraphProto node 1, name 2, parameter 3, input 5,
    output 6; NodeProto input 1, output 2, name 3, op_type 4, attribute 5; TensorProto dims 1,
    data_type 2 (FLOAT = 1), name 7, raw_data 9; AttributeProto name 1, i 3, d 4, s 5, type 16,
    values 17; ValueInfoProto name 1, tensor 2."""

    def test_lenet_file(self):
        d = tempfile.mkdtemp(prefix="pijit_export_")
        try:
            net = LeNet5()
            path = ms.export(net, randn((2, 1, 32, 32), 0), file_name=os.path.join(d, "lenet"))
            with open(path, "rb") as f:
                model = fields(f.read())
        finally:
            shutil.rmtree(d, ignore_errors=True)
        graph = fields(model[7][0])
        nodes = [fields(n) for n in graph[1]]
        self.assertEqual([text(n[4]) for n in nodes],
                         ["Conv2D", "ReLU", "MaxPool", "Conv2D", "BiasAdd", "ReLU", "MaxPool",
                          "Flatten", "Dense", "ReLU", "Dense", "ReLU", "Dense"])
        conv = nodes[0]
        attrs = {text(fields(a)[1]): fields(a) for a in conv[5]}
        self.assertEqual(ints(attrs["out_channel"][3]), [6])
        self.assertEqual(ints(attrs["group"][3]), [1])
        self.assertEqual([ints(fields(v)[3])[0] for v in attrs["kernel_size"][17]], [5, 5])
        self.assertEqual([ints(fields(v)[3])[0] for v in attrs["pad"][17]], [0, 0, 0, 0])
        self.assertEqual(attrs["pad_mode"][5][0], b"pad")
        # the conv's bias goes through BiasAdd, fed by the Conv2D's output
        self.assertEqual([x.decode() for x in nodes[4][1]][0], text(nodes[3][2]))
        # parameters: names, shapes, float32 data equal to the network's weights
        params = {text(fields(p)[7]): fields(p) for p in graph[3]}
        self.assertEqual(set(params), {p.name for p in net.get_parameters()})
        for p in net.get_parameters():
            t = params[p.name]
            self.assertEqual(ints(t[1]), list(p.shape))
            self.assertEqual(ints(t[2]), [1])
            raw = t[9][0]
            self.assertEqual(list(struct.unpack("<%df" % (len(raw) // 4), raw)),
                             [v for v in _flat(p.tolist())])
        # the input and the output
        inp = fields(graph[5][0])
        self.assertEqual(ints(fields(inp[2][0])[1]), [2, 1, 32, 32])
        out = fields(graph[6][0])
        self.assertEqual(text(out[1]), text(nodes[-1][2]))
        self.assertEqual(ints(fields(out[2][0])[1]), [2, 10])


def _flat(x):
    if isinstance(x, list):
        for e in x:
            for v in _flat(e):
                yield v
    else:
        yield x


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (export captures the network)
class OnnxFileDecodes(unittest.TestCase):
    """onnx.proto: ModelProto ir_version 1, opset_import 8 (version 2), graph 7; GraphProto node 1,
    initializer 5, input 11, output 12; NodeProto input 1, output 2, op_type 4, attribute 5;
    AttributeProto name 1, i 3, ints 8, type 20; TensorProto dims 1, data_type 2, name 8,
    raw_data 9; ValueInfoProto name 1, type 2 -> tensor_type 1 -> elem_type 1, shape 2 -> dim 1 ->
    dim_value 1."""

    def export(self, net, shape):
        d = tempfile.mkdtemp(prefix="pijit_export_")
        try:
            path = ms.export(net, randn(shape, 0), file_name=os.path.join(d, "net"), file_format="ONNX")
            self.assertTrue(path.endswith("net.onnx"))
            with open(path, "rb") as f:
                return fields(f.read())
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def common(self, model):
        self.assertEqual(model[1], [7])
        opset = fields(model[8][0])
        self.assertEqual(opset.get(2), [13])
        self.assertEqual(opset.get(1, [b""]), [b""])
        return fields(model[7][0])

    def test_lenet(self):
        net = LeNet5()
        g = self.common(self.export(net, (2, 1, 32, 32)))
        nodes = [fields(n) for n in g[1]]
        self.assertEqual([text(n[4]) for n in nodes],
                         ["Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Flatten", "Gemm",
                          "Relu", "Gemm", "Relu", "Gemm", "Identity"])
        conv = {text(fields(a)[1]): fields(a) for a in nodes[0][5]}
        self.assertEqual(ints(conv["kernel_shape"][8]), [5, 5])
        self.assertEqual(ints(conv["pads"][8]), [0, 0, 0, 0])
        self.assertEqual(conv["kernel_shape"][20], [7])  # INTS
        self.assertEqual(len(nodes[3][1]), 3)  # conv2 has its bias as a third input
        gemm = {text(fields(a)[1]): fields(a) for a in nodes[7][5]}
        self.assertEqual(gemm["transB"][3], [1])
        inits = {text(fields(t)[8]): fields(t) for t in g[5]}
        for p in net.get_parameters():
            self.assertEqual(ints(inits[p.name][1]), list(p.shape))
            self.assertEqual(inits[p.name][2], [1])
            raw = inits[p.name][9][0]
            self.assertEqual(list(struct.unpack("<%df" % (len(raw) // 4), raw)), list(_flat(p.tolist())))
        tt = fields(fields(fields(g[11][0])[2][0])[1][0])
        self.assertEqual(tt[1], [1])
        self.assertEqual([fields(dim)[1][0] for dim in fields(tt[2][0])[1]], [2, 1, 32, 32])
        out = fields(g[12][0])
        self.assertEqual(text(out[1]), text(nodes[-1][2]))

    def test_resnet_block_inference_batchnorm(self):
        net = ResidualBlock()
        net.set_train(True)
        g = self.common(self.export(net, (2, 4, 8, 8)))
        self.assertTrue(net.training)  # ONNX export runs in inference mode and restores the mode
        ops_ = [text(fields(n)[4]) for n in g[1]]
        self.assertEqual(ops_, ["Conv", "BatchNormalization", "Relu", "Conv", "BatchNormalization",
                                "Add", "Relu", "AveragePool", "Reshape", "Gemm", "Identity"])
        bn = [fields(n) for n in g[1] if text(fields(n)[4]) == "BatchNormalization"][0]
        self.assertEqual(len(bn[1]), 5)
        self.assertEqual(len(bn[2]), 1)  # the inference form: one output
        eps = {text(fields(a)[1]): fields(a) for a in bn[5]}["epsilon"]
        self.assertAlmostEqual(struct.unpack("<f", eps[2][0])[0], 1e-5, places=9)

    def test_mlp(self):
        g = self.common(self.export(MLP(), (3, 8)))
        ops_ = [text(fields(n)[4]) for n in g[1]]
        self.assertEqual(ops_, ["Gemm", "Relu", "Gemm", "Mul", "Sub", "Tanh", "Softmax", "ReduceMean",
                                "Identity", "Identity"])
        self.assertEqual(len(g[12]), 2)


if __name__ == "__main__":
    unittest.main()
