"""pijit's captured graph <-> MindSpore's MindIR (mind_ir.ModelProto).

Each registry op maps to the MindSpore primitive of the same meaning; its attributes are written
under MindSpore's names where MindSpore has one, the rest under pijit's own, so load() rebuilds
the very op that was captured (bit-for-bit the same results). A conv2d with a bias is written as
MindSpore writes nn.Conv2d, Conv2D then BiasAdd, and load() joins the pair again. Constants are
"Constant" nodes carrying a tensor attribute; weights are the graph's parameters."""
from pijit.export import schemas, wire
from pijit.export.runner import Program
from pijit.export.tensors import dtype_name, from_fields, to_bytes

_A = schemas.MINDIR_ATTR

# registry op -> (MindSpore primitive, {pijit attribute: MindSpore attribute})
PRIMITIVES = {
    "add": ("Add", {}), "sub": ("Sub", {}), "mul": ("Mul", {}), "div": ("RealDiv", {}),
    "pow": ("Pow", {}), "maximum": ("Maximum", {}), "minimum": ("Minimum", {}),
    "floor_div": ("FloorDiv", {}), "atan2": ("Atan2", {}),
    "eq": ("Equal", {}), "ne": ("NotEqual", {}), "lt": ("Less", {}), "le": ("LessEqual", {}),
    "gt": ("Greater", {}), "ge": ("GreaterEqual", {}), "where": ("Select", {}),
    "logical_and": ("LogicalAnd", {}), "logical_or": ("LogicalOr", {}),
    "logical_not": ("LogicalNot", {}),
    "relu": ("ReLU", {}), "sigmoid": ("Sigmoid", {}), "tanh": ("Tanh", {}), "exp": ("Exp", {}),
    "log": ("Log", {}), "sqrt": ("Sqrt", {}), "rsqrt": ("Rsqrt", {}), "neg": ("Neg", {}),
    "abs": ("Abs", {}), "square": ("Square", {}), "reciprocal": ("Reciprocal", {}),
    "sin": ("Sin", {}), "cos": ("Cos", {}), "tan": ("Tan", {}), "erf": ("Erf", {}),
    "floor": ("Floor", {}), "ceil": ("Ceil", {}), "round": ("Round", {}), "sign": ("Sign", {}),
    "softplus": ("Softplus", {}), "silu": ("SiLU", {}), "expm1": ("Expm1", {}),
    "log1p": ("Log1p", {}), "gelu": ("GeLU", {}), "gelu_tanh": ("FastGeLU", {}),
    "matmul": ("MatMul", {}), "dense": ("Dense", {}), "cast": ("Cast", {"dtype": "dst_type"}),
    "reshape": ("Reshape", {}), "flatten": ("Flatten", {}), "squeeze": ("Squeeze", {}),
    "expand_dims": ("ExpandDims", {}), "transpose": ("Transpose", {"perm": "input_perm"}),
    "concat": ("Concat", {}), "stack": ("Stack", {}), "tile": ("Tile", {}),
    "broadcast_to": ("BroadcastTo", {}),
    "softmax": ("Softmax", {}), "log_softmax": ("LogSoftmax", {}),
    "mean": ("ReduceMean", {"keepdims": "keep_dims"}), "sum": ("ReduceSum", {"keepdims": "keep_dims"}),
    "max": ("ReduceMax", {"keepdims": "keep_dims"}), "min": ("ReduceMin", {"keepdims": "keep_dims"}),
    "prod": ("ReduceProd", {"keepdims": "keep_dims"}),
    "argmax": ("Argmax", {}), "argmin": ("Argmin", {}),
    "conv2d": ("Conv2D", {"padding": "pad", "groups": "group"}),
    "max_pool2d": ("MaxPool", {"stride": "strides", "padding": "pad_list"}),
    "avg_pool2d": ("AvgPool", {"stride": "strides", "padding": "pad_list"}),
    "adaptive_avg_pool2d": ("AdaptiveAvgPool2D", {}),
    "batch_norm": ("BatchNorm", {"training": "is_training", "eps": "epsilon"}),
    "layer_norm": ("LayerNorm", {}),
    "gather": ("Gather", {}),
}
# attributes MindSpore's primitives carry that pijit's ops do not: written, ignored on load
_MS_ONLY = {"format", "mode", "out_channel", "pad_mode", "data_format"}
_MS_ONLY_BY_PRIM = {"Conv2D": {"kernel_size"}}
BY_PRIMITIVE = {ms: (op, {v: k for k, v in ren.items()}) for op, (ms, ren) in PRIMITIVES.items()}


