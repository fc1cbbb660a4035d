"""nn.RNN, nn.GRU, nn.LSTM, their cells, nn.Pad and nn.ClipByNorm (issue 42). What a user relies
on: the layers compute MindSpore's recurrences (checked against a plain-Python reference in double
precision, every config: stacked, bidirectional, batch_first, with and without an initial state,
without bias, with seq_length), their parameters carry MindSpore's names in MindSpore's order,
their gradients are the reference's (central differences), a jitted forward or training step is
one graph with exactly the eager results, and training lowers the loss. Pad and ClipByNorm give
MindSpore's documented values. The torch oracle (oracle/test_torch_rnn.py) checks the same
layers against PyTorch's at larger sizes."""
import math
import random
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.nn.rnn import _RNNBase
from jit_compare import CAPTURE_ON, assert_ran_eagerly

RNN_CONSTRUCT = _RNNBase.construct


# ---- the plain-Python reference ----------------------------------------------------------------

def sig(v):
    return 1.0 / (1.0 + math.exp(-v))


def matvec(w, v, b):
    return [sum(a * x for a, x in zip(row, v)) + (b[k] if b is not None else 0.0) for k, row in enumerate(w)]


def ref_step(mode, gi_w, gi_b, w_hh, b_hh, x, state):
    gi = matvec(gi_w, x, gi_b)
    if mode == "LSTM":
        h, c = state
        gates = [a + b for a, b in zip(gi, matvec(w_hh, h, b_hh))]
        n = len(h)
        i, f, g, o = (gates[k * n:(k + 1) * n] for k in range(4))
        c = [sig(fv) * cv + sig(iv) * math.tanh(gv) for iv, fv, gv, cv in zip(i, f, g, c)]
        return [sig(ov) * math.tanh(cv) for ov, cv in zip(o, c)], c
    gh = matvec(w_hh, state, b_hh)
    if mode == "GRU":
        n = len(state)
        r = [sig(gi[k] + gh[k]) for k in range(n)]
        z = [sig(gi[n + k] + gh[n + k]) for k in range(n)]
        cand = [math.tanh(gi[2 * n + k] + r[k] * gh[2 * n + k]) for k in range(n)]
        return [(1 - z[k]) * cand[k] + z[k] * state[k] for k in range(n)]
    act = math.tanh if mode == "RNN_TANH" else (lambda v: max(v, 0.0))
    return [act(a + b) for a, b in zip(gi, gh)]


def ref_rnn(mode, params, x, h0, c0, layers, nd, lengths=None):
    """x [T][B][in] -> (output [T][B][nd*H], h_n [L*nd][B][H], c_n or None); params by name."""
    steps, batch = len(x), len(x[0])
    lengths = lengths or [steps] * batch
    layer_in = x
    h_n, c_n = [], []
    for layer in range(layers):
        outs = []
        for d in range(nd):
            sfx = "_l%d%s" % (layer, "_reverse" if d else "")
            w_ih, w_hh = params["weight_ih" + sfx], params["weight_hh" + sfx]
            b_ih, b_hh = params.get("bias_ih" + sfx), params.get("bias_hh" + sfx)
            k = layer * nd + d
            out = [[None] * batch for _ in range(steps)]
            hk, ck = [], []
            for b in range(batch):
                state = (h0[k][b], c0[k][b]) if mode == "LSTM" else h0[k][b]
                n = lengths[b]
                order = range(n - 1, -1, -1) if d else range(n)
                for t in order:
                    state = ref_step(mode, w_ih, b_ih, w_hh, b_hh, layer_in[t][b], state)
                    out[t][b] = state[0] if mode == "LSTM" else state
                for t in range(n, steps):
                    out[t][b] = [0.0] * len(h0[k][b])
                hk.append(state[0] if mode == "LSTM" else state)
                ck.append(state[1] if mode == "LSTM" else None)
            outs.append(out)
            h_n.append(hk)
            c_n.append(ck)
        layer_in = [[sum((o[t][b] for o in outs), []) for b in range(batch)] for t in range(steps)]
    return layer_in, h_n, (c_n if mode == "LSTM" else None)


