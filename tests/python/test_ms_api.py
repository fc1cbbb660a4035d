"""MindSpore's signatures: each name is called exactly as MindSpore documents it (positional
dtype, keyword names, return conventions), so unchanged MindSpore programs run. The comparison
table is docs/mindspore_api.md."""
import io
import contextlib
import sys
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY, assert_ran_eagerly  # noqa: E402

import pijit as ms
from pijit import nn, ops


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


class Creation(unittest.TestCase):
    def test_ones_zeros_shape_then_positional_dtype(self):
        o = ops.ones((3, 4), ms.float32)
        self.assertEqual((o.shape, o.dtype, o.tolist()[0]), ((3, 4), ms.float32, [1.0] * 4))
        z = ops.zeros((2, 2), ms.int32)
        self.assertEqual((z.shape, z.dtype), ((2, 2), ms.int32))
        self.assertIs(ms.ones((3,), ms.int64).dtype, ms.int64)  # top level too
        self.assertIs(ms.zeros([2, 3], ms.float64).dtype, ms.float64)

    def test_ones_zeros_keywords_and_default_dtype(self):
        self.assertIs(ops.ones(shape=(2,), dtype=ms.int32).dtype, ms.int32)
        self.assertIs(ops.zeros(size=(2,), dtype=ms.int32).dtype, ms.int32)
        self.assertIs(ops.ones(5).dtype, ms.float32)
        self.assertEqual(ops.ones(5).shape, (5,))
        self.assertEqual(ops.zeros(T([2, 3])).shape, (2, 3))  # a 1-D int tensor as the shape

    def test_ones_torch_style_still_works(self):
        self.assertEqual(ops.ones(2, 3).shape, (2, 3))
        self.assertIs(ops.zeros(2, 3, 4, dtype=ms.int32).dtype, ms.int32)
        self.assertEqual(ops.zeros(2, 3, 4, dtype=ms.int32).shape, (2, 3, 4))

    def test_ones_bad_input(self):
        with self.assertRaisesRegex(TypeError, "multiple values for argument 'dtype'"):
            ops.ones((2, 3), ms.float32, dtype=ms.int32)
        with self.assertRaisesRegex(TypeError, r"takes \(shape, dtype=None\); got 3 positional"):
            ops.ones((2, 3), ms.float32, 4)
        with self.assertRaisesRegex(ValueError, "negative dimensions"):
            ops.zeros((-1, 3))
        with self.assertRaisesRegex(TypeError, "shape must be an int or a tuple/list of ints"):
            ops.ones("3")
        with self.assertRaisesRegex(TypeError, "0-D or 1-D int32/int64"):
            ops.ones(T([2.0]))

    def test_fill(self):
        f = ops.fill(ms.float32, (2, 3), 1.5)
        self.assertEqual((f.dtype, f.shape, f.tolist()[1]), (ms.float32, (2, 3), [1.5] * 3))
        self.assertEqual(ops.fill(ms.int32, 2, 7).tolist(), [7, 7])
        self.assertEqual(ops.Fill()(ms.int64, (1,), T(4)).tolist(), [4])
        with self.assertRaisesRegex(TypeError, "value must be"):
            ops.fill(ms.float32, (2,), "x")

    def test_full_keyword_only_dtype(self):
        self.assertEqual(ops.full((2,), 3, dtype=ms.float32).tolist(), [3.0, 3.0])
        self.assertIs(ops.full((2,), 3).dtype, ms.int64)
        with self.assertRaises(TypeError):
            ops.full((2,), 3, ms.float32)  # MindSpore's dtype is keyword-only

    def test_primitive_ones_zeros(self):
        self.assertIs(ops.Ones()((2, 2), ms.int32).dtype, ms.int32)
        self.assertEqual(ops.Zeros()(3, ms.float32).tolist(), [0.0] * 3)


