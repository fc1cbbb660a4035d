"""SymbolTree: a network's construct as an ordered list of Nodes (inputs first), with edits
(insert/erase/replace/set_arg) and code generation back to a new Cell class.

The topology is not stored: a node's argument `x` is provided by the closest node before it that
assigns `x`, so it stays right through any edit. get_network() writes the class
`<Net>Opt(<Net>)`: its __init__ takes the original instance and shares its sub-cells, parameters
and attributes (MindSpore's rewritten network does the same: the two stay linked), its construct
is the rewritten one; inserted cells are set on it under their node names. The code is compiled
under a name linecache knows, so inspect, tracebacks and a further SymbolTree.create read it."""
import ast
import itertools
import linecache
from collections import OrderedDict

from pijit._validate import type_error
from pijit.rewrite.node import Node
from pijit.rewrite.node_type import NodeType
from pijit.rewrite.scoped_value import ScopedValue

_counter = itertools.count()


def _cell_kind(cell):
    """CellContainer for a SequentialCell, CallCell for pijit's (MindSpore's) own layers, Tree for
    a user-defined network (parsed into a sub-tree)."""
    from pijit.nn.container import SequentialCell
    if isinstance(cell, SequentialCell):
        return NodeType.CellContainer
    mod = type(cell).__module__ or ""
    if mod == "pijit" or mod.startswith(("pijit.", "mindspore")):
        return NodeType.CallCell
    return NodeType.Tree


def _copy_init(self, obj):
    """The rewritten network's __init__: a Cell sharing `obj`'s sub-cells, parameters and
    attributes (its own registries, so cells set on it later leave `obj` alone)."""
    from pijit.nn.cell import Cell
    Cell.__init__(self)
    d = self.__dict__
    for key, value in obj.__dict__.items():
        if key in ("_cells", "_params"):
            d[key] = OrderedDict(value)
        elif key != "_graph_mode_jit":  # a jitted function of the old construct
            d[key] = value


class Position(object):
    """Where SymbolTree.insert places a node: before or after `node` of `tree`."""

    def __init__(self, tree, node, before):
        self.symbol_tree = tree
        self.node = node
        self.before_node = before


