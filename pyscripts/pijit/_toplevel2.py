"""mindspore's remaining top-level names: the generic type objects of mindspore.common.dtype
(Int, uint, number, string, list_, tuple_, type_none, tensor_type, QuantDtype), logging
(get_level, get_log_config), set_dump, the offload context, run_check, ms_memory_recycle and
merge_sliced_parameter; and the sparse tensor classes."""
import enum
import os
import sys

from pijit import dtype as _d
from pijit.common.sparse_tensor import COOTensor, CSRTensor, RowTensor, SparseTensor  # noqa: F401
# mindspore.jvp/vjp/jacfwd/jacrev: the objects ops has (from their own modules: this module is
# imported while pijit.ops is still loading)
from pijit.ops.special2 import jvp, jacfwd, jacrev  # noqa: F401,E402
from pijit.ops.primitives3 import vjp  # noqa: F401,E402
from pijit.export import export, load, save_mindir, load_mindir  # noqa: F401,E402
from pijit.rewrite import SymbolTree, Node, NodeType, ScopedValue, TreeNodeHelper  # noqa: F401,E402
from pijit.profiler import Profiler  # noqa: F401,E402
from pijit.print_file import parse_print  # noqa: F401,E402
from pijit.common.api import _no_grad  # noqa: F401,E402

__all__ = ["Int", "uint", "number", "string", "list_", "tuple_", "type_none", "tensor_type",
           "QuantDtype", "get_level", "get_log_config", "set_dump", "set_offload_context",
           "get_offload_context", "run_check", "ms_memory_recycle", "merge_sliced_parameter",
           "COOTensor", "CSRTensor", "RowTensor", "SparseTensor",
           "export", "load", "save_mindir", "load_mindir", "jvp", "vjp", "jacfwd", "jacrev",
           "SymbolTree", "Node", "NodeType", "ScopedValue", "TreeNodeHelper", "Profiler", "parse_print",
           "_no_grad"]


# ---- generic types -------------------------------------------------------------------------------

class _Family(object):
    """A type family as MindSpore's typing objects: `mstype.number`, `mstype.uint`, ...; `x in
    family` and `family.contains(x)` say whether a dtype belongs to it."""

    def __init__(self, name, members=()):
        self._name = name
        self._members = tuple(members)

    def __repr__(self):
        return self._name

    __str__ = __repr__

    def __contains__(self, t):
        return t in self._members

    def __eq__(self, other):
        return isinstance(other, _Family) and other._name == self._name

    def __hash__(self):
        return hash(self._name)


class _IntMeta(type):
    def __instancecheck__(cls, obj):
        return obj in _d.int_type or isinstance(obj, _Family) and obj._name == "Int"


class Int(metaclass=_IntMeta):
    """The signed integer types: `isinstance(mstype.int32, mstype.Int)` holds, and Int(32) is
    mstype.int32 (Int() the family)."""

    def __new__(cls, nbits=None):
        if nbits is None:
            return _Family("Int", _d.int_type)
        by_bits = {8: _d.int8, 16: _d.int16, 32: _d.int32, 64: _d.int64}
        if nbits not in by_bits:
            raise TypeError("Int: the number of bits must be 8, 16, 32 or 64, but got %r" % (nbits,))
        return by_bits[nbits]


uint = _Family("UInt", _d.uint_type)
number = _Family("Number", _d.number_type)
string = _Family("String")
list_ = _Family("List")
tuple_ = _Family("Tuple")
type_none = _Family("TypeNone")


class tensor_type(object):
    """mstype.tensor_type(element_type): the type of a Tensor of that dtype
    (`tensor_type(mstype.float32)` prints Tensor[Float32])."""

    def __init__(self, element_type=None):
        if element_type is not None and not isinstance(element_type, _d.Type):
            raise TypeError("tensor_type: the element type must be a MindSpore dtype, but got %r"
                            % (element_type,))
        self._element = element_type

    def element_type(self):
        return self._element

    def __repr__(self):
        return "Tensor[%s]" % self._element if self._element is not None else "Tensor"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, tensor_type) and other._element is self._element

    def __hash__(self):
        return hash(("tensor_type", self._element))


class QuantDtype(enum.Enum):
    """The quantisation data types (names as MindSpore's; pijit quantises nothing itself)."""
    INT1 = "INT1"
    INT2 = "INT2"
    INT3 = "INT3"
    INT4 = "INT4"
    INT5 = "INT5"
    INT6 = "INT6"
    INT7 = "INT7"
    INT8 = "INT8"
    UINT1 = "UINT1"
    UINT2 = "UINT2"
    UINT3 = "UINT3"
    UINT4 = "UINT4"
    UINT5 = "UINT5"
    UINT6 = "UINT6"
    UINT7 = "UINT7"
    UINT8 = "UINT8"

    def value(self):
        return self._value_

    def num_bits(self):
        return int(self._value_.lstrip("UINT"))


# ---- logging --------------------------------------------------------------------------------------

_LEVELS = {"0": "DEBUG", "1": "INFO", "2": "WARNING", "3": "ERROR", "4": "CRITICAL"}


def get_level():
    """The log level as MindSpore reads it from GLOG_v: '0' DEBUG .. '3' ERROR, '2' by default."""
    level = os.environ.get("GLOG_v", "2")
    if level not in _LEVELS:
        raise ValueError("Incorrect log level:%s, Please check the configuration of 'GLOG_v', the "
                         "value must be one of %s." % (level, sorted(_LEVELS)))
    return level


