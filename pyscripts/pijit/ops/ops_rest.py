"""The remaining `mindspore.ops` names: the primitive base classes and decorators, collective
communication for pijit's single-process world, the summary primitives, the custom-operator API
(ops.Custom and its registration builders), the LSTM primitive, RNNTLoss and fractional pooling.

- Collectives (AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll, NeighborExchange(V2)):
  pijit runs one process, rank 0 of a world of 1 (pijit.communication), so every collective has
  its one-member meaning: AllReduce and Broadcast return the input, AllGather concatenates the
  one part, ReduceScatter keeps the one part, AlltoAll exchanges with itself. They are copies
  (registry op 'copy'), so they capture into the caller's graph and their gradient is the
  collective the other way round (for one member: the identity), as MindSpore's bprops are. A
  group larger than one process raises NotImplementedError naming the collective: `_collective`
  is the one place a multi-process backend plugs in.
- Summary primitives check their arguments as MindSpore does and record nothing: pijit's
  SummaryRecord writes no summary files (pijit/train/summary.py), so there is nowhere for the
  values to go. They return None and capture as no-ops.
- Custom runs a 'pyfunc' or a 'hybrid' (ops.kernel) function as Python over numpy arrays (pijit's
  numpy stand-in where numpy is missing), and an 'aot' function from a shared library through
  ctypes with MindSpore's documented CPU signature. The Ascend kernel kinds raise
  NotImplementedError. Registration info (CustomRegOp, custom_info_register, op_info_register)
  is kept on the function and has no effect on pijit's kernels.
- LSTM is MindSpore's primitive over one flat weight tensor in its CPU (oneDNN) layout, computed
  with nn/rnn.py's step, so it captures and differentiates.
- RNNTLoss is the registry op 'rnnt_loss' (kernels/rnnt.h).
- Fractional pooling: the fixed-kernel (torch-style) forms compute their intervals from the
  random samples with tensor ops (capturable, differentiable through a gather); the TF-style
  FractionalMaxPool/FractionalAvgPool draw their pooling sequences on the host from a seeded
  generator and gather.
"""
import ctypes as _ctypes
import functools as _functools
import itertools as _itertools
import math as _math
import os as _os
import random as _random

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.communication import management as _comm
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF
from pijit.ops.primitive import (constexpr, PrimitiveWithCheck, PrimitiveWithInfer,  # noqa: F401
                                 prim_attr_register)
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase

__all__ = ["constexpr", "PrimitiveWithCheck", "PrimitiveWithInfer", "prim_attr_register"]


def _export(obj):
    __all__.append(obj.__name__)
    return obj


# ----- argument checks ------------------------------------------------------------------------

def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the '%s' must be a Tensor, but got %s" % (who, name, type(x).__name__))
    return x


def _int(who, name, v, lo=None):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', the '%s' must be an int, but got %s" % (who, name, type(v).__name__))
    if lo is not None and v < lo:
        raise ValueError("For '%s', the '%s' must be greater than or equal to %d, but got %d" % (who, name, lo, v))
    return v


def _bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("For '%s', the '%s' must be a bool, but got %s" % (who, name, type(v).__name__))
    return v


def _str(who, name, v):
    if not isinstance(v, str):
        raise TypeError("For '%s', the '%s' must be a str, but got %s" % (who, name, type(v).__name__))
    return v


def _int_tuple(who, name, v, n):
    """An int or a tuple/list of n ints, as a tuple of n positive ints."""
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,) * n
    if not isinstance(v, (tuple, list)) or len(v) != n or \
            any(isinstance(i, bool) or not isinstance(i, int) for i in v):
        raise TypeError("For '%s', the '%s' must be an int or a tuple of %d ints, but got %r" % (who, name, n, v))
    if any(i < 1 for i in v):
        raise ValueError("For '%s', the '%s' must be positive, but got %r" % (who, name, tuple(v)))
    return tuple(v)


# ----- 1. exports: DataType, ReduceOp ---------------------------------------------------------

def _data_type_class():
    """MindSpore's ops.DataType: (dtype, format) pairs named <DTYPE>_<Format>, used in
    CustomRegOp.dtype_format(...)."""
    dtypes = {"BOOL": "bool", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
              "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64", "F16": "float16",
              "F32": "float32", "F64": "float64", "BF16": "bfloat16", "C64": "complex64",
              "C128": "complex128"}
    formats = {"None": "", "Default": "DefaultFormat", "5HD": "NC1HWC0", "FracZ": "FRACTAL_Z",
               "FracNZ": "FRACTAL_NZ", "C1HWNCoC0": "C1HWNCoC0", "NCHW": "NCHW", "NHWC": "NHWC",
               "HWCN": "HWCN", "NDHWC": "NDHWC", "NCDHW": "NCDHW", "ND": "ND",
               "NDC1HWC0": "NDC1HWC0", "FRACTAL_Z_3D": "FRACTAL_Z_3D", "ChannelLast": "ChannelLast",
               "DefaultFormat": "DefaultFormat"}
    attrs = {"None_None": ("", ""), "None_Default": ("", "DefaultFormat")}
    for dk, dv in dtypes.items():
        for fk, fv in formats.items():
            if fk != "None":
                attrs["%s_%s" % (dk, fk)] = (dv, fv)
        attrs["%s_None" % dk] = (dv, "")
    attrs["__doc__"] = ("ops.DataType: the (data type, format) pairs a custom operator's registration "
                        "names, e.g. DataType.F32_Default == ('float32', 'DefaultFormat').")
    return type("DataType", (object,), attrs)


DataType = _data_type_class()
__all__.append("DataType")


@_export
class ReduceOp(object):
    """The reduction of AllReduce / ReduceScatter: ReduceOp.SUM, MAX, MIN, PROD (strings, as
    MindSpore's are)."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


_REDUCE_OPS = (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD)


# ----- 2. collectives -------------------------------------------------------------------------

def _group_of(who, group):
    group = _comm.GlobalComm.WORLD_COMM_GROUP if group is None else group
    _str(who, "group", group)
    _comm._check_group(group)
    return group


class _Collective(PrimitiveWithInfer):
    """Shared by the collectives: the group, its size and this process's rank in it."""

    def _setup(self, group):
        who = type(self).__name__
        self.group = _group_of(who, group)
        self.rank_size = _comm.get_group_size(self.group)
        self.rank = _comm.get_rank(self.group)
        self.add_prim_attr("group", self.group)
        self.add_prim_attr("rank_size", self.rank_size)

    def _collective(self, what):
        """The one place a multi-process backend plugs in (issue 48): today only a group of one
        process (this one) exists."""
        if self.rank_size != 1:
            raise NotImplementedError(
                "For '%s', %s over a group of %d processes needs a multi-process backend, which "
                "pijit does not have yet (it runs one process: rank 0 of a world of 1)"
                % (self.name, what, self.rank_size))

    def _input(self, x):
        return _tensor(self.name, "input_x", x)