class Queries(unittest.TestCase):
    def test_functional_and_primitive_forms(self):
        x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        for dtype_of, shape_of, rank_of, size_of in (
                (ops.dtype, ops.shape, ops.rank, ops.size),
                (ops.DType(), ops.Shape(), ops.Rank(), ops.Size())):
            self.assertIs(dtype_of(x), ms.float32)
            self.assertEqual(shape_of(x), (2, 3))
            self.assertIsInstance(shape_of(x), tuple)
            self.assertEqual(rank_of(x), 2)
            self.assertEqual(size_of(x), 6)

    def test_non_tensor(self):
        with self.assertRaisesRegex(TypeError, r"rank\(\): input must be a Tensor, got list"):
            ops.rank([1, 2])


class GraphUtilities(unittest.TestCase):
    def test_depend_returns_value(self):
        x, y = T([1.0]), T([2.0])
        self.assertIs(ops.depend(x, y), x)
        self.assertIs(ops.Depend()(x, y), x)

    def test_assign(self):
        w = ms.Parameter(T([1.0, 2.0]), name="w")
        out = ops.assign(w, T([3.0, 4.0]))
        self.assertIs(out, w)
        self.assertEqual(w.tolist(), [3.0, 4.0])
        ops.Assign()(w, 5)  # a number is broadcast (the seed's ops.assign(self.weight, i))
        self.assertEqual(w.tolist(), [5.0, 5.0])
        t = T([1.0])
        self.assertIs(ops.assign(t, T([2.0])), t)  # a Tensor variable too (MindSpore 2.5)
        self.assertEqual(t.tolist(), [2.0])
        with self.assertRaisesRegex(TypeError, "variable must be a Parameter or Tensor, got list"):
            ops.assign([1.0], T([2.0]))
        with self.assertRaisesRegex(ValueError, "broadcast"):
            ops.assign(w, T([1.0, 2.0, 3.0]))
        self.assertEqual(w.tolist(), [5.0, 5.0])  # a refused assign changes nothing
        with self.assertRaisesRegex(TypeError, "value must be a Tensor or a number, got bool"):
            ops.assign(w, True)

    def test_print_prints_tensors_in_repr_form(self):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            r = ops.print_("x:", T([1, 2], ms.int32), 3)
            ops.Print()("y:", T(1.5))
        self.assertIsNone(r)
        self.assertEqual(buf.getvalue(),
                         "x:\nTensor(shape=[2], dtype=Int32, value= [1 2])\n3\n"
                         "y:\nTensor(shape=[], dtype=Float32, value= 1.5)\n")
        with self.assertRaisesRegex(TypeError, "print_.*got object"):
            ops.print_(object())

    def test_clip_by_value(self):
        x = T([-2.0, 0.5, 3.0])
        self.assertEqual(ops.clip_by_value(x, -1.0, 1.0).tolist(), [-1.0, 0.5, 1.0])
        self.assertEqual(ops.clip_by_value(x, clip_value_max=0.0).tolist(), [-2.0, 0.0, 0.0])
        out = ops.clip_by_value([x, T([9.0])], clip_value_min=0.0, clip_value_max=2.0)
        self.assertIsInstance(out, list)
        self.assertEqual([t.tolist() for t in out], [[0.0, 0.5, 2.0], [2.0]])
        with self.assertRaisesRegex(ValueError, "cannot both be None"):
            ops.clip_by_value(x)

    def test_partial(self):
        add_x = ops.Partial()(ops.add, T([1.0, 2.0]))
        self.assertEqual(add_x(T([10.0, 20.0])).tolist(), [11.0, 22.0])
        with self.assertRaisesRegex(TypeError, "must be callable"):
            ops.Partial()(3)

    def test_hyper_map(self):
        x = T([1.0, 2.0])
        common = ops.HyperMap()
        out = common(ops.mul, (x, [x, x]), (2.0, [3.0, 4.0]))
        self.assertIsInstance(out, tuple)
        self.assertIsInstance(out[1], list)
        self.assertEqual([out[0].tolist(), out[1][0].tolist(), out[1][1].tolist()],
                         [[2.0, 4.0], [3.0, 6.0], [4.0, 8.0]])
        square = ops.HyperMap(ops.square)
        self.assertEqual(square({"a": x})["a"].tolist(), [1.0, 4.0])
        order = []
        ops.HyperMap(lambda v: order.append(v), reverse=True)((1, 2, 3))
        self.assertEqual(order, [3, 2, 1])
        with self.assertRaisesRegex(ValueError, "same length"):
            common(ops.add, (x,), (x, x))
        with self.assertRaisesRegex(TypeError, "same structure"):
            common(ops.add, (x,), x)


