"""Randomized test of pijit's public entries (issue 41): odd shapes, dtypes, sizes near 2^31/2^32/2^63,
None, NaN, nested and self-referencing containers, odd strings and objects, each case in a child process.

    PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed 1 --count 300   # run (batched children)
    PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed 1 --case 17     # one case, in this process

A case is named by (seed, index): the child rebuilds it from random.Random(seed, index), so a case id
"s1-17" is its whole reproduction. Oracle per case: the process exits normally within a timeout; every
exception raised is an ordinary one (never SystemError, never pijit's "internal error"); every tensor
produced with numel > 0 has the storage its shape needs (nbytes, memoryview, tolist); the same call
eager and under pj.jit raises the same exception type or gives equal results.
"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYSCRIPTS = os.path.join(ROOT, "pyscripts")
# the child's address space: a tensor of some GiB must fail with MemoryError, not page the machine out
CHILD_MEMORY = 3 << 30

DIMS = [0, 1, 2, 3, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 64, -1, -2 ** 63]
HUGE_INTS = [2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64, -2 ** 63, -2 ** 63 - 1, 10 ** 30]
FLOATS = [float("nan"), float("inf"), -float("inf"), -0.0, 1e308, 5e-324, 0.5, 3.0]
STRINGS = ["", "float32", "Float32", "bogus", "\ud800", "a\x00b", "x" * 100000, "\udcff\udcfe", "é" * 3, "None"]


class Odd:
    """An object whose dunders raise or answer oddly (which ones: chosen by the generator)."""

    def __init__(self, how):
        self.how = how

    def _answer(self, kind):
        if self.how == "raise":
            raise ZeroDivisionError("Odd.%s" % kind)
        if self.how == "big":
            return 2 ** 70
        if self.how == "neg":
            return -2 ** 63 - 5
        if self.how == "wrong":
            return "not a number"
        return 1

    def __index__(self):
        return self._answer("__index__")

    def __int__(self):
        return self._answer("__int__")

    def __float__(self):
        v = self._answer("__float__")
        return float("nan") if self.how == "big" else v

    def __len__(self):
        return self._answer("__len__")

    def __iter__(self):
        if self.how == "raise":
            raise ZeroDivisionError("Odd.__iter__")
        if self.how == "wrong":
            return 5
        return iter([1.0, 2.0] if self.how != "big" else range(10 ** 9))

    def __getitem__(self, i):
        if self.how == "raise":
            raise ZeroDivisionError("Odd.__getitem__")
        if isinstance(i, int) and i < 2:
            return 1.0
        raise IndexError(i)

    def __repr__(self):
        if self.how == "raise":
            raise ZeroDivisionError("Odd.__repr__")
        return "Odd(%s)" % self.how


class Gen:
    """Draws argument values; every draw comes from self.r so a case is its (seed, index)."""

    def __init__(self, r, pj):
        self.r, self.pj = r, pj

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def dim(self):
        return self.pick(DIMS) if self.r.random() < 0.35 else self.r.randrange(0, 4)

    def shape(self):
        r = self.r
        ndim = self.pick([0, 1, 1, 2, 2, 3, 4, r.randrange(0, 71)])
        dims = [self.dim() for _ in range(ndim)]
        # keep the shapes whose every dim is valid small: the product of many 2s and 3s would be GiBs
        total = 1
        for i, d in enumerate(dims):
            if 0 <= d <= 3:
                if total * max(d, 1) > 4096:
                    dims[i] = 1
                total *= max(dims[i], 1)
        if dims and r.random() < 0.15:
            dims[r.randrange(len(dims))] = self.pick([Odd("raise"), Odd("big"), Odd("neg"), Odd("one"), 2.0, True,
                                                     None, "3", float("nan"), [2], 1 + 0j])
        kind = r.random()
        if kind < 0.7:
            return tuple(dims)
        if kind < 0.85:
            return list(dims)
        return self.value(2)

    def small_shape(self):
        return tuple(self.r.randrange(0, 4) for _ in range(self.r.randrange(0, 4)))

    def dtype(self):
        pj = self.pj
        r = self.r.random()
        if r < 0.7:
            return self.pick([pj.float32, pj.float64, pj.int32, pj.int64, pj.bool_, pj.float16, pj.int8,
                              pj.uint8, pj.int16, pj.uint16, pj.uint32, pj.uint64, pj.bfloat16,
                              pj.complex64, pj.complex128])
        return self.pick(["float32", "bogus", None, float, int, bool, object(), 3, Odd("raise"), "\ud800"])

    def tensor(self):
        pj, r = self.pj, self.r
        if r.random() < 0.12:
            # empty, with huge dims beside the 0: strides and products overflow where nothing is checked
            dims = [self.pick([0, 1, 3, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1]) for _ in range(r.randrange(1, 4))]
            dims.insert(r.randrange(len(dims) + 1), 0)
            try:
                return pj.zeros(tuple(dims), self.pick([pj.float32, pj.float64, pj.int32]))
            except (ValueError, MemoryError):
                return pj.zeros((0, 3), pj.float32)
        shape = self.small_shape()
        n = 1
        for d in shape:
            n *= d
        vals = [self.pick([0.0, 1.0, -2.5, 3.0] + FLOATS) for _ in range(n)]
        flat = pj.Tensor(vals if n else [0.0], dtype=pj.float32)
        t = flat.reshape(shape) if n else pj.zeros(shape, pj.float32)
        c = r.random()
        if c < 0.15:
            t = t.astype(pj.int32) if n and all(math.isfinite(v) for v in vals) else t
        elif c < 0.25:
            t = t.astype(pj.float64)
        elif c < 0.3:
            t = t > 0
        elif c < 0.4 and len(shape) >= 2:
            t = t.transpose(*reversed(range(len(shape))))  # a non-contiguous view
        return t

    def nested(self, depth):
        r = self.r
        if depth > 4 or r.random() < 0.3:
            return self.pick([1.0, 2, True, None, float("nan"), "s", 2 ** 64, 1e308])
        n = r.randrange(0, 4)
        items = [self.nested(depth + 1) if r.random() < 0.5 else self.pick([0.0, 1.5]) for _ in range(n)]
        return items if r.random() < 0.7 else tuple(items)

    def selfref(self):
        c = self.r.randrange(4)
        if c == 0:
            l = [1.0]
            l.append(l)
            return l
        if c == 1:
            d = {}
            d["a"] = d
            return d
        if c == 2:
            l = [[1.0, 2.0]]
            l[0].append(l)
            return l
        deep = 1.0
        for _ in range(self.pick([100, 1000, 100000])):
            deep = [deep]
        return deep

    def value(self, depth=0):
        """Any argument value: the families the issue names."""
        r = self.r
        c = r.randrange(16 if depth < 2 else 10)
        if c == 0:
            return None
        if c == 1:
            return self.pick(HUGE_INTS + [0, 1, -1, 2])
        if c == 2:
            return self.pick(FLOATS)
        if c == 3:
            return self.pick([True, False])
        if c == 4:
            return self.pick(STRINGS)
        if c == 5:
            return Odd(self.pick(["raise", "big", "neg", "wrong", "one"]))
        if c == 6:
            return self.pick([Ellipsis, slice(None), slice(2 ** 64, -2 ** 64, -1), slice(0, 0, 0), b"\xff\x00",
                              1 + 2j, object(), {}, set(), range(3)])
        if c == 7:
            return self.dtype()
        if c == 8:
            return self.nested(0)
        if c == 9:
            return self.tensor()
        if c == 10:
            return self.selfref()
        if c == 11:
            return self.shape()
        return [self.value(depth + 1) for _ in range(r.randrange(0, 4))]

    def axis(self):
        return self.pick([0, 1, -1, 2, -3, 70, 2 ** 63, -2 ** 63 - 1, None, (0, 0), (0, 1), [], 1.5, "0",
                          Odd("raise"), Odd("big"), True])

    def index(self, depth=0):
        r = self.r
        c = r.randrange(8 if depth < 2 else 5)
        if c == 0:
            return self.pick([0, 1, -1, 2, 2 ** 63 - 1, -2 ** 63, 2 ** 64, -2 ** 64, True])
        if c == 1:
            return slice(self.pick([None, 0, 1, -1, 2 ** 64, -2 ** 63]), self.pick([None, 0, 2, -1, 2 ** 63]),
                         self.pick([None, 1, 2, -1, 0, 2 ** 63, -2 ** 63]))
        if c == 2:
            return self.pick([None, Ellipsis])
        if c == 3:
            return [self.pick([0, 1, -1, 2 ** 63, True]) for _ in range(r.randrange(0, 4))]
        if c == 4:
            return self.tensor()
        if c == 5:
            return tuple(self.index(depth + 1) for _ in range(self.pick([1, 2, 3, 70])))
        if c == 6:
            return self.pick([1.5, "a", Odd("raise"), Odd("big"), Odd("neg"), Odd("one"), [[0, [1]]], (), [],
                              float("nan")])
        return self.value(1)


# ---- cases: each returns (entry name, thunk, whether to also compare it under pj.jit) ----

def _creation(g):
    pj, ops = g.pj, g.pj.ops
    name = g.pick(["zeros", "ones", "full", "empty", "eye", "arange", "linspace", "rand", "randn", "randint",
                   "zeros_like", "ones_like", "full_like", "Tensor_shape", "Zeros", "Fill"])
    shape, dt = g.shape(), g.dtype()
    if name in ("zeros", "ones", "empty"):
        args = (shape, dt) if g.r.random() < 0.7 else (shape,)
        return name, lambda: getattr(pj, name)(*args), True
    if name == "full":
        v = g.value()
        return name, lambda: pj.full(shape, v, dt), True
    if name == "eye":
        n, m = g.dim(), g.pick([None, g.dim()])
        return name, lambda: pj.eye(n, m, dt) if m is not None else pj.eye(n, dtype=dt), True
    if name == "arange":
        a = [g.pick(HUGE_INTS + FLOATS + [0, 1, 3, -3, None, Odd("raise")]) for _ in range(g.r.randrange(1, 4))]
        return name, lambda: pj.arange(*a, dtype=dt), True
    if name == "linspace":
        a, b, n = g.pick([0.0, float("nan"), -1e308]), g.pick([1.0, float("inf")]), g.pick(DIMS + [Odd("big")])
        return name, lambda: ops.linspace(a, b, n), True
    if name in ("rand", "randn"):
        return name, lambda: getattr(pj, name)(*(shape if isinstance(shape, (tuple, list)) else (shape,))), False
    if name == "randint":
        lo, hi = g.pick(HUGE_INTS + [0, 5]), g.pick(HUGE_INTS + [0, 5])
        return name, lambda: pj.randint(lo, hi, shape), False
    if name in ("zeros_like", "ones_like"):
        t = g.value() if g.r.random() < 0.3 else g.tensor()
        return name, lambda: getattr(pj, name)(t, dtype=dt), True
    if name == "full_like":
        t, v = g.tensor(), g.value()
        return name, lambda: pj.full_like(t, v), True
    if name == "Tensor_shape":
        init = g.pick([None, "ones", "zeros"])
        return name, lambda: pj.Tensor(shape=shape, dtype=dt, init=init) if init else pj.Tensor(shape=shape, dtype=dt), False
    if name == "Zeros":
        return name, lambda: ops.Zeros()(shape, dt), True
    v = g.value()
    return name, lambda: ops.Fill()(dt, shape, v), True


def _tensor_ctor(g):
    pj = g.pj
    data = g.pick([g.value(), g.nested(0), g.selfref(), g.tensor()])
    kw = {}
    if g.r.random() < 0.5:
        kw["dtype"] = g.dtype()
    if g.r.random() < 0.2:
        kw["shape"] = g.shape()
    return "Tensor", lambda: pj.Tensor(data, **kw), False


def _unary_ops(g):
    ops = g.pj.ops
    x = g.tensor() if g.r.random() < 0.85 else g.value()
    name = g.pick(["reshape", "transpose", "broadcast_to", "expand_dims", "squeeze", "tile", "flatten", "softmax",
                   "log_softmax", "sum", "mean", "amax", "amin", "prod", "argmax", "cast", "cumsum", "sort", "topk",
                   "split", "std", "var", "logsumexp", "clamp", "relu", "exp", "sqrt", "one_hot", "pad", "permute",
                   "unsqueeze", "max", "all", "any"])
    c = g.r.random()
    if name in ("reshape", "broadcast_to", "tile"):
        a = (g.shape(),)
    elif name in ("transpose", "permute"):
        a = tuple(g.axis() for _ in range(g.r.randrange(0, 4))) if c < 0.5 else (g.value(),)
    elif name == "cast":
        a = (g.dtype(),)
    elif name in ("topk", "one_hot"):
        a = (g.pick(DIMS + HUGE_INTS),) + ((g.pick([g.tensor(), 1.0]), g.pick([g.tensor(), 0.0])) if name == "one_hot" else ())
    elif name == "split":
        a = (g.pick([1, 2, 0, -1, 2 ** 63, [1, 1], [2 ** 63, -2 ** 63], None]), g.axis())
    elif name == "clamp":
        a = (g.pick(FLOATS + [None]), g.pick(FLOATS + [None]))
    elif name == "pad":
        a = (tuple(g.pick([0, 1, -1, 2 ** 31, 2 ** 63 - 1, -2 ** 63]) for _ in range(g.pick([0, 2, 4, 3]))),)
    elif name in ("relu", "exp", "sqrt"):
        a = ()
    else:
        a = (g.axis(),) if c < 0.8 else ()
    fn = getattr(ops, name)
    return "ops." + name, (lambda: fn(x, *a)), True


def _binary_ops(g):
    ops = g.pj.ops
    name = g.pick(["add", "mul", "sub", "div", "pow", "maximum", "matmul", "concat", "stack", "where", "gather",
                   "index_select", "conv2d", "equal", "floor_div", "mod", "Add", "MatMul", "Concat", "Gather",
                   "ReduceSum", "Reshape", "Transpose", "Softmax", "Cast", "Tile", "BatchMatMul", "Select"])
    x = g.tensor()
    y = g.tensor() if g.r.random() < 0.75 else g.value()
    if name in ("add", "mul", "sub", "div", "pow", "maximum", "matmul", "equal", "floor_div", "mod"):
        return "ops." + name, lambda: getattr(ops, name)(x, y), True
    if name in ("concat", "stack"):
        seq = g.pick([(x, y), [x, x, y], (), [x], (x, g.value()), g.value()])
        ax = g.axis()
        return "ops." + name, lambda: getattr(ops, name)(seq, ax), True
    if name == "where":
        cond = x > 0 if g.r.random() < 0.8 else y
        return "ops.where", lambda: ops.where(cond, x, y), True
    if name in ("gather", "index_select"):
        idx = g.pick([g.tensor().astype(g.pj.int32) if g.r.random() < 0.5 else g.tensor(), g.index()])
        ax = g.axis()
        return "ops." + name, lambda: getattr(ops, name)(x, ax, idx) if name == "index_select" else ops.gather(x, idx, ax), True
    if name == "conv2d":
        w = g.tensor() if g.r.random() < 0.5 else (g.dim(), g.dim(), g.dim(), g.dim())
        kw = {k: g.pick([1, 0, -1, 2 ** 31, 2 ** 63, (1, 1), "same", "valid", None])
              for k in g.r.sample(["stride", "padding", "dilation", "groups"], g.r.randrange(0, 3))}
        return "ops.conv2d", lambda: ops.conv2d(x, w if isinstance(w, g.pj.Tensor) else g.pj.ones(w), **kw), True
    if name == "Concat":
        ax = g.axis()
        return "ops.Concat", lambda: ops.Concat(ax)((x, y)), True
    if name == "Gather":
        ax = g.axis()
        return "ops.Gather", lambda: ops.Gather()(x, y, ax), True
    if name == "ReduceSum":
        kd, ax = g.pick([True, False, None, 2, "x"]), g.axis()
        return "ops.ReduceSum", lambda: ops.ReduceSum(kd)(x, ax), True
    if name == "Reshape":
        s = g.shape()
        return "ops.Reshape", lambda: ops.Reshape()(x, s), True
    if name == "Transpose":
        p = g.pick([(1, 0), (0,), (), (0, 0), (2 ** 63, 0), g.value()])
        return "ops.Transpose", lambda: ops.Transpose()(x, p), True
    if name == "Softmax":
        ax = g.axis()
        return "ops.Softmax", lambda: ops.Softmax(ax)(x), True
    if name == "Cast":
        dt = g.dtype()
        return "ops.Cast", lambda: ops.Cast()(x, dt), True
    if name == "Tile":
        s = g.shape()
        return "ops.Tile", lambda: ops.Tile()(x, s), True
    if name == "Select":
        return "ops.Select", lambda: ops.Select()(x > 0, x, y), True
    return "ops." + name, lambda: getattr(ops, name)()(x, y), True


def _indexing(g):
    x = g.tensor() if g.r.random() < 0.9 else g.pj.zeros((2, 3, 4))
    idx = g.index()
    if g.r.random() < 0.7:
        return "Tensor.__getitem__", lambda: x[idx], True
    v = g.pick([g.value(), 1.0, float("nan"), g.tensor()])

    def setitem(x=x):
        x = x.copy()
        x[idx] = v
        return x
    return "Tensor.__setitem__", setitem, False


def _methods(g):
    x = g.tensor()
    name = g.pick(["reshape", "view", "transpose", "sum", "astype", "to", "repeat", "swapaxes", "item", "size",
                   "expand_as", "split", "tolist", "__repr__", "__str__", "__format__", "__bool__", "__len__",
                   "__iter__", "__float__", "__int__", "__index__", "__contains__", "__eq__", "__getitem__"])
    args = tuple(g.value() for _ in range(g.r.randrange(0, 3)))
    fn = getattr(x, name)
    if name == "__iter__":
        return "Tensor." + name, lambda: list(fn()), False
    return "Tensor." + name, lambda: fn(*args), False


def _layers(g):
    nn = g.pj.nn
    name = g.pick(["Dense", "Conv2d", "BatchNorm2d", "BatchNorm1d", "Softmax", "MaxPool2d", "AvgPool2d", "LayerNorm",
                   "Embedding", "Flatten", "ReLU", "Dropout", "LogSoftmax", "AdaptiveAvgPool2d", "GroupNorm"])
    ctor = tuple(g.pick([g.dim(), 1, 2, 3, 4, g.value()]) for _ in range(g.pick([0, 1, 2, 2, 3])))
    x = g.pick([g.tensor(), g.value(), g.pj.ones((1, 2, 3, 3)), g.pj.ones((2, 4))])

    def run():
        g.pj.set_seed(1234)  # the same initial weights for the eager and the jitted call
        cell = getattr(nn, name)(*ctor)
        return cell(x)
    return "nn." + name, run, name != "Dropout"


def _checkpoint(g):
    pj = g.pj

    def run():
        fd, path = tempfile.mkstemp(suffix=".ckpt")
        os.close(fd)
        try:
            pj.save_checkpoint([{"name": "w", "data": pj.Tensor([[1.0, 2.0]])}, {"name": "b", "data": pj.ones((3,))}],
                               path)
            with open(path, "rb") as f:
                blob = bytearray(f.read())
            c = g.r.randrange(4)
            if c == 0 and blob:
                blob = blob[:g.r.randrange(len(blob))]
            elif c == 1:
                for _ in range(g.r.randrange(1, 8)):
                    if blob:
                        blob[g.r.randrange(len(blob))] = g.r.randrange(256)
            elif c == 2:
                blob = bytearray(g.r.getrandbits(8) for _ in range(g.r.randrange(0, 200)))
            else:
                s = g.pick([b"[-1, 2]", b"[4294967296, 4294967296]", b"[9223372036854775807]", b"[]", b'"bogus"'])
                blob = bytearray(bytes(blob).replace(b"[1, 2]", s).replace(b"[3]", s))
            with open(path, "wb") as f:
                f.write(bytes(blob))
            return pj.load_checkpoint(path)
        finally:
            os.unlink(path)
    return "load_checkpoint", run, False


def _setters(g):
    pj = g.pj
    name = g.pick(["set_context", "set_num_threads", "set_seed", "jit", "set_jit_config"])
    v = g.value()

    def run():
        x = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        if name == "set_context":
            key = g.pick(["mode", "device_target", "max_call_depth", "runtime_num_threads", "save_graphs",
                          "jit_config", "deterministic", "bogus_key", "max_device_memory"])
            before = pj.get_context(key) if key in ("mode", "device_target", "max_call_depth") else None
            try:
                pj.set_context(**{key: v})
                return x @ x
            finally:
                if before is not None:
                    pj.set_context(**{key: before})
        if name == "set_num_threads":
            before = pj.get_num_threads()
            try:
                pj.set_num_threads(v)
                return x @ x
            finally:
                pj.set_num_threads(before)
        if name == "set_seed":
            pj.set_seed(v)
            return pj.rand(2, 2)
        if name == "set_jit_config":
            pj.set_jit_config(v)
            return x
        key = g.pick(["mode", "input_signature", "jit_config", "backend", "capture_mode", "dynamic", "fullgraph",
                      "recompile_limit", "inline_depth", "hash_args", "jit_level", "bogus"])
        f = pj.jit(lambda a: a * 2 + 1, **{key: v})
        return f(x), f(x)
    return "pijit." + name, run, False


def _exact_sizes(g):
    """Ops whose output shape Python's integers compute exactly: a result must have that shape
    (a size that wraps around in 64 bits would pass every other check)."""
    pj, ops = g.pj, g.pj.ops
    big = [0, 1, 2, 3, -1, -3, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, -2 ** 63 + 1, -2 ** 63]
    name = g.pick(["pad", "tile", "concat"])
    if name == "pad":
        x = g.pick([pj.ones((2, 3)), pj.zeros((0, 2)), pj.ones((1, 1, 2))])
        pads = tuple(g.pick(big) for _ in range(g.pick([2, 2, 4])))

        def want():
            out = list(x.shape)
            for i in range(len(pads) // 2):
                out[-1 - i] += pads[2 * i] + pads[2 * i + 1]
            return tuple(out)
        call = lambda: ops.pad(x, pads)
    elif name == "tile":
        x = g.pick([pj.ones((2, 3)), pj.zeros((0, 2)), pj.ones((1,)), pj.ones((4,))])
        mult = tuple(g.pick(big[:10] + [2 ** 62 + 1]) for _ in range(g.r.randrange(1, 4)))

        def want():
            n = max(len(mult), len(x.shape))
            xs = (1,) * (n - len(x.shape)) + tuple(x.shape)
            ms = (1,) * (n - len(mult)) + mult
            return tuple(a * b for a, b in zip(xs, ms))
        call = lambda: ops.tile(x, mult)
    else:
        dims = [g.pick([0, 2 ** 31, 2 ** 62, 2 ** 63 - 1]) for _ in range(2)]
        x = g.tensor() if g.r.random() < 0.2 else None

        def parts():
            return [pj.zeros((0, d)) for d in dims] if x is None else [x, x]
        want = lambda: (0, sum(dims)) if x is None else None
        call = lambda: ops.concat(parts(), 1)

    def run():
        r = call()
        w = want()
        if w is not None and (min(w) < 0 or tuple(r.shape) != w):
            raise Finding("%s returned shape %r where Python's integers give %r" % (name, tuple(r.shape), w))
        return r
    return "sizes." + name, run, True


# ops.* entries the generic family leaves out: higher-order ones (their arguments are functions) and
# the printers (they would fill the log)
_NOT_GENERIC = {"print_", "Print", "vmap", "grad", "value_and_grad", "GradOperation", "HyperMap",
                "MultitypeFuncGraph", "Partial", "Primitive", "Depend", "depend", "DType", "dtype"}


def _any_op(g):
    """Any public ops.* function (or primitive class, instantiated with odd arguments), called with a
    mix of small tensors and odd values."""
    import types
    ops = g.pj.ops
    names = sorted(n for n in dir(ops) if not n.startswith("_") and n not in _NOT_GENERIC
                   and callable(getattr(ops, n)) and not isinstance(getattr(ops, n), types.ModuleType))
    name = g.pick(names)
    fn = getattr(ops, name)

    def arg():
        c = g.r.random()
        if c < 0.45:
            return g.tensor()
        if c < 0.55:
            return g.pj.ones(g.pick([(1, 2, 4, 4), (2, 3), (4,), (2, 1, 3, 3)]))
        if c < 0.65:
            return g.axis()
        if c < 0.75:
            return g.shape()
        return g.value()
    args = [arg() for _ in range(g.pick([0, 1, 1, 2, 2, 3, 4]))]
    if isinstance(fn, type):
        ctor = [g.pick([g.axis(), g.value(), True, 1])] if g.r.random() < 0.4 else []
        return "ops.%s()" % name, _restoring(g.pj, args, lambda: fn(*ctor)(*args)), name != "Dropout"
    random = name.startswith("rand") or name in ("dropout", "Dropout")  # (a new draw per call)
    return "ops." + name, _restoring(g.pj, args, lambda: fn(*args)), not random


def _restoring(pj, args, thunk):
    """thunk with a `reset` that puts the argument tensors' first values back: an op that writes
    into an argument (assign_add, scatter_add) must meet the same inputs eagerly and jitted."""
    saved = [(a, a.copy()) for a in args if isinstance(a, pj.Tensor)]

    def reset():
        for a, v in saved:
            a[...] = v
    thunk.reset = reset
    return thunk


FAMILIES = [_any_op, _any_op, _any_op, _exact_sizes, _creation, _tensor_ctor, _unary_ops, _unary_ops, _binary_ops, _binary_ops, _indexing, _methods, _layers,
            _checkpoint, _setters]


def make_case(seed, index, pj):
    r = random.Random("%d/%d" % (seed, index))
    g = Gen(r, pj)
    return g.pick(FAMILIES)(g)


# ---- the oracle ----

class Finding(Exception):
    pass


def _bad_exception(e):
    if isinstance(e, SystemError):
        return "SystemError: %s" % (e,)
    if isinstance(e, RuntimeError) and "internal error" in str(e):
        return "internal error: %s" % (e,)
    return None


def _flat_count(x):
    if isinstance(x, list):
        return sum(_flat_count(v) for v in x)
    return 1


def check_tensor(pj, t):
    shape = tuple(t.shape)
    numel = 1
    for d in shape:
        if not isinstance(d, int) or d < 0:
            raise Finding("a tensor with shape %r" % (shape,))
        numel *= d
    if t.numel() != numel:
        raise Finding("numel() %d for shape %r" % (t.numel(), shape))
    if numel == 0:
        return
    nbytes, itemsize = t.nbytes, t.itemsize
    if nbytes != numel * itemsize:
        raise Finding("nbytes %d for shape %r itemsize %d" % (nbytes, shape, itemsize))
    if numel <= 1 << 16:
        flat = t.tolist()
        got = _flat_count(flat) if shape else 1
        if got != numel:
            raise Finding("tolist() has %d values for shape %r" % (got, shape))
        try:
            m = memoryview(t.contiguous())
        except (BufferError, TypeError, ValueError):
            return
        if m.nbytes != nbytes:
            raise Finding("memoryview has %d bytes for shape %r (%d expected)" % (m.nbytes, shape, nbytes))


def _tensors(pj, x, depth=0):
    if isinstance(x, pj.Tensor):
        yield x
    elif isinstance(x, (list, tuple)) and depth < 3:
        for v in x[:16]:
            for t in _tensors(pj, v, depth + 1):
                yield t
    elif isinstance(x, dict) and depth < 3:
        for v in list(x.values())[:16]:
            for t in _tensors(pj, v, depth + 1):
                yield t


def _canon(pj, x):
    """A comparable picture of a result (NaN compares equal to NaN)."""
    if isinstance(x, pj.Tensor):
        if x.numel() > 4096 or any(d > 4096 for d in x.shape):
            return ("T", tuple(x.shape), str(x.dtype))
        return ("T", tuple(x.shape), str(x.dtype), _canon(pj, x.tolist()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_canon(pj, v) for v in x)
    if isinstance(x, float) and x != x:
        return "nan"
    if isinstance(x, types.FunctionType):  # a function an entry point builds (jacfwd(f), constexpr(f)): a new one per call
        return ("function", x.__qualname__)
    return x


def run_call(pj, thunk):
    """('ok', result) or ('raise', exception); a Finding for an exception no input may cause."""
    try:
        return "ok", thunk()
    except Finding:
        raise
    except RecursionError as e:
        return "raise", e
    except Exception as e:
        bad = _bad_exception(e)
        if bad:
            raise Finding(bad)
        return "raise", e


FOLLOW_UPS = [
    lambda pj, t: t.sum(), lambda pj, t: t.reshape(-1), lambda pj, t: t[..., None], lambda pj, t: t.T,
    lambda pj, t: pj.ops.softmax(t.astype(pj.float32), -1), lambda pj, t: t.astype(pj.float64) + 1,
    lambda pj, t: t[0], lambda pj, t: t[-1:], lambda pj, t: pj.ops.concat((t, t), 0), lambda pj, t: t.max(),
    lambda pj, t: pj.ops.matmul(t.astype(pj.float32), t.astype(pj.float32).T), lambda pj, t: t.contiguous(),
]


def check_result(pj, kind, res, follow=True):
    """Every tensor of a result has its storage, prints, and takes the follow-up ops (whose own
    results are checked the same way) with no crash and no exception no input may cause."""
    if kind != "ok":
        return
    for t in _tensors(pj, res):
        check_tensor(pj, t)
        if follow and t.numel() <= 1 << 16:
            for f in FOLLOW_UPS:
                k2, r2 = run_call(pj, lambda: f(pj, t))
                check_result(pj, k2, r2, follow=False)
    try:
        repr(res)
        str(res)
    except Exception as e:
        bad = _bad_exception(e)
        if bad:
            raise Finding("repr: " + bad)


def run_case(pj, seed, index):
    entry, thunk, compare = make_case(seed, index, pj)
    # the eager side is the reference: plain even under PIJIT_STRESS (the jitted side is not)
    level = pj.stress_stats()["level"]
    reset = getattr(thunk, "reset", lambda: None)
    if level:  # (stress mode exists only where pijit captures)
        pj.set_stress(0)
    try:
        reset()
        kind, res = run_call(pj, thunk)
    finally:
        if level:
            pj.set_stress(level)
    check_result(pj, kind, res)
    graphs = 0
    outcome = (kind, type(res) if kind == "raise" else _canon(pj, res), _describe(kind, res))
    del res  # (a result of some GiB would leave the jitted twin no room)
    if compare:
        jitted = pj.jit(lambda: thunk())
        for attempt in range(2):  # capture, then the cached graph
            reset()
            jkind, jres = run_call(pj, jitted)
            check_result(pj, jkind, jres)
            if MemoryError in (outcome[1], type(jres)):
                continue  # an allocation near the child's memory limit may fail on one side only
            if kind != jkind or (kind == "raise" and outcome[1] is not type(jres)):
                raise Finding("eager %s, jitted (call %d) %s" % (outcome[2], attempt + 1, _describe(jkind, jres)))
            if kind == "ok" and outcome[1] != _canon(pj, jres):
                raise Finding("eager and jitted (call %d) results differ: %.300r vs %.300r"
                              % (attempt + 1, outcome[1], _canon(pj, jres)))
            del jres
        graphs = pj.jit_stats(jitted)["graphs"]
    return "%s %d %s" % (entry, graphs, "returned" if kind == "ok" else "raised " + outcome[1].__name__)


def _describe(kind, v):
    if kind == "raise":
        return "raised %s: %.200s" % (type(v).__name__, v)
    return "returned %s" % type(v).__name__


def case_id(seed, index):
    return "s%d-%d" % (seed, index)


def repro(seed, index):
    return "PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed %d --case %d" % (seed, index)


def child_main(seed, indices):
    """Runs cases in this process; one line per case on stdout: 'CASE <id> ok|FINDING <entry> <why>'."""
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    except (ImportError, ValueError, OSError):
        pass
    sys.setrecursionlimit(3000)
    import pijit as pj
    crash_at = os.environ.get("PIJIT_ENTRY_FUZZ_CRASH_AT")  # the runner's self-test only
    if crash_at:
        sys.stderr.write("entry_fuzz: PIJIT_ENTRY_FUZZ_CRASH_AT=%s: that case crashes on purpose\n" % crash_at)
    for i in indices:
        cid = case_id(seed, i)
        sys.stdout.write("START %s\n" % cid)
        sys.stdout.flush()
        if crash_at == str(i):
            import signal
            os.kill(os.getpid(), signal.SIGSEGV)
        entry = "?"
        try:
            entry = run_case(pj, seed, i)
            line = "CASE %s ok %s" % (cid, entry)
        except Finding as f:
            line = "CASE %s FINDING %s" % (cid, str(f).replace("\n", " ")[:600])
        except Exception as e:  # raised outside the call (building the case, or the oracle reading a result)
            import traceback
            where = traceback.extract_tb(e.__traceback__)[-1]
            line = "CASE %s FINDING %s outside the call: %s: %.300s (%s:%d)" % (
                cid, entry, type(e).__name__, e, os.path.basename(where.filename), where.lineno)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    return 0


def _spawn(seed, indices, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = PYSCRIPTS + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--seed", str(seed),
           "--indices", ",".join(map(str, indices))]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode("utf-8", "replace"), True


def _parse(out, tally=None):
    done = {}
    for line in out.splitlines():
        if line.startswith("CASE "):
            parts = line.split(" ", 3)
            done[parts[1]] = (parts[2], parts[3] if len(parts) > 3 else "")
            if tally is not None and parts[2] == "ok":
                words = parts[3].split()  # entry, graphs, returned | raised Type
                tally["returned" if words[2] == "returned" else "raised"] += 1
                tally["graphs"] += int(words[1])
    return done


def _death(rc, timed_out, err):
    if timed_out:
        return "hang (no exit within the timeout)"
    tail = " | ".join(err.strip().splitlines()[-3:])[-400:]
    if rc < 0:
        return "killed by signal %d: %s" % (-rc, tail)
    return "exit status %d: %s" % (rc, tail)


def run(seed, count, batch=25, timeout=60, single_timeout=30, start=0, log=None, tally=None):
    """Runs cases [start, start+count) in batched children; returns {case id: failure text} for failures.
    tally (a dict) counts the passing cases that returned and raised, and the graphs their jitted
    twins compiled.

    When a batch's child dies (signal, abort, nonzero exit, timeout), each of its cases that gave no
    verdict is run again alone, so the failing case is named."""
    failures = {}
    indices = list(range(start, start + count))
    for b in range(0, len(indices), batch):
        chunk = indices[b:b + batch]
        rc, out, err, timed_out = _spawn(seed, chunk, timeout)
        done = _parse(out, tally)
        for cid, (verdict, text) in done.items():
            if verdict != "ok":
                failures[cid] = "%s  [repro: %s]" % (text, repro(seed, int(cid.split("-")[1])))
        if rc == 0 and not timed_out and len(done) == len(chunk):
            continue
        for i in chunk:
            cid = case_id(seed, i)
            if cid in done:
                continue
            rc1, out1, err1, to1 = _spawn(seed, [i], single_timeout)
            d1 = _parse(out1)
            if cid in d1 and rc1 == 0 and not to1:
                if d1[cid][0] != "ok":
                    failures[cid] = "%s  [repro: %s]" % (d1[cid][1], repro(seed, i))
                continue
            failures[cid] = "%s  [repro: %s]" % (_death(rc1, to1, err1), repro(seed, i))
        if not any(case_id(seed, i) in failures for i in chunk):
            # each case passes alone: what killed the batch is state one case left for a later one
            failures["batch-s%d-%d..%d" % (seed, chunk[0], chunk[-1])] = "%s; no case fails alone  [repro: %s]" % (
                _death(rc, timed_out, err), "PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed %d "
                "--start %d --count %d --batch %d" % (seed, chunk[0], len(chunk), len(chunk)))
        if log:
            log("batch %d..%d: child %s" % (chunk[0], chunk[-1], _death(rc, timed_out, err) if rc or timed_out else "ok"))
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--case", type=int, default=None, help="run this one case here, in this process")
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_main(args.seed, [int(i) for i in args.indices.split(",") if i])
    if args.case is not None:
        import pijit as pj
        print("case %s: %s" % (case_id(args.seed, args.case), make_case(args.seed, args.case, pj)[0]))
        entry = run_case(pj, args.seed, args.case)
        print("ok: %s" % entry)
        return 0
    tally = {"returned": 0, "raised": 0, "graphs": 0}
    failures = run(args.seed, args.count, batch=args.batch, start=args.start,
                   log=lambda s: print(s, flush=True), tally=tally)
    print("passing cases: %(returned)d returned, %(raised)d raised; %(graphs)d graphs compiled" % tally)
    for cid in sorted(failures):
        print("FAIL %s: %s" % (cid, failures[cid]))
    print("%d cases, %d failed" % (args.count, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
