"""pijit's captured graph -> an ONNX model (onnx.ModelProto, opset 13, IR version 7).

Each registry op becomes the ONNX operator(s) of the same meaning; shapes are the ones captured
(an export fixes the input shapes, as MindSpore's does), so reshapes of every kind become
Reshape with a constant target shape. Weights are initializers. An op ONNX has no counterpart for
is refused by name."""
import math
import struct

from pijit.export import schemas, wire
from pijit.export.tensors import to_bytes

_AT = schemas.ONNX_ATTR


def _O(type_name, **fields):
    return wire.Message(schemas.ONNX, type_name, **fields)


def _attr(name, v):
    if isinstance(v, bool):
        return _O("AttributeProto", name=name, type=_AT["INT"], i=int(v))
    if isinstance(v, int):
        return _O("AttributeProto", name=name, type=_AT["INT"], i=v)
    if isinstance(v, float):
        return _O("AttributeProto", name=name, type=_AT["FLOAT"], f=v)
    if isinstance(v, str):
        return _O("AttributeProto", name=name, type=_AT["STRING"], s=v.encode("utf-8"))
    return _O("AttributeProto", name=name, type=_AT["INTS"], ints=[int(e) for e in v])


def _value_info(name, dtype, shape):
    dims = [_O("Dimension", dim_value=int(d)) for d in shape]
    tt = _O("TypeProtoTensor", elem_type=schemas.ONNX_DTYPE[dtype],
            shape=_O("TensorShapeProto", dim=dims))
    return _O("ValueInfoProto", name=name, type=_O("TypeProto", tensor_type=tt))


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "eq": "Equal", "lt": "Less", "gt": "Greater",
           "le": "LessOrEqual", "ge": "GreaterOrEqual", "logical_and": "And",
           "logical_or": "Or", "where": "Where"}
_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "neg": "Neg", "abs": "Abs", "reciprocal": "Reciprocal", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "erf": "Erf", "floor": "Floor", "ceil": "Ceil",
          "round": "Round", "sign": "Sign", "softplus": "Softplus", "logical_not": "Not"}
_REDUCE = {"mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd"}
_RESHAPES = ("reshape", "squeeze", "expand_dims", "unsqueeze", "flatten", "contiguous", "copy")


class _Builder(object):
    def __init__(self, g):
        self.g, self.values = g, g.values()
        self.names, self.nodes, self.inits = {}, [], []
        self.count = 0

    def fresh(self, hint):
        self.count += 1
        return "%s_%d" % (hint, self.count)

    def node(self, op_type, ins, outs=None, **attrs):
        outs = outs or [self.fresh(op_type)]
        self.nodes.append(_O("NodeProto", op_type=op_type, name=self.fresh(op_type + "_node"),
                             input=list(ins), output=list(outs),
                             attribute=[_attr(k, v) for k, v in attrs.items()]))
        return outs[0]

    def init(self, name, dtype, shape, data):
        self.inits.append(_O("TensorProto", name=name, dims=list(shape),
                             data_type=schemas.ONNX_DTYPE[dtype], raw_data=data))
        return name

    def i64(self, values):
        return self.init(self.fresh("shape"), "Int64", (len(values),),
                         struct.pack("<%dq" % len(values), *values))

    def scalar(self, value, dtype):
        fmt = {"Float32": "<f", "Float64": "<d", "Float16": "<e"}.get(dtype)
        if fmt is None:
            raise NotImplementedError("export ONNX: a %s scalar constant" % dtype)
        return self.init(self.fresh("const"), dtype, (), struct.pack(fmt, value))