class Parameters(unittest.TestCase):
    def test_parameter_tuple(self):
        a, b = ms.Parameter(T([1.0]), name="a"), ms.Parameter(T([2.0]), name="b")
        pt = ms.ParameterTuple([a, b])
        self.assertIsInstance(pt, tuple)
        self.assertEqual(len(pt), 2)
        self.assertIs(pt[0], a)
        c = pt.clone("m", init="zeros")
        self.assertEqual([p.name for p in c], ["m.a", "m.b"])
        self.assertEqual(c[1].tolist(), [0.0])
        self.assertEqual(pt.clone("k")[1].tolist(), [2.0])
        with self.assertRaisesRegex(TypeError, "item 1 is a Tensor, not a Parameter"):
            ms.ParameterTuple([a, T([1.0])])
        with self.assertRaisesRegex(ValueError, "two different parameters are named 'a'"):
            ms.ParameterTuple([a, ms.Parameter(T([0.0]), name="a")])
        self.assertEqual(len(ms.ParameterTuple([a, a])), 2)  # the same object twice is fine

    def test_cell_parameter_queries(self):
        net = nn.Dense(3, 2)
        names = [n for n, _ in net.parameters_and_names()]
        self.assertEqual(names, ["weight", "bias"])
        self.assertEqual(len(list(net.get_parameters())), 2)
        self.assertEqual([p.name for p in net.trainable_params()], ["weight", "bias"])
        self.assertEqual(len(ms.ParameterTuple(net.trainable_params())), 2)

    def test_set_data(self):
        p = ms.Parameter(T([1.0, 2.0]), name="p")
        self.assertIs(p.set_data(T([3, 4], ms.int32)), p)  # int -> float32: no precision lost
        self.assertEqual((p.tolist(), p.dtype), ([3.0, 4.0], ms.float32))
        s = ms.Parameter(T(1.0), name="s")
        s.set_data(2)
        self.assertEqual(s.tolist(), 2.0)
        with self.assertRaisesRegex(ValueError, r"shape \(\), but the parameter has shape \(2,\)"):
            p.set_data(2.5)  # a number is a 0-d tensor, as in MindSpore
        with self.assertRaisesRegex(TypeError, "Float64 data.*Float32"):
            p.set_data(T([1.0, 2.0], ms.float64))
        with self.assertRaisesRegex(ValueError, r"shape \(3,\), but the parameter has shape \(2,\)"):
            p.set_data(T([1.0, 2.0, 3.0]))
        q = ms.Parameter(T([1, 2], ms.int32), name="q")
        with self.assertRaisesRegex(TypeError, "cannot convert a float"):
            q.set_data(1.5)
        p.set_data(T([1.0, 2.0, 3.0]), slice_shape=True)
        self.assertEqual(p.shape, (3,))

    def test_tensor_assign_value(self):
        x = T([1, 2, 3, 4])
        self.assertIs(x.assign_value(T([[1, 2], [3, 4]])), x)
        self.assertEqual((x.shape, x.tolist()), ((2, 2), [[1, 2], [3, 4]]))
        m = memoryview(x)
        with self.assertRaisesRegex(BufferError, "exported"):
            x.assign_value(T([0]))
        m.release()
        x.assign_value(T([0.5]))
        self.assertEqual((x.dtype, x.tolist()), (ms.float32, [0.5]))