@_export
class AllReduce(_Collective):
    """AllReduce(op=ReduceOp.SUM, group=world)(x): every member gets the reduction over the group;
    in a group of one, x itself (a copy). Gradient: the AllReduce (SUM) of the output gradient."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        PrimitiveWithInfer.__init__(self)
        if not isinstance(op, str):
            raise TypeError("For 'AllReduce', the 'op' should be str, but got %s." % type(op).__name__)
        if op not in _REDUCE_OPS:
            raise ValueError("For 'AllReduce', the 'op' must be one of %s, but got %r." % (list(_REDUCE_OPS), op))
        self.op = op
        self.add_prim_attr("op", op)
        self._setup(group)

    def __call__(self, x):
        self._collective("AllReduce(%s)" % self.op)
        return _op("copy", (self._input(x),))


@_export
class AllGather(_Collective):
    """AllGather(group=world)(x): the members' x concatenated along dim 0, shape
    (rank_size * x.shape[0], ...); for one member, x (a copy). Gradient: ReduceScatter(SUM)."""

    def __init__(self, group=None):
        PrimitiveWithInfer.__init__(self)
        self._setup(group)

    def __call__(self, x):
        x = self._input(x)
        if x.ndim < 1:
            raise ValueError("For 'AllGather', the rank of 'input_x' must be at least 1, but got 0")
        self._collective("AllGather")
        return _op("copy", (x,))


@_export
class ReduceScatter(_Collective):
    """ReduceScatter(op=ReduceOp.SUM, group=world)(x): the reduction over the group, split along
    dim 0 into rank_size parts, part `rank` to each member; x.shape[0] must divide by rank_size.
    For one member, x (a copy). Gradient: AllGather."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        PrimitiveWithInfer.__init__(self)
        if not isinstance(op, str):
            raise TypeError("For 'ReduceScatter', the 'op' should be str, but got %s." % type(op).__name__)
        if op not in _REDUCE_OPS:
            raise ValueError("For 'ReduceScatter', the 'op' must be one of %s, but got %r."
                             % (list(_REDUCE_OPS), op))
        self.op = op
        self.add_prim_attr("op", op)
        self._setup(group)

    def __call__(self, x):
        x = self._input(x)
        if x.ndim < 1 or x.shape[0] % self.rank_size:
            raise ValueError("For 'ReduceScatter', the first dimension of 'input_x' must be divisible by the "
                             "group size %d, but got shape %s" % (self.rank_size, tuple(x.shape)))
        self._collective("ReduceScatter(%s)" % self.op)
        return _op("copy", (x,))


@_export
class Broadcast(_Collective):
    """Broadcast(root_rank, group=world)(inputs): a tuple of tensors sent from root_rank to every
    member; returns a tuple of the same shapes. In a group of one the root is rank 0 and the
    result is the inputs (copies)."""

    def __init__(self, root_rank, group=None):
        PrimitiveWithInfer.__init__(self)
        _int("Broadcast", "root_rank", root_rank)
        self._setup(group)
        if not 0 <= root_rank < self.rank_size:
            raise ValueError("For 'Broadcast', the 'root_rank' must be in [0, %d) (the group's ranks), but got %d"
                             % (self.rank_size, root_rank))
        self.root_rank = root_rank
        self.add_prim_attr("root_rank", root_rank)

    def __call__(self, x):
        if not isinstance(x, tuple):
            raise TypeError("For 'Broadcast', the input must be a tuple of Tensors, but got %s" % type(x).__name__)
        for i, t in enumerate(x):
            _tensor("Broadcast", "input_x[%d]" % i, t)
        self._collective("Broadcast")
        return tuple(_op("copy", (t,)) for t in x)


@_export
class AlltoAll(_Collective):
    """AlltoAll(split_count, split_dim, concat_dim, group=world)(x): x split into split_count
    blocks along split_dim, block i sent to member i, the received blocks concatenated along
    concat_dim. split_count must equal the group size; for one member the result is x."""

    def __init__(self, split_count, split_dim, concat_dim, group=None):
        PrimitiveWithInfer.__init__(self)
        _int("AlltoAll", "split_count", split_count)
        _int("AlltoAll", "split_dim", split_dim)
        _int("AlltoAll", "concat_dim", concat_dim)
        self._setup(group)
        if split_count != self.rank_size:
            raise ValueError("For 'AlltoAll', the 'split_count' must be equal to the group size %d, but got %d"
                             % (self.rank_size, split_count))
        self.split_count, self.split_dim, self.concat_dim = split_count, split_dim, concat_dim
        for k in ("split_count", "split_dim", "concat_dim"):
            self.add_prim_attr(k, getattr(self, k))

    def __call__(self, x):
        x = self._input(x)
        for name in ("split_dim", "concat_dim"):
            d = getattr(self, name)
            if not -x.ndim <= d < x.ndim:
                raise ValueError("For 'AlltoAll', the '%s' must be in [%d, %d), but got %d"
                                 % (name, -x.ndim, x.ndim, d))
        if x.shape[self.split_dim] % self.split_count:
            raise ValueError("For 'AlltoAll', x.shape[%d] = %d must be divisible by 'split_count' %d"
                             % (self.split_dim, x.shape[self.split_dim], self.split_count))
        self._collective("AlltoAll")
        return _op("copy", (x,))


def _rank_ids(who, name, ids, n=None):
    if not isinstance(ids, (list, tuple)) or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise TypeError("For '%s', the '%s' must be a list of ints, but got %r" % (who, name, ids))
    if n is not None and len(ids) != n:
        raise ValueError("For '%s', the '%s' must have %d elements, but got %d" % (who, name, n, len(ids)))
    return list(ids)


def _no_neighbours(prim, *id_lists):
    """A world of one process has no neighbours: every rank id must be -1 (none); a real rank
    is an exchange between processes, which needs a multi-process backend."""
    for ids in id_lists:
        for r in ids:
            if r != -1:
                raise NotImplementedError(
                    "For '%s', exchanging with rank %d needs a multi-process backend, which pijit does not "
                    "have yet (it runs one process: every neighbour rank id must be -1)" % (prim.name, r))


@_export
class NeighborExchangeV2(_Collective):
    """NeighborExchangeV2(send_rank_ids, send_lens, recv_rank_ids, recv_lens, data_format='NCHW',
    group=world)(x): exchanges the borders of an NCHW tensor with the 8 neighbours (rank ids in
    the order top, top-right, right, bottom-right, bottom, bottom-left, left, top-left; -1 = no
    neighbour). recv_lens [top, bottom, left, right] of neighbours that exist grow the output.
    In a world of one, every neighbour is -1 and the output is x."""

    def __init__(self, send_rank_ids, send_lens, recv_rank_ids, recv_lens, data_format="NCHW", group=None):
        PrimitiveWithInfer.__init__(self)
        who = "NeighborExchangeV2"
        self.send_rank_ids = _rank_ids(who, "send_rank_ids", send_rank_ids, 8)
        self.recv_rank_ids = _rank_ids(who, "recv_rank_ids", recv_rank_ids, 8)
        self.send_lens = _rank_ids(who, "send_lens", send_lens, 4)
        self.recv_lens = _rank_ids(who, "recv_lens", recv_lens, 4)
        if any(v < 0 for v in self.send_lens + self.recv_lens):
            raise ValueError("For 'NeighborExchangeV2', the 'send_lens' and 'recv_lens' must be >= 0, but got "
                             "%r and %r" % (send_lens, recv_lens))
        _str(who, "data_format", data_format)
        if data_format != "NCHW":
            raise ValueError("For 'NeighborExchangeV2', the 'data_format' must be 'NCHW', but got %r" % data_format)
        self.data_format = data_format
        self._setup(group)
        for k in ("send_rank_ids", "send_lens", "recv_rank_ids", "recv_lens", "data_format"):
            self.add_prim_attr(k, getattr(self, k))

    def __call__(self, x):
        x = self._input(x)
        if x.ndim != 4:
            raise ValueError("For 'NeighborExchangeV2', the input must be 4-D (NCHW), but got shape %s"
                             % (tuple(x.shape),))
        _no_neighbours(self, self.send_rank_ids, self.recv_rank_ids)
        self._collective("NeighborExchangeV2")
        return _op("copy", (x,))