def rand_list(rng, *shape):
    if len(shape) == 1:
        return [rng.uniform(-1, 1) for _ in range(shape[0])]
    return [rand_list(rng, *shape[1:]) for _ in range(shape[0])]


def transpose01(v):
    return [list(r) for r in zip(*v)]


def max_diff(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (len(a), len(b))
        return max([max_diff(x, y) for x, y in zip(a, b)] or [0.0])
    return abs(a - b)


KINDS = (("LSTM", nn.LSTM, {}), ("GRU", nn.GRU, {}), ("RNN_TANH", nn.RNN, {}),
         ("RNN_RELU", nn.RNN, {"nonlinearity": "relu"}))


def make(cls, extra, *args, **kw):
    kw.update(extra)
    return cls(*args, **kw)


class RecurrentValues(unittest.TestCase):
    I, H, T, B = 3, 4, 5, 2

    def run_case(self, mode, cls, extra, layers, bi, batch_first, with_state, has_bias=True, lengths=None):
        rng = random.Random(hash((mode, layers, bi, batch_first, with_state, has_bias)) & 0xffff)
        pj.set_seed(5)
        net = make(cls, extra, self.I, self.H, layers, has_bias=has_bias, batch_first=batch_first,
                   bidirectional=bi)
        nd = 2 if bi else 1
        params = {name: p.tolist() for name, p in net.parameters_dict().items()}
        x = rand_list(rng, self.T, self.B, self.I)
        h0 = rand_list(rng, layers * nd, self.B, self.H) if with_state else [[[0.0] * self.H] * self.B] * (layers * nd)
        c0 = rand_list(rng, layers * nd, self.B, self.H) if with_state else h0
        xin = pj.Tensor(transpose01(x) if batch_first else x)
        hx = None
        if with_state:
            hx = (pj.Tensor(h0), pj.Tensor(c0)) if mode == "LSTM" else pj.Tensor(h0)
        args = (xin, hx) if lengths is None else (xin, hx, pj.Tensor(lengths))
        out, hn = net(*args)
        want_out, want_h, want_c = ref_rnn(mode, params, x, h0, c0, layers, nd, lengths)
        got_out = out.tolist()
        if batch_first:
            got_out = transpose01(got_out)
        what = "%s layers=%d bi=%s batch_first=%s state=%s bias=%s lengths=%s" % (
            mode, layers, bi, batch_first, with_state, has_bias, lengths)
        self.assertEqual(tuple(out.shape), (self.B, self.T, nd * self.H) if batch_first else (self.T, self.B, nd * self.H))
        self.assertLess(max_diff(got_out, want_out), 2e-6, what)
        if mode == "LSTM":
            self.assertIsInstance(hn, tuple)
            self.assertLess(max_diff(hn[0].tolist(), want_h), 2e-6, what)
            self.assertLess(max_diff(hn[1].tolist(), want_c), 2e-6, what)
        else:
            self.assertEqual(tuple(hn.shape), (layers * nd, self.B, self.H))
            self.assertLess(max_diff(hn.tolist(), want_h), 2e-6, what)
        return net, args, (out, hn)

    def test_every_kind_and_layout_equals_the_reference(self):
        for mode, cls, extra in KINDS:
            for layers, bi, batch_first, with_state in ((1, False, False, False), (2, False, True, True),
                                                       (1, True, False, True), (2, True, True, False)):
                self.run_case(mode, cls, extra, layers, bi, batch_first, with_state)

    def test_without_bias(self):
        for mode, cls, extra in KINDS:
            net, _, _ = self.run_case(mode, cls, extra, 2, True, False, True, has_bias=False)
            self.assertEqual([n for n in net.parameters_dict() if "bias" in n], [])

    def test_seq_length_keeps_the_state_past_each_length_and_zeroes_the_output(self):
        for mode, cls, extra in KINDS:
            for bi in (False, True):
                _, _, (out, hn) = self.run_case(mode, cls, extra, 2, bi, False, True, lengths=[5, 3])
                self.assertEqual(out.tolist()[4][1], [0.0] * (2 * self.H if bi else self.H))

    def test_cells_equal_one_reference_step(self):
        rng = random.Random(7)
        x, h, c = rand_list(rng, 3, self.I), rand_list(rng, 3, self.H), rand_list(rng, 3, self.H)
        for mode, cell in (("LSTM", nn.LSTMCell(self.I, self.H)), ("GRU", nn.GRUCell(self.I, self.H)),
                           ("RNN_TANH", nn.RNNCell(self.I, self.H)),
                           ("RNN_RELU", nn.RNNCell(self.I, self.H, nonlinearity="relu")),
                           ("GRU", nn.GRUCell(self.I, self.H, has_bias=False))):
            p = {n: v.tolist() for n, v in cell.parameters_dict().items()}
            self.assertEqual(list(p), ["weight_ih", "weight_hh", "bias_ih", "bias_hh"] if cell.has_bias
                             else ["weight_ih", "weight_hh"])
            args = (p["weight_ih"], p.get("bias_ih"), p["weight_hh"], p.get("bias_hh"))
            if mode == "LSTM":
                got = cell(pj.Tensor(x), (pj.Tensor(h), pj.Tensor(c)))
                self.assertIsInstance(got, tuple)
                for b in range(3):
                    wh, wc = ref_step(mode, *args, x[b], (h[b], c[b]))
                    self.assertLess(max_diff(got[0].tolist()[b], wh), 2e-6)
                    self.assertLess(max_diff(got[1].tolist()[b], wc), 2e-6)
            else:
                got = cell(pj.Tensor(x), pj.Tensor(h)).tolist()
                for b in range(3):
                    self.assertLess(max_diff(got[b], ref_step(mode, *args, x[b], h[b])), 2e-6, mode)


class RecurrentParameters(unittest.TestCase):
    def test_names_order_shapes_and_initial_range(self):
        net = nn.LSTM(3, 5, 2, bidirectional=True)
        names = list(net.parameters_dict())
        grid = ["l0", "l0_reverse", "l1", "l1_reverse"]
        self.assertEqual(names, ["%s_%s" % (k, s) for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh") for s in grid])
        self.assertEqual([p.name for p in net.trainable_params()], names)
        shapes = {n: tuple(p.shape) for n, p in net.parameters_dict().items()}
        self.assertEqual((shapes["weight_ih_l0"], shapes["weight_ih_l1_reverse"], shapes["weight_hh_l1"],
                          shapes["bias_hh_l0_reverse"]), ((20, 3), (20, 10), (20, 5), (20,)))
        self.assertEqual(len(net.w_ih_list), 4)
        self.assertEqual([p.name for p in net.b_hh_list], ["bias_hh_" + s for s in grid])
        bound = 1 / math.sqrt(5)
        for p in net.get_parameters():
            vals = p.reshape((-1,)).tolist()
            self.assertTrue(all(-bound <= v <= bound for v in vals), p.name)
            self.assertGreater(max(vals) - min(vals), bound)  # spread over the range, not constant
        self.assertEqual([tuple(p.shape) for p in nn.GRU(3, 5).trainable_params()], [(15, 3), (15, 5), (15,), (15,)])
        self.assertEqual([tuple(p.shape) for p in nn.RNN(3, 5).trainable_params()], [(5, 3), (5, 5), (5,), (5,)])

    def test_a_child_layer_prefixes_its_names(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.encoder = nn.GRU(2, 3)
        self.assertEqual(list(Net().parameters_dict()),
                         ["encoder.weight_ih_l0", "encoder.weight_hh_l0", "encoder.bias_ih_l0", "encoder.bias_hh_l0"])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "For 'LSTM', the type of 'hidden_size' should be int"):
            nn.LSTM(3, 2.0)
        with self.assertRaisesRegex(ValueError, "For 'GRU', the 'num_layers' should be an int >= 1"):
            nn.GRU(3, 4, 0)
        with self.assertRaisesRegex(ValueError, r"'dropout' must be a number in range \[0, 1\)"):
            nn.LSTM(3, 4, 2, dropout=1.0)
        with self.assertRaisesRegex(TypeError, "'bidirectional' should be bool"):
            nn.LSTM(3, 4, bidirectional=1)
        with self.assertRaisesRegex(ValueError, "'nonlinearity' should be one of 'tanh', 'relu'"):
            nn.RNN(3, 4, nonlinearity="sigmoid")
        with self.assertRaisesRegex(ValueError, "'nonlinearity' should be one of 'tanh', 'relu'"):
            nn.RNNCell(3, 4, nonlinearity="gelu")
        net = nn.LSTM(3, 4, 2)
        x = pj.ones((5, 2, 3))
        with self.assertRaisesRegex(TypeError, "the type of 'hx' should be tuple"):
            net(x, pj.zeros((2, 2, 4)))
        with self.assertRaisesRegex(ValueError, r"the shape of 'hx\[0\]' should be \(2, 2, 4\), but got \(1, 2, 4\)"):
            net(x, (pj.zeros((1, 2, 4)), pj.zeros((2, 2, 4))))
        with self.assertRaisesRegex(ValueError, "the dimension of 'x' should be 3"):
            net(pj.ones((2, 3)))
        with self.assertRaisesRegex(ValueError, "the size of 'x' at axis 2 should be input_size=3"):
            net(pj.ones((5, 2, 4)))
        with self.assertRaisesRegex(TypeError, "the dtype of 'seq_length' should be int32 or int64"):
            net(x, None, pj.Tensor([1.0, 2.0]))
        with self.assertRaisesRegex(ValueError, "batch size of x and seq_length must be equal"):
            net(x, None, pj.Tensor([1, 2, 3]))
        with self.assertRaisesRegex(ValueError, r"the shape of 'hx' should be \(2, 4\)"):
            nn.GRUCell(3, 4)(pj.ones((2, 3)), pj.zeros((3, 4)))
        with self.assertRaisesRegex(TypeError, "the type of 'hx' should be tuple"):
            nn.LSTMCell(3, 4)(pj.ones((2, 3)), pj.zeros((2, 4)))

    def test_dropout_only_in_training_between_layers(self):
        pj.set_seed(1)
        net = nn.GRU(3, 4, 2, dropout=0.5)
        x = pj.ones((4, 2, 3))
        a, b = net(x)[0].tolist(), net(x)[0].tolist()
        self.assertEqual(a, b)  # eval mode: no dropout
        net.set_train(True)
        c = net(x)[0].tolist()
        self.assertNotEqual(a, c)


class LossNet(nn.Cell):
    """sum(output * wo) + sum(h_n * wh) (+ sum(c_n * wc)): every output reaches the gradient."""

    def __init__(self, rnn, wo, wh, wc=None):
        super().__init__()
        self.rnn, self.wo, self.wh, self.wc = rnn, pj.Tensor(wo), pj.Tensor(wh), wc and pj.Tensor(wc)

    def construct(self, x, h, c, lengths):
        if c is None:
            out, hn = self.rnn(x, h, lengths)
            return (out * self.wo).sum() + (hn * self.wh).sum()
        out, (hn, cn) = self.rnn(x, (h, c), lengths)
        return (out * self.wo).sum() + (hn * self.wh).sum() + (cn * self.wc).sum()


class RecurrentGradients(unittest.TestCase):
    def check(self, mode, cls, extra, bi, lengths):
        I, H, T, B, L = 2, 2, 3, 2, 2
        nd = 2 if bi else 1
        rng = random.Random(3)
        pj.set_seed(9)
        rnn = make(cls, extra, I, H, L, bidirectional=bi)
        x, h0, c0 = rand_list(rng, T, B, I), rand_list(rng, L * nd, B, H), rand_list(rng, L * nd, B, H)
        wo, wh, wc = rand_list(rng, T, B, nd * H), rand_list(rng, L * nd, B, H), rand_list(rng, L * nd, B, H)
        lstm = mode == "LSTM"
        net = LossNet(rnn, wo, wh, wc if lstm else None)
        params = list(rnn.trainable_params())
        args = (pj.Tensor(x), pj.Tensor(h0), pj.Tensor(c0) if lstm else None,
                None if lengths is None else pj.Tensor(lengths))
        grads = ops.GradOperation(get_all=True, get_by_list=True)(net, pj.ParameterTuple(params))(*args)
        (gx, gh), gw = grads[0][:2], grads[1]
        gc = grads[0][2] if lstm else None
        values = {p.name.split(".")[-1]: p.tolist() for p in params}  # (LossNet prefixes "rnn.")

        def loss(vals, xs, hs, cs):
            out, hn, cn = ref_rnn(mode, vals, xs, hs, cs, L, nd, lengths)
            total = sum(o * w for ot, wt in zip(out, wo) for ob, wb in zip(ot, wt) for o, w in zip(ob, wb))
            total += sum(v * w for a, b in zip(hn, wh) for r, s in zip(a, b) for v, w in zip(r, s))
            if lstm:
                total += sum(v * w for a, b in zip(cn, wc) for r, s in zip(a, b) for v, w in zip(r, s))
            return total

        def numeric(get, put):
            eps = 1e-6
            v = get()
            put(v + eps)
            up = loss(values, x, h0, c0)
            put(v - eps)
            down = loss(values, x, h0, c0)
            put(v)
            return (up - down) / (2 * eps)

        def walk(nested, got, what):
            """Every element of the nested list `nested`, perturbed in place, against `got`."""
            flat_got = got.reshape((-1,)).tolist()
            cells = []

            def collect(v):
                for k in range(len(v)):
                    if isinstance(v[k], list):
                        collect(v[k])
                    else:
                        cells.append((v, k))
            collect(nested)
            self.assertEqual(len(cells), len(flat_got), what)
            for (v, k), g in zip(cells, flat_got):
                def put(val, v=v, k=k):
                    v[k] = val
                n = numeric(lambda v=v, k=k: v[k], put)
                self.assertLess(abs(n - g), 2e-4 * (1 + abs(n)), "%s %s: numeric %r, pijit %r" % (mode, what, n, g))

        for p, g in zip(params, gw):
            walk(values[p.name.split(".")[-1]], g, p.name)
        walk(x, gx, "x")
        walk(h0, gh, "h0")
        if lstm:
            walk(c0, gc, "c0")

    def test_gradients_equal_central_differences(self):
        for mode, cls, extra in KINDS:
            self.check(mode, cls, extra, True, None)

    def test_gradients_with_seq_length(self):
        for mode, cls, extra in KINDS[:2]:
            self.check(mode, cls, extra, True, [3, 2])


class RecurrentCapture(unittest.TestCase):
    def test_jitted_forward_is_one_graph_equal_to_eager(self):
        rng = random.Random(11)
        for mode, cls, extra in KINDS:
            for bi, batch_first, with_len in ((False, False, False), (True, True, True)):
                pj.set_seed(2)
                net = make(cls, extra, 3, 4, 2, batch_first=batch_first, bidirectional=bi)
                x = pj.Tensor(rand_list(rng, 2 if batch_first else 6, 6 if batch_first else 2, 3))
                h = pj.Tensor(rand_list(rng, 4 if bi else 2, 2, 4))
                hx = (h, h * 0.5) if mode == "LSTM" else h
                args = (x, hx, pj.Tensor([6, 4])) if with_len else (x, hx)
                want = net(*args)
                jnet = pj.jit(net)
                pj.reset(RNN_CONSTRUCT)  # (one construct for every layer: at most 8 entries are kept)
                before = pj.jit_stats(RNN_CONSTRUCT)
                got = [jnet(*args) for _ in range(3)]
                if CAPTURE_ON:
                    st = pj.jit_stats(RNN_CONSTRUCT)
                    added = [st[k] - before[k] for k in ("graphs", "breaks", "cache_hits")]
                    self.assertEqual(added, [1, 0, 2], (mode, bi, st["break_reasons"]))
                else:
                    assert_ran_eagerly(self, jnet)
                for g in got:
                    self.assertEqual(g[0].tolist(), want[0].tolist(), mode)
                    if mode == "LSTM":
                        self.assertEqual((g[1][0].tolist(), g[1][1].tolist()), (want[1][0].tolist(), want[1][1].tolist()))
                    else:
                        self.assertEqual(g[1].tolist(), want[1].tolist())

    def test_the_batch_size_stays_dynamic_without_an_initial_state(self):
        # nothing in the layer reads the batch size in Python when hx and seq_length are absent:
        # the second size recompiles once into a graph that serves every later size
        pj.set_seed(3)
        for cls, batch_first in ((nn.LSTM, False), (nn.GRU, True)):
            net = cls(3, 4, 2, bidirectional=True, batch_first=batch_first)
            jnet = pj.jit(net)
            pj.reset(RNN_CONSTRUCT)
            before = pj.jit_stats(RNN_CONSTRUCT)
            for b in (2, 3, 5, 7, 4):
                x = pj.randn(b, 4, 3) if batch_first else pj.randn(4, b, 3)
                got, want = jnet(x), net(x)
                self.assertEqual(got[0].tolist(), want[0].tolist())
            if CAPTURE_ON:
                st = pj.jit_stats(RNN_CONSTRUCT)
                self.assertEqual([st[k] - before[k] for k in ("graphs", "recompiles", "breaks", "cache_hits")],
                                 [2, 1, 0, 3], st["recompile_reasons"][-3:])
            else:
                assert_ran_eagerly(self, jnet)

    def test_a_jitted_training_step_is_one_graph_with_the_eager_weights_and_the_loss_falls(self):
        class Classifier(nn.Cell):
            def __init__(self, cls, extra):
                super().__init__()
                self.rnn = make(cls, extra, 3, 8, 2, batch_first=True, bidirectional=True)
                self.fc = nn.Dense(16, 2)

            def construct(self, x):
                out, _ = self.rnn(x)
                return self.fc(out[:, -1, :])

        rng = random.Random(4)
        xs = rand_list(rng, 8, 5, 3)
        ys = [int(sum(v[0] for v in seq) > 0) for seq in xs]  # the sign of the summed first feature
        x, y = pj.Tensor(xs), pj.Tensor(ys)

        def train(cls, extra, jit, steps=12):
            pj.set_seed(6)
            net = Classifier(cls, extra)
            net.set_train(True)
            step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.Adam(net.trainable_params(), 0.03))
            run = pj.jit(step) if jit else step
            return net, run, [float(run(x, y)) for _ in range(steps)]

        for mode, cls, extra in KINDS[:3]:
            pj.reset(nn.TrainOneStepCell.construct)  # (shared by every step cell: at most 8 entries are kept)
            before = pj.jit_stats(nn.TrainOneStepCell.construct)
            eager, _, le = train(cls, extra, False)
            jitted, run, lj = train(cls, extra, True)
            if CAPTURE_ON:
                st = pj.jit_stats(run)
                self.assertEqual([st[k] - before[k] for k in ("graphs", "breaks", "cache_hits")], [1, 0, 11],
                                 (mode, st["break_reasons"]))
            else:
                assert_ran_eagerly(self, run)
            self.assertEqual(le, lj, mode)
            for a, b in zip(eager.get_parameters(), jitted.get_parameters()):
                self.assertEqual(a.tolist(), b.tolist(), "%s %s" % (mode, a.name))
            self.assertLess(le[-1], 0.5 * le[0], (mode, le))


class PadLayer(unittest.TestCase):
    X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

    def test_mindspore_documented_values(self):
        x = pj.Tensor(self.X)
        self.assertEqual(nn.Pad(((1, 1), (2, 2)))(x).tolist(),
                         [[0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 2, 3, 0, 0], [0, 0, 4, 5, 6, 0, 0], [0, 0, 0, 0, 0, 0, 0]])
        self.assertEqual(nn.Pad(((1, 1), (2, 2)), mode="REFLECT")(x).tolist(),
                         [[6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1], [6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1]])
        self.assertEqual(nn.Pad(((1, 1), (2, 2)), mode="SYMMETRIC")(x).tolist(),
                         [[2, 1, 1, 2, 3, 3, 2], [2, 1, 1, 2, 3, 3, 2], [5, 4, 4, 5, 6, 6, 5], [5, 4, 4, 5, 6, 6, 5]])

    def test_uneven_and_full_width_mirrors(self):
        row = pj.Tensor([[1, 2, 3, 4]])
        self.assertEqual(nn.Pad(((0, 0), (3, 1)), "REFLECT")(row).tolist(), [[4, 3, 2, 1, 2, 3, 4, 3]])
        self.assertEqual(nn.Pad(((0, 0), (4, 2)), "SYMMETRIC")(row).tolist(), [[4, 3, 2, 1, 1, 2, 3, 4, 4, 3]])
        self.assertEqual(nn.Pad(((1, 0), (0, 1)), "SYMMETRIC")(row).tolist(), [[1, 2, 3, 4, 4], [1, 2, 3, 4, 4]])
        self.assertEqual(nn.Pad(((0, 1), (1, 0)))(row).tolist(), [[0, 1, 2, 3, 4], [0, 0, 0, 0, 0]])
        self.assertEqual(nn.Pad(((0, 1), (1, 0)))(row).dtype, pj.int64)

    def test_four_dims(self):
        x = pj.arange(0, 8, dtype=pj.float32).reshape((1, 2, 2, 2))
        got = nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1)), "REFLECT")(x)
        self.assertEqual(tuple(got.shape), (1, 2, 4, 4))
        self.assertEqual(got.tolist()[0][0], [[3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0]])

    def test_gradients_add_up_over_the_copies(self):
        x = pj.Tensor(self.X)
        for mode, want in (("CONSTANT", [[1, 1, 1], [1, 1, 1]]), ("REFLECT", [[1, 3, 2], [1, 3, 2]]),
                           ("SYMMETRIC", [[2, 2, 2], [2, 2, 2]])):
            pad = nn.Pad(((0, 0), (2, 1)), mode)
            g = ops.GradOperation()(lambda v: pad(v).sum())(x)
            self.assertEqual(g.tolist(), want, mode)

    def test_jitted_is_one_graph(self):
        x = pj.Tensor(self.X)
        for mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            pad = nn.Pad(((1, 1), (2, 2)), mode)
            want = pad(x).tolist()
            jpad = pj.jit(pad)
            pj.reset(nn.Pad.construct)
            before = pj.jit_stats(nn.Pad.construct)
            self.assertEqual([jpad(x).tolist() for _ in range(2)], [want, want])
            if CAPTURE_ON:
                st = pj.jit_stats(nn.Pad.construct)
                self.assertEqual([st[k] - before[k] for k in ("graphs", "breaks")], [1, 0], st["break_reasons"])
            else:
                assert_ran_eagerly(self, jpad)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "the type of 'paddings' must be tuple, but got list"):
            nn.Pad([[1, 1]])
        with self.assertRaisesRegex(ValueError, r"the dimension of 'paddings' must be \(n, 2\)"):
            nn.Pad(((1, 1, 1),))
        with self.assertRaisesRegex(ValueError, "only 'paddings' up to 4 dims is supported, but got 5"):
            nn.Pad(((0, 0),) * 5)
        with self.assertRaisesRegex(ValueError, "'mode' should be one of 'CONSTANT', 'REFLECT', 'SYMMETRIC'"):
            nn.Pad(((1, 1),), "EDGE")
        with self.assertRaisesRegex(ValueError, "every padding must be a non-negative int"):
            nn.Pad(((-1, 1),))
        x = pj.Tensor(self.X)
        with self.assertRaisesRegex(ValueError, "the dimension of 'x' should be 1"):
            nn.Pad(((1, 1),))(x)
        with self.assertRaisesRegex(ValueError, r"in mode REFLECT the paddings of dim 1 must be at most 2"):
            nn.Pad(((0, 0), (3, 0)), "REFLECT")(x)
        with self.assertRaisesRegex(ValueError, r"in mode SYMMETRIC the paddings of dim 0 must be at most 2"):
            nn.Pad(((0, 3), (0, 0)), "SYMMETRIC")(x)


