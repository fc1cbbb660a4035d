"""nn.Cell machinery, Parameter, initializers, containers, checkpoints, context, primitives."""
import os
import sys
import tempfile
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.common.initializer import initializer, Normal, HeUniform, TruncatedNormal
from jit_compare import assert_ran_eagerly, no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = pj.Parameter(pj.ones(2, 2), name="w")
        self.frozen = pj.Parameter(pj.zeros(2), name="frozen", requires_grad=False)

    def construct(self, x):
        return x @ self.w + self.frozen


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Inner()
        self.b = Inner()
        self.scale = 3

    def construct(self, x):
        return self.b(self.a(x)) * self.scale


class TestCell(unittest.TestCase):
    def test_registration_and_names(self):
        net = Outer()
        names = [n for n, _ in net.parameters_and_names()]
        self.assertEqual(names, ["a.w", "a.frozen", "b.w", "b.frozen"])
        self.assertEqual([p.name for p in net.get_parameters()], names)
        self.assertEqual([p.name for p in net.trainable_params()], ["a.w", "b.w"])
        self.assertEqual([n for n, _ in net.cells_and_names()], ["", "a", "b"])
        self.assertEqual(net.scale, 3)
        self.assertEqual(len(net.cells()), 2)

    def test_call_runs_construct(self):
        net = Outer()
        y = net(pj.Tensor([[1.0, 1.0]]))
        self.assertEqual(y.tolist(), [[12.0, 12.0]])

    def test_shared_parameter_listed_once(self):
        net = Outer()
        net.b.w = net.a.w
        self.assertEqual(len(list(net.get_parameters())), 3)

    def test_set_train_recurses(self):
        net = Outer()
        self.assertFalse(net.training)
        net.set_train()
        self.assertTrue(net.a.training and net.b.training)
        net.set_train(False)
        self.assertFalse(net.b.training)

    def test_repr_lists_children(self):
        self.assertEqual(repr(Outer()), "Outer<\n  (a): Inner<>\n  (b): Inner<>\n  >")
        self.assertEqual(repr(nn.Dense(4, 2)),
                         "Dense<input_channels=4, output_channels=2, has_bias=True>")

    def test_assign_before_init_is_explained(self):
        class Bad(nn.Cell):
            def __init__(self):
                self.p = pj.Parameter(pj.ones(1))
                super().__init__()
        with self.assertRaises(AttributeError) as cm:
            Bad()
        self.assertIn("super().__init__()", str(cm.exception))

    def test_insert_param_to_cell(self):
        c = nn.Cell()
        c.insert_param_to_cell("extra", pj.Parameter(pj.ones(1)))
        self.assertEqual(c.extra.name, "extra")
        with self.assertRaises(KeyError):
            c.insert_param_to_cell("a.b", pj.Parameter(pj.ones(1)))
        with self.assertRaises(TypeError):
            c.insert_param_to_cell("t", pj.ones(1))

    def test_assigning_a_tensor_to_a_parameter_writes_its_values(self):
        # MindSpore's Cell.__setattr__: a Tensor assigned to a Parameter's name is set_data on it
        net = Inner()
        w = net.w
        net.w = pj.full((2, 2), 3.0)
        self.assertIs(net.w, w)
        self.assertEqual(w.tolist(), [[3.0, 3.0], [3.0, 3.0]])
        with self.assertRaisesRegex(TypeError, "parameter 'w' already exists; cannot assign a list"):
            net.w = [1.0, 2.0]
        with self.assertRaisesRegex(ValueError, "set_data with shape"):
            net.w = pj.ones(3)

    def test_construct_missing(self):
        with self.assertRaises(NotImplementedError):
            nn.Cell()(1)

    def test_to_float_casts_inputs(self):
        class Echo(nn.Cell):
            def construct(self, x):
                return x
        self.assertIs(Echo().to_float(pj.float64)(pj.ones(2)).dtype, pj.float64)


class TestParameter(unittest.TestCase):
    def test_parameter_is_a_tensor(self):
        p = pj.Parameter(pj.Tensor([1.0, 2.0]), name="p")
        self.assertIsInstance(p, pj.Tensor)
        self.assertEqual((p * 2).tolist(), [2.0, 4.0])
        self.assertIs(type(p * 2), pj.Tensor)
        self.assertEqual(repr(p), "Parameter (name=p, shape=(2,), dtype=Float32, requires_grad=True)")

    def test_set_data(self):
        p = pj.Parameter(pj.zeros(2), name="p")
        p.set_data(pj.Tensor([3.0, 4.0]))
        self.assertEqual(p.tolist(), [3.0, 4.0])
        with self.assertRaises(ValueError) as cm:
            p.set_data(pj.zeros(3))
        self.assertIn("(3,)", str(cm.exception))

    def test_name_type(self):
        with self.assertRaises(TypeError):
            pj.Parameter(pj.zeros(1), name=3)