@_export
class NeighborExchange(_Collective):
    """NeighborExchange(send_rank_ids, recv_rank_ids, recv_shapes, send_shapes, recv_type,
    group=world)(inputs): sends inputs[i] to send_rank_ids[i], returns the tensors received from
    recv_rank_ids (of recv_shapes and recv_type). A world of one has no other rank: the lists
    must be empty and the result is the empty tuple."""

    def __init__(self, send_rank_ids, recv_rank_ids, recv_shapes, send_shapes, recv_type, group=None):
        PrimitiveWithInfer.__init__(self)
        who = "NeighborExchange"
        self.send_rank_ids = _rank_ids(who, "send_rank_ids", send_rank_ids)
        self.recv_rank_ids = _rank_ids(who, "recv_rank_ids", recv_rank_ids)
        if len(recv_shapes) != len(self.recv_rank_ids) or len(send_shapes) != len(self.send_rank_ids):
            raise ValueError("For 'NeighborExchange', 'recv_shapes' and 'send_shapes' must have one shape per rank "
                             "id, but got %d and %d for %d and %d ids" % (len(recv_shapes), len(send_shapes),
                                                                          len(self.recv_rank_ids),
                                                                          len(self.send_rank_ids)))
        self.recv_shapes, self.send_shapes, self.recv_type = recv_shapes, send_shapes, recv_type
        self._setup(group)

    def __call__(self, x):
        if not isinstance(x, tuple):
            raise TypeError("For 'NeighborExchange', the input must be a tuple of Tensors, but got %s"
                            % type(x).__name__)
        if len(x) != len(self.send_rank_ids):
            raise ValueError("For 'NeighborExchange', the number of inputs %d must equal the number of "
                             "send_rank_ids %d" % (len(x), len(self.send_rank_ids)))
        _no_neighbours(self, self.send_rank_ids, self.recv_rank_ids)
        return ()


# ----- 3. summaries ---------------------------------------------------------------------------

class _Summary(Primitive):
    """summary(name, value): checks name (a non-empty str) and value (a Tensor of the rank the
    kind takes) as MindSpore does, and returns None. Nothing is recorded: pijit's SummaryRecord
    writes no summary files (pijit/train/summary.py), so a recorded value would have no reader."""

    def _check_value(self, value):
        pass

    def __call__(self, name, value):
        if not isinstance(name, str):
            raise TypeError("For '%s', the type of 'name' must be str, but got %s." % (self.name, type(name).__name__))
        if not name:
            raise ValueError("For '%s', the 'name' must not be an empty string." % self.name)
        if not isinstance(value, _Tensor):
            raise TypeError("For '%s', the type of 'value' must be Tensor, but got %s."
                            % (self.name, type(value).__name__))
        self._check_value(value)
        return None


@_export
class ScalarSummary(_Summary):
    """ScalarSummary()(name, value): value a scalar Tensor (shape () or (1,))."""

    def _check_value(self, value):
        if tuple(value.shape) not in ((), (1,)):
            raise ValueError("For 'ScalarSummary', the shape of 'value' must be () or (1,) (a scalar), but got %s."
                             % (tuple(value.shape),))


@_export
class TensorSummary(_Summary):
    """TensorSummary()(name, value): any Tensor with at least one dimension... or a scalar."""


@_export
class ImageSummary(_Summary):
    """ImageSummary()(name, value): value a 4-D Tensor (N, C, H, W)."""

    def _check_value(self, value):
        if value.ndim != 4:
            raise ValueError("For 'ImageSummary', the dimension of 'value' must be 4, but got %d." % value.ndim)


@_export
class HistogramSummary(_Summary):
    """HistogramSummary()(name, value): any non-empty Tensor."""

    def _check_value(self, value):
        if value.size == 0:
            raise ValueError("For 'HistogramSummary', the 'value' must not be empty.")


# ----- 4. the custom-operator API -------------------------------------------------------------

def _np():
    try:
        import numpy
        return numpy
    except ImportError:
        from pijit import numpy_lite
        return numpy_lite


def _to_numpy(x):
    if isinstance(x, _Tensor):
        np = _np()
        return x.asnumpy() if np.__name__ == "numpy" else np.array(x)
    return x


def _dtype_name(d):
    return str(_dt.as_dtype(d)).lower()


_HYBRID_MATH = ("sqrt", "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "tanh",
                "sinh", "cosh", "power", "abs", "ceil", "floor", "trunc", "round", "sign", "isnan", "isinf",
                "isfinite", "log1p", "expm1")
_HYBRID_ALIAS = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "rint": "round"}
_HYBRID_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                  "float32", "float64")


def _hybrid_intrinsics():
    """The names MindSpore's hybrid DSL provides inside an ops.kernel function, as Python over
    numpy arrays: output_tensor/allocate, the loop forms, grid, math and dtype casts."""
    np = _np()
    names = {}

    def alloc(shape, dtype, *args):
        return np.zeros(tuple(shape), dtype=getattr(np, str(dtype)) if isinstance(dtype, str) else dtype)

    names["output_tensor"] = names["allocate"] = alloc
    for loop in ("serial", "vectorize", "parallel", "reduce"):
        names[loop] = range

    def grid(extents):
        return _itertools.product(*(range(e) for e in extents))
    names["grid"] = grid
    for m in _HYBRID_MATH:
        fn = getattr(np, m, None) or getattr(_math, m, None)
        if fn is not None:
            names[m] = fn
    for a, m in _HYBRID_ALIAS.items():
        if m in names:
            names[a] = names[m]
    names["rsqrt"] = lambda v: 1.0 / np.sqrt(v)
    for d in _HYBRID_DTYPES:
        t = getattr(np, d, None) if d != "bool" else getattr(np, "bool_", bool)
        if t is not None:
            names[d] = t
    return names


class _Kernel(object):
    """A function decorated with ops.kernel: calling it runs the body as Python with the DSL's
    intrinsics (output_tensor, allocate, serial/parallel/..., grid, math) in scope."""

    def __init__(self, fn, reg_info=None, compile_attrs=None):
        if not callable(fn):
            raise TypeError("kernel: expected a function, got %s" % type(fn).__name__)
        _functools.update_wrapper(self, fn)
        self.fn = fn
        self.reg_info = reg_info
        self.compile_attrs = dict(compile_attrs or {})

    def __call__(self, *args):
        import types
        fn = self.fn
        scope = _hybrid_intrinsics()
        scope.update(fn.__globals__)
        run = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        return run(*[_to_numpy(a) for a in args])


@_export
def kernel(fn=None, reg_info=None, compile_attrs=None):
    """@ops.kernel / @ops.kernel(reg_info=..., compile_attrs=...): marks a function written in
    MindSpore's hybrid DSL. Called directly (or through Custom(func_type='hybrid')) it runs as
    Python over numpy arrays."""
    if fn is None:
        return lambda f: kernel(f, reg_info, compile_attrs)
    if compile_attrs is not None and not isinstance(compile_attrs, dict):
        raise TypeError("kernel: compile_attrs must be a dict, got %s" % type(compile_attrs).__name__)
    return _Kernel(fn, reg_info, compile_attrs)


ms_kernel = kernel  # (the name older MindSpore releases used)

