"""A loaded model as a program of registry ops, and the straight-line Python function it becomes.

The function is generated source, one `_C.op` call per node with its attributes as literals, so
pijit.jit captures it whole like any straight-line network (GraphCell runs it jitted); run
eagerly it is the node-by-node interpreter."""
import math

from pijit import _C


class Program(object):
    def __init__(self):
        self.inputs = []   # [(name, dtype name or None, shape or None)]
        self.params = []   # [(name, Tensor)]
        self.consts = {}   # name -> Tensor
        self.steps = []    # [(registry op, input names, output names, attrs)]
        self.outputs = []  # names


def _bias_add(x, b):
    """MindSpore's BiasAdd (NCHW...): b of shape (C,) added along axis 1."""
    shape = (1, b.shape[0]) + (1,) * (len(x.shape) - 2)
    return _C.op("add", (x, _C.op("reshape", (b,), {"shape": shape})), {})


def _literal(v, names):
    if isinstance(v, float):
        if math.isnan(v):
            return "_nan"
        if math.isinf(v):
            return "_inf" if v > 0 else "(-_inf)"
        return repr(v)
    if v is None or isinstance(v, (bool, int, str)):
        return repr(v)
    if isinstance(v, tuple):
        return repr(tuple(int(e) for e in v))
    key = "_k%d" % len(names)  # a dtype or a tensor: a name in the function's globals
    names[key] = v
    return key


def build_function(prog):
    """(function, its parameter names): fn(*params, *inputs) -> output tuple."""
    env = {"_op": _C.op, "_bias_add": _bias_add, "_nan": float("nan"), "_inf": float("inf")}
    var = {}

    def v(name):
        if name not in var:
            var[name] = "v%d" % len(var)
        return var[name]

    args = [v(n) for n, _t in prog.params] + [v(n) for n, _d, _s in prog.inputs]
    body = []
    for name, t in prog.consts.items():
        key = "_c%d" % len(env)
        env[key] = t
        body.append("    %s = %s" % (v(name), key))
    for op, ins, outs, attrs in prog.steps:
        missing = [i for i in ins if i not in var]
        if missing:
            raise ValueError("load: the graph uses %s before it is computed" % ", ".join(missing))
        lhs = ", ".join(v(o) for o in outs)  # _C.op returns a tuple only for several outputs
        if op == "__bias_add__":
            body.append("    %s = _bias_add(%s, %s)" % (lhs, v(ins[0]), v(ins[1])))
            continue
        items = ", ".join("%r: %s" % (k, _literal(a, env)) for k, a in attrs.items())
        call = "_op(%r, (%s), {%s})" % (op, "".join(v(i) + ", " for i in ins), items)
        body.append("    %s = %s" % (lhs, call))
    for o in prog.outputs:
        if o not in var:
            raise ValueError("load: the graph's output %r is never computed" % (o,))
    body.append("    return (%s)" % "".join(v(o) + ", " for o in prog.outputs))
    src = "def graph_fn(%s):\n%s\n" % (", ".join(args), "\n".join(body))
    code = compile(src, "<pijit loaded graph>", "exec")
    exec(code, env)  # noqa: S102 (our own generated source: op names and literals only)
    fn = env["graph_fn"]
    fn.__pijit_source__ = src
    return fn