def _M(type_name, **fields):
    return wire.Message(schemas.MINDIR, type_name, **fields)


def _tensor_proto(name, dtype, shape, data=None):
    t = _M("TensorProto", name=name, dims=list(shape), data_type=schemas.MINDIR_DTYPE[dtype])
    if data is not None:
        t.raw_data = to_bytes(data)
    return t


# ---- attributes ----------------------------------------------------------------------------------

def encode_attr(name, v):
    from pijit import _C
    if v is None:
        return _M("AttributeProto", name=name, type=_A["NONE"])
    if isinstance(v, bool):
        return _M("AttributeProto", name=name, type=_A["BOOL"], i=int(v))
    if isinstance(v, int):
        return _M("AttributeProto", name=name, type=_A["INT64"], i=v)
    if isinstance(v, float):
        return _M("AttributeProto", name=name, type=_A["DOUBLE"], d=v)
    if isinstance(v, str):
        return _M("AttributeProto", name=name, type=_A["STRING"], s=v.encode("utf-8"))
    if isinstance(v, tuple):
        return _M("AttributeProto", name=name, type=_A["TUPLE"],
                  values=[_M("AttributeProto", type=_A["INT64"], i=int(e)) for e in v])
    if isinstance(v, _C.TensorBase):
        return _M("AttributeProto", name=name, type=_A["TENSOR"],
                  t=_tensor_proto("", dtype_name(v.dtype), v.shape, v))
    # a dtype: MindSpore writes a type attribute as a data-less tensor of that element type
    return _M("AttributeProto", name=name, type=_A["TENSORS"],
              tensors=[_M("TensorProto", data_type=schemas.MINDIR_DTYPE[dtype_name(v)])])


def decode_attr(a):
    from pijit.export.extract import dtype_of
    t = a.type
    if t == _A["NONE"]:
        return None
    if t == _A["BOOL"]:
        return bool(a.i)
    if t in (_A["INT64"], _A["INT32"], _A["INT16"], _A["INT8"], _A["UINT8"], _A["UINT16"],
             _A["UINT32"], _A["UINT64"]):
        return int(a.i or 0)
    if t == _A["DOUBLE"]:
        return float(a.d)
    if t == _A["FLOAT"]:
        return float(a.f)
    if t == _A["STRING"]:
        return a.s.decode("utf-8")
    if t in (_A["TUPLE"], _A["LIST"]):
        if a.values:
            return tuple(decode_attr(e) for e in a.values)
        return tuple(a.ints)
    if t == _A["TENSOR"]:
        return from_fields(a.t, schemas.MINDIR_DTYPE_NAME[a.t.data_type], a.t.dims)
    if t == _A["TENSORS"] and len(a.tensors) == 1 and not a.tensors[0].dims:
        return dtype_of(schemas.MINDIR_DTYPE_NAME[a.tensors[0].data_type])
    raise ValueError("load: attribute %r has a type (%s) pijit does not read" % (a.name, t))


# ---- export --------------------------------------------------------------------------------------