_FUNC_TYPES = ("hybrid", "akg", "tbe", "aot", "pyfunc", "julia", "aicpu")
_ASCEND_ONLY = ("tbe", "aicpu")


def _apply_spec(spec, args):
    return spec(*args) if callable(spec) else spec


def _norm_shape(s):
    return tuple(int(d) for d in s)


@_export
class Custom(Primitive):
    """Custom(func, out_shape=None, out_dtype=None, func_type='hybrid', bprop=None,
    reg_info=None): a user-defined operator.

    - 'pyfunc': func(*numpy arrays) -> array or tuple of arrays; out_shape / out_dtype (values,
      or callables of the inputs' shapes / dtypes) say what the outputs are, and the results
      are checked against and cast to them.
    - 'hybrid' (and 'akg' with a Python function): an ops.kernel function, run as Python over
      numpy arrays with the DSL's intrinsics; out_shape / out_dtype default to the result's.
    - 'aot': func is "path/to/lib.so:function" with MindSpore's CPU signature
      int f(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
      void* stream, void* extra); params are the inputs then the outputs (allocated here from
      out_shape / out_dtype); a nonzero return raises RuntimeError.
    - 'tbe', 'aicpu' (Ascend kernels) and 'julia' raise NotImplementedError.
    bprop(*inputs, out, dout) -> one gradient per input gives the gradient; without it the
    outputs are constants of the gradient tape. Under jit the call runs eagerly (host code).
    """

    def __init__(self, func, out_shape=None, out_dtype=None, func_type="hybrid", bprop=None, reg_info=None):
        Primitive.__init__(self)
        if not isinstance(func_type, str):
            raise TypeError("For 'Custom', 'func_type' must be a str, but got %s" % type(func_type).__name__)
        if func_type not in _FUNC_TYPES:
            raise ValueError("For 'Custom', 'func_type' must be one of %s, but got %r" % (list(_FUNC_TYPES), func_type))
        if func_type in _ASCEND_ONLY:
            raise NotImplementedError("For 'Custom', func_type %r builds an Ascend kernel, which pijit (CPU) cannot "
                                      "run; use 'pyfunc', 'hybrid' or 'aot'" % func_type)
        if func_type == "julia":
            raise NotImplementedError("For 'Custom', func_type 'julia' needs a Julia runtime, which pijit does not "
                                      "embed; use 'pyfunc', 'hybrid' or 'aot'")
        if func_type == "akg" and not callable(func):
            raise NotImplementedError("For 'Custom', func_type 'akg' with a kernel source string compiles with "
                                      "AKG, which pijit does not have; pass an ops.kernel function")
        if bprop is not None and not callable(bprop):
            raise TypeError("For 'Custom', 'bprop' must be a function, but got %s" % type(bprop).__name__)
        self.func, self.func_type, self.bprop = func, func_type, bprop
        self.out_shape, self.out_dtype = out_shape, out_dtype
        self.reg_info = reg_info if reg_info is not None else getattr(func, "reg_info", None)
        self._aot = None
        if func_type == "aot":
            self._aot = self._load_aot(func)
            if out_shape is None or out_dtype is None:
                raise ValueError("For 'Custom', func_type 'aot' needs 'out_shape' and 'out_dtype' to allocate the "
                                 "outputs")
        elif not callable(func):
            raise TypeError("For 'Custom', 'func' must be a function for func_type %r, but got %s"
                            % (func_type, type(func).__name__))
        self.attrs.update(func_type=func_type)
        self.name = "Custom"

    @staticmethod
    def _load_aot(func):
        if not isinstance(func, str) or ":" not in func:
            raise TypeError("For 'Custom', func_type 'aot' takes func as 'path/to/library.so:function_name', but "
                            "got %r" % (func,))
        path, name = func.rsplit(":", 1)
        path = _os.path.abspath(_os.path.expanduser(path))
        if not _os.path.isfile(path):
            raise ValueError("For 'Custom', the aot library %r does not exist" % path)
        lib = _ctypes.CDLL(path)
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ValueError("For 'Custom', the aot library %r has no function %r" % (path, name)) from None
        fn.restype = _ctypes.c_int
        fn.argtypes = [_ctypes.c_int, _ctypes.POINTER(_ctypes.c_void_p), _ctypes.POINTER(_ctypes.c_int),
                       _ctypes.POINTER(_ctypes.POINTER(_ctypes.c_int64)), _ctypes.POINTER(_ctypes.c_char_p),
                       _ctypes.c_void_p, _ctypes.c_void_p]
        return fn

    def _specs(self, args):
        """[(shape, dtype)] of the outputs from out_shape / out_dtype, or None where unset."""
        tensors = [a for a in args if isinstance(a, _Tensor)]
        shapes = _apply_spec(self.out_shape, [tuple(t.shape) for t in tensors])
        dtypes = _apply_spec(self.out_dtype, [t.dtype for t in tensors])
        if shapes is None and dtypes is None:
            return None
        multi = isinstance(shapes, (list, tuple)) and shapes and isinstance(shapes[0], (list, tuple))
        if shapes is not None and not multi:
            shapes = [shapes]
        if dtypes is not None and not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        n = len(shapes) if shapes is not None else len(dtypes)
        shapes = [_norm_shape(s) for s in shapes] if shapes is not None else [None] * n
        dtypes = [_dt.as_dtype(d) for d in dtypes] if dtypes is not None else [None] * n
        if len(shapes) != len(dtypes):
            raise ValueError("For 'Custom', 'out_shape' gives %d outputs but 'out_dtype' %d"
                             % (len(shapes), len(dtypes)))
        return list(zip(shapes, dtypes)), bool(multi) or (isinstance(self.out_dtype, (list, tuple)))

    def _python(self, args):
        from pijit.tensor import Tensor
        res = self.func(*[_to_numpy(a) for a in args])
        specs = self._specs(args)
        multi = isinstance(res, (tuple, list))
        outs = list(res) if multi else [res]
        if specs is not None:
            spec, smulti = specs
            if len(spec) != len(outs):
                raise ValueError("For 'Custom', the function returned %d outputs but out_shape/out_dtype declare %d"
                                 % (len(outs), len(spec)))
            multi = multi or smulti
        else:
            spec = [(None, None)] * len(outs)
        result = []
        for i, (o, (shape, dtype)) in enumerate(zip(outs, spec)):
            t = o if isinstance(o, Tensor) else Tensor(o)  # (numpy arrays; the stand-in's too)
            if dtype is not None and t.dtype is not dtype:
                t = t.astype(dtype)
            if shape is not None and tuple(t.shape) != shape:
                raise ValueError("For 'Custom', output %d has shape %s but out_shape declares %s"
                                 % (i, tuple(t.shape), shape))
            result.append(t)
        return tuple(result) if multi else result[0]

    def _run_aot(self, args):
        from pijit.ops import zeros
        specs, multi = self._specs(args)
        ins = []
        for i, a in enumerate(args):
            ins.append(_op("copy", (_tensor("Custom", "inputs[%d]" % i, a),)))  # contiguous, owned
        outs = [zeros(shape, dtype) for shape, dtype in specs]
        every = ins + outs
        n = len(every)
        params = (_ctypes.c_void_p * n)(*[t._data_ptr() for t in every])
        ndims = (_ctypes.c_int * n)(*[t.ndim for t in every])
        shape_arrays = [(_ctypes.c_int64 * max(t.ndim, 1))(*tuple(t.shape)) for t in every]
        shapes = (_ctypes.POINTER(_ctypes.c_int64) * n)(
            *[_ctypes.cast(s, _ctypes.POINTER(_ctypes.c_int64)) for s in shape_arrays])
        dtypes = (_ctypes.c_char_p * n)(*[_dtype_name(t.dtype).encode() for t in every])
        rc = self._aot(n, params, ndims, shapes, dtypes, None, None)
        if rc != 0:
            raise RuntimeError("For 'Custom', the aot function %r returned %d (nonzero: failure)" % (self.func, rc))
        return tuple(outs) if multi else outs[0]

    def _forward(self, *args):
        if self.func_type == "aot":
            return self._run_aot(args)
        return self._python(args)

    def __call__(self, *args):
        if self.bprop is not None and _C.tape_active():
            return _C.call_with_bprop(self._forward, self.bprop, tuple(args), "Custom")
        return self._forward(*args)


