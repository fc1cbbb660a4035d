"""Node: one statement of a rewritten construct (a call, arithmetic, an input, the return, or a
statement kept as written). A Node knows its statement in parts (targets, callee, args, kwargs)
and writes it back as code; the SymbolTree it belongs to answers the topology (which node
provides each argument, which nodes read each target) from the order of its statements."""
import types

from pijit._validate import type_error
from pijit.rewrite.node_type import NodeType
from pijit.rewrite.scoped_value import ScopedValue, ValueType

_CALLS = (NodeType.CallCell, NodeType.CallPrimitive, NodeType.CallFunction, NodeType.CallMethod,
          NodeType.Tree, NodeType.CellContainer)


def _as_value(who, arg, v):
    if isinstance(v, str):
        return ScopedValue.create_naming_value(v)
    if not isinstance(v, ScopedValue):
        raise type_error(who, arg, v, "ScopedValue or str")
    return v


def _check_values(who, arg, values, types_, words):
    if not isinstance(values, (list, tuple)):
        raise type_error(who, arg, values, "list")
    for v in values:
        if not isinstance(v, types_):
            raise type_error(who, arg, v, words)


def _check_kwargs(who, kwargs):
    if not isinstance(kwargs, dict):
        raise type_error(who, "kwargs", kwargs, "dict")
    for k, v in kwargs.items():
        if not isinstance(k, str):
            raise type_error(who, "kwargs key", k, "str")
        if not isinstance(v, ScopedValue):
            raise type_error(who, "kwargs value", v, "ScopedValue")