class DTypes(unittest.TestCase):
    def test_every_mindspore_dtype_makes_tensors(self):
        import pickle
        self.assertEqual(str(ms.float16), "Float16")
        self.assertIs(ms.mstype.uint8, ms.uint8)
        self.assertIs(pickle.loads(pickle.dumps(ms.float16)), ms.float16)
        x = ms.Tensor([1.0, 0.1], ms.float16)
        self.assertEqual((x.dtype, x.tolist()), (ms.float16, [1.0, 0.0999755859375]))
        self.assertEqual(ops.ones((2,), ms.int8).tolist(), [1, 1])
        self.assertIs(ops.ones((2,), ms.int8).dtype, ms.int8)


class Checkpoints(unittest.TestCase):
    def test_mindspore_positional_and_keyword_arguments(self):
        import os
        import tempfile
        net = nn.Dense(3, 2)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "net.ckpt")
            # 3rd positional is integrated_save, 4th async_save, as in MindSpore.
            ms.save_checkpoint(net, path, True, False, append_dict={"epoch": 2},
                               choice_func=lambda name: name != "bias")
            back = ms.load_checkpoint(path, None, False, None, None, "AES-GCM", None, None)
            self.assertEqual(sorted(back), ["epoch", "weight"])
            self.assertEqual(sorted(ms.load_checkpoint(path, specify_prefix="w")), ["epoch", "weight"])
            self.assertEqual(sorted(ms.load_checkpoint(path, filter_prefix="w")), ["epoch"])
            with self.assertRaisesRegex(NotImplementedError, "encrypted checkpoints"):
                ms.save_checkpoint(net, path, enc_key=b"0" * 16)
            with self.assertRaisesRegex(ValueError, "format must be 'ckpt'"):
                ms.load_checkpoint(path, format="safetensors")
            other = nn.Dense(3, 2)
            self.assertEqual(ms.load_param_into_net(other, back, False, False), (["bias"], []))
            self.assertEqual(other.weight.tolist(), net.weight.tolist())


class Decorators(unittest.TestCase):
    def test_mutable(self):
        x = T([1.0])
        self.assertIs(ms.mutable(x), x)
        self.assertEqual(ms.mutable((x, 1, [2.0])), (x, 1, [2.0]))
        self.assertEqual(ms.mutable([x], dynamic_len=True), [x])
        with self.assertRaisesRegex(TypeError, r"input_data\[1\] is a str"):
            ms.mutable((x, "a"))
        with self.assertRaisesRegex(ValueError, "dynamic_len=True needs a tuple or list"):
            ms.mutable(x, dynamic_len=True)

    def test_jit_class(self):
        @ms.jit_class
        class Inner:
            def __init__(self, n):
                self.n = n

            def act(self, x):
                return x * self.n

        self.assertTrue(Inner.__ms_class__)
        self.assertIs(ms.ms_class, ms.jit_class)

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.inner = Inner(2)

            @ms.jit
            def construct(self, x):
                return self.inner.n + self.inner.act(x)

        self.assertEqual(Net()(T(3, ms.int32)).tolist(), 8)
        with self.assertRaisesRegex(TypeError, "cannot be used for nn.Cell: Bad<>"):
            @ms.jit_class
            class Bad(nn.Cell):
                pass
        with self.assertRaisesRegex(TypeError, "only be used for class type"):
            ms.jit_class(lambda: 0)

    def test_lazy_inline(self):
        class Block(nn.Cell):
            @ms.lazy_inline
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Dense(n, n)

            def construct(self, x):
                return self.fc(x)

        a, b = Block(3), Block(3)
        self.assertEqual(a.cell_init_args, b.cell_init_args)
        self.assertEqual(a(ops.ones((1, 3), ms.float32)).shape, (1, 3))

        class Block2(nn.Cell):
            @ms.lazy_inline(attrs="x")
            def __init__(self):
                super().__init__()
        Block2()


