"""mindspore.rewrite (pijit.rewrite): a network's construct as nodes, edited and turned back into a
network. MindSpore's documented examples in our own words: LeNet's node listing and topology,
every ReLU replaced by a custom cell, a node inserted after a Dense, a node erased; sub-networks
as sub-trees, SequentialCell, primitives, functions, methods, arithmetic and control flow as
their node types; the generated code; errors as MindSpore raises them. Every rewritten network
is checked against the equivalent hand-written one, eagerly and jitted (one graph)."""
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.rewrite import SymbolTree, Node, NodeType, ScopedValue, ValueType, TreeNodeHelper
from jit_compare import CAPTURE_ON, assert_ran_eagerly, eager, same_bits


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class LeakyHalf(nn.Cell):
    """The custom activation the examples swap in: x where x > 0, x / 2 elsewhere."""

    def construct(self, x):
        return ops.maximum(x, x * 0.5)


class HandLeNet(nn.Cell):
    """LeNet5 written by hand with LeakyHalf in place of each ReLU, sharing `base`'s layers."""

    def __init__(self, base, act):
        super().__init__()
        self.base = base
        self.act = act

    def construct(self, x):
        b = self.base
        x = b.max_pool2d(self.act(b.conv1(x)))
        x = b.max_pool2d(self.act(b.conv2(x)))
        x = b.flatten(x)
        x = self.act(b.fc1(x))
        x = self.act(b.fc2(x))
        return b.fc3(x)


def image():
    import random
    rng = random.Random(3)
    return pj.Tensor([[[[rng.uniform(-1, 1) for _ in range(32)] for _ in range(32)]] for _ in range(2)])


class SubNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.dense(x)
        x = self.relu(x)
        return x


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sub = SubNet()
        self.seq = nn.SequentialCell([nn.Dense(4, 4), nn.Tanh()])
        self.add = ops.Add()
        self.scale = 2.0

    def construct(self, x, y=None):
        """Docstring kept as a Python node."""
        x = self.sub(x)
        x = self.seq(x)
        z = self.add(x, x)
        z = ops.relu(z)
        z = z.reshape((-1, 4))
        w = z * self.scale + x
        if y is not None:
            w = w + y
        return w