def _lower(b, n):
    """Appends the ONNX nodes of one registry op; returns its output names or raises."""
    ins = [b.names[i] for i in n.inputs]
    outv = n.outputs[0]
    out = ["v%d" % outv.id]
    a = n.attrs
    ndim = len(outv.shape)
    if n.op in _BINARY:
        return [b.node(_BINARY[n.op], ins, out)]
    if n.op in _UNARY:
        return [b.node(_UNARY[n.op], ins, out)]
    if n.op == "rsqrt":
        return [b.node("Reciprocal", [b.node("Sqrt", ins)], out)]
    if n.op == "square":
        return [b.node("Mul", [ins[0], ins[0]], out)]
    if n.op == "silu":
        return [b.node("Mul", [ins[0], b.node("Sigmoid", ins)], out)]
    if n.op == "gelu":  # x/2 * (1 + erf(x / sqrt(2)))
        dt = outv.dtype
        e = b.node("Erf", [b.node("Div", [ins[0], b.scalar(math.sqrt(2.0), dt)])])
        half = b.node("Mul", [ins[0], b.scalar(0.5, dt)])
        return [b.node("Mul", [half, b.node("Add", [e, b.scalar(1.0, dt)])], out)]
    if n.op == "cast":
        return [b.node("Cast", ins, out, to=schemas.ONNX_DTYPE[str(a["dtype"])])]
    if n.op == "matmul":
        x, y = ins
        for key, idx in (("transpose_a", 0), ("transpose_b", 1)):
            if a.get(key):
                r = len(b.values[n.inputs[idx]].shape)
                perm = list(range(r - 2)) + [r - 1, r - 2]
                t = b.node("Transpose", [ins[idx]], perm=perm)
                x, y = (t, y) if idx == 0 else (x, t)
        return [b.node("MatMul", [x, y], out)]
    if n.op == "dense":
        if len(b.values[n.inputs[0]].shape) == 2:
            return [b.node("Gemm", ins, out, transB=1)]
        wt = b.node("Transpose", [ins[1]], perm=[1, 0])
        if len(ins) == 2:
            return [b.node("MatMul", [ins[0], wt], out)]
        return [b.node("Add", [b.node("MatMul", [ins[0], wt]), ins[2]], out)]
    if n.op == "conv2d":
        w = b.values[n.inputs[1]]
        t, bo, l, r = a.get("padding", (0, 0, 0, 0))
        return [b.node("Conv", ins, out, kernel_shape=list(w.shape[2:]),
                       strides=list(a.get("stride", (1, 1))), pads=[t, l, bo, r],
                       dilations=list(a.get("dilation", (1, 1))), group=a.get("groups", 1))]
    if n.op in ("max_pool2d", "avg_pool2d"):
        ph, pw = a.get("padding", (0, 0))
        kw = dict(kernel_shape=list(a["kernel_size"]), strides=list(a.get("stride", a["kernel_size"])),
                  pads=[ph, pw, ph, pw], ceil_mode=int(bool(a.get("ceil_mode", False))))
        if n.op == "max_pool2d":
            if tuple(a.get("dilation", (1, 1))) != (1, 1):
                kw["dilations"] = list(a["dilation"])
            return [b.node("MaxPool", ins, out, **kw)]
        if a.get("divisor_override") is not None:
            raise NotImplementedError("export ONNX: avg_pool2d with divisor_override has no ONNX form")
        kw["count_include_pad"] = int(bool(a.get("count_include_pad", True)))
        return [b.node("AveragePool", ins, out, **kw)]
    if n.op == "adaptive_avg_pool2d" and tuple(outv.shape[2:]) == (1, 1):
        return [b.node("GlobalAveragePool", ins, out)]
    if n.op == "batch_norm":
        if a.get("training"):
            raise NotImplementedError("export ONNX: batch_norm in training mode (call "
                                      "net.set_train(False))")
        return [b.node("BatchNormalization", ins, out, epsilon=float(a.get("eps", 1e-5)),
                       momentum=float(a.get("momentum", 0.9)))]
    if n.op == "flatten" and a.get("start_dim", 1) == 1 and ndim == 2:
        return [b.node("Flatten", ins, out, axis=1)]
    if n.op in _RESHAPES:
        return [b.node("Reshape", [ins[0], b.i64(outv.shape)], out)]
    if n.op == "transpose":
        return [b.node("Transpose", ins, out, perm=list(a["perm"]))]
    if n.op == "concat":
        return [b.node("Concat", ins, out, axis=a.get("axis", 0) % ndim)]
    if n.op == "stack":
        axis = a.get("axis", 0) % ndim
        parts = [b.node("Unsqueeze", [x, b.i64([axis])]) for x in ins]
        return [b.node("Concat", parts, out, axis=axis)]
    if n.op in ("softmax", "log_softmax"):
        axis = a.get("axis", -1)
        axis = axis[0] if isinstance(axis, tuple) else axis
        return [b.node("Softmax" if n.op == "softmax" else "LogSoftmax", ins, out, axis=axis)]
    if n.op in _REDUCE or n.op == "sum":
        axes = a.get("axis")
        kw = {"keepdims": int(bool(a.get("keepdims", False)))}
        if n.op == "sum":  # ReduceSum takes its axes as an input from opset 13
            extra = [b.i64(list(axes))] if axes is not None else []
            return [b.node("ReduceSum", ins + extra, out, **kw)]
        if axes is not None:
            kw["axes"] = list(axes)
        return [b.node(_REDUCE[n.op], ins, out, **kw)]
    raise NotImplementedError(n.op)


def to_model(g, graph_name="pijit_graph"):
    b = _Builder(g)
    gp = _O("GraphProto", name=graph_name)
    for k, (v, name, tensor) in enumerate(g.inputs):
        b.names[v.id] = name
        if k < g.num_user_inputs:
            gp.input.append(_value_info(name, v.dtype, v.shape))
        else:
            b.init(name, v.dtype, v.shape, to_bytes(tensor))
    for v, t in g.consts:
        b.names[v.id] = b.init("const_%d" % v.id, v.dtype, v.shape, to_bytes(t))
    refused = set()
    for n in g.nodes:
        extra_used = [o.id for o in n.outputs[1:]
                      if any(o.id in m.inputs for m in g.nodes) or o.id in g.outputs]
        if extra_used and n.op == "batch_norm":
            refused.add("batch_norm (its statistics outputs are used)")
            continue
        try:
            _lower(b, n)
        except NotImplementedError as e:
            msg = str(e)
            refused.add(msg if msg.startswith("export") else n.op)
            continue
        b.names[n.outputs[0].id] = "v%d" % n.outputs[0].id
    if refused:
        raise NotImplementedError("export: the network uses op(s) pijit cannot write as ONNX: %s"
                                  % ", ".join(sorted(refused)))
    values = g.values()
    for k, i in enumerate(g.outputs):
        v = values[i]
        out_name = "output_%d" % k  # named outputs even where one value is returned twice
        b.node("Identity", [b.names[i]], [out_name])
        gp.output.append(_value_info(out_name, v.dtype, v.shape))
    gp.node, gp.initializer = b.nodes, b.inits
    return _O("ModelProto", ir_version=schemas.ONNX_IR_VERSION, producer_name="pijit",
              producer_version="0.1", graph=gp,
              opset_import=[_O("OperatorSetIdProto", domain="", version=schemas.ONNX_OPSET)])
