"""`mindspore.ops.operations.math_ops`: the math primitives MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "Abs", "ACos", "Acosh", "Add", "AddN", "Addcdiv", "Addcmul", "ApproximateEqual", "Asin",
    "Asinh", "AssignAdd", "AssignSub", "Atan", "Atan2", "Atanh", "BatchMatMul", "BesselI0e",
    "BesselI1e", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Ceil", "Cdist", "Cos", "Cosh", "Cross",
    "CumProd", "CumSum", "Div", "DivNoNan", "Einsum", "Equal", "EqualCount", "Erf", "Erfc",
    "Erfinv", "Exp", "Expm1", "FloatStatus", "Floor", "FloorDiv", "FloorMod", "Greater",
    "GreaterEqual", "InplaceAdd", "InplaceSub", "Inv", "Invert", "IsFinite", "IsInf", "IsNan",
    "Lerp", "Less", "LessEqual", "LinSpace", "Log", "Log1p", "LogicalAnd", "LogicalNot",
    "LogicalOr", "LogicalXor", "MatMul", "MatrixInverse", "Maximum", "Minimum", "Mod", "Mul",
    "MulNoNan", "Neg", "NotEqual", "Pow", "RealDiv", "Reciprocal", "ReduceAll", "ReduceAny",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceStd", "ReduceSum", "Round",
    "Rsqrt", "Sign", "Sin", "Sinh", "Sqrt", "Square", "SquaredDifference", "SquareSumAll", "Sub",
    "Tan", "TensorAdd", "TruncateDiv", "TruncateMod", "Xdivy", "Xlogy", "Median", "NanToNum",
    # linear algebra (pijit/ops/linalg.py)
    "Cholesky", "CholeskyInverse", "CholeskySolve", "LogMatrixDeterminant", "Lstsq", "LuSolve",
    "LuUnpack", "MatrixDeterminant", "MatrixExp", "MatrixPower", "MatrixSolve",
    "MatrixTriangularSolve", "Orgqr", "Qr",
])
