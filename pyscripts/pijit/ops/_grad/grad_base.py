"""`mindspore.ops._grad.grad_base`: bprop_getters, the registry of primitives' gradient functions.

    @bprop_getters.register(P.Mul)
    def get_bprop_mul(self):             # self: the primitive instance (its attributes)
        def bprop(x, y, out, dout):      # the inputs, the forward output, the output's gradient
            return dout * y, dout * x    # one gradient per input
        return bprop

A registration replaces the primitive's gradient for every later call of that primitive class
recorded on a gradient tape (grad, value_and_grad, GradOperation): the call runs its forward as
before and the tape runs the registered bprop backwards, as for a Cell that defines bprop.
"""
import functools

from pijit import _C


class Registry(dict):
    """{primitive name: getter}; register(prim) takes a Primitive class or its name."""

    def register(self, prim):
        key = _key(prim)

        def deco(getter):
            if not callable(getter):
                raise TypeError("bprop_getters.register(%s): the gradient getter must be callable, got %s"
                                % (key, type(getter).__name__))
            self[key] = getter
            cls = prim if isinstance(prim, type) else _primitive_class(key)
            if cls is not None:
                _route_through_registry(cls)
            return getter
        return deco


def _key(prim):
    if isinstance(prim, str):
        return prim
    if isinstance(prim, type):
        return prim.__name__
    name = getattr(prim, "name", None)  # a primitive instance
    if isinstance(name, str):
        return name
    raise TypeError("bprop_getters.register: expected a Primitive class, instance or name, got %s"
                    % type(prim).__name__)


def _primitive_class(name):
    from pijit import ops
    cls = getattr(ops, name, None)
    return cls if isinstance(cls, type) else None


def _route_through_registry(cls):
    """Makes cls's calls on a gradient tape use the registered bprop (once per class)."""
    if cls.__dict__.get("__pijit_bprop_routed__"):
        return
    forward = cls.__call__

    def __call__(self, *args, **kwargs):
        getter = bprop_getters.get(type(self).__name__)
        if getter is None or kwargs or not _C.tape_active():
            return forward(self, *args, **kwargs)
        bprop = getter(self)
        if not callable(bprop):
            raise TypeError("the bprop getter registered for %s returned %s, not a function"
                            % (type(self).__name__, type(bprop).__name__))
        return _C.call_with_bprop(functools.partial(forward, self), bprop, tuple(args), type(self).__name__)

    functools.update_wrapper(__call__, forward)
    cls.__call__ = __call__
    cls.__pijit_bprop_routed__ = True


bprop_getters = Registry()
bprop_getter = bprop_getters  # (MindSpore's module spells both)

__all__ = ["bprop_getters", "Registry"]
