"""mindspore.rewrite: read a network's construct as a tree of nodes (one per statement), edit it
(insert, erase, replace nodes, change their arguments) and get the code and a new network running
it. Built over Python's ast on the construct's source; see symbol_tree.py for the design."""
from pijit.rewrite.node_type import NodeType
from pijit.rewrite.scoped_value import ScopedValue, ValueType
from pijit.rewrite.node import Node
from pijit.rewrite.symbol_tree import SymbolTree, TreeNodeHelper, Position

__all__ = ["SymbolTree", "Node", "NodeType", "ScopedValue", "ValueType", "TreeNodeHelper"]
