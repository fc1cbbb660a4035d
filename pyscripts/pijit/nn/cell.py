"""nn.Cell: MindSpore's module base class.

Attributes that are Cells or Parameters are registered as they are assigned (in assignment
order), which is what parameters_and_names(), cells_and_names(), set_train() and checkpoints walk.
A Parameter's name is its attribute path ("fc.weight"): a Cell names its own parameters by
attribute, and prefixes a child's names when the child is assigned to it.
"""
import threading
from collections import OrderedDict

from pijit import _C
from pijit.parameter import Parameter
from pijit import context as _context


# Mixed precision (Cell.to_float): while a converted cell's construct runs, the thread's
# mixed-precision dtype (_C.amp_dtype()) is its dst_type, and the floating trainable Parameters
# construct reads through a Cell attribute are handed out cast to it (MindSpore casts every floating
# op input inside the cell; here the cell's inputs and its weights are cast, so the ops on them
# compute in dst_type). A child with a to_float of its own sets its own; one without inherits the
# running cell's. None: no cast. Capture does the same when it inlines a cell, and guards the
# thread's dtype where it reads it (capture/sim_values.cc); keep the two in step.
_amp_dtype = _C.amp_dtype


# Refusals MindSpore's graph mode has no counterpart for: it compiles tensor-dependent branches and
# loops into control-flow graphs, reads tensor values (bool(), print) inside the graph, runs long
# loops and compiles again for every new input shape, so a construct with them is a valid
# graph-mode program. pijit runs such a construct with graph breaks (or eagerly, past the recompile
# limit: the same values, Python's meaning) instead of raising; any other refusal raises.
_GRAPH_MODE_BREAKABLE = ("B002", "B003", "B006", "B013", "B017", "B020")


def _graph_call(cell, args, kwargs):
    """GRAPH_MODE: the whole construct as one graph; with graph breaks where MindSpore's graph mode
    would compile control flow on tensor values; CaptureError for the other refusals."""
    jitted = cell.__dict__.get("_graph_mode_jit")
    if jitted is None:
        jitted = _graph_mode_jit(cell, True)
    try:
        return jitted(*args, **kwargs)
    except _C.CaptureError as e:
        co = getattr(cell.construct, "__code__", None)
        # Only a refusal of this construct itself, raised before any of it ran (capture and the
        # guard lookup both refuse before the frame executes), may be retried with breaks.
        if not jitted.fullgraph or co is None or getattr(e, "code", None) is not co \
                or getattr(e, "reason_id", None) not in _GRAPH_MODE_BREAKABLE:
            raise
    return _graph_mode_jit(cell, False)(*args, **kwargs)


def _graph_mode_jit(cell, fullgraph):
    check_args, dims = None, None
    sig = cell.__dict__.get("_input_signature")
    if sig is not None:
        from pijit.signature import compile_signature
        check_args, dims = compile_signature(cell, sig, "%s (set_inputs)" % type(cell).__name__)
    from pijit.jit import _verify_every
    jitted = _C.JitFunction(cell.construct, fullgraph=fullgraph, check_args=check_args, signature_dims=dims,
                            verify=_verify_every(None))
    object.__setattr__(cell, "_graph_mode_jit", jitted)
    return jitted


