"""Tensor <-> the files' TensorProto data (row-major little-endian bytes in raw_data)."""
import struct

from pijit import _C


def dtype_name(dt):
    return str(dt)  # pijit's dtypes print as the IR spells them: Float32, Int64, ...


def to_bytes(t):
    return _C.tensor_to_bytes(t) if t.size else b""


def from_bytes(data, dtype_name_, shape):
    from pijit.export.extract import dtype_of
    return _C.tensor_from_bytes(bytes(data), dtype_of(dtype_name_), list(shape))


_FMT = {"Float32": "f", "Float64": "d", "Int32": "i", "Int64": "q", "Int16": "h", "Int8": "b",
        "UInt8": "B", "UInt16": "H", "UInt32": "I", "UInt64": "Q", "Bool": "?", "Float16": "e"}


def from_fields(proto, dtype_name_, shape):
    """A TensorProto's value from raw_data or, where a writer used them, the typed repeated
    fields (float_data, int32_data, int64_data, double_data, uint64_data)."""
    if proto.raw_data:
        return from_bytes(proto.raw_data, dtype_name_, shape)
    items = proto.float_data or proto.double_data or proto.int64_data or proto.uint64_data
    if not items and proto.int32_data:
        items = proto.int32_data
        if dtype_name_ == "Float16":  # int32_data holds float16's bits
            return from_bytes(struct.pack("<%dH" % len(items), *items), dtype_name_, shape)
    fmt = _FMT.get(dtype_name_)
    if fmt is None:
        raise ValueError("tensor %r: %s data only as raw_data" % (proto.name, dtype_name_))
    return from_bytes(struct.pack("<%d%s" % (len(items), fmt), *items), dtype_name_, shape)