class TestInitializers(unittest.TestCase):
    def test_seeded_and_deterministic(self):
        pj.set_seed(7)
        a = initializer("he_uniform", (8, 4))
        b = initializer(Normal(0.02), (3, 3))
        pj.set_seed(7)
        self.assertEqual(initializer("he_uniform", (8, 4)).tolist(), a.tolist())
        self.assertEqual(initializer(Normal(0.02), (3, 3)).tolist(), b.tolist())

    def test_bounds(self):
        w = initializer(HeUniform(), (64, 16))  # bound = sqrt(2) * sqrt(3 / 16)
        self.assertLessEqual(w.abs().max().item(), (2 ** 0.5) * (3 / 16) ** 0.5 + 1e-6)
        # MindSpore's a and b are absolute bounds (default [-2, 2]); two sigmas are asked for.
        t = initializer(TruncatedNormal(0.1, 0.0, -0.2, 0.2), (1000,))
        self.assertLessEqual(t.abs().max().item(), 0.2 + 1e-6)
        self.assertLessEqual(initializer(TruncatedNormal(1.0), (1000,)).abs().max().item(), 2.0)
        self.assertEqual(initializer("zeros", (2,)).tolist(), [0.0, 0.0])
        self.assertEqual(initializer(2.5, (1,)).tolist(), [2.5])
        self.assertIs(initializer("ones", (1,), pj.float64).dtype, pj.float64)

    def test_errors(self):
        with self.assertRaises(ValueError):
            initializer("bogus", (2,))
        with self.assertRaises(ValueError):
            initializer("normal")

    def test_layers_are_seeded(self):
        pj.set_seed(3)
        a = nn.Dense(5, 3)
        pj.set_seed(3)
        b = nn.Dense(5, 3)
        self.assertEqual(a.weight.tolist(), b.weight.tolist())
        self.assertEqual(a.bias.tolist(), b.bias.tolist())


class TestContainers(unittest.TestCase):
    def test_sequential(self):
        seq = nn.SequentialCell([nn.ReLU(), nn.Identity()])
        self.assertEqual(len(seq), 2)
        self.assertEqual(seq(pj.Tensor([-1.0, 2.0])).tolist(), [0.0, 2.0])
        self.assertIsInstance(seq[0], nn.ReLU)
        with self.assertRaises(TypeError):
            nn.SequentialCell([1])

    def test_sequential_item_assignment_and_deletion(self):
        seq = nn.SequentialCell([nn.ReLU(), nn.Identity(), nn.Sigmoid()])
        x = pj.Tensor([-1.0, 2.0])
        seq[-1] = nn.Identity()  # MindSpore's: replaces the cell at that position
        self.assertEqual(seq(x).tolist(), [0.0, 2.0])
        del seq[0]
        self.assertEqual((len(seq), seq(x).tolist()), (2, [-1.0, 2.0]))
        del seq[0:1]
        self.assertEqual(len(seq), 1)
        with self.assertRaisesRegex(IndexError, "SequentialCell index 3 out of range for 1 cells"):
            seq[3] = nn.ReLU()
        with self.assertRaisesRegex(TypeError, "SequentialCell indices must be integers, not str"):
            seq["0"] = nn.ReLU()
        with self.assertRaisesRegex(TypeError, "every element must be a Cell, got int"):
            seq[0] = 1
        cl = nn.CellList([nn.ReLU()])
        with self.assertRaisesRegex(IndexError, "CellList index -2 out of range for 1 cells"):
            cl[-2] = nn.ReLU()

    def test_cell_list_and_dict(self):
        cl = nn.CellList([Inner(), Inner()])
        cl.append(Inner())
        self.assertEqual(len(cl), 3)
        self.assertEqual(len(list(cl.get_parameters())), 6)
        self.assertEqual([n for n, _ in cl.parameters_and_names()][:2], ["0.w", "0.frozen"])
        cd = nn.CellDict({"relu": nn.ReLU()})
        self.assertIn("relu", cd)
        self.assertEqual(list(cd.keys()), ["relu"])


