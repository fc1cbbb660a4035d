"""MindSpore's import paths (mindspore.ops.primitive, mindspore.ops.operations.math_ops,
mindspore.nn.optim.momentum, mindspore.communication.management, ...) import under pijit's alias,
as `python -m pijit run` sets it up, and give the same objects as the top-level names; the few
objects these paths add (Map, prim_attr_register, PrimitiveWithInfer, bprop_getters, the
single-process communication functions, DistributedGradReducer, the dtype conversions) behave as
MindSpore documents."""
import importlib
import unittest

import pijit
from pijit import alias

alias.install_mindspore_alias()

import mindspore as ms  # noqa: E402
from mindspore import nn, ops  # noqa: E402

# path -> {name: the top-level object it must be}
SAME = {
    "mindspore.ops.primitive": {"Primitive": ops.Primitive},
    "mindspore.ops.operations": {"Mul": ops.Mul, "MatMul": ops.MatMul, "Primitive": ops.Primitive},
    "mindspore.ops.operations.math_ops": {"Mul": ops.Mul, "MatMul": ops.MatMul, "ReduceSum": ops.ReduceSum},
    "mindspore.ops.operations.array_ops": {"Reshape": ops.Reshape, "Cast": ops.Cast, "Concat": ops.Concat},
    "mindspore.ops.operations.nn_ops": {"ReLU": ops.ReLU, "Softmax": ops.Softmax, "Conv2D": ops.Conv2D},
    "mindspore.ops.operations.other_ops": {"Assign": ops.Assign, "Depend": ops.Depend},
    "mindspore.ops.operations.debug_ops": {"Print": ops.Print},
    "mindspore.ops.functional": {"grad": ops.grad, "value_and_grad": ops.value_and_grad, "add": ops.add},
    "mindspore.ops.composite": {"HyperMap": ops.HyperMap, "Partial": ops.Partial,
                                "MultitypeFuncGraph": ops.MultitypeFuncGraph,
                                "GradOperation": ops.GradOperation},
    "mindspore.nn.optim.momentum": {"Momentum": nn.Momentum},
    "mindspore.nn.optim.optimizer": {"Optimizer": nn.Optimizer},
    "mindspore.nn.optim.adam": {"Adam": nn.Adam},
    "mindspore.nn.optim.sgd": {"SGD": nn.SGD},
    "mindspore.nn.loss.loss": {"LossBase": nn.LossBase, "MSELoss": nn.MSELoss,
                               "SoftmaxCrossEntropyWithLogits": nn.SoftmaxCrossEntropyWithLogits},
    "mindspore.nn.wrap.cell_wrapper": {"WithLossCell": nn.WithLossCell, "TrainOneStepCell": nn.TrainOneStepCell},
    "mindspore.nn.layer": {"Dense": nn.Dense, "Conv2d": nn.Conv2d, "SequentialCell": nn.SequentialCell},
    "mindspore.nn.layer.basic": {"Dense": nn.Dense, "Flatten": nn.Flatten, "Dropout": nn.Dropout},
    "mindspore.nn.layer.conv": {"Conv2d": nn.Conv2d, "Conv2dTranspose": nn.Conv2dTranspose},
    "mindspore.nn.layer.normalization": {"BatchNorm2d": nn.BatchNorm2d, "LayerNorm": nn.LayerNorm},
    "mindspore.nn.layer.activation": {"ReLU": nn.ReLU, "GELU": nn.GELU},
    "mindspore.nn.layer.pooling": {"MaxPool2d": nn.MaxPool2d, "AvgPool2d": nn.AvgPool2d},
    "mindspore.nn.layer.container": {"SequentialCell": nn.SequentialCell, "CellList": nn.CellList},
    "mindspore.common.parameter": {"ParameterTuple": ms.ParameterTuple, "Parameter": ms.Parameter},
    "mindspore.common.api": {"jit_class": ms.jit_class, "jit": ms.jit},
    "mindspore.common.dtype": {"dtype_to_nptype": ms.dtype_to_nptype, "pytype_to_dtype": ms.pytype_to_dtype,
                               "dtype_to_pytype": ms.dtype_to_pytype, "float32": ms.float32},
    "mindspore.context": {"ParallelMode": ms.ParallelMode},
}