class ClipByNormLayer(unittest.TestCase):
    def test_values(self):
        clip = nn.ClipByNorm()
        self.assertEqual(clip(pj.Tensor([[3.0, 4.0]]), pj.Tensor(1.0)).tolist(), [[0.6000000238418579, 0.800000011920929]])
        self.assertEqual(clip(pj.Tensor([[3.0, 4.0]]), pj.Tensor([10.0])).tolist(), [[3.0, 4.0]])  # under the norm: unchanged
        self.assertEqual(clip(pj.Tensor([[0.0, 0.0]]), pj.Tensor(1.0)).tolist(), [[0.0, 0.0]])
        rows = nn.ClipByNorm(axis=1)(pj.Tensor([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4], [6.0, 8.0]]), pj.Tensor(2.0))
        self.assertEqual(rows.tolist(), [[1.2000000476837158, 1.600000023841858], [0.0, 0.0],
                                         [0.30000001192092896, 0.4000000059604645], [1.2000000476837158, 1.600000023841858]])
        cols = nn.ClipByNorm(axis=(0,))(pj.Tensor([[3.0, 1.0], [4.0, 0.0]]), pj.Tensor(2.5))
        self.assertEqual(cols.tolist(), [[1.5, 1.0], [2.0, 0.0]])
        self.assertEqual(clip(pj.Tensor([[3.0, 4.0]], dtype=pj.float64), pj.Tensor(1.0)).dtype, pj.float32)

    def test_gradient(self):
        clip = nn.ClipByNorm()
        g = ops.GradOperation()(lambda v: (clip(v, pj.Tensor(1.0)) * pj.Tensor([[1.0, 2.0]])).sum())
        # w / |x| - (w . x) x / |x|^3 at x = (3, 4), w = (1, 2): (0.2 - 0.264, 0.4 - 0.352)
        got = g(pj.Tensor([[3.0, 4.0]])).tolist()[0]
        self.assertLess(max(abs(got[0] + 0.064), abs(got[1] - 0.048)), 1e-7, got)
        self.assertEqual(g(pj.Tensor([[0.0, 0.0]])).tolist(), [[1.0, 2.0]])  # a zero norm: identity, finite

    def test_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "the type of 'axis' should be None, int or tuple, but got str"):
            nn.ClipByNorm("0")
        with self.assertRaisesRegex(TypeError, "the dtype of 'x' should be floating"):
            nn.ClipByNorm()(pj.Tensor([1, 2]), pj.Tensor(1.0))

    def test_jitted_is_one_graph(self):
        clip = nn.ClipByNorm(axis=1)
        x, c = pj.Tensor([[3.0, 4.0], [0.1, 0.2]]), pj.Tensor(1.0)
        want = clip(x, c).tolist()
        jclip = pj.jit(clip)
        pj.reset(nn.ClipByNorm.construct)
        before = pj.jit_stats(nn.ClipByNorm.construct)
        self.assertEqual([jclip(x, c).tolist() for _ in range(2)], [want, want])
        if CAPTURE_ON:
            st = pj.jit_stats(nn.ClipByNorm.construct)
            self.assertEqual([st[k] - before[k] for k in ("graphs", "breaks")], [1, 0], st["break_reasons"])
        else:
            assert_ran_eagerly(self, jclip)


if __name__ == "__main__":
    unittest.main()