class TestCheckpoint(unittest.TestCase):
    def test_round_trip(self):
        net = Outer()
        net.a.w.set_data(pj.Tensor([[1.0, 2.0], [3.0, 4.0]]))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "net.ckpt")
            pj.save_checkpoint(net, path, append_dict={"epoch": 3})
            params = pj.load_checkpoint(path)
            self.assertEqual(params["epoch"], 3)
            self.assertEqual(params["a.w"].tolist(), [[1.0, 2.0], [3.0, 4.0]])
            self.assertFalse(params["a.frozen"].requires_grad)
            fresh = Outer()
            not_loaded, unused = pj.load_param_into_net(fresh, params)
            self.assertEqual((not_loaded, unused), ([], []))
            self.assertEqual(fresh.a.w.tolist(), [[1.0, 2.0], [3.0, 4.0]])

    def test_shape_mismatch_and_bad_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.ckpt")
            pj.save_checkpoint([{"name": "a.w", "data": pj.ones(3)}], path)
            with self.assertRaises(ValueError) as cm:
                pj.load_param_into_net(Outer(), pj.load_checkpoint(path))
            self.assertIn("(2, 2)", str(cm.exception))
            bad = os.path.join(d, "bad.ckpt")
            with open(bad, "wb") as f:
                f.write(b"nope")
            with self.assertRaises(ValueError):
                pj.load_checkpoint(bad)
            with self.assertRaises(ValueError):
                pj.load_checkpoint(os.path.join(d, "missing.ckpt"))

    def test_every_dtype(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.ckpt")
            data = {n: pj.Tensor([[1, 0], [0, 1]], dt) for n, dt in
                    (("b", pj.bool_), ("i", pj.int32), ("l", pj.int64), ("f", pj.float32),
                     ("d", pj.float64))}
            data["scalar"] = pj.Tensor(2.5)
            data["empty"] = pj.zeros(0, 3)
            pj.save_checkpoint(data, path)
            back = pj.load_checkpoint(path)
            for k, v in data.items():
                self.assertIs(back[k].dtype, v.dtype)
                self.assertEqual(back[k].shape, v.shape)
                self.assertEqual(back[k].tolist(), v.tolist())


class TestContextAndPrimitives(unittest.TestCase):
    def test_context(self):
        self.assertEqual(pj.get_context("mode"), pj.PYNATIVE_MODE)
        with self.assertRaises(ValueError):
            pj.set_context(mode=5)
        with self.assertRaises(ValueError):
            pj.set_context(device_target="TPU")
        with self.assertRaises(ValueError):
            pj.set_context(bogus=1)
        self.assertEqual(str(pj.mstype.float32), "Float32")
        from pijit.common import dtype as mstype
        self.assertIs(mstype.int32, pj.int32)

    def test_primitives(self):
        self.assertEqual(repr(ops.Add()), "Prim[Add]")
        self.assertEqual(repr(ops.MatMul(transpose_b=True)),
                         "Prim[MatMul]<transpose_a=False, transpose_b=True>")
        a = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(ops.Add()(a, a).tolist(), [[2, 4], [6, 8]])
        self.assertEqual(ops.MatMul(transpose_b=True)(a, a).tolist(), [[5, 11], [11, 25]])
        self.assertEqual(ops.ReduceSum(keep_dims=True)(a, 1).tolist(), [[3], [7]])
        self.assertEqual(ops.ReduceMean()(a).item(), 2.5)
        self.assertEqual(ops.Concat(1)((a, a)).shape, (2, 4))
        self.assertEqual(ops.Reshape()(a, (4,)).shape, (4,))
        self.assertEqual(ops.Transpose()(a, (1, 0)).tolist(), [[1, 3], [2, 4]])
        self.assertIs(ops.Cast()(a, pj.int32).dtype, pj.int32)
        self.assertEqual(ops.Select()(a > 2, a, 0.0).tolist(), [[0, 0], [3, 4]])
        self.assertIs(ops.Depend()(a, a + 1), a)
        with self.assertRaises(TypeError):
            ops.Add()(a)



class WatchedAssignments(unittest.TestCase):
    """Cell and Tensor count __class__ and __dict__ assignments (the guards trust an unchanged Cell
    without reading either): both read and assign as Python's own, errors included."""

    def test_they_read_and_assign_as_plain_classes_do(self):
        class Plain(object):
            pass

        class Other(nn.Cell):
            pass
        c, p = Inner(), Plain()
        self.assertIs(c.__class__, Inner)
        self.assertIs(vars(c), c.__dict__)
        d = dict(c.__dict__)
        c.__dict__ = d
        self.assertIs(c.__dict__, d)
        c.__class__ = Other
        self.assertIs(type(c), Other)
        self.assertIs(pj.ones(2).__class__, pj.Tensor)
        for target in (c, pj.ones(2)):
            for plain, bad in ((p, int), (Plain(), 5)):
                with self.assertRaises(TypeError) as want:
                    plain.__class__ = bad
                with self.assertRaises(TypeError) as got:
                    target.__class__ = bad
                self.assertEqual(str(got.exception).replace(type(target).__name__, "X"),
                                 str(want.exception).replace("Plain", "X"))
            with self.assertRaises(TypeError) as want:
                del p.__class__
            with self.assertRaises(TypeError) as got:
                del target.__class__
            self.assertEqual(str(got.exception), str(want.exception))
        with self.assertRaises(TypeError) as want:
            p.__dict__ = 5
        with self.assertRaises(TypeError) as got:
            c.__dict__ = 5
        self.assertEqual(str(got.exception), str(want.exception))
        for plain in (p, c):  # (deleting it leaves an empty one behind, as Python's own does)
            del plain.__dict__
            self.assertEqual(vars(plain), {})
        self.assertEqual(vars(nn.Cell)["__dict__"].__doc__, vars(Plain)["__dict__"].__doc__)

    def test_copies_and_pickles_keep_their_class(self):
        import copy
        import pickle
        c = Inner()
        for twin in (copy.copy(c), copy.deepcopy(c), pickle.loads(pickle.dumps(c))):
            self.assertIs(type(twin), Inner)

    def test_watching_wants_a_class(self):
        with self.assertRaisesRegex(TypeError, "_watch_rebinds: expected a class defined in Python"):
            pj._C._watch_rebinds(5)

if __name__ == "__main__":
    unittest.main()


class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.k = 2.0

    def construct(self, x):
        return x * self.k + 1


class Logged(Scaled):
    calls = 0

    def __call__(self, *args):  # its own __call__: pijit.jit must run it, not only construct
        Logged.calls += 1
        return super().__call__(*args)


class JittedCellCall(unittest.TestCase):
    """pijit.jit(cell)(x) runs construct directly when Cell.__call__ would only call it
    (runtime/jit_objects.cc: direct_construct); every other case goes through __call__."""

    def test_plain_cell_is_captured(self):
        class Own(Scaled):  # stats are per code object: a construct of its own
            def construct(self, x):
                return x * self.k + 1
        c = Own()
        j = pj.jit(c)
        for _ in range(3):
            self.assertEqual(j(pj.Tensor([1.0, 2.0])).tolist(), [3.0, 5.0])
        if SUPPORTED:
            st = pj.jit_stats(j)
            self.assertEqual((st["compiles"], st["graphs"]), (1, 1), st)
            self.assertGreaterEqual(st["cache_hits"], 2)
        else:
            assert_ran_eagerly(self, j)

    def test_an_own_call_method_runs(self):
        Logged.calls = 0
        j = pj.jit(Logged())
        self.assertEqual(j(pj.Tensor([1.0])).tolist(), [3.0])
        self.assertEqual(Logged.calls, 1)

    def test_input_cast_and_instance_construct_are_honoured(self):
        c = Scaled()
        c.to_float(pj.float64)
        j = pj.jit(c)
        self.assertEqual(str(j(pj.Tensor([1.0])).dtype), str(c(pj.Tensor([1.0])).dtype))
        d = Scaled()
        d.construct = lambda x: x - 5
        self.assertEqual(pj.jit(d)(pj.Tensor([1.0])).tolist(), [-4.0])

    def test_under_a_gradient_and_in_graph_mode(self):
        c = Scaled()
        j = pj.jit(c)
        g = pj.grad(lambda x: j(x).sum())(pj.Tensor([1.0, 2.0]))
        self.assertEqual(g.tolist(), [2.0, 2.0])
        pj.set_context(mode=pj.GRAPH_MODE)
        try:
            self.assertEqual(j(pj.Tensor([1.0])).tolist(), [3.0])
        finally:
            pj.set_context(mode=pj.PYNATIVE_MODE)


class ParameterTupleInCapture(unittest.TestCase):
    """Parameters reached through a ParameterTuple are graph inputs: new data (set_data) reaches the
    graph, and another tuple (a new length) recompiles; never values frozen at capture."""

    def test_iterated_indexed_unpacked(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(3, 2)
                self.params = pj.ParameterTuple(self.get_parameters())

            def construct(self, x):
                s = self.fc(x).sum() + self.params[0].sum() * 2
                for p in self.params:
                    s = s + p.sum()
                w, b = self.params
                return s + b.sum() + len(self.params)

        n = Net()
        j = pj.jit(n)
        x = pj.ones((2, 3))
        self.assertEqual(j(x).tolist(), n(x).tolist())
        n.fc.weight.set_data(pj.ones((2, 3)))
        n.fc.bias.set_data(pj.ones((2,)) * 3)
        self.assertEqual(j(x).tolist(), n(x).tolist())
        n.params = pj.ParameterTuple([n.fc.weight, n.fc.bias, pj.Parameter(pj.ones((1,)), name="extra")])
        with self.assertRaises(ValueError):  # three items do not unpack into two, jitted as eagerly
            n(x)
        with self.assertRaises(ValueError):
            j(x)


def _eager(f, *args):
    with no_stress():  # under PIJIT_STRESS a plain call of user code would be captured too
        return f(*args)


def _check(test, f, make_x, calls=3):
    """Calls f jitted and plainly on fresh inputs: bit-equal results; the jitted f's stats."""
    j = pj.jit(f)
    for _ in range(calls):
        x = make_x()
        test.assertTrue(same_bits(j(x), _eager(f, x)))
    return pj.jit_stats(j)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class NestedContainersCapture(unittest.TestCase):
    """A SequentialCell inside a SequentialCell (or inside a Cell) is how MindSpore-style networks
    are built: one graph, results bit-equal to eager. The outer container's _cells, copied for
    real code's .values(), holds the inner container itself, not the tuple of its cells (which
    capture once called: 'calls something capture cannot simulate or trace: a tuple object')."""

    check = _check

    def assert_one_graph(self, st, compiles=1):
        """Every compile made one whole graph: no break."""
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (compiles, 0, compiles), st["break_reasons"])
        self.assertEqual(st["break_reasons"], [])

    def test_sequential_inside_sequential(self):
        inner = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        outer = nn.SequentialCell([inner, nn.Dense(4, 2)])

        def run(x):
            return outer(x)
        st = self.check(run, lambda: pj.randn(2, 4))
        self.assert_one_graph(st)
        self.assertGreaterEqual(st["cache_hits"], 2)
        # The inner container's cells are guarded: one more cell recompiles, and stays exact.
        inner.append(nn.Tanh())
        st = self.check(run, lambda: pj.randn(2, 4))
        self.assert_one_graph(st, compiles=2)
        # New parameter data reaches the graph (graph inputs, not constants): no recompile.
        inner[0].weight.set_data(pj.randn(4, 4))
        st = self.check(run, lambda: pj.randn(2, 4))
        self.assertEqual(st["compiles"], 2, st["break_reasons"])

    def test_three_levels_shared_inner_and_a_cell_holding_them(self):
        block = nn.SequentialCell([nn.Dense(3, 3), nn.Sigmoid()])
        mid = nn.SequentialCell([block, nn.SequentialCell([nn.Dense(3, 3), nn.Tanh()]), block])

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.features = nn.SequentialCell([mid, nn.ReLU(), nn.SequentialCell([nn.Dense(3, 5)])])
                self.head = nn.SequentialCell([nn.Dense(5, 2)])

            def construct(self, x):
                return self.head(self.features(x)) * 2

        net = Net()

        def run(x):
            return net(x)
        self.assert_one_graph(self.check(run, lambda: pj.randn(4, 3)))
        # The cell itself jitted (its construct the captured frame), and under a gradient.
        self.assert_one_graph(self.check(pj.jit(net), lambda: pj.randn(4, 3)))
        x = pj.randn(4, 3)
        jitted = pj.jit(run)
        got = pj.grad(lambda t: jitted(t).sum())(x)
        want = _eager(pj.grad(lambda t: run(t).sum()), x)
        self.assertTrue(same_bits(got, want))

    def test_indexing_and_iterating_a_nested_container(self):
        inner = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        outer = nn.SequentialCell([inner, nn.Dense(4, 4)])

        def run(x):
            for c in outer:
                x = c(x)
            return x + outer[0](x) + outer[0][1](x) + len(outer[0])
        self.assert_one_graph(self.check(run, lambda: pj.randn(2, 4)))


class _Seq:
    """A container of the user's own: __call__ -> construct, which calls each item."""

    def __init__(self, items):
        self.items = dict(enumerate(items))

    def __call__(self, x):
        return self.construct(x)

    def construct(self, x):
        for c in self.items.values():
            x = c(x)
        return x


class _Affine:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, x):
        return x * self.a + self.b


