"""The protobuf wire format in pure Python, driven by field-number tables (schemas.py).

A schema maps a message name to {field number: (field name, kind, repeated, packed)}; kind is a
scalar kind ('int64', 'int32', 'uint64', 'bool', 'enum', 'float', 'double', 'string', 'bytes') or
the name of another message of the same schema. Messages decode to `Message` objects with one
attribute per field (a list for repeated fields, None for an absent optional one), so callers read
`model.graph.node[0].op_type` as with protobuf's generated classes. Decoding accepts packed and
unpacked repeated scalars (protobuf requires parsers to take both); encoding packs only where the
.proto says [packed = true]. Unknown fields are skipped on decode and dropped on re-encode."""
import struct

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_VARINT_KINDS = ("int64", "int32", "uint64", "uint32", "bool", "enum")
_WIRE = dict({k: VARINT for k in _VARINT_KINDS}, float=FIXED32, double=FIXED64)


class DecodeError(ValueError):
    """The bytes are not a valid encoding of the message the schema describes."""


class Message(object):
    """One decoded (or to-be-encoded) message: fields as attributes."""

    def __init__(self, schema, type_name, **fields):
        if type_name not in schema:
            raise KeyError("no message %r in this schema" % (type_name,))
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_type", type_name)
        self._by_name = {f[0]: f for f in schema[type_name].values()}
        for name, _kind, rep, _packed in schema[type_name].values():
            object.__setattr__(self, name, [] if rep else None)
        for k, v in fields.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in self._by_name:
            raise AttributeError("message %s has no field %r" % (self._type, name))
        object.__setattr__(self, name, value)

    @property
    def DESCRIPTOR_NAME(self):  # noqa: N802 (protobuf's spelling of the type's name)
        return self._type

    def SerializeToString(self):  # noqa: N802 (protobuf's method name)
        return encode(self)

    def ParseFromString(self, data):  # noqa: N802
        fresh = decode(self._schema, self._type, data)
        for name in self._by_name:
            object.__setattr__(self, name, getattr(fresh, name))
        return len(data)

    def HasField(self, name):  # noqa: N802
        return getattr(self, name) not in (None, [])

    def __repr__(self):
        set_fields = ["%s=%r" % (n, getattr(self, n)) for n in self._by_name
                      if getattr(self, n) not in (None, [])]
        return "%s(%s)" % (self._type, ", ".join(set_fields))


# ---- encoding ------------------------------------------------------------------------------------

def _varint(n, out):
    if n < 0:
        n += 1 << 64  # negative int32/int64: ten bytes of two's complement, as protobuf writes them
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _key(number, wire, out):
    _varint((number << 3) | wire, out)


def _scalar(kind, v, out):
    if kind in _VARINT_KINDS:
        _varint(int(v), out)
    elif kind == "float":
        out += struct.pack("<f", v)
    elif kind == "double":
        out += struct.pack("<d", v)
    else:
        raise TypeError("not a scalar kind: %r" % (kind,))


def _bytes_of(kind, v):
    if kind == "string":
        return v.encode("utf-8") if isinstance(v, str) else bytes(v)
    if kind == "bytes":
        return v.encode("utf-8") if isinstance(v, str) else bytes(v)
    return encode(v)


def encode(msg):
    """The message's bytes: fields in field-number order, as protobuf's serializers write them."""
    out = bytearray()
    for number in sorted(msg._schema[msg._type]):
        name, kind, rep, packed = msg._schema[msg._type][number]
        value = getattr(msg, name)
        if value is None or (rep and not value):
            continue
        values = value if rep else [value]
        if kind in _WIRE:
            if rep and packed:
                body = bytearray()
                for v in values:
                    _scalar(kind, v, body)
                _key(number, LENGTH, out)
                _varint(len(body), out)
                out += body
            else:
                for v in values:
                    _key(number, _WIRE[kind], out)
                    _scalar(kind, v, out)
        else:
            for v in values:
                data = _bytes_of(kind, v)
                _key(number, LENGTH, out)
                _varint(len(data), out)
                out += data
    return bytes(out)


# ---- decoding ------------------------------------------------------------------------------------

def read_varint(data, pos):
    result, shift = 0, 0
    while True:
        if pos >= len(data):
            raise DecodeError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than ten bytes")


def _signed(kind, n):
    if kind in ("int64", "int32", "enum") and n >= 1 << 63:
        return n - (1 << 64)
    return bool(n) if kind == "bool" else n


def iter_fields(data):
    """(field number, wire type, value) for each field of one message's bytes; a value is an int
    for varints, bytes for the rest (fixed ones still packed)."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == FIXED64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == FIXED32:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == LENGTH:
            n, pos = read_varint(data, pos)
            value, pos = data[pos:pos + n], pos + n
        else:
            raise DecodeError("unsupported wire type %d (field %d)" % (wire, number))
        if pos > end:
            raise DecodeError("field %d runs past the end of its message" % number)
        yield number, wire, value


def _unpack(kind, blob):
    if kind == "float":
        return list(struct.unpack("<%df" % (len(blob) // 4), blob))
    if kind == "double":
        return list(struct.unpack("<%dd" % (len(blob) // 8), blob))
    out, pos = [], 0
    while pos < len(blob):
        n, pos = read_varint(blob, pos)
        out.append(_signed(kind, n))
    return out


def decode(schema, type_name, data):
    """`data` (bytes) as a Message of type `type_name`."""
    msg = Message(schema, type_name)
    fields = schema[type_name]
    for number, wire, value in iter_fields(memoryview(data).tobytes() if not isinstance(data, bytes)
                                           else data):
        if number not in fields:
            continue
        name, kind, rep, _packed = fields[number]
        if kind in _WIRE:
            if wire == LENGTH:  # packed repeated
                vals = _unpack(kind, value)
            elif wire == VARINT:
                vals = [_signed(kind, value)]
            elif wire == FIXED32:
                vals = [struct.unpack("<f", value)[0]]
            else:
                vals = [struct.unpack("<d", value)[0]]
            if wire != _WIRE[kind] and wire != LENGTH:
                raise DecodeError("%s.%s: wire type %d for a %s" % (type_name, name, wire, kind))
        elif wire != LENGTH:
            raise DecodeError("%s.%s: expected a length-delimited field, got wire type %d"
                              % (type_name, name, wire))
        elif kind == "string":
            vals = [value.decode("utf-8")]
        elif kind == "bytes":
            vals = [value]
        else:
            vals = [decode(schema, kind, value)]
        if rep:
            getattr(msg, name).extend(vals)
        else:
            object.__setattr__(msg, name, vals[-1])  # the last one wins, as protobuf says
    return msg