class SymbolTree(object):
    """A network's construct as Nodes; create with SymbolTree.create(network)."""

    def __init__(self, handler):
        if not isinstance(handler, SymbolTree):
            raise type_error("SymbolTree", "handler", handler, "SymbolTree")
        self.__dict__ = handler.__dict__

    @classmethod
    def create(cls, network):
        """Parses `network.construct` (a Cell's) into a SymbolTree. User-defined sub-networks become
        Tree nodes with trees of their own; statements it does not parse are kept as Python
        nodes, `if` statements as ControlFlow nodes."""
        from pijit.nn.cell import Cell
        from pijit.rewrite.parser import ConstructParser
        if not isinstance(network, Cell):
            raise type_error("SymbolTree", "network", network, "Cell")
        self = cls.__new__(cls)
        self._net = network
        self._names = set()       # node names in use
        self._vars = set()        # variable names in use in construct
        self._modified = False
        self._extra_globals = {}  # functions inserted nodes call, under the names the code uses
        self._saved_file_name = "network_define.py"
        parser = ConstructParser(self, network)
        self._globals = parser.scope
        fdef = parser.fdef
        self._vars.update(n.id for n in ast.walk(fdef) if isinstance(n, ast.Name))
        self._vars.update(a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg))
        inputs, body = parser.parse()
        self._list = inputs + body
        for node in self._list:
            node._tree = self
            if node._sub_tree is not None:
                node._sub_tree._parent = self
        self._parent = None
        return self

    # ---- names -----------------------------------------------------------------------------------
    def _unique(self, base, used):
        name, i = base, 0
        while name in used:
            i += 1
            name = "%s_%d" % (base, i)
        used.add(name)
        return name

    def _unique_name(self, base):
        return self._unique(base, self._names)

    def _unique_var(self, base):
        return self._unique(base, self._vars)

    def unique_name(self, name="output"):
        """A variable name not yet used in construct: `name`, else `name_1`, `name_2`, ..."""
        if not isinstance(name, str):
            raise type_error("SymbolTree", "name", name, "str")
        return self._unique_var(name)

    def _mark_modified(self):
        self._modified = True

    def _dirty(self):
        return self._modified or any(n._sub_tree._dirty() for n in self._list
                                     if n._sub_tree is not None)

    # ---- queries ---------------------------------------------------------------------------------
    def get_handler(self):
        return self

    def nodes(self, all_nodes=False):
        """The nodes in statement order (inputs first); with all_nodes, each Tree node is followed
        by the nodes of its sub-tree."""
        if not isinstance(all_nodes, bool):
            raise type_error("nodes", "all_nodes", all_nodes, "bool")
        for node in list(self._list):
            yield node
            if all_nodes and node._sub_tree is not None:
                for sub in node._sub_tree.nodes(True):
                    yield sub

    def get_node(self, node_name):
        """The node named `node_name` (here or in a sub-tree), or None."""
        if not isinstance(node_name, str):
            raise type_error("SymbolTree", "node_name", node_name, "str")
        for node in self._list:  # its own nodes first, then the sub-trees'
            if node._name == node_name:
                return node
        for node in self._list:
            found = node._sub_tree.get_node(node_name) if node._sub_tree is not None else None
            if found is not None:
                return found
        return None

    def get_inputs(self):
        return [n for n in self._list if n._type is NodeType.Input]

    def _own(self, node, who):
        if not isinstance(node, (Node, str)):
            raise type_error("SymbolTree", "node", node, "Node or str")
        if isinstance(node, str):
            found = next((n for n in self._list if n._name == node), None)
            if found is None:
                raise RuntimeError("For '%s', no node named '%s' in the SymbolTree" % (who, node))
            return found
        if node._tree is not self:
            raise RuntimeError("Node is not belong to current SymbolTree: %s" % node._name)
        return node

    # ---- topology --------------------------------------------------------------------------------
    def _provider_list(self, node):
        """[(arg index, provider node, output index)] for the names `node` reads."""
        idx = self._list.index(node)
        out = []
        for arg_i, name in node._read_names():
            for prev in reversed(self._list[:idx]):
                hit = [k for k, t in enumerate(prev._targets) if t.is_local_name() and t.value == name]
                if hit:
                    out.append((arg_i, prev, hit[0]))
                    break
        return out

    def _providers(self, node):
        res = {}
        for arg_i, prov, k in self._provider_list(node):
            if arg_i >= 0 and arg_i not in res:
                res[arg_i] = (prov, k)
        return res

    def _users(self, node):
        idx = self._list.index(node)
        return [m for m in self._list[idx + 1:] if any(p is node for _, p, _ in self._provider_list(m))]

    def _target_users(self, node):
        res = {}
        idx = self._list.index(node)
        for m in self._list[idx + 1:]:
            for arg_i, p, k in self._provider_list(m):
                if p is node and arg_i >= 0:
                    res.setdefault(k, []).append((m, arg_i))
        return res

    def _expose_target(self, src, out_idx, dst):
        """Renames src's output where a node between src and dst assigns the same name again."""
        name = src._targets[out_idx]
        if not name.is_local_name() or dst._tree is not self:
            return
        i, j = self._list.index(src), self._list.index(dst)
        if not any(name in n._targets for n in self._list[i + 1:j]):
            return
        new = ScopedValue.create_naming_value(self._unique_var(src._name + "_var"))
        for user, arg_i in self._target_users(src).get(out_idx, []):
            if arg_i < len(user._args) and user._args[arg_i] == name:
                user._args[arg_i] = new
            else:
                key = list(user._kwargs)[arg_i - len(user._args)]
                user._kwargs[key] = new
        src._targets[out_idx] = new

    # ---- edits -----------------------------------------------------------------------------------
    def before(self, node):
        """The position before `node` (a Node or a node's name), for insert()."""
        return Position(self, self._own(node, "before"), True)

    def after(self, node):
        """The position after `node` (a Node or a node's name), for insert()."""
        return Position(self, self._own(node, "after"), False)

    def insert(self, position, node):
        """Inserts `node` at `position` (from before()/after()); its name is made unique in the tree
        (and among the network's attributes, since a created cell is stored under it)."""
        if not isinstance(position, Position):
            raise type_error("SymbolTree", "position", position, "Position")
        if not isinstance(node, Node):
            raise type_error("SymbolTree", "node", node, "Node")
        if position.symbol_tree is not self or position.node._tree is not self:
            raise RuntimeError("Position is not belong to current SymbolTree")
        if node._tree is not None:
            raise RuntimeError("The node %s already belongs to a SymbolTree: create a new node"
                               % node._name)
        self._place(node)
        idx = self._list.index(position.node) + (0 if position.before_node else 1)
        n_inputs = len(self.get_inputs())
        if node._type is NodeType.Input:
            idx = min(idx, n_inputs)
        else:
            idx = max(idx, n_inputs)
        self._list.insert(idx, node)
        node._tree = self
        if node._sub_tree is not None:
            node._sub_tree._parent = self
        self._mark_modified()
        return node

    def _place(self, node):
        """Gives a new node its unique name, and its callee a name the generated code can reach."""
        if getattr(node, "_own_attr", False):
            base, i = node._name, 0
            while True:
                cand = base if i == 0 else "%s_%d" % (base, i)
                existing = self._net.__dict__.get(cand, self._net._cells.get(cand, self._net._params.get(cand)))
                if cand not in self._names and (existing is None or existing is node._instance) \
                        and cand not in type(self._net).__dict__:
                    break
                i += 1
            self._names.add(cand)
            node._name = cand
            node._func = ScopedValue.create_naming_value(cand, "self")
        else:
            node._name = self._unique_name(node._name)
        fn = getattr(node, "_global_value", None)
        if fn is not None:
            name = node._func.value
            if self._globals.get(name, fn) is not fn or self._extra_globals.get(name, fn) is not fn:
                name = self._unique(name, set(self._globals) | set(self._extra_globals))
            self._extra_globals[name] = fn
            node._func = ScopedValue.create_naming_value(name)

    def erase(self, node):
        """Removes `node` (a Node or a node's name) and returns it. Nodes that read its outputs
        then read whatever earlier statement assigns those names (or nothing: set their arguments
        first where no earlier statement does)."""
        node = self._own(node, "erase")
        self._list.remove(node)
        self._names.discard(node._name)
        node._tree = None
        self._mark_modified()
        return node

    erase_node = erase

    def replace(self, old_node, new_nodes):
        """Inserts `new_nodes` in order where `old_node` stands, erases `old_node`, and returns the
        last new node. The caller sets the new nodes' arguments and targets."""
        if not isinstance(old_node, Node):
            raise type_error("SymbolTree", "old_node", old_node, "Node")
        if not isinstance(new_nodes, (list, tuple)):
            raise type_error("SymbolTree", "new_nodes", new_nodes, "list")
        for n in new_nodes:
            if not isinstance(n, Node):
                raise type_error("SymbolTree", "new_nodes", n, "Node")
        if not new_nodes:
            raise ValueError("For 'replace', 'new_nodes' should not be empty.")
        old_node = self._own(old_node, "replace")
        for n in new_nodes:
            self.insert(self.before(old_node), n)
        self.erase(old_node)
        return new_nodes[-1]

    def set_output(self, index, return_value):
        """Sets value `index` of the return statement to the variable `return_value`."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise type_error("SymbolTree", "index", index, "int")
        if not isinstance(return_value, str):
            raise type_error("SymbolTree", "return_value", return_value, "str")
        out = next((n for n in self._list if n._type is NodeType.Output), None)
        if out is None:
            raise RuntimeError("SymbolTree has no output")
        out.set_arg(index, return_value)
        return out

    # ---- code ------------------------------------------------------------------------------------
    def _class_name(self):
        return type(self._net).__name__ + "Opt"

    def _class_code(self):
        inputs = ["self"] + [n.get_code() for n in self._list if n._type is NodeType.Input]
        body = []
        for n in self._list:
            if n._type is not NodeType.Input:
                body.extend("        " + line if line else "" for line in n.get_code().split("\n"))
        lines = ["class %s(%s):" % (self._class_name(), type(self._net).__name__), "",
                 "    def __init__(self, obj):",
                 "        _rewrite_init(self, obj)", "",
                 "    def construct(%s):" % ", ".join(inputs)]
        lines += body or ["        pass"]
        return "\n".join(lines) + "\n"

    def _dirty_subtrees(self, out):
        for n in self._list:
            if n._sub_tree is not None and n._sub_tree._dirty():
                n._sub_tree._dirty_subtrees(out)
                if n._sub_tree not in out:
                    out.append(n._sub_tree)
        return out

    def get_code(self):
        """The source of the rewritten network: the class `<Net>Opt` (after those of modified
        sub-networks)."""
        return "\n\n".join(t._class_code() for t in self._dirty_subtrees([]) + [self])

    def get_network(self):
        """A new Cell running the rewritten construct, sharing the original network's sub-cells and
        parameters (modified sub-networks are rebuilt the same way)."""
        text = self._class_code()
        filename = "<pijit.rewrite %s #%d>" % (self._class_name(), next(_counter))
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns = dict(self._globals)
        ns.update(self._extra_globals)
        ns[type(self._net).__name__] = type(self._net)
        ns["_rewrite_init"] = _copy_init
        exec(compile(text, filename, "exec"), ns)
        cls = ns[self._class_name()]
        cls.__module__ = type(self._net).__module__
        cls.__qualname__ = cls.__name__
        net = cls(self._net)
        for n in self._list:
            inst = None
            if n._sub_tree is not None and n._sub_tree._dirty():
                inst = n._sub_tree.get_network()
            elif getattr(n, "_own_attr", False):
                inst = n._instance
            if inst is not None and n._func is not None and n._func.scope == "self":
                setattr(net, n._func.value, inst)
        return net

    def set_saved_file_name(self, file_name):
        if not isinstance(file_name, str):
            raise type_error("Saving network", "file_name", file_name, "str")
        self._saved_file_name = file_name if file_name.endswith(".py") else file_name + ".py"

    def get_saved_file_name(self):
        return self._saved_file_name

    def save_network_to_file(self):
        """Writes get_code() to get_saved_file_name() (for reading: the class needs the original
        instance and the helper names of get_network's namespace)."""
        with open(self._saved_file_name, "w") as f:
            f.write(self.get_code())

    # ---- printing --------------------------------------------------------------------------------
    def _rows(self, all_nodes):
        rows = []
        for n in self.nodes(all_nodes):
            tree = n._tree
            providers = {k: (p._name, o) for k, (p, o) in sorted(tree._providers(n).items())}
            users = {k: [(m._name, a) for m, a in v] for k, v in sorted(tree._target_users(n).items())}
            code = n.get_code().split("\n")
            rows.append([str(n._type), n._name, code[0] + (" ..." if len(code) > 1 else ""),
                         str(providers), str(users)])
        return rows

    def print_node_tabulate(self, all_nodes=False):
        """Prints one row per node: node type, name, code, arg providers ({arg: (node, output)})
        and target users ({output: [(node, arg)]})."""
        if not isinstance(all_nodes, bool):
            raise type_error("print_node_tabulate", "all_nodes", all_nodes, "bool")
        head = ["node type", "name", "codes", "arg providers", "target users"]
        rows = self._rows(all_nodes)
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        fmt = "  ".join("%%-%ds" % w for w in widths)
        print((fmt % tuple(head)).rstrip())
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print((fmt % tuple(r)).rstrip())

    def dump(self):
        self.print_node_tabulate(all_nodes=True)

    def __repr__(self):
        return "SymbolTree(%s, %d nodes)" % (type(self._net).__name__, len(self._list))


class TreeNodeHelper(object):
    """Reaches the sub-tree of a Tree node."""

    @staticmethod
    def get_sub_tree(node):
        """The SymbolTree of a Tree node's sub-network; None for any other node."""
        if not isinstance(node, Node):
            raise type_error("TreeNodeHelper", "node", node, "Node")
        if node.get_node_type() is NodeType.Tree:
            return node._sub_tree
        return None