class TestLeNetTree(unittest.TestCase):
    def setUp(self):
        self.net = LeNet5()
        self.stree = SymbolTree.create(self.net)

    def test_node_names_and_types(self):
        names = [n.get_name() for n in self.stree.nodes()]
        self.assertEqual(names, ['input_x', 'conv1', 'relu', 'max_pool2d', 'conv2', 'relu_1',
                                 'max_pool2d_1', 'flatten', 'fc1', 'relu_2', 'fc2', 'relu_3', 'fc3',
                                 'return'])
        types = [n.get_node_type() for n in self.stree.nodes()]
        self.assertEqual(types[0], NodeType.Input)
        self.assertEqual(types[-1], NodeType.Output)
        self.assertTrue(all(t is NodeType.CallCell for t in types[1:-1]))
        conv1 = self.stree.get_node("conv1")
        self.assertEqual(str(conv1.get_node_type()), "NodeType.CallCell")
        self.assertIs(conv1.get_instance(), self.net.conv1)
        self.assertIs(conv1.get_instance_type(), nn.Conv2d)
        self.assertIs(self.stree.get_node("return").get_instance_type(), type(None))
        self.assertIsNone(self.stree.get_node("nothing"))

    def test_args_targets_and_topology(self):
        conv1 = self.stree.get_node("conv1")
        self.assertEqual([str(a) for a in conv1.get_args()], ["x"])
        self.assertEqual([str(t) for t in conv1.get_targets()], ["conv1_var"])
        self.assertEqual(conv1.get_kwargs(), {})
        self.assertEqual([n.get_name() for n in conv1.get_users()], ["relu"])
        self.assertEqual([n.get_name() for n in self.stree.get_node("conv2").get_inputs()],
                         ["max_pool2d"])
        self.assertEqual([n.get_name() for n in conv1.get_inputs()], ["input_x"])
        relu3 = self.stree.get_node("relu_3")
        provider, out = relu3.get_arg_providers()[0]
        self.assertEqual((provider.get_name(), out), ("fc2", 0))
        users = self.stree.get_node("fc3").get_target_users()
        self.assertEqual([(n.get_name(), i) for n, i in users[0]], [("return", 0)])
        self.assertIs(relu3.get_symbol_tree(), self.stree)

    def test_set_arg_and_set_arg_by_node(self):
        relu3 = self.stree.get_node("relu_3")
        relu3.set_arg(0, "fc1_var")
        self.assertEqual([str(a) for a in relu3.get_args()], ["fc1_var"])
        self.assertEqual([n.get_name() for n in relu3.get_inputs()], ["fc1"])
        relu3.set_arg_by_node(0, self.stree.get_node("fc2"), 0)
        self.assertEqual([str(a) for a in relu3.get_args()], ["fc2_var"])
        # an output reassigned between the two nodes is renamed so the argument reads that node
        fc3 = self.stree.get_node("fc3")
        fc3.set_arg_by_node(0, self.stree.get_node("flatten"))
        self.assertEqual([str(a) for a in fc3.get_args()], ["flatten_var"])
        self.assertEqual([str(t) for t in self.stree.get_node("flatten").get_targets()], ["flatten_var"])
        self.assertEqual([str(a) for a in self.stree.get_node("fc1").get_args()], ["flatten_var"])
        self.assertEqual(fc3.get_inputs()[0].get_name(), "flatten")

    def test_code_text(self):
        code = self.stree.get_code()
        self.assertIn("class LeNet5Opt(LeNet5):", code)
        body = code.split("def construct(self, x):\n")[1].split("\n")
        self.assertEqual([line.strip() for line in body if line.strip()], [
            "conv1_var = self.conv1(x)", "relu_var = self.relu(conv1_var)",
            "x = self.max_pool2d(relu_var)", "conv2_var = self.conv2(x)",
            "relu_var_1 = self.relu(conv2_var)", "x = self.max_pool2d(relu_var_1)",
            "x = self.flatten(x)", "fc1_var = self.fc1(x)", "x = self.relu(fc1_var)",
            "fc2_var = self.fc2(x)", "x = self.relu(fc2_var)", "x = self.fc3(x)", "return x"])

    def test_print_node_tabulate(self):
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            self.stree.print_node_tabulate()
        lines = buf.getvalue().splitlines()
        self.assertEqual(lines[0].split(), ["node", "type", "name", "codes", "arg", "providers",
                                            "target", "users"])
        self.assertEqual(len(lines), 2 + 14)
        row = next(line for line in lines if " conv2 " in line)
        self.assertIn("NodeType.CallCell", row)
        self.assertIn("conv2_var = self.conv2(x)", row)
        self.assertIn("{0: ('max_pool2d', 0)}", row)
        self.assertIn("{0: [('relu_1', 0)]}", row)

    def test_unchanged_network_is_equal(self):
        new = self.stree.get_network()
        self.assertEqual(type(new).__name__, "LeNet5Opt")
        self.assertIsInstance(new, nn.Cell)
        x = image()
        self.assertTrue(same_bits(eager(self.net, x), eager(new, x)))
        self.assertEqual([p.name for p in new.trainable_params()],
                         [p.name for p in self.net.trainable_params()])


