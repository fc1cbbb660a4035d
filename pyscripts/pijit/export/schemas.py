"""Field-number tables of the two file formats (the facts of MindSpore's mind_ir.proto and ONNX's
onnx.proto, in wire.py's table form: number -> (name, kind, repeated, packed)). Only the fields
pijit reads or writes are listed; decoding skips the others."""


def _f(name, kind, rep=False, packed=False):
    return (name, kind, rep, packed)


# ---- MindSpore's MindIR (package mind_ir, proto2: nothing is declared packed) ---------------------

MINDIR = {
    "ModelProto": {
        1: _f("ir_version", "string"), 2: _f("producer_name", "string"),
        3: _f("producer_version", "string"), 4: _f("domain", "string"),
        5: _f("model_version", "string"), 6: _f("doc_string", "string"),
        7: _f("graph", "GraphProto"), 8: _f("functions", "GraphProto", True),
        10: _f("little_endian", "bool"), 12: _f("primitives", "PrimitiveProto", True),
        13: _f("mind_ir_version", "int64"),
    },
    "GraphProto": {
        1: _f("node", "NodeProto", True), 2: _f("name", "string"),
        3: _f("parameter", "TensorProto", True), 4: _f("doc_string", "string"),
        5: _f("input", "ValueInfoProto", True), 6: _f("output", "ValueInfoProto", True),
        8: _f("attribute", "AttributeProto", True),
    },
    "NodeProto": {
        1: _f("input", "string", True), 2: _f("output", "string", True), 3: _f("name", "string"),
        4: _f("op_type", "string"), 5: _f("attribute", "AttributeProto", True),
        6: _f("doc_string", "string"), 7: _f("domain", "string"),
    },
    "ValueInfoProto": {
        1: _f("name", "string"), 2: _f("tensor", "TensorProto", True),
        3: _f("doc_string", "string"), 4: _f("denotation", "string"),
    },
    "AttributeProto": {
        1: _f("name", "string"), 2: _f("f", "float"), 3: _f("i", "int64"), 4: _f("d", "double"),
        5: _f("s", "bytes"), 6: _f("t", "TensorProto"), 7: _f("g", "GraphProto"),
        8: _f("floats", "float", True), 9: _f("doubles", "double", True),
        10: _f("ints", "int64", True), 11: _f("strings", "bytes", True),
        12: _f("tensors", "TensorProto", True), 14: _f("doc_string", "string"),
        15: _f("ref_attr_name", "string"), 16: _f("type", "enum"),
        17: _f("values", "AttributeProto", True),
    },
    "TensorProto": {
        1: _f("dims", "int64", True), 2: _f("data_type", "int32"),
        3: _f("float_data", "float", True), 4: _f("int32_data", "int32", True),
        5: _f("string_data", "bytes", True), 6: _f("int64_data", "int64", True),
        7: _f("name", "string"), 8: _f("doc_string", "string"), 9: _f("raw_data", "bytes"),
        10: _f("double_data", "double", True), 11: _f("uint64_data", "uint64", True),
        13: _f("ref_key", "string"),
    },
    "PrimitiveProto": {
        1: _f("name", "string"), 2: _f("op_type", "string"),
        3: _f("attribute", "AttributeProto", True), 4: _f("instance_name", "string"),
        5: _f("prim_type", "enum"),
    },
}

# mind_ir.AttributeProto.AttributeType
MINDIR_ATTR = dict(UNDEFINED=0, FLOAT=1, UINT8=2, INT8=3, UINT16=4, INT16=5, INT32=6, INT64=7,
                   STRING=8, BOOL=9, FLOAT16=10, DOUBLE=11, UINT32=12, UINT64=13, COMPLEX64=14,
                   COMPLEX128=15, BFLOAT16=16, TENSOR=17, GRAPH=18, TENSORS=19, TUPLE=20, LIST=21,
                   DICT=22, NONE=25)

# mind_ir.TensorProto.DataType, by pijit's dtype names (DOUBLE and FLOAT64 both read as Float64)
MINDIR_DTYPE = {"Float32": 1, "UInt8": 2, "Int8": 3, "UInt16": 4, "Int16": 5, "Int32": 6,
                "Int64": 7, "Bool": 9, "Float16": 10, "Float64": 11, "UInt32": 12, "UInt64": 13,
                "Complex64": 14, "Complex128": 15, "BFloat16": 16}
