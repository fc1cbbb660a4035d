"""Turns a Cell's construct source into rewrite Nodes: each statement becomes one node, nested calls
and arithmetic inside a call's arguments (or a return value) are first taken out into statements
of their own (`conv1_var = self.conv1(x)`), so every node reads only names and constants."""
import ast
import builtins
import inspect
import sys
import textwrap

from pijit.rewrite.node import Node
from pijit.rewrite.node_type import NodeType
from pijit.rewrite.scoped_value import ScopedValue

_BINOPS = {"Add": ("+", "add"), "Sub": ("-", "sub"), "Mult": ("*", "mul"), "Div": ("/", "div"),
           "FloorDiv": ("//", "floordiv"), "Mod": ("%", "mod"), "Pow": ("**", "pow"),
           "MatMult": ("@", "matmul"), "BitAnd": ("&", "bitand"), "BitOr": ("|", "bitor"),
           "BitXor": ("^", "bitxor"), "LShift": ("<<", "lshift"), "RShift": (">>", "rshift")}
_UNARY = {"USub": ("-", "neg"), "UAdd": ("+", "pos"), "Not": ("not ", "not"), "Invert": ("~", "invert")}
_CMP = {"Eq": ("==", "eq"), "NotEq": ("!=", "ne"), "Lt": ("<", "lt"), "LtE": ("<=", "le"),
        "Gt": (">", "gt"), "GtE": (">=", "ge"), "Is": ("is", "is"), "IsNot": ("is not", "is_not"),
        "In": ("in", "in"), "NotIn": ("not in", "not_in")}
_BOOL = {"And": ("and", "and"), "Or": ("or", "or")}


class _Unsupported(Exception):
    """An expression this parser does not write back; its statement is kept as written."""


def _const(e):
    """(True, value) for a literal the parser keeps as a ConstantValue (-1 included)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        ok, v = _const(e.operand)
        if ok and isinstance(v, (int, float)) and not isinstance(v, bool):
            return True, -v if isinstance(e.op, ast.USub) else v
        return False, None
    if sys.version_info >= (3, 8):
        if isinstance(e, ast.Constant) and (e.value is None or isinstance(e.value, (int, float, str, bool))):
            return True, e.value
        return False, None
    if isinstance(e, ast.Num):
        return True, e.n
    if isinstance(e, ast.Str):
        return True, e.s
    if isinstance(e, ast.NameConstant):
        return True, e.value
    return False, None


def _dotted(e):
    """'a.b.c' for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return None
    parts.append(e.id)
    return ".".join(reversed(parts))


def _simple(e):
    """The ScopedValue of a name, `self.attr`-like chain, literal or tuple/list of them; else None."""
    if isinstance(e, ast.Name):
        return ScopedValue.create_naming_value(e.id)
    ok, v = _const(e)
    if ok:
        return ScopedValue.create_variable_value(v)
    d = _dotted(e)
    if d is not None:
        scope, _, name = d.rpartition(".")
        return ScopedValue.create_naming_value(name, scope)
    if isinstance(e, (ast.Tuple, ast.List)):
        items = [_simple(x) for x in e.elts]
        if any(i is None for i in items):
            return None
        from pijit.rewrite.scoped_value import ValueType
        if isinstance(e, ast.Tuple):
            return ScopedValue(ValueType.TupleValue, "", tuple(items))
        return ScopedValue(ValueType.ListValue, "", items)
    return None