class TestLeNetEdits(unittest.TestCase):
    def check_equal(self, new, ref, x, graphs=1):
        want = eager(ref, x)
        self.assertTrue(same_bits(want, eager(new, x)))
        jitted = pj.jit(new)
        for _ in range(2):
            self.assertTrue(same_bits(want, jitted(x)))
        if not CAPTURE_ON:  # (no capture: jitted ran eagerly)
            assert_ran_eagerly(self, jitted)
            return
        st = pj.jit_stats(jitted)
        self.assertEqual(st["graphs"], graphs, st["break_reasons"])
        self.assertEqual(st["break_reasons"], [])

    def test_replace_every_relu(self):
        net = LeNet5()
        stree = SymbolTree.create(net)
        act = LeakyHalf()
        replaced = []
        for node in list(stree.nodes()):
            if node.get_instance_type() is nn.ReLU:
                new = Node.create_call_cell(act, targets=node.get_targets(), args=node.get_args(),
                                            name="leaky")
                root = stree.replace(node, [new])
                replaced.append(root.get_name())
        self.assertEqual(replaced, ["leaky", "leaky_1", "leaky_2", "leaky_3"])
        self.assertFalse(any(n.get_instance_type() is nn.ReLU for n in stree.nodes()))
        self.assertIn("relu_var = self.leaky(conv1_var)", stree.get_code())
        self.assertIn("x = self.leaky_3(fc2_var)", stree.get_code())
        new_net = stree.get_network()
        self.assertIs(new_net.leaky, act)
        self.check_equal(new_net, HandLeNet(net, act), image())

    def test_insert_after_dense(self):
        net = LeNet5()
        stree = SymbolTree.create(net)
        fc1 = stree.get_node("fc1")
        new = Node.create_call_cell(nn.ReLU(), targets=["x_1"],
                                    args=[ScopedValue.create_naming_value("fc1_var")], name="new_relu")
        self.assertIsNone(new.get_symbol_tree())
        got = stree.insert(stree.after(fc1), new)
        self.assertIs(got, new)
        stree.get_node("relu_2").set_arg(0, "x_1")
        self.assertEqual([n.get_name() for n in fc1.get_users()], ["new_relu"])
        self.assertEqual([n.get_name() for n in new.get_users()], ["relu_2"])
        names = [n.get_name() for n in stree.nodes()]
        self.assertEqual(names[names.index("fc1") + 1], "new_relu")
        self.assertIn("x_1 = self.new_relu(fc1_var)\n        x = self.relu(x_1)", stree.get_code())

        class Hand(nn.Cell):
            def __init__(self, b):
                super().__init__()
                self.b = b

            def construct(self, x):
                b = self.b
                x = b.max_pool2d(b.relu(b.conv1(x)))
                x = b.max_pool2d(b.relu(b.conv2(x)))
                x = b.flatten(x)
                x = b.relu(ops.relu(b.fc1(x)))
                x = b.relu(b.fc2(x))
                return b.fc3(x)
        self.check_equal(stree.get_network(), Hand(net), image())

    def test_insert_scaling_cell_changes_values(self):
        class Scale(nn.Cell):
            def construct(self, x):
                return x * 3.0
        net = LeNet5()
        stree = SymbolTree.create(net)
        stree.insert(stree.before("return"),
                     Node.create_call_cell(Scale(), ["x"], [ScopedValue.create_naming_value("x")]))
        self.assertEqual(stree.get_node("scale").get_node_type(), NodeType.CallCell)
        x = image()
        self.check_equal(stree.get_network(), lambda v: net(v) * 3.0, x)

    def test_erase_node(self):
        net = LeNet5()
        stree = SymbolTree.create(net)
        relu2 = stree.get_node("relu_2")
        for user in relu2.get_users():  # fc2 now reads fc1's output directly
            user.set_arg(0, relu2.get_args()[0])
        erased = stree.erase(relu2)
        self.assertIs(erased, relu2)
        self.assertIsNone(stree.get_node("relu_2"))
        self.assertEqual([n.get_name() for n in stree.get_node("fc2").get_inputs()], ["fc1"])
        self.assertNotIn("self.relu(fc1_var)", stree.get_code())

        class Hand(nn.Cell):
            def __init__(self, b):
                super().__init__()
                self.b = b

            def construct(self, x):
                b = self.b
                x = b.max_pool2d(b.relu(b.conv1(x)))
                x = b.max_pool2d(b.relu(b.conv2(x)))
                x = b.fc1(b.flatten(x))
                x = b.relu(b.fc2(x))
                return b.fc3(x)
        self.check_equal(stree.get_network(), Hand(net), image())

    def test_erase_by_name_reads_the_earlier_value(self):
        net = LeNet5()
        stree = SymbolTree.create(net)
        stree.erase("flatten")  # `x = self.flatten(x)`: fc1 now reads max_pool2d_1's x
        self.assertEqual([n.get_name() for n in stree.get_node("fc1").get_inputs()], ["max_pool2d_1"])

    def test_original_network_untouched_and_rewrite_again(self):
        net = LeNet5()
        stree = SymbolTree.create(net)
        stree.replace(stree.get_node("relu"), [Node.create_call_cell(
            LeakyHalf(), ["relu_var"], [ScopedValue.create_naming_value("conv1_var")], name="leaky")])
        new = stree.get_network()
        self.assertNotIn("leaky", net._cells)
        self.assertIn("leaky", new._cells)
        # the generated class has its source: it can be rewritten in turn
        again = SymbolTree.create(new)
        self.assertEqual(again.get_node("leaky").get_node_type(), NodeType.Tree)
        self.assertEqual(again.get_node("relu_1").get_node_type(), NodeType.CallCell)
        x = image()
        self.assertTrue(same_bits(eager(new, x), eager(again.get_network(), x)))