class Modules(unittest.TestCase):
    def test_operations_and_composite(self):
        from pijit.ops import operations as P, composite as C
        self.assertEqual(P.Mul()(T([2.0]), T([3.0])).tolist(), [6.0])
        self.assertIs(C.HyperMap, ops.HyperMap)
        self.assertIs(ms.common.parameter.ParameterTuple, ms.ParameterTuple)
        self.assertIs(ms.common.tensor.Tensor, ms.Tensor)
        self.assertIs(ms.common.api.jit, ms.jit)

    def test_multitype_func_graph(self):
        add = ops.MultitypeFuncGraph("add")

        @add.register("Number", "Number")
        def add_scalar(x, y):
            return x + y

        @add.register("Tensor", "Tensor")
        def add_tensor(x, y):
            return ops.Add()(x, y)

        @add.register("Int", "Int")
        def add_int(x, y):
            return ("int", x + y)

        self.assertEqual(add(1.5, 2), 3.5)
        self.assertEqual(add(1, 2), ("int", 3))  # the most specific registration wins
        self.assertEqual(add(T([0.5]), T([1.0])).tolist(), [1.5])
        with self.assertRaisesRegex(ValueError, r"no function registered for argument types "
                                                r"\(Tensor, str\)"):
            add(T([1.0]), "a")
        with self.assertRaisesRegex(TypeError, "unknown type name 'Tensr'"):
            add.register("Tensr")
        # HyperMap over a MultitypeFuncGraph, as MindSpore's optimizers use it.
        out = ops.HyperMap(add)((1.5, T([1.0])), (2, T([2.0])))
        self.assertEqual((out[0], out[1].tolist()), (3.5, [3.0]))


class Context(unittest.TestCase):
    def tearDown(self):
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", device_id=0)

    def test_mindspore_keys_are_accepted_and_recorded(self):
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", save_graphs=False,
                       max_call_depth=2000, jit_syntax_level=ms.STRICT,
                       pynative_synchronize=True)
        self.assertEqual(ms.get_context("max_call_depth"), 2000)
        self.assertIsNone(ms.get_context("print_file_path"))
        with self.assertRaisesRegex(ValueError, "unknown context key 'no_such_key'"):
            ms.set_context(no_such_key=1)
        with self.assertRaisesRegex(TypeError, "For 'set_context', the type of 'max_call_depth' should be int, but got str"):
            ms.set_context(max_call_depth="deep")

    def test_set_device(self):
        ms.set_device("CPU", 0)
        self.assertEqual(ms.get_context("device_target"), "CPU")
        with self.assertRaisesRegex(ValueError, "Ascend NPUs are not supported"):
            ms.set_device("Ascend")

    def test_get_context_is_read_each_call(self):
        def f(x):
            return x * ms.get_context("device_id")

        jf = ms.jit(f)
        x = T([1.0])
        self.assertEqual(jf(x).tolist(), [0.0])
        ms.set_context(device_id=3)
        self.assertEqual(jf(x).tolist(), [3.0])
        # Refused (the context is read on every call, never folded into a graph)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual(st["graphs"], 0, st)
            self.assertTrue(st["break_reasons"][0].startswith("B005 "), st["break_reasons"])
            self.assertIn("get_context() reads the context", st["break_reasons"][0])
        else:
            assert_ran_eagerly(self, jf)


