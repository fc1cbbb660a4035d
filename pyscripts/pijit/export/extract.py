"""The graph an export writes: pijit's own captured graph of the network, read back from the IR's
stable text form (graph/ir.h; graph/ir_parse.cc parses the same text in C++).

Why capture and not a Python-side trace of `_C.op` calls: every layer, tensor method and operator
reaches the registry through C++ (tensor operators never pass through Python), and capture
already records exactly those ops with their attributes, resolved shapes and the source of each
input (which argument, which Parameter). The text is what golden tests pin, so reading it back is
reading a stable interface, not a log message."""
import re

from pijit import _C


class Value(object):
    __slots__ = ("id", "dtype", "shape")

    def __init__(self, vid, dtype, shape):
        self.id, self.dtype, self.shape = vid, dtype, tuple(shape)

    def __repr__(self):
        return "%%%d: %s%s" % (self.id, self.dtype, list(self.shape))


class Node(object):
    __slots__ = ("op", "inputs", "outputs", "attrs")

    def __init__(self, op, inputs, outputs, attrs):
        self.op = op            # registry op name
        self.inputs = inputs    # value ids
        self.outputs = outputs  # Values
        self.attrs = attrs      # dict, in the op's declared order


class Graph(object):
    """inputs: [(Value, name, tensor or None)], the network's inputs first (tensor None), then its
    parameters and tensor attributes (tensor: their current value); consts: [(Value, Tensor)];
    nodes in execution order; outputs: value ids."""

    def __init__(self):
        self.inputs, self.consts, self.nodes, self.outputs = [], [], [], []
        self.num_user_inputs = 0

    def values(self):
        out = {v.id: v for v, _n, _t in self.inputs}
        out.update((v.id, v) for v, _t in self.consts)
        for n in self.nodes:
            out.update((o.id, o) for o in n.outputs)
        return out


# ---- the IR text ---------------------------------------------------------------------------------

_META = re.compile(r"%(\d+): (\w+)\[([^\]]*)\]")


def _meta(text):
    m = _META.match(text)
    if not m:
        raise ValueError("export: cannot read the value %r of the captured graph" % (text,))
    shape = tuple(int(d) for d in m.group(3).split(",")) if m.group(3).strip() else ()
    return Value(int(m.group(1)), m.group(2), shape), text[m.end():]


def _split_top(text):
    """`a=1, b=(1, 2), c='x, y'` -> the pieces between top-level commas."""
    parts, depth, quote, cur = [], 0, False, []
    for ch in text:
        if quote:
            quote = ch != "'"
        elif ch == "'":
            quote = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_attr_value(text):
    """One attribute as Attrs::to_string prints it: None, True/False, 'str', (ints,), a real, an
    int, or a dtype name (returned as the dtype object _C.op takes)."""
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1]
    if text.startswith("("):
        inner = text[1:-1].strip().rstrip(",")
        return tuple(int(p) for p in inner.split(",")) if inner else ()
    if re.match(r"^-?\d+$", text):
        return int(text)
    if re.match(r"^-?(\d|inf|nan)", text):
        return float(text)
    return dtype_of(text)


def dtype_of(name):
    from pijit import dtype as _d
    t = getattr(_d, name.lower(), None)
    if t is None:
        raise ValueError("export: unknown dtype %r" % (name,))
    return t


def _const_tensor(value, text):
    from pijit.tensor import Tensor
    text = text.strip()
    if not text:
        raise NotImplementedError(
            "export: the network captures a constant tensor of shape %s (more than 8 elements), "
            "which the graph text does not carry; make it a Parameter or a Tensor attribute of the "
            "Cell" % (list(value.shape),))
    items = [parse_attr_value(p) for p in _split_top(text[1:-1])]
    t = Tensor(items, dtype=dtype_of(value.dtype))
    return t.reshape(value.shape) if tuple(t.shape) != value.shape else t


