"""`mindspore.ops.primitive`: the base classes and decorators of user-defined primitives.

    class MyOp(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, alpha=1.0): ...
        def __call__(self, x): return x * self.alpha

    @constexpr
    def shape_product(shape): ...      # a function of constants (shapes, dtypes, Python numbers)

pijit runs Python as Python, so a constexpr function is simply called (under jit its constant
inputs make its result a constant of the graph). A primitive's attributes recorded by
prim_attr_register are in `self.attrs` and readable as attributes, as MindSpore's are.
"""
import functools
import inspect

from pijit.ops.primitives import Primitive


def constexpr(fn=None, get_instance=True, reuse_result=True, check=True):
    """MindSpore's @constexpr and @constexpr(...): returns the function itself (pijit evaluates
    Python on constants directly); get_instance/reuse_result/check have nothing to choose here."""
    if fn is None:
        return lambda f: constexpr(f, get_instance, reuse_result, check)
    if not callable(fn):
        raise TypeError("constexpr: expected a function, got %s" % type(fn).__name__)
    return fn


def prim_attr_register(fn):
    """Decorates a Primitive subclass's __init__: every argument it is called with (defaults
    included) becomes an attribute of the primitive, in self.attrs and as self.<name>."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if not hasattr(self, "attrs"):
            Primitive.__init__(self)
        for name, value in list(bound.arguments.items())[1:]:
            kind = sig.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            self.attrs[name] = value
            object.__setattr__(self, name, value)
        fn(self, *args, **kwargs)
    return deco


class PrimitiveWithCheck(Primitive):
    """A primitive whose subclass defines check_shape/check_dtype (called with the inputs' shapes
    and dtypes before __call__ computes) and __call__."""

    def __init__(self, name=None, **attrs):
        Primitive.__init__(self, **attrs)
        if name is not None:
            self.name = name

    def add_prim_attr(self, name, value):
        self.attrs[name] = value
        object.__setattr__(self, name, value)
        return self

    def init_prim_io_names(self, inputs, outputs):
        self.add_prim_attr("input_names", list(inputs))
        return self.add_prim_attr("output_names", list(outputs))

    def check_shape(self, *shapes):
        return None

    def check_dtype(self, *dtypes):
        return None


class PrimitiveWithInfer(PrimitiveWithCheck):
    """A primitive whose subclass defines infer_shape/infer_dtype (MindSpore's static inference)
    and how it computes: __call__, or infer_value for a result computed from constant inputs."""

    def infer_shape(self, *shapes):
        return shapes[0] if shapes else None

    def infer_dtype(self, *dtypes):
        return dtypes[0] if dtypes else None

    def infer_value(self, *values):
        return None

    def __call__(self, *args):
        value = self.infer_value(*args)
        if value is None:
            raise NotImplementedError(
                "%s: a PrimitiveWithInfer subclass must define __call__ (or infer_value) to run in "
                "pijit; MindSpore would run its registered kernel" % self.name)
        return value


__all__ = ["Primitive", "PrimitiveWithCheck", "PrimitiveWithInfer", "constexpr", "prim_attr_register"]