class TestNodeKinds(unittest.TestCase):
    def setUp(self):
        self.net = Outer()
        self.stree = SymbolTree.create(self.net)

    def kinds(self):
        return [(n.get_name(), n.get_node_type()) for n in self.stree.nodes()]

    def test_kinds(self):
        self.assertEqual(self.kinds(), [
            ("input_x", NodeType.Input), ("input_y", NodeType.Input), ("Expr", NodeType.Python),
            ("sub", NodeType.Tree), ("seq", NodeType.CellContainer), ("add", NodeType.CallPrimitive),
            ("relu", NodeType.CallFunction), ("reshape", NodeType.CallMethod),
            ("mul", NodeType.MathOps), ("add_1", NodeType.MathOps), ("if", NodeType.ControlFlow),
            ("return", NodeType.Output)])
        self.assertIs(self.stree.get_node("relu").get_instance(), ops.relu)
        self.assertIs(self.stree.get_node("add").get_instance_type(), ops.Add)
        mul = self.stree.get_node("mul")
        self.assertEqual([str(a) for a in mul.get_args()], ["z", "self.scale"])
        self.assertEqual(mul.get_args()[1].type, ValueType.NamingValue)
        self.assertEqual(mul.get_args()[1].scope, "self")
        self.assertEqual([n.get_name() for n in self.stree.get_node("if").get_inputs()],
                         ["input_y", "add_1"])
        self.assertEqual([n.get_name() for n in self.stree.get_node("return").get_inputs()], ["if"])

    def test_code(self):
        body = self.stree.get_code().split("def construct(self, x, y=None):\n")[1]
        self.assertEqual([line.strip() for line in body.split("\n") if line.strip()], [
            '"""Docstring kept as a Python node."""', "x = self.sub(x)", "x = self.seq(x)",
            "z = self.add(x, x)", "z = ops.relu(z)", "z = z.reshape((-1, 4))",
            "mul_var = z * self.scale", "w = mul_var + x", "if y is not None:", "w = w + y",
            "return w"])

    def test_sub_tree(self):
        sub_node = self.stree.get_node("sub")
        sub = TreeNodeHelper.get_sub_tree(sub_node)
        self.assertIs(sub, sub_node.get_sub_tree())
        self.assertEqual([n.get_name() for n in sub.nodes()], ["input_x", "dense", "relu", "return"])
        self.assertIsNone(TreeNodeHelper.get_sub_tree(self.stree.get_node("seq")))
        all_names = [n.get_name() for n in self.stree.nodes(all_nodes=True)]
        self.assertEqual(all_names[3:8], ["sub", "input_x", "dense", "relu", "return"])
        # an edit inside the sub-tree reaches the rewritten outer network
        relu = sub.get_node("relu")
        sub.replace(relu, [Node.create_call_cell(nn.Sigmoid(), ["x"], relu.get_args(), name="sig")])
        self.assertIs(self.stree.get_node("sig").get_node_type(), NodeType.CallCell)
        self.assertIn("class SubNetOpt(SubNet):", self.stree.get_code())
        new = self.stree.get_network()
        self.assertEqual(type(new.sub).__name__, "SubNetOpt")
        self.assertIs(type(self.net.sub), SubNet)
        x, y = pj.ones((2, 4)) * 0.3, pj.ones((2, 4))
        n = self.net
        h = n.seq(ops.sigmoid(n.sub.dense(x)))
        z = ops.relu(h + h).reshape((-1, 4))
        want = z * 2.0 + h + y
        self.assertTrue(same_bits(eager(new, x, y), eager(lambda: want)))
        jitted = pj.jit(new)
        self.assertTrue(same_bits(jitted(x, y), want))
        self.assertTrue(same_bits(jitted(x, y), want))

    def test_python_nodes_cannot_be_edited(self):
        with self.assertRaises(RuntimeError):
            self.stree.get_node("if").set_arg(0, "x")

    def test_call_function_node(self):
        sub = TreeNodeHelper.get_sub_tree(self.stree.get_node("sub"))
        dense = sub.get_node("dense")
        fn = Node.create_call_function(ops.abs, ["x"], [ScopedValue.create_naming_value("x")])
        self.assertEqual(fn.get_node_type(), NodeType.CallFunction)
        sub.insert(sub.after(dense), fn)
        self.assertIn("x = abs(x)", sub.get_code())
        new = sub.get_network()
        x = pj.Tensor([[-1.0, 2.0, -3.0, 4.0]])
        n = self.net.sub
        self.assertTrue(same_bits(eager(new, x), eager(lambda: n.relu(ops.abs(n.dense(x))))))


