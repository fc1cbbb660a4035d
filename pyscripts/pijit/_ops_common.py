"""Plumbing shared by the Python wrappers of registry ops (tensor methods and pijit.ops)."""
from pijit import _C


def op(name, inputs, **attrs):
    return _C.op(name, inputs, attrs)


def as_tensor(x, _base=_C.TensorBase):
    if isinstance(x, _base):  # (before the import: a function-level import costs a lookup per call)
        return x
    from pijit.tensor import Tensor
    return Tensor(x)


def operands(x, y):
    """Both operands as tensors, converting Python numbers the way operators do (weak scalars)."""
    if isinstance(x, _C.TensorBase):
        return x, _C.as_operand(y, x)
    if isinstance(y, _C.TensorBase):
        return _C.as_operand(x, y), y
    return as_tensor(x), as_tensor(y)


def axes(axis):
    """None stays None (all axes); an int becomes a 1-tuple; sequences become tuples."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(axis)
    return (axis,)


def shape_arg(shape):
    """Accepts f(2, 3), f((2, 3)) and f([2, 3])."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    return tuple(int(d) for d in shape)
