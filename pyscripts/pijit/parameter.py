"""pijit.Parameter: a Tensor that a Cell owns and training updates (MindSpore's Parameter)."""
from pijit import _C
from pijit.tensor import Tensor


# How many Parameters hold gradient hooks (a list: read as a global by the gradient code, which
# looks for hooks only while one exists).
hooks_registered = [0]


class _HookHandle(object):
    """What register_hook returns: remove() takes the hook off again."""

    def __init__(self, param, key):
        self._param, self._key = param, key

    def remove(self):
        hooks = self._param._grad_hooks
        if hooks and self._key in hooks:
            del hooks[self._key]
            if not hooks:
                hooks_registered[0] -= 1


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

    _grad_hooks = None  # {key: hook} once register_hook is called

    def register_hook(self, hook_fn):
        """MindSpore's Tensor.register_hook on a Parameter: hook_fn(grad) is called with the
        Parameter's gradient whenever one is taken (grad, value_and_grad, GradOperation,
        TrainOneStepCell) and may return a Tensor that replaces it (None keeps it). Hooks run in
        the order they were registered; the handle's remove() takes one off."""
        if not callable(hook_fn):
            raise TypeError("Parameter %s: register_hook expects a function, got %s"
                            % (self.name, type(hook_fn).__name__))
        from collections import OrderedDict
        if not self._grad_hooks:
            if self._grad_hooks is None:
                self._grad_hooks = OrderedDict()
            hooks_registered[0] += 1
        key = object()
        self._grad_hooks[key] = hook_fn
        return _HookHandle(self, key)

    def value(self):
        """The Parameter's values as a Tensor (a view of them: gradients flow to the Parameter)."""
        return _C.op("reshape", (self,), {"shape": tuple(self.shape)})

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