def _src(e):
    """The text of an expression (the forms construct code uses; others raise _Unsupported)."""
    ok, v = _const(e)
    if ok:
        return repr(v)
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return "%s.%s" % (_wrap(e.value), e.attr)
    if isinstance(e, ast.Tuple):
        items = [_src(x) for x in e.elts]
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    if isinstance(e, ast.List):
        return "[%s]" % ", ".join(_src(x) for x in e.elts)
    if isinstance(e, ast.Dict):
        return "{%s}" % ", ".join("**" + _src(v) if k is None else "%s: %s" % (_src(k), _src(v))
                                  for k, v in zip(e.keys, e.values))
    if isinstance(e, ast.Starred):
        return "*" + _wrap(e.value)
    if isinstance(e, ast.Call):
        parts = [_src(a) for a in e.args]
        parts += ["**" + _src(k.value) if k.arg is None else "%s=%s" % (k.arg, _src(k.value))
                  for k in e.keywords]
        return "%s(%s)" % (_wrap(e.func), ", ".join(parts))
    if isinstance(e, ast.BinOp):
        return "%s %s %s" % (_wrap(e.left), _BINOPS[type(e.op).__name__][0], _wrap(e.right))
    if isinstance(e, ast.UnaryOp):
        return _UNARY[type(e.op).__name__][0] + _wrap(e.operand)
    if isinstance(e, ast.BoolOp):
        return (" %s " % _BOOL[type(e.op).__name__][0]).join(_wrap(v) for v in e.values)
    if isinstance(e, ast.Compare):
        return _wrap(e.left) + "".join(" %s %s" % (_CMP[type(o).__name__][0], _wrap(c))
                                       for o, c in zip(e.ops, e.comparators))
    if isinstance(e, ast.Subscript):
        return "%s[%s]" % (_wrap(e.value), _slice(e.slice))
    if isinstance(e, ast.Slice):
        return _slice(e)
    if isinstance(e, ast.IfExp):
        return "%s if %s else %s" % (_wrap(e.body), _wrap(e.test), _wrap(e.orelse))
    if sys.version_info < (3, 8) and isinstance(e, ast.Ellipsis):
        return "..."
    raise _Unsupported(type(e).__name__)


def _wrap(e):
    text = _src(e)
    if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp)):
        return "(%s)" % text
    return text


def _slice(s):
    if sys.version_info < (3, 9):
        if isinstance(s, ast.Index):
            return _slice(s.value)
        if isinstance(s, ast.ExtSlice):
            return ", ".join(_slice(d) for d in s.dims)
    if isinstance(s, ast.Slice):
        text = "%s:%s" % (_src(s.lower) if s.lower else "", _src(s.upper) if s.upper else "")
        return text + (":" + _src(s.step) if s.step else "")
    if isinstance(s, ast.Tuple):
        return ", ".join(_slice(d) for d in s.elts) if s.elts else "()"
    return _src(s)


def _names(node, ctx):
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx) and n.id != "self" and n.id not in out:
            out.append(n.id)
    return out


