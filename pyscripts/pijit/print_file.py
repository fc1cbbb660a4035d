"""ops.Print's file output and mindspore.parse_print.

With set_context(print_file_path=PATH), each Print call appends to PATH instead of printing: one
serialized message of MindSpore's print.proto (package mindspore.prntpb) per call, in wire.py's
table form below. Appended messages of a repeated field concatenate into one (protobuf's merge
rule), so the file is one `Print` whose values are every call's strings and tensors in order:
what MindSpore writes and what its parse_print reads."""
import os

from pijit import _C
from pijit import dtype as _dt
from pijit.export import wire


def _f(name, kind, rep=False):
    return (name, kind, rep, False)  # proto2: nothing packed


# print.proto's field numbers (Print.Value is a nested message: one oneof of desc and tensor)
SCHEMA = {
    "TensorProto": {1: _f("dims", "int64", True), 2: _f("tensor_type", "string"),
                    3: _f("tensor_content", "bytes")},
    "Value": {1: _f("desc", "string"), 2: _f("tensor", "TensorProto")},
    "Print": {1: _f("value", "Value", True)},
}

# MindSpore's type names in tensor_type (its parse_print's table), and pijit's dtypes
_TYPES = {"Bool": _dt.bool_, "Int8": _dt.int8, "Int16": _dt.int16, "Int32": _dt.int32, "Int64": _dt.int64,
          "UInt8": _dt.uint8, "UInt16": _dt.uint16, "UInt32": _dt.uint32, "UInt64": _dt.uint64,
          "Float16": _dt.float16, "BFloat16": _dt.bfloat16, "Float32": _dt.float32, "Float64": _dt.float64,
          "Complex64": _dt.complex64, "Complex128": _dt.complex128}
_NAMES = {v: k for k, v in _TYPES.items()}
_ALIASES = {"Uint8": "UInt8", "Uint16": "UInt16", "Uint32": "UInt32", "Uint64": "UInt64"}  # MindSpore 1.x


def target():
    """The file Print writes to (context print_file_path), or None: print to the screen."""
    from pijit import context
    return context._state.get("print_file_path")


def _values(x, out):
    if isinstance(x, _C.TensorBase):
        t = x.contiguous() if hasattr(x, "contiguous") else x
        out.append(wire.Message(SCHEMA, "Value", tensor=wire.Message(
            SCHEMA, "TensorProto", dims=list(t.shape), tensor_type=_NAMES[t.dtype],
            tensor_content=_C.tensor_to_bytes(t) if t.size else b"")))
    elif isinstance(x, str):
        out.append(wire.Message(SCHEMA, "Value", desc=x))
    elif isinstance(x, (bool, int, float)):
        # a Python scalar is a 0-d tensor, as Print's graph inputs are (int64, float32, bool)
        dt = _dt.bool_ if isinstance(x, bool) else _dt.int64 if isinstance(x, int) else _dt.float32
        from pijit.tensor import Tensor
        _values(Tensor(x, dt), out)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _values(v, out)
    else:
        raise TypeError("Print: inputs must be Tensor, bool, int, float, str, tuple or list, got %s"
                        % type(x).__name__)


def append(path, inputs):
    """One Print call's inputs, appended to `path` as one print.proto `Print` message."""
    values = []
    for x in inputs:
        _values(x, values)
    data = wire.encode(wire.Message(SCHEMA, "Print", value=values))
    with open(path, "ab") as f:
        f.write(data)


def parse_print(print_file_name):
    """mindspore.parse_print(print_file_name) -> list: what ops.Print wrote to the file named in
    set_context(print_file_path=...), in order: strings as str, tensors as Tensors of their dtype
    and shape, 0-d ones (Python scalars) as 0-d Tensors. ValueError when the file is empty or not
    a print file."""
    path = os.path.realpath(print_file_name)
    if not os.path.isfile(path):
        raise ValueError("For 'parse_print', the print file %s does not exist." % (print_file_name,))
    if os.path.getsize(path) == 0:
        raise ValueError("For 'parse_print', the print file may be empty, please make sure enter the correct "
                         "'print_file_name'.")
    with open(path, "rb") as f:
        data = f.read()
    try:
        msg = wire.decode(SCHEMA, "Print", data)
    except (wire.DecodeError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise ValueError("%s\nFailed to read the print file %s, please check whether the file is correct."
                         % (e, print_file_name)) from e
    from pijit.tensor import Tensor
    out = []
    for v in msg.value:
        if v.desc is not None:
            out.append(v.desc)
        elif v.tensor is not None:
            name = _ALIASES.get(v.tensor.tensor_type, v.tensor.tensor_type)
            if name not in _TYPES:
                raise RuntimeError("Failed to load the print file %s: unknown tensor type %r"
                                   % (print_file_name, v.tensor.tensor_type))
            dims = [int(d) for d in v.tensor.dims]
            shape = () if dims in ([], [0]) else tuple(dims)
            content = v.tensor.tensor_content or b""
            try:
                t = _C.tensor_from_bytes(content, _TYPES[name], shape)
            except (ValueError, TypeError) as e:
                raise RuntimeError("%s\nFailed to load the print file %s." % (e, print_file_name)) from e
            out.append(t if isinstance(t, Tensor) else Tensor(t))
    return out


__all__ = ["parse_print"]
