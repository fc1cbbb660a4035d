"""pijit.Parameter: a Tensor that a Cell owns and training updates (MindSpore's Parameter)."""
from pijit import _C
from pijit.tensor import Tensor


class Parameter(Tensor):
    """Parameter(default_input, name=None, requires_grad=True).

    default_input is a Tensor (its data is copied), a number or nested sequence, or an
    Initializer from pijit.common.initializer together with its shape already bound.
    """
    # Capture does not create state that outlives the call (pijit/_state.py).
    __pijit_state__ = "creates a Parameter (state that outlives the call)"

    def __new__(cls, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                parallel_optimizer=True):
        from pijit.common.initializer import Initializer
        if isinstance(default_input, Initializer):
            default_input = default_input.init_data()
        if isinstance(default_input, Parameter):
            default_input = Tensor(default_input)
        return Tensor.__new__(cls, default_input)

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True):
        if name is not None and not isinstance(name, str):
            raise TypeError("Parameter name must be a str, got %s" % type(name).__name__)
        self.name = name if name is not None else "Parameter"
        self.requires_grad = bool(requires_grad)

    def __repr__(self):
        return "Parameter (name=%s, shape=%s, dtype=%s, requires_grad=%s)" % (
            self.name, self.shape, self.dtype, self.requires_grad)

    def __reduce__(self):
        return (_rebuild_parameter, (self.tolist(), self.dtype, self.name, self.requires_grad))

    def __deepcopy__(self, memo):
        return Parameter(Tensor(self), name=self.name, requires_grad=self.requires_grad)

    def set_data(self, data, slice_shape=False):
        """MindSpore's Parameter.set_data: replaces the values in place and returns the
        Parameter. data is a Tensor of the same shape (or a number); its dtype is converted to the
        parameter's when that loses no precision class, else TypeError (as MindSpore's implicit
        conversion rule says: a float32 parameter takes int or float32 data, not float64)."""
        if isinstance(data, bool) or not isinstance(data, (_C.TensorBase, int, float)):
            raise TypeError("Parameter %s: set_data expects a Tensor, int or float, got %s"
                            % (self.name, type(data).__name__))
        if not isinstance(data, _C.TensorBase):
            if isinstance(data, float) and not self.dtype.is_floating_point:
                raise TypeError("Parameter %s: set_data cannot convert a float to the parameter's "
                                "dtype %s" % (self.name, self.dtype))
            data = Tensor(data, self.dtype)
        if tuple(data.shape) != tuple(self.shape) and not slice_shape:
            raise ValueError("Parameter %s: set_data with shape %s, but the parameter has shape %s"
                             % (self.name, data.shape, self.shape))
        if data.dtype is not self.dtype:
            if data.dtype.code > self.dtype.code:
                raise TypeError("Parameter %s: set_data with %s data, which the parameter's dtype "
                                "%s cannot hold without losing precision; cast it first"
                                % (self.name, data.dtype, self.dtype))
            data = data.astype(self.dtype)
        if tuple(data.shape) != tuple(self.shape):
            self.assign_value(data)
        else:
            self[...] = data
        return self

    def init_data(self):
        return self

    @property
    def data(self):
        return self

    def clone(self, init="same"):
        return Parameter(Tensor(self), name=self.name, requires_grad=self.requires_grad)


def _rebuild_parameter(data, dtype, name, requires_grad):
    return Parameter(Tensor(data, dtype), name=name, requires_grad=requires_grad)


class ParameterTuple(tuple):
    """MindSpore's ParameterTuple: a tuple whose items are all Parameters (Cell.trainable_params()
    and optimizers pass them around)."""

    def __new__(cls, iterable):
        items = tuple(iterable)
        for i, p in enumerate(items):
            if not isinstance(p, Parameter):
                raise TypeError("ParameterTuple: item %d is a %s, not a Parameter"
                                % (i, type(p).__name__))
        seen = {}  # one object may appear twice; two objects may not share an explicit name
        for p in items:
            other = seen.setdefault(p.name, p)
            if other is not p and p.name != "Parameter":
                raise ValueError("ParameterTuple: two different parameters are named %r; give "
                                 "each a unique name" % (p.name,))
        return tuple.__new__(cls, items)

    def clone(self, prefix, init="same"):
        """A ParameterTuple of new Parameters named `prefix.name`, holding a copy of each value
        (init='same'), zeros ('zeros') or ones ('ones')."""
        if not isinstance(prefix, str) or not prefix:
            raise ValueError("ParameterTuple.clone: prefix must be a non-empty str")
        fills = {"same": None, "zeros": 0, "ones": 1}
        if init not in fills:
            raise ValueError("ParameterTuple.clone: init must be 'same', 'zeros' or 'ones' "
                             "(pijit has no other initialisers here), got %r" % (init,))
        out = []
        for p in self:
            data = Tensor(p) if fills[init] is None else _C.op(
                "full", (), {"shape": tuple(p.shape), "value": fills[init], "dtype": p.dtype})
            out.append(Parameter(data, name=prefix + "." + p.name, requires_grad=p.requires_grad))
        return ParameterTuple(out)