@_export
class CustomRegOp(object):
    """CustomRegOp(op_name='Custom'): builds a custom operator's registration info:
    .input(index, name, param_type='required'), .output(...), .dtype_format(*DataType pairs),
    .attr(name, param_type, value_type, default_value=None), .target('CPU'|'GPU'|'Ascend'),
    .get_op_info() -> dict. pijit keeps the info; its kernels do not read it."""

    def __init__(self, op_name="Custom"):
        if not isinstance(op_name, str):
            raise TypeError("CustomRegOp: op_name must be a str, got %s" % type(op_name).__name__)
        self.op_name = op_name
        self.inputs, self.outputs, self.attr_, self.dtype_format_ = [], [], [], []
        self.target_ = None

    def _io(self, lst, index, name, param_type, kwargs):
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError("CustomRegOp: index must be an int, got %s" % type(index).__name__)
        if name is not None and not isinstance(name, str):
            raise TypeError("CustomRegOp: name must be a str, got %s" % type(name).__name__)
        if param_type not in ("required", "optional", "dynamic"):
            raise ValueError("CustomRegOp: param_type must be 'required', 'optional' or 'dynamic', got %r"
                             % (param_type,))
        entry = {"index": index, "name": name, "paramType": param_type}
        entry.update(kwargs)
        lst.append(entry)
        return self

    def input(self, index=None, name=None, param_type="required", **kwargs):
        return self._io(self.inputs, index, name, param_type, kwargs)

    def output(self, index=None, name=None, param_type="required", **kwargs):
        return self._io(self.outputs, index, name, param_type, kwargs)

    def dtype_format(self, *args):
        for a in args:
            if not (isinstance(a, tuple) and len(a) == 2 and all(isinstance(s, str) for s in a)):
                raise TypeError("CustomRegOp.dtype_format: each argument must be a DataType pair (dtype, format), "
                                "got %r" % (a,))
        self.dtype_format_.append(tuple(args))
        return self

    def attr(self, name=None, param_type=None, value_type=None, default_value=None, **kwargs):
        entry = {"name": name, "paramType": param_type, "type": value_type}
        if default_value is not None:
            entry["defaultValue"] = str(default_value)
        entry.update(kwargs)
        self.attr_.append(entry)
        return self

    def target(self, target=None):
        if target is not None and target not in ("Ascend", "GPU", "CPU"):
            raise ValueError("CustomRegOp.target: must be 'Ascend', 'GPU' or 'CPU', got %r" % (target,))
        self.target_ = target
        return self

    def get_op_info(self):
        return {"op_name": self.op_name, "imply_type": "Custom", "inputs": list(self.inputs),
                "outputs": list(self.outputs), "attr": list(self.attr_),
                "dtype_format": [list(f) for f in self.dtype_format_], "target": self.target_}


def _info_of(info):
    return info.get_op_info() if isinstance(info, CustomRegOp) else info


@_export
def custom_info_register(*reg_info):
    """@custom_info_register(CustomRegOp(...)..., ...): attaches the registration info to the
    function as func.reg_info (a list; Custom reads it when reg_info is not given)."""
    def deco(fn):
        infos = [_info_of(i) for i in reg_info]
        prior = getattr(fn, "reg_info", None) or []
        fn.reg_info = list(prior) + infos
        return fn
    return deco


@_export
def op_info_register(op_info):
    """@op_info_register(info): MindSpore registers a built-in kernel's info; pijit keeps it on the
    function (func.op_info) and registers nothing."""
    def deco(fn):
        fn.op_info = _info_of(op_info)
        return fn
    return deco


@_export
def get_vm_impl_fn(prim):
    """The Python implementation of a primitive (an instance, or a primitive class name that takes
    no arguments): a function of its inputs; None when there is none."""
    if isinstance(prim, str):
        from pijit import ops
        cls = getattr(ops, prim, None)
        if not isinstance(cls, type) or not issubclass(cls, Primitive):
            return None
        try:
            prim = cls()
        except TypeError:
            return None
    if isinstance(prim, Primitive):
        return lambda *args: prim(*args)
    return None


# ----- 5. the LSTM primitive ------------------------------------------------------------------

