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

    def set_data(self, data):
        """Replaces the values in place (same shape; the dtype is converted)."""
        data = data if isinstance(data, _C.TensorBase) else Tensor(data, self.dtype)
        if tuple(data.shape) != tuple(self.shape):
            raise ValueError("Parameter %s: set_data with shape %s, but the parameter has shape %s"
                             % (self.name, data.shape, self.shape))
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