class TestScopedValue(unittest.TestCase):
    def test_values(self):
        v = ScopedValue.create_naming_value("conv", "self")
        self.assertEqual(str(v), "self.conv")
        self.assertEqual(v.type, ValueType.NamingValue)
        self.assertEqual(str(ScopedValue.create_variable_value(2)), "2")
        self.assertEqual(ScopedValue.create_variable_value(2).type, ValueType.ConstantValue)
        t = ScopedValue.create_variable_value((1, "a"))
        self.assertEqual(t.type, ValueType.TupleValue)
        self.assertEqual(str(t), "(1, 'a')")
        self.assertEqual(ScopedValue.create_variable_value([1]).type, ValueType.ListValue)
        self.assertEqual(ScopedValue.create_variable_value({"k": 1}).type, ValueType.DictValue)
        self.assertEqual(ScopedValue.create_variable_value(object).type, ValueType.CustomObjValue)
        self.assertEqual(str(ScopedValue.create_name_values(["z", "z_1"], ["self", "self"])),
                         "[self.z, self.z_1]")
        self.assertEqual(ScopedValue.create_naming_value("x"), ScopedValue.create_naming_value("x"))
        self.assertEqual(len({ScopedValue.create_naming_value("x"), ScopedValue.create_naming_value("x")}), 1)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "'name'"):
            ScopedValue.create_naming_value(1)
        with self.assertRaisesRegex(TypeError, "'scope'"):
            ScopedValue.create_naming_value("x", 2)
        with self.assertRaisesRegex(RuntimeError, "Length of names should be equal to length of scopes"):
            ScopedValue.create_name_values(["a", "b"], ["self"])
        with self.assertRaises(TypeError):
            ScopedValue.create_name_values(["a", 1])
        with self.assertRaises(TypeError):
            ScopedValue.create_variable_value({1: 2})