@_export
class LSTM(Primitive):
    """LSTM(input_size, hidden_size, num_layers, has_bias, bidirectional, dropout, proj_size=0)
    (x (T, B, input_size), h (L*D, B, R), c (L*D, B, H), w) -> (output (T, B, D*R), h_n, c_n,
    reserve, state), R = proj_size or hidden_size.

    w holds every weight in MindSpore's CPU (oneDNN ldgoi) layout, flattened and concatenated:
    first W_ih (4H, in_l) of every (layer, direction), then W_hh (4H, R) of each, then W_hr
    (R, H) of each when proj_size > 0, then one bias (4H,) per (layer, direction) when has_bias
    (b_ih + b_hh: oneDNN takes one). Gate rows i, f, g, o (torch's order). reserve and state are
    placeholders (oneDNN's workspace); dropout is accepted and not applied, as on MindSpore's CPU.
    """

    def __init__(self, input_size, hidden_size, num_layers, has_bias, bidirectional, dropout, proj_size=0):
        who = "LSTM"
        _int(who, "input_size", input_size, 1)
        _int(who, "hidden_size", hidden_size, 1)
        _int(who, "num_layers", num_layers, 1)
        _bool(who, "has_bias", has_bias)
        _bool(who, "bidirectional", bidirectional)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise TypeError("For 'LSTM', the 'dropout' must be a float, but got %s" % type(dropout).__name__)
        if not 0.0 <= dropout <= 1.0:
            raise ValueError("For 'LSTM', the 'dropout' must be in range [0.0, 1.0], but got %s" % dropout)
        _int(who, "proj_size", proj_size, 0)
        if proj_size >= hidden_size:
            raise ValueError("For 'LSTM', the 'proj_size' must be smaller than 'hidden_size' %d, but got %d"
                             % (hidden_size, proj_size))
        super().__init__(input_size=input_size, hidden_size=hidden_size, num_layers=num_layers,
                         has_bias=has_bias, bidirectional=bidirectional, dropout=float(dropout),
                         proj_size=proj_size)
        self.num_directions = 2 if bidirectional else 1
        self.real_hidden = proj_size if proj_size > 0 else hidden_size

    def weight_size(self):
        """The number of elements w must have."""
        a = self.attrs
        H, R, D, L = a["hidden_size"], self.real_hidden, self.num_directions, a["num_layers"]
        n = 0
        for layer in range(L):
            layer_in = a["input_size"] if layer == 0 else R * D
            n += D * (4 * H * layer_in + 4 * H * R + (R * H if a["proj_size"] else 0) + (4 * H if a["has_bias"] else 0))
        return n

    def _unpack(self, w):
        """{(layer, direction): (w_ih, w_hh, w_hr or None, bias or None)} views of the flat w."""
        a = self.attrs
        H, R, D, L = a["hidden_size"], self.real_hidden, self.num_directions, a["num_layers"]
        flat = _op("reshape", (w,), shape=(-1,))
        pos = [0]

        def take(shape):
            n = 1
            for s in shape:
                n *= s
            piece = flat[pos[0]:pos[0] + n]
            pos[0] += n
            return _op("reshape", (piece,), shape=shape)

        keys = [(layer, d) for layer in range(L) for d in range(D)]
        w_ih = {k: take((4 * H, a["input_size"] if k[0] == 0 else R * D)) for k in keys}
        w_hh = {k: take((4 * H, R)) for k in keys}
        w_hr = {k: take((R, H)) if a["proj_size"] else None for k in keys}
        bias = {k: take((4 * H,)) if a["has_bias"] else None for k in keys}
        return {k: (w_ih[k], w_hh[k], w_hr[k], bias[k]) for k in keys}

    def __call__(self, x, h, c, w):
        from pijit.nn.rnn import _step
        who = "LSTM"
        a = self.attrs
        for name, t in (("x", x), ("h", h), ("c", c), ("w", w)):
            _tensor(who, name, t)
        H, R, D, L = a["hidden_size"], self.real_hidden, self.num_directions, a["num_layers"]
        if x.ndim != 3 or x.shape[2] != a["input_size"]:
            raise ValueError("For 'LSTM', 'x' must be (seq_len, batch_size, %d), but got shape %s"
                             % (a["input_size"], tuple(x.shape)))
        T, B = x.shape[0], x.shape[1]
        for name, t, size in (("h", h, R), ("c", c, H)):
            if tuple(t.shape) != (L * D, B, size):
                raise ValueError("For 'LSTM', '%s' must be of shape %s, but got %s"
                                 % (name, (L * D, B, size), tuple(t.shape)))
        if w.size != self.weight_size():
            raise ValueError("For 'LSTM', 'w' must hold %d elements for these sizes, but got %d (shape %s)"
                             % (self.weight_size(), w.size, tuple(w.shape)))
        for name, t in (("h", h), ("c", c), ("w", w)):
            if t.dtype != x.dtype:
                raise TypeError("For 'LSTM', the dtype of '%s' must be the dtype of 'x' (%s), but got %s"
                                % (name, x.dtype, t.dtype))
        weights = self._unpack(w)
        layer_in = x
        h_n, c_n = [], []
        for layer in range(L):
            outs = []
            for d in range(D):
                w_ih, w_hh, w_hr, bias = weights[(layer, d)]
                k = layer * D + d
                state = (h[k], c[k])
                gi = NF.dense(layer_in, w_ih, bias)  # (T, B, 4H): every step's input projection
                steps = _op("split", (gi,), axis=0, sections=T) if T > 1 else (gi,)
                order = range(T - 1, -1, -1) if d == 1 else range(T)
                ys = [None] * T
                for t in order:
                    hn, cn = _step("LSTM", _op("squeeze", (steps[t],), axis=(0,)), state, w_hh, None)
                    if w_hr is not None:
                        hn = NF.dense(hn, w_hr)
                    state = (hn, cn)
                    ys[t] = hn
                outs.append(_op("stack", tuple(ys), axis=0))
                h_n.append(state[0])
                c_n.append(state[1])
            layer_in = outs[0] if D == 1 else _op("concat", tuple(outs), axis=2)
        placeholder = _creation.zeros((1, 1), dtype=x.dtype)
        return (layer_in, _op("stack", tuple(h_n), axis=0), _op("stack", tuple(c_n), axis=0),
                placeholder, placeholder)


# ----- 6. RNNTLoss ----------------------------------------------------------------------------

@_export
class RNNTLoss(Primitive):
    """RNNTLoss(blank_label=0)(acts (B, T, U+1, V) float16/float32 (and float64), labels (B, U) int32,
    input_lengths (B,) int32, label_lengths (B,) int32) -> (costs (B,), grads (B, T, U+1, V)):
    the RNN-Transducer loss of the softmax of acts and its gradient with respect to acts."""

    def __init__(self, blank_label=0):
        _int("RNNTLoss", "blank_label", blank_label, 0)
        super().__init__(blank_label=blank_label)

    def __call__(self, acts, labels, input_lengths, label_lengths):
        who = "RNNTLoss"
        acts = _tensor(who, "acts", acts)
        for name, t in (("labels", labels), ("input_lengths", input_lengths), ("label_lengths", label_lengths)):
            _tensor(who, name, t)
        if acts.dtype not in (_dt.float16, _dt.float32, _dt.float64):  # (float64: pijit's addition)
            raise TypeError("For 'RNNTLoss', the dtype of 'acts' must be float16 or float32, but got %s" % acts.dtype)
        half = acts.dtype == _dt.float16
        x = acts.astype(_dt.float32) if half else acts
        costs, grads = _op("rnnt_loss", (x, labels, input_lengths, label_lengths), blank=self.attrs["blank_label"])
        if half:
            return costs.astype(_dt.float16), grads.astype(_dt.float16)
        return costs, grads


# ----- 7. fractional pooling ------------------------------------------------------------------

def _intervals(u, n_in, n_out, k, dtype):
    """The start of each of n_out windows of size k over n_in, from samples u (..., 1) in [0, 1):
    floor((i + u) * alpha) - floor(u * alpha), alpha = (n_in - k) / (n_out - 1), the last window
    at n_in - k (Graham's fractional pooling with a fixed window, as torch and MindSpore compute
    it, in the samples' dtype). Returns int64 (..., n_out)."""
    last = _creation.full((1,), n_in - k, dtype=_dt.int64)
    lead = tuple(u.shape[:-1])
    if n_out == 1:
        return _op("broadcast_to", (last,), shape=lead + (1,))
    alpha = _creation.full((), float(n_in - k) / float(n_out - 1), dtype=dtype)
    i = _creation.arange(0, n_out - 1, 1, dtype=dtype)
    start = F.floor((i + u) * alpha) - F.floor(u * alpha)
    start = start.astype(_dt.int64)
    return _op("concat", (start, _op("broadcast_to", (last,), shape=lead + (1,))), axis=-1)