def get_log_config():
    """The logging settings of the environment (GLOG_v, GLOG_logtostderr, GLOG_log_dir,
    GLOG_stderrthreshold, logger_maxBytes, logger_backupCount) as a dict."""
    config = {"GLOG_v": get_level(),
              "GLOG_logtostderr": os.environ.get("GLOG_logtostderr", "1")}
    if config["GLOG_logtostderr"] == "0":
        config["GLOG_log_dir"] = os.environ.get("GLOG_log_dir", "")
        config["maxBytes"] = int(os.environ.get("logger_maxBytes", str(50 * 1024 * 1024)))
        config["backupCount"] = int(os.environ.get("logger_backupCount", "30"))
    config["GLOG_stderrthreshold"] = os.environ.get("GLOG_stderrthreshold", "2")
    return config


# ---- dump, offload, checks ------------------------------------------------------------------------

def set_dump(target, enabled=True):
    """Marks a Cell or Primitive for MindSpore's graph-mode data dump. pijit's dumps are its own
    (PIJIT_DUMP_DIR, docs): the mark is kept on the object (`_dump_enabled`) and has no other
    effect."""
    from pijit.nn.cell import Cell
    from pijit.ops.primitives import Primitive
    if not isinstance(target, (Cell, Primitive)):
        raise ValueError("The \"target\" parameter must be an instance of Cell or Primitive, but got "
                         "an instance of %s." % type(target).__name__)
    if not isinstance(enabled, bool):
        raise ValueError("The \"enabled\" parameter must be bool, but got %s." % type(enabled).__name__)
    object.__setattr__(target, "_dump_enabled", enabled)


_OFFLOAD_KEYS = ("offload_path", "offload_cpu_size", "offload_disk_size", "enable_pinned_mem",
                 "enable_aio", "offload_param", "aio_block_size", "aio_queue_depth", "hbm_ratio",
                 "cpu_ratio", "offload_checkpoint", "auto_offload", "host_mem_block_size")
_offload = {}


def set_offload_context(offload_config):
    """Keeps the offload settings (a dict of MindSpore's keys); pijit runs on the host, so they
    change nothing but what get_offload_context returns."""
    if not isinstance(offload_config, dict):
        raise TypeError("For 'set_offload_context', the argument 'offload_config' must be dict, but "
                        "got %s." % type(offload_config).__name__)
    for key in offload_config:
        if key not in _OFFLOAD_KEYS:
            raise ValueError("For 'set_offload_context', the key '%s' is not supported; the supported "
                             "keys are %s." % (key, list(_OFFLOAD_KEYS)))
    _offload.update(offload_config)


def get_offload_context():
    """The offload settings given to set_offload_context (a copy)."""
    return dict(_offload)


def run_check():
    """Checks that the installation computes: prints the version and the result of a small
    multiplication, as MindSpore's run_check does."""
    import pijit
    print("MindSpore version: ", pijit.__version__, "(pijit)")
    x = pijit.Tensor([[1.0, 2.0], [3.0, 4.0]])
    y = pijit.Tensor([[2.0, 0.0], [0.0, 2.0]])
    got = (x * y).tolist()
    if got != [[2.0, 0.0], [0.0, 8.0]]:
        print("The result of multiplication calculation is wrong: %s" % (got,), file=sys.stderr)
        return
    print("The result of multiplication calculation is correct, MindSpore has been installed on "
          "platform [CPU] successfully!")


def ms_memory_recycle():
    """Releases the memory pijit keeps cached for reuse (tensor storage pools)."""
    import pijit
    pijit.release_cached_storage()


def merge_sliced_parameter(sliced_parameters, strategy=None):
    """One Parameter from its slices (in order, concatenated along axis 0), checked to share name,
    dtype and the other dimensions. A strategy from a parallel checkpoint is not supported."""
    from pijit import ops
    from pijit.parameter import Parameter
    if not isinstance(sliced_parameters, list):
        raise TypeError("For 'merge_sliced_parameter', the argument 'sliced_parameters' should be list, "
                        "but got %s." % type(sliced_parameters).__name__)
    if not sliced_parameters:
        raise ValueError("For 'merge_sliced_parameter', the argument 'sliced_parameters' should not be "
                         "empty.")
    if strategy is not None:
        raise NotImplementedError("merge_sliced_parameter: a parallel strategy (distributed "
                                  "checkpoints) is not supported by pijit")
    first = sliced_parameters[0]
    for p in sliced_parameters:
        if not isinstance(p, Parameter):
            raise TypeError("For 'merge_sliced_parameter', each element in 'sliced_parameters' should be "
                            "Parameter, but got %s." % type(p).__name__)
        if p.name != first.name or p.dtype != first.dtype or tuple(p.shape[1:]) != tuple(first.shape[1:]):
            raise ValueError("For 'merge_sliced_parameter', please make sure that the elements in "
                             "'slice_parameters' have the same name, dimension length, data type and "
                             "shape (except dimension 0).")
    merged = ops.concat([p.value() if hasattr(p, "value") else p for p in sliced_parameters], 0)
    return Parameter(merged, first.name, first.requires_grad)