MINDIR_DTYPE_NAME = dict([(v, k) for k, v in MINDIR_DTYPE.items()] + [(17, "Float64")])


# ---- ONNX (package onnx, proto2; the tensor data fields are declared packed) ----------------------

ONNX = {
    "ModelProto": {
        1: _f("ir_version", "int64"), 2: _f("producer_name", "string"),
        3: _f("producer_version", "string"), 4: _f("domain", "string"),
        5: _f("model_version", "int64"), 6: _f("doc_string", "string"),
        7: _f("graph", "GraphProto"), 8: _f("opset_import", "OperatorSetIdProto", True),
        14: _f("metadata_props", "StringStringEntryProto", True),
    },
    "OperatorSetIdProto": {1: _f("domain", "string"), 2: _f("version", "int64")},
    "StringStringEntryProto": {1: _f("key", "string"), 2: _f("value", "string")},
    "GraphProto": {
        1: _f("node", "NodeProto", True), 2: _f("name", "string"),
        5: _f("initializer", "TensorProto", True), 10: _f("doc_string", "string"),
        11: _f("input", "ValueInfoProto", True), 12: _f("output", "ValueInfoProto", True),
        13: _f("value_info", "ValueInfoProto", True),
    },
    "NodeProto": {
        1: _f("input", "string", True), 2: _f("output", "string", True), 3: _f("name", "string"),
        4: _f("op_type", "string"), 5: _f("attribute", "AttributeProto", True),
        6: _f("doc_string", "string"), 7: _f("domain", "string"),
    },
    "AttributeProto": {
        1: _f("name", "string"), 2: _f("f", "float"), 3: _f("i", "int64"), 4: _f("s", "bytes"),
        5: _f("t", "TensorProto"), 7: _f("floats", "float", True), 8: _f("ints", "int64", True),
        9: _f("strings", "bytes", True), 10: _f("tensors", "TensorProto", True),
        13: _f("doc_string", "string"), 20: _f("type", "enum"),
    },
    "TensorProto": {
        1: _f("dims", "int64", True), 2: _f("data_type", "int32"),
        4: _f("float_data", "float", True, True), 5: _f("int32_data", "int32", True, True),
        6: _f("string_data", "bytes", True), 7: _f("int64_data", "int64", True, True),
        8: _f("name", "string"), 9: _f("raw_data", "bytes"),
        10: _f("double_data", "double", True, True), 11: _f("uint64_data", "uint64", True, True),
        12: _f("doc_string", "string"),
    },
    "ValueInfoProto": {1: _f("name", "string"), 2: _f("type", "TypeProto"),
                       3: _f("doc_string", "string")},
    "TypeProto": {1: _f("tensor_type", "TypeProtoTensor"), 6: _f("denotation", "string")},
    "TypeProtoTensor": {1: _f("elem_type", "int32"), 2: _f("shape", "TensorShapeProto")},
    "TensorShapeProto": {1: _f("dim", "Dimension", True)},
    "Dimension": {1: _f("dim_value", "int64"), 2: _f("dim_param", "string"),
                  3: _f("denotation", "string")},
}

# onnx.AttributeProto.AttributeType
ONNX_ATTR = dict(UNDEFINED=0, FLOAT=1, INT=2, STRING=3, TENSOR=4, GRAPH=5, FLOATS=6, INTS=7,
                 STRINGS=8, TENSORS=9, GRAPHS=10)
# onnx.TensorProto.DataType, by pijit's dtype names
ONNX_DTYPE = {"Float32": 1, "UInt8": 2, "Int8": 3, "UInt16": 4, "Int16": 5, "Int32": 6, "Int64": 7,
              "Bool": 9, "Float16": 10, "Float64": 11, "UInt32": 12, "UInt64": 13,
              "Complex64": 14, "Complex128": 15, "BFloat16": 16}
ONNX_IR_VERSION = 7  # IR version 7 (2020): what opset 13 models carry
ONNX_OPSET = 13