def _fixed_pool(who, x, samples, ksize, out_size):
    """Fractional max pooling with a fixed window over the trailing len(ksize) dims of x
    (N, C, *spatial): (y (N, C, *out_size), argmax int64 flat index into the spatial dims)."""
    nd = len(ksize)
    N, C = x.shape[0], x.shape[1]
    spatial = tuple(x.shape[2:])
    for d in range(nd):
        if out_size[d] + ksize[d] - 1 >= spatial[d]:  # (torch's bound too)
            raise ValueError("For '%s', out_size[%d] + kernel_size[%d] - 1 = %d must be less than the input size "
                             "%d" % (who, d, d, out_size[d] + ksize[d] - 1, spatial[d]))
    if tuple(samples.shape) != (N, C, nd):
        raise ValueError("For '%s', the shape of 'random_samples' must be %s, but got %s"
                         % (who, (N, C, nd), tuple(samples.shape)))
    if samples.dtype != x.dtype:
        samples = samples.astype(x.dtype) if x.dtype in (_dt.float16, _dt.float32, _dt.float64) else samples
    if x.dtype == _dt.float16:  # the max is exact in float32; index_ops' gather takes 4- and 8-byte items
        y, idx = _fixed_pool(who, x.astype(_dt.float32), samples.astype(_dt.float32), ksize, out_size)
        return y.astype(_dt.float16), idx
    sdtype = samples.dtype
    # torch's sample order: the last spatial dim takes sample 0 in 2-D (W, H); T, H, W in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    flat = None
    stride = 1
    strides = []
    for d in range(nd - 1, -1, -1):
        strides.insert(0, stride)
        stride *= spatial[d]
    # index (N, C, o_0.., o_{nd-1}, k_0.., k_{nd-1}) = sum_d (start_d[o_d] + k_d) * stride_d
    for d in range(nd):
        u = samples[:, :, order[d]:order[d] + 1]
        start = _intervals(u, spatial[d], out_size[d], ksize[d], sdtype)  # (N, C, o_d)
        pos = _op("reshape", (start,), shape=(N, C) + tuple(out_size[j] if j == d else 1 for j in range(nd))
                  + (1,) * nd)
        off = _op("reshape", (_creation.arange(0, ksize[d], 1, dtype=_dt.int64),),
                  shape=(1, 1) + (1,) * nd + tuple(ksize[j] if j == d else 1 for j in range(nd)))
        term = (pos + off) * strides[d]
        flat = term if flat is None else flat + term
    kk = 1
    for k in ksize:
        kk *= k
    oo = 1
    for o in out_size:
        oo *= o
    flat = _op("broadcast_to", (flat,), shape=(N, C) + tuple(out_size) + tuple(ksize))
    flat = _op("reshape", (flat,), shape=(N, C, oo * kk))
    vals = F.gather_elements(_op("reshape", (x,), shape=(N, C, stride)), 2, flat)
    vals = _op("reshape", (vals,), shape=(N, C, oo, kk))
    y, arg = F.max(vals, axis=-1)
    idx = F.gather_elements(_op("reshape", (flat,), shape=(N, C, oo, kk)), 3,
                            _op("reshape", (arg,), shape=(N, C, oo, 1)))
    shape = (N, C) + tuple(out_size)
    return _op("reshape", (y,), shape=shape), _op("reshape", (idx,), shape=shape)


def _check_float(who, name, x, allowed=(_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)):
    if x.dtype not in allowed:
        raise TypeError("For '%s', the dtype of '%s' must be in %s, but got %s"
                        % (who, name, [str(d) for d in allowed], x.dtype))
    return x


@_export
class FractionalMaxPoolWithFixedKsize(Primitive):
    """FractionalMaxPoolWithFixedKsize(ksize, output_shape, data_format='NCHW')(input_x (N, C, H, W),
    random_samples (N, C, 2) in [0, 1)) -> (y (N, C, oH, oW), argmax int64 (h * W + w)).
    random_samples[..., 0] places the columns, [..., 1] the rows (as torch's)."""

    def __init__(self, ksize, output_shape, data_format="NCHW"):
        who = "FractionalMaxPoolWithFixedKsize"
        self.ksize = _int_tuple(who, "ksize", ksize, 2)
        self.output_shape = _int_tuple(who, "output_shape", output_shape, 2)
        _str(who, "data_format", data_format)
        if data_format != "NCHW":
            raise ValueError("For '%s', the 'data_format' must be 'NCHW', but got %r" % (who, data_format))
        super().__init__(ksize=self.ksize, output_shape=self.output_shape, data_format=data_format)

    def __call__(self, input_x, random_samples):
        who = "FractionalMaxPoolWithFixedKsize"
        x = _check_float(who, "input_x", _tensor(who, "input_x", input_x))
        s = _check_float(who, "random_samples", _tensor(who, "random_samples", random_samples),
                         (_dt.float16, _dt.float32, _dt.float64))
        if x.ndim != 4:
            raise ValueError("For '%s', the dimension of 'input_x' must be 4, but got %d" % (who, x.ndim))
        return _fixed_pool(who, x, s, self.ksize, self.output_shape)


@_export
class FractionalMaxPool3DWithFixedKsize(Primitive):
    """FractionalMaxPool3DWithFixedKsize(ksize, output_shape, data_format='NCDHW')(x (N, C, D, H, W),
    random_samples (N, C, 3)) -> (y (N, C, oD, oH, oW), argmax int64 (d * H * W + h * W + w))."""

    def __init__(self, ksize, output_shape, data_format="NCDHW"):
        who = "FractionalMaxPool3DWithFixedKsize"
        self.ksize = _int_tuple(who, "ksize", ksize, 3)
        self.output_shape = _int_tuple(who, "output_shape", output_shape, 3)
        _str(who, "data_format", data_format)
        if data_format not in ("NCDHW", "NDHWC"):
            raise ValueError("For '%s', the 'data_format' must be 'NCDHW' or 'NDHWC', but got %r" % (who, data_format))
        self.data_format = data_format
        super().__init__(ksize=self.ksize, output_shape=self.output_shape, data_format=data_format)

    def __call__(self, x, random_samples):
        who = "FractionalMaxPool3DWithFixedKsize"
        x = _check_float(who, "x", _tensor(who, "x", x))
        s = _check_float(who, "random_samples", _tensor(who, "random_samples", random_samples),
                         (_dt.float16, _dt.float32, _dt.float64))
        if x.ndim not in (4, 5):
            raise ValueError("For '%s', the dimension of 'x' must be 4 or 5, but got %d" % (who, x.ndim))
        squeeze = x.ndim == 4
        if squeeze:
            x = _op("expand_dims", (x,), axis=0) if self.data_format == "NCDHW" else x
        if self.data_format == "NDHWC":
            if squeeze:
                x = _op("expand_dims", (x,), axis=0)
            x = _op("transpose", (x,), perm=(0, 4, 1, 2, 3))
        y, idx = _fixed_pool(who, x, s, self.ksize, self.output_shape)
        if self.data_format == "NDHWC":
            y = _op("transpose", (y,), perm=(0, 2, 3, 4, 1))
            idx = _op("transpose", (idx,), perm=(0, 2, 3, 4, 1))
        if squeeze:
            y, idx = y[0], idx[0]
        return y, idx


def _fractional_functional(who, nd, input, kernel_size, output_size, output_ratio, return_indices,
                           _random_samples):
    x = _check_float(who, "input", _tensor(who, "input", input), (_dt.float16, _dt.float32, _dt.float64))
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError("For '%s', the dimension of 'input' must be %d or %d, but got %d"
                         % (who, nd + 1, nd + 2, x.ndim))
    ksize = _int_tuple(who, "kernel_size", kernel_size, nd)
    squeeze = x.ndim == nd + 1
    if squeeze:
        x = _op("expand_dims", (x,), axis=0)
    spatial = tuple(x.shape[2:])
    if output_size is None and output_ratio is None:
        raise ValueError("For '%s', 'output_size' and 'output_ratio' can not be None at the same time" % who)
    if output_size is not None:
        out = _int_tuple(who, "output_size", output_size, nd)
    else:
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        if len(ratio) != nd or any(not 0 < r < 1 for r in ratio):
            raise ValueError("For '%s', 'output_ratio' must be %d numbers in (0, 1), but got %r"
                             % (who, nd, output_ratio))
        out = tuple(int(s * r) for s, r in zip(spatial, ratio))
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        samples = F.rand(N, C, nd, dtype=x.dtype)
    else:
        samples = _tensor(who, "_random_samples", _random_samples)
    y, idx = _fixed_pool(who, x, samples, ksize, out)
    if squeeze:
        y, idx = y[0], idx[0]
    return (y, idx) if return_indices else y