# paths whose objects have no top-level twin to compare with: the names must be there
PRESENT = {
    "mindspore.ops.primitive": ["constexpr", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register"],
    "mindspore.ops.composite": ["Map"],
    "mindspore.ops.operations.comm_ops": [], "mindspore.ops.operations.control_ops": [],
    "mindspore.ops.operations.random_ops": [], "mindspore.ops.operations._grad_ops": [],
    "mindspore.ops.operations._inner_ops": [],
    "mindspore.ops._grad": ["bprop_getters"], "mindspore.ops._grad.grad_base": ["bprop_getters"],
    "mindspore.nn.wrap.grad_reducer": ["DistributedGradReducer"],
    "mindspore.nn.wrap.loss_scale": [],
    "mindspore.communication": ["init", "get_rank", "get_group_size", "GlobalComm"],
    "mindspore.communication.management": ["init", "release", "get_rank", "get_local_rank", "get_group_size",
                                           "get_local_rank_size", "create_group", "destroy_group",
                                           "GlobalComm", "HCCL_WORLD_COMM_GROUP"],
}


class PathsImport(unittest.TestCase):
    def test_every_path_gives_the_top_level_objects(self):
        for path, names in sorted(SAME.items()):
            mod = importlib.import_module(path)
            for name, obj in names.items():
                with self.subTest(path=path, name=name):
                    self.assertIs(getattr(mod, name), obj)
                    # `from path import name` (the form programs write)
                    self.assertIs(getattr(__import__(path, fromlist=[name]), name), obj)

    def test_every_path_has_its_names(self):
        for path, names in sorted(PRESENT.items()):
            mod = importlib.import_module(path)
            for name in names:
                with self.subTest(path=path, name=name):
                    self.assertTrue(hasattr(mod, name))

    def test_alias_and_pijit_paths_are_one_module(self):
        import pijit.nn.optim.momentum as a
        import mindspore.nn.optim.momentum as b
        self.assertIs(a, b)
        import pijit.ops.operations.math_ops as c
        import mindspore.ops.operations.math_ops as d
        self.assertIs(c, d)

    def test_submodule_all_lists_only_what_it_has(self):
        from mindspore.ops.operations import math_ops, array_ops, nn_ops
        for mod in (math_ops, array_ops, nn_ops):
            for name in mod.__all__:
                with self.subTest(module=mod.__name__, name=name):
                    self.assertIs(getattr(mod, name), getattr(ops, name))
                    self.assertTrue(issubclass(getattr(mod, name), ops.Primitive))
        self.assertIn("Mul", math_ops.__all__)
        self.assertNotIn("Reshape", math_ops.__all__)  # (array_ops holds it, as in MindSpore)

    def test_absent_name_raises_import_error(self):
        with self.assertRaises(ImportError):
            exec("from mindspore.ops.operations.comm_ops import NoSuchPrimitive", {})
        from mindspore.ops.operations import comm_ops
        with self.assertRaisesRegex(AttributeError, "NoSuchPrimitive"):
            comm_ops.NoSuchPrimitive  # noqa: B018

    def test_operations_package_keeps_star_import(self):
        ns = {}
        exec("from mindspore.ops.operations import *", ns)
        self.assertIs(ns["Mul"], ops.Mul)
        self.assertIs(ns["MatMul"], ops.MatMul)
        import pijit.ops.operations as P
        self.assertIs(P.Mul, ops.Mul)

    def test_reexport_finds_a_name_added_later(self):
        from pijit._reexport import reexport
        import sys
        import types
        src = types.ModuleType("_pijit_test_src")
        dst = types.ModuleType("_pijit_test_dst")
        sys.modules["_pijit_test_src"], sys.modules["_pijit_test_dst"] = src, dst
        try:
            reexport("_pijit_test_dst", ("_pijit_test_src",), ["Later"])
            self.assertEqual(dst.__all__, [])
            with self.assertRaises(AttributeError):
                dst.Later  # noqa: B018
            src.Later = object()
            self.assertIs(dst.Later, src.Later)
            with self.assertRaises(AttributeError):
                dst.NotListed  # noqa: B018
        finally:
            del sys.modules["_pijit_test_src"], sys.modules["_pijit_test_dst"]


class Composite(unittest.TestCase):
    def test_map_is_one_level(self):
        from mindspore.ops.composite import Map
        add = lambda a, b: a + b  # noqa: E731
        self.assertEqual(Map()(add, (1, 2), (10, 20)), (11, 22))
        self.assertEqual(Map(add)([1, 2], [10, 20]), [11, 22])
        # nested elements go to the function whole (HyperMap would recurse)
        self.assertEqual(Map()(lambda t: len(t), ((1, 2), (3,))), (2, 1))
        self.assertEqual(ops.HyperMap()(lambda v: v * 2, ((1, 2), (3,))), ((2, 4), (6,)))

    def test_map_reverse_order_and_errors(self):
        from mindspore.ops.composite import Map
        seen = []
        out = Map(reverse=True)(lambda v: seen.append(v) or v * 10, (1, 2, 3))
        self.assertEqual(out, (10, 20, 30))
        self.assertEqual(seen, [3, 2, 1])
        with self.assertRaisesRegex(ValueError, "same length"):
            Map()(lambda a, b: a, (1, 2), (1,))
        with self.assertRaisesRegex(TypeError, "must all be tuples or all lists"):
            Map()(lambda a, b: a, (1, 2), [1, 2])
        with self.assertRaisesRegex(TypeError, "callable"):
            Map()(3, (1,))

    def test_map_over_tensors_with_multitype_funcgraph(self):
        from mindspore.ops.composite import Map, MultitypeFuncGraph
        scale = MultitypeFuncGraph("scale")

        @scale.register("Number", "Tensor")
        def _(s, t):
            return t * s
        grads = (ms.Tensor([1.0, 2.0]), ms.Tensor([3.0]))
        out = Map()(scale, (2.0, 2.0), grads)
        self.assertEqual([o.tolist() for o in out], [[2.0, 4.0], [6.0]])
        f = ms.jit(lambda a, b: Map()(scale, (2.0, 2.0), (a, b)))
        self.assertEqual([o.tolist() for o in f(*grads)], [[2.0, 4.0], [6.0]])


class UserPrimitives(unittest.TestCase):
    def test_prim_attr_register_records_arguments(self):
        from mindspore.ops.primitive import PrimitiveWithInfer, prim_attr_register

        class ScaleBy(PrimitiveWithInfer):
            @prim_attr_register
            def __init__(self, alpha=2.0, shift=0.0):
                self.init_prim_io_names(inputs=["x"], outputs=["y"])

            def __call__(self, x):
                return x * self.alpha + self.shift

        p = ScaleBy(3.0)
        self.assertEqual(p.alpha, 3.0)
        self.assertEqual(p.shift, 0.0)
        self.assertEqual(p.attrs["alpha"], 3.0)
        self.assertEqual(p.attrs["input_names"], ["x"])
        self.assertEqual(p.name, "ScaleBy")
        self.assertEqual(p(ms.Tensor([1.0, 2.0])).tolist(), [3.0, 6.0])
        self.assertEqual(ms.jit(lambda x: p(x))(ms.Tensor([1.0, 2.0])).tolist(), [3.0, 6.0])
        self.assertIsInstance(p, ops.Primitive)

    def test_primitive_with_infer_without_compute_says_so(self):
        from mindspore.ops.primitive import PrimitiveWithInfer

        class NoKernel(PrimitiveWithInfer):
            pass
        with self.assertRaisesRegex(NotImplementedError, "NoKernel: a PrimitiveWithInfer subclass must define __call__"):
            NoKernel()(ms.Tensor([1.0]))

        class Const(PrimitiveWithInfer):
            def infer_value(self, x):
                return x + 1
        self.assertEqual(Const()(1), 2)

    def test_constexpr_both_forms(self):
        from mindspore.ops.primitive import constexpr

        @constexpr
        def prod(shape):
            out = 1
            for d in shape:
                out *= d
            return out

        @constexpr(reuse_result=False)
        def twice(v):
            return 2 * v
        self.assertEqual(prod((2, 3, 4)), 24)
        self.assertEqual(twice(5), 10)
        self.assertEqual(ms.jit(lambda x: x.reshape((prod(x.shape),)))(ms.Tensor([[1.0, 2.0]])).shape, (2,))
        with self.assertRaises(TypeError):
            constexpr(3)


class BpropGetters(unittest.TestCase):
    def _registered_mul(self):
        # a class of this test's own: a registration applies to every later call of its class
        from mindspore.ops._grad.grad_base import bprop_getters

        class TestScaledGradMul(ops.Mul):
            pass

        @bprop_getters.register(TestScaledGradMul)
        def get_bprop(self):
            mul = ops.Mul()

            def bprop(x, y, out, dout):
                return mul(y, dout) * 10, mul(x, dout)
            return bprop
        return TestScaledGradMul

    def test_registered_bprop_replaces_the_gradient(self):
        Mul = self._registered_mul()
        x, y = ms.Tensor([1.0, 2.0]), ms.Tensor([3.0, 4.0])
        f = lambda a, b: Mul()(a, b).sum()  # noqa: E731
        gx, gy = ops.grad(f, grad_position=(0, 1))(x, y)
        self.assertEqual(gx.tolist(), [30.0, 40.0])
        self.assertEqual(gy.tolist(), [1.0, 2.0])
        # the forward is the primitive's own, and plain Mul keeps its gradient
        self.assertEqual(Mul()(x, y).tolist(), [3.0, 8.0])
        gx2, _ = ops.grad(lambda a, b: ops.Mul()(a, b).sum(), grad_position=(0, 1))(x, y)
        self.assertEqual(gx2.tolist(), [3.0, 4.0])

    def test_registered_bprop_under_jit(self):
        Mul = self._registered_mul()
        x, y = ms.Tensor([1.0, 2.0]), ms.Tensor([3.0, 4.0])
        step = ms.jit(lambda a, b: ops.grad(lambda p, q: Mul()(p, q).sum(), grad_position=(0, 1))(a, b))
        gx, gy = step(x, y)
        self.assertEqual(gx.tolist(), [30.0, 40.0])
        self.assertEqual(gy.tolist(), [1.0, 2.0])

    def test_register_by_name_and_errors(self):
        from mindspore.ops._grad import bprop_getters
        getter = lambda self: (lambda x, out, dout: (dout,))  # noqa: E731
        bprop_getters.register("TestNoSuchPrimitive")(getter)
        self.assertIs(bprop_getters["TestNoSuchPrimitive"], getter)
        with self.assertRaisesRegex(TypeError, "must be callable"):
            bprop_getters.register("TestNoSuchPrimitive")(3)
        with self.assertRaisesRegex(TypeError, "Primitive class, instance or name"):
            bprop_getters.register(3.5)


class Communication(unittest.TestCase):
    def tearDown(self):
        from mindspore.communication import management
        management.release()

    def test_single_process_world(self):
        from mindspore.communication.management import (init, get_rank, get_group_size, get_local_rank,
                                                        get_local_rank_size, GlobalComm)
        init()
        self.assertTrue(GlobalComm.INITED)
        self.assertEqual((get_rank(), get_group_size(), get_local_rank(), get_local_rank_size()), (0, 1, 0, 1))
        init("nccl")
        self.assertEqual(GlobalComm.WORLD_COMM_GROUP, "nccl_world_group")
        self.assertEqual(get_group_size("nccl_world_group"), 1)
        init("hccl")
        with self.assertRaisesRegex(ValueError, "backend_name must be one of"):
            init("gloo2")

    def test_groups(self):
        from mindspore.communication import management as M
        M.create_group("g0", [0])
        self.assertEqual(M.get_group_size("g0"), 1)
        self.assertEqual(M.get_world_rank_from_group_rank("g0", 0), 0)
        with self.assertRaisesRegex(ValueError, "already exists"):
            M.create_group("g0", [0])
        with self.assertRaisesRegex(ValueError, "not the world's ranks"):
            M.create_group("g1", [0, 1])
        with self.assertRaisesRegex(ValueError, "outside the world"):
            M.get_group_rank_from_world_rank(1, "g0")
        M.destroy_group("g0")
        with self.assertRaisesRegex(ValueError, "was not created"):
            M.get_rank("g0")

    def test_distributed_grad_reducer_in_one_process(self):
        from mindspore.nn.wrap.grad_reducer import DistributedGradReducer
        net = nn.Dense(2, 1)
        r = DistributedGradReducer(net.trainable_params(), mean=True)
        g = (ms.Tensor([1.0, 2.0]), ms.Tensor([3.0]))
        out = r(g)
        self.assertIsInstance(out, tuple)
        self.assertEqual([t.tolist() for t in out], [[1.0, 2.0], [3.0]])
        self.assertEqual(r.degree, 1)
        with self.assertRaisesRegex(ValueError, "degree 8 is not the group size 1"):
            DistributedGradReducer(net.trainable_params(), True, 8)


class DtypesAndModes(unittest.TestCase):
    def test_dtype_conversions(self):
        self.assertIs(ms.dtype_to_pytype(ms.float32), float)
        self.assertIs(ms.dtype_to_pytype(ms.int64), int)
        self.assertIs(ms.dtype_to_pytype(ms.bool_), bool)
        self.assertIs(ms.pytype_to_dtype(int), ms.int64)
        self.assertIs(ms.pytype_to_dtype(float), ms.float64)
        self.assertIs(ms.pytype_to_dtype(bool), ms.bool_)
        self.assertIs(ms.pytype_to_dtype(ms.float32), ms.float32)
        with self.assertRaisesRegex(TypeError, "has no MindSpore dtype"):
            ms.pytype_to_dtype(dict)
        with self.assertRaisesRegex(TypeError, "expected a MindSpore dtype"):
            ms.dtype_to_nptype("float32")

    def test_dtype_to_nptype(self):
        # numpy, or its stand-in where numpy is absent (as under `python -m pijit run`); the
        # stand-in's finder is removed again so `import numpy` is not served to other suites.
        import sys
        installed = alias.install_numpy_lite()
        try:
            import numpy as np
        finally:
            if installed:
                sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, alias.NumpyLiteFinder)]
        for name in [n for n, m in sys.modules.items() if (n == "numpy" or n.startswith("numpy."))
                     and getattr(m, "__name__", "").startswith("pijit.numpy_lite")]:
            self.addCleanup(sys.modules.pop, name, None)
        self.assertIs(ms.dtype_to_nptype(ms.float32), np.float32)
        self.assertIs(ms.dtype_to_nptype(ms.int32), np.int32)
        self.assertIs(ms.dtype_to_nptype(ms.bool_), np.bool_)
        self.assertIs(ms.pytype_to_dtype(np.float32), ms.float32)
        self.assertIs(ms.pytype_to_dtype(np.dtype("int64")), ms.int64)

    def test_parallel_mode(self):
        from mindspore.context import ParallelMode
        self.assertEqual(ParallelMode.STAND_ALONE, "stand_alone")
        self.assertEqual(ParallelMode.DATA_PARALLEL, "data_parallel")
        self.assertEqual(ParallelMode.SEMI_AUTO_PARALLEL, "semi_auto_parallel")
        self.assertEqual(ParallelMode.AUTO_PARALLEL, "auto_parallel")
        self.assertEqual(ParallelMode.HYBRID_PARALLEL, "hybrid_parallel")
        self.assertEqual(len(ParallelMode.MODE_LIST), 5)


if __name__ == "__main__":
    unittest.main()