class ConstructParser(object):
    """Parses `network`'s construct into nodes appended to `stree`."""

    def __init__(self, stree, network):
        self.stree = stree
        self.net = network
        cls = type(network)
        owner = next(k for k in cls.__mro__ if "construct" in k.__dict__)
        fn = owner.__dict__["construct"]
        fn = getattr(fn, "__wrapped__", fn)
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError) as e:
            raise RuntimeError("SymbolTree.create: the source of %s.construct is not available (%s)"
                               % (owner.__name__, e))
        self.lines = textwrap.dedent(src).split("\n")
        tree = ast.parse("\n".join(self.lines))
        self.fdef = tree.body[0]
        self.scope = dict(getattr(sys.modules.get(fn.__module__), "__dict__", {}))
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.scope[name] = cell.cell_contents
                except ValueError:
                    pass
        self.locals = set()

    # ---- helpers --------------------------------------------------------------------------------
    def _stmt_lines(self, stmt, next_line):
        """The statement's own source lines, dedented to the body's indentation."""
        first = stmt.lineno - 1
        end = getattr(stmt, "end_lineno", None)
        if end is None:  # 3.7: up to the next statement, less trailing blanks and comments
            end = next_line - 1 if next_line else len(self.lines)
            while end > first + 1 and (not self.lines[end - 1].strip()
                                       or self.lines[end - 1].strip().startswith("#")):
                end -= 1
        chunk = self.lines[first:end]
        return textwrap.dedent("\n".join(chunk)).split("\n")

    def _resolve(self, dotted):
        head, _, rest = dotted.partition(".")
        if head in self.scope:
            obj = self.scope[head]
        elif hasattr(builtins, head):
            obj = getattr(builtins, head)
        else:
            return None
        for part in rest.split(".") if rest else ():
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def _python(self, stmt, next_line, out, name=None):
        lines = self._stmt_lines(stmt, next_line)
        kind = NodeType.ControlFlow if isinstance(stmt, ast.If) else NodeType.Python
        node = Node(kind, name or ("if" if kind is NodeType.ControlFlow else type(stmt).__name__),
                    targets=[ScopedValue.create_naming_value(n) for n in _names(stmt, ast.Store)],
                    args=[ScopedValue.create_naming_value(n) for n in _names(stmt, ast.Load)],
                    lines=lines)
        out.append(node)
        self.locals.update(t.value for t in node._targets)

    # ---- expressions ----------------------------------------------------------------------------
    def _operand(self, e, out):
        """A ScopedValue for `e`, first taking a complex `e` out into a statement of its own."""
        v = _simple(e)
        if v is not None:
            return v
        if isinstance(e, (ast.Starred, ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.DictComp,
                          ast.SetComp, ast.Await, ast.Yield, ast.YieldFrom)):
            raise _Unsupported(type(e).__name__)
        if isinstance(e, ast.Call):
            base = self._call_name(e)
        elif isinstance(e, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
            base = self._math_name(e)
        else:
            base = type(e).__name__.lower()
        var = self.stree._unique_var(base + "_var")
        self._assign([ScopedValue.create_naming_value(var)], e, out)
        return ScopedValue.create_naming_value(var)

    def _call_name(self, call):
        f = call.func
        if isinstance(f, ast.Attribute):
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
        raise _Unsupported("call of a %s" % type(f).__name__)

    @staticmethod
    def _math_name(e):
        if isinstance(e, ast.BinOp):
            return _BINOPS[type(e.op).__name__][1]
        if isinstance(e, ast.UnaryOp):
            return _UNARY[type(e.op).__name__][1]
        if isinstance(e, ast.BoolOp):
            return _BOOL[type(e.op).__name__][1]
        return _CMP[type(e.ops[0]).__name__][1]

    def _assign(self, targets, value, out):
        """Appends the node(s) for `targets = value` (value a call or arithmetic) to `out`."""
        if isinstance(value, ast.Call):
            node = self._call(targets, value, out)
        elif isinstance(value, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
            if isinstance(value, ast.BinOp):
                operands, op = [value.left, value.right], ("BinOp", _BINOPS[type(value.op).__name__][0])
            elif isinstance(value, ast.UnaryOp):
                operands, op = [value.operand], ("UnaryOp", _UNARY[type(value.op).__name__][0])
            elif isinstance(value, ast.BoolOp):
                operands, op = list(value.values), ("BoolOp", _BOOL[type(value.op).__name__][0])
            else:
                operands = [value.left] + list(value.comparators)
                op = ("Compare", [_CMP[type(o).__name__][0] for o in value.ops])
            args = [self._operand(o, out) for o in operands]
            node = Node(NodeType.MathOps, self._math_name(value), targets=targets, args=args, op=op)
        else:
            text = _src(value)
            node = Node(NodeType.Python, type(value).__name__, targets=targets,
                        args=[ScopedValue.create_naming_value(n) for n in _names(value, ast.Load)],
                        lines=["%s = %s" % (", ".join(t.source() for t in targets), text)])
        node._name = self.stree._unique_name(node._name)
        out.append(node)
        self.locals.update(t.value for t in targets)
        return node

    def _call(self, targets, call, out):
        from pijit.nn.cell import Cell
        from pijit.ops.primitives import Primitive
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise _Unsupported("*args or **kwargs in a call")
        f = call.func
        name = self._call_name(call)
        dotted = _dotted(f)
        if dotted is None:
            raise _Unsupported("call of an expression")
        args = [self._operand(a, out) for a in call.args]
        kwargs = {k.arg: self._operand(k.value, out) for k in call.keywords}
        scope, _, attr = dotted.rpartition(".")
        func = ScopedValue.create_naming_value(attr, scope)
        instance, sub_tree = None, None
        if scope == "self":
            instance = getattr(self.net, attr, None)
            if isinstance(instance, Cell):
                from pijit.rewrite.symbol_tree import _cell_kind, SymbolTree
                kind = _cell_kind(instance)
                if kind is NodeType.Tree:
                    try:
                        sub_tree = SymbolTree.create(instance)
                    except (RuntimeError, SyntaxError):
                        kind = NodeType.CallCell
            elif isinstance(instance, Primitive):
                kind = NodeType.CallPrimitive
            else:
                kind = NodeType.CallFunction
        elif scope and (scope.split(".")[0] in self.locals or scope.split(".")[0] == "self"):
            kind = NodeType.CallMethod
        else:
            instance = self._resolve(dotted)
            if isinstance(instance, Primitive):
                kind = NodeType.CallPrimitive
            elif isinstance(instance, Cell):
                kind = NodeType.CallCell
            else:
                kind = NodeType.CallFunction
        return Node(kind, name, instance, targets, args, kwargs, func, sub_tree=sub_tree)

    # ---- statements -----------------------------------------------------------------------------
    def parse(self):
        """[input nodes], [body nodes]."""
        a = self.fdef.args
        inputs = []
        params = list(getattr(a, "posonlyargs", [])) + list(a.args)
        defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
        for p, d in list(zip(params, defaults))[1:]:
            node = Node.create_input(p.arg)
            node._default = _src(d) if d is not None else None
            inputs.append(node)
        if a.vararg:
            node = Node.create_input(a.vararg.arg)
            node._star = "*"
            inputs.append(node)
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if not a.vararg and p is a.kwonlyargs[0]:
                raise RuntimeError("SymbolTree.create: keyword-only parameters of construct are not "
                                   "supported")
            node = Node.create_input(p.arg)
            node._default = _src(d) if d is not None else None
            inputs.append(node)
        if a.kwarg:
            node = Node.create_input(a.kwarg.arg)
            node._star = "**"
            inputs.append(node)
        for node in inputs:
            self.stree._unique_name(node._name)
            self.locals.add(node._targets[0].value)
        body = self.fdef.body
        nodes = []
        for i, stmt in enumerate(body):
            next_line = body[i + 1].lineno if i + 1 < len(body) else None
            out = []
            saved = (set(self.stree._names), set(self.stree._vars), set(self.locals))
            try:
                self._statement(stmt, out)
            except _Unsupported:
                self.stree._names, self.stree._vars, self.locals = saved
                out = []
                self._python(stmt, next_line, out)
                out[-1]._name = self.stree._unique_name(out[-1]._name)
            nodes.extend(out)
        return inputs, nodes

    def _statement(self, stmt, out):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, ast.Name):
                targets = [ScopedValue.create_naming_value(t.id)]
            elif isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(x, ast.Name) for x in t.elts):
                targets = [ScopedValue.create_naming_value(x.id) for x in t.elts]
            else:
                raise _Unsupported("assignment target")
            if not isinstance(stmt.value, (ast.Call, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
                raise _Unsupported("assignment of a %s" % type(stmt.value).__name__)
            self._assign(targets, stmt.value, out)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            node = self._call([], stmt.value, out)
            node._name = self.stree._unique_name(node._name)
            out.append(node)
        elif isinstance(stmt, ast.Return):
            v = stmt.value
            if v is None:
                args = []
            elif isinstance(v, ast.Tuple) and not any(isinstance(x, ast.Starred) for x in v.elts):
                args = [self._operand(x, out) for x in v.elts]
            else:
                args = [self._operand(v, out)]
            node = Node(NodeType.Output, self.stree._unique_name("return"), args=args)
            node._tuple = isinstance(v, ast.Tuple)
            out.append(node)
        else:
            raise _Unsupported(type(stmt).__name__)
