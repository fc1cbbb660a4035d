"""The kinds of statement a rewrite Node stands for (MindSpore's NodeType, same members and values)."""
import enum


class NodeType(enum.Enum):
    """What a Node's statement does: calls a Cell (CallCell), a Primitive (CallPrimitive), a function
    (CallFunction) or a method of a value (CallMethod); a sub-network parsed as a tree of its own
    (Tree) or a SequentialCell (CellContainer); arithmetic or a comparison (MathOps); an `if`
    (ControlFlow); a parameter of construct (Input); its return (Output); or any other statement,
    kept as written (Python)."""
    Unknown = 0
    CallCell = 1
    CallPrimitive = 2
    CallModule = 3
    CallFunction = 4
    CallMethod = 5
    Python = 6
    Input = 7
    Output = 8
    Tree = 9
    CellContainer = 10
    MathOps = 11
    ControlFlow = 12