class TestErrors(unittest.TestCase):
    def setUp(self):
        self.stree = SymbolTree.create(LeNet5())

    def test_create_needs_a_cell(self):
        with self.assertRaisesRegex(TypeError, "For 'SymbolTree', the type of 'network' should be Cell"):
            SymbolTree.create(lambda x: x)

    def test_create_call_cell_checks(self):
        x = [ScopedValue.create_naming_value("x")]
        with self.assertRaisesRegex(TypeError, "'cell'"):
            Node.create_call_cell(lambda v: v, ["x"], x)
        with self.assertRaisesRegex(TypeError, "'targets'"):
            Node.create_call_cell(nn.ReLU(), "x", x)
        with self.assertRaisesRegex(TypeError, "'targets'"):
            Node.create_call_cell(nn.ReLU(), [1], x)
        with self.assertRaisesRegex(TypeError, "'args'"):
            Node.create_call_cell(nn.ReLU(), ["x"], ["x"])
        with self.assertRaises(TypeError):
            Node.create_call_cell(nn.ReLU(), ["x"], x, kwargs={"a": 1})
        with self.assertRaisesRegex(TypeError, "'name'"):
            Node.create_call_cell(nn.ReLU(), ["x"], x, name=3)
        with self.assertRaisesRegex(TypeError, "'is_sub_net'"):
            Node.create_call_cell(nn.ReLU(), ["x"], x, is_sub_net=1)

    def test_positions_and_foreign_nodes(self):
        other = SymbolTree.create(LeNet5())
        new = Node.create_call_cell(nn.ReLU(), ["x"], [ScopedValue.create_naming_value("x")])
        with self.assertRaisesRegex(TypeError, "'position'"):
            self.stree.insert(3, new)
        with self.assertRaisesRegex(TypeError, "'node'"):
            self.stree.insert(self.stree.after("conv1"), "relu")
        with self.assertRaisesRegex(RuntimeError, "Position is not belong to current SymbolTree"):
            self.stree.insert(other.after("conv1"), new)
        with self.assertRaisesRegex(RuntimeError, "Node is not belong to current SymbolTree"):
            self.stree.erase(other.get_node("conv1"))
        with self.assertRaises(TypeError):
            self.stree.erase(5)
        with self.assertRaises(TypeError):
            self.stree.after(5)
        self.stree.insert(self.stree.after("conv1"), new)
        with self.assertRaisesRegex(RuntimeError, "already belongs"):
            other.insert(other.after("conv1"), new)
        with self.assertRaises(TypeError):
            self.stree.replace(self.stree.get_node("fc1"), new)
        with self.assertRaises(TypeError):
            self.stree.nodes(all_nodes=1).__next__()

    def test_node_edits(self):
        conv1 = self.stree.get_node("conv1")
        with self.assertRaisesRegex(TypeError, "'index'"):
            conv1.set_arg("0", "x")
        with self.assertRaisesRegex(TypeError, "'arg'"):
            conv1.set_arg(0, 1)
        with self.assertRaises(ValueError):
            conv1.set_arg(3, "x")
        with self.assertRaises(ValueError):
            conv1.set_arg_by_node(2, self.stree.get_node("input_x"))
        with self.assertRaisesRegex(TypeError, "'src_node'"):
            conv1.set_arg_by_node(0, "x")

    def test_get_sub_tree(self):
        with self.assertRaisesRegex(TypeError, "the type of node should be 'NodeType.Tree'"):
            self.stree.get_node("conv1").get_sub_tree()
        self.assertIsNone(TreeNodeHelper.get_sub_tree(self.stree.get_node("conv1")))
        with self.assertRaises(TypeError):
            TreeNodeHelper.get_sub_tree("conv1")

    def test_unique_name(self):
        self.assertEqual(self.stree.unique_name(), "output")
        self.assertEqual(self.stree.unique_name(), "output_1")
        self.assertEqual(self.stree.unique_name("x"), "x_1")


class TestImportPaths(unittest.TestCase):
    def test_toplevel_and_alias(self):
        from pijit import alias
        alias.install_mindspore_alias()
        import mindspore
        from mindspore.rewrite import SymbolTree as ST
        self.assertIs(ST, SymbolTree)
        for name in ("SymbolTree", "Node", "NodeType", "ScopedValue", "TreeNodeHelper"):
            self.assertIs(getattr(mindspore, name), getattr(pj.rewrite, name))


if __name__ == "__main__":
    unittest.main()
