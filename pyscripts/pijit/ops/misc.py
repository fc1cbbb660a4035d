"""MindSpore's graph utilities and metadata queries in functional form: ops.depend, ops.assign,
ops.print_, ops.clip_by_value, ops.dtype, ops.shape, ops.rank, ops.size (fill, ones and zeros live
in pijit/creation.py)."""
import builtins

from pijit import _C
from pijit._ops_common import as_tensor as _t
from pijit._state import output
from pijit.creation import fill
from pijit.ops import functional as F


def depend(value, expr):
    """Returns `value`. In MindSpore's static graphs it orders `expr` before the users of
    `value`; pijit keeps Python's order, in which `expr` has already been evaluated."""
    return value


def assign(variable, value):
    """MindSpore's ops.assign(variable, value): writes `value` (a tensor or number, broadcast to
    the variable's shape and cast to its dtype) into the Parameter or Tensor `variable`; returns
    it. Under jit the write to a Parameter is replayed after the graph, and the rest of the
    function reads the new value."""
    variable[...] = _assigned(variable, value)
    return variable


def _assigned(variable, value):
    """The tensor assign writes (a copy, of the variable's shape and dtype), after eager assign's
    checks; capture traces it and makes the write itself (capture/sim_effects.cc)."""
    if not isinstance(variable, _C.TensorBase):
        raise TypeError("assign(): variable must be a Parameter or Tensor, got %s"
                        % type(variable).__name__)
    if isinstance(value, _C.TensorBase):
        if value.dtype is not variable.dtype:
            value = value.astype(variable.dtype)
        if value.shape != variable.shape:
            value = F.broadcast_to(value, variable.shape)
        return value.copy()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("assign(): value must be a Tensor or a number, got %s"
                        % type(value).__name__)
    return fill(variable.dtype, variable.shape, value)


assign.__pijit_inplace__ = _assigned


@output  # replayed after the graph
def print_(*input_x):
    """MindSpore's ops.print_: prints each input on its own line, tensors in their repr form
    ("Tensor(shape=[2], dtype=Float32, value=[...])"), strings as they are. Returns None (the
    return value is meant to be ignored). With set_context(print_file_path=PATH) the inputs go
    to PATH instead, as MindSpore's print records (pijit.parse_print reads them back)."""
    from pijit import print_file
    path = print_file.target()
    if path is not None:
        return print_file.append(path, input_x)
    for x in input_x:
        if isinstance(x, _C.TensorBase):
            builtins.print(repr(x))
        elif isinstance(x, (str, bool, int, float, tuple, list)):
            builtins.print(x)
        else:
            raise TypeError("print_(): inputs must be Tensor, bool, int, float, str, tuple or "
                            "list, got %s" % type(x).__name__)


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """Clamps a tensor (or each tensor of a list/tuple, returned as the same kind) to
    [clip_value_min, clip_value_max]; either bound may be None but not both."""
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("clip_by_value(): clip_value_min and clip_value_max cannot both be None")
    if isinstance(x, (list, tuple)):
        return type(x)(F.clamp(_t(v), clip_value_min, clip_value_max) for v in x)
    return F.clamp(_t(x), clip_value_min, clip_value_max)


def _tensor_arg(name, x):
    if not isinstance(x, _C.TensorBase):
        raise TypeError("%s(): input must be a Tensor, got %s" % (name, type(x).__name__))
    return x


def dtype(input):
    """The element type of a tensor (MindSpore's ops.dtype / ops.DType()(x))."""
    return _tensor_arg("dtype", input).dtype


def shape(input):
    """The shape of a tensor as a tuple of ints."""
    return tuple(_tensor_arg("shape", input).shape)


def rank(input_x):
    """The number of dimensions of a tensor."""
    return _tensor_arg("rank", input_x).ndim


def size(input_x):
    """The number of elements of a tensor."""
    return _tensor_arg("size", input_x).size


__all__ = ["depend", "assign", "print_", "clip_by_value", "dtype", "shape", "rank", "size"]