class Node(object):
    """A statement of a network's construct. Create new ones with `Node.create_call_cell` (or
    `create_call_function`, `create_input`) and place them with SymbolTree.insert/replace."""

    def __init__(self, node_type, name, instance=None, targets=(), args=(), kwargs=None, func=None,
                 op=None, lines=None, sub_tree=None):
        self._type = node_type
        self._name = name
        self._instance = instance
        self._targets = list(targets)
        self._args = list(args)
        self._kwargs = dict(kwargs or {})
        self._func = func              # ScopedValue of the callee (`self.conv1`, `ops.relu`)
        self._op = op                  # MathOps: (ast kind, operator text(s))
        self._lines = lines            # Python/ControlFlow: the statement's source lines
        self._default = None           # Input: the default value's text, or None
        self._star = ""                # Input: "*" or "**" for *args / **kwargs
        self._sub_tree = sub_tree      # Tree: the sub-network's SymbolTree
        self._tree = None              # the SymbolTree holding this node
        self._attrs = {}

    # ---- creation ------------------------------------------------------------------------------
    @staticmethod
    def create_call_cell(cell, targets, args=None, kwargs=None, name="", is_sub_net=False):
        """A node for `targets = self.name(*args, **kwargs)` calling `cell` (a Cell or a Primitive);
        with is_sub_net=True a user-defined Cell is parsed into a sub-tree (a Tree node)."""
        from pijit.nn.cell import Cell
        from pijit.ops.primitives import Primitive
        who = "Node"
        if not isinstance(cell, (Cell, Primitive)):
            raise type_error(who, "cell", cell, "Cell or Primitive")
        _check_values(who, "targets", targets, (ScopedValue, str), "ScopedValue or str")
        if not isinstance(name, str):
            raise type_error(who, "name", name, "str")
        if not isinstance(is_sub_net, bool):
            raise type_error(who, "is_sub_net", is_sub_net, "bool")
        if args is not None:
            _check_values(who, "args", args, ScopedValue, "ScopedValue")
        if kwargs is not None:
            _check_kwargs(who, kwargs)
        targets = [_as_value(who, "targets", t) for t in targets]
        if not name:
            name = type(cell).__name__.lower()
        sub_tree = None
        if isinstance(cell, Primitive):
            kind = NodeType.CallPrimitive
        else:
            from pijit.rewrite.symbol_tree import _cell_kind, SymbolTree
            kind = _cell_kind(cell)
            if is_sub_net and kind in (NodeType.CallCell, NodeType.Tree):
                sub_tree = SymbolTree.create(cell)
                kind = NodeType.Tree
            elif kind is NodeType.Tree:
                kind = NodeType.CallCell
        node = Node(kind, name, cell, targets, args or [], kwargs or {},
                    ScopedValue.create_naming_value(name, "self"), sub_tree=sub_tree)
        node._own_attr = True  # the callee is this node's own attribute, named after the node
        return node

    @staticmethod
    def create_call_function(function, targets, args=None, kwargs=None):
        """A node for `targets = function(*args, **kwargs)`; the function's body is not parsed."""
        who = "create_call_function"
        from pijit.ops import functional
        # (pijit.ops's elementwise functions are op entries, each standing for its Python function)
        if not isinstance(function, (types.FunctionType, types.BuiltinFunctionType, type, type(functional.abs))):
            raise type_error(who, "function", function, "function")
        _check_values(who, "targets", targets, (ScopedValue, str), "ScopedValue or str")
        if args is not None:
            _check_values(who, "args", args, ScopedValue, "ScopedValue")
        if kwargs is not None:
            _check_kwargs(who, kwargs)
        name = function.__name__
        node = Node(NodeType.CallFunction, name, function, [_as_value(who, "targets", t) for t in targets],
                    args or [], kwargs or {}, ScopedValue.create_naming_value(name))
        node._global_value = function  # generated code reaches the function by this name
        return node

    @staticmethod
    def create_input(param_name, default=None):
        """An Input node: a parameter `param_name` of construct (with a default value)."""
        if not isinstance(param_name, str):
            raise type_error("Node", "param_name", param_name, "str")
        if default is not None and not isinstance(default, ScopedValue):
            raise type_error("Node", "default", default, "ScopedValue")
        node = Node(NodeType.Input, "input_" + param_name,
                    targets=[ScopedValue.create_naming_value(param_name)])
        if default is not None:
            node._default = default.source()
        return node

    # ---- queries -------------------------------------------------------------------------------
    def get_handler(self):
        return self

    def get_name(self):
        """The node's name, unique in its SymbolTree (a called Cell's attribute name, suffixed _1,
        _2, ... where the same one is called again)."""
        return self._name

    def get_node_type(self):
        return self._type

    def get_instance(self):
        """The Cell, Primitive or function the statement calls (None for other statements)."""
        return self._instance

    def get_instance_type(self):
        """type(get_instance()): the Cell's, Primitive's or sub-network's class; NoneType for
        Python, Input, Output and CallMethod nodes."""
        if self._type in (NodeType.Python, NodeType.Input, NodeType.Output, NodeType.CallMethod,
                          NodeType.MathOps, NodeType.ControlFlow):
            return type(None)
        return type(self._instance)

    def get_targets(self):
        return list(self._targets)

    def get_args(self):
        return list(self._args)

    def get_kwargs(self):
        return dict(self._kwargs)

    def get_symbol_tree(self):
        return self._tree

    def get_sub_tree(self):
        """The SymbolTree of a Tree node's sub-network."""
        if self._type is not NodeType.Tree:
            raise TypeError("For get_sub_tree, the type of node should be 'NodeType.Tree', but got %s"
                            % self._type)
        if self._sub_tree is None:
            raise AttributeError("For get_sub_tree, no symbol tree is stored in node %s." % self._name)
        return self._sub_tree

    def get_inputs(self):
        """The nodes whose outputs this node reads, in argument order, each once."""
        if self._tree is None:
            return []
        out = []
        for _, (node, _) in sorted(self._tree._providers(self).items()):
            if node not in out:
                out.append(node)
        return out

    def get_users(self):
        """The nodes that read one of this node's outputs, in statement order."""
        if self._tree is None:
            return []
        return self._tree._users(self)

    def get_arg_providers(self):
        """{arg index: (node, output index)} for the arguments another node of the tree provides."""
        return {} if self._tree is None else self._tree._providers(self)

    def get_target_users(self, index=-1):
        """{output index: [(node, arg index)]}; with index, that output's list."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise type_error("get_target_users", "index", index, "int")
        users = {} if self._tree is None else self._tree._target_users(self)
        return users if index == -1 else users.get(index, [])

    # ---- edits ---------------------------------------------------------------------------------
    def _editable(self, what):
        if self._type in (NodeType.Python, NodeType.ControlFlow, NodeType.Input):
            raise RuntimeError("%s: the arguments of a %s node (%s) cannot be edited; rewrite the "
                               "statement with new nodes instead" % (what, self._type, self._name))

    def set_arg(self, index, arg):
        """Sets argument `index` (in the order of get_args()) to a name or a ScopedValue."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise type_error("Node", "index", index, "int")
        arg = _as_value("Node", "arg", arg)
        self._editable("set_arg")
        if not -len(self._args) <= index < len(self._args):
            raise ValueError("For 'set_arg', the 'index' should be in [0, %d), but got %d."
                             % (len(self._args), index))
        self._args[index] = arg
        self._touch()

    def set_arg_by_node(self, arg_idx, src_node, out_idx=None):
        """Makes argument `arg_idx` read output `out_idx` of `src_node` (its only output when None).
        Where that output's name is assigned again between the two nodes, the source's output is
        renamed (`<name>_var`) so that the argument reads that node's value."""
        if isinstance(arg_idx, bool) or not isinstance(arg_idx, int):
            raise type_error("Node", "arg_idx", arg_idx, "int")
        if not isinstance(src_node, Node):
            raise type_error("Node", "src_node", src_node, "Node")
        if out_idx is not None and (isinstance(out_idx, bool) or not isinstance(out_idx, int)):
            raise type_error("Node", "out_idx", out_idx, "int")
        self._editable("set_arg_by_node")
        if not 0 <= arg_idx < len(self._args):
            raise ValueError("For 'set_arg_by_node', the 'arg_idx' should be in [0, %d), but got %d."
                             % (len(self._args), arg_idx))
        targets = src_node._targets
        if out_idx is None:
            if len(targets) != 1:
                raise ValueError("For 'set_arg_by_node', the source node %s has %d outputs: give out_idx"
                                 % (src_node._name, len(targets)))
            out_idx = 0
        if not 0 <= out_idx < len(targets):
            raise ValueError("For 'set_arg_by_node', the 'out_idx' should be in [0, %d), but got %d."
                             % (len(targets), out_idx))
        tree = self._tree
        if tree is not None:
            if src_node._tree is not tree:
                raise RuntimeError("For 'set_arg_by_node', the node %s does not belong to the SymbolTree "
                                   "of %s" % (src_node._name, self._name))
            tree._expose_target(src_node, out_idx, self)
        self._args[arg_idx] = src_node._targets[out_idx]
        self._touch()

    def set_attribute(self, key, value):
        if not isinstance(key, str):
            raise type_error("Node attribute", "key", key, "str")
        self._attrs[key] = value

    def get_attributes(self):
        return dict(self._attrs)

    def get_attribute(self, key):
        if not isinstance(key, str):
            raise type_error("Node attribute", "key", key, "str")
        return self._attrs.get(key)

    def _touch(self):
        if self._tree is not None:
            self._tree._mark_modified()

    # ---- code ----------------------------------------------------------------------------------
    def _read_names(self):
        """The local variables this statement reads, with the argument index each comes from."""
        out = []
        for i, a in enumerate(self._args):
            for n in a.local_names():
                out.append((i, n))
        base = len(self._args)
        for j, v in enumerate(self._kwargs.values()):
            for n in v.local_names():
                out.append((base + j, n))
        if self._func is not None and self._type is NodeType.CallMethod:
            head = (self._func.scope or "").split(".")[0]
            if head and head != "self":
                out.append((-1, head))
        return out

    def get_code(self):
        """The statement's text (one line, or the lines of a statement kept as written)."""
        t = self._type
        if t is NodeType.Input:
            text = self._star + self._targets[0].value
            return text + ("=" + self._default if self._default is not None else "")
        if t is NodeType.Output:
            if not self._args:
                return "return"
            text = ", ".join(a.source() for a in self._args)
            return "return " + text + ("," if len(self._args) == 1 and getattr(self, "_tuple", False) else "")
        if t in (NodeType.Python, NodeType.ControlFlow):
            return "\n".join(self._lines)
        if t is NodeType.MathOps:
            kind, ops = self._op
            a = [v.source() for v in self._args]
            if kind == "BinOp":
                rhs = "%s %s %s" % (a[0], ops, a[1])
            elif kind == "UnaryOp":
                rhs = ops + a[0]
            elif kind == "BoolOp":
                rhs = (" %s " % ops).join(a)
            else:  # Compare: ops is a list, one per comparison
                rhs = a[0] + "".join(" %s %s" % (o, b) for o, b in zip(ops, a[1:]))
        else:
            parts = [v.source() for v in self._args]
            parts += ["%s=%s" % (k, v.source()) for k, v in self._kwargs.items()]
            rhs = "%s(%s)" % (self._func.source(), ", ".join(parts))
        if not self._targets:
            return rhs
        return "%s = %s" % (", ".join(v.source() for v in self._targets), rhs)

    def __repr__(self):
        return "Node(%s, %s)" % (self._type.name, self._name)