class Cell(object):
    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "requires_grad", False)
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "_cell_name", type(self).__name__)
        object.__setattr__(self, "_phase", "train")
        object.__setattr__(self, "_param_prefix", "")
        object.__setattr__(self, "_scope", None)
        object.__setattr__(self, "_bprop_debug", False)
        object.__setattr__(self, "cell_type", None)
        object.__setattr__(self, "_mindspore_flags", {})
        if flags:
            self.add_flags(**flags)

    # ---- registration ------------------------------------------------------------------------
    def _check_init(self, what):
        if "_cells" not in self.__dict__:
            raise AttributeError("cannot assign %s before Cell.__init__() is called (call "
                                 "super().__init__() first in %s.__init__)"
                                 % (what, type(self).__name__))

    def __setattr__(self, name, value):
        # MindSpore's rules: a Parameter or Cell replaces a plain attribute of that name (the
        # registry is read only where the instance dict has no entry); a Tensor assigned to a
        # registered Parameter's name writes its values; None leaves the name registered as empty.
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init("parameter '%s'" % name)
            if name in d["_cells"]:
                raise KeyError("%s: '%s' is a child cell; cannot assign a Parameter to it (delete "
                               "it first)" % (type(self).__name__, name))
            d.pop(name, None)
            self.insert_param_to_cell(name, value)
        elif isinstance(value, Cell):
            self._check_init("cell '%s'" % name)
            if name in d["_params"]:
                raise KeyError("%s: '%s' is a parameter; cannot assign a Cell to it (delete it "
                               "first)" % (type(self).__name__, name))
            d.pop(name, None)
            self.insert_child_to_cell(name, value)
        else:
            cells, params = d.get("_cells"), d.get("_params")
            if params is not None and name in params:
                if value is None:
                    params[name] = None
                elif isinstance(value, _C.TensorBase) and params[name] is not None:
                    params[name].set_data(value)
                else:
                    raise TypeError("%s: parameter '%s' already exists; cannot assign a %s to it "
                                    "(assign a Tensor to write its values, or None)"
                                    % (type(self).__name__, name, type(value).__name__))
            elif cells is not None and name in cells:
                if value is not None:
                    raise TypeError("%s: child cell '%s' already exists; cannot assign a %s to it "
                                    "(assign a Cell, or None)"
                                    % (type(self).__name__, name, type(value).__name__))
                cells[name] = None
            else:
                object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_params" in d and name in d["_params"]:
            p = d["_params"][name]
            dst = _amp_dtype()
            if dst is not None and p is not None and p.requires_grad and p.dtype is not dst and \
                    p.dtype.is_floating_point:
                # (not a non-trainable one: BatchNorm's moving statistics are written in place)
                return p.astype(dst)
            return p
        if "_cells" in d and name in d["_cells"]:
            return d["_cells"][name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __delattr__(self, name):
        if name in self._params:
            del self._params[name]
        elif name in self._cells:
            del self._cells[name]
        else:
            object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        if not isinstance(param_name, str) or not param_name:
            raise KeyError("insert_param_to_cell: the parameter name must be a non-empty str")
        if check_name_contain_dot and "." in param_name:
            raise KeyError("insert_param_to_cell: the parameter name %r must not contain '.'"
                           % (param_name,))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError("insert_param_to_cell: expected a Parameter, got %s"
                            % type(param).__name__)
        if param is not None and param.name == "Parameter":
            param.name = param_name
        self._params[param_name] = param

    def insert_child_to_cell(self, child_name, child_cell):
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError("insert_child_to_cell: invalid child name %r" % (child_name,))
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError("insert_child_to_cell: expected a Cell, got %s"
                            % type(child_cell).__name__)
        if child_cell is not None and self._auto_prefix:
            child_cell.update_parameters_name(child_name + ".")
        self._cells[child_name] = child_cell

    def update_parameters_name(self, prefix="", recurse=True):
        for _, p in self.parameters_and_names(expand=recurse):
            if not p.name.startswith(prefix):
                p.name = prefix + p.name

    # ---- MindSpore's plain attributes ---------------------------------------------------------
    @property
    def cls_name(self):
        return type(self).__name__

    @property
    def phase(self):
        return self._phase

    @phase.setter
    def phase(self, value):
        if not isinstance(value, str):
            raise TypeError("For 'Cell', the property 'phase' must be a str, got %s" % type(value).__name__)
        object.__setattr__(self, "_phase", value)

    @property
    def param_prefix(self):
        """The path of this cell from the root that update_cell_prefix() was called on."""
        return self._param_prefix

    @property
    def bprop_debug(self):
        return self._bprop_debug

    @bprop_debug.setter
    def bprop_debug(self, value):
        if not isinstance(value, bool):
            raise TypeError("For 'Cell', the property 'bprop_debug' must be a bool, got %s" % type(value).__name__)
        object.__setattr__(self, "_bprop_debug", value)

    @property
    def _dynamic_shape_inputs(self):
        """What set_inputs() was given (None before): MindSpore's helpers read it by this name."""
        return self.__dict__.get("_input_signature")

    def update_cell_prefix(self):
        for name, cell in self.cells_and_names():
            object.__setattr__(cell, "_param_prefix", name)

    def update_cell_type(self, cell_type):
        object.__setattr__(self, "cell_type", cell_type)

    def add_flags(self, **flags):
        self.__dict__.setdefault("_mindspore_flags", {}).update(flags)
        for k, v in flags.items():  # MindSpore reads them back as attributes too
            object.__setattr__(self, k, v)
        return self

    def add_flags_recursive(self, **flags):
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self):
        return self.__dict__.setdefault("_mindspore_flags", {})

    def get_scope(self):
        return self._scope

    def generate_scope(self):
        for name, cell in self.cells_and_names(name_prefix="Default"):
            if cell is not self and cell._scope is None:
                object.__setattr__(cell, "_scope", name.replace(".", "/"))

    def apply(self, fn):
        """Calls fn on every cell below this one, then on this one; returns self."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    def recompute(self, **kwargs):
        """Accepted and ignored: recomputation trades memory for time on a device; eager and
        captured runs here keep every forward value the backward reads."""
        return None

    def check_names(self):
        names = set()
        for path, p in self.parameters_and_names():
            if p.name in names:
                raise ValueError("The value of %s is %r, its name '%s' already exists. Please set "
                                 "a unique name for the parameter." % (path, p, p.name))
            names.add(p.name)

    def parameters_broadcast_dict(self, recurse=True):
        d = self.parameters_dict(recurse)
        return d or None

    # ---- calling -------------------------------------------------------------------------------
    def set_inputs(self, *inputs):
        """MindSpore's set_inputs: placeholders (Tensor(shape=[None, 4], dtype=...)) for
        construct's arguments. Under GRAPH_MODE and pijit.jit(cell) made afterwards, their None and
        Symbol sizes are dynamic from the first call, and calls are checked against them."""
        from pijit.signature import compile_signature
        compile_signature(self, inputs, "%s.set_inputs" % type(self).__name__)  # checked now
        object.__setattr__(self, "_input_signature", inputs)
        self.__dict__.pop("_graph_mode_jit", None)

    def get_inputs(self):
        """The placeholders set_inputs() was given, or None."""
        return self.__dict__.get("_input_signature")

    def construct(self, *inputs, **kwargs):
        raise NotImplementedError("%s must define construct()" % type(self).__name__)

    def __call__(self, *args, **kwargs):
        dst = self.__dict__.get("_cast_inputs_to")
        if dst is not None:
            return _mixed_precision_call(self, dst, args, kwargs)
        if _context._state["mode"] == _context.GRAPH_MODE:
            return _graph_call(self, args, kwargs)
        if _C.tape_active():  # under a gradient: a Cell with bprop is differentiated by it
            from pijit.autodiff import call_cell
            return call_cell(self, args, kwargs)
        return construct_of(self)(*args, **kwargs)

    # ---- traversal -----------------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        seen = set() if cells is None else cells
        if id(self) not in seen:
            seen.add(id(self))
            yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is None:
                continue
            prefix = name_prefix + "." + name if name_prefix else name
            for item in cell.cells_and_names(seen, prefix):
                yield item

    def cells(self):
        return self.name_cells().values()

    def name_cells(self):
        """The direct children by name; a cell held under two names is listed once."""
        seen, out = set(), OrderedDict()
        for n, c in self._cells.items():
            if c is not None and id(c) not in seen:
                seen.add(id(c))
                out[n] = c
        return out

    def parameters_and_names(self, name_prefix="", expand=True):
        seen = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for prefix, cell in cells:
            for name, p in cell._params.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (prefix + "." + name if prefix else name), p

    def get_parameters(self, expand=True):
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True):
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def init_parameters_data(self, auto_parallel_mode=False):
        return self.parameters_dict()

    # ---- modes ---------------------------------------------------------------------------------
    def set_train(self, mode=True):
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    def set_grad(self, requires_grad=True):
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def to_float(self, dst_type):
        """MindSpore's mixed precision switch, for this cell and every cell below it: a call casts
        the floating Tensor inputs to dst_type, and while construct runs the floating trainable
        Parameters it reads through a Cell attribute are read cast to dst_type (their values stay
        in their own dtype; gradients reach them in it), so the cell computes in, and returns,
        dst_type. A child converted again afterwards (child.to_float(float32), as MindSpore's O2
        does for BatchNorm) keeps its own. dst_type: float16, bfloat16 or float32 (float64 too,
        which MindSpore refuses). Not cast (MindSpore would cast them at each op): float tensors
        construct makes itself, and non-trainable Parameters (moving statistics that ops write)."""
        from pijit import dtype as _dt
        try:
            dst = None if isinstance(dst_type, str) else _dt.as_dtype(dst_type)
        except (TypeError, ValueError):
            dst = None
        if dst not in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64):
            raise ValueError("For 'to_float', the argument 'dst_type' should be mstype.float32, "
                             "mstype.float16 or mstype.bfloat16, but got %r" % (dst_type,))
        flags = {"fp16": dst is _dt.float16, "fp32": dst is _dt.float32, "bf16": dst is _dt.bfloat16}
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "_cast_inputs_to", dst)
            cell.add_flags(**flags)
        return self

    # ---- printing ------------------------------------------------------------------------------
    def extend_repr(self):
        return ""

    def __repr__(self):
        extra = self.extend_repr()
        children = [(n, c) for n, c in self._cells.items() if c is not None]
        if not children:
            return "%s<%s>" % (type(self).__name__, extra)
        lines = ["%s<%s" % (type(self).__name__, extra)]
        for name, cell in children:
            body = repr(cell).replace("\n", "\n  ")
            lines.append("  (%s): %s" % (name, body))
        lines.append("  >")
        return "\n".join(lines)


# A Cell's class and instance dict change only through counted assignments: the guards trust a
# Cell they saw unchanged without reading either again (py/rebinds.h).
_C._watch_rebinds(Cell)


def _mixed_precision_call(cell, dst, args, kwargs):
    """Cell.__call__ of a cell converted with to_float(dst): inputs cast, construct run with dst
    as the mixed-precision dtype (the outer one restored after)."""
    args = _cast_floating_inputs(args, dst)
    if kwargs:
        kwargs = dict(zip(kwargs, _cast_floating_inputs(tuple(kwargs.values()), dst)))
    outer = _C.set_amp_dtype(dst)
    try:
        if _context._state["mode"] == _context.GRAPH_MODE:
            return _graph_call(cell, args, kwargs)
        if _C.tape_active():
            from pijit.autodiff import call_cell
            return call_cell(cell, args, kwargs)
        return construct_of(cell)(*args, **kwargs)
    finally:
        _C.set_amp_dtype(outer)


def _cast_floating_inputs(args, dst):
    out = []
    for a in args:
        if isinstance(a, _C.TensorBase) and a.dtype.is_floating_point and a.dtype is not dst:
            a = a.astype(dst)
        out.append(a)
    return tuple(out)


# MindSpore's tests write `net.construct = jit(net, ...)`: the instance's construct is a jit of the
# cell itself, which calls the cell, whose call runs that construct again. Inside that jitted call
# the cell's construct is its class's (what jit(net) compiles); outside, the instance's.
_SELF_JIT_RUNNING = threading.local()


def construct_of(cell):
    """The construct a call of `cell` runs (see above)."""
    own = cell.__dict__.get("construct")
    if own is None or getattr(own, "__wrapped__", None) is not cell:
        return cell.construct
    running = getattr(_SELF_JIT_RUNNING, "ids", None)
    if running is None:
        running = _SELF_JIT_RUNNING.ids = set()
    if id(cell) in running:
        return type(cell).construct.__get__(cell, type(cell))

    def through_jit(*args, **kwargs):
        running.add(id(cell))
        try:
            return own(*args, **kwargs)
        finally:
            running.discard(id(cell))
    return through_jit