def to_model(g, graph_name="pijit_graph"):
    """A captured Graph (extract.py) as a mind_ir.ModelProto Message."""
    unknown = sorted({n.op for n in g.nodes if n.op not in PRIMITIVES})
    if unknown:
        raise NotImplementedError("export: pijit has no MindSpore primitive for the op(s) %s of "
                                  "this network" % ", ".join(unknown))
    names = {}
    gp = _M("GraphProto", name=graph_name)
    for k, (v, name, tensor) in enumerate(g.inputs):
        names[v.id] = name
        if k < g.num_user_inputs:
            gp.input.append(_M("ValueInfoProto", name=name,
                               tensor=[_tensor_proto(name, v.dtype, v.shape)]))
        else:
            gp.parameter.append(_tensor_proto(name, v.dtype, v.shape, tensor))
    for v, t in g.consts:
        name = "Constant_%d" % v.id
        names[v.id] = name
        gp.node.append(_M("NodeProto", op_type="Constant", name=name, output=[name],
                          attribute=[encode_attr("value", t)]))
    values = g.values()
    for n in g.nodes:
        prim, ren = PRIMITIVES[n.op]
        name = "%s-op%d" % (prim, n.outputs[0].id)
        outs = [name if k == 0 else "%s:%d" % (name, k) for k in range(len(n.outputs))]
        attrs = [encode_attr(ren.get(k, k), v) for k, v in n.attrs.items()]
        ins = [names[i] for i in n.inputs]
        if n.op == "conv2d":
            w = values[n.inputs[1]]
            attrs += [encode_attr("out_channel", w.shape[0]), encode_attr("kernel_size", w.shape[2:]),
                      encode_attr("mode", 1), encode_attr("pad_mode", "pad"),
                      encode_attr("format", "NCHW")]
            if len(ins) == 3:  # Conv2D then BiasAdd, as MindSpore writes nn.Conv2d(has_bias=True)
                conv = name + "-conv"
                gp.node.append(_M("NodeProto", op_type=prim, name=conv, input=ins[:2],
                                  output=[conv], attribute=attrs))
                prim, ins, attrs = "BiasAdd", [conv, ins[2]], [encode_attr("format", "NCHW")]
        elif n.op in ("max_pool2d", "avg_pool2d", "batch_norm"):
            attrs.append(encode_attr("format", "NCHW"))
        gp.node.append(_M("NodeProto", op_type=prim, name=name, input=ins, output=outs,
                          attribute=attrs))
        for o, oname in zip(n.outputs, outs):
            names[o.id] = oname
    for i in g.outputs:
        v = values[i]
        gp.output.append(_M("ValueInfoProto", name=names[i],
                            tensor=[_tensor_proto(names[i], v.dtype, v.shape)]))
    return _M("ModelProto", ir_version="1", producer_name="pijit", producer_version="0.1",
              model_version="1", graph=gp, little_endian=True, mind_ir_version=1)


# ---- load ----------------------------------------------------------------------------------------

def from_model(model):
    """A mind_ir.ModelProto Message -> a Program of registry ops (runner.py)."""
    gp = model.graph
    if gp is None:
        raise ValueError("load: the MindIR file has no graph")
    prims = {p.name: p for p in model.primitives}

    def prim_of(node):  # newer MindSpore writes "REF::name" pointing into model.primitives
        if node.op_type and node.op_type.startswith("REF::"):
            p = prims.get(node.op_type[5:])
            if p is not None:
                return p.op_type, list(node.attribute) + list(p.attribute)
        return node.op_type, list(node.attribute)

    unknown = sorted({prim_of(n)[0] for n in gp.node}
                     - set(BY_PRIMITIVE) - {"Constant", "BiasAdd", "Return", "MakeTuple"})
    if unknown:
        raise ValueError("load: the MindIR file uses MindSpore primitive(s) pijit cannot run: %s"
                         % ", ".join(unknown))
    prog = Program()
    for vi in gp.input:
        t = vi.tensor[0] if vi.tensor else None
        prog.inputs.append((vi.name, schemas.MINDIR_DTYPE_NAME.get(t.data_type) if t else None,
                            tuple(t.dims) if t else None))
    for p in gp.parameter:
        prog.params.append((p.name, from_fields(p, schemas.MINDIR_DTYPE_NAME[p.data_type], p.dims)))
    consumers = {}
    for n in gp.node:
        for i in n.input:
            consumers[i] = consumers.get(i, 0) + 1
    pending_conv = {}
    for n in gp.node:
        prim, attrs_p = prim_of(n)
        attrs = {a.name: decode_attr(a) for a in attrs_p}
        if prim == "Constant":
            prog.consts[n.output[0]] = attrs["value"]
            continue
        if prim in ("Return", "MakeTuple"):
            continue
        if prim == "BiasAdd":
            conv = pending_conv.pop(n.input[0], None)
            if conv is not None and consumers.get(n.input[0]) == 1:
                conv[1].append(n.input[1])  # join Conv2D + BiasAdd into conv2d with its bias
                conv[2][:] = list(n.output)
            else:
                prog.steps.append(("__bias_add__", list(n.input), list(n.output), {}))
            continue
        op, back = BY_PRIMITIVE[prim]
        drop = _MS_ONLY | _MS_ONLY_BY_PRIM.get(prim, set())
        kept = {back.get(k, k): v for k, v in attrs.items() if k not in drop}
        step = (op, list(n.input), list(n.output), kept)
        prog.steps.append(step)
        if op == "conv2d" and len(n.input) == 2:
            pending_conv[n.output[0]] = step
    prog.outputs = [vi.name for vi in gp.output]
    return prog


def load_model(path):
    with open(path, "rb") as f:
        data = f.read()
    return wire.decode(schemas.MINDIR, "ModelProto", data)