class JitSignatures(unittest.TestCase):
    def test_old_and_new_forms(self):
        def f(x):
            return x + 1

        x = T([1.0])
        for j in (ms.jit(f), ms.jit(fn=f), ms.jit(function=f), ms.jit(f, "PSJit"),
                  ms.jit(f, mode="PIJit", input_signature=None, hash_args=None, jit_config=None,
                         compile_once=False),
                  ms.jit(capture_mode="ast", jit_level="O1", dynamic=1, backend="ms_backend")(f),
                  ms.jit(capture_mode="bytecode", fullgraph=True)(f),
                  ms.ms_function(f), ms.ms_function(fn=f, input_signature=None)):
            self.assertEqual(j(x).tolist(), [2.0])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "capture_mode must be one of"):
            ms.jit(capture_mode="graph")
        with self.assertRaisesRegex(ValueError, "jit_level must be one of"):
            ms.jit(jit_level="O9")
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument.*'bogus'"):
            ms.jit(bogus=1)
        with self.assertRaisesRegex(TypeError, "jit expects a function"):
            ms.jit(3)


class Activations(unittest.TestCase):
    def test_hswish_hsigmoid(self):
        x = T([-4.0, -1.0, 0.0, 1.0, 4.0])
        want = [0.0, -1.0 / 3, 0.0, 2.0 / 3, 4.0]
        for f in (ops.HSwish(), nn.HSwish(), ops.hardswish):
            self.assertEqual([round(v, 6) for v in f(x).tolist()], [round(v, 6) for v in want])
        self.assertEqual(ops.HSigmoid()(T([-4.0, 0.0, 4.0])).tolist(), [0.0, 0.5, 1.0])


class TensorInit(unittest.TestCase):
    def test_mindspore_tensor_keywords(self):
        from pijit.common.initializer import One
        self.assertEqual(ms.tensor(input_data=[1, 2], dtype=ms.int32).tolist(), [1, 2])
        t = ms.tensor(shape=(2,), dtype=ms.float32, init=One())
        self.assertIs(t.init_data(), t)
        self.assertEqual(t.tolist(), [1.0, 1.0])

    def test_tensor_with_initializer(self):
        from pijit.common.initializer import One
        t = ms.Tensor(shape=(2, 3), dtype=ms.float32, init=One())
        self.assertEqual((t.shape, t.tolist()[1]), ((2, 3), [1.0] * 3))
        self.assertEqual(ms.Tensor(shape=(2,), dtype=ms.float64, init="zeros").tolist(), [0.0, 0.0])
        with self.assertRaisesRegex(ValueError, "either input_data or init"):
            ms.Tensor([1.0], init=One())
        with self.assertRaisesRegex(ValueError, "init needs both shape and dtype"):
            ms.Tensor(shape=(2,), init=One())


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class UnderJit(unittest.TestCase):
    """The new names keep Python's meaning inside jitted code."""

    def test_queries_and_fill_are_captured(self):
        @ms.jit
        def f(x):
            y = ops.depend(x + 1, x)
            return ops.fill(ms.float32, ops.shape(x), 2.0) * y + ops.rank(x) + ops.size(x)

        x = T([1.0, 2.0])
        self.assertEqual(f(x).tolist(), [7.0, 9.0])
        self.assertEqual(f(x).tolist(), [7.0, 9.0])
        st = ms.jit_stats(f)
        self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))

    def test_print_and_assign_never_run_at_capture_time(self):
        w = ms.Parameter(T([0.0]), name="w")
        pr, asg = ops.Print(), ops.Assign()

        @ms.jit
        def g(x):
            pr("in g", x)
            ops.print_("again")
            asg(w, x)
            ops.assign(w, x + 1)
            return x * 2

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = g(T([3.0]))
        self.assertEqual(out.tolist(), [6.0])
        self.assertEqual(w.tolist(), [4.0])
        self.assertEqual(buf.getvalue(),
                         "in g\nTensor(shape=[1], dtype=Float32, value= [3.])\nagain\n")
        # the prints are replayed after the graph; the in-place Assign is a graph break
        reasons = ms.jit_stats(g)["break_reasons"]
        self.assertFalse(any("prints" in r for r in reasons), reasons)
        self.assertTrue(any("writes a Parameter in place" in r for r in reasons), reasons)


if __name__ == "__main__":
    unittest.main()