@_export
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """ops.fractional_max_pool2d: max over windows of kernel_size at pseudo-random positions
    ((N, C, H, W) or (C, H, W); output_size, or output_ratio in (0, 1) of the input size);
    _random_samples (N, C, 2) in [0, 1) fix the positions (drawn uniformly when None).
    Returns y, or (y, indices) with return_indices."""
    return _fractional_functional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples)


@_export
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """ops.fractional_max_pool3d: fractional_max_pool2d over (N, C, D, H, W) or (C, D, H, W);
    _random_samples (N, C, 3)."""
    return _fractional_functional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples)


def _pooling_sequence(rng, n_in, n_out, pseudo_random):
    """Graham's pooling sequence: n_out + 1 boundaries from 0 to n_in whose steps are
    floor(alpha) or ceil(alpha), alpha = n_in / n_out. Random: the longer steps at random places;
    pseudo-random: boundaries ceil(alpha * (i + u)) for one random offset u."""
    alpha = float(n_in) / n_out
    base = n_in // n_out
    if not pseudo_random:
        extra = n_in - base * n_out
        steps = [base + 1] * extra + [base] * (n_out - extra)
        rng.shuffle(steps)
        seq = [0]
        for s in steps:
            seq.append(seq[-1] + s)
        return seq
    k = int(_math.ceil(alpha)) - 1
    # u keeps the first and last steps within {k, k + 1}
    u_max = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
    u = rng.uniform(0.0, max(u_max, 0.0))
    seq = [0] + [int(_math.ceil(alpha * (i + u))) - 1 for i in range(1, n_out)] + [n_in]
    return seq


class _FractionalPool(Primitive):
    """FractionalMaxPool / FractionalAvgPool (TF-style, NHWC): pooling_ratio [1, rh, rw, 1] >= 1,
    output floor(H / rh) x floor(W / rw); windows [row_seq[i], row_seq[i+1]) (overlapping: the
    right boundary included). Outputs (y, row_pooling_sequence, col_pooling_sequence) int64."""

    _avg = False

    def __init__(self, pooling_ratio, pseudo_random=False, overlapping=False, deterministic=False, seed=0, seed2=0):
        who = type(self).__name__
        if not isinstance(pooling_ratio, (list, tuple)) or len(pooling_ratio) != 4 or \
                any(isinstance(r, bool) or not isinstance(r, (int, float)) for r in pooling_ratio):
            raise TypeError("For '%s', the 'pooling_ratio' must be a list of 4 floats, but got %r" % (who, pooling_ratio))
        if pooling_ratio[0] != 1.0 or pooling_ratio[3] != 1.0:
            raise ValueError("For '%s', the first and last elements of 'pooling_ratio' must be 1.0, but got %r"
                             % (who, pooling_ratio))
        if any(r < 1.0 for r in pooling_ratio):
            raise ValueError("For '%s', the elements of 'pooling_ratio' must be >= 1.0, but got %r" % (who, pooling_ratio))
        _bool(who, "pseudo_random", pseudo_random)
        _bool(who, "overlapping", overlapping)
        _bool(who, "deterministic", deterministic)
        _int(who, "seed", seed)
        _int(who, "seed2", seed2)
        super().__init__(pooling_ratio=tuple(float(r) for r in pooling_ratio), pseudo_random=pseudo_random,
                         overlapping=overlapping, deterministic=deterministic, seed=seed, seed2=seed2)
        self._gen = None
        self._fixed = None

    def _rng(self):
        if self._gen is None:
            seed, seed2 = self.attrs["seed"], self.attrs["seed2"]
            if seed == 0 and seed2 == 0:
                g = _creation.get_seed()
                self._gen = _random.Random(g if g else None)
            else:
                self._gen = _random.Random(seed * 1000003 + seed2)
        return self._gen

    def _sequences(self, H, W, oh, ow):
        if self.attrs["deterministic"] and self._fixed is not None and self._fixed[0] == (H, W):
            return self._fixed[1]
        rng = self._rng()
        seqs = (_pooling_sequence(rng, H, oh, self.attrs["pseudo_random"]),
                _pooling_sequence(rng, W, ow, self.attrs["pseudo_random"]))
        if self.attrs["deterministic"]:  # one draw for the primitive's lifetime
            self._fixed = ((H, W), seqs)
        return seqs

    def __call__(self, x):
        who = type(self).__name__
        x = _check_float(who, "x", _tensor(who, "x", x), (_dt.float32, _dt.float64, _dt.int32, _dt.int64))
        if x.ndim != 4:
            raise ValueError("For '%s', the dimension of 'x' must be 4 (NHWC), but got %d" % (who, x.ndim))
        N, H, W, C = tuple(x.shape)
        r = self.attrs["pooling_ratio"]
        oh, ow = int(H / r[1]), int(W / r[2])
        if oh < 1 or ow < 1:
            raise ValueError("For '%s', the output size floor(%d / %s) x floor(%d / %s) must be positive"
                             % (who, H, r[1], W, r[2]))
        rows, cols = self._sequences(H, W, oh, ow)
        over = self.attrs["overlapping"]

        def window(seq, i, n):
            hi = seq[i + 1] + (1 if over else 0)
            return list(range(seq[i], min(hi, n)))

        row_w = [window(rows, i, H) for i in range(oh)]
        col_w = [window(cols, j, W) for j in range(ow)]
        K = max(len(a) for a in row_w) * max(len(b) for b in col_w)
        idx, mask = [], []
        for i in range(oh):
            for j in range(ow):
                cells = [a * W + b for a in row_w[i] for b in col_w[j]]
                pad = K - len(cells)
                idx.extend(cells + [cells[0]] * pad)  # a repeat of a member leaves the max unchanged
                mask.extend([1.0] * len(cells) + [0.0] * pad)
        flat = _op("reshape", (x,), shape=(N, H * W, C))
        vals = F.gather(flat, _creation.tensor(idx, _dt.int64), 1)  # (N, oh*ow*K, C)
        vals = _op("reshape", (vals,), shape=(N, oh, ow, K, C))
        if self._avg:
            m = _creation.tensor(mask, _dt.float32 if x.dtype != _dt.float64 else _dt.float64)
            m = _op("reshape", (m,), shape=(1, oh, ow, K, 1))
            fv = vals if x.dtype in (_dt.float32, _dt.float64) else vals.astype(_dt.float32)
            y = F.sum(fv * m, 3) / F.sum(m, 3)
            if y.dtype != x.dtype:
                y = F.trunc(y).astype(x.dtype) if hasattr(F, "trunc") else y.astype(x.dtype)
        else:
            y = F.max(vals, axis=3)[0]
        return (y, _creation.tensor(rows, _dt.int64), _creation.tensor(cols, _dt.int64))


@_export
class FractionalMaxPool(_FractionalPool):
    """FractionalMaxPool(pooling_ratio, pseudo_random=False, overlapping=False, deterministic=False,
    seed=0, seed2=0)(x NHWC) -> (y, row_pooling_sequence, col_pooling_sequence): the max of each
    pseudo-random window. seed/seed2 nonzero: a reproducible generator per primitive (successive
    calls draw new sequences); deterministic: one draw for the primitive's lifetime."""


@_export
class FractionalAvgPool(_FractionalPool):
    """FractionalAvgPool(...)(x NHWC) -> (y, row_pooling_sequence, col_pooling_sequence): the mean
    of each window (FractionalMaxPool's windows and options)."""
    _avg = True