class _Node:
    def __init__(self):
        self.child = None

    def __call__(self, x, n):
        if n == 0:
            return x
        return self.child(x * 2.0, n - 1)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class UserContainersCapture(unittest.TestCase):
    """Instances of user classes are called through their class's __call__ (guarded), and a user
    method reached again on another object of the frame's data (an outer container's construct
    calling an inner one's) is inlined: the data bounds it, and the inline depth. A method on an
    object already in the chain (a cycle) or a plain function calling itself is refused with B012,
    naming the function."""

    check = _check

    def test_user_container_inside_user_container(self):
        s = _Seq([_Seq([_Affine(2.0, 1.0), _Affine(0.5, -1.0)]), _Affine(3.0, 0.25)])

        def run(x):
            return s(x)
        st = self.check(run, lambda: pj.randn(2, 4))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])
        # A changed __call__ of the class recompiles (its version is guarded).
        old = _Affine.__call__
        _Affine.__call__ = lambda self, x: x - self.b
        try:
            st = self.check(run, lambda: pj.randn(2, 4))
        finally:
            _Affine.__call__ = old
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (2, 0, 2), st["break_reasons"])

    def test_user_cell_holding_cells_of_its_own_class(self):
        class Block(nn.Cell):  # a U-Net-style block holding a smaller block of its own class
            def __init__(self, depth):
                super().__init__()
                self.fc = nn.Dense(4, 4)
                self.sub = nn.CellList([Block(depth - 1)] if depth else [])

            def construct(self, x):
                y = self.fc(x)
                for b in self.sub:
                    y = y + b(y)
                return ops.relu(y)

        net = Block(3)

        def run(x):
            return net(x)
        st = self.check(run, lambda: pj.randn(2, 4))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])
        st = self.check(pj.jit(net), lambda: pj.randn(2, 4))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])

    def test_a_cycle_in_the_data_is_refused_as_recursion(self):
        a, b = _Node(), _Node()
        a.child, b.child = b, a

        def run(x):
            return a(x, 3)
        st = self.check(run, lambda: pj.Tensor([1.0, -2.0]))
        self.assertEqual(st["graphs"], 0, st["break_reasons"])
        self.assertTrue(st["break_reasons"], st)
        self.assertIn("B012 Recursion", st["break_reasons"][0])
        self.assertIn("calls itself recursively: _Node.__call__() again on the same _Node object", st["break_reasons"][0])

        class Counter:
            def f(self, x, n):  # recursion on its own argument, not through the data
                return x if n == 0 else self.f(x + 1.0, n - 1)
        c = Counter()

        def run2(x):
            y = x * 2.0
            return c.f(y, 3)
        st = self.check(run2, lambda: pj.Tensor([1.0, -2.0]))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertIn("B012 Recursion", st["break_reasons"][0])
        self.assertIn("calls itself recursively: ", st["break_reasons"][0])
        self.assertIn("Counter.f() again on the same Counter object", st["break_reasons"][0])

    def test_a_plain_function_calling_itself_is_refused_as_recursion(self):
        def rec(x, n):
            return x if n == 0 else rec(x + 1.0, n - 1)

        def run(x):
            y = x * 3.0
            return rec(y, 2)
        st = self.check(run, lambda: pj.Tensor([1.0, -2.0]))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertIn("B012 Recursion", st["break_reasons"][0])
        self.assertIn("calls itself recursively: rec()", st["break_reasons"][0])

    def test_a_chain_deeper_than_the_inline_depth_stops_there(self):
        head = node = _Node()
        for _ in range(20):
            node.child = _Node()
            node = node.child

        def run(x):
            return head(x, 20)
        st = self.check(run, lambda: pj.Tensor([1.0]))
        self.assertEqual(st["graphs"], 0, st["break_reasons"])
        self.assertIn("B011 InlineDepth", st["break_reasons"][0])
        self.assertIn("__call__() at depth 17", st["break_reasons"][0])