def parse_graph(text):
    """Graph::to_string's text -> (Graph with input names, no tensors yet)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    g = Graph()
    head = re.match(r"^graph\((.*)\) \{$", lines[0])
    if not head:
        raise ValueError("export: unexpected graph header %r" % (lines[0],))
    if head.group(1):
        for piece in re.split(r", (?=%\d+: )", head.group(1)):
            v, rest = _meta(piece)
            g.inputs.append((v, rest.strip(), None))
    for ln in lines[1:]:
        ln = ln.strip()
        if ln == "}":
            break
        if ln.startswith("return"):
            body = ln[len("return"):].split("#")[0].strip()
            if "# writes back" in ln:
                raise NotImplementedError(
                    "export: the network writes to its Parameters while it runs (%s); export it in "
                    "inference mode (net.set_train(False))" % ln.split("#", 1)[1].strip())
            g.outputs = [int(p.strip()[1:]) for p in body.strip("()").split(",") if p.strip()]
            continue
        ln = re.sub(r"  # line \d+$", "", ln)
        lhs, rhs = ln.split(" = ", 1)
        outs = [_meta(p.strip())[0] for p in re.split(r", (?=%\d+: )", lhs)]
        if rhs.startswith("constant"):
            g.consts.append((outs[0], _const_tensor(outs[0], rhs[len("constant"):])))
            continue
        m = re.match(r"^(\w+)\(([^)]*)\)(.*)$", rhs)
        if not m:
            raise ValueError("export: cannot read the graph line %r" % (ln,))
        ins = [int(p.strip()[1:]) for p in m.group(2).split(",") if p.strip()]
        attrs = {}
        for piece in _split_top(m.group(3).strip()):
            k, v = piece.split("=", 1)
            attrs[k.strip()] = parse_attr_value(v.strip())
        g.nodes.append(Node(m.group(1), ins, outs, attrs))
    return g


# ---- capture -------------------------------------------------------------------------------------

def _export_call(cell, *inputs):
    return cell(*inputs)


_SOURCE_STEP = re.compile(r"\.(\w+)|\[('(?:[^']*)'|-?\d+)\]")


def _resolve(source, roots):
    """A graph input's source (`cell._cells['fc']._params['weight']`, `inputs[0]`) -> the object."""
    m = re.match(r"^(\w+)", source)
    if not m or m.group(1) not in roots:
        raise NotImplementedError("export: the network reads %r, which is not one of its inputs, "
                                  "Parameters or Tensor attributes" % (source,))
    obj, pos = roots[m.group(1)], m.end()
    while pos < len(source):
        s = _SOURCE_STEP.match(source, pos)
        if not s:
            raise NotImplementedError("export: cannot resolve the graph input %r" % (source,))
        if s.group(1):
            obj = getattr(obj, s.group(1))
        else:
            key = s.group(2)
            obj = obj[key[1:-1] if key.startswith("'") else int(key)]
        pos = s.end()
    return obj


def capture(net, inputs):
    """Captures `net(*inputs)` as one graph (a graph break is an error: an exported model is one
    graph) and returns (Graph, the network's outputs on these inputs)."""
    from pijit.jit import jit, jit_stats
    from pijit.explain import reset
    from pijit.tensor import Tensor
    for i, x in enumerate(inputs):
        if not isinstance(x, _C.TensorBase):
            raise TypeError("export: every input must be a Tensor (the inputs fix the exported "
                            "shapes), but input %d is %s" % (i, type(x).__name__))
    fn = jit(_export_call, fullgraph=True)
    reset(fn)
    result = fn(net, *inputs)
    entries = jit_stats(fn)["entries"]
    if not entries or not entries[0].get("graph"):
        import sys
        reason = entries[0].get("reason") if entries else (
            "pijit's capture did not run for this call on Python %d.%d" % sys.version_info[:2])
        raise NotImplementedError("export: the network did not capture as one graph (%s)" % (reason,))
    text = entries[0]["graph"]
    reset(fn)
    g = parse_graph(text)
    roots = {"cell": net, "inputs": tuple(inputs)}
    named = []
    for v, source, _t in g.inputs:
        obj = _resolve(source, roots)
        m = re.match(r"^inputs\[(\d+)\]$", source)
        if m:
            named.append((v, "input_%s" % m.group(1), None, int(m.group(1))))
        else:
            if not isinstance(obj, _C.TensorBase):
                obj = Tensor(obj)
            name = getattr(obj, "name", None) or source
            named.append((v, name, obj, None))
    # the network's inputs first, in argument order, then the Parameters in capture order
    users = sorted([n for n in named if n[3] is not None], key=lambda n: n[3])
    read = {n[3] for n in users}
    next_id = max([v.id for v, _n, _t in g.inputs] + [v.id for v, _t in g.consts]
                  + [o.id for n in g.nodes for o in n.outputs] + [-1]) + 1
    for i, x in enumerate(inputs):
        if i not in read:  # an input the outputs do not depend on stays an input of the model
            users.append((Value(next_id, _dtype_name(x), x.shape), "input_%d" % i, None, i))
            next_id += 1
    users.sort(key=lambda n: n[3])
    seen = set()
    params = []
    for v, name, t, _k in named:
        if t is None:
            continue
        base, k = name, 1
        while name in seen:  # two Parameters of one name (a shared name): keep both, distinctly
            name = "%s_%d" % (base, k)
            k += 1
        seen.add(name)
        params.append((v, name, t))
    g.inputs = [(v, name, None) for v, name, _t, _k in users] + params
    g.num_user_inputs = len(users)
    return g, result


def _dtype_name(x):
    from pijit.export.tensors import dtype_name
    return dtype_name(x.dtype)
