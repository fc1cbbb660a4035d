"""mindspore.export / load / save_mindir / load_mindir: a trained network written as MindSpore's
MindIR or as ONNX, and a MindIR file loaded back into a graph that nn.GraphCell runs.

export() captures the network on the given inputs as one pijit graph (extract.py), maps its
registry ops to MindSpore primitives (mindir.py) or ONNX operators (onnx.py), and writes the
protobuf with pijit's own wire-format encoder (wire.py, schemas.py). load() decodes the file and
turns it back into registry ops (runner.py)."""
import os

# The submodules load on first use: `import pijit` stays quick (regular expressions, struct).

__all__ = ["export", "load", "save_mindir", "load_mindir", "FuncGraph"]

_SUFFIX = {"MINDIR": ".mindir", "ONNX": ".onnx", "AIR": ".air"}


class FuncGraph(object):
    """What load() returns: the loaded graph, to be wrapped in nn.GraphCell. `inputs` lists the
    (name, dtype, shape) the model was exported with, `parameters` its weights by name."""

    def __init__(self, program, model):
        self.program = program
        self.model = model
        self.inputs = list(program.inputs)
        self.parameters = dict(program.params)
        from pijit.export.runner import build_function
        self.function = build_function(program)

    def __repr__(self):
        return "FuncGraph(%d input(s), %d parameter(s), %d op(s))" % (
            len(self.inputs), len(self.parameters), len(self.program.steps))


def _file(file_name, fmt):
    if not isinstance(file_name, str):
        raise TypeError("For 'export', the argument 'file_name' must be a str, but got %s."
                        % type(file_name).__name__)
    suffix = _SUFFIX[fmt]
    return file_name if file_name.endswith(suffix) else file_name + suffix


def _write(path, data):
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # readers never see half a file


def export(net, *inputs, file_name, file_format="MINDIR", **kwargs):
    """Writes `net` captured on `inputs` as file_name + '.mindir' (MINDIR) or '.onnx' (ONNX).
    ONNX holds an inference graph: a network in training mode is exported in inference mode, as
    MindSpore does, and left in training mode afterwards."""
    if not isinstance(file_format, str) or file_format.upper() not in _SUFFIX:
        raise ValueError("For 'export', 'file_format' must be one of ['AIR', 'ONNX', 'MINDIR'], "
                         "but got %r." % (file_format,))
    fmt = file_format.upper()
    if fmt == "AIR":
        raise RuntimeError("For 'export', the 'AIR' format is only available on Ascend; pijit runs "
                           "on CPU: export 'MINDIR' or 'ONNX' instead.")
    if kwargs.get("enc_key") is not None:
        raise NotImplementedError("export: encrypted MindIR (enc_key) is not supported by pijit")
    if not inputs:
        raise ValueError("For 'export', the network's inputs must be given (they fix the exported "
                         "shapes).")
    from pijit.export import extract, mindir, onnx
    path = _file(file_name, fmt)
    training = bool(getattr(net, "training", False))
    if fmt == "ONNX" and training:
        net.set_train(False)
    try:
        graph, _out = extract.capture(net, inputs)
    finally:
        if fmt == "ONNX" and training:
            net.set_train(True)
    name = type(net).__name__
    model = mindir.to_model(graph, name) if fmt == "MINDIR" else onnx.to_model(graph, name)
    _write(path, model.SerializeToString())
    return path


def load_mindir(file_name):
    """The MindIR file as its mind_ir.ModelProto (a Message with the proto's field names)."""
    from pijit.export import mindir
    _check_mindir_path(file_name, "load_mindir")
    return mindir.load_model(file_name)


def save_mindir(model, file_name):
    """Writes a mind_ir.ModelProto (as load_mindir returns it, possibly edited) to file_name
    ('.mindir' added when missing)."""
    from pijit.export import schemas, wire
    if not isinstance(model, wire.Message) or model.DESCRIPTOR_NAME != "ModelProto" \
            or model._schema is not schemas.MINDIR:
        raise TypeError("For 'save_mindir', the argument 'model' must be a mind_ir.ModelProto, but "
                        "got %s." % type(model).__name__)
    path = file_name if file_name.endswith(".mindir") else file_name + ".mindir"
    _write(path, model.SerializeToString())


def _check_mindir_path(file_name, who):
    if not isinstance(file_name, str):
        raise ValueError("For '%s', the argument 'file_name' must be a str, but got %s."
                         % (who, type(file_name).__name__))
    if not file_name.endswith(".mindir"):
        raise ValueError("For '%s', the argument 'file_name'(MindIR file) should end with "
                         "'.mindir', please input the correct 'file_name'." % who)
    if not os.path.exists(file_name):
        raise ValueError("For '%s', the argument 'file_name'(MindIR file) does not exist, please "
                         "check whether the 'file_name' is correct: %s" % (who, file_name))


def load(file_name, **kwargs):
    """The MindIR file's graph, to run with nn.GraphCell(graph)."""
    _check_mindir_path(file_name, "load")
    if kwargs.get("dec_key") is not None:
        raise NotImplementedError("load: encrypted MindIR (dec_key) is not supported by pijit")
    from pijit.export import mindir, wire
    try:
        model = mindir.load_model(file_name)
    except wire.DecodeError as e:
        raise RuntimeError("For 'load', the file %s is not a valid MindIR file: %s"
                           % (file_name, e))
    return FuncGraph(mindir.from_model(model), model)
